// SPDX-License-Identifier: Apache-2.0
// Thrust algorithms over strata record iterators (SoA and AoS), each against a std:: reference.
#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/extrema.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/gather.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/scatter.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace strata_test;

static_assert(std::is_same_v<std::iterator_traits<strata::soa_vector<particle>::iterator>::difference_type, std::ptrdiff_t>);
static_assert(std::is_same_v<thrust::iterator_system_t<strata::soa_vector<particle>::iterator>, thrust::device_system_tag>);
static_assert(std::is_same_v<thrust::iterator_system_t<strata::host_soa_vector<particle>::iterator>, thrust::host_system_tag>);
static_assert(std::is_same_v<std::iterator_traits<strata::aos_vector<particle>::iterator>::value_type, particle>);

template <class C>
class RecordIterators : public ::testing::Test {};
using Containers = ::testing::Types<strata::soa_vector<particle>, strata::aos_vector<particle>>;
TYPED_TEST_SUITE(RecordIterators, Containers);

template <class C>
void expect_records(const C& v, const std::vector<particle>& ref) {
  auto out = poisoned<particle>(v.size());
  v.copy_to_host(std::span<particle>(out));
  ASSERT_EQ(out.size(), ref.size());
  EXPECT_EQ(first_difference<particle>(out, ref), -1);
}

TYPED_TEST(RecordIterators, TransformForEachFill) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    TypeParam in(ref), out(std::vector<particle>(n, particle{9, 9, 9, 9, 9, 9, 9}));
    thrust::transform(in.begin(), in.end(), out.begin(), drift{});
    std::vector<particle> want(n);
    std::transform(ref.begin(), ref.end(), want.begin(), drift{});
    expect_records(out, want);
    expect_records(in, ref);  // input untouched

    thrust::for_each(in.begin(), in.end(), double_mass{});
    for (auto& p : ref) p.mass *= 2.0f;
    expect_records(in, ref);

    particle value{1, 2, 3, 4, 5, 6, 7};
    thrust::fill(out.begin(), out.end(), value);
    expect_records(out, std::vector<particle>(n, value));
  }
}

TYPED_TEST(RecordIterators, ReduceTransformReduceCountMin) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    TypeParam v(ref);
    particle sum = thrust::reduce(v.begin(), v.end(), particle{}, add_particles{});
    double want_x = 0, want_m = 0;
    for (auto& p : ref) want_x += p.x, want_m += p.mass;
    EXPECT_NEAR(sum.x, want_x, 1e-4 * (1 + std::sqrt(double(n))));
    EXPECT_NEAR(sum.mass, want_m, 1e-4 * (1 + std::sqrt(double(n))));

    double e = thrust::transform_reduce(v.begin(), v.end(), kinetic_energy{}, 0.0, plus_d{});
    double want_e = 0;
    for (auto& p : ref) want_e += kinetic_energy{}(p);
    EXPECT_NEAR(e, want_e, 1e-9 * (1 + std::abs(want_e)));

    auto count = thrust::count_if(v.begin(), v.end(), heavy{});
    EXPECT_EQ(count, std::count_if(ref.begin(), ref.end(), heavy{}));

  }
}

// Kept apart: Thrust copies its (index, record) result to the host including the tuple's padding
// bytes, which compute-sanitizer's initcheck reports; gpu-check leaves this case out of initcheck.
TYPED_TEST(RecordIterators, MinElementUninitPadding) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    if (n == 0) continue;
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    TypeParam v(ref);
    auto it = thrust::min_element(v.begin(), v.end(), by_x{});
    auto want = std::min_element(ref.begin(), ref.end(), by_x{});
    EXPECT_EQ(it - v.begin(), want - ref.begin());
  }
}

TYPED_TEST(RecordIterators, SortByKeyGatherScatterCopyIf) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    std::mt19937_64 g(test_seed() + n);
    std::vector<int> cells(n);
    for (auto& c : cells) c = int(g() % 1000);

    // Sort particles by cell index (stable, so the reference order is unique).
    TypeParam v(ref);
    thrust::device_vector<int> keys(cells.begin(), cells.end());
    thrust::stable_sort_by_key(keys.begin(), keys.end(), v.begin());
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return cells[a] < cells[b]; });
    std::vector<particle> sorted(n);
    for (std::size_t i = 0; i < n; ++i) sorted[i] = ref[order[i]];
    expect_records(v, sorted);

    // Gather with a random map, scatter with a random permutation.
    std::vector<int> map(n), perm(n);
    for (auto& m : map) m = n ? int(g() % n) : 0;
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    TypeParam src(ref), dst(n);
    thrust::device_vector<int> dmap(map.begin(), map.end()), dperm(perm.begin(), perm.end());
    thrust::gather(dmap.begin(), dmap.end(), src.begin(), dst.begin());
    std::vector<particle> gathered(n), scattered(n);
    for (std::size_t i = 0; i < n; ++i) gathered[i] = ref[map[i]];
    expect_records(dst, gathered);
    thrust::scatter(src.begin(), src.end(), dperm.begin(), dst.begin());
    for (std::size_t i = 0; i < n; ++i) scattered[perm[i]] = ref[i];
    expect_records(dst, scattered);

    // Compaction into another container.
    TypeParam kept(n);
    auto end = thrust::copy_if(src.begin(), src.end(), kept.begin(), heavy{});
    kept.resize(std::size_t(end - kept.begin()));
    std::vector<particle> want;
    std::copy_if(ref.begin(), ref.end(), std::back_inserter(want), heavy{});
    expect_records(kept, want);
  }
}

TEST(ColumnAlgorithms, ScansOnAColumn) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<mixed>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n);
    strata::soa_vector<mixed> v(ref);
    auto cell = v.column<&mixed::cell>();
    // 16-bit outputs: sums wrap the same way whatever accumulator width a backend's scan uses.
    thrust::device_vector<std::uint16_t> inc(n), exc(n);
    thrust::inclusive_scan(thrust::device, cell.data(), cell.data() + n, inc.begin(), thrust::plus<std::uint16_t>{});
    thrust::exclusive_scan(thrust::device, cell.data(), cell.data() + n, exc.begin(), std::uint16_t(5), thrust::plus<std::uint16_t>{});
    thrust::host_vector<std::uint16_t> hi = inc, he = exc;
    std::uint16_t run = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(he[i], std::uint16_t(run + 5)) << i;
      run = std::uint16_t(run + ref[i].cell);
      ASSERT_EQ(hi[i], run) << i;
    }
  }
}
