// SPDX-License-Identifier: Apache-2.0
// The keyed split migrate uses (split_by_key.hpp) against sequential loops: the head (picked count,
// per-key counts, the range of the picked keys), the picked indices in order and grouped by key,
// and the split of records into kept ones (in order) and picked ones grouped by key; sizes around
// the 2048-record block, key counts from 1 to the limit, none / all / sparse / alternating /
// random picks, keys outside the counted ones, and nothing written past what each output holds.
#include <strata/algorithm/split_by_key.hpp>
#include <strata/memory/resource.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace strata_test;

namespace {

/// Record i's key is keys[i]; it is picked when that is not `keep`.
struct key_of {
  const std::int32_t* keys;
  std::int32_t keep;
  STRATA_HD std::int32_t key(strata::index_t i) const { return keys[i]; }
};
/// Records that are one int64 each, in device memory.
struct raw_view {
  std::int64_t* p;
  STRATA_HD std::int64_t load(strata::index_t i) const { return p[i]; }
  STRATA_HD void store(strata::index_t i, std::int64_t r) const { p[i] = r; }
};

template <class T>
strata::buffer to_device(const std::vector<T>& v) {
  strata::buffer b(sizeof(T) * std::max<std::size_t>(v.size(), 1), strata::memory_space::device);
  strata::copy_bytes(b.data(), v.data(), sizeof(T) * v.size());
  return b;
}
template <class T>
std::vector<T> to_host(const strata::buffer& b, std::size_t n) {
  std::vector<T> v(n);
  strata::copy_bytes(v.data(), b.data(), sizeof(T) * n);
  return v;
}

/// What a sequential loop makes of keys: the head, the picked indices in order and by key, and
/// the kept records and picked records by key for records value(i).
struct expected {
  std::int64_t picked = 0;
  std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
  std::vector<std::int64_t> per_key, in_order, by_key, kept;
};
std::int64_t value(std::size_t i) { return std::int64_t(i) * 3 + 1; }
expected expect(const std::vector<std::int32_t>& keys, std::int32_t keep, int nkeys) {
  expected e;
  e.per_key.assign(std::size_t(nkeys), 0);
  std::vector<std::vector<std::int64_t>> runs{std::size_t(nkeys)};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == keep) {
      e.kept.push_back(value(i));
      continue;
    }
    e.lo = std::min(e.lo, keys[i]), e.hi = std::max(e.hi, keys[i]);
    if (nkeys > 0 && (keys[i] < 0 || keys[i] >= nkeys)) continue;
    ++e.picked;
    e.in_order.push_back(std::int64_t(i));
    if (nkeys > 0) ++e.per_key[std::size_t(keys[i])], runs[std::size_t(keys[i])].push_back(std::int64_t(i));
  }
  for (const auto& r : runs) e.by_key.insert(e.by_key.end(), r.begin(), r.end());
  return e;
}

void check_head(const strata::buffer& head, int nkeys, const expected& e) {
  const std::vector<std::int64_t> h = to_host<std::int64_t>(head, strata::detail::split_head_words(nkeys));
  const strata::detail::split_counts c = strata::detail::decode_split_head(h.data(), nkeys);
  ASSERT_EQ(c.picked, e.picked);
  if (e.lo > e.hi) {
    EXPECT_GT(c.lo, c.hi) << "nothing picked gives an empty range";
  } else {
    EXPECT_EQ(c.lo, e.lo);
    EXPECT_EQ(c.hi, e.hi);
  }
  ASSERT_EQ(c.per_key, e.per_key);
}

