// SPDX-License-Identifier: Apache-2.0
#include <strata/container/aosoa_vector.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/convert/convert.hpp>
#include <strata/iterator/packet.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <thrust/transform.h>

#include <cstring>

using namespace strata_test;
using strata::aosoa_vector;
using strata::memory_space;

static_assert(strata::aosoa_mapping<particle>::block == 32, "32 fp32 records: 128 bytes of each leaf per block");
static_assert(strata::aosoa_mapping<particle>::block_bytes == 7 * 128);
static_assert(strata::aosoa_mapping<three_bytes>::block == 128);
static_assert(strata::layout::columnar_mapping<strata::aosoa_mapping<mixed, 64>>);
static_assert(strata::aosoa_mapping<mixed, 64>::column_offset(0, 1) == 64 * 8 && strata::aosoa_mapping<mixed, 64>::block_bytes == 64 * 15);
static_assert(std::is_trivially_copyable_v<strata::aosoa_view<particle>>);

template <class T>
class Aosoa : public ::testing::Test {};
using Records = ::testing::Types<particle, mixed, three_bytes, nested_particle, cell_record, big_record, with_opaque>;
TYPED_TEST_SUITE(Aosoa, Records);

// The allocation's bytes, fetched to the host: leaf L of record i sits where the mapping says.
template <class T, std::size_t N, memory_space S>
void expect_mapped(const aosoa_vector<T, N, S>& v, const std::vector<T>& ref) {
  using M = strata::aosoa_mapping<T, N>;
  ASSERT_EQ(v.allocated_bytes(), M::bytes(v.capacity()));
  if (v.capacity() == 0) return;
  const auto* base = v.view().column_bytes(0);
  auto bytes = fetch(base, v.allocated_bytes());
  for (std::size_t i = 0; i < ref.size(); ++i)
    strata::reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      ASSERT_EQ(std::memcmp(bytes.data() + M::leaf_offset(v.capacity(), i, L), &strata::reflect::leaf<L>(ref[i]), M::leaf_sizes[L]), 0)
          << "leaf " << strata::reflect::leaf_name<T, L>() << " record " << i;
    });
}

template <class T, std::size_t N, memory_space S>
void expect_equal(const aosoa_vector<T, N, S>& v, const std::vector<T>& ref) {
  ASSERT_EQ(v.size(), ref.size());
  EXPECT_EQ(first_difference<T>(v.to_host(), ref), -1);
}

TYPED_TEST(Aosoa, RoundTripAndPlacementForEverySize) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    aosoa_vector<T> v(ref);
    EXPECT_EQ(v.capacity() % strata::aosoa_mapping<T>::block, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.view().column_bytes(0)) % strata::column_alignment, 0u);
    expect_equal(v, ref);
    if (n <= 100000) expect_mapped(v, ref);
  }
}

TYPED_TEST(Aosoa, GrowAppendAndHostAccessKeepEveryRecord) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  constexpr std::size_t b = strata::aosoa_mapping<T>::block;
  auto ref = random_records<T>(3 * b + 5);
  aosoa_vector<T> v;
  for (std::size_t i = 0; i < b + 3; ++i) v.push_back(ref[i]);  // grows through several reallocations
  std::vector<T> want(ref.begin(), ref.begin() + std::ptrdiff_t(b + 3));
  expect_equal(v, want);
  // Appending at b + 3 (not a block boundary): the record-by-record copy.
  const aosoa_vector<T> more(std::vector<T>(ref.begin() + std::ptrdiff_t(b + 3), ref.end()));
  v.append(more, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(v, ref);
  expect_mapped(v, ref);
  // Appending at a block boundary (byte runs) and from a host range.
  aosoa_vector<T> w(std::vector<T>(ref.begin(), ref.begin() + std::ptrdiff_t(2 * b)));
  w.append(std::span<const T>(ref.data() + 2 * b, ref.size() - 2 * b));
  expect_equal(w, ref);
  // Host element access, copies, reserve and shrinking keep the records.
  T r = ref[1];
  w.set(2 * b + 1, r);
  EXPECT_TRUE(same_bits(w.get(2 * b + 1), r));
  auto ref2 = ref;
  ref2[2 * b + 1] = r;
  aosoa_vector<T> copy(w);
  copy.reserve(10 * b + 1);
  EXPECT_GE(copy.capacity(), 10 * b + 1);
  expect_equal(copy, ref2);
  copy.resize(b + 1);
  expect_equal(copy, std::vector<T>(ref2.begin(), ref2.begin() + std::ptrdiff_t(b + 1)));
  // Growing with a value writes it to every new record, across block boundaries.
  copy.resize(3 * b + 2, ref[0]);
  std::vector<T> grown(ref2.begin(), ref2.begin() + std::ptrdiff_t(b + 1));
  grown.resize(3 * b + 2, ref[0]);
  expect_equal(copy, grown);
  // Growing without one zeroes the new records.
  copy.resize(b);
  copy.resize(2 * b + 7);
  std::vector<T> zeroed(grown.begin(), grown.begin() + std::ptrdiff_t(b));
  T zero;
  std::memset(static_cast<void*>(&zero), 0, sizeof zero);
  zeroed.resize(2 * b + 7, zero);
  expect_equal(copy, zeroed);
  EXPECT_THROW(copy.get(copy.size()), std::out_of_range);
}

