// Probe: gathering 7 fp32 columns by the demo's re-sort permutation in passes over groups of
// columns, so that the source window a pass reuses (a z-plane of cells) fits in L2, with and
// without L2 eviction hints. Times with events, median of 7 after 2 warm-ups, L2 not flushed
// between runs (as bench/lifecycle's permute rows).
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <string>
#include <thrust/transform.h>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

constexpr int L = 7;
using idx_t = std::int32_t;

__device__ __forceinline__ unsigned long long policy_last() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long policy_first() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ float ld_hint(const float* a, unsigned long long p) {
  float v;
  asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(a), "l"(p));
  return v;
}
__device__ __forceinline__ void st_hint(float* a, float v, unsigned long long p) {
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(a), "f"(v), "l"(p) : "memory");
}

struct cols { float* c[L]; };

// hint: 0 none; 1 indices __ldcs + stores __stcs; 2 = 1 + source loads evict_last; 3 = stores and
// indices with an evict_first policy, source evict_last
template <int G, int hint>
__global__ void __launch_bounds__(256) gather_pass(cols src, const idx_t* idx, long n, cols dst, int first) {
  constexpr int per = 4, T = 256;
  const long span = long(T) * per;
  unsigned long long pl = 0, pf = 0;
  if (hint >= 2) pl = policy_last();
  if (hint == 3) pf = policy_first();
  for (long b = blockIdx.x; b * span < n; b += gridDim.x) {
    const long f = b * span + threadIdx.x;
    idx_t j[per];
    float r[per][G];
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const long i = f + long(k) * T;
      j[k] = i < n ? (hint == 1 || hint == 2 ? __ldcs(idx + i) : idx[i]) : 0;
    }
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const long i = f + long(k) * T;
      if (i < n) {
#pragma unroll
        for (int g = 0; g < G; ++g) r[k][g] = hint >= 2 ? ld_hint(src.c[first + g] + j[k], pl) : src.c[first + g][j[k]];
      }
    }
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const long i = f + long(k) * T;
      if (i < n) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
          float* a = dst.c[first + g] + i;
          if (hint == 1 || hint == 2) __stcs(a, r[k][g]);
          else if (hint == 3) st_hint(a, r[k][g], pf);
          else *a = r[k][g];
        }
      }
    }
  }
}

template <int G, int hint>
void launch(cols s, const idx_t* idx, long n, cols d, int first) {
  int per_sm = 0, sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gather_pass<G, hint>, 256, 0));
  const long blocks = std::min<long>((n + 1023) / 1024, long(per_sm) * sms);
  gather_pass<G, hint><<<unsigned(blocks), 256>>>(s, idx, n, d, first);
}