/// Keys for a case: picked keys in [0, nkeys) (any int32 when nkeys is 0) other than `keep`, kept ones `keep`.
std::vector<std::int32_t> make_keys(std::size_t n, int nkeys, int mode, std::int32_t keep, std::mt19937_64& g) {
  std::vector<std::int32_t> keys(n, keep);
  auto some = [&] {
    for (;;) {
      const std::int32_t k = nkeys > 0 ? std::int32_t(g() % unsigned(nkeys)) : std::int32_t(std::uint32_t(g()));
      if (k != keep) return k;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (mode == 1) keys[i] = some();                                         // all picked
    if (mode == 2) keys[i] = g() % 997 == 0 ? some() : keep;                  // sparse
    if (mode == 3) keys[i] = i % 2 ? keep : some();                           // alternating
    if (mode == 4) keys[i] = g() % 2 ? some() : keep;                         // about half
  }
  return keys;
}

/// Around the 2048-record block and a warp, and many blocks (fewer under a sanitizer).
std::vector<std::size_t> sizes() {
  if (under_sanitizer()) return {0, 1, 31, 2047, 2048, 2049, 20011};
  return {0, 1, 31, 2047, 2048, 2049, 100003, std::size_t(1) << 20};
}

}  // namespace

TEST(SplitByKey, ListsPickedIndicesInOrderAndByKey) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed());
  for (std::size_t n : sizes())
    for (int nkeys : {0, 1, 3, 7, 32})
      for (int mode : {0, 1, 2, 3, 4}) {
        // The kept key is one of the counted keys (a rank), or far outside them.
        // (With one key the kept key lies outside: some key must be left to pick.)
        const std::int32_t keep = nkeys > 1 ? std::int32_t(g() % unsigned(nkeys)) : nkeys == 1 ? 5 : std::numeric_limits<std::int32_t>::min();
        SCOPED_TRACE("n = " + std::to_string(n) + ", keys " + std::to_string(nkeys) + ", mode " + std::to_string(mode) + ", keep " +
                     std::to_string(keep));
        const std::vector<std::int32_t> keys = make_keys(n, nkeys, mode, keep, g);
        const expected e = expect(keys, keep, nkeys);
        strata::buffer kb = to_device(keys);
        strata::buffer head(sizeof(std::int64_t) * strata::detail::split_head_words(nkeys), strata::memory_space::device);
        // Both lists get one slot more than they need, preset: nothing is written past them.
        const std::size_t slots = std::size_t(e.picked) + 1;
        strata::buffer ob = to_device(std::vector<std::int64_t>(2 * slots, -7));
        auto* in_order = reinterpret_cast<std::int64_t*>(ob.data());
        std::int64_t* by_key = nkeys > 0 ? in_order + slots : nullptr;
        const key_of pick{reinterpret_cast<const std::int32_t*>(kb.data()), keep};
        {
          strata::detail::keyed_split s(pick, strata::index_t(n), nkeys, reinterpret_cast<std::int64_t*>(head.data()), strata::stream_t{}, "test split");
          s.list(pick, 0, in_order, by_key);
        }
        strata::synchronize(strata::stream_t{});
        check_head(head, nkeys, e);
        const std::vector<std::int64_t> got = to_host<std::int64_t>(ob, 2 * slots);
        for (std::size_t k = 0; k < e.in_order.size(); ++k) ASSERT_EQ(got[k], e.in_order[k]) << "in order, index " << k;
        ASSERT_EQ(got[slots - 1], -7) << "written past the list in order";
        for (std::size_t k = 0; k < e.by_key.size(); ++k) ASSERT_EQ(got[slots + k], e.by_key[k]) << "by key, index " << k;
        ASSERT_EQ(got[2 * slots - 1], -7) << "written past the list by key";
      }
}

// Keys outside the counted ones show in the range (so migrate refuses them) and are neither
// counted nor listed.
TEST(SplitByKey, KeysOutsideTheCountedOnesShowInTheRangeOnly) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed());
  const int nkeys = 4;
  const std::int32_t keep = 2;
  for (std::size_t n : {std::size_t(100), std::size_t(100003)}) {
    std::vector<std::int32_t> keys(n);
    for (auto& k : keys) k = std::int32_t(g() % 4);
    keys[n / 3] = 7, keys[n / 2] = -2, keys[n - 1] = std::numeric_limits<std::int32_t>::max();
    const expected e = expect(keys, keep, nkeys);
    ASSERT_EQ(e.lo, -2);
    strata::buffer kb = to_device(keys);
    strata::buffer head(sizeof(std::int64_t) * strata::detail::split_head_words(nkeys), strata::memory_space::device);
    strata::buffer ob = to_device(std::vector<std::int64_t>(2 * std::size_t(e.picked), -7));
    auto* in_order = reinterpret_cast<std::int64_t*>(ob.data());
    const key_of pick{reinterpret_cast<const std::int32_t*>(kb.data()), keep};
    {
      strata::detail::keyed_split s(pick, strata::index_t(n), nkeys, reinterpret_cast<std::int64_t*>(head.data()), strata::stream_t{}, "test split");
      s.list(pick, 0, in_order, in_order + e.picked);
    }
    strata::synchronize(strata::stream_t{});
    check_head(head, nkeys, e);
    const std::vector<std::int64_t> got = to_host<std::int64_t>(ob, 2 * std::size_t(e.picked));
    EXPECT_TRUE(std::equal(e.in_order.begin(), e.in_order.end(), got.begin()));
    EXPECT_TRUE(std::equal(e.by_key.begin(), e.by_key.end(), got.begin() + e.picked));
  }
}

