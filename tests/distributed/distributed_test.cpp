// SPDX-License-Identifier: Apache-2.0
// Sharded SoA containers: scatter / gather, transform and reductions over every shard, and
// migration against a host model of where every record must end up; neighbour loops over shards
// with ghosts against a brute-force search. On the host backend the
// communicator's stand-in keeps 1 to 5 ranks in this process; on the CUDA backend one rank per
// GPU the machine has (NCCL).
#include <strata/distributed/distributed_vector.hpp>
#include <strata/distributed/neighbors.hpp>

#include "common/records.hpp"
#include "common/slabs.hpp"
#include "common/testing.hpp"

#include <cuda/std/bit>
#include <gtest/gtest.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace dist = strata::distributed;
using strata_test::particle;

/// Ranks a test may make: the host stand-in makes any number; on CUDA one per GPU.
int gpus_here() {
#if defined(STRATA_BACKEND_CUDA)
  int gpus = 0;
  return cudaGetDeviceCount(&gpus) == cudaSuccess ? gpus : 0;
#else
  return std::numeric_limits<int>::max();
#endif
}

std::vector<int> rank_counts() {
#if defined(STRATA_BACKEND_CUDA)
  std::vector<int> r;
  for (int k = 1; k <= std::min(gpus_here(), 4); ++k) r.push_back(k);
  return r;
#else
  return {1, 2, 3, 5};
#endif
}

/// More ranks than a split counts one by one (strata::detail::split_max_keys): the host stand-in
/// runs such a job; a CUDA machine would need that many GPUs.
constexpr int many_ranks = strata::detail::split_max_keys + 2;

using strata_test::slab_of;
struct drift {
  float dt;
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
    return p;
  }
};
struct mass_of {
  STRATA_HD double operator()(const particle& p) const { return double(p.mass); }
};
struct one_each {
  STRATA_HD long long operator()(const particle&) const { return 1; }
};
struct out_of_range {
  int ranks;
  STRATA_HD int operator()(const particle& p) const { return p.mass > 0.5f ? ranks : 0; }
};

using strata_test::near_face;

bool same(const particle& a, const particle& b) { return strata_test::same_bits(a, b); }

TEST(Distributed, ScatterGatherTransformReduce) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(99991)}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, n = " + std::to_string(n));
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<particle> d(comm);
      const auto host = strata_test::random_records<particle>(n, 5);
      d.scatter(host);
      EXPECT_EQ(d.size(), std::int64_t(n));
      auto back = d.gather();
      ASSERT_EQ(back.size(), n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(back[i], host[i])) << i;

      d.transform(drift{0.5f});
      back = d.gather();
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i].x, drift{0.5f}(host[i]).x) << i;

      EXPECT_EQ(d.transform_reduce_sum<long long>(one_each{}), (long long)n) << "integer sums are exact";
      double want = 0;
      for (const auto& p : host) want += double(p.mass);
      EXPECT_NEAR(d.transform_reduce_sum<double>(mass_of{}), want, 1e-9 * (1 + std::abs(want)));
    }
}

/// What scatter() gives each rank: host split into `ranks` consecutive parts of near-equal size.
template <class T>
std::vector<std::vector<T>> held_by_rank(const std::vector<T>& host, int ranks) {
  const std::size_t n = host.size();
  std::vector<std::vector<T>> held(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    held[std::size_t(r)].assign(host.begin() + std::ptrdiff_t(n * std::size_t(r) / std::size_t(ranks)),
                                host.begin() + std::ptrdiff_t(n * std::size_t(r + 1) / std::size_t(ranks)));
  return held;
}

/// The model of migrate: held[r] are rank r's records before; returns what each rank holds after
/// (first the records it kept: in order when more than 1 in leave_ratio_limit left; otherwise the
/// staying records among its last k places, k leaving, fill the places of the leaving ones below
/// them in increasing order; then the arrivals from source rank 0, 1, ... (not r), each source's
/// in order) and counts the records that moved.
template <class Dest, class T>
std::vector<std::vector<T>> after_migrate(const std::vector<std::vector<T>>& held, Dest dest, std::int64_t& moved) {
  const int ranks = int(held.size());
  std::vector<std::vector<T>> want(held.size());
  moved = 0;
  for (int r = 0; r < ranks; ++r) {
    std::vector<T> mine = held[std::size_t(r)];
    const auto stays = [&](const T& p) { return dest(p) == r; };
    const std::size_t k = std::size_t(std::count_if(mine.begin(), mine.end(), [&](const T& p) { return !stays(p); }));
    if (k > 0 && std::int64_t(k) > std::int64_t(mine.size()) / dist::distributed_soa_vector<T>::leave_ratio_limit) {
      std::vector<T> kept;
      std::copy_if(mine.begin(), mine.end(), std::back_inserter(kept), stays);
      want[std::size_t(r)] = kept;
      continue;
    }
    const std::size_t keep = mine.size() - k;
    std::vector<std::size_t> holes, fillers;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (i < keep && !stays(mine[i])) holes.push_back(i);
      if (i >= keep && stays(mine[i])) fillers.push_back(i);
    }
    EXPECT_EQ(holes.size(), fillers.size());
    for (std::size_t j = 0; j < holes.size(); ++j) mine[holes[j]] = mine[fillers[j]];
    mine.resize(keep);
    want[std::size_t(r)] = mine;
  }
  for (int src = 0; src < ranks; ++src)
    for (const auto& p : held[std::size_t(src)]) {
      const int to = dest(p);
      if (to != src) want[std::size_t(to)].push_back(p), ++moved;
    }
  return want;
}

