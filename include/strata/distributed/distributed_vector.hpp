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
#include <thrust/iterator/counting_iterator.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <exception>
#include <memory>
#include <thread>
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
/// Whether record i's destination is not (rank_differs) or is (rank_same) rank `me`.
template <class View, class DestFn>
struct rank_differs {
  View v;
  DestFn dest;
  int me;
  STRATA_HD bool operator()(std::int64_t i) const { return int(dest(v.load(index_t(i)))) != me; }
};
template <class View, class DestFn>
struct rank_same {
  View v;
  DestFn dest;
  int me;
  STRATA_HD bool operator()(std::int64_t i) const { return int(dest(v.load(index_t(i)))) == me; }
};
/// to[i] = from[idx[i]].
template <class View>
struct gather_records {
  View from, to;
  const std::int64_t* idx;
  STRATA_HD void operator()(index_t i) const { to.store(i, from.load(index_t(idx[i]))); }
};
/// v[to[j]] = v[from[j]] (the two index sets are disjoint).
template <class View>
struct move_records {
  View v;
  const std::int64_t* to;
  const std::int64_t* from;
  STRATA_HD void operator()(index_t j) const { v.store(index_t(to[j]), v.load(index_t(from[j]))); }
};
/// Whether a record's destination is rank `me` (it stays).
template <class DestFn>
struct stays_on {
  DestFn dest;
  int me;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    return int(dest(r)) == me;
  }
};
struct min_i32 {
  STRATA_HD std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a < b ? a : b; }
};
struct max_i32 {
  STRATA_HD std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
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
      outgoing_.emplace_back();
      spare_.emplace_back();
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
    std::vector<A> partial(shards_.size());
    on_every_rank([&](int l) {
      strata::detail::device_guard g(comm_->device(l));
      partial[std::size_t(l)] = strata::transform_reduce(shards_[std::size_t(l)], map, A{}, detail::plus{}, comm_->stream(l));
    });
    return init + comm_->all_reduce_sum(partial);
  }

  /// Sends every record to rank dest(record) (a global rank). One pass reads what dest needs and
  /// lists the records that leave; then, when few leave (at most 1 in leave_ratio_limit), they
  /// are gathered into a send buffer and the staying records from the shard's end fill their
  /// places (work in proportion to the leaving records); when many leave, one streaming pass
  /// splits the shard into the staying records, in order, and the leaving ones
  /// (strata::partition_copy). The leaving records are grouped by destination, stably (no sort
  /// when they all go to one rank). Per-destination counts are exchanged, then every column's runs
  /// go to their ranks in one NCCL group and arrive straight behind the receiver's records, in
  /// source-rank order. The ranks of this process do their local work at once (a host thread
  /// each). A rank's records afterwards: its staying records in their order (when few left, those
  /// from the last places moved into the holes, in increasing order), then the arrivals. A
  /// destination outside [0, size) throws before any record moves (every shard as it was). Send
  /// and split buffers are kept between calls, so a steady migration allocates nothing.
  template <class DestFn>
  migration_counts migrate(DestFn dest) {
    for (int l = 0; l < comm_->local_ranks(); ++l)
      if (ghosts(l) != 0) throw size_error("strata: migrate: rank " + std::to_string(comm_->rank(l)) + " holds ghosts; drop_ghosts() first");
    const std::size_t locals = std::size_t(comm_->local_ranks());
    counts send(locals);
    std::vector<std::unique_ptr<strata::detail::scratch_block>> leaving(locals);
    std::vector<index_t> leaving_count(locals, 0);
    std::vector<char> split(locals, 0);
    // Every rank lists, gathers and checks its leaving records before any shard changes.
    on_every_rank([&](int l) {
      strata::detail::device_guard g(comm_->device(l));
      const std::size_t k = std::size_t(l);
      const stream_t st = comm_->stream(l);
      auto v = shards_[k].view();
      const index_t n = v.size();
      leaving[k] = std::make_unique<strata::detail::scratch_block>(sizeof(std::int64_t) * std::size_t(std::max<index_t>(n, 1)), st);
      std::int64_t* idx = leaving[k]->as<std::int64_t>();
      const index_t out = n == 0 ? 0
                                 : strata::detail::select(thrust::counting_iterator<std::int64_t>(0), idx, n,
                                                          detail::rank_differs<decltype(v), DestFn>{v, dest, comm_->rank(l)}, st,
                                                          "strata migrate (leaving records)");
      leaving_count[k] = out;
      if (out > 0 && out > n / leave_ratio_limit) {
        strata::partition_copy(shards_[k], spare_[k], outgoing_[k], detail::stays_on<DestFn>{dest, comm_->rank(l)}, st);
        split[k] = 1;
      } else {
        outgoing_[k].clear();
        outgoing_[k].resize_for_overwrite(std::size_t(out));
        auto o = outgoing_[k].view();
        strata::detail::run_each(detail::gather_records<decltype(v)>{v, o, idx}, out, st, "strata migrate (gather)");
      }
      send[k] = group_by_destination(l, outgoing_[k], dest, "migrate");
    });
    on_every_rank([&](int l) {
      strata::detail::device_guard g(comm_->device(l));
      const std::size_t k = std::size_t(l);
      if (!split[k]) fill_holes(l, leaving[k]->as<std::int64_t>(), leaving_count[k], dest);
      leaving[k].reset();  // freed on the rank's stream, its device current
    });
    std::vector<soa_vector<T>*> into(locals);
    for (std::size_t k = 0; k < locals; ++k) into[k] = split[k] ? &spare_[k] : &shards_[k];
    const migration_counts moved = exchange(outgoing_, send, into);
    for (std::size_t k = 0; k < locals; ++k) {
      if (split[k]) shards_[k].swap(spare_[k]);
      owned_[k] = shards_[k].size();
    }
    return moved;
  }
  /// migrate() streams the whole shard (partition_copy) when more than 1 in this many records
  /// leave a rank, and moves only the leaving records and as many others otherwise: a record moved
  /// through scattered accesses costs about 20 times a streamed record's share of the time on the
  /// H200 (bench/distributed.cpp), so the two cost the same near 1 in 20; 16 leans to streaming.
  static constexpr index_t leave_ratio_limit = 16;

  /// Ghost copies for a step that reads neighbours: for each direction k in [0, directions), every
  /// record r for which ghost_of(r, k) names another rank (-1: none) is copied there. Ghosts are
  /// appended after each rank's own records (ghosts(l) of them) and stay until drop_ghosts(); the
  /// records themselves do not move. Returns the copies sent and received.
  template <class GhostFn>
  migration_counts halo_exchange(GhostFn ghost_of, int directions) {
    const int locals = comm_->local_ranks();
    migration_counts total;
    for (int k = 0; k < directions; ++k) {
      std::vector<soa_vector<T>> outgoing(static_cast<std::size_t>(locals));
      counts send(static_cast<std::size_t>(locals));
      for (int l = 0; l < locals; ++l) {
        strata::detail::device_guard g(comm_->device(l));
        const stream_t st = comm_->stream(l);
        // Only the rank's own records are candidates (ghosts are not forwarded).
        soa_vector<T> own;
        own.resize_for_overwrite(owned_[std::size_t(l)]);
        copy_columns(shards_[std::size_t(l)], 0, own, 0, std::int64_t(owned_[std::size_t(l)]), st);
        strata::copy_if(own, outgoing[std::size_t(l)], detail::ghost_selected<GhostFn>{ghost_of, k, comm_->rank(l)}, st);
        send[std::size_t(l)] = group_by_destination(l, outgoing[std::size_t(l)], detail::ghost_destination<GhostFn>{ghost_of, k}, "halo_exchange");
      }
      std::vector<soa_vector<T>*> into;
      for (auto& sh : shards_) into.push_back(&sh);
      const migration_counts moved = exchange(outgoing, send, into);
      total.sent += moved.sent, total.received += moved.received;
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

  /// Closes the holes `count` leaving records (ascending indices idx) leave in local rank l's shard
  /// of n records: the staying records among the last `count` places move, in order, into the
  /// holes below n - count, and the shard shrinks to n - count.
  template <class DestFn>
  void fill_holes(int l, const std::int64_t* idx, index_t count, DestFn dest) {
    soa_vector<T>& s = shards_[std::size_t(l)];
    const index_t n = index_t(s.size());
    if (count == 0) return;
    const stream_t st = comm_->stream(l);
    auto v = s.view();
    strata::detail::scratch_block fillers(sizeof(std::int64_t) * std::size_t(count), st);
    // Holes below n - count are as many as staying records at or above it.
    const index_t holes = strata::detail::select(thrust::counting_iterator<std::int64_t>(n - count), fillers.as<std::int64_t>(), count,
                                                 detail::rank_same<decltype(v), DestFn>{v, dest, comm_->rank(l)}, st,
                                                 "strata migrate (records that fill holes)");
    strata::detail::run_each(detail::move_records<decltype(v)>{v, idx, fillers.as<std::int64_t>()}, holes, st, "strata migrate (fill holes)");
    synchronize(st);
    s.resize(std::size_t(n - count));
  }

  /// Groups s (local rank l's records, none of which stays on rank l) by dest(record), stably, and
  /// returns how many records go to each rank. A destination outside the job's ranks throws before
  /// s changes.
  template <class DestFn>
  std::vector<std::int64_t> group_by_destination(int l, soa_vector<T>& s, DestFn dest, const char* op) {
    const int R = comm_->size();
    std::vector<std::int64_t> c(static_cast<std::size_t>(R), 0);
    const index_t n = index_t(s.size());
    if (n == 0) return c;
    strata::detail::device_guard g(comm_->device(l));
    const stream_t st = comm_->stream(l);
    strata::detail::scratch_block keys(sizeof(std::int32_t) * std::size_t(n), st);
    auto v = s.view();
    strata::detail::run_each(detail::destinations<decltype(v), DestFn>{keys.as<std::int32_t>(), v, dest}, n, st, "destinations");
    const cuda::std::span<std::int32_t> key_span(keys.as<std::int32_t>(), std::size_t(n));
    const std::int32_t lo = strata::reduce(key_span, std::numeric_limits<std::int32_t>::max(), detail::min_i32{}, st);
    const std::int32_t hi = strata::reduce(key_span, std::numeric_limits<std::int32_t>::min(), detail::max_i32{}, st);
    if (lo < 0 || hi >= R)
      throw size_error(std::string("strata: ") + op + ": a record of rank " + std::to_string(comm_->rank(l)) + " names rank " +
                       std::to_string(lo < 0 ? lo : hi) + "; ranks are 0 to " + std::to_string(R - 1) + " (no record moved)");
    if (lo == hi) {
      c[std::size_t(lo)] = n;
      return c;
    }
    // Radix passes over the bits a rank number has, no more.
    strata::sort_by_key(s, key_span, st, 0, std::max(1, int(std::bit_width(unsigned(hi)))));
    strata::detail::scratch_block offsets(sizeof(std::int64_t) * std::size_t(R + 1), st);
    strata::detail::run_each(detail::rank_offsets{keys.as<std::int32_t>(), n, offsets.as<std::int64_t>()}, index_t(R + 1), st,
                             "destination counts");
    std::vector<std::int64_t> off(static_cast<std::size_t>(R + 1));
    synchronize(st);
    copy_bytes(off.data(), offsets.data(), off.size() * sizeof(std::int64_t));
    for (int p = 0; p < R; ++p) c[std::size_t(p)] = off[std::size_t(p + 1)] - off[std::size_t(p)];
    return c;
  }

  /// Sends run p of out[l] (grouped by destination, send[l][p] records each; none to rank l
  /// itself) to rank p; the records that arrive are added behind into[l]'s records, in source-rank
  /// order, received there directly.
  migration_counts exchange(std::vector<soa_vector<T>>& out, const counts& send, const std::vector<soa_vector<T>*>& into) {
    const int R = comm_->size(), locals = comm_->local_ranks();
    counts recv(static_cast<std::size_t>(locals), std::vector<std::int64_t>(static_cast<std::size_t>(R)));
    exchange_counts(send, recv);
    migration_counts moved;
    counts send_at(static_cast<std::size_t>(locals)), recv_at(static_cast<std::size_t>(locals));
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      const std::size_t k = std::size_t(l);
      recv[k][std::size_t(comm_->rank(l))] = 0;
      std::int64_t total = std::int64_t(into[k]->size()), at = 0;
      for (int p = 0; p < R; ++p) {
        recv_at[k].push_back(total), total += recv[k][std::size_t(p)];
        send_at[k].push_back(at), at += send[k][std::size_t(p)];
        moved.sent += send[k][std::size_t(p)], moved.received += recv[k][std::size_t(p)];
      }
      into[k]->resize_for_overwrite(std::size_t(total));
    }
    comm_->group([&] {
      for (int l = 0; l < locals; ++l) {
        const std::size_t k = std::size_t(l);
        const int me = comm_->rank(l);
        for (int p = 0; p < R; ++p) {
          if (p == me) continue;
          const std::int64_t n_out = send[k][std::size_t(p)], n_in = recv[k][std::size_t(p)];
          for (std::size_t c = 0; c < soa_vector<T>::leaves; ++c) {
            const std::size_t w = soa_vector<T>::layout_type::leaf_sizes[c];
            if (n_out > 0)
              comm_->send(l, out[k].view().column_bytes(c) + std::size_t(send_at[k][std::size_t(p)]) * w, std::size_t(n_out) * w, p);
            if (n_in > 0)
              comm_->recv(l, into[k]->view().column_bytes(c) + std::size_t(recv_at[k][std::size_t(p)]) * w, std::size_t(n_in) * w, p);
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
    const std::size_t bytes = sizeof(std::int64_t) * std::size_t(R);
    std::vector<std::unique_ptr<strata::detail::scratch_block>> out(static_cast<std::size_t>(locals)), in(static_cast<std::size_t>(locals));
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      out[std::size_t(l)] = std::make_unique<strata::detail::scratch_block>(bytes, comm_->stream(l));
      in[std::size_t(l)] = std::make_unique<strata::detail::scratch_block>(bytes, comm_->stream(l));
      copy_bytes_async(out[std::size_t(l)]->data(), send[std::size_t(l)].data(), bytes, comm_->stream(l));
    }
    comm_->group([&] {
      for (int l = 0; l < locals; ++l)
        for (int p = 0; p < R; ++p) {
          if (p == comm_->rank(l)) continue;
          comm_->send(l, out[std::size_t(l)]->data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
          comm_->recv(l, in[std::size_t(l)]->data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
        }
    });
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      copy_bytes_async(recv[std::size_t(l)].data(), in[std::size_t(l)]->data(), bytes, comm_->stream(l));
    }
    comm_->synchronize_all();
    for (int l = 0; l < locals; ++l) {
      strata::detail::device_guard g(comm_->device(l));
      recv[std::size_t(l)][std::size_t(comm_->rank(l))] = send[std::size_t(l)][std::size_t(comm_->rank(l))];
      out[std::size_t(l)].reset(), in[std::size_t(l)].reset();
    }
  }

  /// f(l) for every local rank l, each on a host thread of its own when there are several (their
  /// GPUs work at once); the first exception any of them threw is rethrown after all finish.
  template <class F>
  void on_every_rank(F f) {
    const int locals = comm_->local_ranks();
    if (locals == 1) return f(0);
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(locals));
    std::vector<std::thread> threads;
    for (int l = 0; l < locals; ++l)
      threads.emplace_back([&, l] {
        try {
          f(l);
        } catch (...) {
          errors[std::size_t(l)] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  communicator* comm_;
  std::vector<soa_vector<T>> shards_;
  std::vector<soa_vector<T>> outgoing_, spare_;  // migrate's send and split buffers, kept for the next call
  std::vector<std::size_t> owned_;  // each shard's own records; the rest are ghosts
};

}  // namespace strata::distributed
