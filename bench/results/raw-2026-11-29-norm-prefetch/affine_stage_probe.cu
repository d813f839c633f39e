// Staging variant (stop 58): gamma and beta's first S slots of each thread copied into shared
// memory (cp.async, 16 bytes a thread a slot) right after x's loads, before the barriers, and read
// from there when writing; S = 0 is the kernel of affine_cluster_probe.cu.
// What gamma and beta cost a cluster plan: fp32 rows of 65536 elements, blocks of G threads x 8
// units, clusters of C blocks (C = 65536 / (G x 32)); RMS norm without gamma, with gamma, and
// layer norm (one-pass sum / sum of squares, a probe's shortcut) with gamma and beta. The same
// blocks launched plainly (each its own statistics; timing only) show what the cluster adds.
#include <cooperative_groups.h>
#include <algorithm>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;

__device__ __forceinline__ float4 ld_keep(const float4* p) {
  float4 r;
  asm volatile(
      "{.reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      " ld.global.L1::evict_last.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], pol;}"
      : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}

// Affine: 0 none, 1 gamma, 2 gamma and beta (layer norm's two sums)
template <bool Cluster, int Affine, int S>
__global__ void __launch_bounds__(512, 2) k(const float4* x, float4* y, const float4* g, const float4* b, long cols4, int chunk, int C) {
  __shared__ float2 slots[16];
  __shared__ float2 parts[16];
  int q;
  if constexpr (Cluster) C = cg::this_cluster().num_blocks(), q = cg::this_cluster().block_rank();
  else q = blockIdx.x % C;
  const long r = blockIdx.x / C;
  const int t = threadIdx.x, G = blockDim.x;
  const long base = q * long(chunk) + t;
  extern __shared__ float4 stage[];  // [Affine][S][G]
  if constexpr (S > 0 && Affine >= 1) {
#pragma unroll
    for (int i = 0; i < S; ++i)
      for (int a = 0; a < Affine; ++a) {
        const float4* src = (a == 0 ? g : b) + base + i * G;
        const unsigned dst = unsigned(__cvta_generic_to_shared(stage + (a * S + i) * G + t));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
      }
    asm volatile("cp.async.commit_group;");
  }
  float4 v[8];
  float s = 0, s2 = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[i] = x[r * cols4 + base + i * G];
    s += v[i].x + v[i].y + v[i].z + v[i].w;
    s2 += v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z + v[i].w * v[i].w;
  }
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o), s2 += __shfl_xor_sync(~0u, s2, o);
  if (t % 32 == 0) slots[t / 32] = make_float2(s, s2);
  __syncthreads();
  float2 w = (t % 32) < G / 32 ? slots[t % 32] : make_float2(0, 0);
  for (int o = 16; o; o >>= 1) w.x += __shfl_xor_sync(~0u, w.x, o), w.y += __shfl_xor_sync(~0u, w.y, o);
  if constexpr (Cluster) {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n barrier.cluster.wait.aligned;" ::: "memory");
    if (t < C) *cg::this_cluster().map_shared_rank(&parts[q], t) = w;
    asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
    w = parts[0];
    for (int i = 1; i < C; ++i) w.x += parts[i].x, w.y += parts[i].y;
  }
  if constexpr (S > 0 && Affine >= 1) asm volatile("cp.async.wait_group 0;" ::: "memory");
  const float n = float(cols4 * 4), mean = Affine == 2 ? w.x / n : 0.f;
  const float rs = rsqrtf(w.y / n - mean * mean + 1e-5f);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    float4 o = make_float4((v[i].x - mean) * rs, (v[i].y - mean) * rs, (v[i].z - mean) * rs, (v[i].w - mean) * rs);
    if constexpr (Affine >= 1) {
      const float4 gg = i < S ? stage[i * G + t] : ld_keep(g + base + i * G);
      o.x *= gg.x, o.y *= gg.y, o.z *= gg.z, o.w *= gg.w;
    }
    if constexpr (Affine == 2) {
      const float4 bb = i < S ? stage[(S + i) * G + t] : ld_keep(b + base + i * G);
      o.x += bb.x, o.y += bb.y, o.z += bb.z, o.w += bb.w;
    }
    y[r * cols4 + base + i * G] = o;
  }
}