template <class T>
void expect_shards(dist::distributed_soa_vector<T>& d, const std::vector<std::vector<T>>& want) {
  for (int r = 0; r < int(want.size()); ++r) {
    const auto got = d.shard(r).to_host();
    ASSERT_EQ(got.size(), want[std::size_t(r)].size()) << "rank " << r;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_TRUE(strata_test::same_bits(got[i], want[std::size_t(r)][i])) << "rank " << r << " record " << i;
  }
}

/// Slabs of [-1, 1) along w[0] of a record with doubles, arrays, a 2-byte and a 1-byte leaf.
struct slab_of_w {
  int ranks;
  STRATA_HD int operator()(const strata_test::cell_record& c) const {
    int r = int((c.w[0] + 1.0) * 0.5 * double(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

struct nudge_w {
  double by;
  STRATA_HD strata_test::cell_record operator()(strata_test::cell_record c) const {
    c.w[0] += by;
    return c;
  }
};

// The same model on a record that is not the particle: nested, mixed leaf sizes (8, 4, 2, 1 bytes),
// both migrate paths (most leave, then a few).
TEST(Distributed, MigrateMovesRecordsOfMixedLeaves) {
  STRATA_SEED_TRACE();
  using strata_test::cell_record;
  // Runs travel packed (every column in one message) up to the packing limit and column by column
  // past it: all packed (the default), none, and a limit that some runs of one exchange pass; with
  // leaves of 8, 4, 2 and 1 bytes in the wire block.
  for (int ranks : rank_counts())
    for (std::size_t limit : {std::numeric_limits<std::size_t>::max(), std::size_t(0), std::size_t(1) << 15}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, packing limit " + std::to_string(limit));
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<cell_record> d(comm);
      d.set_packing_limit(limit);
      const std::size_t n = 30011;
      const auto host = strata_test::random_records<cell_record>(n, 13);
      d.scatter(host);
      auto held = held_by_rank(host, ranks);
      std::int64_t expect_moved = 0;
      auto want = after_migrate(held, slab_of_w{ranks}, expect_moved);
      EXPECT_EQ(d.migrate(slab_of_w{ranks}).sent, expect_moved);
      expect_shards(d, want);
      // Move a few: slabs shifted by a small amount of w[0] (every record's w[0] nudged on the host model too).
      for (int r = 0; r < ranks; ++r) held[std::size_t(r)] = d.shard(r).to_host();
      const nudge_w nudge{0.01};
      d.transform(nudge);
      for (auto& h : held)
        for (auto& c : h) c = nudge(c);
      want = after_migrate(held, slab_of_w{ranks}, expect_moved);
      EXPECT_EQ(d.migrate(slab_of_w{ranks}).sent, expect_moved);
      if (ranks > 1) {
        EXPECT_GT(expect_moved, 0);
      }
      expect_shards(d, want);
      EXPECT_EQ(d.size(), std::int64_t(n));
    }
}

TEST(Distributed, MigrateSendsEveryRecordToItsRank) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts())
    for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(4099), std::size_t(100003)}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, n = " + std::to_string(n));
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<particle> d(comm);
      auto host = strata_test::random_records<particle>(n, 9);
      for (auto& p : host) p.vx = std::fmod(p.vx, 0.05f);  // slow; x spans the box [-1, 1) already
      d.scatter(host);
      auto held = held_by_rank(host, ranks);
      // Scattered records: most leave (the streaming split).
      std::int64_t expect_moved = 0;
      auto want = after_migrate(held, slab_of{ranks}, expect_moved);
      const auto moved = d.migrate(slab_of{ranks});
      EXPECT_EQ(moved.sent, expect_moved);
      EXPECT_EQ(moved.received, expect_moved);
      EXPECT_EQ(d.size(), std::int64_t(n)) << "no record lost or duplicated";
      expect_shards(d, want);
      // A second migrate with nothing to move leaves every shard as it is.
      const auto again = d.migrate(slab_of{ranks});
      EXPECT_EQ(again.sent, 0);
      expect_shards(d, want);
      // A small drift: few cross a face (gather and fill the holes).
      d.transform(drift{0.5f});
      for (int r = 0; r < ranks; ++r) held[std::size_t(r)] = d.shard(r).to_host();
      want = after_migrate(held, slab_of{ranks}, expect_moved);
      EXPECT_EQ(d.migrate(slab_of{ranks}).sent, expect_moved);
      if (ranks > 1 && n > 4000) {
        EXPECT_GT(expect_moved, 0);
      }
      expect_shards(d, want);
      EXPECT_EQ(d.size(), std::int64_t(n));
    }
}

// More ranks than migrate counts one by one: the leaving records are listed in order and sorted by
// destination instead, with the same result.
TEST(Distributed, MigrateWithMoreRanksThanASplitCounts) {
  STRATA_SEED_TRACE();
  const int ranks = many_ranks;
  if (gpus_here() < ranks) GTEST_SKIP() << "needs " << ranks << " GPUs";
  auto comm = dist::communicator::local(ranks);
  dist::distributed_soa_vector<particle> d(comm);
  const std::size_t n = 20011;
  auto host = strata_test::random_records<particle>(n, 5);
  for (auto& p : host) p.vx = std::fmod(p.vx, 0.05f);  // slow; x spans the box [-1, 1) already
  d.scatter(host);
  auto held = held_by_rank(host, ranks);
  std::int64_t expect_moved = 0;
  auto want = after_migrate(held, slab_of{ranks}, expect_moved);  // most leave, to many ranks
  EXPECT_EQ(d.migrate(slab_of{ranks}).sent, expect_moved);
  expect_shards(d, want);
  d.transform(drift{0.02f});
  for (int r = 0; r < ranks; ++r) held[std::size_t(r)] = d.shard(r).to_host();
  want = after_migrate(held, slab_of{ranks}, expect_moved);  // a few leave, to both neighbours
  EXPECT_EQ(d.migrate(slab_of{ranks}).sent, expect_moved);
  EXPECT_GT(expect_moved, 0);
  expect_shards(d, want);
}

