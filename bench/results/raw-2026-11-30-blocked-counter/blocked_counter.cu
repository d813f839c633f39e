// blocked_counter: order_probe (../raw-2026-11-29-permute-profile) asked whether visiting the
// output tiles blocked over the re-sort's row and plane strides lowers the DRAM bytes of the demo's
// re-sort; its persistent blocks took tiles at a fixed stride and drifted apart, so every order read
// 4.1-4.7 GB. Since then the library's blocks take their spans from an atomic counter (3.18 GB in
// order). This probe asks the question again with the counter: the blocks take the next entry of an
// order array in turn. Same quads gather (7 fp32 columns of 2^26 records, Q = 4 quads a thread),
// same generator, strides R = 64K (row) and P = 2M (plane) known here (an upper bound for a
// schedule that would infer them from the indices). Output compared with thrust::gather; events,
// median of 7 after 2 warm-ups; `once` runs every variant once (for ncu).
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
#include <tuple>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)
constexpr int L = 7;
using idx_t = std::int32_t;
struct cols { float* c[L]; };

template <int Q>
__global__ void __launch_bounds__(256) gq(cols src, const idx_t* idx, const int* order, long tiles, cols dst) {
  for (long w = blockIdx.x; w < tiles; w += gridDim.x) {
    const long t = order[w];
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
template <int Q>
__global__ void __launch_bounds__(256) gqc(cols src, const idx_t* idx, const int* order, long tiles, cols dst, unsigned long long* next) {
  __shared__ long taken;
  for (;;) {
    if (threadIdx.x == 0) taken = long(atomicAdd(next, 1ull));
    __syncthreads();
    const long w = taken;
    __syncthreads();
    if (w >= tiles) return;
    const long t = order[w];
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
template <class K>
unsigned resident(K kernel) {
  int per_sm = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
  return unsigned(per_sm * sms);
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


std::vector<int> blocked(long n, long T, long bz, long by) {
  const long R = 65536, P = 2097152, tiles = n / T;
  std::vector<std::tuple<long, long, long, long, long, long>> keys;
  for (long t = 0; t < tiles; ++t) {
    const long o = t * T, z = o / P, y = (o % P) / R, w = (o % R) / T;
    keys.emplace_back(z / bz, y / by, w, z % bz, y % by, t);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int> ord;
  for (auto& k : keys) ord.push_back(int(std::get<5>(k)));
  return ord;
}

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::string(argv[1]) == "once";
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, L2 %d MB\n", p.name, p.l2CacheSize >> 20);
  thrust::device_vector<idx_t> perm(n), ident(n);
  resort(n, 50, perm);
  thrust::sequence(ident.begin(), ident.end());
  float *sbuf, *dbuf, *rbuf;
  CK(cudaMalloc(&sbuf, n * 4 * L)); CK(cudaMalloc(&dbuf, n * 4 * L)); CK(cudaMalloc(&rbuf, n * 4 * L));
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
  std::printf("memcpy %.3f ms\n\n| indices | blocks take tiles | order | ms | x memcpy | output |\n| --- | --- | --- | ---: | ---: | --- |\n", mc);
  std::vector<float> h1(n * L), h2(n * L);
  int* dord;
  CK(cudaMalloc(&dord, n / 1024 * sizeof(int)));
  for (auto [iname, ip] : {std::pair{"identity", ident.data().get()}, std::pair{"resort", perm.data().get()}}) {
    for (int g = 0; g < L; ++g) thrust::gather(thrust::device, ip, ip + n, s.c[g], ref.c[g]);
    CK(cudaMemcpy(h1.data(), rbuf, n * 4 * L, cudaMemcpyDeviceToHost));
    constexpr int Q = 4;
    const long T = 1024l * Q, tiles = n / T;
    const unsigned blocks = std::min<unsigned>(unsigned(tiles), resident(gqc<Q>));
    unsigned long long* next;
    CK(cudaMalloc(&next, sizeof *next));
    const std::pair<long, long> orders[] = {{0, 0}, {2, 1}, {2, 2}, {2, 4}, {4, 4}, {4, 8}, {8, 8}, {8, 16}, {16, 16}, {2, 32}, {4, 32}, {32, 4}, {32, 32}};
    for (int stride = 1; stride >= 0; --stride)
      for (auto [bz, by] : orders) {
        if (stride && bz) continue;  // the fixed stride only in order, for reference
        std::vector<int> ord(tiles);
        for (long t = 0; t < tiles; ++t) ord[t] = int(t);
        if (bz) ord = blocked(n, T, bz, by);
        CK(cudaMemcpy(dord, ord.data(), tiles * sizeof(int), cudaMemcpyHostToDevice));
        auto run = [&] {
          if (stride) gq<Q><<<blocks, 256>>>(s, ip, dord, tiles, d);
          else {
            CK(cudaMemsetAsync(next, 0, sizeof *next));
            gqc<Q><<<blocks, 256>>>(s, ip, dord, tiles, d, next);
          }
        };
        CK(cudaMemset(dbuf, 0xff, n * 4 * L));
        run();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h2.data(), dbuf, n * 4 * L, cudaMemcpyDeviceToHost));
        const bool same = std::memcmp(h1.data(), h2.data(), h1.size() * 4) == 0;
        const float ms = time(run);
        std::printf("| %s | %s | %s | %.3f | %.3f | %s |\n", iname, stride ? "fixed stride" : "counter",
                    bz ? ("blocked bz=" + std::to_string(bz) + " by=" + std::to_string(by)).c_str() : "in order", ms, mc / ms, same ? "same" : "DIFFERENT");
        std::fflush(stdout);
      }
    CK(cudaFree(next));
  }
  return 0;
}
