// jump_sweep: what a far index costs strata::gather's columns way, by how far it jumps. Index
// families of 2^26: the identity with a share f of positions (picked by a hash) pointing D records
// ahead or behind (half each, wrapping), for D from 2^8 to 2^24, and with those positions pointing
// anywhere (uniform). Also the demo's re-sort after 50 and 150 steps, and its first sort (random
// particles sorted by cell). Each family gathered with the
// library's columns way and records way forced (detail::gather_forced) and with the way the sampled
// count picks, for three records: the particle (7 fp32), a 15-byte record of mixed leaves, and a
// pair of doubles. The far share (neighbours more than gather_costs::near apart) is counted over
// every pair on the device; "count took" is the pick of the library's sampled count, made again
// here as gather makes it. Events, median of 7 after 2 warm-ups; outputs compared across ways.
// `few`: 8 of the 40 jump families.
#include <strata/algorithm/sort.hpp>
#include <strata/container/soa_vector.hpp>

#include <thrust/device_vector.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, m));
};
struct mixed15 {
  BOOST_HANA_DEFINE_STRUCT(mixed15, (double, a), (float, b), (std::int16_t, c), (std::uint8_t, d));
};
struct pair2 {
  BOOST_HANA_DEFINE_STRUCT(pair2, (double, a), (double, b));
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


__host__ __device__ inline unsigned mix(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}
// D > 0: a share f of positions point D ahead or behind; D == 0: they point anywhere.
struct jumps {
  long n, d;
  unsigned threshold;  // f * 2^32
  __host__ __device__ idx_t operator()(unsigned i) const {
    const unsigned h = mix(i * 0x9E3779B9u ^ 0x1234567u);
    if (h >= threshold) return idx_t(i);
    if (d == 0) return idx_t(mix(h ^ 0xabcdefu) % unsigned(n));
    const long j = (h & 1) ? long(i) + d : long(i) - d;
    return idx_t(((j % n) + n) % n);
  }
};
struct far_of {
  const idx_t* idx;
  long near;
  __host__ __device__ unsigned long long operator()(long i) const {
    const long d = long(idx[i]) - long(idx[i - 1]);
    return d > near || d < -near ? 1ull : 0ull;
  }
};

template <class T>
void run(const char* name, long n, const std::vector<std::pair<std::string, thrust::device_vector<idx_t>*>>& fams, float mc_bytes_ms_per_byte) {
  using costs = strata::detail::gather_costs<T, sizeof(strata::layout::aligned_record<T>)>;
  std::vector<T> host(static_cast<std::size_t>(n));
  {
    std::mt19937 g(5);
    std::vector<unsigned char> bytes(sizeof(T));
    for (auto& r : host) {
      for (auto& b : bytes) b = (unsigned char)g();
      std::memcpy(&r, bytes.data(), sizeof(T));
    }
  }
  const strata::soa_vector<T> src(host);
  strata::soa_vector<T> out[3];
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
  const double bytes = double(n) * double(costs::leaf_bytes) * 2;
  const double copy_ms = bytes * mc_bytes_ms_per_byte;
  const double limit = double(costs::direct_limit(strata::index_t(n), strata::index_t(n))) / double(n);
  std::printf("\n### %s: %llu leaf bytes, stride %zu, near %lld, count's far limit %.4f of the indices; a copy of its bytes %.3f ms\n\n",
              name, (unsigned long long)costs::leaf_bytes, sizeof(strata::layout::aligned_record<T>), (long long)costs::near, limit, copy_ms);
  std::printf("| family | far share | sampled count share | count ms | columns ms | records ms | columns x copy | records x copy | count took | faster | outputs |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n");
  using way = strata::detail::gather_way;
  for (auto& [fam, perm] : fams) {
    const idx_t* ip = perm->data().get();
    const unsigned long long far = thrust::transform_reduce(thrust::device, thrust::counting_iterator<long>(1), thrust::counting_iterator<long>(n),
                                                            far_of{ip, long(costs::near)}, 0ull, thrust::plus<unsigned long long>());
    const cuda::std::span<const idx_t> idx(ip, std::size_t(n));
    float ms[3];
    const way ways[3] = {way::count, way::columns, way::records};
    for (int w = 0; w < 3; ++w) {
      strata::detail::gather_forced = ways[w];
      ms[w] = time([&] { strata::gather(src, idx, out[w]); });
    }
    strata::detail::gather_forced = way::count;
    const auto r0 = out[0].to_host(), r1 = out[1].to_host(), r2 = out[2].to_host();
    bool same = true;
    for (std::size_t i = 0; i < r0.size() && same; ++i)
      same = std::memcmp(&r0[i], &r2[i], sizeof(T)) == 0 && std::memcmp(&r1[i], &r2[i], sizeof(T)) == 0;
    // The count's pick, as gather_records makes it (the library keeps it on the device).
    strata::detail::scratch_block word(sizeof(unsigned long long), nullptr);
    strata::detail::count_far_sample(ip, strata::index_t(n), strata::index_t(n), costs::near, costs::window(strata::detail::cache_bytes(), sizeof(idx_t)),
                                     word.as<unsigned long long>(), nullptr);
    unsigned long long counted = 0;
    CK(cudaMemcpy(&counted, word.data(), sizeof counted, cudaMemcpyDeviceToHost));
    const unsigned long long limit = strata::detail::far_sample::scaled(costs::direct_limit(strata::index_t(n), strata::index_t(n)), strata::index_t(n));
    const char* took = counted > limit ? "records" : "columns";
    std::printf("| %s | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %s |\n", fam.c_str(), double(far) / double(n - 1),
                double(counted) / double(strata::detail::far_sample::pairs(strata::index_t(n))), ms[0], ms[1], ms[2],
                copy_ms / ms[1], copy_ms / ms[2], took, ms[1] < ms[2] ? "columns" : "records", same ? "same" : "DIFFERENT");
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const bool few = argc > 1 && std::string(argv[1]) == "few";  // f 0.1 and 0.4; uniform, D 2^11, 2^20, 2^24
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, L2 %d B\n", p.name, p.l2CacheSize);
  float* m;
  CK(cudaMalloc(&m, std::size_t(n) * 28 * 2));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 9; ++r) {
    CK(cudaEventRecord(a)); CK(cudaMemcpyAsync(m, m + n * 7, std::size_t(n) * 28, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) t.push_back(ms);
  }
  CK(cudaFree(m));
  std::sort(t.begin(), t.end());
  const float mc = t[3];
  std::printf("memcpy of 2^26 x 28 bytes %.3f ms (%.1f GB/s counting both ways)\n", mc, double(n) * 56 / (mc * 1e6));
  std::vector<std::pair<std::string, thrust::device_vector<idx_t>*>> fams;
  std::vector<thrust::device_vector<idx_t>*> keep;
  auto add = [&](std::string name) { keep.push_back(new thrust::device_vector<idx_t>(n)); fams.emplace_back(name, keep.back()); return keep.back(); };
  for (int steps : {50, 150}) resort(n, steps, *add("re-sort " + std::to_string(steps)));
  {
    // Random particles sorted by cell once (the demo's first sort): the indices of each cell's
    // particles sweep the whole source in increasing steps, about n / 256 records each.
    auto* v = add("random sorted by cell");
    std::vector<thrust::device_vector<float>> q(3);
    for (int c = 0; c < 3; ++c) {
      q[c].resize(n);
      thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), q[c].begin(), hashf{unsigned(c) * 7919u + 1});
    }
    thrust::device_vector<int> key(n);
    cells<<<unsigned((n + 255) / 256), 256>>>(q[0].data().get(), q[1].data().get(), q[2].data().get(), n, key.data().get());
    thrust::sequence(v->begin(), v->end());
    thrust::stable_sort_by_key(key.begin(), key.end(), v->begin());
  }
  for (double f : {0.05, 0.1, 0.2, 0.4})
    for (long d : {0l, 1l << 8, 1l << 11, 1l << 14, 1l << 17, 1l << 19, 1l << 20, 1l << 21, 1l << 22, 1l << 24}) {
      if (few && ((f != 0.1 && f != 0.4) || (d != 0 && d != (1l << 11) && d != (1l << 20) && d != (1l << 24)))) continue;
      auto* v = add("f " + std::to_string(f).substr(0, 4) + ", " + (d ? "D 2^" + std::to_string(__builtin_ctzl(d)) : std::string("uniform")));
      thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(unsigned(n)), v->begin(),
                        jumps{n, d, unsigned(f * 4294967296.0)});
    }
  const float per_byte = mc / float(double(n) * 56);
  run<particle>("particle (7 x fp32)", n, fams, per_byte);
  run<mixed15>("mixed15 (double, float, int16, uint8)", n, fams, per_byte);
  run<pair2>("pair2 (2 x double)", n, fams, per_byte);
  return 0;
}
