// SPDX-License-Identifier: Apache-2.0
// Cell lists, Verlet lists and the loops over them against a brute-force O(N^2) reference on the
// host (minimum image on periodic axes): random and lattice particles, open and periodic boxes,
// cutoffs from one that finds nothing to half the box, particles on cell borders, empty cells, 0 /
// 1 / 2 particles, fp32 and fp64 positions, SoA and AoSoA; half pairs once each; the refused inputs.
// The reference computes each separation with the grid's own minimum-image arithmetic (the same
// float operations the kernels run), so pairs at the cutoff's edge classify alike; what is tested
// is the search.
#include <strata/neighbor/neighbor.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/allocation_failures.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace nb = strata::neighbor;
using strata::index_t;

namespace {

struct vec3f {
  BOOST_HANA_DEFINE_STRUCT(vec3f, (float, x), (float, y), (float, z));
};
/// fp32 positions as one sub-struct, with other leaves around them.
struct atom_f {
  BOOST_HANA_DEFINE_STRUCT(atom_f, (float, q), (vec3f, pos), (std::int32_t, id));
};
/// fp64 positions as three separate leaves.
struct atom_d {
  BOOST_HANA_DEFINE_STRUCT(atom_d, (double, x), (std::int64_t, id), (double, y), (double, z));
};

template <class T>
struct access;
template <>
struct access<atom_f> {
  using F = float;
  static atom_f make(double x, double y, double z, int id) { return atom_f{0.5f, {float(x), float(y), float(z)}, id}; }
  static std::array<F, 3> pos(const atom_f& a) { return {a.pos.x, a.pos.y, a.pos.z}; }
  static long id(const atom_f& a) { return a.id; }
  template <class C>
  static auto cells(C& ps, const nb::box& b, double rc, nb::build_options o = {}, std::size_t ghosts = 0) {
    return nb::make_cell_list<&atom_f::pos>(ps, b, rc, o, ghosts);
  }
};
template <>
struct access<atom_d> {
  using F = double;
  static atom_d make(double x, double y, double z, int id) { return atom_d{x, id, y, z}; }
  static std::array<F, 3> pos(const atom_d& a) { return {a.x, a.y, a.z}; }
  static long id(const atom_d& a) { return long(a.id); }
  template <class C>
  static auto cells(C& ps, const nb::box& b, double rc, nb::build_options o = {}, std::size_t ghosts = 0) {
    return nb::make_cell_list<&atom_d::x, &atom_d::y, &atom_d::z>(ps, b, rc, o, ghosts);
  }
};

template <class C>
using record_of = typename C::value_type;

/// A device vector's elements on the host in one copy (a std::vector built from device iterators
/// would copy element by element).
template <class U>
std::vector<U> on_host(const thrust::device_vector<U>& d) {
  std::vector<U> h(d.size());
  thrust::copy(d.begin(), d.end(), h.begin());
  return h;
}

/// Pairs a loop reports, as (i, j) record indices, through one atomic slot counter.
struct pair_sink {
  unsigned long long* count;
  long long* out;
  unsigned long long cap;
  template <class D, class F>
  STRATA_HD void operator()(index_t i, index_t j, const D&, F) const {
    const unsigned long long k = nb::atomic_add(count, 1ull);
    if (k < cap) out[2 * k] = i, out[2 * k + 1] = j;
  }
};
struct pair_buffer {
  thrust::device_vector<unsigned long long> count;
  thrust::device_vector<long long> out;
  explicit pair_buffer(std::size_t cap) : count(1, 0), out(2 * cap + 2) {}
  pair_sink sink() { return {thrust::raw_pointer_cast(count.data()), thrust::raw_pointer_cast(out.data()), out.size() / 2}; }
  std::vector<std::pair<long long, long long>> pairs() const {
    const unsigned long long n = on_host(count)[0];
    EXPECT_LE(n, out.size() / 2) << "more pairs than the reference has";
    const std::vector<long long> h = on_host(out);
    std::vector<std::pair<long long, long long>> p;
    for (unsigned long long k = 0; k < std::min<unsigned long long>(n, out.size() / 2); ++k) p.emplace_back(h[2 * k], h[2 * k + 1]);
    std::sort(p.begin(), p.end());
    return p;
  }
};

/// Ordered pairs (i, j), i != j, within rc by brute force over the records as they are now.
template <class T, class F>
std::vector<std::pair<long long, long long>> brute_force(const std::vector<T>& h, const nb::grid<F>& g, double rc) {
  std::vector<std::pair<long long, long long>> p;
  const F rc2 = F(rc * rc);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const auto a = access<T>::pos(h[i]);
    for (std::size_t j = 0; j < h.size(); ++j) {
      if (i == j) continue;
      const auto b = access<T>::pos(h[j]);
      const auto d = g.separation(nb::vec3<F>{a[0], a[1], a[2]}, nb::vec3<F>{b[0], b[1], b[2]});
      if (nb::norm2(d) < rc2) p.emplace_back(static_cast<long long>(i), static_cast<long long>(j));
    }
  }
  std::sort(p.begin(), p.end());
  return p;
}
std::vector<std::pair<long long, long long>> lower_first(std::vector<std::pair<long long, long long>> p) {
  std::vector<std::pair<long long, long long>> h;
  for (auto [i, j] : p)
    if (i < j) h.emplace_back(i, j);
  return h;
}

