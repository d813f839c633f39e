// far_probe: the kernels of runs_probe.cu (below, unchanged) on re-sorts after 1 to 50 demo steps,
// whose indices jump more often the longer the particles drift: which shape wins at which share of
// far indices (more than 8 records from the previous one, the library's `near` for 7 fp32 columns).
//
// Probe: the columns way of strata::gather (each leaf read at the indices, stored to its column)
// with 16-byte accesses where indices run. A thread takes 4 consecutive destinations: one 16-byte
// load of their indices, one 16-byte store per column, and, where the 4 indices are consecutive
// (a run), the source read as 16-byte vectors too: one where the run starts on a 16-byte boundary,
// else the two vectors that cover it. Against the library's shape (4 records a thread, 256
// threads apart, 4-byte accesses). 7 fp32 columns of 2^26 records; indices: identity, the demo's
// re-sort after 50 steps (as raw-2026-11-24-permute-passes), a uniformly random permutation.
// Events, median of 7 after 2 warm-ups, L2 not flushed (as that probe and bench/lifecycle).
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

// the library's shape (per = 4), and more records a thread
template <int per>
__global__ void __launch_bounds__(256) gather_lib(cols src, const idx_t* idx, long n, cols dst) {
  constexpr int T = 256;
  const long span = long(T) * per;
  for (long b = blockIdx.x; b * span < n; b += gridDim.x) {
    const long f = b * span + threadIdx.x;
    idx_t j[per];
    float r[per][L];
#pragma unroll
    for (int k = 0; k < per; ++k) j[k] = f + long(k) * T < n ? idx[f + long(k) * T] : 0;
#pragma unroll
    for (int k = 0; k < per; ++k)
      if (f + long(k) * T < n) {
#pragma unroll
        for (int g = 0; g < L; ++g) r[k][g] = src.c[g][j[k]];
      }
#pragma unroll
    for (int k = 0; k < per; ++k)
      if (f + long(k) * T < n) {
#pragma unroll
        for (int g = 0; g < L; ++g) dst.c[g][f + long(k) * T] = r[k][g];
      }
  }
}

__device__ __forceinline__ float4 pick(float4 a, float4 b, int s) {
  switch (s) {
    case 1: return make_float4(a.y, a.z, a.w, b.x);
    case 2: return make_float4(a.z, a.w, b.x, b.y);
    default: return make_float4(a.w, b.x, b.y, b.z);
  }
}

// mode 0: 16-byte index loads and stores, 4-byte source loads; 1: + 16-byte source loads of runs
// on a boundary; 2: + runs off a boundary from the two vectors covering them.
// Q quads a thread, the quads of a block's threads adjacent; n a multiple of 4 here.
template <int mode, int Q>
__global__ void __launch_bounds__(256) gather_quads(cols src, const idx_t* idx, long n, cols dst) {
  const long quads = n / 4, vec_end = n / 4;  // source vectors in a column (n % 4 == 0)
  const long span = 256l * Q;
  for (long b = blockIdx.x; b * span < quads; b += gridDim.x) {
    int4 j[Q];
    float4 r[Q][L];
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
      j[k] = q < quads ? reinterpret_cast<const int4*>(idx)[q] : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
      if (q >= quads) continue;
      const idx_t j0 = j[k].x;
      const bool run = j[k].y == j0 + 1 && j[k].z == j0 + 2 && j[k].w == j0 + 3;
      const int s = j0 & 3;
      if (mode >= 1 && run && s == 0) {
#pragma unroll
        for (int g = 0; g < L; ++g) r[k][g] = reinterpret_cast<const float4*>(src.c[g])[j0 >> 2];
      } else if (mode >= 2 && run && (j0 >> 2) + 1 < vec_end) {
#pragma unroll
        for (int g = 0; g < L; ++g) {
          const float4* v = reinterpret_cast<const float4*>(src.c[g]) + (j0 >> 2);
          r[k][g] = pick(v[0], v[1], s);
        }
      } else {
#pragma unroll
        for (int g = 0; g < L; ++g) r[k][g] = make_float4(src.c[g][j[k].x], src.c[g][j[k].y], src.c[g][j[k].z], src.c[g][j[k].w]);
      }
    }
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
      if (q >= quads) continue;
#pragma unroll
      for (int g = 0; g < L; ++g) reinterpret_cast<float4*>(dst.c[g])[q] = r[k][g];
    }
  }
}

// The quads mapping with 4-byte accesses only: 4 index loads and 4 stores a column per quad.
template <int Q>
__global__ void __launch_bounds__(256) gather_quads_scalar(cols src, const idx_t* idx, long n, cols dst) {
  const long quads = n / 4, span = 256l * Q;
  for (long b = blockIdx.x; b * span < quads; b += gridDim.x) {
    idx_t j[Q][4];
    float r[Q][4][L];
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
#pragma unroll
      for (int e = 0; e < 4; ++e) j[k][e] = q < quads ? idx[4 * q + e] : 0;
    }
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
      if (q >= quads) continue;
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int g = 0; g < L; ++g) r[k][e][g] = src.c[g][j[k][e]];
    }
