// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA conversion: random records, every size of the list, source and destination pointers
// offset by 0, 4 and 8 bytes, results bit for bit equal to a plain loop, no byte outside the
// destination touched.
#include <strata/container/aosoa_vector.hpp>
#include <strata/convert/convert.hpp>

#include "common/foreign.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

using namespace strata_test;

template <class T>
class Convert : public ::testing::Test {};
// sixteen_floats, padded128: records whose transpose tiles swizzle 4- and 8-byte units (see
// convert/transpose.hpp), padded128 with padding; padded128, floats48, mixed80: leaves of one type
// share a tile's lanes.
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates three of them.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Records = ::testing::Types<mixed, big_record, with_bools>;
#else
using Records = ::testing::Types<particle, with_float3, eight_floats, mixed, mixed_convert, nested_particle, cell_record, big_record,
                                 sixteen_floats, padded128, floats48, mixed80, with_bools>;
#endif
static_assert(strata::detail::warp_tile<sixteen_floats, sizeof(sixteen_floats)>::swizzle_unit == 4);
static_assert(strata::detail::warp_tile<padded128, sizeof(padded128)>::swizzle_unit == 8);
TYPED_TEST_SUITE(Convert, Records);

constexpr std::size_t guard = 64;  // poisoned bytes either side of every destination

// Device copy of n records at a byte offset from a 256-aligned base, with poisoned guard bytes.
template <class T>
struct device_aos {
  device_aos(std::size_t n, std::size_t offset)
      : n(n), offset(offset), buf(guard + offset + n * sizeof(T) + guard, strata::memory_space::device) {
    std::vector<unsigned char> poison(buf.bytes(), 0xA5);
    strata::copy_bytes(buf.data(), poison.data(), poison.size());
  }
  T* data() const { return reinterpret_cast<T*>(buf.data() + guard + offset); }
  void upload(const std::vector<T>& v) { strata::copy_bytes(data(), v.data(), v.size() * sizeof(T)); }
  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> b(buf.bytes());
    strata::copy_bytes(b.data(), buf.data(), b.size());
    return b;
  }
  std::size_t n, offset;
  strata::buffer buf;
};

template <class T>
void expect_guards_intact(const device_aos<T>& d) {
  auto b = d.bytes();
  for (std::size_t i = 0; i < guard + d.offset; ++i) ASSERT_EQ(b[i], 0xA5) << "byte before the destination written: " << i;
  for (std::size_t i = guard + d.offset + d.n * sizeof(T); i < b.size(); ++i)
    ASSERT_EQ(b[i], 0xA5) << "byte after the destination written: " << i;
}

TYPED_TEST(Convert, DeviceAosToSoaAndBack) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto sizes = sizes_for<T>();
  sizes.push_back(3 * strata::soa_layout<T>::capacity_quantum * 1000 + 17);
  for (std::size_t n : sizes) {
    for (std::size_t offset : {0, 4, 8}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      auto ref = random_records<T>(n, offset);
      device_aos<T> src(n, offset);
      strata::soa_vector<T> soa(poisoned<T>(n));
      if (offset % alignof(T) != 0) {
        EXPECT_THROW(strata::aos_to_soa(src.data(), strata::index_t(n), soa.view()), strata::misaligned_pointer);
        continue;
      }
      src.upload(ref);
      strata::aos_to_soa(src.data(), strata::index_t(n), soa.view());
      strata::synchronize(strata::stream_t{});
      ASSERT_EQ(first_difference<T>(soa.to_host(), ref), -1);

      device_aos<T> dst(n, offset);
      strata::soa_to_aos(soa.const_view(), dst.data());
      strata::synchronize(strata::stream_t{});
      auto back = fetch(dst.data(), n);
      ASSERT_EQ(first_difference<T>(back, ref), -1);
      expect_guards_intact(dst);
    }
  }
}

