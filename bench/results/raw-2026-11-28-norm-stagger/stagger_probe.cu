// Probe: do wide normalization rows (a block per row, two blocks per SM) lose time because the
// blocks of an SM load, reduce and write in lockstep? The rows kernel's whole-unit path, copied,
// with one change: the k-th block to start on an SM (k < blocks per SM) first waits k * D ns, so
// an SM's blocks run out of phase from the first wave on (a finishing block's successor inherits
// its slot's phase). D = 0 skips the per-SM atomic: the library kernel's code.
// Each configuration is timed against strata's own launch in the same loop (CUDA events, a 256 MiB
// memset before each run, median of 15), and its output compared bit for bit with strata's.
//   stagger_probe [hidden,...]
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <thrust/execution_policy.h>
#include <thrust/tabulate.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using strata::index_t;
namespace sn = strata::detail::norm;

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } \
  } while (0)

template <strata::norm_kind Kind, class T, int V>
__global__ void __launch_bounds__(sn::max_group, 2) stagger_kernel(sn::args<T> a, int G, unsigned* sm_slots, int per_sm, long long delay_ns) {
  __shared__ sn::sum_slots slots;
  __shared__ int slot;
  if (delay_ns > 0) {
    if (threadIdx.x == 0) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      slot = int(atomicAdd(sm_slots + sm, 1u));
    }
    __syncthreads();
    if (slot > 0 && slot < per_sm && threadIdx.x == 0) {
      unsigned long long t0, t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      do {
        __nanosleep(256);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      } while (t - t0 < (unsigned long long)(delay_ns * slot));
    }
    __syncthreads();
  }
  const int t = int(threadIdx.x);
  const index_t r = index_t(blockIdx.x);
  const bool live = r < a.rows;
  const T* xrow = a.x + (live ? r : 0) * a.x_pitch;
  sn::row_part<T, V> part;
  part.load_whole(xrow, 0, a.cols / sn::lanes<T>, t, G, live);
  const sn::moments m = sn::part_moments<Kind>(part, float(a.cols), G, slots);
  if (!live) return;
  float mean, rstd;
  sn::finish<Kind>(m, a.cols, a.eps, mean, rstd);
  part.template write<true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, sn::row_span{a.cols, 0, 0, 0, 0}, mean, rstd);
}

template <class T>
struct hashed {
  __host__ __device__ T operator()(index_t i) const {
    std::uint32_t x = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32) * 40503u;
    x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
    return strata::from_float<T>(float(x % 20001) / 2500.0f - 3.5f);
  }
};

