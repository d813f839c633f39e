// SPDX-License-Identifier: Apache-2.0
// A job of one process per GPU started by mpiexec: every process joins through join_mpi(), and the
// job migrates records as the single-process layout does (checked against a host model that every
// process computes from the same seed). Run as `mpiexec -n R mpi_join_test` with R <= the GPUs.
#include <strata/distributed/distributed_vector.hpp>
#include <strata/distributed/mpi.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace dist = strata::distributed;

struct body {
  BOOST_HANA_DEFINE_STRUCT(body, (float, x), (float, vx), (std::int32_t, id), (double, mass));
};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int r = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &r);
  return r;
}

/// Slabs of [-1, 1) along x.
struct slab_of {
  int ranks;
  STRATA_HD int operator()(const body& b) const {
    const int r = int((b.x + 1.0f) * 0.5f * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};
struct one_each {
  STRATA_HD long long operator()(const body&) const { return 1; }
};

/// The same fresh records on every process: rank 0's seed, broadcast.
std::vector<body> job_records(std::size_t n) {
  std::uint64_t seed = strata_test::test_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  auto all = strata_fixtures::seeded_records<body>(n, seed, 31);
  for (std::size_t i = 0; i < n; ++i) {
    all[i].x = float(int(i * 2654435761u % 2000u)) / 1000.0f - 1.0f;  // spread over every slab
    all[i].id = std::int32_t(i);
  }
  return all;
}

TEST(MpiJoin, EveryProcessIsTheRankMpiGaveIt) {
  auto comm = dist::join_mpi();
  EXPECT_EQ(comm.size(), world_size());
  ASSERT_EQ(comm.local_ranks(), 1);
  EXPECT_EQ(comm.rank(0), world_rank());
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  EXPECT_EQ(comm.device(0), world_rank() % gpus) << "one node: the node-local rank picks the GPU";
  // An all-reduce through NCCL agrees with MPI's.
  const std::int64_t got = comm.all_reduce_sum(std::vector<std::int64_t>{std::int64_t(world_rank()) + 1});
  EXPECT_EQ(got, std::int64_t(world_size()) * (world_size() + 1) / 2);
}

TEST(MpiJoin, RecordsMigrateToTheirSlabsAcrossProcesses) {
  STRATA_SEED_TRACE();
  const int R = world_size(), me = world_rank();
  auto comm = dist::join_mpi();
  const std::size_t n = 100003;
  const auto all = job_records(n);
  const std::size_t lo = n * std::size_t(me) / std::size_t(R), hi = n * std::size_t(me + 1) / std::size_t(R);
  dist::distributed_soa_vector<body> d(comm);
  d.scatter(std::span<const body>(all).subspan(lo, hi - lo));
  EXPECT_EQ(d.size(), std::int64_t(n));
  const auto moved = d.migrate(slab_of{R});
  EXPECT_EQ(d.size(), std::int64_t(n));
  EXPECT_EQ(d.transform_reduce_sum<long long>(one_each{}), (long long)n);

  // This rank holds exactly the records of its slab, each once, bit for bit.
  auto got = d.gather();
  std::vector<body> want;
  std::int64_t leaving = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (slab_of{R}(all[i]) == me) want.push_back(all[i]);
    if (i >= lo && i < hi && slab_of{R}(all[i]) != me) ++leaving;
  }
  EXPECT_EQ(moved.sent, leaving);
  auto by_id = [](const body& a, const body& b) { return a.id < b.id; };
  std::sort(got.begin(), got.end(), by_id);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(strata_test::same_bits(got[i], want[i])) << "record " << i << " of rank " << me;
  std::int64_t sent_all = 0, received_all = 0;
  MPI_Allreduce(&moved.sent, &sent_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&moved.received, &received_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sent_all, received_all);
}

TEST(MpiJoin, ABadDeviceOnOneProcessThrowsOnEveryProcess) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  const int device = world_rank() == 1 ? gpus + 3 : world_rank() % gpus;
  try {
    (void)dist::join_mpi(MPI_COMM_WORLD, device);
    ADD_FAILURE() << "join_mpi returned with rank 1 on a device that does not exist";
  } catch (const strata::device_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 was given a device"), std::string::npos) << e.what();
  }
  // Nothing was left half made: the job joins again.
  auto comm = dist::join_mpi();
  EXPECT_EQ(comm.size(), world_size());
}

// Run as its own job, one process started with CUDA_VISIBLE_DEVICES empty (see the CTest and
// gpu-check command lines): the default device of a node without a GPU must fail on every process,
// not throw on that one and leave the others waiting in MPI.
TEST(MpiJoin, ANodeWithoutAGpuThrowsOnEveryProcess) {
  const char* job = std::getenv("STRATA_TEST_GPULESS_RANK");
  if (!job) GTEST_SKIP() << "run by the job that starts one process without GPUs (STRATA_TEST_GPULESS_RANK)";
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int gpuless = std::atoi(job);
  try {
    (void)dist::join_mpi();
    ADD_FAILURE() << "join_mpi returned while rank " << gpuless << " has no GPU";
  } catch (const strata::device_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(gpuless) + " was given a device"), std::string::npos) << e.what();
  }
}

TEST(MpiJoin, ASubCommunicatorIsAJobOfItsOwn) {
  const int me = world_rank();
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half), MPI_SUCCESS);
  int half_size = 0, half_rank = 0;
  MPI_Comm_size(half, &half_size);
  MPI_Comm_rank(half, &half_rank);
  {
    int gpus = 0;
    ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
    auto comm = dist::join_mpi(half, me % gpus);
    EXPECT_EQ(comm.size(), half_size);
    EXPECT_EQ(comm.rank(0), half_rank);
    EXPECT_EQ(comm.all_reduce_sum(std::vector<std::int64_t>{1}), std::int64_t(half_size));
  }
  MPI_Comm_free(&half);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) std::fprintf(stderr, "mpi_join_test: rank %d failed\n", world_rank());
  MPI_Finalize();
  return any;
}
