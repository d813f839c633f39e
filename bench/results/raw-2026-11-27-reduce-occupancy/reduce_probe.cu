// Probe: strata's reduction kernel over packets and columns, the committed configuration (every
// packet folded through the maybe path, four units a thread, grid = SMs x 2048 / 512) against the
// full-packet fold with 1, 2 or 4 units a thread on the occupancy API's grid, and the library's
// entry point as built. Each variant's result is checked against a host fold of the same records.
// Build (repo root): nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda
//   -Iinclude -I. -isystem /usr/local/cuda/include bench/results/raw-2026-11-27-reduce-occupancy/reduce_probe.cu -o reduce_probe
#include <strata/algorithm/reduce.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/iterator/projection.hpp>

#include "fixtures/functors.hpp"
#include "fixtures/random.hpp"
#include "fixtures/records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace sd = strata::detail;
using namespace strata_fixtures;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); std::exit(1); } } while (0)

/// The committed packet fold: every lane through maybe_op, valid or not tested per lane.
template <class S>
struct maybe_path {
  S s;
  static constexpr std::size_t unit_bytes = S::unit_bytes;
  STRATA_HD strata::index_t units() const { return s.units(); }
  STRATA_HD strata::index_t scalars() const { return s.scalars(); }
  template <class A, class Op>
  STRATA_HD sd::maybe<A> scalar(strata::index_t k, Op op) const { return s.template scalar<A>(k, op); }
  template <class A, class Op>
  STRATA_HD sd::maybe<A> unit(strata::index_t p, Op op) const {
    const auto pk = s.packets[p].get();
    sd::maybe<A> acc{A{}, false};
    for (int k = 0; k < decltype(pk)::width; ++k)
      if (k < pk.valid) acc = sd::maybe_op<Op>{op}(acc, sd::maybe<A>{A(s.map(pk.lane[k])), true});
    return acc;
  }
};

struct particle_sum {
  STRATA_HD double operator()(const particle& p) const { return double(p.x) + p.y + p.z + p.vx + p.vy + p.vz + p.mass; }
};
struct two_sum {
  STRATA_HD float operator()(const two_floats& t) const { return t.a * t.b; }
};
struct mixed_sum {
  STRATA_HD double operator()(const mixed& m) const { return m.energy + m.x + double(m.cell) + double(m.flags); }
};
struct bytes_sum {
  STRATA_HD long long operator()(const three_bytes& t) const { return (long long)t.r + t.g + t.b; }
};
struct plus_ll {
  STRATA_HD long long operator()(long long a, long long b) const { return a + b; }
};

int sms = 0;
double memcpy_gbps = 0;
void* l2_flush = nullptr;  // written before every timed launch, as bench/common.hpp's flush_l2 does
std::size_t l2_flush_bytes = 0;
void flush_l2(int r) { CK(cudaMemsetAsync(l2_flush, r & 0xff, l2_flush_bytes)); }

/// The committed statistics map: every element merged on its own (no unit()).
struct stats_per_element {
  template <class F>
  STRATA_HD strata::column_stats operator()(const F& x) const { return sd::stats_of{}(x); }
};

template <class A>
struct target {
  A* out;
  sd::maybe<A>* partials;
};

/// Median ms of reps launches of the blocks kernel (Unroll U) on `grid` blocks plus the final fold.
template <int U, class Source, class A, class Op>
float time_it(const Source& src, A init, Op op, int grid, target<A> t, A& result, int reps = 30) {
  auto once = [&] {
    sd::reduce_kernel<Source, A, Op, false, U><<<grid, sd::reduce_threads>>>(src, op, init, t.partials, nullptr);
    sd::reduce_kernel<sd::partial_source<A>, A, Op, true><<<1, sd::reduce_threads>>>(sd::partial_source<A>{t.partials, grid}, op, init, nullptr, t.out);
  };
  once();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    flush_l2(r);
    CK(cudaEventRecord(a));
    once();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  CK(cudaMemcpy(&result, t.out, sizeof(A), cudaMemcpyDeviceToHost));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <class Kernel>
int occ(Kernel k) {
  int b = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, sd::reduce_threads, 0));
  return b;
}
template <class Source, class A, class Op, int U>
int regs() {
  cudaFuncAttributes f{};
  CK(cudaFuncGetAttributes(&f, sd::reduce_kernel<Source, A, Op, false, U>));
  return f.numRegs;
}

