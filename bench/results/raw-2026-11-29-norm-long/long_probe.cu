// Probe (not part of the library): strata's layer and RMS norm at rows of 16384-262144 elements
// (issue 16's sweep misses there), fp32 and bf16, rows of about 256 MB each way as the sweep has.
//   long_probe ncu    one call of the library's own plan per case (for Nsight Compute)
//   long_probe looped the library's plan against every plan it weighs and a rows plan of 1024
//                     threads a row, at rows of 16384-32768 fp32 / 32768-65536 bf16 elements
//                     (calls 2-4 timed looped kernels here: looped-kernel.patch)
//   long_probe rms32768  RMS norm of fp32 rows of 32768: the library's plan, then a rows plan of
//                     1024 threads (for Nsight Compute; call 4's ncu-looped mode is gone with the looped kernel)
//   long_probe time   per case: a cudaMemcpy of the same bytes, the library's plan, and streamed
//                     plans around it (every streamed candidate, then lag and grid varied on the
//                     library's streamed plan), median of 20 with a 256 MiB memset before each run
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <vector>

using strata::index_t;
namespace nm = strata::detail::norm;
#define CK(x) strata::detail::cuda_check((x), #x)

static char* flush_buf = nullptr;
static cudaEvent_t e0, e1;

template <class F>
double median_ms(F&& f) {
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) {
    CK(cudaMemsetAsync(flush_buf, i, std::size_t(256) << 20));
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void fill(unsigned short* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u;
    x ^= x >> 13;
    p[i] = (unsigned short)(0x3c00u + (x & 0x3ffu));
  }
}

// Largest |a - b| over n elements, as float bits (non-negative floats order as their bits).
template <class T>
__global__ void max_diff(const T* a, const T* b, std::size_t n, unsigned* out) {
  float m = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(float(a[i]) - float(b[i])));
  atomicMax(out, __float_as_uint(m));
}
static char* ref_buf = nullptr;
static unsigned* diff_buf = nullptr;


// The looped kernel launched directly: blocks of B threads holding V units a chunk, built for
// MinBlocks blocks an SM (launch bounds), k blocks an SM launched (k = 1 .. the occupancy API's count).
template <strata::norm_kind Kind, class T, class R>
void lean_variants(const char* kind, const char* dtype, strata::matrix_view<const T> x, strata::matrix_view<T> y, const T* g, const T* b,
                   double copy, std::size_t bytes, R&& run_chosen, const nm::plan& chosen) {
  nm::args<T> a{x.data, y.data, g, b, x.rows, x.cols, x.pitch, y.pitch, 1e-5f};
  auto time_one = [&](const char* what, const std::string& cfg, auto&& launch) {
    CK(cudaMemset(y.data, 0xff, bytes));
    CK(cudaMemset(diff_buf, 0, 4));
    launch();
    CK(cudaGetLastError());
    max_diff<T><<<1024, 256>>>(reinterpret_cast<const T*>(ref_buf), y.data, std::size_t(x.rows) * x.cols, diff_buf);
    unsigned bits;
    CK(cudaMemcpy(&bits, diff_buf, 4, cudaMemcpyDeviceToHost));
    float diff;
    std::memcpy(&diff, &bits, 4);
    const double ms = median_ms(launch);
    std::printf("| %s | %s | %lldx%lld | %s | %s | %.4f | %.4f | %.3f | %.2e |\n", kind, dtype, (long long)x.rows, (long long)x.cols, what,
                cfg.c_str(), ms, copy, copy / ms, diff);
    std::fflush(stdout);
  };
  run_chosen(chosen);
  CK(cudaMemcpy(ref_buf, y.data, bytes, cudaMemcpyDeviceToDevice));
  time_one("chosen", nm::describe(chosen), [&] { run_chosen(chosen); });
  auto each = [&]<int V, int MinBlocks>() {
    for (int B : {512, 1024}) {
      int occ = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, nm::looped_kernel<Kind, T, V, MinBlocks>, B, 0));
      for (int k = 1; k <= std::min(occ, 4); ++k) {
        const int grid = k * 132;
        const std::string cfg = "lean B=" + std::to_string(B) + " V=" + std::to_string(V) + " bounds=" + std::to_string(MinBlocks) +
                                " grid=" + std::to_string(grid);
        time_one("lean", cfg, [&] { nm::looped_kernel<Kind, T, V, MinBlocks><<<std::min<index_t>(grid, x.rows), B>>>(a); });
      }
    }
  };
  each.template operator()<1, 1>();
  each.template operator()<2, 1>();
  each.template operator()<4, 1>();
  each.template operator()<8, 1>();
  each.template operator()<2, 2>();
  each.template operator()<4, 2>();
  each.template operator()<8, 2>();
}

