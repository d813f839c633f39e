// SPDX-License-Identifier: Apache-2.0
// Allocation-failure sweeps of the operations that allocate: each runs once per allocation it
// makes, with that allocation failing (k = 0, 1, ... until the call goes through). After every
// failure the operands hold what they held (the strong guarantee these calls document), nothing
// leaked, and the same call then succeeds with the right result.
#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/convert/convert.hpp>
#include <strata/strata.hpp>

#include "common/allocation_failures.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace strata_test;
using strata::memory_space;

namespace {

/// The sweep of common/allocation_failures.hpp; each failed call is retried on the same operands.
template <class Make, class Op, class Unchanged, class Done>
int sweep(const std::string& name, Make make, Op op, Unchanged unchanged, Done done) {
  return sweep_allocation_failures(name, make, op, unchanged, done, true);
}

template <class C, class T>
void expect_holds(const C& c, const std::vector<T>& ref, const char* what) {
  ASSERT_EQ(c.size(), ref.size()) << what;
  EXPECT_EQ(first_difference<T>(c.to_host(), ref), -1) << what;
}

/// A device (host backend: host) array of n values, filled from a host vector.
template <class V>
struct device_array {
  strata::buffer mem;
  std::size_t n;
  explicit device_array(const std::vector<V>& v) : mem(std::max<std::size_t>(v.size(), 1) * sizeof(V), memory_space::device), n(v.size()) {
    strata::copy_bytes(mem.data(), v.data(), v.size() * sizeof(V));
  }
  V* data() const { return reinterpret_cast<V*>(mem.data()); }
  cuda::std::span<V> span() const { return {data(), n}; }
  std::vector<V> host() const {
    std::vector<V> v(n);
    strata::copy_bytes(v.data(), data(), n * sizeof(V));
    return v;
  }
};

template <class V>
bool same_bytes(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0;
}

struct x_positive {
  STRATA_HD bool operator()(const particle& p) const { return p.x > 0; }
};
struct x_bits {
  STRATA_HD std::uint32_t operator()(const particle& p) const {
    std::uint32_t u;
    memcpy(&u, &p.x, sizeof u);
    return u & 0xffffu;
  }
};

std::vector<std::int32_t> random_permutation(std::size_t n, std::uint64_t salt) {
  std::vector<std::int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(test_seed() ^ salt);
  std::shuffle(idx.begin(), idx.end(), rng);
  return idx;
}
template <class T, class I>
std::vector<T> gathered(const std::vector<T>& src, const std::vector<I>& idx) {
  std::vector<T> out;
  for (I i : idx) out.push_back(src[std::size_t(i)]);
  return out;
}

}  // namespace

TEST(AllocationSweep, Compaction) {
  STRATA_SEED_TRACE();
  const auto ref = random_records<particle>(40000), other = random_records<particle>(700, 1);
  std::vector<particle> kept, gone;
  std::partition_copy(ref.begin(), ref.end(), std::back_inserter(kept), std::back_inserter(gone), x_positive{});
  int allocations = 0;
  allocations += sweep(
      "erase_if", [&] { return strata::soa_vector<particle>(ref); }, [](auto& c) { (void)strata::erase_if(c, x_positive{}); },
      [&](auto& c) { expect_holds(c, ref, "container"); }, [&](auto& c) { expect_holds(c, gone, "container"); });
  struct io {
    strata::soa_vector<particle> in, out, rest;
  };
  auto make = [&] { return io{strata::soa_vector<particle>(ref), strata::soa_vector<particle>(other), strata::soa_vector<particle>(other)}; };
  auto untouched = [&](io& s) {
    expect_holds(s.in, ref, "input");
    expect_holds(s.out, other, "output");
    expect_holds(s.rest, other, "rest output");
  };
  allocations += sweep(
      "copy_if", make, [](io& s) { (void)strata::copy_if(s.in, s.out, x_positive{}); }, untouched,
      [&](io& s) { expect_holds(s.out, kept, "output"); });
  allocations += sweep(
      "partition_copy", make, [](io& s) { (void)strata::partition_copy(s.in, s.out, s.rest, x_positive{}); }, untouched,
      [&](io& s) {
        expect_holds(s.out, kept, "selected output");
        expect_holds(s.rest, gone, "rest output");
      });
  EXPECT_GT(allocations, 0);
}