TYPED_TEST(Convert, PaddedAosContainersToSoaAndBack) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n, 11);
    strata::aos_vector<T> aos(ref);
    strata::soa_vector<T> soa = strata::to_soa(aos);
    ASSERT_EQ(first_difference<T>(soa.to_host(), ref), -1);
    strata::aos_vector<T> again = strata::to_aos(soa);
    ASSERT_EQ(first_difference<T>(again.to_host(), ref), -1);
    // Padding bytes of the padded records come out zero.
    std::vector<strata::layout::aligned_record<T>> raw(n);
    strata::copy_bytes(raw.data(), again.data(), n * sizeof(raw[0]));
    for (std::size_t i = 0; i < n; ++i) {
      auto* b = reinterpret_cast<const unsigned char*>(&raw[i]);
      for (std::size_t k = sizeof(T); k < sizeof(raw[i]); ++k) ASSERT_EQ(b[k], 0) << "record " << i;
    }
  }
}

// Conversions into and out of a caller's columns: every record lands, nothing past the view's size
// is written (its last column units go element by element), whatever the size and slack.
TYPED_TEST(Convert, ForeignSoaViewsEndWhereTheirMemoryDoes) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>())
    for (std::size_t slack : {0, 5}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " slack=" + std::to_string(slack));
      auto ref = random_records<T>(n, 29);
      device_aos<T> src(n, 0);
      src.upload(ref);
      foreign_columns<T> cols(n, slack);
      strata::aos_to_soa(src.data(), strata::index_t(n), cols.view());
      strata::synchronize(strata::stream_t{});
      ASSERT_EQ(first_difference<T>(cols.download(), ref), -1) << describe_difference<T>(cols.download(), ref);
      EXPECT_EQ(cols.damage(), "");
      device_aos<T> back(n, 0);
      strata::soa_to_aos(strata::soa_view<const T>(cols.view()), back.data());
      strata::synchronize(strata::stream_t{});
      ASSERT_EQ(first_difference<T>(fetch(back.data(), n), ref), -1);
      expect_guards_intact(back);
    }
}

// Records adapted with their members in any order convert field for field, on the device's tile
// path too (the column of `a` holds the a's).
template <class T>
class AdaptedOrder : public ::testing::Test {};
using Orders = ::testing::Types<order_abc, order_acb, order_bac, order_bca, order_cab, order_cba, pair_ab>;
TYPED_TEST_SUITE(AdaptedOrder, Orders);

TYPED_TEST(AdaptedOrder, ColumnsHoldTheirOwnMembers) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(1), std::size_t(64), std::size_t(99991)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<T> ref(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::memset(static_cast<void*>(&ref[i]), 0, sizeof(T));
      ref[i].a = decltype(ref[i].a)(i) + 0.5f;
      ref[i].b = decltype(ref[i].b)(1000 + i);
    }
    strata::soa_vector<T> s(ref);
    auto a = fetch(s.template column<&T::a>().data(), n);
    auto b = fetch(s.template column<&T::b>().data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(a[i], ref[i].a) << "record " << i;
      ASSERT_EQ(b[i], ref[i].b) << "record " << i;
    }
    const T r5 = s[std::min<std::size_t>(5, n - 1)];
    EXPECT_EQ(r5.a, ref[std::min<std::size_t>(5, n - 1)].a);
    EXPECT_EQ(r5.b, ref[std::min<std::size_t>(5, n - 1)].b);
    EXPECT_EQ(first_difference<T>(s.to_host(), ref), -1);
    strata::aos_vector<T> aos(ref);
    EXPECT_EQ(first_difference<T>(strata::to_aos(s).to_host(), ref), -1);
    EXPECT_EQ(first_difference<T>(strata::to_soa(aos).to_host(), ref), -1);
  }
}

