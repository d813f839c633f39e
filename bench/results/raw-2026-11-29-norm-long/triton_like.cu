// Probe (not part of the library): the shape of torch.compile's RMS norm kernel for rows of 32768
// fp32 elements (Inductor's config: one row per block of 1024 threads, the whole row in one chunk,
// num_stages 1), written by hand to find what makes it faster than strata's plans there: each
// thread loads 8 16-byte units at a compile-time stride, sums their squares, the block reduces,
// then the thread loads the units again (L1 / L2) with gamma, and stores. Variants:
//   0: as Triton: first loads L1::evict_last + L2 evict_last, second loads L1::evict_first + L2
//      evict_first, gamma L1/L2 evict_last, plain stores
//   1: the units held in registers across the reduction (no second load), strata's way
//   2: variant 0 with plain loads (no cache hints)
// against strata::rms_norm and a cudaMemcpy of the same bytes (median of 20, 256 MiB memset before each).
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) strata::detail::cuda_check((x), #x)

template <int Hint>
__device__ inline float4 ld(const float4* p) {
  float4 r;
  if constexpr (Hint == 1)
    asm volatile("{.reg .b64 pol; createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n ld.global.L1::evict_last.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], pol;}"
                 : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  else if constexpr (Hint == 2)
    asm volatile("{.reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n ld.global.L1::evict_first.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], pol;}"
                 : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  else
    asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}

template <int Units, int Variant>
__global__ void __launch_bounds__(1024, 1) rms_like(const float* x, float* y, const float* g, float eps) {
  constexpr int V = Units / 1024;
  __shared__ float part[32];
  const float4* xr = reinterpret_cast<const float4*>(x) + std::size_t(blockIdx.x) * Units + threadIdx.x;
  float4* yr = reinterpret_cast<float4*>(y) + std::size_t(blockIdx.x) * Units + threadIdx.x;
  const float4* gr = reinterpret_cast<const float4*>(g) + threadIdx.x;
  float4 v[V];
  float s = 0;
#pragma unroll
  for (int k = 0; k < V; ++k) v[k] = ld<Variant == 2 ? 0 : Variant == 1 ? 0 : 1>(xr + k * 1024);
#pragma unroll
  for (int k = 0; k < V; ++k) s += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
  __syncthreads();
  s = part[threadIdx.x % 32];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float r = rsqrtf(s / float(Units * 4) + eps);
#pragma unroll
  for (int k = 0; k < V; ++k) {
    if constexpr (Variant != 1) v[k] = ld<Variant == 2 ? 0 : 2>(xr + k * 1024);
    const float4 w = ld<Variant == 2 ? 0 : 1>(gr + k * 1024);
    yr[k * 1024] = make_float4(v[k].x * r * w.x, v[k].y * r * w.y, v[k].z * r * w.z, v[k].w * r * w.w);
  }
}

static char* flush_buf;
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
  return t[t.size() / 2];
}

template <int Units>
void run(int rows) {
  const std::size_t n = std::size_t(rows) * Units * 4, bytes = n * sizeof(float);
  float *x, *y, *g;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&g, Units * 16));
  std::vector<float> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = float((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, h.data(), Units * 16, cudaMemcpyHostToDevice));
  auto xv = strata::make_matrix_view<const float>(x, rows, Units * 4, Units * 4);
  auto yv = strata::make_matrix_view<float>(y, rows, Units * 4, Units * 4);
  const cuda::std::span<const float> gs(g, std::size_t(Units) * 4);
  const double copy = median_ms([&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); });
  const double lib = median_ms([&] { strata::rms_norm<float>(xv, yv, gs, 1e-6f); });
  std::vector<float> ref(n), out(n);
  CK(cudaMemcpy(ref.data(), y, bytes, cudaMemcpyDeviceToHost));
  std::printf("| %d x %d | strata | %.4f | %.3f | |\n", rows, Units * 4, lib, copy / lib);
  auto variant = [&]<int Var>() {
    CK(cudaMemset(y, 0xff, bytes));
    rms_like<Units, Var><<<rows, 1024>>>(x, y, g, 1e-6f);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out.data(), y, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::abs(out[i] - ref[i])) / (std::abs(ref[i]) + 1e-3));
    const double ms = median_ms([&] { rms_like<Units, Var><<<rows, 1024>>>(x, y, g, 1e-6f); });
    std::printf("| %d x %d | variant %d | %.4f | %.3f | %.1e |\n", rows, Units * 4, Var, ms, copy / ms, worst);
  };
  variant.template operator()<0>();
  variant.template operator()<1>();
  variant.template operator()<2>();
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(g));
}

int main() {
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  std::printf("| rows x hidden | kernel | ms | x copy | max rel diff to strata |\n| --- | --- | ---: | ---: | ---: |\n");
  run<8192>(1024);  // 32768 fp32
  run<4096>(2048);  // 16384 fp32
  run<2048>(4096);  // 8192 fp32
  return 0;
}