/// A full and a half loop over the cell list give the reference's pairs (the half one each
/// unordered pair once, lower index first), and every record of the input is still there.
template <class C, class CL>
void expect_cell_pairs(const C& ps, const CL& cells, double rc, const std::vector<long>& ids_before, const char* what,
                       const std::vector<record_of<C>>* original = nullptr) {
  using T = record_of<C>;
  SCOPED_TRACE(what);
  const auto h = ps.to_host();
  // Records move whole: each is, bit for bit, the input record of its id (no position changed).
  if (original) {
    for (const auto& r : h) ASSERT_TRUE(strata_test::same_bits(r, (*original)[std::size_t(access<T>::id(r))])) << "record of id " << access<T>::id(r);
  }
  std::vector<long> ids;
  for (const auto& r : h) ids.push_back(access<T>::id(r));
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(ids, ids_before) << "the build lost or duplicated records";
  // Cell order: keys ascend and each record lies in the cell its key names.
  const auto keys = cells.keys_to_host();
  ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  const auto ref = brute_force(h, cells.geometry(), rc);
  pair_buffer full(ref.size());
  nb::for_each_neighbor(ps, cells, rc, full.sink());
  EXPECT_EQ(full.pairs(), ref) << "full pairs, n = " << h.size() << ", cutoff " << rc;
  pair_buffer half(ref.size() / 2);
  nb::for_each_neighbor(ps, cells, rc, half.sink(), {nb::pairs::half});
  EXPECT_EQ(half.pairs(), lower_first(ref)) << "half pairs, n = " << h.size() << ", cutoff " << rc;
}

template <class T>
std::vector<T> random_in(std::size_t n, const nb::box& b, std::mt19937_64& rng, double spill = 0) {
  std::vector<T> v;
  for (std::size_t i = 0; i < n; ++i) {
    double p[3];
    for (int a = 0; a < 3; ++a) {
      const double L = b.length(a);
      std::uniform_real_distribution<double> u(b.lo[std::size_t(a)] - spill * L, b.hi[std::size_t(a)] + spill * L);
      p[a] = u(rng);
    }
    T r = access<T>::make(p[0], p[1], p[2], int(i));
    if (spill == 0) {  // inside [lo, hi) as stored (a float may round up onto hi)
      auto q = access<T>::pos(r);
      for (int a = 0; a < 3; ++a)
        if (double(q[std::size_t(a)]) >= b.hi[std::size_t(a)]) p[a] = b.lo[std::size_t(a)];
      r = access<T>::make(p[0], p[1], p[2], int(i));
    }
    v.push_back(r);
  }
  return v;
}
std::vector<long> iota_ids(std::size_t n) {
  std::vector<long> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = long(i);
  return v;
}

template <class C>
class Neighbor : public ::testing::Test {};
using Containers = ::testing::Types<strata::soa_vector<atom_f>, strata::aosoa_vector<atom_f>, strata::soa_vector<atom_d>,
                                    strata::aosoa_vector<atom_d, 16>>;
TYPED_TEST_SUITE(Neighbor, Containers);

TYPED_TEST(Neighbor, RandomParticlesInPeriodicAndOpenBoxes) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed());
  const nb::box periodic{{0, 0, 0}, {10, 7, 13}, {nb::boundary::periodic, nb::boundary::periodic, nb::boundary::periodic}};
  const nb::box mixed{{-2, 1, 0}, {6, 8, 9}, {nb::boundary::open, nb::boundary::periodic, nb::boundary::open}};
  const nb::box open{{-5, -5, -5}, {5, 5, 5}, {nb::boundary::open, nb::boundary::open, nb::boundary::open}};
  // The reference is O(N^2): sanitizer runs (10-50x slower) take the smaller sizes only.
  const std::size_t large = strata_test::under_sanitizer() ? 400 : 1500;
  for (const nb::box& b : {periodic, mixed, open})
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(97), large})
      for (double rc : {1e-4, 0.7, 1.9, 3.5}) {
        const auto input = random_in<T>(n, b, rng);
        C ps(input);
        auto cells = access<T>::cells(ps, b, rc);
        EXPECT_EQ(cells.report().particles, index_t(n));
        EXPECT_EQ(cells.report().wrapped, 0);
        if (n <= 1) {
          EXPECT_EQ(cells.report().path, nb::build_path::trivial);
        }
        expect_cell_pairs(ps, cells, rc, iota_ids(n), "random", &input);
      }
}

