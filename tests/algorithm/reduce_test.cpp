// Reductions: columns (aligned and unaligned spans), records through packets and records one by
// one, column statistics; against double-precision host references, every size.
#include <strata/algorithm/reduce.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace strata_test;

TEST(Reduce, ColumnSumMinAndByteMaxEverySizeAndOffset) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<mixed>()) {
    auto ref = random_records<mixed>(n);
    strata::soa_vector<mixed> v(ref);
    for (std::size_t skip : {0, 1, 2, 3}) {  // subspans that start off a 16-byte boundary
      if (skip > n) continue;
      SCOPED_TRACE("n=" + std::to_string(n) + " skip=" + std::to_string(skip));
      auto x = v.column<&mixed::x>().subspan(skip);
      float sum = strata::reduce(x, 0.5f, plus_f{});
      float mn = strata::reduce(x, std::numeric_limits<float>::infinity(), min_f{});
      auto flags = v.column<&mixed::flags>().subspan(skip);
      std::uint8_t mx = strata::reduce(flags, std::uint8_t(0), max_u8{});
      double want = 0.5;
      float want_min = std::numeric_limits<float>::infinity();
      std::uint8_t want_max = 0;
      for (std::size_t i = skip; i < n; ++i) {
        want += ref[i].x;
        want_min = std::min(want_min, ref[i].x);
        want_max = std::max(want_max, ref[i].flags);
      }
      EXPECT_NEAR(sum, want, 1e-5 * (1 + std::sqrt(double(n))) + 1e-6 * std::abs(want));
      EXPECT_EQ(mn, want_min);
      EXPECT_EQ(mx, want_max);
    }
  }
}

TEST(Reduce, KineticEnergyThroughPacketsProjectionsAndRecords) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    // Padding lanes hold large values: a reduction that counted them would be far off.
    strata::soa_vector<particle> v(std::vector<particle>(n + 3, particle{1e3f, 1e3f, 1e3f, 1e3f, 1e3f, 1e3f, 1e3f}));
    v.resize(n);
    strata::transform(strata::soa_vector<particle>(ref), v, identity_particle{});
    double want = 0;
    for (auto& p : ref) want += kinetic_energy{}(p);
    double tol = 1e-9 * (1 + std::abs(want));
    EXPECT_NEAR(strata::transform_reduce(v, kinetic_energy{}, 0.0, plus_d{}), want, tol);
    auto proj = strata::project<&particle::vx, &particle::vy, &particle::vz, &particle::mass>(v);
    EXPECT_NEAR(strata::transform_reduce(proj, kinetic_energy{}, 0.0, plus_d{}), want, tol);
    auto c = [&](auto col) { return cuda::std::span<const float>(col.data(), n); };
    auto element = strata::make_soa_view<particle>(strata::index_t(n), strata::alignment::element, c(v.column<0>()),
                                                   c(v.column<1>()), c(v.column<2>()), c(v.column<3>()),
                                                   c(v.column<4>()), c(v.column<5>()), c(v.column<6>()));
    EXPECT_NEAR(strata::transform_reduce(element, kinetic_energy{}, 0.0, plus_d{}), want, tol);
  }
}

TEST(Statistics, MatchesTwoPassReferenceAndStaysStable) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    for (auto& p : ref) p.mass = 1.0e4f + p.mass;  // a large offset: sum-of-squares would lose it
    strata::soa_vector<particle> v(ref);
    auto s = strata::statistics(v.column<&particle::mass>());
    double mean = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
    for (auto& p : ref) mean += p.mass, mn = std::min(mn, double(p.mass)), mx = std::max(mx, double(p.mass));
    mean = n ? mean / double(n) : 0;
    for (auto& p : ref) m2 += (p.mass - mean) * (p.mass - mean);
    EXPECT_EQ(s.count, double(n));
    if (n == 0) continue;
    EXPECT_NEAR(s.mean, mean, 1e-9 * std::abs(mean));
    EXPECT_NEAR(s.variance(), m2 / double(n), 1e-9 + 1e-6 * m2 / double(n));
    EXPECT_EQ(s.min, mn);
    EXPECT_EQ(s.max, mx);
    EXPECT_NEAR(s.sum(), mean * double(n), 1e-9 * std::abs(mean * double(n)));
  }
}
