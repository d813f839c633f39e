// strata::transform / for_each: the vectorized path on containers and projections, the scalar
// path on views that cannot take vector access, each against a plain loop, every size.
#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

using namespace strata_test;

template <class T, class C>
std::vector<T> host_of(const C& v) {
  auto out = poisoned<T>(v.size());
  v.copy_to_host(std::span<T>(out));
  return out;
}

template <class T, class F>
void check_transform(F f, strata::path want) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    strata::soa_vector<T> in(ref), out(poisoned<T>(n));
    EXPECT_EQ(strata::transform(in, out, f), want);
    strata::synchronize(strata::stream_t{});
    std::vector<T> expect(n);
    std::transform(ref.begin(), ref.end(), expect.begin(), f);
    auto got_out = host_of<T>(out), got_in = host_of<T>(in);
    ASSERT_EQ(first_difference<T>(got_in, ref), -1) << "input changed: " << describe_difference<T>(got_in, ref);
    ASSERT_EQ(first_difference<T>(got_out, expect), -1) << describe_difference<T>(got_out, expect);
  }
}

TEST(Transform, VectorizedOnContainers) {
  check_transform<particle>(drift{}, strata::path::vectorized);
  check_transform<mixed>(bump_mixed{}, strata::path::vectorized);
}

TEST(Transform, ScalarForRecordsWithUnvectorizableFields) {
  check_transform<mixed_convert>(move_convert{}, strata::path::scalar);
}

TEST(Transform, ScalarFallbackOnElementAlignedViewsGivesTheSameResult) {
  STRATA_SEED_TRACE();
  const std::size_t n = 99991;
  auto ref = random_records<particle>(n);
  strata::soa_vector<particle> v(ref);
  // A view whose mass column starts one element late: legal for records, not for 16-byte vectors.
  strata::soa_vector<particle> shifted_mass(n + 1);
  auto c = [&](auto col) { return cuda::std::span<float>(col.data(), n); };
  auto view = strata::make_soa_view<particle>(strata::index_t(n), strata::alignment::element, c(v.column<0>()), c(v.column<1>()),
                                              c(v.column<2>()), c(v.column<3>()), c(v.column<4>()), c(v.column<5>()),
                                              cuda::std::span<float>(shifted_mass.column<6>().data() + 1, n));
  EXPECT_EQ(strata::transform(v, view, drift{}), strata::path::scalar);
  strata::synchronize(strata::stream_t{});
  auto x = fetch(v.column<0>().data(), n);
  auto m = fetch(shifted_mass.column<6>().data() + 1, n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(x[i], drift{}(ref[i]).x) << i;
    ASSERT_EQ(m[i], ref[i].mass) << i;
  }
}

TEST(Transform, ProjectionsReadAndWriteOnlyTheirColumns) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> v(ref);
    auto in = strata::project<&particle::x, &particle::vx>(v);
    auto out = strata::project<&particle::x>(v);
    EXPECT_EQ(strata::transform(in, out, add_vx_to_x{}), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    for (auto& p : ref) p.x += p.vx;  // y is written by the functor but not projected
    ASSERT_EQ(first_difference<particle>(host_of<particle>(v), ref), -1);
  }
}

TEST(Transform, SizeMismatchThrows) {
  strata::soa_vector<particle> a(10), b(11);
  EXPECT_THROW(strata::transform(a, b, drift{}), strata::size_error);
}

TEST(ForEach, KickEveryRecordBothPaths) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> v(ref);
    EXPECT_EQ(strata::for_each(v, kick{}), strata::path::vectorized);
    EXPECT_EQ(strata::for_each(strata::project<&particle::x, &particle::vx>(v), kick{}), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    for (auto& p : ref) {
      kick{}(p);
      p.vx -= p.x * 0.125f;  // the projection kicked vx once more (y, z not projected)
    }
    ASSERT_EQ(first_difference<particle>(host_of<particle>(v), ref), -1);
  }
}
