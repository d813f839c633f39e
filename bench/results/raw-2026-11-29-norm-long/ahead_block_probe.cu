// Probe (not part of the library): the L2 prefetch of a later row (plan::ahead) for plans whose
// block of 1024 threads holds a whole row alone on its SM (44bb5d4's block_rows_kernel), against
// the same plans with no prefetch, alternated (median of 20, a 256 MiB memset before each run),
// with two rows plans of 512 threads for reference, where the prefetch measured 1.016x.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using strata::index_t;
namespace nm = strata::detail::norm;
#define CK(x) strata::detail::cuda_check((x), #x)

static char* flush_buf = nullptr;

template <class F>
double median_ms(F&& f) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) f();
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
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t[t.size() / 2];
}

__global__ void fill(unsigned short* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u;
    x ^= x >> 13;
    p[i] = (unsigned short)(0x3c00u + (x & 0x3ffu));
  }
}

template <strata::norm_kind Kind, class T>
void one(const char* dtype, index_t hidden, char* xb, char* yb, const T* g) {
  const index_t rows = index_t(268.4e6 / (2.0 * hidden * sizeof(T)));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs = Kind == strata::norm_kind::layer ? gs : cuda::std::span<const T>{};
  nm::args<T> a{x.data, y.data, g, bs.empty() ? nullptr : g, rows, hidden, hidden, hidden, 1e-5f};
  const nm::plan with = nm::planned<Kind, T>(nm::needs_of(a));
  nm::plan without = with;
  without.ahead = 0;
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  std::vector<double> tw, to, tc;
  for (int rep = 0; rep < 3; ++rep) {
    tc.push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    tw.push_back(median_ms([&] { nm::run_with<Kind>(with, x, y, gs, bs, 1e-5f); }));
    to.push_back(median_ms([&] { nm::run_with<Kind>(without, x, y, gs, bs, 1e-5f); }));
  }
  std::sort(tw.begin(), tw.end()), std::sort(to.begin(), to.end()), std::sort(tc.begin(), tc.end());
  std::printf("| %s | %s | %lldx%lld | %s | %.4f | %.4f | %.3f | %.3f | %.3f |\n", Kind == strata::norm_kind::layer ? "layer" : "rms", dtype,
              (long long)rows, (long long)hidden, nm::describe(with).c_str(), tw[1], to[1], tw[1] / to[1], tc[1] / tw[1], tc[1] / to[1]);
  std::fflush(stdout);
}

int main() {
  const std::size_t cap = std::size_t(300) << 20;
  char *xb, *yb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&gb, std::size_t(8) << 20));
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(8) << 20) / 2);
  CK(cudaDeviceSynchronize());
  const float* gf = reinterpret_cast<const float*>(gb);
  const __nv_bfloat16* gh = reinterpret_cast<const __nv_bfloat16*>(gb);
  std::printf("| kind | dtype | rows x hidden | plan (with) | ms with | ms without | with / without | x copy with | x copy without |\n"
              "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (index_t h : {8192, 16384, 16640, 20480, 24576, 28672, 32768}) {
    one<strata::norm_kind::layer, float>("fp32", h, xb, yb, gf);
    one<strata::norm_kind::rms, float>("fp32", h, xb, yb, gf);
  }
  for (index_t h : {32768, 36864, 40960, 49152, 57344, 65536}) {
    one<strata::norm_kind::layer, __nv_bfloat16>("bf16", h, xb, yb, gh);
    one<strata::norm_kind::rms, __nv_bfloat16>("bf16", h, xb, yb, gh);
  }
  return 0;
}