TEST(SplitByKey, SplitsRecordsIntoKeptInOrderAndPickedByKey) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed());
  for (std::size_t n : sizes())
    for (int nkeys : {0, 1, 2, 5, 32})
      for (int mode : {0, 1, 2, 3, 4})
        for (bool hint : {false, true}) {
          const std::int32_t keep = nkeys > 1 ? std::int32_t(g() % unsigned(nkeys)) : 5;  // keys = 0: any key but 5 is picked
          SCOPED_TRACE("n = " + std::to_string(n) + ", keys " + std::to_string(nkeys) + ", mode " + std::to_string(mode) + (hint ? ", single key hint" : ""));
          const std::vector<std::int32_t> keys = make_keys(n, nkeys, mode, keep, g);
          const expected e = expect(keys, keep, nkeys);
          std::vector<std::int64_t> records(n);
          for (std::size_t i = 0; i < n; ++i) records[i] = value(i);
          strata::buffer kb = to_device(keys), rb = to_device(records);
          strata::buffer head(sizeof(std::int64_t) * strata::detail::split_head_words(nkeys), strata::memory_space::device);
          // Each output has one preset slot past its records.
          const std::size_t kept_slots = e.kept.size() + 1, picked_slots = std::size_t(e.picked) + 1;
          strata::buffer kept = to_device(std::vector<std::int64_t>(kept_slots, -7)), picked = to_device(std::vector<std::int64_t>(picked_slots, -7));
          const key_of pick{reinterpret_cast<const std::int32_t*>(kb.data()), keep};
          {
            strata::detail::keyed_split s(pick, strata::index_t(n), nkeys, reinterpret_cast<std::int64_t*>(head.data()), strata::stream_t{}, "test split");
            // The hint the head gives (a single key spares the ranking by key), or none.
            strata::detail::split_counts c;
            c.per_key = e.per_key;
            s.split(pick, raw_view{reinterpret_cast<std::int64_t*>(rb.data())}, raw_view{reinterpret_cast<std::int64_t*>(kept.data())},
                    raw_view{reinterpret_cast<std::int64_t*>(picked.data())}, hint ? c.single_key() : -1);
          }
          strata::synchronize(strata::stream_t{});
          check_head(head, nkeys, e);
          const std::vector<std::int64_t> got_kept = to_host<std::int64_t>(kept, kept_slots), got_picked = to_host<std::int64_t>(picked, picked_slots);
          for (std::size_t k = 0; k < e.kept.size(); ++k) ASSERT_EQ(got_kept[k], e.kept[k]) << "kept record " << k;
          ASSERT_EQ(got_kept.back(), -7) << "written past the kept records";
          // Without keys the picked records stay in index order (a two-way partition).
          const std::vector<std::int64_t>& order = nkeys > 0 ? e.by_key : e.in_order;
          for (std::size_t k = 0; k < order.size(); ++k) ASSERT_EQ(got_picked[k], value(std::size_t(order[k]))) << "picked record " << k;
          ASSERT_EQ(got_picked.back(), -7) << "written past the picked records";
        }
}