/// Ranks as intervals of a record's fractional key shifted by `phase`: raising the phase by d moves
/// a fraction d * ranks of every rank's records to the next rank (the benchmark's pattern).
struct ring_of {
  int ranks;
  float phase;
  STRATA_HD int operator()(const particle& p) const {
    float w = p.vx - floorf(p.vx) + phase;
    w -= floorf(w);
    const int r = int(w * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

TEST(Distributed, RepeatedMigrationsKeepEveryRecordOnce) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    auto host = strata_test::random_records<particle>(50021, 6);
    d.scatter(host);
    auto bytes_less = [](const particle& a, const particle& b) { return std::memcmp(&a, &b, sizeof a) < 0; };
    std::sort(host.begin(), host.end(), bytes_less);
    for (int round = 0; round < 6; ++round) {
      const ring_of dest{ranks, 0.1f / float(ranks) * float(round)};
      d.migrate(dest);
      for (int r = 0; r < ranks; ++r)
        for (const auto& p : d.shard(r).to_host()) ASSERT_EQ(dest(p), r) << "round " << round;
      auto all = d.gather();
      std::sort(all.begin(), all.end(), bytes_less);
      ASSERT_EQ(all.size(), host.size());
      ASSERT_EQ(std::memcmp(all.data(), host.data(), host.size() * sizeof(particle)), 0) << "round " << round;
    }
  }
}

long fail_from = -1;
bool fail_from_ordinal(long ordinal, std::size_t, strata::memory_space) { return fail_from >= 0 && ordinal >= fail_from; }

TEST(Distributed, ReservedRoomOutlivesScatterAndMigrations) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    const auto host = strata_test::random_records<particle>(30011, 7);
    d.reserve(host.size());  // no rank can hold more than every record
    d.scatter(host);
    std::vector<std::size_t> room;
    for (int r = 0; r < ranks; ++r) {
      room.push_back(d.capacity(r));
      EXPECT_GE(room.back(), host.size()) << "rank " << r << ": scatter kept reserve()'s room";
    }
    // Rounds that move many records (migrate's split) and few (its hole filling).
    for (int round = 0; round < 5; ++round) {
      const ring_of dest{ranks, round < 3 ? 0.2f * float(round) : 0.4f + 0.01f * float(round)};
      d.migrate(dest);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(d.capacity(r), room[std::size_t(r)]) << "rank " << r << ", round " << round << ": no shard grew or shrank";
        for (const auto& p : d.shard(r).to_host()) ASSERT_EQ(dest(p), r) << "round " << round;
      }
    }
    EXPECT_EQ(d.size(), std::int64_t(host.size()));

    // A reserve that runs out of memory on some rank leaves every record where it was; the ranks
    // before it keep their new room. The first attempt fails at its first allocation (rank 0's),
    // each later one at its second, so each fails one rank further on.
    const auto before = d.gather();
    int failures = 0;
    for (bool threw = true; threw && failures <= ranks;) {
      fail_from = strata::testing::allocation_ordinal.load() + (failures > 0 ? 1 : 0);
      strata::testing::fail_allocation_if = fail_from_ordinal;
      threw = false;
      try {
        d.reserve(4 * host.size());
      } catch (const strata::out_of_memory&) {
        threw = true, ++failures;
      }
      strata::testing::fail_allocation_if = nullptr;
      fail_from = -1;
      const auto after = d.gather();
      ASSERT_EQ(after.size(), before.size());
      ASSERT_EQ(std::memcmp(after.data(), before.data(), before.size() * sizeof(particle)), 0) << "after failure " << failures;
    }
    EXPECT_EQ(failures, ranks) << "one failed growth per rank";
    d.reserve(4 * host.size());
    for (int r = 0; r < ranks; ++r) EXPECT_GE(d.capacity(r), 4 * host.size());
  }
}

long fail_exactly = -1;
bool fail_one_ordinal(long ordinal, std::size_t, strata::memory_space) { return ordinal == fail_exactly; }

/// Runs f on a thread of its own and fails the test (ending the process: a hung rank cannot be
/// joined) when it has not returned within a minute.
template <class F>
void within_a_minute(const std::string& what, F f) {
  auto done = std::async(std::launch::async, f);
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "%s: still running after 60 s (a rank waits for one that failed)\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();
}