TEST(AllocationSweep, SortsKeepKeysWithTheirRecords) {
  STRATA_SEED_TRACE();
  const std::size_t n = 40000;
  const auto ref = random_records<particle>(n);
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = x_bits{}(ref[i]);
  std::vector<std::int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return keys[std::size_t(a)] < keys[std::size_t(b)]; });
  const auto sorted = gathered(ref, order);
  std::vector<std::uint32_t> sorted_keys;
  for (auto i : order) sorted_keys.push_back(keys[std::size_t(i)]);
  struct state {
    strata::soa_vector<particle> c, spare;
    device_array<std::uint32_t> keys;
  };
  auto make = [&] { return state{strata::soa_vector<particle>(ref), strata::soa_vector<particle>(), device_array<std::uint32_t>(keys)}; };
  auto untouched = [&](state& s) {
    expect_holds(s.c, ref, "container");
    EXPECT_EQ(s.keys.host(), keys) << "the keys were sorted without their records";
  };
  auto done = [&](state& s) {
    expect_holds(s.c, sorted, "container");
    EXPECT_EQ(s.keys.host(), sorted_keys);
  };
  auto records_sorted = [&](state& s) { expect_holds(s.c, sorted, "container"); };
  int allocations = 0;
  allocations += sweep("sort_by_key", make, [](state& s) { strata::sort_by_key(s.c, s.keys.span(), {}, 0, 16); }, untouched, done);
  allocations += sweep("sort_by_key through a spare", make, [](state& s) { strata::sort_by_key(s.c, s.keys.span(), s.spare, {}, 0, 16); },
                       untouched, done);
  allocations += sweep("sort_by", make, [](state& s) { strata::sort_by(s.c, x_bits{}, {}, 0, 16); },
                       [&](state& s) { expect_holds(s.c, ref, "container"); }, records_sorted);
  allocations += sweep("sort_by through a spare", make, [](state& s) { strata::sort_by(s.c, x_bits{}, s.spare, {}, 0, 16); },
                       [&](state& s) { expect_holds(s.c, ref, "container"); }, records_sorted);
  EXPECT_GT(allocations, 0);
}

TEST(AllocationSweep, ReorderingLeavesTheDestinationAsItWas) {
  STRATA_SEED_TRACE();
  const std::size_t n = 40000;
  const auto ref = random_records<particle>(n), other = random_records<particle>(1000, 2);
  const auto perm = random_permutation(n, 3);
  const auto want = gathered(ref, perm);
  std::vector<std::int32_t> some(perm.begin(), perm.begin() + 35000);  // a gather that counts its jumps
  const auto want_some = gathered(ref, some);
  struct state {
    strata::soa_vector<particle> c, dst;
    device_array<std::int32_t> idx;
  };
  int allocations = 0;
  for (std::size_t dst_records : {std::size_t(0), other.size(), std::size_t(n)}) {
    const std::vector<particle> dst_ref = dst_records <= other.size() ? std::vector<particle>(other.begin(), other.begin() + long(dst_records))
                                                                       : random_records<particle>(dst_records, 4);
    auto make = [&](const std::vector<std::int32_t>& idx) {
      return [&, idx] { return state{strata::soa_vector<particle>(ref), strata::soa_vector<particle>(dst_ref), device_array<std::int32_t>(idx)}; };
    };
    const std::string with = " (destination of " + std::to_string(dst_records) + " records)";
    allocations += sweep(
        "gather" + with, make(some), [](state& s) { strata::gather(s.c, cuda::std::span<const std::int32_t>(s.idx.span()), s.dst); },
        [&](state& s) {
          expect_holds(s.c, ref, "source");
          expect_holds(s.dst, dst_ref, "destination");
        },
        [&](state& s) { expect_holds(s.dst, want_some, "destination"); });
    allocations += sweep(
        "permute through a spare" + with, make(perm),
        [](state& s) { strata::permute(s.c, cuda::std::span<const std::int32_t>(s.idx.span()), s.dst); },
        [&](state& s) { expect_holds(s.c, ref, "container"); }, [&](state& s) { expect_holds(s.c, want, "container"); });
  }
  allocations += sweep(
      "permute in place", [&] { return state{strata::soa_vector<particle>(ref), {}, device_array<std::int32_t>(perm)}; },
      [](state& s) { strata::permute(s.c, cuda::std::span<const std::int32_t>(s.idx.span())); },
      [&](state& s) { expect_holds(s.c, ref, "container"); }, [&](state& s) { expect_holds(s.c, want, "container"); });
  EXPECT_GT(allocations, 0);
}