TYPED_TEST(Neighbor, LatticeOnCellBordersAndCutoffAtLatticeDistances) {
  using C = TypeParam;
  using T = record_of<C>;
  // Box 10, cutoff 1.25: 7 cells of 10/7 a side; a lattice of half a cell puts every particle on a
  // cell border or a cell's middle plane; neighbour distances 0.71, 1.01 and 1.24 are inside.
  for (nb::boundary bc : {nb::boundary::periodic, nb::boundary::open}) {
    const nb::box b = nb::box::cube(10, bc);
    std::vector<T> v;
    const double s = 10.0 / 7 / 2;
    int id = 0;
    for (int i = 0; i < 14; ++i)
      for (int j = 0; j < 14; ++j)
        for (int k = 0; k < 14; ++k) v.push_back(access<T>::make(i * s, j * s, k * s, id++));
    C ps(v);
    auto cells = access<T>::cells(ps, b, 1.25);
    EXPECT_EQ(cells.report().dims, (std::array<int, 3>{7, 7, 7}));
    expect_cell_pairs(ps, cells, 1.25, iota_ids(v.size()), "half-cell lattice", &v);
    // An integer lattice with the cutoff exactly at the spacing: r2 < rc2 is strict, so the
    // nearest neighbours at 1 are out and those at sqrt(2) too when rc = 1.
    std::vector<T> w;
    id = 0;
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 10; ++j)
        for (int k = 0; k < 10; ++k) w.push_back(access<T>::make(i, j, k, id++));
    for (double rc : {1.0, 1.5, 2.0, 5.0}) {
      if (rc > 2 && strata_test::under_sanitizer()) continue;
      C qs(w);
      auto c2 = access<T>::cells(qs, b, rc);
      expect_cell_pairs(qs, c2, rc, iota_ids(w.size()), "integer lattice", &w);
    }
  }
}

TYPED_TEST(Neighbor, EmptyCellsAndSmallCounts) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 1);
  // All particles in one corner of a large periodic box: most cells are empty, and pairs reach
  // across the periodic faces.
  const nb::box big = nb::box::cube(30);
  const nb::box corner{{-1, -1, -1}, {1, 1, 1}, {nb::boundary::open, nb::boundary::open, nb::boundary::open}};
  auto v = random_in<T>(400, corner, rng);
  for (auto& r : v) {
    auto p = access<T>::pos(r);
    for (auto& x : p)
      if (x < 0) x += 30;
    r = access<T>::make(p[0], p[1], p[2], int(access<T>::id(r)));
  }
  C ps(v);
  auto cells = access<T>::cells(ps, big, 1.0);
  EXPECT_EQ(cells.cells(), 29 * 29 * 29);
  EXPECT_FALSE(cells.report().coarsened);
  EXPECT_LE(cells.report().max_in_cell, index_t(400));
  expect_cell_pairs(ps, cells, 1.0, iota_ids(v.size()), "corner cluster");
  // Two particles, within and out of range across a periodic face.
  C two({access<T>::make(0.1, 5, 5, 0), access<T>::make(29.5, 5, 5, 1)});
  auto c2 = access<T>::cells(two, big, 1.0);
  expect_cell_pairs(two, c2, 1.0, {0, 1}, "two across the face");
  auto c3 = access<T>::cells(two, big, 0.5);
  expect_cell_pairs(two, c3, 0.5, {0, 1}, "two out of range");
}

TYPED_TEST(Neighbor, OutsideTheBox) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 2);
  const nb::box open{{0, 0, 0}, {8, 8, 8}, {nb::boundary::open, nb::boundary::open, nb::boundary::open}};
  auto v = random_in<T>(800, open, rng, 0.2);  // about 60% of them outside on some axis
  // An open axis holds [0, 8], a periodic one [0, 8).
  std::size_t outside = 0, outside_periodic = 0;
  for (const auto& r : v) {
    const auto p = access<T>::pos(r);
    outside += std::any_of(p.begin(), p.end(), [](auto x) { return x < 0 || x > 8; });
    outside_periodic += std::any_of(p.begin(), p.end(), [](auto x) { return x < 0 || x >= 8; });
  }
  ASSERT_GT(outside, 0u);
  {
    C ps(v);
    try {
      access<T>::cells(ps, open, 1.1);
      ADD_FAILURE() << "particles outside an open box were accepted";
    } catch (const std::out_of_range& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(outside) + " of 800"), std::string::npos) << e.what();
    }
    EXPECT_EQ(strata_test::first_difference<T>(ps.to_host(), v), -1) << "a refused build changed the container";
  }
  {
    C ps(v);
    nb::build_options o;
    o.outside_open = nb::open_outside::clamp;
    auto cells = access<T>::cells(ps, open, 1.1, o);
    EXPECT_EQ(cells.report().clamped, index_t(outside));
    expect_cell_pairs(ps, cells, 1.1, iota_ids(v.size()), "clamped into edge cells", &v);
  }
  // Periodic: wrapped into the box (positions change to their image), or refused.
  const nb::box periodic = nb::box::cube(8);
  {
    C ps(v);
    auto cells = access<T>::cells(ps, periodic, 1.1);
    EXPECT_EQ(cells.report().wrapped, index_t(outside_periodic));
    for (const auto& r : ps.to_host())
      for (auto x : access<T>::pos(r)) ASSERT_TRUE(x >= 0 && x < 8) << x;
    expect_cell_pairs(ps, cells, 1.1, iota_ids(v.size()), "wrapped");
  }
  {
    C ps(v);
    nb::build_options o;
    o.outside_periodic = nb::periodic_outside::error;
    EXPECT_THROW(access<T>::cells(ps, periodic, 1.1, o), std::out_of_range);
  }
}

