// Probe (not part of the library): why block_rows_kernel with gamma / beta staged in shared memory
// by a wave of blocks (the tree after 939a830, call 6) ran 1.04-1.17x slower than a block per row.
// Variants of the library's kernel at its plan: a block per row (not staged); a wave of blocks,
// nothing staged; a wave reserving the staging bytes of shared memory but reading gamma / beta from
// global memory (L1 shrunk); a block per row staging (the copy without the reuse); the library's
// call (a wave, staged). Median of 20 after a 256 MiB memset; three rounds, median.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using strata::index_t;
namespace nm = strata::detail::norm;
using strata::norm_kind;
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

template <norm_kind Kind, class T, int V>
void one(const char* dtype, index_t hidden, char* xb, char* yb, const T* g, const T* b) {
  const index_t rows = std::max<index_t>(1, index_t(268.4e6 / (2.0 * hidden * sizeof(T))));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs = Kind == norm_kind::layer ? cuda::std::span<const T>(b, std::size_t(hidden)) : cuda::std::span<const T>{};
  nm::args<T> a{x.data, y.data, g, bs.empty() ? nullptr : b, rows, hidden, hidden, hidden, 1e-5f};
  const nm::plan p = nm::planned<Kind, T>(nm::needs_of(a));
  if (p.vpt != V) std::printf("plan %s, probe V %d\n", nm::describe(p).c_str(), V);
  const nm::staging st = nm::staging_for<Kind, T, V>(a, p.block);
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  std::vector<double> t[6];
  const unsigned B = unsigned(p.block);
  for (int rep = 0; rep < 3; ++rep) {
    t[0].push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    t[1].push_back(median_ms([&] { nm::block_rows_kernel<Kind, T, V, false><<<unsigned(rows), B>>>(a, p.ahead, 0); }));
    t[2].push_back(median_ms([&] { nm::block_rows_kernel<Kind, T, V, true><<<unsigned(st.grid), B>>>(a, p.ahead, 0); }));
    t[3].push_back(median_ms([&] { nm::block_rows_kernel<Kind, T, V, true><<<unsigned(st.grid), B, st.bytes>>>(a, p.ahead, 0); }));
    t[4].push_back(median_ms([&] { nm::block_rows_kernel<Kind, T, V, true><<<unsigned(rows), B, st.bytes>>>(a, p.ahead, st.units); }));
    t[5].push_back(median_ms([&] {
      if constexpr (Kind == norm_kind::layer) strata::layer_norm<T>(x, y, gs, bs);
      else strata::rms_norm<T>(x, y, gs);
    }));
  }
  CK(cudaGetLastError());
  for (auto& v : t) std::sort(v.begin(), v.end());
  const double c = t[0][1];
  std::printf("| %s | %s | %lldx%lld | %s | %d units, %zu B, grid %lld | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", Kind == norm_kind::layer ? "layer" : "rms", dtype,
              (long long)rows, (long long)hidden, nm::describe(p).c_str(), st.units, st.bytes, (long long)st.grid, c, c / t[1][1], c / t[2][1], c / t[3][1],
              c / t[4][1], c / t[5][1]);
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
  std::printf("Ratios: a copy of the input's bytes (cudaMemcpy D2D, same round) / each variant's time.\n\n"
              "| kind | dtype | rows x hidden | plan | staging | copy ms | block per row | wave | wave, shared reserved | block per row, staged | library (wave, staged) |\n"
              "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  one<norm_kind::rms, float, 6>("fp32", 24576, xb, yb, gf, gf + (1 << 20));
  one<norm_kind::layer, float, 6>("fp32", 24576, xb, yb, gf, gf + (1 << 20));
  one<norm_kind::rms, float, 8>("fp32", 32768, xb, yb, gf, gf + (1 << 20));
  one<norm_kind::layer, float, 8>("fp32", 32768, xb, yb, gf, gf + (1 << 20));
  one<norm_kind::rms, __nv_bfloat16, 6>("bf16", 49152, xb, yb, gh, gh + (2 << 20));
  one<norm_kind::layer, __nv_bfloat16, 6>("bf16", 49152, xb, yb, gh, gh + (2 << 20));
  one<norm_kind::layer, __nv_bfloat16, 8>("bf16", 65536, xb, yb, gh, gh + (2 << 20));
  return 0;
}
