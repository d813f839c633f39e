// SoA records sharded over ranks: one soa_vector<T> per rank this process drives, each on its
// rank's GPU. Algorithms run on every shard on its own device and stream; reductions add the
// shards' partial results through the communicator; migrate() moves every record to the rank a
// function of the record names, and halo_exchange() copies records near a rank's boundary to its
// neighbours as ghosts; only per-rank counts cross the host.
#pragma once

#include <strata/config.hpp>
#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/distributed/communicator.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace strata::distributed {

namespace detail {
/// Destination rank of each record.
template <class View, class DestFn>
struct destinations {
  std::int32_t* out;
  View view;
  DestFn dest;
  STRATA_HD void operator()(index_t i) const { out[i] = std::int32_t(dest(view.load(i))); }
};
/// offsets[p] = the number of (sorted) keys below p, for p in [0, ranks]: records for rank p are
/// [offsets[p], offsets[p + 1]).
struct rank_offsets {
  const std::int32_t* keys;
  index_t n;
  std::int64_t* offsets;
  STRATA_HD void operator()(index_t p) const {
    index_t lo = 0, hi = n;
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < std::int32_t(p)) lo = mid + 1;
      else hi = mid;
    }
    offsets[p] = lo;
  }
};
template <class GhostFn>
struct ghost_selected {
  GhostFn fn;
  int k, me;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    const int to = fn(r, k);
    return to >= 0 && to != me;
  }
};
template <class GhostFn>
struct ghost_destination {
  GhostFn fn;
  int k;
  template <class R>
  STRATA_HD int operator()(const R& r) const {
    return fn(r, k);
  }
};
struct plus {
  template <class A>
  STRATA_HD A operator()(const A& a, const A& b) const {
    return a + b;
  }
};
}  // namespace detail

/// What one migrate() moved: records this process's ranks sent to other ranks and received.
struct migration_counts {
  std::int64_t sent = 0, received = 0;
};

template <class T>
class distributed_soa_vector {
 public:
  explicit distributed_soa_vector(communicator& comm) : comm_(&comm) {
    for (int l = 0; l < comm.local_ranks(); ++l) {
      strata::detail::device_guard g(comm.device(l));
      shards_.emplace_back();
      owned_.push_back(0);
    }
  }

  communicator& comm() const { return *comm_; }
  /// Local rank l's records (on its device).
  soa_vector<T>& shard(int l) { return shards_.at(std::size_t(l)); }
  const soa_vector<T>& shard(int l) const { return shards_.at(std::size_t(l)); }
  /// Records on every rank of the job.
  std::int64_t size() const {
    std::vector<std::int64_t> local;
    for (const auto& s : shards_) local.push_back(std::int64_t(s.size()));
    return comm_->all_reduce_sum(local);
  }

  /// This process's part of the records, split evenly over its ranks in order (local rank l gets
  /// the l-th slice). A single-process job passes all records.
  void scatter(std::span<const T> records) {
    const std::size_t n = records.size(), parts = shards_.size();
    for (std::size_t l = 0; l < parts; ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      const std::size_t lo = n * l / parts, hi = n * (l + 1) / parts;
      shards_[l] = soa_vector<T>(records.subspan(lo, hi - lo));
      owned_[l] = hi - lo;
    }
  }
  /// This process's records, local ranks in order, as host AoS.
  std::vector<T> gather() const {
    comm_->synchronize_all();
    std::vector<T> out;
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      auto part = shards_[l].to_host();
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }

