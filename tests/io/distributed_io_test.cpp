// SPDX-License-Identifier: Apache-2.0
// A distributed_soa_vector through an HDF5 file (strata/io/distributed.hpp): every rank's records
// come back to the same rank after a migration reordered them, a restart refuses another rank
// count, ghosts are refused, and a failed read leaves the ranks' records as they were.
#include <strata/io/distributed.hpp>

#include "common/allocation_failures.hpp"
#include "common/records.hpp"
#include "common/slabs.hpp"
#include "common/temp_path.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace io = strata::io;
namespace dist = strata::distributed;
using strata_test::particle;

namespace {

using strata_test::temp_path;

using strata_test::near_face;
using strata_test::slab_of;

std::vector<std::vector<particle>> shards_of(dist::distributed_soa_vector<particle>& d) {
  std::vector<std::vector<particle>> out;
  for (int l = 0; l < d.comm().local_ranks(); ++l) out.push_back(d.shard(l).to_host());
  return out;
}

void expect_same_shards(const std::vector<std::vector<particle>>& got, const std::vector<std::vector<particle>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t l = 0; l < got.size(); ++l) {
    ASSERT_EQ(got[l].size(), want[l].size()) << "rank " << l;
    EXPECT_EQ(strata_test::first_difference<particle>(got[l], want[l]), -1) << "rank " << l << ": "
                                                                           << strata_test::describe_difference<particle>(got[l], want[l]);
  }
}

std::vector<particle> in_box(std::size_t n, unsigned seed) {
  auto v = strata_test::random_records<particle>(n, seed);
  for (std::size_t i = 0; i < n; ++i) v[i].x = float(int(i * 2654435761u % 2000) - 1000) / 1000.0f;  // in [-1, 1)
  return v;
}

/// The call throws E with a message holding `part`.
template <class E, class F>
void expect_refused(F&& f, const std::string& part) {
  try {
    f();
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another type: " << e.what();
    return;
  }
  ADD_FAILURE() << "nothing thrown; expected: " << part;
}

std::vector<int> rank_counts() {
#if defined(STRATA_BACKEND_CUDA)
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  std::vector<int> r;
  for (int k = 1; k <= std::min(gpus, 4); ++k) r.push_back(k);
  return r;
#else
  return {1, 2, 3};
#endif
}

}  // namespace

TEST(DistributedFiles, EveryRankReadsBackItsOwnRecords) {
  STRATA_SEED_TRACE();
  for (int ranks : rank_counts())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(20000)}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, n = " + std::to_string(n));
      auto comm = dist::communicator::local(ranks);
      dist::distributed_soa_vector<particle> d(comm);
      d.scatter(in_box(n, 3));
      (void)d.migrate(slab_of{ranks});  // ranks now hold uneven, reordered parts
      const auto want = shards_of(d);
      temp_path tmp("ranks");
      {
        io::file f = io::file::create(tmp.str());
        io::write_options o;
        o.staging_records = 999;  // several staging blocks on a GPU
        io::write(f, "checkpoint/step10", d, o);
      }
      dist::distributed_soa_vector<particle> back(comm);
      back.scatter(in_box(5, 4));  // something to replace
      io::file f = io::file::open(tmp.str());
      io::read(f, "checkpoint/step10", back);
      expect_same_shards(shards_of(back), want);
      for (int l = 0; l < ranks; ++l) EXPECT_EQ(back.ghosts(l), 0u);
      EXPECT_EQ(back.size(), std::int64_t(n));
      // One rank's group is an ordinary container's group.
      const auto first = io::read<strata::host_soa_vector<particle>>(f, "checkpoint/step10/rank0");
      EXPECT_EQ(first.to_host().size(), want[0].size());
    }
}

