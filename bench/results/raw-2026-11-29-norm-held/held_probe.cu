// Probe (not part of the library): long rows held in registers by several blocks that meet at a
// per-row counter in global memory, so each element is read from DRAM once and written once.
// A persistent grid (every block resident, from the occupancy API) takes items (row, part) in
// order: item i on block i % G. A block loads its part of the row into registers, publishes the
// part's moments, adds one to the row's counter, waits until every part of the row has, merges the
// parts' moments (every warp on its own), normalizes its registers and stores them. A row's parts
// are at most G items apart, so every block a row waits for is resident (P <= G is checked).
//   Ahead = 1: the block issues the loads of its next item before it waits.
// Compared with strata::rms_norm / layer_norm and cudaMemcpy of the same bytes, one run; fp32.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#define CK(x) strata::detail::cuda_check((x), #x)

__device__ inline float4 ldv(const float4* p) {
  float4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}
__device__ inline unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <int T>
__device__ inline float block_sum(float s, float* red) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  s = threadIdx.x % 32 < T / 32 ? red[threadIdx.x % 32] : 0.f;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

template <int T, int V, bool Layer, bool Ahead>
__global__ void __launch_bounds__(T) held(const float4* __restrict__ x, float4* __restrict__ y, const float4* __restrict__ g,
                                          const float4* __restrict__ b, int rows, int P, long long H4, float2* part,
                                          unsigned* cnt, unsigned target, float eps) {
  __shared__ float red1[32], red2[32];
  const long long items = (long long)rows * P;
  constexpr float n_c = float(T * V * 4);
  const float n_row = n_c * float(P);
  float4 v[V], nx[V];
  auto load = [&](long long item, float4(&d)[V]) {
    const long long row = item / P;
    const int pi = int(item % P);
    const float4* p = x + row * H4 + (long long)pi * (T * V) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < V; ++k) d[k] = ldv(p + k * T);
  };
  long long it = blockIdx.x;
  if (it < items) load(it, v);
  for (; it < items; it += gridDim.x) {
    const long long row = it / P;
    const int pi = int(it % P);
    float s = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) s += Layer ? (v[k].x + v[k].y) + (v[k].z + v[k].w) : v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
    s = block_sum<T>(s, red1);
    float2 mine;
    if constexpr (Layer) {
      const float m = s / n_c;
      float q = 0;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float a = v[k].x - m, c = v[k].y - m, d = v[k].z - m, e = v[k].w - m;
        q += a * a + c * c + d * d + e * e;
      }
      q = block_sum<T>(q, red2);
      mine = make_float2(m, q);
    } else {
      mine = make_float2(s, 0.f);
    }
    if (threadIdx.x == 0) {
      part[it] = mine;
      __threadfence();
      atomicAdd(cnt + row, 1u);
    }
    const long long next = it + gridDim.x;
    if constexpr (Ahead)
      if (next < items) load(next, nx);
    if (threadIdx.x == 0)
      while (ld_acquire(cnt + row) < target) {
      }
    __syncthreads();
    // Every warp merges the row's P parts (equal counts).
    const float2* pr = part + row * P;
    float a = 0;
    for (int j = threadIdx.x % 32; j < P; j += 32) a += __ldcg(&pr[j].x);
    for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
    float scale, shift;
    if constexpr (Layer) {
      const float mean = a / float(P);
      float q = 0;
      for (int j = threadIdx.x % 32; j < P; j += 32) {
        const float2 w = __ldcg(&pr[j]);
        q += w.y + n_c * (w.x - mean) * (w.x - mean);
      }
      for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
      scale = rsqrtf(q / n_row + eps);
      shift = -mean * scale;
    } else {
      scale = rsqrtf(a / n_row + eps);
      shift = 0.f;
    }
    const long long off = (long long)pi * (T * V) + threadIdx.x;
    float4* yo = y + row * H4 + off;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float4 w = __ldg(g + off + k * T);
      float4 o = make_float4((v[k].x * scale + shift) * w.x, (v[k].y * scale + shift) * w.y, (v[k].z * scale + shift) * w.z,
                             (v[k].w * scale + shift) * w.w);
      if constexpr (Layer) {
        const float4 c = __ldg(b + off + k * T);
        o.x += c.x, o.y += c.y, o.z += c.z, o.w += c.w;
      }
      yo[k * T] = o;
    }
    if constexpr (Ahead) {
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = nx[k];
    } else if (next < items) {
      load(next, v);
    }
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
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t[t.size() / 2];
}

static double memcpy_gbs;
static int sms;

