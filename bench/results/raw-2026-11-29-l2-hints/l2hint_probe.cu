// l2hint_probe: can L2 eviction hints keep the re-sort's far-moved sources in L2 until their
// neighbours are gathered? The quads gather of smid_probe.cu (Q = 4, tiles of 4096 records from an
// atomic counter, as the library's span counter) with its loads and stores annotated:
//   0 plain (the library today)
//   1 indices loaded and outputs stored evict-first (ld.global.cs / st.global.cs)
//   2 as 1, sources loaded with an L2::evict_last policy (createpolicy fraction 1.0)
//   3 as 1, sources evict_last only where the index is far (|j - i| > 2^16), else plain
//   4 as 1, sources evict_last where far, evict_first where near
//   5 as 1, sources evict_last at fraction 0.5
//   6 plain indices and outputs, sources evict_last
// Then 2 and 3 again with the persisting set-aside at its maximum (cudaLimitPersistingL2CacheSize),
// and a plain gather after each variant (does the previous one's L2 state slow the next kernel?).
// Outputs compared with thrust::gather on the device; events, median of 7; `once` runs each once (ncu).
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
constexpr int L = 7;
constexpr int Q = 4;
using idx_t = std::int32_t;
struct cols { float* c[L]; };

template <int V>
__device__ __forceinline__ float ld(const float* p, long i, long j, long far, unsigned long long last, unsigned long long first) {
  float v;
  const bool is_far = (j > i ? j - i : i - j) > far;
  if constexpr (V == 0 || V == 1) {
    v = *p;
  } else if constexpr (V == 2 || V == 5 || V == 6) {
    asm("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(last));
  } else if constexpr (V == 3) {
    if (is_far) asm("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(last));
    else v = *p;
  } else {
    asm("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(is_far ? last : first));
  }
  return v;
}

template <int V>
__global__ void __launch_bounds__(256) gq(cols src, const idx_t* idx, long tiles, cols dst, unsigned long long* counter, long far) {
  unsigned long long last, first;
  if constexpr (V == 5) asm("createpolicy.fractional.L2::evict_last.b64 %0, 0.5;" : "=l"(last));
  else asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(last));
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(first));
  constexpr bool stream = V >= 1 && V <= 5;
  __shared__ long next;
  for (;;) {
    __syncthreads();
    if (threadIdx.x == 0) next = long(atomicAdd(counter, 1ull));
    __syncthreads();
    const long t = next;
    if (t >= tiles) return;
    int4 j[Q];
    float4 r[Q][L];
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const int4* p = reinterpret_cast<const int4*>(idx) + t * 256 * Q + k * 256 + threadIdx.x;
      j[k] = stream ? __ldcs(p) : *p;
    }
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long i = 4 * (t * 256 * Q + k * 256 + threadIdx.x);
#pragma unroll
      for (int g = 0; g < L; ++g)
        r[k][g] = make_float4(ld<V>(src.c[g] + j[k].x, i, j[k].x, far, last, first), ld<V>(src.c[g] + j[k].y, i + 1, j[k].y, far, last, first),
                              ld<V>(src.c[g] + j[k].z, i + 2, j[k].z, far, last, first), ld<V>(src.c[g] + j[k].w, i + 3, j[k].w, far, last, first));
    }
#pragma unroll
    for (int k = 0; k < Q; ++k)
#pragma unroll
      for (int g = 0; g < L; ++g) {
        float4* p = reinterpret_cast<float4*>(dst.c[g]) + t * 256 * Q + k * 256 + threadIdx.x;
        if (stream) __stcs(p, r[k][g]);
        else *p = r[k][g];
      }
  }
}
struct hashf {
  unsigned salt;
  __host__ __device__ float operator()(unsigned i) const {
    unsigned x = i * 0x9E3779B9u ^ salt;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return float(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
};
__host__ __device__ inline int cell1(float v) { int i = int((v + 2.0f) * 16.0f); return i < 0 ? 0 : i > 63 ? 63 : i; }
__global__ void cells(const float* x, const float* y, const float* z, long n, int* key) {
  long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i < n) key[i] = (cell1(z[i]) * 64 + cell1(y[i])) * 64 + cell1(x[i]);
}
__global__ void drift(float* x, float* y, float* z, float* vx, float* vy, float* vz, long n, int steps) {
  long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i], c = z[i], u = vx[i], v = vy[i], w = vz[i];
  for (int s = 0; s < steps; ++s) {
    u -= a * 1e-3f, v -= b * 1e-3f, w -= c * 1e-3f;
    a += u * 1e-3f, b += v * 1e-3f, c += w * 1e-3f;
  }
  x[i] = a, y[i] = b, z[i] = c;
}
// The demo's re-sort after `steps` drift steps (as raw-2026-11-28-gather-runs/far_probe.cu).
void resort(long n, int steps, thrust::device_vector<idx_t>& perm) {
  std::vector<thrust::device_vector<float>> q(6);
  for (int c = 0; c < 6; ++c) {
    q[c].resize(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), q[c].begin(), hashf{unsigned(c) * 7919u + 1});
  }
  for (int c = 3; c < 6; ++c) thrust::transform(q[c].begin(), q[c].end(), q[c].begin(), [] __device__(float v) { return v * 0.1f; });
  thrust::device_vector<int> key(n);
  cells<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), n, key.data().get());
  thrust::sequence(perm.begin(), perm.end());
  thrust::stable_sort_by_key(key.begin(), key.end(), perm.begin());
  std::vector<thrust::device_vector<float>> r(6);
  for (int c = 0; c < 6; ++c) { r[c].resize(n); thrust::gather(perm.begin(), perm.end(), q[c].begin(), r[c].begin()); }
  q.swap(r);
  if (steps > 0) drift<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), q[3].data().get(), q[4].data().get(), q[5].data().get(), n, steps);
  cells<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), n, key.data().get());
  thrust::sequence(perm.begin(), perm.end());
  thrust::stable_sort_by_key(key.begin(), key.end(), perm.begin());
}