// a plan: column group sizes summing to 7
template <int hint>
void run_plan(const std::vector<int>& plan, cols s, const idx_t* idx, long n, cols d) {
  int first = 0;
  for (int g : plan) {
    switch (g) {
      case 1: launch<1, hint>(s, idx, n, d, first); break;
      case 2: launch<2, hint>(s, idx, n, d, first); break;
      case 3: launch<3, hint>(s, idx, n, d, first); break;
      case 4: launch<4, hint>(s, idx, n, d, first); break;
      case 7: launch<7, hint>(s, idx, n, d, first); break;
    }
    first += g;
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

int main(int argc, char** argv) {
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, L2 %d MB, persisting max %d MB\n", p.name, p.l2CacheSize >> 20, p.persistingL2CacheMaxSize >> 20);
  // the re-sort permutation: positions uniform in [-1, 1), velocities in [-0.1, 0.1), sorted by
  // cell, 50 steps, stable sort by the new cell
  std::vector<thrust::device_vector<float>> q(6);
  for (int c = 0; c < 6; ++c) {
    q[c].resize(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), q[c].begin(), hashf{unsigned(c) * 7919u + 1});
  }
  for (int c = 3; c < 6; ++c) thrust::transform(q[c].begin(), q[c].end(), q[c].begin(), [] __device__(float v) { return v * 0.1f; });
  thrust::device_vector<int> key(n);
  thrust::device_vector<idx_t> perm(n), randp(n), ident(n);
  {
    cells<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), n, key.data().get());
    thrust::sequence(perm.begin(), perm.end());
    thrust::stable_sort_by_key(key.begin(), key.end(), perm.begin());
    std::vector<thrust::device_vector<float>> r(6);
    for (int c = 0; c < 6; ++c) { r[c].resize(n); thrust::gather(perm.begin(), perm.end(), q[c].begin(), r[c].begin()); }
    q.swap(r);
    drift<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), q[3].data().get(), q[4].data().get(), q[5].data().get(), n, 50);
    cells<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), n, key.data().get());
    thrust::sequence(perm.begin(), perm.end());
    thrust::stable_sort_by_key(key.begin(), key.end(), perm.begin());
  }
  thrust::sequence(ident.begin(), ident.end());
  {
    thrust::sequence(randp.begin(), randp.end());
    thrust::device_vector<unsigned> rk(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), rk.begin(),
                      [] __device__(unsigned i) { unsigned x = i * 0x9E3779B9u; x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; return x; });
    thrust::sort_by_key(rk.begin(), rk.end(), randp.begin());
  }
  {  // displacement statistics of the re-sort
    std::vector<idx_t> h(n);
    CK(cudaMemcpy(h.data(), perm.data().get(), n * 4, cudaMemcpyDeviceToHost));
    long far8 = 0;
    std::vector<long> hist(28, 0);
    for (long i = 0; i < n; ++i) {
      if (i && std::labs(long(h[i]) - h[i - 1]) > 8) ++far8;
      long d = std::labs(long(h[i]) - i);
      int b = 0;
      while ((1l << b) <= d) ++b;
      hist[b]++;
    }
    std::printf("far fraction (>8 from previous) %.4f\n|idx[i]-i| histogram (bucket b: 2^(b-1) <= d < 2^b):\n", double(far8) / n);
    for (int b = 0; b < 28; ++b) if (hist[b]) std::printf("  b%2d %.5f\n", b, double(hist[b]) / n);
  }
  float* sbuf; float* dbuf;
  CK(cudaMalloc(&sbuf, n * 4 * L));
  CK(cudaMalloc(&dbuf, n * 4 * L));
  CK(cudaMemset(sbuf, 1, n * 4 * L));
  cols s, d;
  for (int c = 0; c < L; ++c) s.c[c] = sbuf + c * n, d.c[c] = dbuf + c * n;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  auto time = [&](auto&& f) {
    for (int w = 0; w < 2; ++w) f();
    std::vector<float> t;
    for (int r = 0; r < 7; ++r) {
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[3];
  };
  const double bytes = double(n) * 28 * 2;
  const float mc = time([&] { CK(cudaMemcpyAsync(dbuf, sbuf, n * 4 * L, cudaMemcpyDeviceToDevice)); });
  std::printf("memcpy %.3f ms %.0f GB/s\n", mc, bytes / mc * 1e-6);
  std::vector<std::vector<int>> plans = {{7}, {4, 3}, {3, 2, 2}, {2, 2, 2, 1}, {1, 1, 1, 1, 1, 1, 1}};
  const char* pname[] = {"7", "4+3", "3+2+2", "2+2+2+1", "1x7"};
  struct { const char* name; const idx_t* p; } idxs[] = {{"resort", perm.data().get()}, {"identity", ident.data().get()}, {"random", randp.data().get()}};
  for (auto& ix : idxs) {
    for (int hint = 0; hint < 4; ++hint) {
      for (std::size_t pi = 0; pi < plans.size(); ++pi) {
        if (std::string(ix.name) == "random" && pi > 0 && pi < 4) continue;
        auto f = [&] {
          switch (hint) {
            case 0: run_plan<0>(plans[pi], s, ix.p, n, d); break;
            case 1: run_plan<1>(plans[pi], s, ix.p, n, d); break;
            case 2: run_plan<2>(plans[pi], s, ix.p, n, d); break;
            case 3: run_plan<3>(plans[pi], s, ix.p, n, d); break;
          }
        };
        const float ms = time(f);
        std::printf("%-8s hint %d plan %-13s %.3f ms  x memcpy %.3f\n", ix.name, hint, pname[pi], ms, mc / ms);
      }
    }
  }
  // correctness of one plan against a plain gather of column 0 and 6
  {
    CK(cudaMemset(dbuf, 0, n * 4 * L));
    run_plan<3>({3, 2, 2}, s, perm.data().get(), n, d);
    thrust::device_vector<float> src0(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), src0.begin(), hashf{3});
    CK(cudaMemcpy(s.c[6], src0.data().get(), n * 4, cudaMemcpyDeviceToDevice));
    run_plan<3>({3, 2, 2}, s, perm.data().get(), n, d);
    thrust::device_vector<float> ref(n);
    thrust::gather(perm.begin(), perm.end(), src0.begin(), ref.begin());
    std::vector<float> h1(n), h2(n);
    CK(cudaMemcpy(h1.data(), ref.data().get(), n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2.data(), d.c[6], n * 4, cudaMemcpyDeviceToHost));
    std::printf("check %s\n", h1 == h2 ? "ok" : "MISMATCH");
  }
  return 0;
}