TYPED_TEST(Aosoa, ConvertsToAndFromAosAndSoa) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    const strata::aos_vector<T> aos(ref);
    const strata::soa_vector<T> soa(ref);
    auto from_aos = strata::convert_to<aosoa_vector<T>>(aos);
    expect_equal(from_aos, ref);
    auto from_soa = strata::convert_to<aosoa_vector<T>>(soa);
    expect_equal(from_soa, ref);
    EXPECT_EQ(first_difference<T>(strata::convert_to<strata::aos_vector<T>>(from_soa).to_host(), ref), -1);
    EXPECT_EQ(first_difference<T>(strata::convert_to<strata::soa_vector<T>>(from_aos).to_host(), ref), -1);
    // Sizes must agree; a refused call writes nothing.
    aosoa_vector<T> wrong(n + 1);
    EXPECT_THROW(strata::convert(aos, wrong), strata::size_error);
    EXPECT_THROW(strata::convert(soa, wrong), strata::size_error);
  }
}

TYPED_TEST(Aosoa, ColumnarToColumnarTakesPacketsWhereLeavesAllow) {
  using T = TypeParam;
  auto ref = random_records<T>(1000);
  strata::soa_vector<T> soa(ref);
  aosoa_vector<T> a(ref.size());
  const auto p = strata::convert(soa, a);
  EXPECT_EQ(p == strata::path::vectorized, strata::layout::record_descriptor<T>::all_leaves_vectorizable);
  strata::synchronize(strata::stream_t{});
  expect_equal(a, ref);
}

TEST(AosoaAlgorithms, TransformForEachAndReduceMatchTheSoaResults) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    aosoa_vector<particle> a(ref), b(n);
    EXPECT_EQ(strata::transform(a, b, drift{}), strata::path::vectorized);
    EXPECT_EQ(strata::for_each(b, kick{}), strata::path::vectorized);
    std::vector<particle> want = ref;
    for (auto& p : want) p = drift{}(p), kick{}(p);
    strata::synchronize(strata::stream_t{});
    expect_equal(b, want);
    double e = 0;
    for (auto& p : want) e += kinetic_energy{}(p);
    EXPECT_NEAR(strata::transform_reduce(b, kinetic_energy{}, 0.0, plus_d{}), e, 1e-9 * (1 + std::abs(e)));
    // Projections read and write their leaves only.
    auto proj = strata::project<&particle::vx, &particle::mass>(b);
    EXPECT_NEAR(strata::transform_reduce(proj, kinetic_energy{}, 0.0, plus_d{}), [&] {
      double s = 0;
      for (auto& p : want) s += 0.5 * double(p.mass) * double(p.vx) * p.vx;
      return s;
    }(), 1e-9 * (1 + std::abs(e)));
  }
}

TEST(AosoaAlgorithms, RecordIteratorsAndPacketsForThrust) {
  auto ref = random_records<particle>(777);
  aosoa_vector<particle> a(ref), b(ref.size());
  thrust::transform(a.begin(), a.end(), b.begin(), drift{});
  std::vector<particle> want = ref;
  for (auto& p : want) p = drift{}(p);
  expect_equal(b, want);
  auto pk = strata::packets(a.view());
  EXPECT_EQ(pk.size(), (777 + 3) / 4);
  auto pb = strata::packets(b.view());
  thrust::transform(strata::packets_begin(pk), strata::packets_end(pk), strata::packets_begin(pb), strata::per_record(drift{}));
  expect_equal(b, want);
  // Proxies reach single leaves across block boundaries.
  particle p33 = a.get(33);
  EXPECT_EQ(p33.mass, ref[33].mass);
}