// migrate and halo_exchange with their k-th allocation failing, for every k until they go through,
// whichever rank's thread makes it: the call throws on the caller's thread (no rank is left
// waiting in the exchange for one that failed), every record is where it was, and the next call
// works. Few records leave (holes filled from the shard's end) or many (the shard is split).
TEST(Distributed, AllocationFailuresStopEveryRankAndMoveNothing) {
  STRATA_SEED_TRACE();
  const auto host = strata_test::random_records<particle>(40009, 31);
  for (int ranks : rank_counts()) {
    if (ranks < 2) continue;
    for (float shift : {0.02f, 0.3f}) {
      int allocations = -1;
      for (long k = 0; k < 200 && allocations < 0; ++k) {
        const std::string what = std::to_string(ranks) + " ranks, shift " + std::to_string(shift) + ", allocation " + std::to_string(k) + " fails";
        SCOPED_TRACE(what);
        auto comm = dist::communicator::local(ranks);
        dist::distributed_soa_vector<particle> d(comm);
        d.scatter(host);
        (void)d.migrate(ring_of{ranks, 0.0f});  // records on their ranks
        const auto before = d.gather();
        bool threw = false;
        fail_exactly = strata::testing::allocation_ordinal.load() + k;
        strata::testing::fail_allocation_if = fail_one_ordinal;
        within_a_minute("migrate: " + what, [&] {
          try {
            (void)d.migrate(ring_of{ranks, shift});
          } catch (const strata::out_of_memory&) {
            threw = true;
          }
        });
        strata::testing::fail_allocation_if = nullptr;
        if (!threw) {
          allocations = int(k);
          break;
        }
        const auto after = d.gather();
        ASSERT_EQ(after.size(), before.size());
        ASSERT_EQ(std::memcmp(after.data(), before.data(), before.size() * sizeof(particle)), 0) << "a record moved although the call failed";
        (void)d.migrate(ring_of{ranks, shift});
        for (int r = 0; r < ranks; ++r)
          for (const auto& p : d.shard(r).to_host()) ASSERT_EQ((ring_of{ranks, shift}(p)), r) << "the next migrate after a failure";
      }
      EXPECT_GT(allocations, 0) << ranks << " ranks, shift " << shift << ": the sweep never got through, or migrate allocated nothing";
    }
    // Ghosts: the same sweep; a failed exchange leaves no ghost behind.
    int allocations = -1;
    for (long k = 0; k < 200 && allocations < 0; ++k) {
      const std::string what = std::to_string(ranks) + " ranks, halo_exchange, allocation " + std::to_string(k) + " fails";
      SCOPED_TRACE(what);
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<particle> d(comm);
      d.scatter(host);
      (void)d.migrate(slab_of{ranks});
      const auto before = d.gather();
      bool threw = false;
      fail_exactly = strata::testing::allocation_ordinal.load() + k;
      strata::testing::fail_allocation_if = fail_one_ordinal;
      within_a_minute("halo_exchange: " + what, [&] {
        try {
          (void)d.halo_exchange(near_face{ranks, 0.05f}, 2);
        } catch (const strata::out_of_memory&) {
          threw = true;
        }
      });
      strata::testing::fail_allocation_if = nullptr;
      if (!threw) {
        allocations = int(k);
        break;
      }
      for (int r = 0; r < ranks; ++r) EXPECT_EQ(d.ghosts(r), 0u) << "rank " << r << " kept ghosts of a failed exchange";
      const auto after = d.gather();
      ASSERT_EQ(after.size(), before.size());
      ASSERT_EQ(std::memcmp(after.data(), before.data(), before.size() * sizeof(particle)), 0);
    }
    EXPECT_GT(allocations, 0) << ranks << " ranks: halo_exchange";
  }
}

TEST(Distributed, SteadyMigrationsTakeNoNewMemory) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    if (ranks < 2) continue;
    for (float shift : {0.02f, 0.3f}) {  // few leave (holes filled), many leave (the split)
      SCOPED_TRACE(std::to_string(ranks) + " ranks, shift " + std::to_string(shift));
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<particle> d(comm);
      const auto host = strata_test::random_records<particle>(40009, 8);
      d.reserve(host.size());
      d.scatter(host);
      // The same records cross back and forth: every call moves what an earlier one moved.
      auto round = [&](int r) { return d.migrate(ring_of{ranks, (r % 2) * shift}).sent; };
      for (int r = 0; r < 4; ++r) (void)round(r);
      const long before = strata::testing::allocation_ordinal.load();
      std::int64_t sent = 0;
      for (int r = 4; r < 10; ++r) sent += round(r);
      EXPECT_GT(sent, 0);
      EXPECT_EQ(strata::testing::allocation_ordinal.load(), before) << "a steady migration asked for memory";
      (void)d.transform_reduce_sum<double>(mass_of{});
      const long after_sum = strata::testing::allocation_ordinal.load();
      (void)d.transform_reduce_sum<double>(mass_of{});
      EXPECT_EQ(strata::testing::allocation_ordinal.load(), after_sum) << "a repeated sum asked for memory";
      std::size_t kept = 0;
      for (int l = 0; l < comm.local_ranks(); ++l) kept += d.buffer_bytes(l);
      EXPECT_GT(kept, 0u) << "migrate keeps its buffers for the next call";
      d.release_buffers();
      for (int l = 0; l < comm.local_ranks(); ++l) EXPECT_EQ(d.buffer_bytes(l), 0u) << "rank " << l;
      auto all = d.gather();
      EXPECT_EQ(all.size(), host.size());
      EXPECT_EQ(d.size(), std::int64_t(host.size()));
      (void)round(0);  // buffers come back on demand
      EXPECT_EQ(d.size(), std::int64_t(host.size()));
    }
  }
}

TEST(Distributed, HaloExchangeCopiesRecordsNearAFaceToTheNeighbour) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    d.scatter(strata_test::random_records<particle>(20011, 4));
    d.migrate(slab_of{ranks});
    std::vector<std::vector<particle>> own(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) own[std::size_t(r)] = d.shard(r).to_host();
    const near_face ghost{ranks, 0.05f};
    std::vector<std::vector<particle>> want(static_cast<std::size_t>(ranks));
    std::int64_t copies = 0;  // ghosts by source rank, then by direction, then in record order
    for (int src = 0; src < ranks; ++src)
      for (int k = 0; k < 2; ++k)
        for (const auto& p : own[std::size_t(src)])
          if (const int to = ghost(p, k); to >= 0) want[std::size_t(to)].push_back(p), ++copies;
    const auto moved = d.halo_exchange(ghost, 2);
    EXPECT_EQ(moved.sent, copies);
    EXPECT_EQ(moved.received, copies);
    for (int r = 0; r < ranks; ++r) {
      const auto got = d.shard(r).to_host();
      const auto& mine = own[std::size_t(r)];
      ASSERT_EQ(d.ghosts(r), want[std::size_t(r)].size()) << "rank " << r;
      ASSERT_EQ(got.size(), mine.size() + want[std::size_t(r)].size());
      for (std::size_t i = 0; i < mine.size(); ++i) ASSERT_TRUE(same(got[i], mine[i])) << "own record " << i << " of rank " << r;
      for (std::size_t i = 0; i < want[std::size_t(r)].size(); ++i)
        ASSERT_TRUE(same(got[mine.size() + i], want[std::size_t(r)][i])) << "ghost " << i << " of rank " << r;
    }
    if (copies > 0) {
      EXPECT_THROW(d.migrate(slab_of{ranks}), strata::size_error) << "migrating ghosts would duplicate records";
    }
    d.drop_ghosts();
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(d.shard(r).size(), own[std::size_t(r)].size());
    EXPECT_EQ(d.size(), 20011);
  }
}