TYPED_TEST(Neighbor, RefusedInputs) {
  using C = TypeParam;
  using T = record_of<C>;
  const nb::box b = nb::box::cube(10);
  std::vector<T> v = {access<T>::make(1, 1, 1, 0), access<T>::make(2, 2, 2, 1), access<T>::make(3, 3, 3, 2)};
  C ps(v);
  for (double rc : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    EXPECT_THROW(access<T>::cells(ps, b, rc), std::invalid_argument) << rc;
  EXPECT_THROW(access<T>::cells(ps, b, 5.01), std::invalid_argument) << "more than half a periodic box";
  EXPECT_NO_THROW(access<T>::cells(ps, b, 5.0)) << "exactly half a periodic box";
  EXPECT_NO_THROW(access<T>::cells(ps, nb::box::cube(10, nb::boundary::open), 50)) << "an open box takes any cutoff";
  nb::box flat = b;
  flat.hi[1] = flat.lo[1];
  EXPECT_THROW(access<T>::cells(ps, flat, 1), std::invalid_argument);
  nb::box inverted = b;
  inverted.lo[2] = 11;
  EXPECT_THROW(access<T>::cells(ps, inverted, 1), std::invalid_argument);
  // Non-finite positions: refused with their count; the container is untouched.
  std::vector<T> bad = v;
  bad.push_back(access<T>::make(std::nan(""), 1, 1, 3));
  bad.push_back(access<T>::make(1, std::numeric_limits<double>::infinity(), 1, 4));
  C qs(bad);
  try {
    access<T>::cells(qs, b, 1);
    ADD_FAILURE() << "NaN positions were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("record 3"), std::string::npos) << e.what();
  }
  // Too many cells: refused when asked to, coarsened (and still exact) by default.
  nb::build_options strict;
  strict.over_cap = nb::too_many_cells::error;
  strict.max_cells = 1000;
  EXPECT_THROW(access<T>::cells(ps, b, 0.5, strict), std::length_error);
  nb::build_options capped;
  capped.max_cells = 1000;
  std::mt19937_64 rng(7);
  C rs(random_in<T>(600, b, rng));
  auto cells = access<T>::cells(rs, b, 0.5, capped);
  EXPECT_TRUE(cells.report().coarsened);
  EXPECT_LE(cells.cells(), 1000);
  for (double w : cells.report().cell_size) EXPECT_GE(w, 0.5);
  expect_cell_pairs(rs, cells, 0.5, iota_ids(600), "coarsened grid");
  // A cutoff of 1e-9 in a box of 10: 10^30 cells at the cutoff, coarsened to the 2^15 cells a
  // few particles get.
  auto tiny = access<T>::cells(rs, b, 1e-9);
  EXPECT_TRUE(tiny.report().coarsened);
  EXPECT_LE(tiny.cells(), 1 << 15);
  EXPECT_GT(tiny.cells(), 1 << 14);
  expect_cell_pairs(rs, tiny, 1e-9, iota_ids(600), "tiny cutoff");
  nb::build_options nonsense;
  nonsense.max_cells = 0;
  EXPECT_THROW(access<T>::cells(ps, b, 1, nonsense), std::invalid_argument);
  // A loop past the list's reach, or over a container of another size.
  auto c = access<T>::cells(ps, b, 1);
  pair_buffer sink(16);
  EXPECT_THROW(nb::for_each_neighbor(ps, c, 1.5, sink.sink()), std::invalid_argument);
  C other(v);
  other.push_back(v[0]);
  EXPECT_THROW(nb::for_each_neighbor(other, c, 1.0, sink.sink()), std::invalid_argument);
}

// A container ending in ghosts: its own records and its ghosts are each sorted by cell, the ghosts
// stay last, and loops run for the own records only, with ghosts among their neighbours.
TYPED_TEST(Neighbor, GhostsStayLastAndAreOnlyNeighbours) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 7);
  const nb::box b{{0, 0, 0}, {8, 9, 10}, {nb::boundary::periodic, nb::boundary::open, nb::boundary::periodic}};
  const double rc = 1.4;
  for (std::size_t ghosts : {std::size_t(0), std::size_t(1), std::size_t(300), std::size_t(900)}) {
    SCOPED_TRACE("ghosts " + std::to_string(ghosts));
    const auto input = random_in<T>(900, b, rng);
    C ps(input);
    auto cells = access<T>::cells(ps, b, rc, {}, ghosts);
    const std::size_t own = input.size() - ghosts;
    EXPECT_EQ(cells.owned(), index_t(own));
    const auto h = ps.to_host();
    std::vector<long> own_ids, ghost_ids;
    for (std::size_t i = 0; i < h.size(); ++i) (i < own ? own_ids : ghost_ids).push_back(access<T>::id(h[i]));
    std::sort(own_ids.begin(), own_ids.end());
    std::sort(ghost_ids.begin(), ghost_ids.end());
    std::vector<long> want_own(own), want_ghost(ghosts);
    for (std::size_t i = 0; i < own; ++i) want_own[i] = long(i);
    for (std::size_t i = 0; i < ghosts; ++i) want_ghost[i] = long(own + i);
    EXPECT_EQ(own_ids, want_own) << "an own record moved among the ghosts or back";
    EXPECT_EQ(ghost_ids, want_ghost);
    const auto keys = cells.keys_to_host();
    ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
    for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i] >= std::uint32_t(cells.cells()), i >= own) << "record " << i;
    // Full pairs: every own i with every j (own or ghost) within rc, as record ids.
    auto as_ids = [&](const std::vector<std::pair<long long, long long>>& p) {
      std::vector<std::pair<long, long>> q;
      for (auto [i, j] : p) q.emplace_back(access<T>::id(h[std::size_t(i)]), access<T>::id(h[std::size_t(j)]));
      std::sort(q.begin(), q.end());
      return q;
    };
    std::vector<std::pair<long long, long long>> ref;
    for (auto [i, j] : brute_force(h, cells.geometry(), rc))
      if (std::size_t(i) < own) ref.emplace_back(i, j);
    pair_buffer got(ref.size());
    nb::for_each_neighbor(ps, cells, rc, got.sink());
    EXPECT_EQ(as_ids(got.pairs()), as_ids(ref));
    if (ghosts > 0) {
      pair_buffer none(4);
      EXPECT_THROW(nb::for_each_neighbor(ps, cells, rc, none.sink(), {nb::pairs::half}), std::invalid_argument) << "half pairs over ghosts";
      EXPECT_THROW(nb::make_verlet_list(ps, cells, rc, 0.0), std::invalid_argument) << "a Verlet list over ghosts";
    }
  }
  C few(random_in<T>(3, b, rng));
  EXPECT_THROW(access<T>::cells(few, b, rc, {}, 4), std::invalid_argument) << "more ghosts than records";
}

