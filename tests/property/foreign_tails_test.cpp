// SPDX-License-Identifier: Apache-2.0
// Foreign views and sub-views of records with narrow (1- and 2-byte) leaves: their packets hold
// fewer records than a 16-byte vector of the narrowest column, and the views end where the caller's
// memory does. transform, for_each and transform_reduce must run the whole packets and then the
// last records one by one (the README's promise), match a plain loop, and write nothing past size().
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/transform.hpp>

#include "common/foreign.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>

using namespace strata_test;

namespace {

struct narrow5 {
  BOOST_HANA_DEFINE_STRUCT(narrow5, (float, a), (double, b), (std::uint16_t, c), (std::uint8_t, d), (float, e));
};
struct array40 {
  BOOST_HANA_DEFINE_STRUCT(array40, (std::array<float, 40>, f), (std::uint8_t, tag));
};
// 32 fields cycling f32, f64, i32, u8: 136 bytes of leaves, so a packet is one record.
struct mixed32 {
  BOOST_HANA_DEFINE_STRUCT(mixed32, (float, f0), (double, d0), (std::int32_t, i0), (std::uint8_t, u0), (float, f1), (double, d1),
                           (std::int32_t, i1), (std::uint8_t, u1), (float, f2), (double, d2), (std::int32_t, i2), (std::uint8_t, u2),
                           (float, f3), (double, d3), (std::int32_t, i3), (std::uint8_t, u3), (float, f4), (double, d4),
                           (std::int32_t, i4), (std::uint8_t, u4), (float, f5), (double, d5), (std::int32_t, i5), (std::uint8_t, u5),
                           (float, f6), (double, d6), (std::int32_t, i6), (std::uint8_t, u6), (float, f7), (double, d7),
                           (std::int32_t, i7), (std::uint8_t, u7));
};
static_assert(strata::reflect::leaf_count<mixed32> == 32);

// The property holds because these packets are narrower than a vector of the narrowest column.
static_assert(strata::layout::record_descriptor<narrow5>::packet_width < strata::layout::record_descriptor<narrow5>::column_quantum);
static_assert(strata::layout::record_descriptor<array40>::packet_width == 1);
static_assert(strata::layout::record_descriptor<mixed32>::packet_width == 1);

/// Every bit of every leaf inverted: the result depends on every input byte.
struct flip_bits {
  template <class T>
  STRATA_HD T operator()(T r) const {
    strata::reflect::for_each_leaf<T>([&](auto i) {
      auto& f = strata::reflect::leaf<decltype(i)::value>(r);
      unsigned char b[sizeof(f)];
      std::memcpy(b, static_cast<const void*>(&f), sizeof b);
      for (auto& x : b) x = static_cast<unsigned char>(~x);
      std::memcpy(static_cast<void*>(&f), b, sizeof b);
    });
    return r;
  }
};
struct flip_in_place {
  template <class T>
  STRATA_HD void operator()(T& r) const {
    r = flip_bits{}(r);
  }
};
/// Every byte of every leaf, weighted by its leaf and place: an exact integer that any wrong,
/// missing or extra record changes.
struct byte_sum {
  template <class T>
  STRATA_HD unsigned long long operator()(const T& r) const {
    unsigned long long s = 0;
    strata::reflect::for_each_leaf<T>([&](auto i) {
      constexpr std::size_t L = decltype(i)::value;
      const auto& f = strata::reflect::leaf<L>(r);
      unsigned char b[sizeof(f)];
      std::memcpy(b, static_cast<const void*>(&f), sizeof b);
      for (std::size_t k = 0; k < sizeof b; ++k) s += (unsigned long long)(b[k]) * (L + 1) * (k + 3);
    });
    return s;
  }
};
struct plus_ull {
  STRATA_HD unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a + b; }
};

/// Every size 0..1003 on the host backend; a seeded sample of them (with the small ones and the
/// ends) where each size costs device allocations per leaf or runs under a sanitizer (ASan makes
/// all of them take about a minute).
std::vector<std::size_t> tail_sizes() {
  std::vector<std::size_t> s;
#if defined(STRATA_BACKEND_HOST) && !defined(__SANITIZE_ADDRESS__)  // GCC's macro: the host-sanitize build
  if (!under_sanitizer()) {
    for (std::size_t n = 0; n <= 1003; ++n) s.push_back(n);
    return s;
  }
#endif
  for (std::size_t n = 0; n <= 33; ++n) s.push_back(n);
  std::mt19937_64 g(test_seed());
  for (int k = 0; k < 40; ++k) s.push_back(34 + g() % (1003 - 34));
  s.push_back(1002), s.push_back(1003);
  return s;
}

}  // namespace

template <class T>
class ForeignTails : public ::testing::Test {};
using TailRecords = ::testing::Types<narrow5, array40, mixed32>;
TYPED_TEST_SUITE(ForeignTails, TailRecords);

TYPED_TEST(ForeignTails, WholePacketsThenRecordsMatchAPlainLoop) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t offset : {std::size_t(0), std::size_t(16)})
    for (std::size_t n : tail_sizes())
      for (bool sub : {false, true}) {
        if (sub && n == 0) continue;
        const std::size_t m = sub ? n - 1 : n;  // the records the view covers
        SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset) + (sub ? " first(n - 1)" : ""));
        const auto ref = random_records<T>(n);
        const auto poison = poisoned<T>(n);
        foreign_columns<T> in(n, 0, 0, offset), out(n, 0, 0, offset);
        in.upload(ref);
        out.upload(poison);
        auto vin = in.view(), vout = out.view();
        if (sub) vin = vin.first(strata::index_t(m)), vout = vout.first(strata::index_t(m));

        ASSERT_EQ(strata::transform(vin, vout, flip_bits{}), strata::path::vectorized);
        strata::synchronize(strata::stream_t{});
        std::vector<T> want(poison);
        std::transform(ref.begin(), ref.begin() + m, want.begin(), flip_bits{});
        ASSERT_EQ(first_difference<T>(out.download(), want), -1) << "transform: " << describe_difference<T>(out.download(), want);
        ASSERT_EQ(first_difference<T>(in.download(), ref), -1) << "transform changed its input";
        ASSERT_EQ(out.damage(), "");
        ASSERT_EQ(in.damage(), "");

        unsigned long long sum = 0;
        for (std::size_t i = 0; i < m; ++i) sum += byte_sum{}(want[i]);
        ASSERT_EQ(strata::transform_reduce(vout, byte_sum{}, 0ull, plus_ull{}), sum) << "transform_reduce";

        ASSERT_EQ(strata::for_each(vin, flip_in_place{}), strata::path::vectorized);
        strata::synchronize(strata::stream_t{});
        std::vector<T> flipped(ref);
        std::for_each(flipped.begin(), flipped.begin() + m, flip_in_place{});
        ASSERT_EQ(first_difference<T>(in.download(), flipped), -1) << "for_each: " << describe_difference<T>(in.download(), flipped);
        ASSERT_EQ(in.damage(), "");
      }
}