/// One of -1, 0, ..., ranks - 1 from a value's bits and a direction k, spread evenly, in integer
/// arithmetic: the host model and the device must agree on every record (float arithmetic may
/// round differently there, where nvcc fuses a multiply and an add).
STRATA_HD inline int spread_rank(std::uint32_t bits, int k, int ranks) {
  const std::uint32_t h = (bits ^ (std::uint32_t(k) * 0x9e3779b9u)) * 0x85ebca6bu;
  return int((std::uint64_t(h >> 8) * std::uint64_t(ranks + 1)) >> 24) - 1;
}

/// Ghosts whose destination varies from record to record within a direction: any rank, the
/// record's own (no ghost) or none (-1); `bad` sends records of mass above 0.5 to rank `ranks`.
struct spread_ghosts {
  int ranks;
  bool bad = false;
  STRATA_HD int operator()(const particle& p, int k) const {
    if (bad && p.mass > 0.5f) return ranks;
    return spread_rank(cuda::std::bit_cast<std::uint32_t>(p.vy), k, ranks);
  }
};

/// The shards after halo_exchange(fn, directions) from shards `own`: each rank's own records, then
/// its ghosts by source rank, direction and record order; and how many copies that is.
template <class R, class GhostFn>
std::int64_t expected_halo(const std::vector<std::vector<R>>& own, GhostFn fn, int directions, std::vector<std::vector<R>>& want) {
  const int ranks = int(own.size());
  want = own;
  std::int64_t copies = 0;
  for (int src = 0; src < ranks; ++src)
    for (int k = 0; k < directions; ++k)
      for (const auto& p : own[std::size_t(src)])
        if (const int to = fn(p, k); to >= 0 && to != src) want[std::size_t(to)].push_back(p), ++copies;
  return copies;
}

/// halo_exchange(fn, directions) on `ranks` ranks holding n random records of type R, runs packed up
/// to `limit` bytes: every shard as expected_halo says, and drop_ghosts restores them.
template <class R, class GhostFn>
void check_halo(int ranks, int directions, std::size_t n, unsigned seed, GhostFn fn,
                std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  auto comm = dist::communicator::local(ranks);
  dist::distributed_soa_vector<R> d(comm);
  d.set_packing_limit(limit);
  d.scatter(strata_test::random_records<R>(n, seed));
  std::vector<std::vector<R>> own(static_cast<std::size_t>(ranks)), want;
  for (int r = 0; r < ranks; ++r) own[std::size_t(r)] = d.shard(r).to_host();
  const std::int64_t copies = expected_halo(own, fn, directions, want);
  const auto moved = d.halo_exchange(fn, directions);
  EXPECT_EQ(moved.sent, copies);
  EXPECT_EQ(moved.received, copies);
  if (ranks > 1 && directions > 0) {
    EXPECT_GT(copies, 0);
  }
  for (int r = 0; r < ranks; ++r) {
    const auto got = d.shard(r).to_host();
    const auto& w = want[std::size_t(r)];
    ASSERT_EQ(got.size(), w.size()) << "rank " << r;
    EXPECT_EQ(d.ghosts(r), w.size() - own[std::size_t(r)].size()) << "rank " << r;
    for (std::size_t i = 0; i < w.size(); ++i) ASSERT_TRUE(strata_test::same_bits(got[i], w[i])) << "record " << i << " of rank " << r;
  }
  d.drop_ghosts();
  EXPECT_EQ(d.size(), std::int64_t(n));
}
void check_spread_halo(int ranks, int directions, std::size_t n, unsigned seed) { check_halo<particle>(ranks, directions, n, seed, spread_ghosts{ranks}); }

/// Ghosts of cell_records: like spread_ghosts, from the fraction of w[0].
struct spread_cell_ghosts {
  int ranks;
  STRATA_HD int operator()(const strata_test::cell_record& c, int k) const {
    const std::uint64_t b = cuda::std::bit_cast<std::uint64_t>(c.w[0]);
    return spread_rank(std::uint32_t(b ^ (b >> 32)), k, ranks);
  }
};

TEST(Distributed, HaloExchangeSendsEachRecordWhereItsDirectionSays) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    check_spread_halo(ranks, 3, 30011, 6);
    check_spread_halo(ranks, 1, 1001, 7);
    check_spread_halo(ranks, 0, 1001, 8);
  }
}

// A record that is not the particle (nested, leaves of 8, 4, 2 and 1 bytes), its ghosts travelling
// packed, column by column, and some runs of one exchange each way.
TEST(Distributed, HaloExchangeMovesRecordsOfMixedLeaves) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts())
    for (std::size_t limit : {std::numeric_limits<std::size_t>::max(), std::size_t(0), std::size_t(1) << 15}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, packing limit " + std::to_string(limit));
      check_halo<strata_test::cell_record>(ranks, 2, 30011, 17, spread_cell_ghosts{ranks}, limit);
    }
}

// More ranks than a split counts one by one: every direction's ghosts are listed in order and the
// whole send buffer is sorted by destination, with the same result.
TEST(Distributed, HaloExchangeWithMoreRanksThanASplitCounts) {
  STRATA_SEED_TRACE();
  const int ranks = many_ranks;
  if (gpus_here() < ranks) GTEST_SKIP() << "needs " << ranks << " GPUs";
  check_spread_halo(ranks, 3, 20011, 11);
}

