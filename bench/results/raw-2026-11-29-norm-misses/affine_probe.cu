// Probe (not part of the library): what gamma and beta cost rows longer than 16384 elements. The
// library's layer_norm / rms_norm at its own plans, with gamma and beta as separate arrays, gamma
// only, gamma passed as beta too (one array's footprint), neither; and block_rows_kernel with the
// L1 / shared-memory carveout set to the most L1 (a hint the driver may override). Median of 20,
// a 256 MiB memset before each run; three rounds, median.
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

template <norm_kind Kind, class T>
void carveout(int value) {
  auto set = [&]<int V>() {
    CK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&nm::block_rows_kernel<Kind, T, V>), cudaFuncAttributePreferredSharedMemoryCarveout, value));
    return 0;
  };
  for (int v = 1; v <= 8; ++v) nm::with_vpt(v, set);
}

template <class T>
void one(const char* dtype, index_t hidden, char* xb, char* yb, const T* g, const T* b) {
  const index_t rows = std::max<index_t>(1, index_t(268.4e6 / (2.0 * hidden * sizeof(T))));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(b, std::size_t(hidden)), none{};
  nm::args<T> a{x.data, y.data, g, b, rows, hidden, hidden, hidden, 1e-5f};
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  enum { copy, lgb, lg, lgg, l0, rg, r0, lgb_l1, rg_l1, n_ };
  std::vector<double> t[n_];
  for (int rep = 0; rep < 3; ++rep) {
    t[copy].push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    t[lgb].push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, bs); }));
    t[lg].push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, none); }));
    t[lgg].push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, gs); }));
    t[l0].push_back(median_ms([&] { strata::layer_norm<T>(x, y, none, none); }));
    t[rg].push_back(median_ms([&] { strata::rms_norm<T>(x, y, gs); }));
    t[r0].push_back(median_ms([&] { strata::rms_norm<T>(x, y, none); }));
    carveout<norm_kind::layer, T>(cudaSharedmemCarveoutMaxL1);
    carveout<norm_kind::rms, T>(cudaSharedmemCarveoutMaxL1);
    t[lgb_l1].push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, bs); }));
    t[rg_l1].push_back(median_ms([&] { strata::rms_norm<T>(x, y, gs); }));
    carveout<norm_kind::layer, T>(cudaSharedmemCarveoutDefault);
    carveout<norm_kind::rms, T>(cudaSharedmemCarveoutDefault);
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  const double c = t[copy][1];
  std::printf("| %s | %lldx%lld | %s | %.4f |", dtype, (long long)rows, (long long)hidden,
              nm::describe(nm::planned<norm_kind::layer, T>(nm::needs_of(a))).c_str(), c);
  for (int i = 1; i < n_; ++i) std::printf(" %.3f |", c / t[i][1]);
  std::printf("\n");
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
  std::printf("Ratios: a copy of the input's bytes (cudaMemcpy D2D, same round) / each call's time.\n\n"
              "| dtype | rows x hidden | layer norm plan | copy ms | layer g+b | layer g | layer g as b | layer none | rms g | rms none | layer g+b, max L1 | rms g, max L1 |\n"
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (index_t h : {16384, 20480, 24576, 32768, 65536, 262144}) one<float>("fp32", h, xb, yb, gf, gf + (std::size_t(1) << 20));
  for (index_t h : {16384, 32768, 36864, 49152, 65536, 262144}) one<__nv_bfloat16>("bf16", h, xb, yb, gh, gh + (std::size_t(2) << 20));
  return 0;
}
