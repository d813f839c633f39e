// choice_probe: strata::gather (the library, 36da436) of 2^26 particles (7 fp32 leaves) by the demo's
// re-sort after 0-100 steps and a random permutation, with the way the sampled count picks and with
// each way forced (detail::gather_forced): does the count pick the faster way now that the columns
// way moves quads? The re-sort generator is quads_sweep.cu's. Events, median of 7 after 2 warm-ups;
// every output compared with the forced-records output.
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
#include <random>
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

int main() {
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s\n", p.name);
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
  float* m;
  CK(cudaMalloc(&m, std::size_t(n) * 28 * 2));
  const float mc = time([&] { CK(cudaMemcpyAsync(m, m + n * 7, std::size_t(n) * 28, cudaMemcpyDeviceToDevice)); });
  CK(cudaFree(m));
  const double gbs = double(n) * 56 / (mc * 1e6);
  std::printf("memcpy %.1f GB/s\n\n| steps | far share | count's way ms | columns ms | records ms | count x memcpy | columns x memcpy | records x memcpy | count took | outputs |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n", gbs);
  std::vector<particle> host(static_cast<std::size_t>(n));
  {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& r : host) r = particle{u(g), u(g), u(g), u(g), u(g), u(g), u(g)};
  }
  const strata::soa_vector<particle> src(host);
  strata::soa_vector<particle> out[3];
  thrust::device_vector<idx_t> perm(n);
  using way = strata::detail::gather_way;
  for (int steps : {0, 5, 20, 50, 75, 100, 150, -1}) {
    if (steps >= 0) {
      resort(n, steps, perm);
    } else {
      std::vector<idx_t> h(n);
      for (long i = 0; i < n; ++i) h[i] = idx_t(i);
      std::shuffle(h.begin(), h.end(), std::mt19937(11));
      thrust::copy(h.begin(), h.end(), perm.begin());
    }
    std::vector<idx_t> hi(n);
    CK(cudaMemcpy(hi.data(), perm.data().get(), n * 4, cudaMemcpyDeviceToHost));
    long far = 0;
    for (long i = 1; i < n; ++i) far += std::labs(long(hi[i]) - hi[i - 1]) > 8;
    const cuda::std::span<const idx_t> idx(perm.data().get(), std::size_t(n));
    float ms[3];
    const way ways[3] = {way::count, way::columns, way::records};
    for (int w = 0; w < 3; ++w) {
      strata::detail::gather_forced = ways[w];
      ms[w] = time([&] { strata::gather(src, idx, out[w]); });
    }
    strata::detail::gather_forced = way::count;
    const auto r0 = out[0].to_host(), r1 = out[1].to_host(), r2 = out[2].to_host();
    const bool same = std::memcmp(r0.data(), r2.data(), r0.size() * sizeof(particle)) == 0 &&
                      std::memcmp(r1.data(), r2.data(), r1.size() * sizeof(particle)) == 0;
    const char* took = std::abs(ms[0] - ms[1]) < std::abs(ms[0] - ms[2]) ? "columns" : "records";
    auto x = [&](float t) { return double(n) * 56 / (t * 1e6) / gbs; };
    std::printf("| %s | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s |\n", steps < 0 ? "random" : std::to_string(steps).c_str(),
                double(far) / double(n - 1), ms[0], ms[1], ms[2], x(ms[0]), x(ms[1]), x(ms[2]), took, same ? "same" : "DIFFERENT");
    std::fflush(stdout);
  }
  return 0;
}