TEST(AosoaAlgorithms, OtherBlockSizesAndHostMemory) {
  auto ref = random_records<particle>(5000);
  aosoa_vector<particle, 16> a16(ref);
  aosoa_vector<particle, 256> a256(ref.size());
  EXPECT_EQ(strata::convert(a16, a256), strata::path::vectorized);
  strata::synchronize(strata::stream_t{});
  expect_equal(a256, ref);
  // host_aosoa_vector / pinned_aosoa_vector name the host spaces as host_soa_vector does.
  static_assert(std::is_same_v<strata::host_aosoa_vector<particle>, aosoa_vector<particle, 32, memory_space::host>>);
  static_assert(std::is_same_v<strata::host_aosoa_vector<mixed, 64>, aosoa_vector<mixed, 64, memory_space::host>>);
  static_assert(std::is_same_v<strata::pinned_aosoa_vector<particle>, aosoa_vector<particle, 32, memory_space::pinned>>);
  strata::host_aosoa_vector<particle> h(ref);
  expect_equal(h, ref);
  EXPECT_EQ(h.location().space, memory_space::host);
  aosoa_vector<particle> d(h.size());
  h.copy_to_async(d, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(d, ref);
  // Host records appended to a device container at a position inside a block: staged, then copied
  // record by record.
  aosoa_vector<particle> e(std::vector<particle>(ref.begin(), ref.begin() + 37));
  const aosoa_vector<particle, 32, memory_space::host> rest(std::vector<particle>(ref.begin() + 37, ref.end()));
  e.append(rest, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(e, ref);
}

// Columnar copies between foreign views that end where their memory does: the last unit of each
// leaf moves element by element, and nothing past n is read or written.
TEST(AosoaAlgorithms, ConvertBetweenForeignViewsTouchesOnlyTheirRecords) {
  for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(1001), std::size_t(4099)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n);
    auto sentinel = random_records<mixed>(n + 40, 7);
    const strata::soa_vector<mixed> src_owner(ref);
    strata::soa_vector<mixed> dst_owner(sentinel);
    auto c = [&](auto col) { return cuda::std::span<const std::remove_const_t<typename decltype(col)::element_type>>(col.data(), n); };
    auto m = [&](auto col) { return cuda::std::span<typename decltype(col)::element_type>(col.data(), n); };
    auto src = strata::make_soa_view<mixed>(strata::index_t(n), strata::alignment::vector, c(src_owner.column<0>()), c(src_owner.column<1>()),
                                            c(src_owner.column<2>()), c(src_owner.column<3>()));
    auto dst = strata::make_soa_view<mixed>(strata::index_t(n), strata::alignment::vector, m(dst_owner.column<0>()), m(dst_owner.column<1>()),
                                            m(dst_owner.column<2>()), m(dst_owner.column<3>()));
    aosoa_vector<mixed> mid(n);
    EXPECT_EQ(strata::convert(src, mid), strata::path::vectorized);
    EXPECT_EQ(strata::convert(mid, dst), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    auto want = sentinel;
    std::copy(ref.begin(), ref.end(), want.begin());
    EXPECT_EQ(first_difference<mixed>(dst_owner.to_host(), want), -1);
  }
}

// Columnar -> columnar conversion between every pair of SoA and AoSoA 16 / 32 / 64, for records of
// mixed leaf widths (groups of 8 records of `mixed`, one record of `big_record` a thread) and the
// particle (groups of 4), at sizes that end inside a group, a block and a 16-record unit.
template <class T, class Dst, class Src>
void convert_pair(const Src& src, const std::vector<T>& ref) {
  Dst dst(poisoned<T>(ref.size()));
  EXPECT_EQ(strata::convert(src, dst), strata::path::vectorized);
  strata::synchronize(strata::stream_t{});
  ASSERT_EQ(first_difference<T>(dst.to_host(), ref), -1) << describe_difference<T>(dst.to_host(), ref);
}
template <class T, class Src>
void convert_to_every_layout(const Src& src, const std::vector<T>& ref) {
  convert_pair<T, strata::soa_vector<T>>(src, ref);
  convert_pair<T, aosoa_vector<T, 16>>(src, ref);
  convert_pair<T, aosoa_vector<T, 32>>(src, ref);
  convert_pair<T, aosoa_vector<T, 64>>(src, ref);
}
template <class T>
void convert_every_pair() {
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(17), std::size_t(1000), std::size_t(99991)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    convert_to_every_layout<T>(strata::soa_vector<T>(ref), ref);
    convert_to_every_layout<T>(aosoa_vector<T, 16>(ref), ref);
    convert_to_every_layout<T>(aosoa_vector<T, 32>(ref), ref);
    convert_to_every_layout<T>(aosoa_vector<T, 64>(ref), ref);
  }
}
TEST(AosoaAlgorithms, ConvertBetweenEveryColumnarLayout) {
  STRATA_SEED_TRACE();
  convert_every_pair<mixed>();
  convert_every_pair<big_record>();
  convert_every_pair<particle>();
}
