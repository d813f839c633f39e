// Probe driver for Nsight Compute (not part of the library): one call of the library's layer and
// RMS norm for each case below, rows of ~134 MB, so ncu can set a row kernel that ends in a
// partial unit (fp32, padded pitch; bf16, dense odd width) beside one that does not.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <cstdio>

using strata::index_t;
#define CK(x) strata::detail::cuda_check((x), #x)

__global__ void fill(unsigned short* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u;
    x ^= x >> 13;
    p[i] = (unsigned short)(0x3c00u + (x & 0x3ffu));
  }
}

template <class T>
void one(const char* name, bool layer, index_t hidden, index_t pitch, char* xb, char* yb, const T* g, const T* b) {
  const index_t rows = index_t(268.4e6 / (2.0 * hidden * sizeof(T)));
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, pitch);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, pitch);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(b, std::size_t(hidden));
  if (layer) strata::layer_norm<T>(x, y, gs, bs, 1e-5f);
  else strata::rms_norm<T>(x, y, gs, 1e-6f);
  CK(cudaDeviceSynchronize());
  std::printf("%s: %lld x %lld pitch %lld\n", name, (long long)rows, (long long)hidden, (long long)pitch);
}

int main() {
  const std::size_t cap = std::size_t(300) << 20;
  char *xb, *yb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&gb, std::size_t(8) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(8) << 20) / 2);
  CK(cudaDeviceSynchronize());
  const float* gf = reinterpret_cast<const float*>(gb);
  const __nv_bfloat16* gh = reinterpret_cast<const __nv_bfloat16*>(gb);
  one<float>("1 layer fp32 4096", true, 4096, 4096, xb, yb, gf, gf + 65536);
  one<float>("2 layer fp32 4097 pitch 4100", true, 4097, 4100, xb, yb, gf, gf + 65536);
  one<float>("3 rms fp32 4097 pitch 4100", false, 4097, 4100, xb, yb, gf, gf + 65536);
  one<float>("4 layer fp32 4095 pitch 4096", true, 4095, 4096, xb, yb, gf, gf + 65536);
  one<__nv_bfloat16>("5 layer bf16 4095 dense", true, 4095, 4095, xb, yb, gh, gh + 65536);
  one<__nv_bfloat16>("6 layer bf16 4095 pitch 4096", true, 4095, 4096, xb, yb, gh, gh + 65536);
  one<__nv_bfloat16>("7 rms bf16 4095 dense", false, 4095, 4095, xb, yb, gh, gh + 65536);
  one<float>("8 layer fp32 1025 pitch 1028", true, 1025, 1028, xb, yb, gf, gf + 65536);
  one<float>("9 layer fp32 1024", true, 1024, 1024, xb, yb, gf, gf + 65536);
  return 0;
}