TEST(DistributedFiles, RefusalsNameTheProblemAndKeepTheRecords) {
  STRATA_SEED_TRACE();
  const int ranks = rank_counts().back();
  auto comm = dist::communicator::local(ranks);
  dist::distributed_soa_vector<particle> d(comm);
  d.scatter(in_box(3000, 5));
  temp_path tmp("refusals");
  io::file f = io::file::create(tmp.str());
  io::write(f, "ckpt", d);

  // A second write to the same group needs overwrite; with it, the new records replace the old.
  expect_refused<io::file_error>([&] { io::write(f, "ckpt", d); }, "already has 'ckpt'");

  // Ghosts are refused: a checkpoint holds each record once.
  if (ranks > 1) {
    (void)d.migrate(slab_of{ranks});
    (void)d.halo_exchange(near_face{ranks, 0.1f}, 2);
    std::size_t ghosts = 0;
    for (int l = 0; l < ranks; ++l) ghosts += d.ghosts(l);
    ASSERT_GT(ghosts, 0u);
    expect_refused<strata::size_error>([&] { io::write(f, "with-ghosts", d); }, "ghosts; drop_ghosts() first");
    EXPECT_LE(H5Lexists(f.id(), "with-ghosts", H5P_DEFAULT), 0) << "a refused write leaves no group";
    d.drop_ghosts();
  }
  io::write_options o;
  o.overwrite = true;
  io::write(f, "ckpt", d, o);
  const auto want = shards_of(d);

  // Another rank count: refused, naming both counts; the destination keeps its records. (A CUDA
  // machine of one GPU makes no job of another count.)
  const std::vector<int> counts = rank_counts();
  const int other_ranks = ranks > 1 ? ranks - 1 : counts.size() > 1 || counts.back() > 1 ? 2 : 0;
#if !defined(STRATA_BACKEND_CUDA)
  ASSERT_GT(other_ranks, 0);
#endif
  if (other_ranks > 0) {
    auto other = dist::communicator::local(other_ranks);
    dist::distributed_soa_vector<particle> wrong(other);
    wrong.scatter(in_box(10, 6));
    const auto before = shards_of(wrong);
    expect_refused<io::schema_error>([&] { io::read(f, "ckpt", wrong); },
                                     "written by a job of " + std::to_string(ranks) + " ranks and this job has " + std::to_string(other_ranks));
    expect_same_shards(shards_of(wrong), before);
  }

  // A group of one container is no distributed checkpoint.
  io::write(f, "single", strata::host_soa_vector<particle>(in_box(4, 7)));
  expect_refused<io::file_error>([&] { io::read(f, "single", d); }, "no strata.ranks attribute");

  // A rank's group missing (a damaged file): refused, and no rank's records change.
  dist::distributed_soa_vector<particle> back(comm);
  back.scatter(in_box(11, 8));
  const auto kept = shards_of(back);
  if (ranks > 1) {
    ASSERT_GE(H5Ldelete(f.id(), ("ckpt/rank" + std::to_string(ranks - 1)).c_str(), H5P_DEFAULT), 0);
    expect_refused<io::file_error>([&] { io::read(f, "ckpt", back); }, "holds no group for rank " + std::to_string(ranks - 1));
    expect_same_shards(shards_of(back), kept);
  } else {
    io::read(f, "ckpt", back);
    expect_same_shards(shards_of(back), want);
  }
}

// A write that fails part way (an allocation of some rank's staging fails) leaves the file as it
// was: no partial group, no parent groups it created, an overwritten checkpoint still readable.
TEST(DistributedIo, FailedWriteLeavesTheFileAsItWas) {
  const int ranks = rank_counts().back();
  auto comm = dist::communicator::local(ranks);
  dist::distributed_soa_vector<particle> d(comm);
  d.scatter(in_box(4000, 9));
  temp_path tmp("failed");
  io::file f = io::file::create(tmp.str());
  io::write(f, "kept", d);
  const auto want = shards_of(d);
  dist::distributed_soa_vector<particle> other(comm);
  other.scatter(in_box(3000, 10));
  io::write_options o;
  o.staging_records = 700;  // several blocks a rank
  o.overwrite = true;
  int failures = 0;
  for (const char* path : {"runs/a/ckpt", "kept"}) {
    SCOPED_TRACE(path);
    const int made = strata_test::sweep_allocation_failures(
        path, [] { return 0; }, [&](int&) { io::write(f, path, other, o); },
        [&](int&) {
          ++failures;
          if (path[0] == 'r') {
            EXPECT_LE(H5Lexists(f.id(), "runs", H5P_DEFAULT), 0) << "a failed write left the parent groups it created";
          }
          EXPECT_LE(H5Lexists(f.id(), "kept.strata-partial", H5P_DEFAULT), 0);
          dist::distributed_soa_vector<particle> back(comm);
          io::read(f, "kept", back);
          expect_same_shards(shards_of(back), want);
        },
        [&](int&) {}, false);
    EXPECT_GT(made, 0) << "the write made no allocation to fail";
  }
  // The last write replaced "kept" with `other`'s records.
  dist::distributed_soa_vector<particle> back(comm);
  io::read(f, "kept", back);
  expect_same_shards(shards_of(back), shards_of(other));
  EXPECT_GT(failures, 1);
}
