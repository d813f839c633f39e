// Probe (not part of the library): 44bb5d4's block_rows_kernel (run through run_with) against
// copies of it with the block's thread count a compile-time constant (1024: unit offsets become
// immediates), and that with no L2 prefetch of a later row, at whole rows a block of 1024 threads
// holds (median of 20, a 256 MiB memset before each run; three rounds, alternated, median). Call 19
// adds the fixed kernel reading gamma and beta with L1 and L2 evict_last hints and storing y by plain
// C++ stores, as torch.compile's kernel does.
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

__device__ inline uint4 ld_keep(const uint4* p) {
  uint4 r;
  asm volatile("{.reg .b64 pol; createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol;}"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

template <norm_kind Kind, class T, int V, bool Prefetch, bool Hint = false>
__global__ void __launch_bounds__(1024, 1) fixed_kernel(nm::args<T> a, index_t ahead) {
  constexpr int G = 1024, L = nm::lanes<T>;
  __shared__ nm::sum_slots slots;
  const int t = int(threadIdx.x), units = int(a.cols / L);
  const index_t r = blockIdx.x;
  if (Prefetch && ahead > 0 && t == 0 && r + ahead < a.rows) nm::prefetch_row(a.x + (r + ahead) * a.x_pitch, a.cols);
  const strata::vec::word16* x = reinterpret_cast<const strata::vec::word16*>(a.x + r * a.x_pitch) + t;
  nm::row_part<T, V> part;
  part.first = t, part.step = G, part.k_hi = 0, part.extra_c = -1, part.extra = 0.0f;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const bool mine = t + k * G < units;
    part.w[k] = nm::load16_if(x + k * G, mine);
    part.k_hi += mine ? 1 : 0;
  }
  const nm::moments m = nm::part_moments<Kind>(part, float(a.cols), G, slots);
  float mean, rstd;
  nm::finish<Kind>(m, a.cols, a.eps, mean, rstd);
  strata::vec::word16* y = reinterpret_cast<strata::vec::word16*>(a.y + r * a.y_pitch) + t;
  const strata::vec::word16* g = a.gamma ? reinterpret_cast<const strata::vec::word16*>(a.gamma) + t : nullptr;
  const strata::vec::word16* b = a.beta ? reinterpret_cast<const strata::vec::word16*>(a.beta) + t : nullptr;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    if (t + k * G >= units) break;
    float f[L], gf[L], bf[L];
    nm::unpack_kept<T>(part.w[k], f);
    if (g) strata::rows::unpack_floats<T>(Hint ? ld_keep(g + k * G) : __ldg(g + k * G), gf);
    else
      for (int i = 0; i < L; ++i) gf[i] = 1.0f;
    if (b) strata::rows::unpack_floats<T>(Hint ? ld_keep(b + k * G) : __ldg(b + k * G), bf);
    else
      for (int i = 0; i < L; ++i) bf[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < L; ++i) f[i] = (Kind == norm_kind::layer ? f[i] - mean : f[i]) * (rstd * gf[i]) + bf[i];
    if constexpr (Hint) y[k * G] = strata::rows::pack_floats<T>(f);
    else nm::store16(y + k * G, strata::rows::pack_floats<T>(f));
  }
}

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
void one(const char* dtype, index_t hidden, char* xb, char* yb, const T* g) {
  const index_t rows = index_t(268.4e6 / (2.0 * hidden * sizeof(T)));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs = Kind == norm_kind::layer ? gs : cuda::std::span<const T>{};
  nm::args<T> a{x.data, y.data, g, bs.empty() ? nullptr : g, rows, hidden, hidden, hidden, 1e-5f};
  nm::plan p = nm::planned<Kind, T>(nm::needs_of(a));
  p.group = p.block = 1024, p.vpt = V;  // the library's plan at these lengths is 1024 x V (checked below)
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  std::vector<double> tl, tf, tn, th, tc;
  for (int rep = 0; rep < 3; ++rep) {
    tc.push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    tl.push_back(median_ms([&] { nm::run_with<Kind>(p, x, y, gs, bs, 1e-5f); }));
    tf.push_back(median_ms([&] { fixed_kernel<Kind, T, V, true><<<unsigned(rows), 1024>>>(a, p.ahead); }));
    tn.push_back(median_ms([&] { fixed_kernel<Kind, T, V, false><<<unsigned(rows), 1024>>>(a, p.ahead); }));
    th.push_back(median_ms([&] { fixed_kernel<Kind, T, V, true, true><<<unsigned(rows), 1024>>>(a, p.ahead); }));
  }
  for (auto* v : {&tl, &tf, &tn, &th, &tc}) std::sort(v->begin(), v->end());
  std::printf("| %s | %s | %lldx%lld | %s | %.4f | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f |\n", Kind == norm_kind::layer ? "layer" : "rms",
              dtype, (long long)rows, (long long)hidden, nm::describe(nm::planned<Kind, T>(nm::needs_of(a))).c_str(), tl[1], tf[1], tn[1], th[1],
              tc[1] / tl[1], tc[1] / tf[1], tc[1] / tn[1], tc[1] / th[1]);
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
  std::printf("| kind | dtype | rows x hidden | library plan | library ms | fixed 1024 ms | fixed, no prefetch ms | fixed, gamma kept in L1 ms | x copy library | x copy fixed | x copy fixed, no prefetch | x copy fixed, gamma kept |\n"
              "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  one<norm_kind::rms, float, 5>("fp32", 20480, xb, yb, gf);
  one<norm_kind::layer, float, 5>("fp32", 20480, xb, yb, gf);
  one<norm_kind::rms, float, 6>("fp32", 24576, xb, yb, gf);
  one<norm_kind::layer, float, 6>("fp32", 24576, xb, yb, gf);
  one<norm_kind::rms, float, 8>("fp32", 32768, xb, yb, gf);
  one<norm_kind::layer, float, 8>("fp32", 32768, xb, yb, gf);
  one<norm_kind::rms, __nv_bfloat16, 8>("bf16", 65536, xb, yb, gh);
  one<norm_kind::layer, __nv_bfloat16, 8>("bf16", 65536, xb, yb, gh);
  return 0;
}