#pragma unroll
    for (int k = 0; k < Q; ++k) {
      const long q = b * span + long(k) * 256 + threadIdx.x;
      if (q >= quads) continue;
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int g = 0; g < L; ++g) dst.c[g][4 * q + e] = r[k][e][g];
    }
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


int main(int argc, char** argv) {
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, L2 %d MB\n", p.name, p.l2CacheSize >> 20);
  float *sbuf, *dbuf, *rbuf;
  CK(cudaMalloc(&sbuf, n * 4 * L));
  CK(cudaMalloc(&dbuf, n * 4 * L));
  CK(cudaMalloc(&rbuf, n * 4 * L));
  thrust::transform(thrust::device, thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n * L)), sbuf, hashf{77});
  cols s, d, ref;
  for (int c = 0; c < L; ++c) s.c[c] = sbuf + c * n, d.c[c] = dbuf + c * n, ref.c[c] = rbuf + c * n;
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
  const float mc = time([&] { CK(cudaMemcpyAsync(dbuf, sbuf, n * 4 * L, cudaMemcpyDeviceToDevice)); });
  std::printf("memcpy %.3f ms\n", mc);
  std::printf("| steps | far share | run quads | kernel | ms | x memcpy | output |\n| ---: | ---: | ---: | --- | ---: | ---: | --- |\n");
  std::vector<float> h1(n * L), h2(n * L);
  thrust::device_vector<idx_t> perm(n);
  for (int steps : {0, 5, 20, 50}) {
    {
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
    const idx_t* ix = perm.data().get();
    double far = 0, runs = 0;
    {
      std::vector<idx_t> h(n);
      CK(cudaMemcpy(h.data(), ix, n * 4, cudaMemcpyDeviceToHost));
      long f = 0, r = 0;
      for (long i = 1; i < n; ++i) f += std::labs(long(h[i]) - h[i - 1]) > 8;
      for (long i = 0; i < n; i += 4) r += h[i + 1] == h[i] + 1 && h[i + 2] == h[i] + 2 && h[i + 3] == h[i] + 3;
      far = double(f) / double(n - 1), runs = double(r) / double(n / 4);
    }
    for (int g = 0; g < L; ++g) thrust::gather(thrust::device, ix, ix + n, s.c[g], ref.c[g]);
    CK(cudaMemcpy(h1.data(), rbuf, n * 4 * L, cudaMemcpyDeviceToHost));
    auto row = [&](const char* what, auto&& f) {
      CK(cudaMemset(dbuf, 0xff, n * 4 * L));
      f();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h2.data(), dbuf, n * 4 * L, cudaMemcpyDeviceToHost));
      const char* ok = std::memcmp(h1.data(), h2.data(), h1.size() * 4) == 0 ? "same" : "DIFFERENT";
      const float ms = time(f);
      std::printf("| %d | %.4f | %.3f | %s | %.3f | %.3f | %s |\n", steps, far, runs, what, ms, mc / ms, ok);
      std::fflush(stdout);
    };
    auto lib = [&]<int per>(const char* what) {
      const unsigned blocks = std::min<unsigned>(unsigned((n + 256 * per - 1) / (256 * per)), resident(gather_lib<per>));
      row(what, [&] { gather_lib<per><<<blocks, 256>>>(s, ix, n, d); });
    };
    auto quads = [&]<int mode, int Q>(const char* what) {
      const unsigned blocks = std::min<unsigned>(unsigned((n / 4 + 256 * Q - 1) / (256 * Q)), resident(gather_quads<mode, Q>));
      row(what, [&] { gather_quads<mode, Q><<<blocks, 256>>>(s, ix, n, d); });
    };
    lib.template operator()<4>("library shape, 4 a thread");
    lib.template operator()<6>("library shape, 6 a thread");
    lib.template operator()<8>("library shape, 8 a thread");
    quads.template operator()<0, 2>("quads Q=2, 16-byte indices and stores");
    quads.template operator()<0, 4>("quads Q=4, 16-byte indices and stores");
    auto scalar = [&]<int Q>(const char* what) {
      const unsigned blocks = std::min<unsigned>(unsigned((n / 4 + 256 * Q - 1) / (256 * Q)), resident(gather_quads_scalar<Q>));
      row(what, [&] { gather_quads_scalar<Q><<<blocks, 256>>>(s, ix, n, d); });
    };
    scalar.template operator()<2>("quads Q=2, 4-byte accesses");
    scalar.template operator()<4>("quads Q=4, 4-byte accesses");
  }
  return 0;
}
