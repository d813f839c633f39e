// Probe (not part of the library): where rows of 1025 elements lose against rows of 1024. The
// library's layer_norm / rms_norm (gamma, beta) over rows in one buffer at a chosen pitch: rows of
// 1024 and 1032 elements (whole units) and 1025 (a partial last unit), each at a pitch of 1032
// elements (strata::matrix's: rows 16-byte aligned, 2064 bytes apart in bf16) and at a pitch of
// 1088 (rows 128-byte aligned: 2176 bytes apart in bf16, 4352 in fp32); ratio to a cudaMemcpy
// of the rows' bytes (rows x cols, one copy per shape). Median of 20 after a 256 MiB memset.
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

template <class T>
void one(const char* dtype, index_t cols, index_t pitch, char* xb, char* yb, const T* g) {
  const index_t rows = index_t(268.4e6 / (2.0 * 1024 * sizeof(T)));  // the same rows for every shape
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, cols, pitch);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, cols, pitch);
  const cuda::std::span<const T> gs(g, std::size_t(cols)), bs(g + 4096, std::size_t(cols));
  nm::args<T> a{x.data, y.data, g, g + 4096, rows, cols, pitch, pitch, 1e-5f};
  const std::size_t bytes = std::size_t(rows) * cols * sizeof(T);
  double c = 0, l = 0, r = 0;
  std::vector<double> tc, tl, tr;
  for (int rep = 0; rep < 3; ++rep) {
    tc.push_back(median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); }));
    tl.push_back(median_ms([&] { strata::layer_norm<T>(x, y, gs, bs); }));
    tr.push_back(median_ms([&] { strata::rms_norm<T>(x, y, gs); }));
  }
  std::sort(tc.begin(), tc.end()), std::sort(tl.begin(), tl.end()), std::sort(tr.begin(), tr.end());
  c = tc[1], l = tl[1], r = tr[1];
  std::printf("| %s | %lldx%lld | %lld | %s | %.4f | %.4f | %.4f | %.3f | %.3f |\n", dtype, (long long)rows, (long long)cols, (long long)pitch,
              nm::describe(nm::planned<norm_kind::layer, T>(nm::needs_of(a))).c_str(), c, l, r, c / l, c / r);
  std::fflush(stdout);
}

int main() {
  const std::size_t cap = std::size_t(300) << 20;
  char *xb, *yb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&gb, std::size_t(1) << 20));
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(1) << 20) / 2);
  CK(cudaDeviceSynchronize());
  std::printf("Ratios: a cudaMemcpy of the rows' bytes (same round) / each call's time.\n\n"
              "| dtype | rows x cols | pitch | layer norm plan | copy ms | layer ms | rms ms | layer x copy | rms x copy |\n"
              "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (index_t pitch : {1032, 1088})
    for (index_t cols : {1024, 1025, 1032}) one<__nv_bfloat16>("bf16", cols, pitch, xb, yb, reinterpret_cast<const __nv_bfloat16*>(gb));
  for (index_t pitch : {1028, 1088})
    for (index_t cols : {1024, 1025, 1028}) one<float>("fp32", cols, pitch, xb, yb, reinterpret_cast<const float*>(gb));
  return 0;
}