struct rand_key {
  __host__ __device__ unsigned operator()(unsigned i) const {
    unsigned x = i * 0x9E3779B9u ^ 0x5bd1e995u;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
  }
};

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::string(argv[1]) == "once";
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, %d SMs, L2 %d B, persisting max %d B, window max %d B\n", p.name, p.multiProcessorCount, p.l2CacheSize,
              p.persistingL2CacheMaxSize, p.accessPolicyMaxWindowSize);
  std::vector<std::pair<std::string, thrust::device_vector<idx_t>>> perms;
  perms.emplace_back("identity", thrust::device_vector<idx_t>(n));
  thrust::sequence(perms.back().second.begin(), perms.back().second.end());
  for (int steps : {50, 150}) {
    perms.emplace_back("resort " + std::to_string(steps), thrust::device_vector<idx_t>(n));
    resort(n, steps, perms.back().second);
  }
  if (!once) {
    perms.emplace_back("random", thrust::device_vector<idx_t>(n));
    thrust::device_vector<unsigned> keys(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), keys.begin(), rand_key{});
    thrust::sequence(perms.back().second.begin(), perms.back().second.end());
    thrust::sort_by_key(keys.begin(), keys.end(), perms.back().second.begin());
  }
  float *sbuf, *dbuf, *rbuf;
  CK(cudaMalloc(&sbuf, n * 4 * L)); CK(cudaMalloc(&dbuf, n * 4 * L)); CK(cudaMalloc(&rbuf, n * 4 * L));
  unsigned long long* counter;
  CK(cudaMalloc(&counter, sizeof *counter));
  thrust::transform(thrust::device, thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n * L)), sbuf, hashf{77});
  cols s, d, ref;
  for (int c = 0; c < L; ++c) s.c[c] = sbuf + c * n, d.c[c] = dbuf + c * n, ref.c[c] = rbuf + c * n;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  auto time = [&](auto&& f) {
    if (once) { f(); CK(cudaDeviceSynchronize()); return 0.0f; }
    for (int w = 0; w < 2; ++w) f();
    std::vector<float> t;
    for (int r = 0; r < 7; ++r) {
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[3];
  };
  const float mc = time([&] { CK(cudaMemcpyAsync(dbuf, sbuf, n * 4 * L, cudaMemcpyDeviceToDevice)); });
  std::printf("memcpy %.3f ms (%.3f GB each way)\n", mc, n * 4.0 * L / 1e9);
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gq<2>, 256, 0));
  const unsigned blocks = unsigned(per_sm * p.multiProcessorCount);
  const long tiles = n / (256 * 4 * Q);
  const long far = 1l << 16;
  auto launch = [&](int v, const idx_t* ip) {
    CK(cudaMemsetAsync(counter, 0, sizeof *counter));
    switch (v) {
      case 0: gq<0><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 1: gq<1><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 2: gq<2><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 3: gq<3><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 4: gq<4><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 5: gq<5><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
      case 6: gq<6><<<blocks, 256>>>(s, ip, tiles, d, counter, far); break;
    }
    CK(cudaGetLastError());
  };
  std::printf("%u blocks of 256 (%d a SM)\n\n| indices | variant | set-aside | ms | x memcpy | plain after, ms | output |\n| --- | ---: | --- | ---: | ---: | ---: | --- |\n", blocks, per_sm);
  for (auto& [name, perm] : perms) {
    const idx_t* ip = perm.data().get();
    for (int g = 0; g < L; ++g) thrust::gather(thrust::device, ip, ip + n, s.c[g], ref.c[g]);
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1 && (once || name == "random")) break;
      if (pass == 1) CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::size_t(p.persistingL2CacheMaxSize)));
      for (int v = 0; v < 7; ++v) {
        if (pass == 1 && v != 2 && v != 3) continue;
        CK(cudaMemset(dbuf, 0xff, n * 4 * L));
        launch(v, ip);
        CK(cudaDeviceSynchronize());
        const bool same = thrust::equal(thrust::device, reinterpret_cast<int*>(dbuf), reinterpret_cast<int*>(dbuf) + n * L, reinterpret_cast<int*>(rbuf));
        const float ms = time([&] { launch(v, ip); });
        const float after = time([&] { launch(0, ip); });
        std::printf("| %s | %d | %s | %.3f | %.3f | %.3f | %s |\n", name.c_str(), v, pass ? "max" : "0", ms, mc / ms, after, same ? "same" : "DIFFERENT");
        std::fflush(stdout);
      }
      if (pass == 1) {
        CK(cudaCtxResetPersistingL2Cache());
        CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
      }
    }
  }
  std::printf("memcpy again %.3f ms\n", time([&] { CK(cudaMemcpyAsync(dbuf, sbuf, n * 4 * L, cudaMemcpyDeviceToDevice)); }));
  return 0;
}
