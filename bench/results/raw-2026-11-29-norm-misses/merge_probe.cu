// Probe (not part of the library): bf16 layer norm of rows a block of up to 1024 threads holds
// (block_rows_kernel at 939a830) against a copy whose statistics merge the warps' moments at one
// barrier (part_moments' merges_warps path, which 16-bit rows do not take), with gamma and beta and
// without. Median of 20, a 256 MiB memset before each run; three rounds, median.
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

// part_moments' merged path for any T.
template <class T, int V>
__device__ nm::moments merged_moments(const nm::row_part<T, V>& part, float n, int G, nm::sum_slots& slots) {
  const float count = nm::group_sum(part.count(), 32, nullptr), sum = nm::group_sum(part.template sum<norm_kind::layer>(), 32, nullptr);
  const float m2 = nm::group_sum(part.sum_squares(count > 0 ? sum / count : 0.0f), 32, nullptr);
  const int lane = int(threadIdx.x % 32);
  if (lane == 0) slots.warps[threadIdx.x / 32] = nm::warp_moments{count, sum, m2};
  __syncthreads();
  const nm::warp_moments w = lane < G / 32 ? slots.warps[lane] : nm::warp_moments{0.0f, 0.0f, 0.0f};
  const float mean = n > 0 ? nm::group_sum(w.sum, 32, nullptr) / n : 0.0f;
  const float d = w.count > 0 ? w.sum / w.count - mean : 0.0f;
  return {n, mean, nm::group_sum(w.m2 + w.count * d * d, 32, nullptr)};
}

template <class T, int V>
__global__ void __launch_bounds__(1024, 1) merged_kernel(nm::args<T> a, index_t ahead) {
  __shared__ nm::sum_slots slots;
  constexpr int L = nm::lanes<T>;
  const int G = int(blockDim.x), t = int(threadIdx.x), units = int(a.cols / L);
  const index_t r = blockIdx.x;
  if (ahead > 0 && t == 0 && r + ahead < a.rows) nm::prefetch_row(a.x + (r + ahead) * a.x_pitch, a.cols);
  const strata::vec::word16* x = reinterpret_cast<const strata::vec::word16*>(a.x + r * a.x_pitch) + t;
  nm::row_part<T, V> part;
  part.first = t, part.step = G, part.k_hi = 0, part.extra_c = -1, part.extra = 0.0f;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const bool mine = t + k * G < units;
    part.w[k] = nm::load16_if(x + k * G, mine);
    part.k_hi += mine ? 1 : 0;
  }
  const nm::moments m = merged_moments<T, V>(part, float(a.cols), G, slots);
  float mean, rstd;
  nm::finish<norm_kind::layer>(m, a.cols, a.eps, mean, rstd);
  strata::vec::word16* y = reinterpret_cast<strata::vec::word16*>(a.y + r * a.y_pitch) + t;
  using part_t = nm::row_part<T, V>;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    if (t + k * G >= units) break;
    float f[L], gf[L], bf[L];
    nm::unpack_kept<T>(part.w[k], f);
    const int c0 = (t + k * G) * L;
    part_t::template affine<true, part_t::given::maybe>(a.gamma, c0, 1.0f, gf);
    part_t::template affine<true, part_t::given::maybe>(a.beta, c0, 0.0f, bf);
#pragma unroll
    for (int i = 0; i < L; ++i) f[i] = (f[i] - mean) * (rstd * gf[i]) + bf[i];
    nm::store16(y + k * G, strata::rows::pack_floats<T>(f));
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

template <class T>
void one(const char* dtype, index_t hidden, char* xb, char* yb, const T* g, const T* b) {
  const index_t rows = std::max<index_t>(1, index_t(268.4e6 / (2.0 * hidden * sizeof(T))));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(b, std::size_t(hidden)), none{};
  nm::args<T> a{x.data, y.data, g, b, rows, hidden, hidden, hidden, 1e-5f}, a0 = a;
  a0.gamma = a0.beta = nullptr;
  const nm::plan p = nm::planned<norm_kind::layer, T>(nm::needs_of(a));
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  std::vector<double> t[5];
  auto merged = [&](const nm::args<T>& aa) {
    nm::with_vpt(p.vpt, [&]<int V>() {
      merged_kernel<T, V><<<unsigned(rows), unsigned(p.block)>>>(aa, p.ahead);
      return 0;
    });
  };
  for (int rep = 0; rep < 3; ++rep) {
    t[0].push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    t[1].push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, bs); }));
    t[2].push_back(median_ms([&] { merged(a); }));
    t[3].push_back(median_ms([&] { strata::layer_norm<T>(x, y, none, none); }));
    t[4].push_back(median_ms([&] { merged(a0); }));
  }
  // the merged kernel's output against the library's (same statistics up to rounding)
  std::vector<T> ref(std::size_t(rows) * hidden), got(ref.size());
  strata::layer_norm<T>(x, y, gs, bs);
  CK(cudaMemcpy(ref.data(), yb, bytes, cudaMemcpyDeviceToHost));
  merged(a);
  CK(cudaMemcpy(got.data(), yb, bytes, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, double(std::abs(strata::to_float(ref[i]) - strata::to_float(got[i]))));
  for (auto& v : t) std::sort(v.begin(), v.end());
  const double c = t[0][1];
  std::printf("| %s | %lldx%lld | %s | %.4f | %.3f | %.3f | %.3f | %.3f | %.2g |\n", dtype, (long long)rows, (long long)hidden, nm::describe(p).c_str(), c,
              c / t[1][1], c / t[2][1], c / t[3][1], c / t[4][1], worst);
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
  const __nv_bfloat16* gh = reinterpret_cast<const __nv_bfloat16*>(gb);
  const __half* gf16 = reinterpret_cast<const __half*>(gb);
  std::printf("Ratios: a copy of the input's bytes (cudaMemcpy D2D, same round) / each call's time. Layer norm.\n\n"
              "| dtype | rows x hidden | plan | copy ms | library g+b | merged g+b | library none | merged none | max abs diff |\n"
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (index_t h : {32776, 36864, 40960, 49152, 57344, 65536}) one<__nv_bfloat16>("bf16", h, xb, yb, gh, gh + (std::size_t(2) << 20));
  for (index_t h : {36864, 65536}) one<__half>("fp16", h, xb, yb, gf16, gf16 + (std::size_t(2) << 20));
  return 0;
}
