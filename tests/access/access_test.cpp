// SPDX-License-Identifier: Apache-2.0
// Access counting and layout advice: a counting view counts exactly what a kernel reads and writes
// through it (leaf by leaf, and byte granules for the heatmap) on SoA, AoSoA and packed AoS; a
// functor's probed pattern names the leaves it reads and changes; the advisor's byte estimates
// follow from the mappings, and it picks the layout that moves the fewest bytes.
#include <strata/access/advise.hpp>
#include <strata/access/counting_view.hpp>
#include <strata/access/probe.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/convert/convert.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/temp_path.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <string>

using namespace strata_test;
using strata::layout_kind;

namespace {

/// A user kernel: x += vx for every record, and the mass read of every other record.
template <class CV>
struct step_body {
  CV v;
  STRATA_HD void operator()(strata::index_t i) const {
    const float x = v[i].template get<&particle::x>();
    const float vx = v[i].template get<&particle::vx>();
    v[i].template set<&particle::x>(x + vx);
    if (i % 2 == 0) (void)v.template read<6>(i);
  }
};
template <class CV>
struct copy_record_body {
  CV v;
  STRATA_HD void operator()(strata::index_t i) const {
    particle r = v[i];
    r.y += 1.0f;
    v[i] = r;
  }
};
template <class CV>
struct read_x_body {
  CV v;
  STRATA_HD void operator()(strata::index_t i) const { (void)v.template read<0>(i); }
};

template <class C>
void expect_exact_counts() {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), std::size_t(1000), std::size_t(100003)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto ref = random_records<particle>(n);
    C c(ref);
    auto counter = strata::count_accesses(c);
    using CV = decltype(counter.view());
    strata::detail::run_each(step_body<CV>{counter.view()}, strata::index_t(n), strata::stream_t{}, "step");
    auto k = counter.counts();
    EXPECT_EQ(k.records, n);
    EXPECT_EQ(k.reads[0], n);
    EXPECT_EQ(k.reads[3], n);
    EXPECT_EQ(k.reads[6], (n + 1) / 2);
    EXPECT_EQ(k.writes[0], n);
    for (std::size_t l : {1, 2, 4, 5}) EXPECT_EQ(k.reads[l] + k.writes[l], 0u) << "leaf " << l;
    EXPECT_EQ(k.writes[3] + k.writes[6], 0u);
    EXPECT_EQ(k.bytes_read(), 4 * (2 * n + (n + 1) / 2));
    EXPECT_EQ(k.bytes_written(), 4 * n);
    // The kernel's writes went through.
    auto want = ref;
    for (auto& p : want) p.x += p.vx;
    const auto got = c.to_host();
    ASSERT_EQ(first_difference<particle>(got, want), -1) << describe_difference<particle>(got, want);
    // Whole records: every leaf read and written once more; reset clears.
    strata::detail::run_each(copy_record_body<CV>{counter.view()}, strata::index_t(n), strata::stream_t{}, "copy");
    k = counter.counts();
    for (std::size_t l = 0; l < 7; ++l) {
      EXPECT_EQ(k.reads[l], n + (l == 0 || l == 3 ? n : 0) + (l == 6 ? (n + 1) / 2 : 0)) << "leaf " << l;
      EXPECT_EQ(k.writes[l], n + (l == 0 ? n : 0)) << "leaf " << l;
    }
    counter.reset();
    EXPECT_EQ(counter.counts(), strata::access_counts<particle>{.records = n});
  }
}
TEST(CountingView, CountsEveryAccessOnSoa) { expect_exact_counts<strata::soa_vector<particle>>(); }
TEST(CountingView, CountsEveryAccessOnAosoa) { expect_exact_counts<strata::aosoa_vector<particle, 8>>(); }
TEST(CountingView, CountsEveryAccessOnPackedAos) { expect_exact_counts<strata::packed_aos_vector<particle>>(); }

