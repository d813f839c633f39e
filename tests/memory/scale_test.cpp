// SPDX-License-Identifier: Apache-2.0
// Past 2^31 records and past the device's memory: 64-bit indices through containers, iterators,
// conversion and algorithms; out-of-memory that leaves the container as it was.
#include <strata/strata.hpp>
#include <strata/algorithm/compact.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <thrust/tabulate.h>

#include <gtest/gtest.h>

#include <cstdlib>

using namespace strata_test;

namespace {
struct pattern {  // record i as a function of i: any lost high index bit shows up
  STRATA_HD three_bytes operator()(std::int64_t i) const {
    return {std::int8_t(i % 127), std::int8_t((i >> 24) % 127), std::int8_t((i >> 31) + 1)};
  }
};
struct add_one_r {
  STRATA_HD three_bytes operator()(three_bytes t) const {
    t.r = std::int8_t(t.r + 1);
    return t;
  }
};
struct high_bit_count {
  STRATA_HD long long operator()(const three_bytes& t) const { return t.b == 2 ? 1 : 0; }
};
struct plus_ll {
  STRATA_HD long long operator()(long long a, long long b) const { return a + b; }
};
bool large_enabled() {
#if defined(STRATA_BACKEND_CUDA)
  return true;
#else
  return std::getenv("STRATA_TEST_LARGE") != nullptr;  // 13 GB of host memory: opt-in on the host
#endif
}
}  // namespace

TEST(Scale, LargeMoreThan2To31Records) {
  if (!large_enabled()) GTEST_SKIP() << "set STRATA_TEST_LARGE=1 to run 2^31 + 5 records on the host backend";
  STRATA_SEED_TRACE();
  const std::int64_t n = (std::int64_t(1) << 31) + 5;
  strata::soa_vector<three_bytes> v(static_cast<std::size_t>(n));
  ASSERT_EQ(v.size(), std::size_t(n));
  thrust::tabulate(v.begin(), v.end(), pattern{});
  std::mt19937_64 g(test_seed());
  std::vector<std::int64_t> sample = {0, 1, (std::int64_t(1) << 31) - 1, std::int64_t(1) << 31, n - 1};
  for (int k = 0; k < 20; ++k) sample.push_back(std::int64_t(g() % std::uint64_t(n)));
  for (auto i : sample) ASSERT_TRUE(same_bits(v.get(std::size_t(i)), pattern{}(i))) << "record " << i;

  // Packets past 2^31 records, a reduction over them, and a round trip through AoS.
  EXPECT_EQ(strata::transform(v, v, add_one_r{}), strata::path::vectorized);
  strata::synchronize(strata::stream_t{});
  for (auto i : sample) {
    auto want = pattern{}(i);
    want.r = std::int8_t(want.r + 1);
    ASSERT_TRUE(same_bits(v.get(std::size_t(i)), want)) << "record " << i;
  }
  EXPECT_EQ(strata::transform_reduce(v, high_bit_count{}, 0LL, plus_ll{}), 5);  // records 2^31 .. 2^31 + 4
  strata::aos_vector<three_bytes> a = strata::to_aos(v);
  ASSERT_EQ(a.size(), std::size_t(n));
  for (auto i : sample) ASSERT_TRUE(same_bits(a.get(std::size_t(i)), v.get(std::size_t(i)))) << "record " << i;
}

struct low_bit_set {
  STRATA_HD bool operator()(const three_bytes& t) const { return (t.r & 1) != 0; }
};

// erase_if over 2^31 + 5 records: 64-bit counts and positions through the compaction.
TEST(Scale, LargeEraseIfPast2To31Records) {
  if (!large_enabled()) GTEST_SKIP() << "set STRATA_TEST_LARGE=1 to run 2^31 + 5 records on the host backend";
  const std::int64_t n = (std::int64_t(1) << 31) + 5;
  strata::soa_vector<three_bytes> v(static_cast<std::size_t>(n));
  thrust::tabulate(v.begin(), v.end(), pattern{});
  // r = i % 127: the kept records are those with an even r; count them in closed form.
  const std::int64_t cycles = n / 127, rest = n % 127;
  const std::int64_t kept = cycles * 64 + (rest + 1) / 2;
  const std::size_t removed = strata::erase_if(v, low_bit_set{});
  EXPECT_EQ(std::int64_t(removed), n - kept);
  ASSERT_EQ(std::int64_t(v.size()), kept);
  // Kept record k is the k-th even-r record: r cycles 0, 2, .., 126 within each 127, so record k
  // came from index 127 * (k / 64) + 2 * (k % 64).
  for (std::int64_t k : {std::int64_t(0), std::int64_t(1), kept / 2, kept - 1}) {
    const std::int64_t i = 127 * (k / 64) + 2 * (k % 64);
    ASSERT_TRUE(same_bits(v.get(std::size_t(k)), pattern{}(i))) << "kept record " << k << " (from " << i << ")";
  }
}

TEST(Scale, OutOfMemoryOnTheDeviceLeavesDataIntact) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(100000);
  strata::soa_vector<particle> v(ref);
  strata::aos_vector<particle> a(ref);
  const std::size_t huge = std::size_t(1) << 40;  // 2^40 particles: 28 TiB, more than any device has
  try {
    v.reserve(huge);
    FAIL() << "reserve of 2^40 records succeeded";
  } catch (const strata::out_of_memory& e) {
    std::printf("[ note ] %s\n", e.what());
    EXPECT_GE(e.bytes(), huge * 28);
  }
  EXPECT_THROW(v.resize(huge), strata::out_of_memory);
  EXPECT_THROW(a.reserve(huge), strata::out_of_memory);
  EXPECT_THROW((strata::soa_vector<particle>(huge)), strata::out_of_memory);
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  EXPECT_EQ(first_difference<particle>(a.to_host(), ref), -1);
  // The device still works after the failed allocations.
  strata::soa_vector<particle> w = strata::to_soa(a);
  EXPECT_EQ(first_difference<particle>(w.to_host(), ref), -1);
}
