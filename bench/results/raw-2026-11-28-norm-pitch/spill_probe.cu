// Probe (not part of the library): pitch_probe.cu cut to dense rows and rows at a 16-byte pitch of
// 18001-60001 elements, which the shared-memory plans (a block per row, part of it in shared
// memory) or the streamed kernel hold, against a cudaMemcpy of the same bytes in the same run. Asks
// whether reading a row's partial units' elements after the shared-memory copies' wait (e2df246)
// or before it (the next change) costs dense rows of odd width anything.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using strata::index_t;
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
    p[i] = (unsigned short)(0x3c00u + (x & 0x3ffu));  // finite in fp16/bf16 halves; fp32 words of two such halves are finite
  }
}

template <class T>
void one(const char* dtype, index_t hidden, int align, double mbytes, char* xb, char* yb, const T* g, const T* b) {
  const index_t pitch = align == 0 ? hidden : index_t(((hidden * sizeof(T) + align - 1) / align) * align / sizeof(T));
  const index_t rows = std::max<index_t>(1, index_t(mbytes * 1e6 / (2.0 * hidden * sizeof(T))));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, pitch);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, pitch);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(b, std::size_t(hidden));
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  const double copy = median_ms([&] { CK(cudaMemcpyAsync(yb, xb, bytes, cudaMemcpyDeviceToDevice)); });
  const double ln = median_ms([&] { strata::layer_norm<T>(x, y, gs, bs, 1e-5f); });
  const double rn = median_ms([&] { strata::rms_norm<T>(x, y, gs, 1e-6f); });
  std::printf("| %s | %lld | %d | %lld | %lld | %.0f | %.4f | %.4f | %.3f | %.4f | %.3f |\n", dtype, (long long)hidden, align,
              (long long)pitch, (long long)rows, mbytes, copy, ln, copy / ln, rn, copy / rn);
}

int main() {
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  const std::size_t cap = std::size_t(1200) << 20;
  char *xb, *yb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&gb, std::size_t(8) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(8) << 20) / 2);
  CK(cudaDeviceSynchronize());
  std::printf("| dtype | hidden | pitch align B | pitch | rows | MB moved | memcpy ms | layer ms | layer x memcpy | rms ms | rms x memcpy |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (index_t h : {18001, 30001, 36001, 60001})
    for (int align : {0, 16}) {
      one<float>("fp32", h, align, 268.4, xb, yb, reinterpret_cast<const float*>(gb), reinterpret_cast<const float*>(gb) + 65536);
      one<__nv_bfloat16>("bf16", h, align, 268.4, xb, yb, reinterpret_cast<const __nv_bfloat16*>(gb),
                         reinterpret_cast<const __nv_bfloat16*>(gb) + 8 * h);
    }
  return 0;
}
