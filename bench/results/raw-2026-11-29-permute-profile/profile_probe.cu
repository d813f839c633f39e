// profile_probe: strata::gather's columns way (the library at 52e6655, gather_quads_kernel) of 2^26
// particles (7 fp32 leaves) by the identity, the demo's re-sort after 50 steps (the generator of
// raw-2026-11-28-gather-quads/choice_probe.cu) and a random permutation, and strata::permute
// (whole padded records) by the re-sort: one warm-up call, then one call for ncu to profile
// (`ncu --kernel-name regex:gather --launch-skip ...`), then events, median of 7 after 2 warm-ups.
// Argument: identity | resort | random | permute.
#include <strata/algorithm/sort.hpp>
#include <strata/container/soa_vector.hpp>

#include <thrust/device_vector.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, m));
};
using idx_t = std::int32_t;

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
  const std::string what = argc > 1 ? argv[1] : "resort";
  const long n = 1l << 26;
  thrust::device_vector<idx_t> perm(n);
  if (what == "resort" || what == "permute") resort(n, 50, perm);
  else thrust::sequence(perm.begin(), perm.end());
  if (what == "random") {
    thrust::device_vector<unsigned> rk(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), rk.begin(),
                      [] __device__(unsigned i) { unsigned x = i * 0x9E3779B9u; x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; return x; });
    thrust::sort_by_key(rk.begin(), rk.end(), perm.begin());
  }
  std::vector<particle> h(n);
  for (long i = 0; i < n; ++i) h[i] = particle{float(i), float(i % 7), 1.f, 2.f, 3.f, 4.f, 5.f};
  strata::soa_vector<particle> src(h), dst(static_cast<std::size_t>(n));
  const cuda::std::span<const idx_t> ix(perm.data().get(), std::size_t(n));
  strata::detail::gather_forced = strata::detail::gather_way::columns;
  auto f = [&] {
    if (what == "permute") strata::permute(src, ix);
    else strata::gather(src, ix, dst);
  };
  f();  // warm-up (scratch, modules)
  CK(cudaDeviceSynchronize());
  f();  // the profiled call
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 9; ++r) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  std::printf("%s: %.3f ms (median of 7), %.0f GB/s of records read once and written once\n", what.c_str(), t[3], double(n) * 56 / t[3] * 1e-6);
  return 0;
}