/// Records of five int64 (40 bytes): too wide to be held in registers through the split's ranking
/// (split_early_bytes), so the split reads them after it; lane l of record i holds value(i) + l.
struct wide {
  std::int64_t v[5];
};
static_assert(sizeof(wide) * strata::detail::pick_items > strata::detail::split_early_bytes);
struct wide_view {
  wide* p;
  STRATA_HD wide load(strata::index_t i) const { return p[i]; }
  STRATA_HD void store(strata::index_t i, const wide& r) const { p[i] = r; }
};
TEST(SplitByKey, SplitsRecordsTooWideForRegisters) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed());
  for (std::size_t n : sizes())
    for (int nkeys : {0, 3})
      for (int mode : {2, 4}) {
        const std::int32_t keep = nkeys > 1 ? 1 : 5;
        SCOPED_TRACE("n = " + std::to_string(n) + ", keys " + std::to_string(nkeys) + ", mode " + std::to_string(mode));
        const std::vector<std::int32_t> keys = make_keys(n, nkeys, mode, keep, g);
        const expected e = expect(keys, keep, nkeys);
        std::vector<wide> records(n);
        for (std::size_t i = 0; i < n; ++i)
          for (int l = 0; l < 5; ++l) records[i].v[l] = value(i) + l;
        const wide unset{{-7, -7, -7, -7, -7}};
        strata::buffer kb = to_device(keys), rb = to_device(records);
        strata::buffer kept = to_device(std::vector<wide>(e.kept.size() + 1, unset)), picked = to_device(std::vector<wide>(std::size_t(e.picked) + 1, unset));
        strata::buffer head(sizeof(std::int64_t) * strata::detail::split_head_words(nkeys), strata::memory_space::device);
        const key_of pick{reinterpret_cast<const std::int32_t*>(kb.data()), keep};
        {
          strata::detail::keyed_split s(pick, strata::index_t(n), nkeys, reinterpret_cast<std::int64_t*>(head.data()), strata::stream_t{}, "test split");
          s.split(pick, wide_view{reinterpret_cast<wide*>(rb.data())}, wide_view{reinterpret_cast<wide*>(kept.data())},
                  wide_view{reinterpret_cast<wide*>(picked.data())}, -1);
        }
        strata::synchronize(strata::stream_t{});
        check_head(head, nkeys, e);
        const std::vector<wide> got_kept = to_host<wide>(kept, e.kept.size() + 1), got_picked = to_host<wide>(picked, std::size_t(e.picked) + 1);
        for (std::size_t k = 0; k < e.kept.size(); ++k)
          for (int l = 0; l < 5; ++l) ASSERT_EQ(got_kept[k].v[l], e.kept[k] + l) << "kept record " << k << " lane " << l;
        const std::vector<std::int64_t>& order = nkeys > 0 ? e.by_key : e.in_order;
        for (std::size_t k = 0; k < order.size(); ++k)
          for (int l = 0; l < 5; ++l) ASSERT_EQ(got_picked[k].v[l], value(std::size_t(order[k])) + l) << "picked record " << k << " lane " << l;
        ASSERT_EQ(got_kept.back().v[4], -7) << "written past the kept records";
        ASSERT_EQ(got_picked.back().v[0], -7) << "written past the picked records";
      }
}

TEST(SplitByKey, RefusesWhatItCannotDo) {
  std::int64_t head[strata::detail::split_head_words(strata::detail::split_max_keys + 1)] = {};
  const key_of pick{nullptr, 0};
  // More keys than a block counts, checked before anything runs.
  EXPECT_THROW(strata::detail::keyed_split(pick, 10, strata::detail::split_max_keys + 1, head, strata::stream_t{}, "test"), std::invalid_argument);
  EXPECT_THROW(strata::detail::keyed_split(pick, 10, -1, head, strata::stream_t{}, "test"), std::invalid_argument);
  // Without keys there is no grouping: a list by key is refused.
  strata::buffer hb(sizeof(std::int64_t) * 2, strata::memory_space::device);
  strata::detail::keyed_split s(pick, 0, 0, reinterpret_cast<std::int64_t*>(hb.data()), strata::stream_t{}, "test");
  std::int64_t slot = 0;
  EXPECT_THROW(s.list(pick, 0, &slot, &slot), std::invalid_argument);
}
