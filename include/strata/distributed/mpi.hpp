// SPDX-License-Identifier: Apache-2.0
// A job of one process per GPU started by MPI (mpiexec, srun): join_mpi() makes this process's
// communicator. MPI only hands NCCL's unique id from rank 0 to the others; every byte of the
// records still moves through NCCL. Include this header only where MPI is present (it includes
// <mpi.h>) and link the MPI library; the rest of strata needs neither.
#pragma once

#include <strata/config.hpp>
#include <strata/distributed/communicator.hpp>

#if !defined(STRATA_BACKEND_CUDA)
#error "strata/distributed/mpi.hpp: a job of several processes needs the CUDA backend (NCCL); the host backend's stand-in keeps every rank in one process (communicator::local)"
#endif

#include <mpi.h>

#include <cstring>
#include <string>

namespace strata::distributed {

namespace detail {
inline void mpi_check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw transport_error(std::string("strata: ") + what + " failed: " + std::string(text, std::size_t(length)) + " (MPI error " +
                        std::to_string(code) + ")");
}
/// The GPUs this process sees; 0 when CUDA finds none (the error is cleared, not thrown, so that
/// join_mpi can report it on every process).
inline int visible_gpus() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) (void)cudaGetLastError(), gpus = 0;
  return gpus;
}
}  // namespace detail

/// This process's rank among the processes of `comm` on the same node. Collective over `comm`.
inline int node_local_rank(MPI_Comm comm) {
  int rank = 0;
  detail::mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm node = MPI_COMM_NULL;
  detail::mpi_check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local = 0;
  const int got = MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  detail::mpi_check(got, "MPI_Comm_rank (node)");
  return local;
}

/// The GPU for this process when the job leaves the choice to strata: its rank among the processes
/// of `comm` on the same node, modulo the node's GPUs (one process per GPU when the job starts as
/// many processes on a node as it has GPUs). Collective over `comm`; throws device_error on a node
/// without a GPU (join_mpi reports that on every process instead).
inline int node_local_device(MPI_Comm comm) {
  const int local = node_local_rank(comm);
  const int gpus = detail::visible_gpus();
  if (gpus < 1) throw device_error("strata: join_mpi: this node has no GPU");
  return local % gpus;
}

/// This process's rank of the job of `comm`'s processes, one rank each: rank 0 makes NCCL's
/// unique id and MPI broadcasts it, then every process joins through ncclCommInitRank on `device`
/// (node_local_device() when negative). Collective over `comm`: every process calls it, after
/// MPI_Init. The communicator's ranks are `comm`'s ranks. When rank 0 cannot make the id, every
/// process throws (none waits for the others in NCCL); NCCL errors while joining throw
/// transport_error on the process that sees them. A device that a process's node lacks (or a node
/// without a GPU) throws device_error on every process, before any joins.
inline communicator join_mpi(MPI_Comm comm = MPI_COMM_WORLD, int device = -1) {
  int started = 0;
  detail::mpi_check(MPI_Initialized(&started), "MPI_Initialized");
  if (!started) throw transport_error("strata: join_mpi: MPI is not initialized (call MPI_Init first)");
  int rank = 0, ranks = 0;
  detail::mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  detail::mpi_check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  // Every process checks its device before any joins: a process that threw here would leave the
  // others waiting in MPI or in ncclCommInitRank. The first bad rank is named on every process;
  // a node without a GPU is a bad device too.
  const int gpus = detail::visible_gpus();
  if (device < 0) {
    const int local = node_local_rank(comm);
    device = gpus > 0 ? local % gpus : 0;
  }
  const int mine = device < gpus ? ranks : rank;
  int first_bad = ranks;
  detail::mpi_check(MPI_Allreduce(&mine, &first_bad, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (devices)");
  if (first_bad < ranks)
    throw device_error("strata: join_mpi: rank " + std::to_string(first_bad) + " was given a device its node does not have" +
                       (first_bad == rank ? " (device " + std::to_string(device) + ", " + std::to_string(gpus) + " GPUs)" : std::string()) +
                       "; no process joined");
  // Rank 0's id and whether it could make one travel together, so that a failure there reaches
  // every process instead of leaving them waiting in ncclCommInitRank.
  struct handover {
    int ok;
    char error[256];
    ncclUniqueId id;
  } h{};
  if (rank == 0) {
    try {
      h.id = communicator::unique_id();
      h.ok = 1;
    } catch (const std::exception& e) {
      std::strncpy(h.error, e.what(), sizeof h.error - 1);
    }
  }
  detail::mpi_check(MPI_Bcast(&h, int(sizeof h), MPI_BYTE, 0, comm), "MPI_Bcast (NCCL unique id)");
  if (!h.ok) throw transport_error(std::string("strata: join_mpi: rank 0 could not make NCCL's unique id: ") + h.error);
  return communicator::join(h.id, ranks, rank, device);
}

}  // namespace strata::distributed