template <bool Layer>
void run(int rows, long long hidden) {
  const std::size_t n = std::size_t(rows) * hidden, bytes = n * sizeof(float);
  float *x, *y, *g, *bb;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&g, hidden * 4));
  CK(cudaMalloc(&bb, hidden * 4));
  std::vector<float> h(n);
  unsigned s = 12345u + unsigned(hidden) + (Layer ? 7u : 0u);
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    h[i] = float(s >> 8) / float(1 << 24) * 4.0f - 1.5f;
  }
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, h.data() + 17, hidden * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(bb, h.data() + 5, hidden * 4, cudaMemcpyHostToDevice));
  auto xv = strata::make_matrix_view<const float>(x, rows, hidden, hidden);
  auto yv = strata::make_matrix_view<float>(y, rows, hidden, hidden);
  const cuda::std::span<const float> gs(g, hidden), bs(bb, hidden);
  const char* op = Layer ? "layer" : "rms";
  const double copy = median_ms([&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); });
  auto lib_call = [&] {
    if constexpr (Layer) strata::layer_norm<float>(xv, yv, gs, bs, 1e-5f);
    else strata::rms_norm<float>(xv, yv, gs, 1e-5f);
  };
  const double lib = median_ms(lib_call);
  const double per_copy = 2.0 * bytes / 1e6 / memcpy_gbs;  // ms a 1 GiB-rate copy takes for these bytes
  std::vector<float> ref(n), out(n);
  CK(cudaMemset(y, 0xff, bytes));
  lib_call();
  CK(cudaMemcpy(ref.data(), y, bytes, cudaMemcpyDeviceToHost));
  std::printf("| %s | %d x %lld | strata | | %.4f | %.3f | %.3f | |\n", op, rows, hidden, lib, per_copy / lib, copy / lib);
  float2* part;
  unsigned* cnt;
  auto variant = [&]<int T, int V, bool Ahead>(int cap) {
    const long long H4 = hidden / 4;
    if (H4 % (T * V)) return;
    const int P = int(H4 / (T * V));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, held<T, V, Layer, Ahead>, T, 0));
    per_sm = std::min(per_sm, cap);
    const long long items = (long long)rows * P;
    const int G = int(std::min<long long>(items, (long long)per_sm * sms));
    if (P > G) {
      std::printf("| %s | %d x %lld | T=%d V=%d ahead=%d | P=%d G=%d | skipped: a row's parts exceed the resident grid | | | |\n", op, rows, hidden, T, V,
                  int(Ahead), P, G);
      return;
    }
    CK(cudaMalloc(&part, sizeof(float2) * items));
    CK(cudaMalloc(&cnt, sizeof(unsigned) * rows));
    CK(cudaMemset(cnt, 0, sizeof(unsigned) * rows));
    unsigned epoch = 0;
    auto launch = [&] {
      ++epoch;
      held<T, V, Layer, Ahead><<<G, T>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), reinterpret_cast<const float4*>(g),
                                         reinterpret_cast<const float4*>(bb), rows, P, H4, part, cnt, epoch * unsigned(P), 1e-5f);
    };
    CK(cudaMemset(y, 0xff, bytes));
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    CK(cudaMemcpy(out.data(), y, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(out[i])) { ++bad; continue; }
      worst = std::max(worst, double(std::abs(out[i] - ref[i])) / (std::abs(ref[i]) + 1e-2));
    }
    const double ms = median_ms(launch);
    std::printf("| %s | %d x %lld | T=%d V=%d ahead=%d | P=%d G=%d (%d/SM) | %.4f | %.3f | %.3f | %.1e%s |\n", op, rows, hidden, T, V, int(Ahead), P, G,
                per_sm, ms, per_copy / ms, copy / ms, worst, bad ? " NOT WRITTEN" : "");
    CK(cudaFree(part));
    CK(cudaFree(cnt));
  };
  for (int cap : {2, 3, 4, 8}) {
    variant.template operator()<256, 8, false>(cap);
    variant.template operator()<256, 8, true>(cap);
    variant.template operator()<256, 4, false>(cap);
    variant.template operator()<256, 4, true>(cap);
    variant.template operator()<512, 4, true>(cap);
    variant.template operator()<512, 8, false>(cap);
    variant.template operator()<128, 8, true>(cap);
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(g));
  CK(cudaFree(bb));
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  {
    char *a, *b;
    const std::size_t gib = std::size_t(1) << 30;
    CK(cudaMalloc(&a, gib));
    CK(cudaMalloc(&b, gib));
    const double ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, gib, cudaMemcpyDeviceToDevice)); });
    memcpy_gbs = 2.0 * gib / 1e6 / ms;
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  std::printf("%s, %d SMs, cudaMemcpy D2D 1 GiB %.1f GB/s\n\n", prop.name, sms, memcpy_gbs);
  std::printf("| op | rows x hidden | kernel | items | ms | x memcpy | x copy of its bytes | max rel diff to strata |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
  run<false>(128, 262144);
  run<true>(128, 262144);
  run<false>(512, 65536);
  run<true>(512, 65536);
  run<false>(32, 1 << 20);
  run<true>(32, 1 << 20);
  run<false>(1024, 32768);
  run<true>(1024, 32768);
  return 0;
}