TYPED_TEST(Neighbor, RebuildSkipsTheSortWhenInOrder) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 3);
  const nb::box b = nb::box::cube(12);
  C ps(random_in<T>(3000, b, rng));
  auto cells = access<T>::cells(ps, b, 1.5);
  EXPECT_EQ(cells.report().path, nb::build_path::sorted);
  EXPECT_EQ(cells.rebuild(ps).path, nb::build_path::in_order);
  EXPECT_EQ(cells.report().particles, 3000);
  EXPECT_GT(cells.report().seconds, 0);
}

/// Per i: neighbour count and sum of r2 (accumulate_neighbors), written once per particle.
struct count_and_r2 {
  int n;
  double r2;
};
template <class F>
struct add_pair {
  STRATA_HD void operator()(count_and_r2& acc, index_t, index_t, const nb::vec3<F>&, F r2) const { ++acc.n, acc.r2 += double(r2); }
};
struct store_pair {
  int* n;
  double* r2;
  STRATA_HD void operator()(index_t i, const count_and_r2& acc) const { n[i] = acc.n, r2[i] = acc.r2; }
};

TYPED_TEST(Neighbor, AccumulatePerParticle) {
  using C = TypeParam;
  using T = record_of<C>;
  using F = typename access<T>::F;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 4);
  const nb::box b{{0, 0, 0}, {9, 9, 9}, {nb::boundary::periodic, nb::boundary::open, nb::boundary::periodic}};
  C ps(random_in<T>(2500, b, rng));
  auto cells = access<T>::cells(ps, b, 2.0);
  thrust::device_vector<int> n(2500, -1);
  thrust::device_vector<double> r2(2500, -1);
  nb::accumulate_neighbors(ps, cells, 1.6, count_and_r2{0, 0}, add_pair<F>{},
                           store_pair{thrust::raw_pointer_cast(n.data()), thrust::raw_pointer_cast(r2.data())});
  const auto ref = brute_force(ps.to_host(), cells.geometry(), 1.6);
  std::vector<int> want_n(2500, 0);
  std::vector<double> want_r2(2500, 0);
  const auto h = ps.to_host();
  for (auto [i, j] : ref) {
    ++want_n[std::size_t(i)];
    const auto a = access<T>::pos(h[std::size_t(i)]), c = access<T>::pos(h[std::size_t(j)]);
    want_r2[std::size_t(i)] += double(nb::norm2(cells.geometry().separation({a[0], a[1], a[2]}, {c[0], c[1], c[2]})));
  }
  const std::vector<int> got_n = on_host(n);
  const std::vector<double> got_r2 = on_host(r2);
  EXPECT_EQ(got_n, want_n);
  for (std::size_t i = 0; i < 2500; ++i) ASSERT_NEAR(got_r2[i], want_r2[i], 1e-9 * (1 + want_r2[i])) << i;
}

