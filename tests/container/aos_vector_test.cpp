#include <strata/container/aos_vector.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

using namespace strata_test;
using strata::aos_vector;

static_assert(std::is_trivially_copyable_v<strata::aos_view<particle>>);
static_assert(!std::is_convertible_v<strata::aos_view<const particle>, strata::aos_view<particle>>);
static_assert(std::is_convertible_v<strata::aos_view<particle>, strata::aos_view<const particle>>);

template <class T>
class AosVector : public ::testing::Test {};
using Records = ::testing::Types<particle, mixed, three_bytes, floats_then_vec4, nested_particle, big_record>;
TYPED_TEST_SUITE(AosVector, Records);

template <class T, strata::memory_space S>
void expect_equal(const aos_vector<T, S>& v, const std::vector<T>& ref) {
  auto out = poisoned<T>(v.size());
  v.copy_to_host(std::span<T>(out));
  EXPECT_EQ(first_difference<T>(out, ref), -1);
}

TYPED_TEST(AosVector, RoundTripEverySizeAndAlignedStorage) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    aos_vector<T> v(ref);
    EXPECT_EQ(v.size(), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % alignof(strata::layout::aligned_record<T>), 0u);
    expect_equal(v, ref);
  }
}

TYPED_TEST(AosVector, ContainerOperations) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto ref = random_records<T>(777);
  aos_vector<T> v(ref);
  T value = random_records<T>(1, 5)[0];
  v.resize(5000, value);
  ref.resize(5000, value);
  expect_equal(v, ref);
  v.resize(3);
  ref.resize(3);
  T zero;
  std::memset(&zero, 0, sizeof zero);
  v.resize(10);
  ref.resize(10, zero);
  expect_equal(v, ref);
  aos_vector<T> copy = v;
  copy[2] = value;
  EXPECT_TRUE(same_bits(T(copy[2]), value));
  expect_equal(v, ref);
  strata::host_aos_vector<T> host(v);
  expect_equal(host, ref);
  aos_vector<T> moved = std::move(copy);
  EXPECT_EQ(copy.size(), 0u);
  v.reserve(100000);
  expect_equal(v, ref);
  v.clear();
  EXPECT_TRUE(v.empty());
  aos_vector<T> n(4, value);
  expect_equal(n, std::vector<T>(4, value));
  EXPECT_THROW(n.get(4), std::out_of_range);
}

// aos_vector is the generic container over the padded AoS mapping: what every strata container
// does (push_back through reallocations, appends of host ranges and of other containers, copies
// between memory spaces, host element access), checked against a std::vector of the same records.
TYPED_TEST(AosVector, GenericContainerOperations) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  const auto ref = random_records<T>(3000, 11);
  aos_vector<T> v;
  for (std::size_t i = 0; i < 37; ++i) v.push_back(ref[i]);  // several reallocations
  EXPECT_EQ(v.size(), 37u);
  EXPECT_GE(v.capacity(), 37u);
  EXPECT_EQ(v.allocated_bytes(), v.capacity() * sizeof(strata::layout::aligned_record<T>));
  v.append(std::span<const T>(ref.data() + 37, 1000));
  const aos_vector<T> tail(std::vector<T>(ref.begin() + 1037, ref.end()));
  v.append(tail, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(v, ref);
  strata::host_aos_vector<T> host(v.size());
  v.copy_to_async(host, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(host, ref);
  EXPECT_TRUE(same_bits(T(v[2999]), ref[2999]));
  EXPECT_THROW((void)v.get(3000), std::out_of_range);
  strata::host_aos_vector<T> wrong(5);
  EXPECT_THROW(v.copy_to_async(wrong, strata::stream_t{}), strata::size_error);
}

TEST(AosView, ProxyAndForeignChecks) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(8);
  strata::host_aos_vector<particle> v(ref);
  auto view = v.view();
  strata::get<&particle::y>(view[2]) = 9.0f;
  view[3] = view[1];
  ref[2].y = 9.0f;
  ref[3] = ref[1];
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  using rec = strata::layout::aligned_record<particle>;
  // The count first, as make_soa_view takes it.
  auto ok = strata::make_aos_view<particle>(8, cuda::std::span<rec>(v.data(), 8));
  EXPECT_EQ(ok.size(), 8);
  EXPECT_EQ(ok.data(), v.data());
  EXPECT_THROW((void)strata::make_aos_view<particle>(8, cuda::std::span<rec>(v.data(), 4)), strata::size_error);
  rec* shifted = reinterpret_cast<rec*>(reinterpret_cast<char*>(v.data()) + 4);
  EXPECT_THROW((void)strata::make_aos_view<particle>(4, cuda::std::span<rec>(shifted, 4)), strata::misaligned_pointer);
  auto read_only = strata::make_aos_view<const particle>(5, cuda::std::span<const rec>(v.data(), 8));
  EXPECT_EQ(read_only.size(), 5);
  EXPECT_TRUE(same_bits(particle(read_only[4]), ref[4]));
  // The old order still compiles (deprecated: tests/compile_fail/make_aos_view_old_order.cpp shows the warning).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  auto old_order = strata::make_aos_view<particle>(cuda::std::span<rec>(v.data(), 8), 6);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  EXPECT_EQ(old_order.size(), 6);
  EXPECT_EQ(old_order.data(), v.data());
}