TEST(AllocationSweep, GrowthAndCopies) {
  STRATA_SEED_TRACE();
  const auto ref = random_records<particle>(5000), more = random_records<particle>(3000, 5);
  auto joined = ref;
  joined.insert(joined.end(), more.begin(), more.end());
  const particle one = more[0];
  auto full = [&] {
    strata::soa_vector<particle> c(ref);
    while (c.size() < c.capacity()) c.push_back(one);
    return c;
  };
  const std::size_t at_capacity = full().size();
  std::vector<particle> filled(ref);
  filled.resize(at_capacity, one);
  auto filled_plus = filled;
  filled_plus.push_back(one);
  int allocations = 0;
  allocations += sweep(
      "push_back at capacity", full, [&](auto& c) { c.push_back(one); }, [&](auto& c) { expect_holds(c, filled, "container"); },
      [&](auto& c) { expect_holds(c, filled_plus, "container"); });
  auto make = [&] { return strata::soa_vector<particle>(ref); };
  auto untouched = [&](auto& c) { expect_holds(c, ref, "container"); };
  auto appended = [&](auto& c) { expect_holds(c, joined, "container"); };
  allocations += sweep("append (host records)", make, [&](auto& c) { c.append(more); }, untouched, appended);
  const strata::soa_vector<particle> more_dev(more);
  allocations += sweep("append (a container)", make, [&](auto& c) { c.append(more_dev, {}); }, untouched, appended);
  const strata::soa_vector<particle, memory_space::pinned> more_pinned(more);
  allocations += sweep("append (a pinned container)", make, [&](auto& c) { c.append(more_pinned, {}); }, untouched, appended);
  allocations += sweep(
      "copy to pinned memory", make, [](auto& c) { (void)strata::soa_vector<particle, memory_space::pinned>(c); }, untouched, untouched);
  allocations += sweep(
      "convert_to an AoSoA container", make, [](auto& c) { (void)strata::convert_to<strata::aosoa_vector<particle>>(c); }, untouched, untouched);
  EXPECT_GT(allocations, 0);
}

// Normalization takes its scratch (gamma / beta copies for rows whose starts move, the moments of
// streamed rows) before it launches: an output, in place too, is as it was after a failure.
TEST(AllocationSweep, NormalizationWritesNothingUntilItHoldsItsMemory) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed() ^ 0x40f);
  std::uniform_real_distribution<float> u(-2, 2);
  int allocations = 0;
  for (auto [rows, cols] : {std::pair<strata::index_t, strata::index_t>{64, 333}, {3, 300000}}) {
    auto x = std::vector<strata::bfloat16>(std::size_t(rows * cols)), gamma = std::vector<strata::bfloat16>(std::size_t(cols)),
         beta = std::vector<strata::bfloat16>(std::size_t(cols));
    for (auto& v : x) v = strata::bfloat16(u(g));
    for (auto& v : gamma) v = strata::bfloat16(u(g));
    for (auto& v : beta) v = strata::bfloat16(u(g));
    device_array<strata::bfloat16> gd(gamma), bd(beta);
    struct state {
      device_array<strata::bfloat16> rows;
    };
    auto make = [&] { return state{device_array<strata::bfloat16>(x)}; };
    std::vector<strata::bfloat16> want;
    auto run = [&](state& s) {
      auto m = strata::make_matrix_view(s.rows.data(), rows, cols);  // dense: rows of odd width start off 16-byte boundaries
      strata::layer_norm<strata::bfloat16>(m, m, cuda::std::span<const strata::bfloat16>(gd.span()), cuda::std::span<const strata::bfloat16>(bd.span()));
      strata::synchronize(nullptr);
    };
    {
      auto s = make();
      run(s);
      want = s.rows.host();
    }
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
    allocations += sweep(
        "layer_norm in place, " + shape, make, run,
        [&](state& s) { EXPECT_TRUE(same_bytes(s.rows.host(), x)) << "the rows changed although the call failed"; },
        [&](state& s) { EXPECT_TRUE(same_bytes(s.rows.host(), want)); });
  }
  EXPECT_GE(allocations, 0);
}
