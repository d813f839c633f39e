// SoA records sharded over ranks: one soa_vector<T> per rank this process drives, each on its
// rank's GPU. Algorithms run on every shard on its own device and stream; reductions add the
// shards' partial results through the communicator; migrate() moves every record to the rank a
// function of the record names, with only per-rank counts crossing the host.
#pragma once

#include <strata/config.hpp>
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
  /// column's runs go to their ranks in one NCCL group and arrive appended in source-rank order.
  /// A destination outside [0, size) throws before any record moves.
  template <class DestFn>
  migration_counts migrate(DestFn dest) {
    const int R = comm_->size(), locals = comm_->local_ranks();
    std::vector<std::vector<std::int64_t>> send_counts(static_cast<std::size_t>(locals), std::vector<std::int64_t>(static_cast<std::size_t>(R)));
    // 1. Group each shard's records by destination and count them.
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      auto& s = shards_[std::size_t(l)];
      const stream_t st = comm_->stream(l);
      const index_t n = index_t(s.size());
      strata::detail::scratch_block keys(sizeof(std::int32_t) * std::size_t(std::max<index_t>(n, 1)), st);
      strata::detail::scratch_block offsets(sizeof(std::int64_t) * std::size_t(R + 1), st);
      auto v = s.view();
      if (n > 0) {
        strata::detail::run_each(detail::destinations<decltype(v), DestFn>{keys.as<std::int32_t>(), v, dest}, n, st, "migrate (destinations)");
        strata::sort_by_key(s, cuda::std::span<std::int32_t>(keys.as<std::int32_t>(), std::size_t(n)), st);
      }
      strata::detail::run_each(detail::rank_offsets{keys.as<std::int32_t>(), n, offsets.as<std::int64_t>()}, index_t(R + 1), st,
                               "migrate (counts)");
      std::vector<std::int64_t> off(static_cast<std::size_t>(R + 1));
      synchronize(st);
      copy_bytes(off.data(), offsets.data(), off.size() * sizeof(std::int64_t));
      std::int32_t first = 0, last = 0;
      if (n > 0) {
        copy_bytes(&first, keys.as<std::int32_t>(), sizeof first);
        copy_bytes(&last, keys.as<std::int32_t>() + (n - 1), sizeof last);
      }
      if (n > 0 && (first < 0 || last >= R))
        throw size_error("strata: migrate: a record of rank " + std::to_string(comm_->rank(l)) + " names rank " +
                         std::to_string(first < 0 ? first : last) + "; ranks are 0 to " + std::to_string(R - 1) +
                         " (the shard is reordered by destination; no record moved)");
      for (int p = 0; p < R; ++p) send_counts[std::size_t(l)][std::size_t(p)] = off[std::size_t(p + 1)] - off[std::size_t(p)];
    }
    // 2. Counts: every rank tells every other how many records come.
    std::vector<std::vector<std::int64_t>> recv_counts(static_cast<std::size_t>(locals), std::vector<std::int64_t>(static_cast<std::size_t>(R)));
    exchange_counts(send_counts, recv_counts);
    // 3. New shards: records from rank 0, 1, ... in order, this rank's own kept in its place.
    migration_counts moved;
    std::vector<soa_vector<T>> next;
    std::vector<std::vector<std::int64_t>> send_at(static_cast<std::size_t>(locals)), recv_at(static_cast<std::size_t>(locals));
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      std::int64_t total = 0;
      for (int p = 0; p < R; ++p) recv_at[std::size_t(l)].push_back(total), total += recv_counts[std::size_t(l)][std::size_t(p)];
      std::int64_t at = 0;
      for (int p = 0; p < R; ++p) send_at[std::size_t(l)].push_back(at), at += send_counts[std::size_t(l)][std::size_t(p)];
      next.emplace_back();
      next.back().resize_for_overwrite(std::size_t(total));
      const int me = comm_->rank(l);
      const std::int64_t keep = send_counts[std::size_t(l)][std::size_t(me)];
      copy_columns(shards_[std::size_t(l)], send_at[std::size_t(l)][std::size_t(me)], next.back(), recv_at[std::size_t(l)][std::size_t(me)],
                   keep, comm_->stream(l));
      for (int p = 0; p < R; ++p)
        if (p != me) moved.sent += send_counts[std::size_t(l)][std::size_t(p)], moved.received += recv_counts[std::size_t(l)][std::size_t(p)];
    }
    comm_->group([&] {
      for (int l = 0; l < locals; ++l) {
        const int me = comm_->rank(l);
        for (int p = 0; p < R; ++p) {
          if (p == me) continue;
          const std::int64_t out = send_counts[std::size_t(l)][std::size_t(p)], in = recv_counts[std::size_t(l)][std::size_t(p)];
          for (std::size_t c = 0; c < soa_vector<T>::leaves; ++c) {
            const std::size_t w = soa_vector<T>::layout_type::leaf_sizes[c];
            if (out > 0)
              comm_->send(l, shards_[std::size_t(l)].view().column_bytes(c) + std::size_t(send_at[std::size_t(l)][std::size_t(p)]) * w,
                          std::size_t(out) * w, p);
            if (in > 0)
              comm_->recv(l, next[std::size_t(l)].view().column_bytes(c) + std::size_t(recv_at[std::size_t(l)][std::size_t(p)]) * w,
                          std::size_t(in) * w, p);
          }
        }
      }
    });
    comm_->synchronize_all();
    for (int l = 0; l < locals; ++l) shards_[std::size_t(l)].swap(next[std::size_t(l)]);
    return moved;
  }

 private:
  static void copy_columns(const soa_vector<T>& from, std::int64_t at, soa_vector<T>& to, std::int64_t to_at, std::int64_t n, stream_t st) {
    if (n <= 0) return;
    for (std::size_t c = 0; c < soa_vector<T>::leaves; ++c) {
      const std::size_t w = soa_vector<T>::layout_type::leaf_sizes[c];
      copy_bytes_async(to.view().column_bytes(c) + std::size_t(to_at) * w, from.view().column_bytes(c) + std::size_t(at) * w,
                       std::size_t(n) * w, st);
    }
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
};

}  // namespace strata::distributed