TEST(Distributed, SteadyHaloExchangesTakeNoNewMemory) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    if (ranks < 2) continue;
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    d.scatter(strata_test::random_records<particle>(40009, 10));
    d.migrate(slab_of{ranks});
    auto round = [&] {
      const auto m = d.halo_exchange(near_face{ranks, 0.1f}, 2);
      d.drop_ghosts();
      return m.sent;
    };
    for (int r = 0; r < 3; ++r) (void)round();
    const long before = strata::testing::allocation_ordinal.load();
    std::int64_t sent = 0;
    for (int r = 0; r < 5; ++r) sent += round();
    EXPECT_GT(sent, 0);
    EXPECT_EQ(strata::testing::allocation_ordinal.load(), before) << "a steady halo exchange asked for memory";
    EXPECT_EQ(d.size(), 40009);
  }
}

// migrate and halo_exchange refuse a destination outside the job's ranks before any record moves
// or is copied, and the container stays usable.
TEST(Distributed, DestinationsOutOfRangeAreRefusedBeforeAnythingMoves) {
  const int ranks = rank_counts().back();
  auto comm = dist::communicator::local(ranks);
  dist::distributed_soa_vector<particle> d(comm);
  auto host = strata_test::random_records<particle>(5003, 2);
  for (auto& p : host) p.mass = std::abs(p.mass);
  d.scatter(host);
  for (const char* op : {"migrate", "halo_exchange"}) {
    SCOPED_TRACE(op);
    try {
      if (std::string(op) == "migrate") d.migrate(out_of_range{ranks});
      else d.halo_exchange(spread_ghosts{ranks, true}, 2);
      FAIL() << "nothing thrown";
    } catch (const strata::size_error& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("ranks are 0 to " + std::to_string(ranks - 1)), std::string::npos) << e.what();
    }
    EXPECT_EQ(d.size(), 5003) << "every record is still there";
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(d.ghosts(r), 0u) << "rank " << r;
    const auto back = d.gather();
    ASSERT_EQ(back.size(), host.size());
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_TRUE(same(back[i], host[i])) << "record " << i << " moved or changed";
  }
  // The container stays usable: the same exchange without the bad records goes through.
  std::vector<std::vector<particle>> own(static_cast<std::size_t>(ranks)), want;
  for (int r = 0; r < ranks; ++r) own[std::size_t(r)] = d.shard(r).to_host();
  EXPECT_EQ(d.halo_exchange(spread_ghosts{ranks}, 2).received, expected_halo(own, spread_ghosts{ranks}, 2, want));
}

/// Only the last rank holds records with a bad destination: every rank stops at the meeting after
/// the counting, none sends, and the next migration (with good destinations) runs as usual.
struct bad_on_heavy {
  int ranks;
  STRATA_HD int operator()(const particle& p) const { return p.mass > 1.5f ? ranks + 3 : slab_of{ranks}(p); }
};
TEST(Distributed, OneRanksBadDestinationStopsEveryRank) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts()) {
    if (ranks < 2) continue;
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    const std::size_t n = 30011;
    auto host = strata_test::random_records<particle>(n, 21);
    for (auto& p : host) p.mass = std::fmod(std::abs(p.mass), 1.0f);  // x spans the box [-1, 1) already
    // scatter gives the last rank the last slice: only it holds heavy records.
    for (std::size_t i = n - n / std::size_t(ranks) + 1; i < n; i += 97) host[i].mass = 2.0f;
    d.scatter(host);
    try {
      d.migrate(bad_on_heavy{ranks});
      FAIL() << "nothing thrown";
    } catch (const strata::size_error& e) {
      EXPECT_NE(std::string(e.what()).find("a record of rank " + std::to_string(ranks - 1) + " names rank " + std::to_string(ranks + 3)),
                std::string::npos)
          << e.what();
    }
    const auto back = d.gather();
    ASSERT_EQ(back.size(), host.size()) << ranks << " ranks";
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_TRUE(same(back[i], host[i])) << ranks << " ranks: record " << i << " moved or changed";
    for (auto& p : host) p.mass = std::fmod(p.mass, 1.0f);
    auto held = held_by_rank(host, ranks);
    std::int64_t expect_moved = 0;
    const auto want = after_migrate(held, slab_of{ranks}, expect_moved);
    d.scatter(host);
    EXPECT_EQ(d.migrate(slab_of{ranks}).sent, expect_moved) << ranks << " ranks";
    for (int r = 0; r < ranks; ++r) {
      const auto got = d.shard(r).to_host();
      ASSERT_EQ(got.size(), want[std::size_t(r)].size()) << ranks << " ranks, rank " << r;
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(same(got[i], want[std::size_t(r)][i])) << "rank " << r << " record " << i;
    }
  }
}