TEST(ConvertHost, ChunkedHostToDevicePipelineBothWays) {
  STRATA_SEED_TRACE();
  if (under_sanitizer()) GTEST_SKIP() << "large transfer left out under compute-sanitizer";
  // 3,000,001 particles = 84 MB: three 32 MiB staging chunks, the last one partial.
  auto ref = random_records<particle>(3000001);
  strata::soa_vector<particle> v(poisoned<particle>(ref.size()));
  strata::detail::host_aos_to_soa(ref.data(), strata::index_t(ref.size()), v.view(), strata::stream_t{});
  auto out = poisoned<particle>(ref.size());
  strata::detail::soa_to_host_aos(v.const_view(), out.data(), strata::stream_t{});
  EXPECT_EQ(first_difference<particle>(out, ref), -1);
  auto cols = fetch(v.column<&particle::mass>().data(), ref.size());
  for (std::size_t i = 0; i < ref.size(); i += 99991) EXPECT_EQ(cols[i], ref[i].mass) << i;
}

// Records in page-locked memory (strata's pinned buffer, or a std::vector the caller registered)
// cross PCIe from where they are, both ways: no staging copy, every record in place.
TEST(ConvertHost, PinnedRecordsSkipTheStagingCopy) {
  STRATA_SEED_TRACE();
  const std::size_t n = under_sanitizer() ? 40001 : 2500007;  // several 32 MiB chunks, the last partial
  const auto ref = random_records<particle>(n, 3);
  const std::size_t bytes = n * sizeof(particle);
  strata::buffer pinned(bytes, strata::memory_space::pinned);
  std::memcpy(pinned.data(), ref.data(), bytes);
  const auto* in = reinterpret_cast<const particle*>(pinned.data());
  strata::soa_vector<particle> v(poisoned<particle>(n));
  long staged = strata::testing::staged_host_chunks.load();
  strata::detail::host_aos_to_soa(in, strata::index_t(n), v.view(), strata::stream_t{});
  std::memset(pinned.data(), 0xA5, bytes);
  strata::detail::soa_to_host_aos(v.const_view(), reinterpret_cast<particle*>(pinned.data()), strata::stream_t{});
  const long staged_pinned = strata::testing::staged_host_chunks.load() - staged;
  EXPECT_EQ(first_difference<particle>(std::span<const particle>(in, n), ref), -1);
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  EXPECT_EQ(staged_pinned, 0) << "pinned records went through the staging copy";
#if defined(STRATA_BACKEND_CUDA)
  // A registered std::vector takes the same path.
  auto registered = poisoned<particle>(n);
  strata::soa_vector<particle> w(n);
  staged = strata::testing::staged_host_chunks.load();
  ASSERT_EQ(cudaHostRegister(registered.data(), bytes, cudaHostRegisterDefault), cudaSuccess);
  strata::detail::soa_to_host_aos(v.const_view(), registered.data(), strata::stream_t{});
  strata::detail::host_aos_to_soa(registered.data(), strata::index_t(n), w.view(), strata::stream_t{});
  ASSERT_EQ(cudaHostUnregister(registered.data()), cudaSuccess);
  EXPECT_EQ(strata::testing::staged_host_chunks.load(), staged);
  EXPECT_EQ(first_difference<particle>(registered, ref), -1);
  EXPECT_EQ(first_difference<particle>(w.to_host(), ref), -1);
  staged = strata::testing::staged_host_chunks.load();
  // Pageable records are staged.
  auto pageable = poisoned<particle>(n);
  strata::detail::soa_to_host_aos(v.const_view(), pageable.data(), strata::stream_t{});
  EXPECT_EQ(first_difference<particle>(pageable, ref), -1);
  EXPECT_GT(strata::testing::staged_host_chunks.load(), staged);
  // Records in device memory are not host records.
  device_aos<particle> d(16, 0);
  strata::soa_vector<particle> small(16);
  EXPECT_THROW(strata::detail::host_aos_to_soa(d.data(), 16, small.view(), strata::stream_t{}), strata::memory_space_error);
  EXPECT_THROW(strata::detail::soa_to_host_aos(small.const_view(), d.data(), strata::stream_t{}), strata::memory_space_error);
  expect_guards_intact(d);
#endif
}