bool close(const strata::column_stats& got, double want) { return std::fabs(got.mean - want) <= 1e-7; }
template <class A>
bool close(A got, double want) {
  if constexpr (std::is_integral_v<A>) return double(got) == want;
  else return std::fabs(double(got) - want) <= 1e-4 * std::max(1.0, std::fabs(want));  // fold orders differ (float: 1e-4)
}

/// Every variant of one source; `bytes` read per call; `want` the host fold.
template <class Source, class A, class Op, class Entry>
void run(const char* name, const Source& src, A init, Op op, double bytes, double want, Entry entry) {
  target<A> t;
  CK(cudaMalloc(&t.out, sizeof(A)));
  CK(cudaMalloc(&t.partials, sizeof(sd::maybe<A>) * 16 * 1024));
  const maybe_path<Source> slow{src};
  const int work = int(std::min<strata::index_t>((std::max(src.units(), src.scalars()) + 511) / 512, 1 << 30));
  auto grid_of = [&](int per_sm) { return std::max(1, std::min(work, sms * per_sm)); };
  struct row { std::string v; int regs, per_sm, grid; float ms; bool ok; };
  std::vector<row> rows;
  A res{};
  auto add = [&](std::string v, int r, int per_sm, int grid, float ms) { rows.push_back({v, r, per_sm, grid, ms, close(res, want)}); };
  constexpr bool packets = requires { src.packets; };
  if constexpr (packets) {
    { const float m = time_it<4>(slow, init, op, grid_of(4), t, res); add("committed: maybe fold, U=4, grid 4/SM", regs<maybe_path<Source>, A, Op, 4>(), occ(sd::reduce_kernel<maybe_path<Source>, A, Op, false, 4>), grid_of(4), m); }
    { const int o = occ(sd::reduce_kernel<maybe_path<Source>, A, Op, false, 4>); const float m = time_it<4>(slow, init, op, grid_of(o), t, res); add("maybe fold, U=4, occupancy grid", regs<maybe_path<Source>, A, Op, 4>(), o, grid_of(o), m); }
  } else {
    { const float m = time_it<4>(src, init, op, grid_of(4), t, res); add("committed: U=4, grid 4/SM", regs<Source, A, Op, 4>(), occ(sd::reduce_kernel<Source, A, Op, false, 4>), grid_of(4), m); }
  }
  { const int o = occ(sd::reduce_kernel<Source, A, Op, false, 1>); const float m = time_it<1>(src, init, op, grid_of(o), t, res); add("U=1, occupancy grid", regs<Source, A, Op, 1>(), o, grid_of(o), m); }
  { const int o = occ(sd::reduce_kernel<Source, A, Op, false, 2>); const float m = time_it<2>(src, init, op, grid_of(o), t, res); add("U=2, occupancy grid", regs<Source, A, Op, 2>(), o, grid_of(o), m); }
  { const int o = occ(sd::reduce_kernel<Source, A, Op, false, 4>); const float m = time_it<4>(src, init, op, grid_of(o), t, res); add("U=4, occupancy grid", regs<Source, A, Op, 4>(), o, grid_of(o), m); }
  { const int o = occ(sd::reduce_kernel<Source, A, Op, false, 8>); const float m = time_it<8>(src, init, op, grid_of(o), t, res); add("U=8, occupancy grid", regs<Source, A, Op, 8>(), o, grid_of(o), m); }
  // The library's entry point as built (its rule: U = " + reduce_unroll + ", occupancy grid).
  {
    entry(t.out);  // warm
    CK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < 30; ++r) {
      flush_l2(r);
      CK(cudaEventRecord(a));
      entry(t.out);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float m = 0;
      CK(cudaEventElapsedTime(&m, a, b));
      ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaMemcpy(&res, t.out, sizeof(A), cudaMemcpyDeviceToHost));
    add("library entry (U=" + std::to_string(sd::reduce_unroll<Source>) + ")", regs<Source, A, Op, sd::reduce_unroll<Source>>(),
        occ(sd::reduce_kernel<Source, A, Op, false, sd::reduce_unroll<Source>>), 0, ms[ms.size() / 2]);
  }
  for (const row& r : rows)
    std::printf("| %s | %zu | %s | %d | %d | %d | %.4f | %.1f | %.3f | %s |\n", name, Source::unit_bytes, r.v.c_str(), r.regs, r.per_sm, r.grid, r.ms,
                bytes / r.ms / 1e6, bytes / r.ms / 1e6 / memcpy_gbps, r.ok ? "ok" : "WRONG");
  CK(cudaFree(t.out));
  CK(cudaFree(t.partials));
}