#if defined(STRATA_BACKEND_CUDA)
/// The layout of a job of one process per GPU: each rank joins through ncclCommInitRank with the
/// unique id rank 0 made and drives only its own shard (a host thread per rank stands in for a
/// process). Counts then cross between ranks through NCCL, not host memory.
TEST(Distributed, RanksThatJoinSeparatelyMigrateAsOneJob) {
  STRATA_SEED_TRACE();
  const int ranks = rank_counts().back();
  if (ranks < 2) GTEST_SKIP() << "needs two GPUs";
  const std::size_t n = 100003;
  auto host = strata_test::random_records<particle>(n, 11);
  for (auto& p : host) p.vx = std::fmod(p.vx, 0.05f);  // slow; x spans the box [-1, 1) already
  auto held = held_by_rank(host, ranks);
  std::int64_t expect_moved = 0;
  const auto want = after_migrate(held, slab_of{ranks}, expect_moved);
  const ncclUniqueId id = dist::communicator::unique_id();
  std::vector<std::vector<particle>> got(static_cast<std::size_t>(ranks));
  std::vector<std::int64_t> sent(static_cast<std::size_t>(ranks)), received(static_cast<std::size_t>(ranks)), total(static_cast<std::size_t>(ranks));
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        auto comm = dist::communicator::join(id, ranks, r, r);
        dist::distributed_soa_vector<particle> d(comm);
        d.scatter(held[std::size_t(r)]);
        const auto moved = d.migrate(slab_of{ranks});
        sent[std::size_t(r)] = moved.sent, received[std::size_t(r)] = moved.received;
        total[std::size_t(r)] = d.size();
        got[std::size_t(r)] = d.gather();
      } catch (const std::exception& e) {
        errors[std::size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  std::int64_t all_sent = 0, all_received = 0;
  for (int r = 0; r < ranks; ++r) {
    ASSERT_EQ(errors[std::size_t(r)], "") << "rank " << r;
    EXPECT_EQ(total[std::size_t(r)], std::int64_t(n)) << "rank " << r << " sees the job's size";
    all_sent += sent[std::size_t(r)], all_received += received[std::size_t(r)];
    ASSERT_EQ(got[std::size_t(r)].size(), want[std::size_t(r)].size()) << "rank " << r;
    for (std::size_t i = 0; i < got[std::size_t(r)].size(); ++i)
      ASSERT_TRUE(same(got[std::size_t(r)][i], want[std::size_t(r)][i])) << "rank " << r << " record " << i;
  }
  EXPECT_EQ(all_sent, expect_moved);
  EXPECT_EQ(all_received, expect_moved);
}
#endif

#if !defined(STRATA_BACKEND_CUDA)
TEST(Distributed, StandInRefusesUnmatchedTransfers) {
  auto comm = dist::communicator::local(2);
  std::vector<char> a(8), b(8);
  EXPECT_THROW(comm.group([&] { comm.send(0, a.data(), 8, 1); }), dist::transport_error);
  EXPECT_THROW(comm.group([&] { comm.recv(1, b.data(), 8, 0); }), dist::transport_error);
  EXPECT_THROW(comm.group([&] {
    comm.send(0, a.data(), 8, 1);
    comm.recv(1, b.data(), 4, 0);
  }),
               dist::transport_error);
  EXPECT_THROW(comm.send(0, a.data(), 8, 2), strata::size_error);
}

// rank_group: each rank issues its part from its own thread; the stand-in meets them all, then
// matches. A mismatch, or a rank whose part throws, fails every rank instead of leaving one waiting.
TEST(Distributed, StandInMatchesTransfersIssuedFromEveryRanksThread) {
  auto comm = dist::communicator::local(3);
  std::vector<std::vector<int>> data = {{1, 2}, {3, 4}, {5, 6}}, got(3, std::vector<int>(2, 0));
  auto each = [&](auto part) {
    std::vector<std::string> errors(3);
    std::vector<std::thread> t;
    for (int l = 0; l < 3; ++l)
      t.emplace_back([&, l] {
        try {
          comm.rank_group(l, [&] { part(l); });
        } catch (const dist::transport_error& e) {
          errors[std::size_t(l)] = e.what();
        }
      });
    for (auto& th : t) th.join();
    return errors;
  };
  // A ring: rank l sends its pair to l + 1.
  auto errors = each([&](int l) {
    comm.send(l, data[std::size_t(l)].data(), 2 * sizeof(int), (l + 1) % 3);
    comm.recv(l, got[std::size_t(l)].data(), 2 * sizeof(int), (l + 2) % 3);
  });
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(errors[std::size_t(l)], "");
    EXPECT_EQ(got[std::size_t(l)], data[std::size_t((l + 2) % 3)]) << "rank " << l;
  }
  errors = each([&](int l) {
    comm.send(l, data[std::size_t(l)].data(), 2 * sizeof(int), (l + 1) % 3);
    comm.recv(l, got[std::size_t(l)].data(), (l == 1 ? 1 : 2) * sizeof(int), (l + 2) % 3);
  });
  for (int l = 0; l < 3; ++l) EXPECT_NE(errors[std::size_t(l)].find("receives 4"), std::string::npos) << "rank " << l << ": " << errors[std::size_t(l)];
  errors = each([&](int l) {
    if (l == 2) comm.send(l, data[2].data(), 8, 7);  // no rank 7: this rank's part throws
  });
  for (int l = 0; l < 3; ++l) EXPECT_NE(errors[std::size_t(l)].find("rank 2's exchange failed"), std::string::npos) << "rank " << l << ": " << errors[std::size_t(l)];
  errors = each([&](int l) {
    if (l == 1) throw 42;  // not a std::exception: still every rank hears of it
  });
  for (int l = 0; l < 3; ++l) EXPECT_NE(errors[std::size_t(l)].find("rank 1's exchange failed"), std::string::npos) << "rank " << l << ": " << errors[std::size_t(l)];
}
#endif


// Neighbour loops over shards with ghosts: every rank's own records see, among its own records and
// its ghosts, exactly the neighbours a brute-force search over every record of the job finds (a box
// periodic along x, the slab axis, so ranks 0 and R - 1 are neighbours too).
namespace nb = strata::neighbor;
/// Ghosts of slabs of the periodic x axis [-1, 1): within `cut` of the lower face to the rank below
/// (rank 0's to rank R - 1), of the upper face to the rank above; none to the rank itself.
struct periodic_face {
  int ranks;
  float cut;
  STRATA_HD int operator()(const particle& p, int k) const {
    const int me = slab_of{ranks}(p);
    const float width = 2.0f / float(ranks), lo = -1.0f + width * float(me);
    const int to = k == 0 ? (p.x < lo + cut ? (me + ranks - 1) % ranks : -1) : (p.x >= lo + width - cut ? (me + 1) % ranks : -1);
    return to == me ? -1 : to;
  }
};
struct neighbour_sum {
  int n;
  double r2;
};
struct add_neighbour {
  STRATA_HD void operator()(neighbour_sum& s, strata::index_t, strata::index_t, const nb::vec3<float>&, float r2) const { ++s.n, s.r2 += double(r2); }
};
struct ignore_pair {
  STRATA_HD void operator()(strata::index_t, strata::index_t, const nb::vec3<float>&, float) const {}
};
struct store_sum {
  int* n;
  double* r2;
  STRATA_HD void operator()(strata::index_t i, const neighbour_sum& s) const { n[i] = s.n, r2[i] = s.r2; }
};