struct clock_t_ {
  cudaEvent_t a, b;
  void* flush = nullptr;
  clock_t_() { CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b)); CHECK(cudaMalloc(&flush, 256u << 20)); }
  template <class F>
  float time(F&& f) {
    CHECK(cudaMemsetAsync(flush, 0, 256u << 20));
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <strata::norm_kind Kind, class T>
void probe(const char* op, const char* dtype, index_t hidden, double copy_gbps, clock_t_& clk) {
  const index_t rows = std::max<index_t>(1, (index_t(256) << 20) / (2 * hidden * index_t(sizeof(T))));
  strata::matrix<T> x(rows, hidden), y(rows, hidden), yref(rows, hidden), g(1, hidden), b(1, hidden);
  auto xv = x.view();
  thrust::tabulate(thrust::device, xv.data, xv.data + rows * xv.pitch, hashed<T>{});
  std::vector<T> gh(static_cast<std::size_t>(hidden)), bh(static_cast<std::size_t>(hidden));
  for (index_t i = 0; i < hidden; ++i) gh[i] = strata::from_float<T>(0.5f + float(i % 7) / 8), bh[i] = strata::from_float<T>(float(i % 5) / 10 - 0.2f);
  g.copy_from_host(gh.data());
  b.copy_from_host(bh.data());
  const cuda::std::span<const T> gs(g.const_view().data, std::size_t(hidden));
  const cuda::std::span<const T> bs = Kind == strata::norm_kind::layer ? cuda::std::span<const T>(b.const_view().data, std::size_t(hidden)) : cuda::std::span<const T>{};
  const sn::args<T> a{xv.data, y.view().data, gs.data(), bs.data(), rows, hidden, xv.pitch, y.view().pitch, 1e-5f};
  const sn::row_needs needs = sn::needs_of(a);
  const sn::plan p = sn::planned<Kind, T>(needs);
  if (p.shape != sn::shape::rows || p.group != p.block || !needs.whole) {
    std::printf("%s %s %lld: plan %s not a block per row, skipped\n", op, dtype, (long long)hidden, sn::describe(p).c_str());
    return;
  }
  auto lib = [&] { sn::run_with<Kind>(p, x.const_view(), yref.view(), gs, bs, 1e-5f); };
  unsigned* slots;
  CHECK(cudaMalloc(&slots, 4096 * sizeof(unsigned)));
  sn::with_vpt(p.vpt, [&]<int V>() {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stagger_kernel<Kind, T, V>, p.block, 0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const double waves = double(rows) / (double(per_sm) * sms);
    auto reset = [&](long long d) {
      if (d > 0) CHECK(cudaMemsetAsync(slots, 0, 4096 * sizeof(unsigned)));
    };
    auto mine = [&](long long d) {  // reset(d) first, outside the timed region
      stagger_kernel<Kind, T, V><<<unsigned(rows), p.block>>>(a, p.group, slots, per_sm, d);
    };
    const double bytes = 2.0 * double(rows) * double(hidden) * sizeof(T);
    for (long long d : {0ll, 500ll, 1000ll, 2000ll, 3000ll, 4000ll, 5000ll, 7000ll}) {
      // warm up, check
      lib();
      reset(d);
      mine(d);
      CHECK(cudaDeviceSynchronize());
      std::vector<T> h1(std::size_t(rows * y.view().pitch)), h2(h1.size());
      CHECK(cudaMemcpy(h1.data(), y.view().data, h1.size() * sizeof(T), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h2.data(), yref.view().data, h2.size() * sizeof(T), cudaMemcpyDeviceToHost));
      const bool same = std::memcmp(h1.data(), h2.data(), h1.size() * sizeof(T)) == 0;
      CHECK(cudaMemset(y.view().data, 0xff, h1.size() * sizeof(T)));
      std::vector<float> tl, tm;
      for (int i = 0; i < 15; ++i) {
        tl.push_back(clk.time(lib));
        reset(d);
        tm.push_back(clk.time([&] { mine(d); }));
      }
      const float ml = median(tl), mm = median(tm);
      std::printf("| %s | %s | %lldx%lld | %s | %d | %.2f | %lld | %.4f | %.3f | %.4f | %.3f | %.3f | %s |\n", op, dtype, (long long)rows,
                  (long long)hidden, sn::describe(p).c_str(), per_sm, waves, d, ml, bytes / (ml * 1e-3) / 1e9 / copy_gbps, mm,
                  bytes / (mm * 1e-3) / 1e9 / copy_gbps, ml / mm, same ? "same" : "DIFFERENT");
      std::fflush(stdout);
    }
  });
  CHECK(cudaFree(slots));
}

int main(int argc, char** argv) {
  std::vector<index_t> hs = {4096, 8192, 12288, 16384};
  if (argc > 1) {
    hs.clear();
    std::string s = argv[1];
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t e = s.find(',', pos);
      hs.push_back(std::stoll(s.substr(pos, e - pos)));
      pos = e == std::string::npos ? s.size() : e + 1;
    }
  }
  clock_t_ clk;
  const std::size_t n = std::size_t(1) << 30;
  void *src, *dst;
  CHECK(cudaMalloc(&src, n));
  CHECK(cudaMalloc(&dst, n));
  CHECK(cudaMemset(src, 1, n));
  std::vector<float> t;
  for (int i = 0; i < 15; ++i) t.push_back(clk.time([&] { CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice)); }));
  const double copy_gbps = 2.0 * double(n) / (median(t) * 1e-3) / 1e9;
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, cudaMemcpy D2D %.1f GB/s\n", prop.name, copy_gbps);
  std::printf("| op | dtype | rows x hidden | plan | blocks/SM | waves | delay ns | library ms | x memcpy | staggered ms | x memcpy | library / staggered | output |\n"
              "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (index_t h : hs) {
    probe<strata::norm_kind::layer, float>("layer_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::layer, strata::bfloat16>("layer_norm", "bf16", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, float>("rms_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, strata::bfloat16>("rms_norm", "bf16", h, copy_gbps, clk);
  }
  return 0;
}
