// Probe: the library's own kernels at several prefetch distances (plan.ahead, run_with), the rows
// kernel and the streamed kernel: 0 (no prefetch), the chosen distance, half and twice it, and a
// distance of about 8 MB. Variants run in turn in each of 15 rounds (CUDA events, a 256 MiB memset
// before each run) and their medians are compared with ahead = 0; every output is compared bit for
// bit with ahead = 0's.
//   ahead_probe [hidden,...]
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <thrust/execution_policy.h>
#include <thrust/tabulate.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using strata::index_t;
namespace sn = strata::detail::norm;

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } \
  } while (0)

template <class T>
struct hashed {
  __host__ __device__ T operator()(index_t i) const {
    std::uint32_t x = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32) * 40503u;
    x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
    return strata::from_float<T>(float(x % 20001) / 2500.0f - 3.5f);
  }
};

struct clock_t_ {
  cudaEvent_t a, b;
  void* flush = nullptr;
  clock_t_() { CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b)); CHECK(cudaMalloc(&flush, 256u << 20)); }
  template <class F>
  float time(F&& f) {
    CHECK(cudaMemsetAsync(flush, 0, 256u << 20));
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <strata::norm_kind Kind, class T>
void probe(const char* op, const char* dtype, index_t hidden, double copy_gbps, clock_t_& clk) {
  const index_t rows = std::max<index_t>(1, (index_t(256) << 20) / (2 * hidden * index_t(sizeof(T))));
  strata::matrix<T> x(rows, hidden), y(rows, hidden), g(1, hidden), b(1, hidden);
  auto xv = x.view();
  thrust::tabulate(thrust::device, xv.data, xv.data + rows * xv.pitch, hashed<T>{});
  std::vector<T> gh(static_cast<std::size_t>(hidden)), bh(static_cast<std::size_t>(hidden));
  for (index_t i = 0; i < hidden; ++i) gh[i] = strata::from_float<T>(0.5f + float(i % 7) / 8), bh[i] = strata::from_float<T>(float(i % 5) / 10 - 0.2f);
  g.copy_from_host(gh.data());
  b.copy_from_host(bh.data());
  const cuda::std::span<const T> gs(g.const_view().data, std::size_t(hidden));
  const cuda::std::span<const T> bs = Kind == strata::norm_kind::layer ? cuda::std::span<const T>(b.const_view().data, std::size_t(hidden)) : cuda::std::span<const T>{};
  const sn::args<T> a{xv.data, y.view().data, gs.data(), bs.data(), rows, hidden, xv.pitch, y.view().pitch, 1e-5f};
  const sn::plan chosen = sn::planned<Kind, T>(sn::needs_of(a));
  const double step_bytes = chosen.shape == sn::shape::rows ? double(xv.pitch) * sizeof(T) : double(chosen.group) * chosen.vpt * 16;
  std::vector<index_t> aheads = {0, chosen.ahead, std::max<index_t>(1, chosen.ahead / 2), 2 * chosen.ahead, index_t(8e6 / step_bytes)};
  const double bytes = 2.0 * double(rows) * double(hidden) * sizeof(T);
  std::vector<std::vector<float>> t(aheads.size());
  std::vector<T> ref, got(std::size_t(rows * y.view().pitch));
  std::vector<bool> same(aheads.size(), true);
  for (int round = -1; round < 15; ++round)
    for (std::size_t v = 0; v < aheads.size(); ++v) {
      sn::plan p = chosen;
      p.ahead = aheads[v];
      auto run = [&] { sn::run_with<Kind>(p, x.const_view(), y.view(), gs, bs, 1e-5f); };
      if (round < 0) {  // warm up and check
        CHECK(cudaMemset(y.view().data, 0xff, got.size() * sizeof(T)));
        run();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got.data(), y.view().data, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
        if (v == 0) ref = got;
        else same[v] = std::memcmp(got.data(), ref.data(), got.size() * sizeof(T)) == 0;
        continue;
      }
      t[v].push_back(clk.time(run));
    }
  const float m0 = median(t[0]);
  for (std::size_t v = 0; v < aheads.size(); ++v) {
    const float m = median(t[v]);
    sn::plan p = chosen;
    p.ahead = aheads[v];
    std::printf("| %s | %s | %lldx%lld | %s | %s | %lld | %.2f | %.4f | %.3f | %.3f | %s |\n", op, dtype, (long long)rows, (long long)hidden,
                sn::describe(p).c_str(), v == 1 ? "chosen" : v == 0 ? "none" : "", (long long)aheads[v], double(aheads[v]) * step_bytes / 1e6,
                m, bytes / (m * 1e-3) / 1e9 / copy_gbps, m0 / m, same[v] ? "same" : "DIFFERENT");
  }
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  std::vector<index_t> hs = {1024, 4096, 5120, 12288, 16384, 16640, 20000, 24576, 32768, 65536, 262144};
  if (argc > 1) {
    hs.clear();
    std::string s = argv[1];
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t e = s.find(',', pos);
      hs.push_back(std::stoll(s.substr(pos, e - pos)));
      pos = e == std::string::npos ? s.size() : e + 1;
    }
  }
  clock_t_ clk;
  const std::size_t n = std::size_t(1) << 30;
  void *src, *dst;
  CHECK(cudaMalloc(&src, n));
  CHECK(cudaMalloc(&dst, n));
  CHECK(cudaMemset(src, 1, n));
  std::vector<float> t;
  for (int i = 0; i < 15; ++i) t.push_back(clk.time([&] { CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice)); }));
  const double copy_gbps = 2.0 * double(n) / (median(t) * 1e-3) / 1e9;
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, cudaMemcpy D2D %.1f GB/s\n", prop.name, copy_gbps);
  std::printf("| op | dtype | rows x hidden | plan | ahead | ahead (rows or chunks) | MB ahead | ms | x memcpy | none / this | output |\n"
              "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (index_t h : hs) {
    probe<strata::norm_kind::layer, float>("layer_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::layer, strata::bfloat16>("layer_norm", "bf16", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, float>("rms_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, strata::bfloat16>("rms_norm", "bf16", h, copy_gbps, clk);
  }
  return 0;
}