TYPED_TEST(Neighbor, VerletListWithSkin) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 5);
  const double rc = 1.2, skin = 0.3;
  for (const nb::box& b : {nb::box::cube(8), nb::box::cube(8, nb::boundary::open)})
    for (std::size_t n : {0, 1, 2, 1200}) {
      C ps(random_in<T>(n, b, rng));
      auto cells = access<T>::cells(ps, b, rc + skin);
      const auto h = ps.to_host();
      const auto within_reach = brute_force(h, cells.geometry(), rc + skin);
      for (nb::pairs mode : {nb::pairs::full, nb::pairs::half}) {
        auto list = nb::make_verlet_list(ps, cells, rc, skin, mode);
        // The CSR rows: exactly the pairs within cutoff + skin (half: lower index first).
        const auto off = list.offsets_to_host();
        const auto idx = list.indices_to_host();
        ASSERT_EQ(off.size(), n + 1);
        std::vector<std::pair<long long, long long>> stored;
        for (std::size_t i = 0; i < n; ++i)
          for (std::int64_t k = off[i]; k < off[i + 1]; ++k) stored.emplace_back(static_cast<long long>(i), idx[std::size_t(k)]);
        std::sort(stored.begin(), stored.end());
        EXPECT_EQ(stored, mode == nb::pairs::full ? within_reach : lower_first(within_reach));
        EXPECT_EQ(list.stored(), std::int64_t(stored.size()));
        // A loop over it gives the pairs within the cutoff.
        const auto ref = brute_force(h, cells.geometry(), rc);
        pair_buffer got(ref.size());
        nb::for_each_neighbor(ps, list, rc, got.sink(), {mode});
        EXPECT_EQ(got.pairs(), mode == nb::pairs::full ? ref : lower_first(ref));
        pair_buffer wrong(4);
        EXPECT_THROW(nb::for_each_neighbor(ps, list, rc, wrong.sink(), {mode == nb::pairs::full ? nb::pairs::half : nb::pairs::full}),
                     std::invalid_argument);
        EXPECT_THROW(nb::for_each_neighbor(ps, list, rc + 0.01, wrong.sink(), {mode}), std::invalid_argument)
            << "pairs beyond the list's cutoff are complete only right after a build";
        if (mode == nb::pairs::half) {
          thrust::device_vector<int> cn(n + 1);
          thrust::device_vector<double> cr(n + 1);
          EXPECT_THROW(nb::accumulate_neighbors(ps, list, rc, count_and_r2{0, 0}, add_pair<typename access<T>::F>{},
                                                store_pair{thrust::raw_pointer_cast(cn.data()), thrust::raw_pointer_cast(cr.data())}),
                       std::invalid_argument)
              << "accumulating over a half list";
        }
      }
    }
  C few(random_in<T>(10, nb::box::cube(8), rng));
  auto narrow = access<T>::cells(few, nb::box::cube(8), 1.0);
  EXPECT_THROW(nb::make_verlet_list(few, narrow, 1.0, 0.3), std::invalid_argument) << "cells narrower than cutoff + skin";
  EXPECT_THROW(nb::make_verlet_list(few, narrow, 0.8, -0.1), std::invalid_argument) << "a negative skin";
  EXPECT_THROW(nb::make_verlet_list(few, narrow, -0.5, 1.0), std::invalid_argument) << "a negative cutoff with cutoff + skin > 0";
  // A rebuild checks the cell list it is given as the constructor does, and keeps the list.
  auto wide = access<T>::cells(few, nb::box::cube(8), 1.3);
  auto list = nb::make_verlet_list(few, wide, 1.0, 0.3);
  const auto stored = list.stored();
  EXPECT_THROW(list.rebuild(few, narrow), std::invalid_argument) << "cells narrower than cutoff + skin";
  EXPECT_EQ(list.size(), 10);
  EXPECT_EQ(list.stored(), stored);
}

TYPED_TEST(Neighbor, DisplacementTriggersRebuild) {
  using C = TypeParam;
  using T = record_of<C>;
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed() + 6);
  const double rc = 1.0, skin = 0.4;
  const nb::box b = nb::box::cube(6);
  C ps(random_in<T>(500, b, rng));
  auto cells = access<T>::cells(ps, b, rc + skin);
  auto list = nb::make_verlet_list(ps, cells, rc, skin);
  EXPECT_EQ(list.max_displacement(ps), 0.0);
  EXPECT_FALSE(list.needs_rebuild(ps));
  auto h = ps.to_host();
  const std::size_t k = 123;
  auto p = access<T>::pos(h[k]);
  // Just under skin / 2 along a diagonal, then just over; across the periodic face the minimum
  // image counts the short way.
  auto moved = [&](double d) {
    auto q = p;
    q[0] += d / std::sqrt(2.0), q[1] += d / std::sqrt(2.0);
    auto r = h;
    r[k] = access<T>::make(q[0], q[1], q[2], int(access<T>::id(h[k])));
    C out(r);
    return out;
  };
  EXPECT_FALSE(list.needs_rebuild(moved(0.19)));
  EXPECT_NEAR(list.max_displacement(moved(0.19)), 0.19, 1e-5);
  EXPECT_TRUE(list.needs_rebuild(moved(0.21)));
  EXPECT_TRUE(list.needs_rebuild(moved(-0.5)));
  auto wrapped = h;
  wrapped[k] = access<T>::make(p[0] + 6, p[1], p[2] - 6, int(access<T>::id(h[k])));  // the same point, an image away
  EXPECT_FALSE(list.needs_rebuild(C(wrapped)));
  // After a rebuild the list holds the moved particle's new pairs.
  C now = moved(0.21);
  cells.rebuild(now);
  list.rebuild(now, cells);
  EXPECT_FALSE(list.needs_rebuild(now));
  EXPECT_EQ(list.builds(), 2);
  const auto ref = brute_force(now.to_host(), cells.geometry(), rc);
  pair_buffer got(ref.size());
  nb::for_each_neighbor(now, list, rc, got.sink());
  EXPECT_EQ(got.pairs(), ref);
}

