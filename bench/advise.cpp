// SPDX-License-Identifier: Apache-2.0
// Layout advice against measurement: six bandwidth-bound workloads, each run over every layout
// the advisor knows (SoA, AoSoA 8 / 16 / 32 / 64, padded AoS, packed AoS), with the advisor's pick
// from the functor's probed access pattern (strata::access_of, strata::advise; in random order for
// the gather, a neighbour loop's reads of other records) recorded beside the times. Counters: `advised` is 1 on the layout the advisor chose, `predicted_bytes` its estimate
// a record for that layout; GB/s count the fewest bytes any layout moves (the best estimate), so
// the fastest layout has the highest figure.
#include "common.hpp"

#include <strata/access/advise.hpp>
#include <strata/access/probe.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/aos_view.hpp>

#include "../fixtures/functors.hpp"
#include "../fixtures/records.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using strata::layout_kind;
using strata_fixtures::particle;

struct event20 {
  BOOST_HANA_DEFINE_STRUCT(event20, (std::int32_t, run), (std::int32_t, luminosity_block), (std::int64_t, event),
                           (float, higgs_pt), (float, higgs_y), (std::int32_t, cat25), (std::int32_t, cat30),
                           (std::int32_t, fine25), (std::int32_t, fine30), (std::int32_t, stage0), (std::int32_t, stage1_25),
                           (std::int32_t, stage1_30), (std::uint8_t, njets25), (std::uint8_t, njets30), (float, csvv2),
                           (float, deep_csvb), (float, calo_phi), (float, calo_pt), (float, calo_sum_et), (float, chs_phi));
};
struct sample2007 {
  BOOST_HANA_DEFINE_STRUCT(sample2007, (float, f), (std::int32_t, i), (std::int16_t, s), (std::int8_t, c));
};

/// 2 of the event's 20 leaves: calo_pt from calo_phi.
struct calo_step {
  STRATA_HD void operator()(event20& e) const { e.calo_pt = e.calo_phi * 0.5f + 1.0f; }
};
/// The 2007 sample's record: f from its narrow leaves, every leaf read, one written.
struct sample_step {
  STRATA_HD void operator()(sample2007& r) const { r.f += float(r.s) * 0.25f + float(r.c); }
};
/// Every leaf of the particle read (a sum of all seven).
struct all_leaves {
  STRATA_HD double operator()(const particle& p) const { return double(p.x) + p.y + p.z + p.vx + p.vy + p.vz + p.mass; }
};

/// A neighbour loop's reads: x + y + z of records at random indices.
struct position_sum {
  STRATA_HD float operator()(const particle& p) const { return p.x + p.y + p.z; }
};
template <class V>
struct gather_positions {
  V v;
  const std::uint32_t* idx;
  float* out;
  STRATA_HD void operator()(strata::index_t i) const {
    const auto r = v[strata::index_t(idx[i])];
    out[i] = strata::get<&particle::x>(r) + strata::get<&particle::y>(r) + strata::get<&particle::z>(r);
  }
};

constexpr layout_kind kinds[] = {layout_kind::soa, layout_kind::aosoa8, layout_kind::aosoa16, layout_kind::aosoa32,
                                 layout_kind::aosoa64, layout_kind::aos, layout_kind::packed_aos};

template <class T, layout_kind K>
auto& filled() {
  static strata::layout_container_t<T, K> c(strata_bench::records<T>(std::size_t(strata_bench::scaled(std::int64_t(1) << 25))));
  return c;
}

enum class how { update, map, gather };

/// A random permutation of [0, n) in device memory, the same on every run.
inline const std::uint32_t* permutation(std::size_t n) {
  static strata::buffer b = [&] {
    std::vector<std::uint32_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = std::uint32_t(i);
    std::uint64_t s = 0x9e3779b97f4a7c15ull;
    for (std::size_t i = n; i > 1; --i) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      std::swap(p[i - 1], p[s % i]);
    }
    strata::buffer d(n * sizeof(std::uint32_t), strata::memory_space::device);
    strata::copy_bytes(d.data(), p.data(), d.bytes());
    return d;
  }();
  return reinterpret_cast<const std::uint32_t*>(b.data());
}

/// In-place updates go through strata::for_each, maps through transform_reduce into a double,
/// gathers through a kernel reading the records at a random permutation's indices.
template <class T, layout_kind K, class F, how How>
void run(benchmark::State& state, F f, double bytes, double predicted, bool advised) {
  auto& c = filled<T, K>();
  const double n = double(c.size());
  static strata::buffer result(sizeof(double), strata::memory_space::device);
  static strata::buffer out(How == how::gather ? c.size() * sizeof(float) : 0, strata::memory_space::device);
  strata_bench::run_timed(state, bytes * n, n, [&] {
    if constexpr (How == how::gather) {
      const auto v = c.const_view();
      strata::detail::run_each(gather_positions<decltype(v)>{v, permutation(c.size()), reinterpret_cast<float*>(out.data())},
                               strata::index_t(c.size()), strata::stream_t{}, "gather positions");
    } else if constexpr (How == how::map) {
#if defined(STRATA_BACKEND_CUDA)
      strata::transform_reduce_async(c.const_view(), f, 0.0, strata_fixtures::plus_d{}, reinterpret_cast<double*>(result.data()));
#else
      benchmark::DoNotOptimize(strata::transform_reduce(c.const_view(), f, 0.0, strata_fixtures::plus_d{}));
#endif
    } else {
      strata::for_each(c, f);
    }
  });
  state.counters["advised"] = advised ? 1 : 0;
  state.counters["predicted_bytes"] = predicted;
}

template <class T, how How, class F>
void register_workload(const char* name, F f) {
  const auto records = strata_bench::scaled(std::int64_t(1) << 25);
  const auto advice = strata::advise(strata::access_of<T>(f).counts(std::uint64_t(records)),
                                     {.order = How == how::gather ? strata::access_order::random : strata::access_order::streaming});
  const double fewest = advice.best().bytes();
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          constexpr layout_kind K = kinds[I];
          const auto& e = advice.of(K);
          const bool advised = advice.best().layout == K;
          std::string id = std::string("advise/") + name + "/" + std::to_string(records) + "/" + strata::layout_name(K);
          strata_bench::configure(benchmark::RegisterBenchmark(id.c_str(), [=](benchmark::State& s) {
            run<T, K, F, How>(s, f, fewest, e.bytes(), advised);
          }));
        }(),
        ...);
  }(std::make_index_sequence<std::size(kinds)>{});
}

const bool registered = [] {
  register_workload<particle, how::update>("drift", strata_fixtures::drift{});
  register_workload<particle, how::map>("kinetic", strata_fixtures::kinetic_energy{});
  register_workload<particle, how::gather>("gather-positions", position_sum{});
#if defined(STRATA_BACKEND_CUDA)
  // The host backend (CI's build) compiles and runs three workloads: its figures back nothing.
  register_workload<event20, how::update>("event-2-of-20", calo_step{});
  register_workload<sample2007, how::update>("sample2007", sample_step{});
  register_workload<particle, how::map>("all-leaves", all_leaves{});
#endif
  return true;
}();

}  // namespace
