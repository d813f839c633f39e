// quads_sweep: the library's gather_quads_kernel (convert/gather.hpp) at several register budgets
// (held bytes: quads a thread) and minimum resident blocks (__launch_bounds__), against the
// library's one-record-a-time gather_columns_kernel, on the demo's re-sort after 0-100 steps and a
// uniformly random permutation. Records: the demo's particle (7 fp32 leaves) and a 15-byte record
// of mixed leaf sizes (double, float, int16, byte). 2^26 records; every output compared with a
// reference gather made one leaf at a time on the host. Events, median of 7 after 2 warm-ups.
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
struct mixed15 {
  BOOST_HANA_DEFINE_STRUCT(mixed15, (double, a), (float, b), (std::int16_t, c), (std::uint8_t, d));
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

template <class K>
unsigned resident(K kernel) {
  int per_sm = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
  return unsigned(per_sm * sms);
}
template <class K>
int regs(K kernel) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs * 1000 + int(a.localSizeBytes);
}

template <class T>
void sweep(const char* name, long n, float mc, const std::vector<std::pair<int, thrust::device_vector<idx_t>*>>& perms) {
  using namespace strata;
  using M = soa_mapping<T>;
  soa_vector<T> src(static_cast<std::size_t>(n)), dst(static_cast<std::size_t>(n));
  {  // random bytes in every leaf
    auto v = src.view();
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      using leaf = reflect::leaf_type_t<T, L>;
      std::vector<leaf> h(n);
      std::mt19937 g(unsigned(L) + 5);
      for (auto& x : h) { unsigned r = g(); std::memcpy(&x, &r, std::min(sizeof r, sizeof x)); if constexpr (std::is_floating_point_v<leaf>) if (!(x == x)) x = 0; }
      CK(cudaMemcpy(v.template leaf_ptr<L>(0), h.data(), n * sizeof(leaf), cudaMemcpyHostToDevice));
    });
  }
  const basic_view<const T, M> s = src.const_view();
  const basic_view<T, M> d = dst.view();
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
  const double bytes = double(n) * 2 * detail::gather_quads<T>::record_bytes;
  for (auto [steps, perm] : perms) {
    const idx_t* ix = perm->data().get();
    // reference: one leaf at a time on the host
    std::vector<idx_t> hi(n);
    CK(cudaMemcpy(hi.data(), ix, n * 4, cudaMemcpyDeviceToHost));
    long far = 0;
    for (long i = 1; i < n; ++i) far += std::labs(long(hi[i]) - hi[i - 1]) > 8;
    std::vector<std::vector<unsigned char>> want;
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      constexpr std::size_t sz = sizeof(reflect::leaf_type_t<T, L>);
      std::vector<unsigned char> col(n * sz), out(n * sz);
      CK(cudaMemcpy(col.data(), s.template leaf_ptr<L>(0), n * sz, cudaMemcpyDeviceToHost));
      for (long i = 0; i < n; ++i) std::memcpy(&out[i * sz], &col[std::size_t(hi[i]) * sz], sz);
      want.push_back(std::move(out));
    });
    auto row = [&](const char* what, int info, auto&& f) {
      CK(cudaMemset(dst.view().template leaf_ptr<0>(0), 0xff, n * sizeof(reflect::leaf_type_t<T, 0>)));
      f();
      CK(cudaDeviceSynchronize());
      bool same = true;
      reflect::for_each_leaf<T>([&](auto fl) {
        constexpr std::size_t L = decltype(fl)::value;
        constexpr std::size_t sz = sizeof(reflect::leaf_type_t<T, L>);
        std::vector<unsigned char> got(n * sz);
        CK(cudaMemcpy(got.data(), d.template leaf_ptr<L>(0), n * sz, cudaMemcpyDeviceToHost));
        same = same && std::memcmp(got.data(), want[L].data(), n * sz) == 0;
      });
      const float ms = time(f);
      std::printf("| %s | %s | %.4f | %s | %d | %d | %.3f | %.3f | %s |\n", name, steps < 0 ? "random" : std::to_string(steps).c_str(),
                  double(far) / double(n - 1), what, info / 1000, info % 1000, ms, bytes / (ms * 1e6) / mc, same ? "same" : "DIFFERENT");
      std::fflush(stdout);
    };
    const detail::index_check check{n, nullptr};
    {
      constexpr auto k = &detail::gather_columns_kernel<T, M, idx_t>;
      const unsigned blocks = std::min<unsigned>(unsigned((n + detail::gather_columns::span - 1) / detail::gather_columns::span), resident(k));
      row("one record at a time (gather_columns)", regs(k), [&] { k<<<blocks, 256>>>(s, ix, n, d, detail::path_gate{}, check); });
    }
    auto quads = [&]<std::size_t Held, int MinBlocks>() {
      constexpr auto k = &detail::gather_quads_kernel<T, M, idx_t, true, Held, MinBlocks>;
      using g = detail::gather_quads<T, Held>;
      const unsigned blocks = std::min<unsigned>(unsigned((n / 4 + g::span - 1) / g::span), resident(k));
      char what[96];
      std::snprintf(what, sizeof what, "quads: held %zu (%d quads), min blocks %d, %u blocks", Held, g::quads, MinBlocks, blocks);
      row(what, regs(k), [&] { k<<<blocks, 256>>>(s, ix, n, d, detail::path_gate{}, check); });
    };
    quads.template operator()<112, 1>();
    quads.template operator()<224, 1>();
    quads.template operator()<224, 3>();
    quads.template operator()<336, 1>();
    quads.template operator()<336, 2>();
    quads.template operator()<448, 1>();
    quads.template operator()<448, 2>();
    quads.template operator()<896, 1>();
  }
}

int main() {
  const long n = 1l << 26;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("gpu %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  float* m;
  CK(cudaMalloc(&m, std::size_t(n) * 28 * 2));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 9; ++r) {
    CK(cudaEventRecord(a)); CK(cudaMemcpyAsync(m, m + n * 7, std::size_t(n) * 28, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  const float mc = float(double(n) * 28 * 2 / (t[4] * 1e6));  // GB/s, read + write
  CK(cudaFree(m));
  std::printf("memcpy %.1f GB/s (28 B x 2^26, read + write)\n\n", mc);
  std::printf("| record | steps | far share | kernel | registers | local bytes | ms | x memcpy | output |\n| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
  std::vector<thrust::device_vector<idx_t>> perms(6, thrust::device_vector<idx_t>(n));
  const int steps[] = {0, 5, 20, 50, 100};
  for (int k = 0; k < 5; ++k) resort(n, steps[k], perms[k]);
  {
    std::vector<idx_t> h(n);
    for (long i = 0; i < n; ++i) h[i] = idx_t(i);
    std::shuffle(h.begin(), h.end(), std::mt19937(11));
    thrust::copy(h.begin(), h.end(), perms[5].begin());
  }
  std::vector<std::pair<int, thrust::device_vector<idx_t>*>> all, some;
  for (int k = 0; k < 5; ++k) all.push_back({steps[k], &perms[k]});
  all.push_back({-1, &perms[5]});
  some = {{0, &perms[0]}, {50, &perms[3]}};
  sweep<particle>("particle (7 x fp32)", n, mc, all);
  sweep<mixed15>("mixed (8+4+2+1 B)", n, mc, some);
  return 0;
}