// The heatmap counts each granule of the allocation the accesses touched: reading x of packed AoS
// particles (28-byte records) touches the granules holding each x.
template <class C>
void expect_heatmap(std::size_t n, std::size_t granule) {
  using M = typename C::mapping_type;
  const auto ref = random_records<particle>(n);
  const C c(ref);
  auto counter = strata::count_accesses(c, granule);
  using CV = decltype(counter.view());
  strata::detail::run_each(read_x_body<CV>{counter.view()}, strata::index_t(n), strata::stream_t{}, "read x");
  const auto heat = counter.heatmap();
  ASSERT_EQ(heat.size(), (counter.span_bytes() + granule - 1) / granule);
  // The heatmap starts at the lowest leaf of record 0; for these mappings that is the allocation.
  std::vector<std::uint64_t> want(heat.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t off = M::leaf_offset(c.capacity(), i, 0);
    for (std::size_t g = off / granule; g <= (off + 3) / granule; ++g) ++want[g];
  }
  EXPECT_EQ(heat, want);
  EXPECT_EQ(counter.counts().reads[0], n);
  static_assert(CV::base_view::is_const, "a const container's counting view reads only");
}
template <class CV>
struct assign_from_next {
  CV v;
  STRATA_HD void operator()(strata::index_t i) const {
    if (i % 2 == 0) v[i] = v[i + 1];
  }
};
TEST(CountingView, ProxyAssignmentCopiesAndCounts) {
  const auto ref = random_records<particle>(10);
  strata::soa_vector<particle> c(ref);
  auto counter = strata::count_accesses(c);
  using CV = decltype(counter.view());
  strata::detail::run_each(assign_from_next<CV>{counter.view()}, 10, strata::stream_t{}, "assign");
  const auto k = counter.counts();
  for (std::size_t l = 0; l < 7; ++l) {
    EXPECT_EQ(k.reads[l], 5u);
    EXPECT_EQ(k.writes[l], 5u);
  }
  auto want = ref;
  for (std::size_t i = 0; i < 10; i += 2) want[i] = ref[i + 1];
  const auto got = c.to_host();
  EXPECT_EQ(first_difference<particle>(got, want), -1) << describe_difference<particle>(got, want);
  using std::swap;
  auto v = counter.view();
  swap(v[0], v[1]);
  EXPECT_EQ(c.get(0).x, want[1].x);
  EXPECT_EQ(c.get(1).x, want[0].x);
}
TEST(CountingView, HeatmapWritesItsCounts) {
  const auto ref = random_records<particle>(100);
  const strata::packed_aos_vector<particle> c(ref);
  auto counter = strata::count_accesses(c, 8);
  using CV = decltype(counter.view());
  strata::detail::run_each(read_x_body<CV>{counter.view()}, 100, strata::stream_t{}, "read x");
  const temp_path file("heatmap", ".txt");
  counter.write_heatmap(file.str());
  std::ifstream in(file.str());
  std::string head;
  std::getline(in, head);
  EXPECT_EQ(head, "# strata heatmap granule=8 span=" + std::to_string(counter.span_bytes()) + " record_bytes=28");
  std::vector<std::uint64_t> read_back;
  for (std::uint64_t v; in >> v;) read_back.push_back(v);
  EXPECT_EQ(read_back, counter.heatmap());
  auto plain = strata::count_accesses(c);
  EXPECT_THROW(plain.write_heatmap(file.str()), std::logic_error);
  // An empty container's heatmap is a header alone.
  const strata::packed_aos_vector<particle> none;
  strata::count_accesses(none, 32).write_heatmap(file.str());
  std::ifstream empty(file.str());
  std::getline(empty, head);
  EXPECT_EQ(head, "# strata heatmap granule=32 span=0 record_bytes=28");
  EXPECT_FALSE(std::getline(empty, head));
  EXPECT_THROW(counter.write_heatmap("/nonexistent-dir/heatmap.txt"), std::runtime_error);
}
TEST(CountingView, HeatmapOfTouchedGranules) {
  expect_heatmap<strata::packed_aos_vector<particle>>(1000, 32);
  expect_heatmap<strata::packed_aos_vector<particle>>(1000, 1);
  expect_heatmap<strata::aosoa_vector<particle, 8>>(999, 32);
  expect_heatmap<strata::aosoa_vector<particle, 8>>(0, 32);
}

// ---- probed patterns -----------------------------------------------------------------------------