template <bool Cluster, int Affine, int S = 0>
float run(const float4* x, float4* y, const float4* g, const float4* b, long rows, long cols4, int C, int G, void* flush) {
  auto kern = k<Cluster, Affine, S>;
  const int smem = S > 0 ? Affine * S * G * 16 : 0;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 0);
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = C, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
  cfg.gridDim = dim3(unsigned(rows * C)), cfg.blockDim = dim3(G), cfg.dynamicSmemBytes = smem;
  if (Cluster) cfg.attrs = &at, cfg.numAttrs = 1;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int i = 0; i < 23; ++i) {
    cudaMemsetAsync(flush, i, 256 << 20);
    cudaEventRecord(e0);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kern, x, y, g, b, cols4, int(cols4 / C), C);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    if (e != cudaSuccess) return printf("launch error %s\n", cudaGetErrorString(e)), -1.f;
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 3) ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main() {
  void *x, *y, *flush, *g, *b;
  const size_t bytes = 128 << 20;
  cudaMalloc(&x, bytes), cudaMalloc(&y, bytes), cudaMalloc(&flush, 256 << 20), cudaMalloc(&g, 1 << 20), cudaMalloc(&b, 1 << 20);
  cudaMemset(x, 0, bytes), cudaMemset(g, 0, 1 << 20), cudaMemset(b, 0, 1 << 20);
  float copy;
  {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    std::vector<float> ts;
    for (int i = 0; i < 23; ++i) {
      cudaMemsetAsync(flush, i, 256 << 20);
      cudaEventRecord(e0);
      cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (i >= 3) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    copy = ts[ts.size() / 2];
  }
  printf("copy of 128 MiB %.4f ms; x of a copy: plain blocks / clusters\n", copy);
  const long cols4 = 65536 / 4, rows = long(bytes / 16) / cols4;
  const float4 *X = (const float4*)x, *Gm = (const float4*)g, *B = (const float4*)b;
  float4* Y = (float4*)y;
  for (int G : {256, 512}) {
    const int C = int(cols4 / (G * 8));
    float p0 = run<false, 0>(X, Y, Gm, B, rows, cols4, C, G, flush), c0 = run<true, 0>(X, Y, Gm, B, rows, cols4, C, G, flush);
    float p1 = run<false, 1>(X, Y, Gm, B, rows, cols4, C, G, flush), c1 = run<true, 1>(X, Y, Gm, B, rows, cols4, C, G, flush);
    float p2 = run<false, 2>(X, Y, Gm, B, rows, cols4, C, G, flush), c2 = run<true, 2>(X, Y, Gm, B, rows, cols4, C, G, flush);
    printf("G=%d C=%d  none %.3f / %.3f   gamma %.3f / %.3f   gamma+beta %.3f / %.3f\n", G, C, copy / p0, copy / c0, copy / p1, copy / c1,
           copy / p2, copy / c2);
    float s14 = run<true, 1, 4>(X, Y, Gm, B, rows, cols4, C, G, flush), s18 = run<true, 1, 8>(X, Y, Gm, B, rows, cols4, C, G, flush);
    float s22 = run<true, 2, 2>(X, Y, Gm, B, rows, cols4, C, G, flush), s24 = run<true, 2, 4>(X, Y, Gm, B, rows, cols4, C, G, flush);
    float s28 = run<true, 2, 8>(X, Y, Gm, B, rows, cols4, C, G, flush);
    float q14 = run<false, 1, 4>(X, Y, Gm, B, rows, cols4, C, G, flush), q24 = run<false, 2, 4>(X, Y, Gm, B, rows, cols4, C, G, flush);
    printf("G=%d C=%d  clusters staged: gamma 4 slots %.3f, 8 slots %.3f; gamma+beta 2 slots %.3f, 4 slots %.3f, 8 slots %.3f;"
           " plain staged: gamma 4 %.3f, gamma+beta 4 %.3f\n", G, C, copy / s14, copy / s18, copy / s22, copy / s24, copy / s28, copy / q14, copy / q24);
  }
}