// A rebuild that fails part way (each of its allocations failing in turn) leaves a list that loops
// refuse, never keys or offsets of one build with starts or indices of another; the container
// keeps every record; the next rebuild works.
TEST(NeighborFailures, FailedRebuildsLeaveNoMixedList) {
  using C = strata::soa_vector<atom_f>;
  std::mt19937_64 rng(strata_test::test_seed() + 21);
  const nb::box b = nb::box::cube(8);
  const double rc = 1.0, skin = 0.3;
  const std::size_t n = 800;
  const auto spread = random_in<atom_f>(n, b, rng);
  auto dense = spread;  // the same records crowded into an eighth of the box: more pairs per row
  for (auto& a : dense) a.pos.x *= 0.5f, a.pos.y *= 0.5f, a.pos.z *= 0.5f;
  struct cell_state {
    C ps;
    nb::cell_list<atom_f, strata::soa_mapping<atom_f>, &atom_f::pos> cells;
  };
  const int cell_allocations = strata_test::sweep_allocation_failures(
      "cell_list::rebuild",
      [&] {
        C ps(spread);
        auto cells = nb::make_cell_list<&atom_f::pos>(ps, b, rc);
        std::vector<atom_f> h = ps.to_host();
        std::reverse(h.begin(), h.end());  // out of cell order: the rebuild sorts
        return cell_state{C(h), std::move(cells)};
      },
      [](cell_state& s) { s.cells.rebuild(s.ps); },
      [&](cell_state& s) {
        ASSERT_TRUE(s.cells.size() == 0 || s.cells.size() == index_t(n)) << s.cells.size();
        std::vector<long> ids;
        for (const auto& r : s.ps.to_host()) ids.push_back(access<atom_f>::id(r));
        std::sort(ids.begin(), ids.end());
        EXPECT_EQ(ids, iota_ids(n)) << "a failed build lost or duplicated records";
        if (s.cells.size() == 0) {
          pair_buffer none(1);
          EXPECT_THROW(nb::for_each_neighbor(s.ps, s.cells, rc, none.sink()), std::invalid_argument);
        }
      },
      [&](cell_state& s) { expect_cell_pairs(s.ps, s.cells, rc, iota_ids(n), "after the failures"); }, true);
  EXPECT_GT(cell_allocations, 0) << "the rebuild allocated nothing: nothing was tested";

  // A rebuild whose arrays grow (ghosts appended: more keys and a second segment of starts): a
  // failed build never leaves the old size over replaced arrays.
  std::vector<atom_f> with_ghosts = spread;
  with_ghosts.insert(with_ghosts.end(), spread.begin(), spread.begin() + 100);
  const int grown_allocations = strata_test::sweep_allocation_failures(
      "cell_list::rebuild with ghosts",
      [&] {
        C ps(spread);
        auto cells = nb::make_cell_list<&atom_f::pos>(ps, b, rc);
        return cell_state{C(with_ghosts), std::move(cells)};
      },
      [](cell_state& s) { s.cells.rebuild(s.ps, 100); },
      [&](cell_state& s) {
        ASSERT_TRUE(s.cells.size() == 0 || s.cells.size() == index_t(n)) << s.cells.size();
        if (s.cells.size() == index_t(n)) {  // refused before anything changed: the old list still serves its container
          C own(spread);
          s.cells.rebuild(own);
          expect_cell_pairs(own, s.cells, rc, iota_ids(n), "the old list after a failure before any change");
        } else {
          C own(spread);
          pair_buffer none(1);
          EXPECT_THROW(nb::for_each_neighbor(own, s.cells, rc, none.sink()), std::invalid_argument);
        }
      },
      [&](cell_state& s) { EXPECT_EQ(s.cells.owned(), index_t(n)); }, false);
  EXPECT_GT(grown_allocations, 0);

  struct verlet_state {
    C ps;
    nb::cell_list<atom_f, strata::soa_mapping<atom_f>, &atom_f::pos> cells;
    nb::verlet_list<atom_f, strata::soa_mapping<atom_f>, &atom_f::pos> list;
  };
  // A list built over `first`, and the container (with its cell list) it is then rebuilt over.
  auto verlet_over = [&](const std::vector<atom_f>& first, const std::vector<atom_f>& then) {
    return [&, first, then] {
      C built(first);
      auto built_cells = nb::make_cell_list<&atom_f::pos>(built, b, rc + skin);
      auto list = nb::make_verlet_list(built, built_cells, rc, skin);
      C ps(then);
      auto cells = nb::make_cell_list<&atom_f::pos>(ps, b, rc + skin);
      return verlet_state{std::move(ps), std::move(cells), std::move(list)};
    };
  };
  const int verlet_allocations = strata_test::sweep_allocation_failures(
      "verlet_list::rebuild", verlet_over(spread, dense),
      [](verlet_state& s) { s.list.rebuild(s.ps, s.cells); },
      [&](verlet_state& s) {
        ASSERT_EQ(s.list.size(), 0) << "a failed rebuild left a list loops would read";
        pair_buffer none(1);
        EXPECT_THROW(nb::for_each_neighbor(s.ps, s.list, rc, none.sink()), std::invalid_argument);
        EXPECT_THROW((void)s.list.needs_rebuild(s.ps), std::invalid_argument);
      },
      [&](verlet_state& s) {
        const auto ref = brute_force(s.ps.to_host(), s.cells.geometry(), rc);
        pair_buffer got(ref.size());
        nb::for_each_neighbor(s.ps, s.list, rc, got.sink());
        EXPECT_EQ(got.pairs(), ref);
      },
      true);
  EXPECT_GT(verlet_allocations, 0) << "the rebuild allocated nothing: nothing was tested";
  // A Verlet list rebuilt over a larger container (every array grows): a failure leaves it empty.
  auto more = spread;
  more.insert(more.end(), dense.begin(), dense.end());
  const int verlet_grown = strata_test::sweep_allocation_failures(
      "verlet_list::rebuild, larger", verlet_over(spread, more),
      [](verlet_state& s) { s.list.rebuild(s.ps, s.cells); },
      [&](verlet_state& s) {
        ASSERT_EQ(s.list.size(), 0) << "a failed rebuild left a list loops would read";
        C small(spread);
        pair_buffer none(1);
        EXPECT_THROW(nb::for_each_neighbor(small, s.list, rc, none.sink()), std::invalid_argument) << "the old size over new arrays";
      },
      [&](verlet_state& s) { EXPECT_EQ(s.list.size(), index_t(2 * n)); }, false);
  EXPECT_GT(verlet_grown, 0);
}