template <strata::norm_kind Kind, class T>
void one(bool timing, bool looped_only, bool ncu_looped, const char* dtype, index_t hidden, char* xb, char* yb, const T* g, const T* b) {
  const index_t rows = index_t(268.4e6 / (2.0 * hidden * sizeof(T)));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(Kind == strata::norm_kind::layer ? b : nullptr,
                                                               Kind == strata::norm_kind::layer ? std::size_t(hidden) : 0);
  const char* kind = Kind == strata::norm_kind::layer ? "layer" : "rms";
  nm::args<T> a{x.data, y.data, g, bs.empty() ? nullptr : b, rows, hidden, hidden, hidden, 1e-5f};
  const nm::row_needs needs = nm::needs_of(a);
  const nm::plan chosen = nm::planned<Kind, T>(needs);
  auto run = [&](const nm::plan& p) { nm::run_with<Kind>(p, x, y, gs, bs, 1e-5f); };
  if (!timing) {
    run(chosen);
    CK(cudaDeviceSynchronize());
    std::printf("%s %s %lldx%lld: %s\n", kind, dtype, (long long)rows, (long long)hidden, nm::describe(chosen).c_str());
    return;
  }
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  const double copy = median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); });
  std::vector<std::pair<std::string, nm::plan>> plans{{"chosen", chosen}};
  if (looped_only) {
    lean_variants<Kind, T>(kind, dtype, x, y, g, bs.empty() ? nullptr : b, copy, bytes, run, chosen);
    return;
  } else {
    nm::plan base;
    bool have_base = false;
    for (const nm::plan& p : nm::plans_considered<Kind, T>(needs)) {
      if (p.shape != nm::shape::streamed) continue;
      plans.push_back({"candidate", p});
      if (!have_base || (chosen.shape == nm::shape::streamed && p.group == chosen.group && p.vpt == chosen.vpt)) base = p, have_base = true;
    }
    if (have_base) {
      for (index_t lag : {index_t(base.parts), index_t(base.grid / 2), index_t(2 * base.grid), index_t(4 * base.grid)}) {
        nm::plan p = base;
        p.lag = std::max<index_t>(lag, base.parts);
        plans.push_back({"lag", p});
      }
      for (int div : {2, 4}) {
        nm::plan p = base;
        p.grid = base.grid * (div - 1) / div;
        plans.push_back({"grid", p});
      }
    }
  }
  run(chosen);
  CK(cudaMemcpy(ref_buf, yb, bytes, cudaMemcpyDeviceToDevice));
  for (const auto& [what, p] : plans) {
    CK(cudaMemset(yb, 0xff, bytes));  // NaN: an element left unwritten shows as a NaN difference
    CK(cudaMemset(diff_buf, 0, 4));
    run(p);
    max_diff<T><<<1024, 256>>>(reinterpret_cast<const T*>(ref_buf), reinterpret_cast<const T*>(yb), std::size_t(rows) * hidden, diff_buf);
    unsigned bits;
    CK(cudaMemcpy(&bits, diff_buf, 4, cudaMemcpyDeviceToHost));
    float diff;
    std::memcpy(&diff, &bits, 4);
    const double ms = median_ms([&] { run(p); });
    std::printf("| %s | %s | %lldx%lld | %s | %s | %.4f | %.4f | %.3f | %.2e |\n", kind, dtype, (long long)rows, (long long)hidden, what.c_str(),
                nm::describe(p).c_str(), ms, copy, copy / ms, diff);
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const bool ncu_looped = argc > 1 && std::strcmp(argv[1], "rms32768") == 0;
  const bool looped = argc > 1 && std::strcmp(argv[1], "looped") == 0, timing = looped || (argc > 1 && std::strcmp(argv[1], "time") == 0);
  const std::size_t cap = std::size_t(300) << 20;
  char *xb, *yb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&gb, std::size_t(8) << 20));
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  CK(cudaMalloc(&ref_buf, cap));
  CK(cudaMalloc(&diff_buf, 4));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(8) << 20) / 2);
  CK(cudaDeviceSynchronize());
  const float* gf = reinterpret_cast<const float*>(gb);
  const __nv_bfloat16* gh = reinterpret_cast<const __nv_bfloat16*>(gb);
  if (timing) std::printf("| kind | dtype | rows x hidden | plan | config | ms | copy ms | x copy | max diff to chosen |\n| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
  if (ncu_looped) {
    one<strata::norm_kind::rms, float>(false, false, true, "fp32", 32768, xb, yb, gf, gf + 262144);
    return 0;
  }
  if (looped) {
    for (index_t h : {8192, 16384, 32768, 65536}) {
      one<strata::norm_kind::layer, float>(true, true, false, "fp32", h, xb, yb, gf, gf + 262144);
      one<strata::norm_kind::rms, float>(true, true, false, "fp32", h, xb, yb, gf, gf + 262144);
    }
    for (index_t h : {16384, 32768, 65536}) {
      one<strata::norm_kind::layer, __nv_bfloat16>(true, true, false, "bf16", h, xb, yb, gh, gh + 262144);
      one<strata::norm_kind::rms, __nv_bfloat16>(true, true, false, "bf16", h, xb, yb, gh, gh + 262144);
    }
    return 0;
  }
  for (index_t h : {index_t(8192), index_t(12288), index_t(16384), index_t(32768), index_t(65536), index_t(262144)}) {
    one<strata::norm_kind::layer, float>(timing, looped, ncu_looped, "fp32", h, xb, yb, gf, gf + 262144);
    one<strata::norm_kind::rms, float>(timing, looped, ncu_looped, "fp32", h, xb, yb, gf, gf + 262144);
    one<strata::norm_kind::layer, __nv_bfloat16>(timing, looped, ncu_looped, "bf16", h, xb, yb, gh, gh + 262144);
    one<strata::norm_kind::rms, __nv_bfloat16>(timing, looped, ncu_looped, "bf16", h, xb, yb, gh, gh + 262144);
  }
  return 0;
}
