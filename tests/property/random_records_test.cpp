// SPDX-License-Identifier: Apache-2.0
// Property tests: record types generated from a fixed list of field types, random sizes up to 1e6
// and random pointer offsets; every path (containers, conversions, transform, packet reductions)
// against a plain loop. The seed is printed on failure; STRATA_TEST_SEED replays a run.
#include <strata/strata.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

using namespace strata_test;

namespace {

using field_types = std::tuple<std::uint8_t, std::int16_t, float, double, std::int64_t, vec3_t, half2_t, std::uint32_t>;

// A fixed pseudo-random choice of field types: the same types on every build, on both backends.
constexpr std::size_t pick(std::size_t type_seed, std::size_t field) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull * (type_seed + 1) + 0xBF58476D1CE4E5B9ull * (field + 1);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return std::size_t(x % std::tuple_size_v<field_types>);
}
template <std::size_t S, std::size_t F>
using field_t = std::tuple_element_t<pick(S, F), field_types>;

template <std::size_t S>
struct gen2 {
  BOOST_HANA_DEFINE_STRUCT(gen2, (field_t<S, 0>, a), (field_t<S, 1>, b));
};
template <std::size_t S>
struct gen3 {
  BOOST_HANA_DEFINE_STRUCT(gen3, (field_t<S, 0>, a), (field_t<S, 1>, b), (field_t<S, 2>, c));
};
template <std::size_t S>
struct gen5 {
  BOOST_HANA_DEFINE_STRUCT(gen5, (field_t<S, 0>, a), (field_t<S, 1>, b), (field_t<S, 2>, c), (field_t<S, 3>, d),
                           (field_t<S, 4>, e));
};

/// Inverts every bit of every field: a transform whose result depends on every input byte.
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
struct one {
  template <class T>
  STRATA_HD long long operator()(const T&) const {
    return 1;
  }
};
struct plus_ll {
  STRATA_HD long long operator()(long long a, long long b) const { return a + b; }
};

}  // namespace

template <class T>
class RandomRecords : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates three of them.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Generated = ::testing::Types<gen3<3>, gen5<6>, wide64>;
#else
using Generated = ::testing::Types<gen2<1>, gen2<2>, gen3<3>, gen3<4>, gen3<5>, gen5<6>, gen5<7>, gen5<8>, nested_particle,
                                   cell_record, big_record, wide64>;
#endif
static_assert(strata::reflect::leaf_count<wide64> == 64);
TYPED_TEST_SUITE(RandomRecords, Generated);

TYPED_TEST(RandomRecords, EveryPathMatchesAPlainLoop) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed() ^ sizeof(T) ^ (alignof(T) << 8));
  const int rounds = under_sanitizer() ? 2 : 6;
  for (int round = 0; round < rounds; ++round) {
    // Log-uniform sizes in [0, 1e6]: most runs small, some large.
    std::size_t n = round == 0 ? 0 : std::size_t(std::exp(std::uniform_real_distribution<double>(0, std::log(1e6))(g)));
    if (under_sanitizer()) n = std::min<std::size_t>(n, 20000);
    std::size_t offset = alignof(T) * (g() % (16 / alignof(T) + 1));
    SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset) + " sizeof=" + std::to_string(sizeof(T)));
    auto ref = random_records<T>(n, std::uint64_t(round));

    strata::soa_vector<T> soa(ref);
    ASSERT_EQ(first_difference<T>(soa.to_host(), ref), -1) << "soa_vector round trip";
    strata::aos_vector<T> aos(ref);
    ASSERT_EQ(first_difference<T>(aos.to_host(), ref), -1) << "aos_vector round trip";
    ASSERT_EQ(first_difference<T>(strata::to_soa(aos).to_host(), ref), -1) << "to_soa";
    ASSERT_EQ(first_difference<T>(strata::to_aos(soa).to_host(), ref), -1) << "to_aos";

    // A device array of T at a random offset, both directions.
    strata::buffer raw(offset + n * sizeof(T) + 16, strata::memory_space::device);
    T* at = reinterpret_cast<T*>(raw.data() + offset);
    strata::copy_bytes(at, ref.data(), n * sizeof(T));
    strata::soa_vector<T> from_raw(poisoned<T>(n));
    strata::aos_to_soa(at, strata::index_t(n), from_raw.view());
    strata::synchronize(strata::stream_t{});
    ASSERT_EQ(first_difference<T>(from_raw.to_host(), ref), -1) << "aos_to_soa at offset";
    strata::fill_bytes_async(raw.data(), 0x5A, raw.bytes(), strata::stream_t{}, strata::memory_space::device);
    strata::soa_to_aos(from_raw.const_view(), at);
    strata::synchronize(strata::stream_t{});
    ASSERT_EQ(first_difference<T>(fetch(at, n), ref), -1) << "soa_to_aos at offset";

    // transform (vectorized when every field allows) and a packet reduction that counts records.
    strata::soa_vector<T> flipped(poisoned<T>(n));
    auto path = strata::transform(soa, flipped, flip_bits{});
    EXPECT_EQ(path, strata::layout::record_descriptor<T>::all_leaves_vectorizable ? strata::path::vectorized
                                                                                  : strata::path::scalar);
    strata::synchronize(strata::stream_t{});
    std::vector<T> want(n);
    std::transform(ref.begin(), ref.end(), want.begin(), flip_bits{});
    ASSERT_EQ(first_difference<T>(flipped.to_host(), want), -1) << "transform";
    EXPECT_EQ(strata::transform_reduce(flipped, one{}, 0LL, plus_ll{}), (long long)n) << "records counted";
  }
}
