// smid_probe: is the re-sort's extra DRAM traffic the two L2 halves each fetching sectors that SMs
// on both sides read? The quads gather of order_probe.cu (Q = 4, tiles of 4096 records in order,
// taken from an atomic counter) run by all SMs, or only by the blocks that land on a subset of SM
// ids (the others return at once): ids below 66, from 66 on, even, odd. If the SMs of one subset
// sit behind one L2 half, the re-sort's DRAM reads fall towards the identity's. Output compared
// with thrust::gather; events, median of 7; `once` runs every variant once (ncu).
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
constexpr int L = 7;
using idx_t = std::int32_t;
struct cols { float* c[L]; };

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

// subset: 0 all, 1 smid < 66, 2 smid >= 66, 3 even, 4 odd
template <int Q>
__global__ void __launch_bounds__(256) gq(cols src, const idx_t* idx, long tiles, cols dst, int subset, unsigned long long* counter) {
  const unsigned s = smid();
  const bool in = subset == 0 || (subset == 1 && s < 66) || (subset == 2 && s >= 66) || (subset == 3 && s % 2 == 0) || (subset == 4 && s % 2 == 1);
  if (!in) return;
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
    for (int k = 0; k < Q; ++k) j[k] = reinterpret_cast<const int4*>(idx)[t * 256 * Q + k * 256 + threadIdx.x];
#pragma unroll
    for (int k = 0; k < Q; ++k)
#pragma unroll
      for (int g = 0; g < L; ++g) r[k][g] = make_float4(src.c[g][j[k].x], src.c[g][j[k].y], src.c[g][j[k].z], src.c[g][j[k].w]);
#pragma unroll
    for (int k = 0; k < Q; ++k)
#pragma unroll
      for (int g = 0; g < L; ++g) reinterpret_cast<float4*>(dst.c[g])[t * 256 * Q + k * 256 + threadIdx.x] = r[k][g];
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



int main(int argc, char** argv) {
  const bool once = argc > 1 && std::string(argv[1]) == "once";
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, %d SMs\n", p.name, p.multiProcessorCount);
  thrust::device_vector<idx_t> perm(n), ident(n);
  resort(n, 50, perm);
  thrust::sequence(ident.begin(), ident.end());
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
  std::printf("memcpy %.3f ms\n", mc);
  std::vector<float> h1(n * L), h2(n * L);
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gq<4>, 256, 0));
  const unsigned blocks = unsigned(per_sm * p.multiProcessorCount);
  const long tiles = n / 4096;
  const char* names[] = {"all SMs", "SM ids < 66", "SM ids >= 66", "even SM ids", "odd SM ids"};
  for (auto [iname, ip] : {std::pair{"identity", ident.data().get()}, std::pair{"resort", perm.data().get()}}) {
    for (int g = 0; g < L; ++g) thrust::gather(thrust::device, ip, ip + n, s.c[g], ref.c[g]);
    CK(cudaMemcpy(h1.data(), rbuf, n * 4 * L, cudaMemcpyDeviceToHost));
    for (int subset = 0; subset < 5; ++subset) {
      auto f = [&] { CK(cudaMemsetAsync(counter, 0, sizeof *counter)); gq<4><<<blocks, 256>>>(s, ip, tiles, d, subset, counter); };
      CK(cudaMemset(dbuf, 0xff, n * 4 * L));
      f();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h2.data(), dbuf, n * 4 * L, cudaMemcpyDeviceToHost));
      const bool same = std::memcmp(h1.data(), h2.data(), h1.size() * 4) == 0;
      const float ms = time(f);
      std::printf("| %s | %s (%u blocks launched) | %.3f | %.3f | %s |\n", iname, names[subset], blocks, ms, mc / ms, same ? "same" : "DIFFERENT");
      std::fflush(stdout);
    }
  }
  return 0;
}