struct overwrite_mass {
  STRATA_HD void operator()(particle& p) const { p.mass = 1.0f; }
};
struct flagged_energy {
  STRATA_HD mixed operator()(mixed m) const {
    if (m.flags & 1) m.energy += double(m.x);
    return m;
  }
};
struct generic_scale {  // deduced return type: probing instantiates it with the record only
  template <class P>
  STRATA_HD auto operator()(P& p) const {
    p.x *= 2;
  }
};
enum class phase : std::uint8_t { idle, active };
struct agent {
  BOOST_HANA_DEFINE_STRUCT(agent, (float, x), (phase, state));
};
struct move_active {
  STRATA_HD void operator()(agent& a) const {
    if (a.state == phase::active) a.x += 1;
  }
};
struct no_change {
  STRATA_HD particle operator()(const particle& p) const { return p; }
};

template <class T>
std::array<bool, strata::reflect::leaf_count<T>> leaves_of(std::initializer_list<std::size_t> ls) {
  std::array<bool, strata::reflect::leaf_count<T>> a{};
  for (auto l : ls) a[l] = true;
  return a;
}

TEST(AccessOf, NamesTheLeavesAFunctorReadsAndChanges) {
  const auto d = strata::access_of<particle>(drift{});
  EXPECT_EQ(d.read, leaves_of<particle>({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(d.written, leaves_of<particle>({0, 1, 2}));
  const auto k = strata::access_of<particle>(kick{});  // void f(record&)
  EXPECT_EQ(k.read, leaves_of<particle>({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(k.written, leaves_of<particle>({3, 4, 5}));
  const auto m = strata::access_of<particle>(overwrite_mass{});
  EXPECT_EQ(m.read, leaves_of<particle>({}));
  EXPECT_EQ(m.written, leaves_of<particle>({6}));
  const auto f = strata::access_of<mixed>(flagged_energy{});  // energy, x, cell, flags
  EXPECT_EQ(f.read, leaves_of<mixed>({0, 1, 3}));
  EXPECT_EQ(f.written, leaves_of<mixed>({0}));
  const auto none = strata::access_of<particle>(no_change{});
  EXPECT_EQ(none.read, leaves_of<particle>({}));
  EXPECT_EQ(none.written, leaves_of<particle>({}));
  const auto gs = strata::access_of<particle>(generic_scale{});
  EXPECT_EQ(gs.read, leaves_of<particle>({0}));
  EXPECT_EQ(gs.written, leaves_of<particle>({0}));
  const auto ma = strata::access_of<agent>(move_active{});  // an enum read in a branch
  EXPECT_EQ(ma.read, leaves_of<agent>({0, 1}));
  EXPECT_EQ(ma.written, leaves_of<agent>({0}));
  const auto h = strata::access_of<particle>(heavy{});  // a predicate: a map of bool
  EXPECT_EQ(h.read, leaves_of<particle>({6}));
  EXPECT_EQ(h.written, leaves_of<particle>({}));
  // A map (transform_reduce's functor) reads and writes nothing back.
  const auto e = strata::access_of<particle>(kinetic_energy{});
  EXPECT_EQ(e.read, leaves_of<particle>({3, 4, 5, 6}));
  EXPECT_EQ(e.written, leaves_of<particle>({}));
  EXPECT_EQ(e.counts(8).bytes_read(), 8u * 16);
  // One in-place call moves the leaves read or written once and stores the written ones.
  const auto c = m.counts(1000);
  EXPECT_EQ(c.reads[6], 1000u);
  EXPECT_EQ(c.writes[6], 1000u);
  EXPECT_EQ(c.bytes_read(), 4000u);
  const auto dc = d.counts(10);
  EXPECT_EQ(dc.bytes_read(), 10u * 24);
  EXPECT_EQ(dc.bytes_written(), 10u * 12);
}

// ---- advice ----------------------------------------------------------------------------------

TEST(Advise, EstimatesFollowTheMappings) {
  // The drift reads 6 of 7 leaves and writes 3: SoA moves 24 bytes a record in, 12 out; padded AoS
  // moves the whole 32-byte record both ways.
  const auto a = strata::advise(strata::access_of<particle>(drift{}).counts(1 << 20));
  EXPECT_NEAR(a.of(layout_kind::soa).read_bytes, 24.0, 0.05);
  EXPECT_NEAR(a.of(layout_kind::soa).written_bytes, 12.0, 0.05);
  EXPECT_NEAR(a.of(layout_kind::aos).read_bytes, 32.0, 1e-9);
  EXPECT_NEAR(a.of(layout_kind::aos).written_bytes, 32.0, 1e-9);
  EXPECT_NEAR(a.of(layout_kind::aosoa32).read_bytes, 24.0, 1e-9);
  EXPECT_NEAR(a.of(layout_kind::aosoa32).written_bytes, 12.0, 1e-9);
  // Packed AoS: 28-byte records, every sector holds a position (written, so read first).
  EXPECT_NEAR(a.of(layout_kind::packed_aos).read_bytes, 28.0, 1e-9);
  EXPECT_NEAR(a.of(layout_kind::packed_aos).written_bytes, 28.0, 1e-9);
  EXPECT_EQ(a.best().layout, layout_kind::soa);
  EXPECT_TRUE(a.best().vector_access);
  EXPECT_EQ(a.ranked.size(), 7u);
  EXPECT_NE(a.table().find("packed_aos"), std::string::npos);

  // Reading every leaf once: SoA, AoSoA and packed AoS move the 28 bytes, AoS its 32; SoA ranks
  // first of the tied (16-byte paths), packed AoS last of them (record by record).
  strata::access_counts<particle> all{.records = 4096};
  all.reads.fill(4096);
  const auto b = strata::advise(all);
  EXPECT_NEAR(b.of(layout_kind::packed_aos).bytes(), 28.0, 1e-9);
  EXPECT_NEAR(b.of(layout_kind::aos).bytes(), 32.0, 1e-9);
  EXPECT_EQ(b.best().layout, layout_kind::soa);
  EXPECT_EQ(b.ranked[5].layout, layout_kind::packed_aos);  // after SoA and the four AoSoA
  EXPECT_EQ(b.ranked.back().layout, layout_kind::aos);

  // One 8-byte leaf of mixed (16 bytes padded or packed) read: a column moves 8 bytes a record.
  strata::access_counts<mixed> one{.records = 4096};
  one.reads[0] = 4096;
  const auto e = strata::advise(one);
  EXPECT_NEAR(e.of(layout_kind::soa).bytes(), 8.0, 0.01);
  EXPECT_NEAR(e.of(layout_kind::aos).bytes(), 16.0, 1e-9);
  EXPECT_EQ(e.best().layout, layout_kind::soa);
  // Positions read at random indices (a neighbour loop): padded AoS reaches x, y, z in one
  // aligned sector, SoA and AoSoA in three, packed AoS straddles a boundary for 2 records in 8.
  strata::access_counts<particle> pos{.records = 4096};
  pos.reads[0] = pos.reads[1] = pos.reads[2] = 4096;
  const auto r = strata::advise(pos, {.order = strata::access_order::random});
  EXPECT_EQ(r.best().layout, layout_kind::aos);
  EXPECT_NEAR(r.of(layout_kind::aos).read_bytes, 32.0, 1e-9);
  EXPECT_NEAR(r.of(layout_kind::soa).read_bytes, 96.0, 1e-9);
  EXPECT_NEAR(r.of(layout_kind::aosoa32).read_bytes, 96.0, 1e-9);
  EXPECT_NEAR(r.of(layout_kind::packed_aos).read_bytes, 32.0 * 10 / 8, 1e-9);
  // Nothing touched: nothing moves.
  EXPECT_EQ(strata::advise(strata::access_counts<mixed>{.records = 10}).best().bytes(), 0.0);
  EXPECT_THROW(strata::advise(one, {.sector_bytes = 0}), std::invalid_argument);
}

TEST(Advise, WithLayoutNamesTheContainerAndConvertsIntoIt) {
  const bool aosoa16 = strata::with_layout<particle>(layout_kind::aosoa16, [](auto tag) {
    return std::is_same_v<typename decltype(tag)::type, strata::aosoa_vector<particle, 16>>;
  });
  EXPECT_TRUE(aosoa16);
  const auto ref = random_records<particle>(777);
  const strata::soa_vector<particle> src(ref);
  for (layout_kind k : {layout_kind::soa, layout_kind::aosoa8, layout_kind::aosoa16, layout_kind::aosoa32, layout_kind::aosoa64,
                        layout_kind::aos, layout_kind::packed_aos}) {
    SCOPED_TRACE(strata::layout_name(k));
    strata::with_layout<particle>(k, [&](auto tag) {
      typename decltype(tag)::type dst(src.size());
      strata::convert(src, dst);
      const auto got = dst.to_host();
      EXPECT_EQ(first_difference<particle>(got, ref), -1) << describe_difference<particle>(got, ref);
    });
  }
}

}  // namespace
