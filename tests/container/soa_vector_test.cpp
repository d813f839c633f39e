// SPDX-License-Identifier: Apache-2.0
#include <strata/container/soa_vector.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace strata_test;
using strata::memory_space;
using strata::soa_vector;

template <class T>
class SoaVector : public ::testing::Test {};
using Records = ::testing::Types<particle, mixed, three_bytes, nested_particle, cell_record, big_record>;
TYPED_TEST_SUITE(SoaVector, Records);

// Column L of v, fetched to the host, equals leaf L of the reference records.
template <class T, memory_space S>
void expect_columns(const soa_vector<T, S>& v, const std::vector<T>& ref) {
  strata::reflect::for_each_leaf<T>([&](auto f) {
    constexpr std::size_t L = decltype(f)::value;
    auto col = v.template column<L>();
    ASSERT_EQ(col.size(), ref.size());
    auto host = fetch(col.data(), col.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_EQ(std::memcmp(&host[i], &strata::reflect::leaf<L>(ref[i]), sizeof host[i]), 0)
          << "column " << strata::reflect::leaf_name<T, L>() << " record " << i;
  });
}

template <class T, memory_space S>
void expect_equal(const soa_vector<T, S>& v, const std::vector<T>& ref) {
  auto out = poisoned<T>(v.size());
  v.copy_to_host(std::span<T>(out));
  ASSERT_EQ(out.size(), ref.size());
  EXPECT_EQ(first_difference<T>(out, ref), -1);
}

TYPED_TEST(SoaVector, RoundTripAndLayoutForEverySize) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  using L = strata::soa_layout<T>;
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    soa_vector<T> v(ref);
    EXPECT_EQ(v.size(), n);
    EXPECT_GE(v.capacity(), n);
    EXPECT_EQ(v.capacity() % L::capacity_quantum, 0u);
    for (std::size_t i = 0; i < L::leaves && n; ++i)
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.view().column_bytes(i)) % strata::column_alignment, 0u);
    expect_equal(v, ref);
    expect_columns(v, ref);
    EXPECT_EQ(first_difference<T>(v.to_host(), ref), -1);
  }
}

TYPED_TEST(SoaVector, SizeAndValueConstructors) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(3), std::size_t(99991)}) {
    soa_vector<T> zeros(n);
    T zero;
    std::memset(&zero, 0, sizeof zero);
    expect_equal(zeros, std::vector<T>(n, zero));
    T value = random_records<T>(1, 7)[0];
    soa_vector<T> filled(n, value);
    expect_equal(filled, std::vector<T>(n, value));
  }
  soa_vector<T> il{random_records<T>(2)[0], random_records<T>(2)[1]};
  expect_equal(il, random_records<T>(2));
}

TYPED_TEST(SoaVector, ResizeReserveClearKeepRecords) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto ref = random_records<T>(1000);
  soa_vector<T> v(ref);
  v.reserve(5000);
  EXPECT_GE(v.capacity(), 5000u);
  expect_equal(v, ref);
  T value = random_records<T>(1, 3)[0];
  v.resize(1500, value);  // grow within capacity
  ref.resize(1500, value);
  expect_equal(v, ref);
  v.resize(10);  // shrink, then grow: the old records past 10 must not come back
  ref.resize(10);
  T zero;
  std::memset(&zero, 0, sizeof zero);
  v.resize(2000);
  ref.resize(2000, zero);
  expect_equal(v, ref);
  v.resize(100000, value);  // grow past capacity: reallocation keeps the prefix
  ref.resize(100000, value);
  expect_equal(v, ref);
  v.clear();
  EXPECT_EQ(v.size(), 0u);
  EXPECT_TRUE(v.empty());
  EXPECT_GE(v.capacity(), 100000u);
}

TYPED_TEST(SoaVector, CopyIsDeepMoveEmptiesSwapExchanges) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto a = random_records<T>(333, 1), b = random_records<T>(77, 2);
  soa_vector<T> va(a), vb(b);
  soa_vector<T> copy = va;
  copy.set(5, b[0]);
  expect_equal(va, a);  // the original did not change
  EXPECT_TRUE(same_bits(copy.get(5), b[0]));
  soa_vector<T> moved = std::move(copy);
  EXPECT_EQ(copy.size(), 0u);
  EXPECT_EQ(moved.size(), 333u);
  va.swap(vb);
  expect_equal(va, b);
  expect_equal(vb, a);
  vb = va;
  expect_equal(vb, b);
}

TYPED_TEST(SoaVector, HostElementAccess) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto ref = random_records<T>(50);
  soa_vector<T> v(ref);
  for (std::size_t i : {0, 17, 49}) EXPECT_TRUE(same_bits(T(v[i]), ref[i]));
  v[17] = ref[3];
  ref[17] = ref[3];
  expect_equal(v, ref);
  EXPECT_THROW(v.get(50), std::out_of_range);
  EXPECT_THROW(v.set(50, ref[0]), std::out_of_range);
}

TYPED_TEST(SoaVector, MirrorsAndStreamOrderedCopies) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto ref = random_records<T>(99991);
  soa_vector<T> dev(ref);
  strata::host_soa_vector<T> host(dev);
  expect_equal(host, ref);
  expect_columns(host, ref);
  strata::pinned_soa_vector<T> pinned(ref.size());
  dev.copy_to_async(pinned, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(pinned, ref);
  soa_vector<T> back(host);
  expect_equal(back, ref);
  strata::host_soa_vector<T> wrong(3);
  EXPECT_THROW(dev.copy_to_async(wrong, strata::stream_t{}), strata::size_error);
}

TEST(SoaVectorErrors, OutOfMemoryLeavesContainerIntact) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(1000);
  soa_vector<particle> v(ref);
  std::size_t cap = v.capacity();
  EXPECT_THROW(v.resize(v.max_size() + 1), strata::out_of_memory);
  EXPECT_THROW(v.reserve(std::size_t(1) << 58), std::bad_alloc);  // 2^58 records: no machine has it
  EXPECT_EQ(v.size(), 1000u);
  EXPECT_EQ(v.capacity(), cap);
  expect_equal(v, ref);
  try {
    v.reserve(std::size_t(1) << 58);
  } catch (const strata::out_of_memory& e) {
    EXPECT_GT(e.bytes(), std::size_t(1) << 60);
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
  }
}
