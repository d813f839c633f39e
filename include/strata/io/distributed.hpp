// SPDX-License-Identifier: Apache-2.0
// A distributed_soa_vector in an HDF5 file: this process's local ranks each as a group of
// strata/io/hdf5.hpp below one group of the file,
//
//   <path>/rank<r>   one group per rank r this process holds, written by io::write (a dataset per
//                    leaf, the schema attributes)
//   <path>           strata.ranks (the job's rank count) and strata.rank_list (the ranks below it)
//
// A job of several processes writes one file per process (the file name carries the process's
// rank, say); this build of strata uses serial HDF5, and parallel HDF5 (one file written by every
// process through MPI-IO) is not supported. A restart reads every local rank's records back into
// that rank's shard on its device, so each rank holds what it held when the checkpoint was written.
#pragma once

#include <strata/distributed/distributed_vector.hpp>
#include <strata/io/hdf5.hpp>

#include <string>
#include <utility>
#include <vector>

namespace strata::io {

namespace detail {
inline std::string rank_group(const std::string& path, int rank) { return path + "/rank" + std::to_string(rank); }
}  // namespace detail

/// Writes every local rank's records of `d` below group `path` of `f` (one group per rank, see the
/// top of this header). The ranks must hold no ghosts (drop_ghosts() first: a checkpoint holds
/// each record once). As with the write of one container, `path` appears only when every rank has
/// been written, and with write_options::overwrite the old group stays until then.
template <class T>
void write(const file& f, const std::string& path_in, const distributed::distributed_soa_vector<T>& d, const write_options& o = {}) {
  h5::quiet q;
  const std::string path = h5::relative(path_in);
  if (path.empty()) throw std::invalid_argument("strata::io::write: name a group below the file's root");
  distributed::communicator& comm = d.comm();
  for (int l = 0; l < comm.local_ranks(); ++l)
    if (d.ghosts(l) != 0)
      throw size_error("strata::io::write: rank " + std::to_string(comm.rank(l)) + " holds " + std::to_string(d.ghosts(l)) +
                       " ghosts; drop_ghosts() first (a checkpoint holds each record once)");
  const bool existed = h5::exists(f.id(), path);
  if (existed && !o.overwrite) throw file_error("strata::io::write: '" + f.path() + "' already has '" + path + "' (write_options::overwrite replaces it)");
  const std::string partial = path + ".strata-partial", old = path + ".strata-old";
  if (h5::exists(f.id(), partial)) h5::check(H5Ldelete(f.id(), partial.c_str(), H5P_DEFAULT), "cannot remove an earlier partial write");
  // The parent groups this call creates, removed again if the write fails.
  const std::vector<std::string> created = h5::missing_parents(f.id(), path);
  write_options each = o;
  each.overwrite = false;
  bool old_moved = false;
  try {
    std::string ranks;
    for (int l = 0; l < comm.local_ranks(); ++l) {
      strata::detail::device_guard on(comm.device(l));
      write(f, detail::rank_group(partial, comm.rank(l)), d.shard(l), each);
      if (!ranks.empty()) ranks += ',';
      ranks += std::to_string(comm.rank(l));
    }
    {
      h5::id g = detail::open_group(f, partial);
      h5::write_u64_attribute(g.get(), "strata.ranks", std::uint64_t(comm.size()));
      h5::write_string_attribute(g.get(), "strata.rank_list", ranks);
      h5::write_string_attribute(g.get(), "strata.record", strata::detail::type_name<T>());
      h5::write_string_attribute(g.get(), "strata.version", STRATA_VERSION_STRING);
    }
    if (existed) {
      if (h5::exists(f.id(), old)) h5::check(H5Ldelete(f.id(), old.c_str(), H5P_DEFAULT), "cannot remove an earlier replaced group");
      h5::check(H5Lmove(f.id(), path.c_str(), f.id(), old.c_str(), H5P_DEFAULT, H5P_DEFAULT), "cannot replace '" + path + "'");
      old_moved = true;
    }
    h5::check(H5Lmove(f.id(), partial.c_str(), f.id(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT), "cannot name the written group '" + path + "'");
    if (old_moved) (void)H5Ldelete(f.id(), old.c_str(), H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
  } catch (...) {
    (void)H5Ldelete(f.id(), partial.c_str(), H5P_DEFAULT);
    if (old_moved) (void)H5Lmove(f.id(), old.c_str(), f.id(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    h5::remove_groups(f.id(), created);
    H5Eclear2(H5E_DEFAULT);
    throw;
  }
}

/// Reads group `path` of `f` (written by the write above) into `d`: local rank l's records come
/// from `path/rank<comm.rank(l)>` onto its device, all of them owned. The file must have been
/// written by a job of as many ranks as d's communicator has. read_options apply to every rank
/// (a range selects records of each rank's group). `d` is replaced only when every rank has been
/// read.
template <class T>
void read(const file& f, const std::string& path_in, distributed::distributed_soa_vector<T>& d, const read_options& o = {}) {
  h5::quiet q;
  const std::string path = h5::relative(path_in);
  distributed::communicator& comm = d.comm();
  h5::id g = detail::open_group(f, path);
  const std::string where = "'" + path + "' of '" + f.path() + "'";
  if (!h5::has_attribute(g.get(), "strata.ranks"))
    throw file_error("strata::io::read: " + where + " holds no distributed records (no strata.ranks attribute; io::read into one container reads a single group)");
  const std::uint64_t ranks = h5::read_u64_attribute(g.get(), "strata.ranks");
  if (ranks != std::uint64_t(comm.size()))
    throw schema_error("strata::io::read: " + where + " was written by a job of " + std::to_string(ranks) + " ranks and this job has " +
                       std::to_string(comm.size()) + " (a restart runs on as many ranks as wrote the checkpoint)");
  std::vector<soa_vector<T>> fresh;
  fresh.reserve(std::size_t(comm.local_ranks()));
  for (int l = 0; l < comm.local_ranks(); ++l) {
    const std::string rank = detail::rank_group(path, comm.rank(l));
    if (!h5::exists(f.id(), rank))
      throw file_error("strata::io::read: " + where + " holds no group for rank " + std::to_string(comm.rank(l)) + " (its ranks: " +
                       h5::read_string_attribute(g.get(), "strata.rank_list") + "; each process reads the file it wrote)");
    strata::detail::device_guard on(comm.device(l));
    fresh.push_back(read<soa_vector<T>>(f, rank, o));
  }
  d.assign(std::move(fresh));
}

}  // namespace strata::io
