// spare_probe: strata::permute of 2^26 particles (7 fp32 leaves) in place and through a spare
// container, by the demo's re-sort after 0, 50 and 150 steps and a random permutation, beside
// strata::gather of the same indices and a memcpy of the columns in the same run. Also sort_by of
// the particles by an 18-bit cell key (the demo's call) both ways. Events, median of 7 after 2
// warm-ups (each timed call starts from the same records: the permutation is applied to a copy);
// every output compared with the in-place one.
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
struct cell_of {
  STRATA_HD unsigned operator()(const particle& p) const {
    auto c = [](float v) { int i = int((v + 1.0f) * 32.0f); return unsigned(i < 0 ? 0 : i > 63 ? 63 : i); };
    return (c(p.z) * 64 + c(p.y)) * 64 + c(p.x);
  }
};

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
  // Times f (which may change its inputs) after `reset`, which is not timed.
  auto time = [&](auto&& reset, auto&& f) {
    std::vector<float> t;
    for (int r = 0; r < 9; ++r) {
      reset();
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[3];
  };
  auto nothing = [] {};
  float* m;
  CK(cudaMalloc(&m, std::size_t(n) * 28 * 2));
  const float mc = time(nothing, [&] { CK(cudaMemcpyAsync(m, m + n * 7, std::size_t(n) * 28, cudaMemcpyDeviceToDevice)); });
  CK(cudaFree(m));
  std::printf("memcpy of the columns (2^26 x 28 bytes) %.3f ms\n\n", mc);
  std::vector<particle> host(static_cast<std::size_t>(n));
  {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& r : host) r = particle{u(g), u(g), u(g), u(g), u(g), u(g), u(g)};
  }
  const strata::soa_vector<particle> src(host);
  strata::soa_vector<particle> c, spare, out, ref;
  auto reset = [&] { c = src; strata::synchronize({}); };
  thrust::device_vector<idx_t> perm(n);
  std::printf("| indices | permute in place ms | through a spare ms | gather ms | in place x memcpy | spare x memcpy | gather x memcpy | spare / in place | outputs |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (int steps : {0, 50, 150, -1}) {
    if (steps >= 0) {
      resort(n, steps, perm);
    } else {
      std::vector<idx_t> h(n);
      for (long i = 0; i < n; ++i) h[i] = idx_t(i);
      std::shuffle(h.begin(), h.end(), std::mt19937(11));
      thrust::copy(h.begin(), h.end(), perm.begin());
    }
    const cuda::std::span<const idx_t> idx(perm.data().get(), std::size_t(n));
    const float t_in = time(reset, [&] { strata::permute(c, idx); });
    ref = c;
    const float t_sp = time(reset, [&] { strata::permute(c, idx, spare); });
    const bool same_sp = std::memcmp(c.to_host().data(), ref.to_host().data(), sizeof(particle) * std::size_t(n)) == 0;
    const float t_g = time(nothing, [&] { strata::gather(src, idx, out); });
    const bool same_g = std::memcmp(out.to_host().data(), ref.to_host().data(), sizeof(particle) * std::size_t(n)) == 0;
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %s |\n", steps < 0 ? "random" : ("re-sort " + std::to_string(steps)).c_str(), t_in, t_sp, t_g,
                mc / t_in, mc / t_sp, mc / t_g, t_in / t_sp, same_sp && same_g ? "same" : "DIFFERENT");
    std::fflush(stdout);
  }
  // sort_by: the records are the random ones above (a first sort), then the sorted ones after a
  // small move (a re-sort: every x shifted by up to 1/64 of a cell).
  strata::soa_vector<particle> sorted(src);
  strata::sort_by(sorted, cell_of{}, strata::stream_t{}, 0, 18);
  std::vector<particle> moved = sorted.to_host();
  for (std::size_t i = 0; i < moved.size(); ++i) moved[i].x += (float((i * 2654435761u) % 1000) / 1000.0f - 0.5f) * (1.0f / 32.0f);
  const strata::soa_vector<particle> resorting(moved);
  std::printf("\n| sort_by, 18-bit cell keys | in place ms | through a spare ms | spare / in place | outputs |\n| --- | ---: | ---: | ---: | --- |\n");
  for (int k = 0; k < 2; ++k) {
    const strata::soa_vector<particle>& from = k == 0 ? src : resorting;
    auto reset2 = [&] { c = from; strata::synchronize({}); };
    const float t_in = time(reset2, [&] { strata::sort_by(c, cell_of{}, strata::stream_t{}, 0, 18); });
    ref = c;
    const float t_sp = time(reset2, [&] { strata::sort_by(c, cell_of{}, spare, strata::stream_t{}, 0, 18); });
    const bool same = std::memcmp(c.to_host().data(), ref.to_host().data(), sizeof(particle) * std::size_t(n)) == 0;
    std::printf("| %s | %.3f | %.3f | %.2f | %s |\n", k == 0 ? "random records" : "sorted records, x moved a little", t_in, t_sp, t_in / t_sp, same ? "same" : "DIFFERENT");
  }
  return 0;
}