TEST(Distributed, NeighbourLoopsSeeGhostsAsNeighbours) {
  STRATA_SEED_TRACE();
  std::mt19937_64 rng(strata_test::test_seed());
  const double cutoff = 0.2;
  const nb::box box{{-1, -1, -1}, {1, 1, 1}, {nb::boundary::periodic, nb::boundary::open, nb::boundary::open}};
  const std::size_t n = strata_test::under_sanitizer() ? 1500 : 4000;
  std::vector<particle> all(n);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i) all[i] = particle{u(rng), u(rng), u(rng), 0, 0, 0, float(i)};  // mass: the record's id
  for (int ranks : rank_counts()) {
    if (2.0 / ranks < cutoff) continue;  // ghosts come from the next slab only
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> d(comm);
    d.scatter(all);
    (void)d.migrate(slab_of{ranks});
    (void)d.halo_exchange(periodic_face{ranks, float(cutoff)}, 2);
    auto lists = dist::make_cell_lists<&particle::x, &particle::y, &particle::z>(d, box, cutoff);
    const auto& g = lists[0].geometry();
    // The reference: every record against every other, minimum image along x.
    std::vector<int> want_n(n, 0);
    std::vector<double> want_r2(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        const float r2 = nb::norm2(g.separation({all[i].x, all[i].y, all[i].z}, {all[j].x, all[j].y, all[j].z}));
        if (r2 < float(cutoff * cutoff)) ++want_n[i], want_r2[i] += double(r2);
      }
    std::vector<thrust::device_vector<int>> counts;
    std::vector<thrust::device_vector<double>> sums;
    for (int l = 0; l < ranks; ++l) {
      strata::detail::device_guard on(comm.device(l));
      counts.emplace_back(d.shard(l).size(), -1);
      sums.emplace_back(d.shard(l).size(), -1.0);
    }
    dist::accumulate_neighbors(d, lists, cutoff, neighbour_sum{0, 0}, add_neighbour{}, [&](int l) {
      return store_sum{thrust::raw_pointer_cast(counts[std::size_t(l)].data()), thrust::raw_pointer_cast(sums[std::size_t(l)].data())};
    });
    std::size_t seen = 0;
    for (int l = 0; l < ranks; ++l) {
      const auto h = d.shard(l).to_host();
      const std::size_t own = h.size() - d.ghosts(l);
      std::vector<int> got_n(h.size());
      std::vector<double> got_r2(h.size());
      thrust::copy(counts[std::size_t(l)].begin(), counts[std::size_t(l)].end(), got_n.begin());
      thrust::copy(sums[std::size_t(l)].begin(), sums[std::size_t(l)].end(), got_r2.begin());
      for (std::size_t i = 0; i < own; ++i, ++seen) {
        const std::size_t id = std::size_t(h[i].mass);
        ASSERT_EQ(got_n[i], want_n[id]) << "rank " << l << ", record id " << id;
        ASSERT_NEAR(got_r2[i], want_r2[id], 1e-9 * (1 + want_r2[id])) << "rank " << l << ", record id " << id;
      }
      for (std::size_t i = own; i < h.size(); ++i) EXPECT_EQ(got_n[i], -1) << "a ghost's slot was written (rank " << l << ")";
    }
    EXPECT_EQ(seen, n);
    // Half pairs would count a pair of two ranks twice; lists of another exchange are stale.
    if (ranks > 1) {
      EXPECT_THROW(nb::for_each_neighbor(d.shard(0), lists[0], cutoff, ignore_pair{}, {nb::pairs::half}), std::invalid_argument);
      (void)d.halo_exchange(periodic_face{ranks, float(cutoff)}, 2);  // more ghosts than the lists hold
      EXPECT_THROW(dist::for_each_neighbor(d, lists, cutoff, [](int) { return ignore_pair{}; }), std::invalid_argument);
      d.drop_ghosts();
      EXPECT_THROW(dist::accumulate_neighbors(d, lists, cutoff, neighbour_sum{0, 0}, add_neighbour{}, [&](int l) {
                     return store_sum{thrust::raw_pointer_cast(counts[std::size_t(l)].data()), thrust::raw_pointer_cast(sums[std::size_t(l)].data())};
                   }),
                   std::invalid_argument);
      // An exchange that brings as many ghosts as the lists hold, in an order the lists never
      // sorted: refused all the same, and right again after a rebuild.
      (void)d.halo_exchange(periodic_face{ranks, float(cutoff)}, 2);
      lists.rebuild(d);
      d.drop_ghosts();
      (void)d.halo_exchange(periodic_face{ranks, float(cutoff)}, 2);
      for (int l = 0; l < ranks; ++l) ASSERT_EQ(strata::index_t(d.ghosts(l)), lists[l].size() - lists[l].owned());
      EXPECT_THROW(dist::for_each_neighbor(d, lists, cutoff, [](int) { return ignore_pair{}; }), std::invalid_argument) << "same counts, new ghosts";
      lists.rebuild(d);
      EXPECT_NO_THROW(dist::for_each_neighbor(d, lists, cutoff, [](int) { return ignore_pair{}; }));
    }
  }
}

}  // namespace