// fp32 positions in a box a thousand cutoffs long whose length float cannot hold: a separation
// across the periodic face is x0 - x1 + float(L), off from the true one by float(L) - L, up to half
// an ulp of the box (3e-5 here), more than the cells' relative margin (1e-5 of the cutoff). The
// pairs here lie just over a cell width apart across the face, so the cells at cutoff * (1 +
// margin) would put them two cells apart, while the float separation (the kernels' and the
// reference's) is inside the cutoff: they are found.
TEST(NeighborRounding, Fp32LongBoxesKeepRoundedPairsAdjacent) {
  using C = strata::soa_vector<atom_f>;
  const double rc = 1.00002;
  const double L = 1027 * rc * (1 + nb::cell_margin) * (1 + 1e-12);
  const double w = L / 1027;  // the width of cells with the relative margin alone
  // Long along x only, so the grid keeps its 1027 cells there (open y and z of 5 cutoffs).
  const nb::box b{{0, 0, 0}, {L, 5, 5}, {nb::boundary::periodic, nb::boundary::open, nb::boundary::open}};
  std::vector<atom_f> v;
  float x1 = float(L - w);
  while (double(x1) >= L - w) x1 = std::nextafter(x1, 0.0f);
  for (int k = 0; k < 36; ++k) {
    const double y = 0.5 + 2.0 * (k % 3), z = 0.5 + 2.0 * (k / 3 % 3);  // nine lines two cutoffs apart
    const float far = k % 2 ? x1 : std::nextafter(x1, 0.0f);
    v.push_back(access<atom_f>::make(1e-8 * (k + 1), y, z, int(v.size())));
    v.push_back(access<atom_f>::make(double(far), y, z, int(v.size())));
  }
  C ps(v);
  auto cells = access<atom_f>::cells(ps, b, rc);
  ASSERT_FALSE(cells.report().coarsened);
  const auto ref = brute_force(ps.to_host(), cells.geometry(), rc);
  EXPECT_FALSE(ref.empty()) << "no pair of the set-up is within the cutoff in float arithmetic";
  expect_cell_pairs(ps, cells, rc, iota_ids(v.size()), "pairs a cell width apart across the face of a box of 1027 cutoffs");
}

// Wrapping into a periodic box whose lo float cannot hold stores positions inside [lo, hi), never
// float(lo) below lo: a second build has nothing left to wrap.
TEST(NeighborRounding, WrappedPositionsStayInsideTheBox) {
  using C = strata::soa_vector<atom_f>;
  const nb::box b{{0.7, 0.7, 0.7}, {3.7, 3.7, 3.7}, {nb::boundary::periodic, nb::boundary::periodic, nb::boundary::periodic}};
  std::vector<atom_f> v;
  for (double x : {0.7, 3.7, 0.7 - 3.0, 3.7 + 3.0, 0.7 - 1e-9, 3.7 - 1e-9, 2.0, 2.0 + 30.0})
    v.push_back(access<atom_f>::make(x, 2.0, 0.7, int(v.size())));
  C ps(v);
  auto cells = access<atom_f>::cells(ps, b, 1.0);
  EXPECT_GT(cells.report().wrapped, 0);
  for (const auto& a : ps.to_host())
    for (float c : {a.pos.x, a.pos.y, a.pos.z}) {
      EXPECT_GE(double(c), 0.7) << "a wrapped coordinate below lo";
      EXPECT_LT(double(c), 3.7);
    }
  cells.rebuild(ps);
  EXPECT_EQ(cells.report().wrapped, 0) << "positions the first build wrapped were still outside";
  expect_cell_pairs(ps, cells, 1.0, iota_ids(v.size()), "after wrapping");
}

}  // namespace