template <class T>
std::vector<T> make(std::size_t n, std::uint64_t salt) { return seeded_records<T>(n, 0x5eedu, salt); }

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const std::size_t cb = std::size_t(1) << 30;
  void *x, *y;
  CK(cudaMalloc(&x, cb));
  CK(cudaMalloc(&y, cb));
  CK(cudaMemset(x, 1, cb));
  std::vector<float> mc;
  l2_flush_bytes = std::size_t(prop.l2CacheSize) * 4;
  CK(cudaMalloc(&l2_flush, l2_flush_bytes));
  for (int r = 0; r < 21; ++r) {
    cudaEvent_t a, b;
    flush_l2(r);
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a));
    CK(cudaMemcpy(y, x, cb, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    if (r) mc.push_back(m);
  }
  std::sort(mc.begin(), mc.end());
  memcpy_gbps = 2.0 * double(cb) / mc[mc.size() / 2] / 1e6;  // bytes read and written, as bench/memcpy.cpp counts
  CK(cudaFree(x));
  CK(cudaFree(y));
  std::printf("%s, %d SMs; cudaMemcpy D2D %.1f GB/s (1 GiB, read + written); median of 30 launches (blocks + partials kernels), L2 overwritten before each; x memcpy: GB/s read / cudaMemcpy's GB/s, as strata_bench reports\n\n", prop.name, sms, memcpy_gbps);

  const std::size_t np = std::size_t(1) << 26;
  strata::soa_vector<particle> ps(make<particle>(np, 1));
  const auto hp = ps.to_host();
  strata::soa_vector<two_floats> tf(make<two_floats>(np * 2, 2));
  const auto ht = tf.to_host();
  strata::soa_vector<mixed> mx(make<mixed>(np, 3));
  const auto hm = mx.to_host();
  strata::soa_vector<three_bytes> tb(make<three_bytes>(np * 4, 4));
  const auto hb = tb.to_host();
  std::vector<float> hc(std::size_t(1) << 28);
  {
    std::mt19937_64 g(5);
    for (auto& v : hc) v = std::uniform_real_distribution<float>(-1, 1)(g);
  }
  strata::buffer dc(hc.size() * 4, strata::memory_space::device);
  strata::copy_bytes(dc.data(), hc.data(), dc.bytes());
  const float* col = reinterpret_cast<const float*>(dc.data());

  double w_ke = 0, w_ps = 0, w_tf = 0, w_mx = 0, w_c = 0, w_st = 0;
  long long w_tb = 0;
  for (const auto& p : hp) w_ke += kinetic_energy{}(p), w_ps += particle_sum{}(p);
  for (const auto& t : ht) w_tf += two_sum{}(t);
  for (const auto& m : hm) w_mx += mixed_sum{}(m);
  for (const auto& t : hb) w_tb += bytes_sum{}(t);
  for (float v : hc) w_c += v;
  w_st = w_c / double(hc.size());

  for (int round = 0; round < rounds; ++round) {
    std::printf("round %d\n\n| source | unit bytes | variant | registers | blocks/SM | grid | ms | GB/s read | x memcpy | result |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---|\n", round + 1);
    {
      auto proj = strata::project<&particle::vx, &particle::vy, &particle::vz, &particle::mass>(ps);
      auto v = sd::as_const_view(proj);
      const auto src = sd::packet_source_of(v, sd::packet_body<particle>(v.size(), v), kinetic_energy{});
      run("kinetic energy (4 of 7 fp32 columns)", src, 0.0, plus_d{}, double(np) * 16, w_ke,
          [&](double* out) { strata::transform_reduce_async(proj, kinetic_energy{}, 0.0, plus_d{}, out); });
    }
    {
      auto v = sd::as_const_view(ps);
      const auto src = sd::packet_source_of(v, sd::packet_body<particle>(v.size(), v), particle_sum{});
      run("particle, 7 fp32 columns", src, 0.0, plus_d{}, double(np) * 28, w_ps,
          [&](double* out) { strata::transform_reduce_async(ps, particle_sum{}, 0.0, plus_d{}, out); });
    }
    {
      auto v = sd::as_const_view(tf);
      const auto src = sd::packet_source_of(v, sd::packet_body<two_floats>(v.size(), v), two_sum{});
      run("two_floats (fp32 result)", src, 0.0f, plus_f{}, double(np) * 2 * 8, w_tf,
          [&](float* out) { strata::transform_reduce_async(tf, two_sum{}, 0.0f, plus_f{}, out); });
    }
    {
      auto v = sd::as_const_view(mx);
      const auto src = sd::packet_source_of(v, sd::packet_body<mixed>(v.size(), v), mixed_sum{});
      run("mixed (double, float, u16, u8)", src, 0.0, plus_d{}, double(np) * 15, w_mx,
          [&](double* out) { strata::transform_reduce_async(mx, mixed_sum{}, 0.0, plus_d{}, out); });
    }
    {
      auto v = sd::as_const_view(tb);
      const auto src = sd::packet_source_of(v, sd::packet_body<three_bytes>(v.size(), v), bytes_sum{});
      run("three_bytes (int64 result)", src, 0LL, plus_ll{}, double(np) * 4 * 3, double(w_tb),
          [&](long long* out) { strata::transform_reduce_async(tb, bytes_sum{}, 0LL, plus_ll{}, out); });
    }
    {
      const sd::column_source<float, sd::identity_map> src{col, strata::index_t(hc.size()), {}};
      run("column of 2^28 fp32 (sum)", src, 0.0f, plus_f{}, double(hc.size()) * 4, w_c,
          [&](float* out) { strata::reduce_async(cuda::std::span<const float>(col, hc.size()), 0.0f, plus_f{}, out); });
    }
    {
      const sd::column_source<float, stats_per_element> src{col, strata::index_t(hc.size()), {}};
      run("column of 2^28 fp32 (statistics, committed per-element merge)", src, strata::column_stats{}, sd::merge_stats{}, double(hc.size()) * 4, w_st,
          [&](strata::column_stats* out) {
            sd::reduce_async<strata::column_stats>(src, strata::column_stats{}, sd::merge_stats{}, out, cudaStream_t{});
          });
    }
    {
      const sd::column_source<float, sd::stats_of> src{col, strata::index_t(hc.size()), {}};
      run("column of 2^28 fp32 (statistics)", src, strata::column_stats{}, sd::merge_stats{}, double(hc.size()) * 4, w_st,
          [&](strata::column_stats* out) {
            sd::reduce_async<strata::column_stats>(src, strata::column_stats{}, sd::merge_stats{}, out, cudaStream_t{});
          });
    }
    std::printf("\n");
  }
  return 0;
}