  /// f on every record of every shard (strata::transform in place, on each rank's stream); returns
  /// the path the shards took (vectorized when all did).
  template <class F>
  path transform(F f) {
    path p = path::vectorized;
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      if (strata::transform(shards_[l], shards_[l], f, comm_->stream(int(l))) == path::scalar) p = path::scalar;
    }
    return p;
  }
  /// Sum over every record of every rank of map(record): each shard reduces its own records, then
  /// the ranks' partial sums are added (communicator::all_reduce_sum: exact for integers).
  template <class A, class Map>
  A transform_reduce_sum(Map map, A init = A{}) {
    std::vector<A> partial;
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      partial.push_back(strata::transform_reduce(shards_[l], map, A{}, detail::plus{}, comm_->stream(int(l))));
    }
    return init + comm_->all_reduce_sum(partial);
  }

  /// Sends every record to rank dest(record) (a global rank; records whose rank is their own stay).
  /// Each shard is sorted by destination (stably), per-destination counts are exchanged, then every
  /// column's runs go to their ranks in one NCCL group and arrive in source-rank order (a rank's own
  /// records in its place). A destination outside [0, size) throws before any record moves.
  template <class DestFn>
  migration_counts migrate(DestFn dest) {
    for (int l = 0; l < comm_->local_ranks(); ++l)
      if (ghosts(l) != 0) throw size_error("strata: migrate: rank " + std::to_string(comm_->rank(l)) + " holds ghosts; drop_ghosts() first");
    const int locals = comm_->local_ranks();
    counts send(static_cast<std::size_t>(locals));
    for (int l = 0; l < locals; ++l) send[std::size_t(l)] = sort_by_destination(l, shards_[std::size_t(l)], dest, "migrate");
    std::vector<soa_vector<T>> next(static_cast<std::size_t>(locals));
    const migration_counts moved = exchange(shards_, send, next, true);
    for (int l = 0; l < locals; ++l) {
      shards_[std::size_t(l)].swap(next[std::size_t(l)]);
      owned_[std::size_t(l)] = shards_[std::size_t(l)].size();
    }
    return moved;
  }

  /// Ghost copies for a step that reads neighbours: for each direction k in [0, directions), every
  /// record r for which ghost_of(r, k) names another rank (-1: none) is copied there. Ghosts are
  /// appended after each rank's own records (ghosts(l) of them) and stay until drop_ghosts(); the
  /// records themselves do not move. Returns the copies sent and received.
  template <class GhostFn>
  migration_counts halo_exchange(GhostFn ghost_of, int directions) {
    const int locals = comm_->local_ranks();
    migration_counts total;
    for (int k = 0; k < directions; ++k) {
      std::vector<soa_vector<T>> outgoing(static_cast<std::size_t>(locals)), arrivals(static_cast<std::size_t>(locals));
      counts send(static_cast<std::size_t>(locals));
      for (int l = 0; l < locals; ++l) {
        strata::detail::device_guard g(comm_->device(l));
        const stream_t st = comm_->stream(l);
        // Only the rank's own records are candidates (ghosts are not forwarded).
        soa_vector<T> own;
        own.resize_for_overwrite(owned_[std::size_t(l)]);
        copy_columns(shards_[std::size_t(l)], 0, own, 0, std::int64_t(owned_[std::size_t(l)]), st);
        strata::copy_if(own, outgoing[std::size_t(l)], detail::ghost_selected<GhostFn>{ghost_of, k, comm_->rank(l)}, st);
        send[std::size_t(l)] = sort_by_destination(l, outgoing[std::size_t(l)], detail::ghost_destination<GhostFn>{ghost_of, k}, "halo_exchange");
      }
      const migration_counts moved = exchange(outgoing, send, arrivals, false);
      total.sent += moved.sent, total.received += moved.received;
      for (int l = 0; l < locals; ++l) {
        strata::detail::device_guard g(comm_->device(l));
        shards_[std::size_t(l)].append(arrivals[std::size_t(l)], comm_->stream(l));
      }
      comm_->synchronize_all();
    }
    return total;
  }
  /// Ghost records at the end of local rank l's shard.
  std::size_t ghosts(int l) const { return shards_.at(std::size_t(l)).size() - owned_.at(std::size_t(l)); }
  /// Removes every ghost (each shard back to its own records).
  void drop_ghosts() {
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards_[l].resize(owned_[l]);
    }
  }

 private:
  using counts = std::vector<std::vector<std::int64_t>>;  // [local rank][global rank]

  static void copy_columns(const soa_vector<T>& from, std::int64_t at, soa_vector<T>& to, std::int64_t to_at, std::int64_t n, stream_t st) {
    if (n <= 0) return;
    for (std::size_t c = 0; c < soa_vector<T>::leaves; ++c) {
      const std::size_t w = soa_vector<T>::layout_type::leaf_sizes[c];
      copy_bytes_async(to.view().column_bytes(c) + std::size_t(to_at) * w, from.view().column_bytes(c) + std::size_t(at) * w,
                       std::size_t(n) * w, st);
    }
  }

  /// Sorts s (on local rank l's device and stream) stably by dest(record) and returns how many
  /// records go to each rank. A destination outside the job's ranks throws (s is then reordered by
  /// destination; no record is lost).
  template <class DestFn>
  std::vector<std::int64_t> sort_by_destination(int l, soa_vector<T>& s, DestFn dest, const char* op) {
    const int R = comm_->size();
    strata::detail::device_guard g(comm_->device(l));
    const stream_t st = comm_->stream(l);
    const index_t n = index_t(s.size());
    strata::detail::scratch_block keys(sizeof(std::int32_t) * std::size_t(std::max<index_t>(n, 1)), st);
    strata::detail::scratch_block offsets(sizeof(std::int64_t) * std::size_t(R + 1), st);
    auto v = s.view();
    if (n > 0) {
      strata::detail::run_each(detail::destinations<decltype(v), DestFn>{keys.as<std::int32_t>(), v, dest}, n, st, "destinations");
      strata::sort_by_key(s, cuda::std::span<std::int32_t>(keys.as<std::int32_t>(), std::size_t(n)), st);
    }
    strata::detail::run_each(detail::rank_offsets{keys.as<std::int32_t>(), n, offsets.as<std::int64_t>()}, index_t(R + 1), st,
                             "destination counts");
    std::vector<std::int64_t> off(static_cast<std::size_t>(R + 1));
    synchronize(st);
    copy_bytes(off.data(), offsets.data(), off.size() * sizeof(std::int64_t));
    std::int32_t first = 0, last = 0;
    if (n > 0) {
      copy_bytes(&first, keys.as<std::int32_t>(), sizeof first);
      copy_bytes(&last, keys.as<std::int32_t>() + (n - 1), sizeof last);
    }
    if (n > 0 && (first < 0 || last >= R))
      throw size_error(std::string("strata: ") + op + ": a record of rank " + std::to_string(comm_->rank(l)) + " names rank " +
                       std::to_string(first < 0 ? first : last) + "; ranks are 0 to " + std::to_string(R - 1) +
                       " (the shard is reordered by destination; no record moved)");
    std::vector<std::int64_t> c(static_cast<std::size_t>(R));
    for (int p = 0; p < R; ++p) c[std::size_t(p)] = off[std::size_t(p + 1)] - off[std::size_t(p)];
    return c;
  }

  /// Sends run p of out[l] (grouped by destination, send[l][p] records each) to rank p; into[l]
  /// becomes the records that arrive, in source-rank order, with out[l]'s own run in its place when
  /// keep_own (else it is left out).
  migration_counts exchange(std::vector<soa_vector<T>>& out, const counts& send, std::vector<soa_vector<T>>& into, bool keep_own) {
    const int R = comm_->size(), locals = comm_->local_ranks();
    counts recv(static_cast<std::size_t>(locals), std::vector<std::int64_t>(static_cast<std::size_t>(R)));
    exchange_counts(send, recv);
    migration_counts moved;
    counts send_at(static_cast<std::size_t>(locals)), recv_at(static_cast<std::size_t>(locals));
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      const int me = comm_->rank(l);
      if (!keep_own) recv[std::size_t(l)][std::size_t(me)] = 0;
      std::int64_t total = 0, at = 0;
      for (int p = 0; p < R; ++p) {
        recv_at[std::size_t(l)].push_back(total), total += recv[std::size_t(l)][std::size_t(p)];
        send_at[std::size_t(l)].push_back(at), at += send[std::size_t(l)][std::size_t(p)];
        if (p != me) moved.sent += send[std::size_t(l)][std::size_t(p)], moved.received += recv[std::size_t(l)][std::size_t(p)];
      }
      into[std::size_t(l)].resize_for_overwrite(std::size_t(total));
      if (keep_own)
        copy_columns(out[std::size_t(l)], send_at[std::size_t(l)][std::size_t(me)], into[std::size_t(l)], recv_at[std::size_t(l)][std::size_t(me)],
                     send[std::size_t(l)][std::size_t(me)], comm_->stream(l));
    }
    comm_->group([&] {
      for (int l = 0; l < locals; ++l) {
        const int me = comm_->rank(l);
        for (int p = 0; p < R; ++p) {
          if (p == me) continue;
          const std::int64_t n_out = send[std::size_t(l)][std::size_t(p)], n_in = recv[std::size_t(l)][std::size_t(p)];
          for (std::size_t c = 0; c < soa_vector<T>::leaves; ++c) {
            const std::size_t w = soa_vector<T>::layout_type::leaf_sizes[c];
            if (n_out > 0)
              comm_->send(l, out[std::size_t(l)].view().column_bytes(c) + std::size_t(send_at[std::size_t(l)][std::size_t(p)]) * w,
                          std::size_t(n_out) * w, p);
            if (n_in > 0)
              comm_->recv(l, into[std::size_t(l)].view().column_bytes(c) + std::size_t(recv_at[std::size_t(l)][std::size_t(p)]) * w,
                          std::size_t(n_in) * w, p);
          }
        }
      }
    });
    comm_->synchronize_all();
    return moved;
  }

  /// recv[l][p] = send[p's local index][rank(l)] across the job: one 8-byte send and receive per
  /// pair of ranks, through device buffers (NCCL moves device memory).
  void exchange_counts(const std::vector<std::vector<std::int64_t>>& send, std::vector<std::vector<std::int64_t>>& recv) {
    const int R = comm_->size(), locals = comm_->local_ranks();
    std::vector<buffer> out, in;
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      out.emplace_back(sizeof(std::int64_t) * std::size_t(R), memory_space::device);
      in.emplace_back(sizeof(std::int64_t) * std::size_t(R), memory_space::device);
      copy_bytes(out.back().data(), send[std::size_t(l)].data(), sizeof(std::int64_t) * std::size_t(R));
    }
    comm_->group([&] {
      for (int l = 0; l < locals; ++l)
        for (int p = 0; p < R; ++p) {
          if (p == comm_->rank(l)) continue;
          comm_->send(l, out[std::size_t(l)].data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
          comm_->recv(l, in[std::size_t(l)].data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
        }
    });
    comm_->synchronize_all();
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      copy_bytes(recv[std::size_t(l)].data(), in[std::size_t(l)].data(), sizeof(std::int64_t) * std::size_t(R));
      recv[std::size_t(l)][std::size_t(comm_->rank(l))] = send[std::size_t(l)][std::size_t(comm_->rank(l))];
    }
  }

  communicator* comm_;
  std::vector<soa_vector<T>> shards_;
  std::vector<std::size_t> owned_;  // each shard's own records; the rest are ghosts
};

}  // namespace strata::distributed
