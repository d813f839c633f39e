// Where a cluster plan's time goes: RMS norm of fp32 rows, each block holding 512 x 8 units of
// a row (32 KiB), clusters of C blocks per row. Variants: 0 exchange through DSMEM with two
// cluster barriers (the library's), 1 launched as clusters but no exchange or barrier (each block
// its own statistics: wrong output, timing only), 2 plain launch, no cluster (the same), 3 the
// exchange without the entry barrier (one cluster barrier).
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

template <int Variant, int V>
__global__ void __launch_bounds__(512, 2) k(const float4* x, float4* y, long cols4, int chunk) {
  __shared__ float slots[16];
  __shared__ float parts[16];
  int C = 1, q = 0;
  if constexpr (Variant == 0 || Variant == 1 || Variant == 3) {
    C = cg::this_cluster().num_blocks(), q = cg::this_cluster().block_rank();
  } else {
    C = chunk < cols4 ? int(cols4 / chunk) : 1, q = blockIdx.x % C;
  }
  if constexpr (Variant == 0) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const long r = blockIdx.x / C;
  const int t = threadIdx.x, G = blockDim.x;
  const float4* xr = x + r * cols4 + q * chunk + t;
  float4 v[V];
  float s = 0;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    v[i] = xr[i * G];
    s += v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z + v[i].w * v[i].w;
  }
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (t % 32 == 0) slots[t / 32] = s;
  __syncthreads();
  s = (t % 32) < G / 32 ? slots[t % 32] : 0.f;
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if constexpr (Variant == 0 || Variant == 3) {
    if constexpr (Variant == 0) asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (t < C) *cg::this_cluster().map_shared_rank(&parts[q], t) = s;
    asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
    s = parts[0];
    for (int i = 1; i < C; ++i) s += parts[i];
  }
  const float rs = rsqrtf(s / (cols4 * 4) + 1e-5f);
  float4* yr = y + r * cols4 + q * chunk + t;
#pragma unroll
  for (int i = 0; i < V; ++i) yr[i * G] = make_float4(v[i].x * rs, v[i].y * rs, v[i].z * rs, v[i].w * rs);
}

template <int Variant>
float run(const float4* x, float4* y, long rows, long cols4, int C, int G, void* flush) {
  const int chunk = int(cols4 / C);
  auto kern = k<Variant, 8>;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = C, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
  cfg.gridDim = dim3(unsigned(rows * C)), cfg.blockDim = dim3(G);
  if (Variant != 2) cfg.attrs = &at, cfg.numAttrs = 1;
  if (C > 8) cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  std::vector<float> ts;
  for (int i = 0; i < 23; ++i) {
    cudaMemsetAsync(flush, i, 256 << 20);
    cudaEventRecord(a);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kern, x, y, cols4, chunk);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    if (e != cudaSuccess) { printf("launch error %s\n", cudaGetErrorString(e)); return -1; }
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main() {
  void *x, *y, *flush;
  const size_t bytes = 128 << 20;
  cudaMalloc(&x, bytes), cudaMalloc(&y, bytes), cudaMalloc(&flush, 256 << 20);
  cudaMemset(x, 0, bytes);
  float copy;
  {
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<float> ts;
    for (int i = 0; i < 23; ++i) {
      cudaMemsetAsync(flush, i, 256 << 20);
      cudaEventRecord(a);
      cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      if (i >= 3) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    copy = ts[ts.size() / 2];
  }
  printf("copy of 128 MiB %.4f ms\n", copy);
  for (int G : {512, 256})
    for (int C : {1, 2, 4, 8, 16}) {
      const long cols4 = long(G) * 8 * C, rows = long(bytes / 16) / cols4;
      float t0 = run<0>((float4*)x, (float4*)y, rows, cols4, C, G, flush);
      float t1 = run<1>((float4*)x, (float4*)y, rows, cols4, C, G, flush);
      float t2 = run<2>((float4*)x, (float4*)y, rows, cols4, C, G, flush);
      float t3 = run<3>((float4*)x, (float4*)y, rows, cols4, C, G, flush);
      printf("G=%d C=%2d row %7ld floats: exchange %.4f (%.3f)  cluster-no-exchange %.4f (%.3f)  plain %.4f (%.3f)  one-barrier %.4f (%.3f)\n", G, C,
             cols4 * 4, t0, copy / t0, t1, copy / t1, t2, copy / t2, t3, copy / t3);
    }
}
