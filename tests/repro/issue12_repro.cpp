// SPDX-License-Identifier: Apache-2.0
// Reproductions of the five defects of issue 12, each in its own child process (a defect that
// loses the CUDA context must not hide the others). Built against the headers before and after
// the fix; prints one line per defect: "ok" or what went wrong. Exit status: number of defects seen.
// The dangling view (defect 5) is a compile-time matter: tests/compile_fail/view_of_temporary.cpp.
#include <strata/strata.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

struct p2 {
  BOOST_HANA_DEFINE_STRUCT(p2, (float, a), (float, b));
};
struct pair_ab {
  float a;
  int b;
};
BOOST_HANA_ADAPT_STRUCT(pair_ab, b, a);

struct twice {
  STRATA_HD p2 operator()(p2 r) const { return {r.a * 2 + 1, r.b * 2 + 1}; }
};
struct value_of {
  STRATA_HD double operator()(const p2& r) const { return double(r.a); }
};
struct plus_d {
  STRATA_HD double operator()(double x, double y) const { return x + y; }
};

namespace {

std::string defect1_foreign_tail() {
  // Two 64-float columns owned by the caller; the view covers 50 records. Elements 50..63 are
  // the caller's and must not change.
  constexpr int cap = 64, n = 50;
  std::vector<float> host(cap);
  for (int i = 0; i < cap; ++i) host[i] = float(i);
  strata::buffer xb(cap * sizeof(float), strata::memory_space::device), yb(cap * sizeof(float), strata::memory_space::device);
  strata::copy_bytes(xb.data(), host.data(), cap * sizeof(float));
  strata::copy_bytes(yb.data(), host.data(), cap * sizeof(float));
  auto* x = reinterpret_cast<float*>(xb.data());
  auto* y = reinterpret_cast<float*>(yb.data());
  auto v = strata::make_soa_view<p2>(n, strata::alignment::vector, cuda::std::span<float>(x, cap), cuda::std::span<float>(y, cap));
  strata::transform(v, v, twice{});
  strata::synchronize(strata::stream_t{});
  std::vector<float> gx(cap), gy(cap);
  strata::copy_bytes(gx.data(), x, cap * sizeof(float));
  strata::copy_bytes(gy.data(), y, cap * sizeof(float));
  std::string bad;
  for (int i = 0; i < cap; ++i) {
    const float want = i < n ? float(i) * 2 + 1 : float(i);
    if (gx[i] != want || gy[i] != want)
      bad += " [" + std::to_string(i) + "] = " + std::to_string(gx[i]) + " (want " + std::to_string(want) + ")";
  }
  return bad.empty() ? "ok" : "caller's elements past size() overwritten:" + bad.substr(0, 160);
}

std::string defect2_adapted_out_of_order() {
  std::vector<pair_ab> in(64);
  for (int i = 0; i < 64; ++i) in[i] = {float(i) + 0.5f, 1000 + i};
  strata::soa_vector<pair_ab> s(in);
  pair_ab r = s[5];
  auto a = s.column<&pair_ab::a>();
  float a5 = 0;
  strata::copy_bytes(&a5, a.data() + 5, sizeof a5);
  if (r.a == 5.5f && r.b == 1005 && a5 == 5.5f) return "ok";
  char buf[200];
  std::snprintf(buf, sizeof buf, "s[5] = {a: %g, b: %d}, column a[5] = %g; want {a: 5.5, b: 1005}", r.a, r.b, a5);
  return buf;
}

std::string defect3_streams_share_scratch() {
#if defined(STRATA_BACKEND_CUDA)
  // Two threads, two streams each, reducing different data at the same time, many rounds.
  constexpr int threads = 2, streams = 2, rounds = 200;
  constexpr std::size_t n = 1 << 20;
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<strata::soa_vector<p2>> data;
      std::vector<double> want;
      for (int s = 0; s < streams; ++s) {
        const float value = float(1 + t * streams + s);
        data.emplace_back(n, p2{value, 0});
        want.push_back(double(value) * n);
      }
      cudaStream_t st[streams];
      double* out = nullptr;
      for (auto& x : st) cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking);
      cudaMalloc(&out, streams * sizeof(double));
      for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < streams; ++s)
          strata::transform_reduce_async(data[s], value_of{}, 0.0, plus_d{}, out + s, st[s]);
        double got[streams];
        for (auto& x : st) cudaStreamSynchronize(x);
        cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
        for (int s = 0; s < streams; ++s)
          if (got[s] != want[s]) ++wrong;
      }
      for (auto& x : st) cudaStreamDestroy(x);
      cudaFree(out);
    });
  for (auto& th : pool) th.join();
  if (cudaGetLastError() != cudaSuccess) return "CUDA error";
  return wrong ? std::to_string(wrong.load()) + " of " + std::to_string(threads * streams * rounds) + " reductions wrong" : "ok";
#else
  return "ok (host backend: no streams)";
#endif
}

std::string defect4_host_container_to_device_algorithm() {
  strata::host_soa_vector<p2> h(1000, p2{1, 2});
  std::string what = "no error";
  try {
    strata::transform(h, h, twice{});
    strata::synchronize(strata::stream_t{});
  } catch (const std::exception& e) {
    what = e.what();
  }
#if defined(STRATA_BACKEND_CUDA)
  // Whatever happened, later CUDA work must still succeed.
  strata::soa_vector<p2> d(1000, p2{1, 2});
  const cudaError_t later = cudaDeviceSynchronize();
  if (later != cudaSuccess) return "context lost (" + std::string(cudaGetErrorString(later)) + "); strata said: " + what;
  if (what == "no error") return "launched on host memory without a word";
  return "ok: refused: " + what.substr(0, 150);
#else
  return what == "no error" ? "ok (host backend: host memory is the device's)" : "refused on the host backend: " + what;
#endif
}

}  // namespace

int main() {
  struct {
    const char* name;
    std::string (*run)();
  } cases[] = {{"1 packet stores past a foreign view", defect1_foreign_tail},
               {"2 adapted struct out of order", defect2_adapted_out_of_order},
               {"3 two streams x two threads reduce", defect3_streams_share_scratch},
               {"4 host container to device algorithm", defect4_host_container_to_device_algorithm}};
  int failures = 0;
  for (auto& c : cases) {
    int fd[2];
    if (pipe(fd) != 0) return 100;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      std::string r;
      try {
        r = c.run();
      } catch (const std::exception& e) {
        r = std::string("exception: ") + e.what();
      }
      if (write(fd[1], r.data(), r.size()) < 0) _exit(3);
      _exit(r.rfind("ok", 0) == 0 ? 0 : 1);
    }
    close(fd[1]);
    std::string out;
    char buf[512];
    for (ssize_t k; (k = read(fd[0], buf, sizeof buf)) > 0;) out.append(buf, std::size_t(k));
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!WIFEXITED(status)) out += " (child killed by signal " + std::to_string(WTERMSIG(status)) + ")";
    failures += !ok;
    std::printf("%-40s %s %s\n", c.name, ok ? "PASS" : "FAIL", out.c_str());
  }
  return failures;
}