// The staging copy runs on a thread pool whose threads spin briefly between chunks and then sleep:
// back-to-back copies (spinning threads), copies after a pause (sleeping threads), odd sizes.
TEST(ConvertHost, ParallelMemcpyCopiesEveryByteRunAfterRun) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(strata_test::test_seed());
  std::vector<unsigned char> src((std::size_t(9) << 20) + 13), dst(src.size());
  for (auto& b : src) b = static_cast<unsigned char>(g());
  for (int run = 0; run < 40; ++run) {
    // At least one guard byte stays past every copy.
    const std::size_t offset = std::size_t(run) % 7, bytes = src.size() - offset - 1 - std::size_t(run) * 1001;
    std::fill(dst.begin(), dst.end(), static_cast<unsigned char>(run));
    strata::detail::parallel_memcpy(dst.data() + offset, src.data() + offset, bytes);
    ASSERT_TRUE(std::equal(src.begin() + offset, src.begin() + offset + bytes, dst.begin() + offset)) << "run " << run;
    ASSERT_EQ(dst[offset + bytes], static_cast<unsigned char>(run)) << "copied past the end, run " << run;
    if (run % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the pool goes to sleep
  }
}

TEST(ConvertErrors, SizesAndPointersAreChecked) {
  strata::soa_vector<particle> v(10);
  device_aos<particle> d(12, 0);
  EXPECT_THROW(strata::aos_to_soa(d.data(), 12, v.view()), strata::size_error);
  EXPECT_THROW(strata::aos_to_soa(static_cast<const particle*>(nullptr), 10, v.view()), strata::size_error);
  strata::aos_vector<particle> a(11);
  EXPECT_THROW(strata::soa_to_aos(v.const_view(), a.view()), strata::size_error);
  try {
    strata::aos_to_soa(d.data(), 12, v.view());
  } catch (const strata::size_error& e) {
    EXPECT_NE(std::string(e.what()).find("got 10, expected 12"), std::string::npos) << e.what();
  }
}

// A mutable view is a fine source (it converts to a const one), on every pair of layouts; and
// convert_to builds a container from a view as from a container.
TEST(Convert, MutableViewsAreSourcesAndConvertToTakesViews) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(37), std::size_t(4099)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<nested_particle>(n);
    strata::soa_vector<nested_particle> s(ref), s2(poisoned<nested_particle>(n));
    strata::aos_vector<nested_particle> a(poisoned<nested_particle>(n));
    strata::aosoa_vector<nested_particle> b(poisoned<nested_particle>(n));
    strata::convert(s.view(), a);        // SoA view -> AoS
    strata::convert(a.view(), b.view());  // AoS view -> AoSoA view
    strata::convert(b.view(), s2);       // AoSoA view -> SoA
    strata::synchronize(strata::stream_t{});
    EXPECT_EQ(first_difference<nested_particle>(a.to_host(), ref), -1);
    EXPECT_EQ(first_difference<nested_particle>(b.to_host(), ref), -1);
    EXPECT_EQ(first_difference<nested_particle>(s2.to_host(), ref), -1);

    auto from_view = strata::convert_to<strata::soa_vector<nested_particle>>(a.view());
    auto from_const = strata::convert_to<strata::aos_vector<nested_particle>>(s.const_view());
    auto from_aosoa = strata::convert_to<strata::soa_vector<nested_particle>>(b.view());
    EXPECT_EQ(first_difference<nested_particle>(from_view.to_host(), ref), -1);
    EXPECT_EQ(first_difference<nested_particle>(from_const.to_host(), ref), -1);
    EXPECT_EQ(first_difference<nested_particle>(from_aosoa.to_host(), ref), -1);
  }
}
