// Probe: does the rows kernel gain when each group first asks L2 for the row it will hold `dist`
// rows later (cp.async.bulk.prefetch.L2, one instruction per row), so that DRAM keeps reading
// while an SM's blocks reduce and write? The rows kernel (both paths), copied, with that one
// change; dist = 0 is the library's code. `hint` 1 prefetches with an evict-last policy. The
// distance is given in bytes of rows ahead (run 2; run 1 gave it as a share of the rows resident).
// Each configuration is timed against strata's own launch of the same plan in the same loop (CUDA
// events, a 256 MiB memset before each run, median of 15), and its output compared bit for bit.
//   prefetch_probe [hidden,...]
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

__device__ inline void prefetch_l2(const void* p, unsigned bytes, int hint) {
  if (hint) {
    std::uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(p), "r"(bytes), "l"(pol) : "memory");
  } else {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
  }
}

template <strata::norm_kind Kind, class T, int V, bool Whole>
__global__ void __launch_bounds__(sn::max_group, 2) prefetch_kernel(sn::args<T> a, int G, index_t dist, int hint) {
  __shared__ sn::sum_slots slots;
  const int shift = G <= 32 ? __ffs(G) - 1 : 0, t = G <= 32 ? int(threadIdx.x) & (G - 1) : int(threadIdx.x);
  const index_t r = G <= 32 ? index_t(blockIdx.x) * (int(blockDim.x) >> shift) + (int(threadIdx.x) >> shift) : index_t(blockIdx.x);
  const bool live = r < a.rows;
  if (dist > 0 && t == 0 && r + dist < a.rows) {
    const T* next = a.x + (r + dist) * a.x_pitch;
    if constexpr (Whole) {
      prefetch_l2(next, unsigned(a.cols * index_t(sizeof(T))), hint);
    } else {
      const sn::row_span s = sn::span_of(next, a.cols);
      if (s.full_end > s.full_begin)
        prefetch_l2(sn::unit_base(next, s.head) + s.full_begin * sn::lanes<T>, unsigned((s.full_end - s.full_begin) * 16), hint);
    }
  }
  const T* xrow = a.x + (live ? r : 0) * a.x_pitch;
  sn::row_part<T, V> part;
  if constexpr (Whole) {
    part.load_whole(xrow, 0, a.cols / sn::lanes<T>, t, G, live);
    const sn::moments m = sn::part_moments<Kind>(part, float(a.cols), G, slots);
    if (!live) return;
    float mean, rstd;
    sn::finish<Kind>(m, a.cols, a.eps, mean, rstd);
    part.template write<true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, sn::row_span{a.cols, 0, 0, 0, 0}, mean, rstd);
  } else {
    const sn::row_span s = sn::span_of(xrow, a.cols);
    part.load(xrow, s, 0, s.units, t, G, live);
    const sn::moments m = sn::part_moments<Kind>(part, float(a.cols), G, slots);
    if (!live) return;
    float mean, rstd;
    sn::finish<Kind>(m, a.cols, a.eps, mean, rstd);
    sn::write_part(part, a, xrow, a.y + r * a.y_pitch, s, mean, rstd);
  }
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
  if (p.shape != sn::shape::rows) {
    std::printf("%s %s %lld: plan %s not rows, skipped\n", op, dtype, (long long)hidden, sn::describe(p).c_str());
    return;
  }
  auto lib = [&] { sn::run_with<Kind>(p, x.const_view(), yref.view(), gs, bs, 1e-5f); };
  const index_t per_block = p.block / p.group, blocks = (rows + per_block - 1) / per_block;
  sn::with_vpt(p.vpt, [&]<int V>() {
    auto go = [&]<bool W>() {
      int per_sm = 0, sms = 0;
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, prefetch_kernel<Kind, T, V, W>, p.block, 0));
      CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      const index_t resident = index_t(per_sm) * sms * per_block;  // rows held at once
      const double waves = double(blocks) / (double(per_sm) * sms);
      auto mine = [&](index_t d, int hint) { prefetch_kernel<Kind, T, V, W><<<unsigned(blocks), p.block>>>(a, p.group, d, hint); };
      const double bytes = 2.0 * double(rows) * double(hidden) * sizeof(T);
      for (int hint : {0})
        for (double mb : {0.0, 1.0, 2.0, 3.0, 4.0}) {
          const index_t d = index_t(mb * 1e6 / double(hidden * index_t(sizeof(T))));
          const double f = double(d) / double(resident);
          lib();
          mine(d, hint);
          CHECK(cudaDeviceSynchronize());
          std::vector<T> h1(std::size_t(rows * y.view().pitch)), h2(h1.size());
          CHECK(cudaMemcpy(h1.data(), y.view().data, h1.size() * sizeof(T), cudaMemcpyDeviceToHost));
          CHECK(cudaMemcpy(h2.data(), yref.view().data, h2.size() * sizeof(T), cudaMemcpyDeviceToHost));
          bool same = true;  // each row's elements, not the padding past them
          for (index_t r = 0; r < rows && same; ++r)
            same = std::memcmp(&h1[std::size_t(r * y.view().pitch)], &h2[std::size_t(r * yref.view().pitch)], std::size_t(hidden) * sizeof(T)) == 0;
          CHECK(cudaMemset(y.view().data, 0xff, h1.size() * sizeof(T)));
          std::vector<float> tl, tm;
          for (int i = 0; i < 15; ++i) {
            tl.push_back(clk.time(lib));
            tm.push_back(clk.time([&] { mine(d, hint); }));
          }
          const float ml = median(tl), mm = median(tm);
          std::printf("| %s | %s | %lldx%lld | %s | %s | %d | %.2f | %.2f | %.1f | %lld | %d | %.4f | %.3f | %.4f | %.3f | %.3f | %s |\n", op, dtype,
                      (long long)rows, (long long)hidden, sn::describe(p).c_str(), W ? "whole" : "ragged", per_sm, waves, f, mb, (long long)d, hint,
                      ml, bytes / (ml * 1e-3) / 1e9 / copy_gbps, mm, bytes / (mm * 1e-3) / 1e9 / copy_gbps, ml / mm, same ? "same" : "DIFFERENT");
          std::fflush(stdout);
        }
    };
    if (needs.whole) go.template operator()<true>();
    else go.template operator()<false>();
  });
}

int main(int argc, char** argv) {
  std::vector<index_t> hs = {256, 512, 768, 1000, 1023, 1025, 1280, 1536, 1792, 2048, 2304, 3000, 4095, 4096, 4097, 5120, 6144, 7168, 8192, 10240, 12288, 14592, 16384};
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
  std::printf("| op | dtype | rows x hidden | plan | path | blocks/SM | waves | distance (resident rows) | MB ahead | distance rows | evict-last | library ms | x memcpy | prefetch ms | x memcpy | library / prefetch | output |\n"
              "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (index_t h : hs) {
    probe<strata::norm_kind::layer, float>("layer_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::layer, strata::bfloat16>("layer_norm", "bf16", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, float>("rms_norm", "fp32", h, copy_gbps, clk);
    probe<strata::norm_kind::rms, strata::bfloat16>("rms_norm", "bf16", h, copy_gbps, clk);
  }
  return 0;
}
