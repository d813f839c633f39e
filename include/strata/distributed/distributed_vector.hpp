// SPDX-License-Identifier: Apache-2.0
// SoA records sharded over ranks: one soa_vector<T> per rank this process drives, each on its
// rank's GPU. Algorithms run on every shard on its own device and stream; reductions add the
// shards' partial results through the communicator; migrate() moves every record to the rank a
// function of the record names, and halo_exchange() copies records near a rank's boundary to its
// neighbours as ghosts; only per-rank counts cross the host.
#pragma once

#include <strata/config.hpp>
#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/select_indices.hpp>
#include <strata/algorithm/split_by_key.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/distributed/communicator.hpp>
#include <strata/distributed/exchange.hpp>
#include <strata/distributed/rank_work.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::distributed {

template <class T>
class distributed_soa_vector {
 public:
  explicit distributed_soa_vector(communicator& comm) : comm_(&comm), threads_(std::make_unique<detail::rank_threads>(comm.local_ranks())) {
    for (int l = 0; l < comm.local_ranks(); ++l) {
      strata::detail::device_guard g(comm.device(l));
      shards_.emplace_back();
      outgoing_.emplace_back();
      spare_.emplace_back();
      owned_.push_back(0);
      scratch_.push_back(std::make_unique<strata::detail::stream_scratch>(comm.stream(l)));
    }
  }
  // Work may still be queued on the ranks' streams (transform, migrate's exchange) when the shards
  // are freed or replaced: it finishes first.
  ~distributed_soa_vector() {
    settle_all();
    release_scratch();
  }
  distributed_soa_vector(distributed_soa_vector&&) noexcept = default;
  distributed_soa_vector& operator=(distributed_soa_vector&& o) noexcept {
    if (this != &o) {
      settle_all();
      release_scratch();
      comm_ = o.comm_;
      shards_ = std::move(o.shards_), outgoing_ = std::move(o.outgoing_), spare_ = std::move(o.spare_);
      owned_ = std::move(o.owned_);
      scratch_ = std::move(o.scratch_);
      threads_ = std::move(o.threads_);
      pack_limit_ = o.pack_limit_;
      reserved_ = o.reserved_;
      generation_ = o.generation_;
    }
    return *this;
  }

  communicator& comm() const { return *comm_; }
  /// Changes whenever the container's own operations change which records a shard holds or their
  /// order (scatter, assign, migrate, halo_exchange, drop_ghosts), to a value no other state of
  /// any container had: structures built over the shards (distributed::cell_lists) keep it to
  /// refuse shards that changed since. Work a caller does through shard(l) is not counted.
  std::uint64_t generation() const { return generation_; }
  /// Local rank l's records (on its device). The work queued on the rank's stream (transform,
  /// migrate's moves) has finished when this returns, so the container's own operations, which
  /// run on the default stream, see its results.
  soa_vector<T>& shard(int l) {
    settle(l);
    return shards_.at(std::size_t(l));
  }
  const soa_vector<T>& shard(int l) const {
    settle(l);
    return shards_.at(std::size_t(l));
  }
  /// Records on every rank of the job.
  std::int64_t size() const {
    std::vector<std::int64_t> local;
    for (const auto& s : shards_) local.push_back(std::int64_t(s.size()));
    return comm_->all_reduce_sum(local);
  }

  /// This process's part of the records, split evenly over its ranks in order (local rank l gets
  /// the l-th slice). A single-process job passes all records. Each shard keeps the room reserve()
  /// asked for. Strong guarantee: every rank's new shard is made before any is replaced (on its
  /// own device, so no device holds more than with one rank at a time).
  void scatter(std::span<const T> records) {
    renew();
    comm_->synchronize_all();  // the shards replaced here may still be written by queued work
    const std::size_t n = records.size(), parts = shards_.size();
    std::vector<soa_vector<T>> fresh;
    fresh.reserve(parts);
    for (std::size_t l = 0; l < parts; ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      const std::size_t lo = n * l / parts, hi = n * (l + 1) / parts;
      fresh.emplace_back(records.subspan(lo, hi - lo));
      fresh.back().reserve(reserved_);
    }
    for (std::size_t l = 0; l < parts; ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards_[l] = std::move(fresh[l]);
      owned_[l] = shards_[l].size();
    }
  }
  /// Every local rank's records replaced by its own container: `shards[l]` becomes local rank
  /// l's shard, all of it owned (a restart from a checkpoint keeps each rank's records where they
  /// were). Each must be on its rank's device. Each shard keeps the room reserve() asked for.
  /// Strong guarantee: the room is made for every rank before any shard is replaced.
  void assign(std::vector<soa_vector<T>> shards) {
    if (shards.size() != shards_.size())
      strata::detail::throw_size_error("distributed_soa_vector::assign: shards", index_t(shards.size()), index_t(shards_.size()));
    for (std::size_t l = 0; l < shards.size(); ++l)
      if (shards[l].capacity() > 0 && shards[l].device() >= 0 && shards[l].device() != comm_->device(int(l)))
        throw std::invalid_argument("strata: distributed_soa_vector::assign: shard " + std::to_string(l) + " is on device " +
                                    std::to_string(shards[l].device()) + ", local rank " + std::to_string(l) + " on device " +
                                    std::to_string(comm_->device(int(l))));
    renew();
    comm_->synchronize_all();  // the shards replaced here may still be written by queued work
    for (std::size_t l = 0; l < shards.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards[l].reserve(reserved_);
    }
    for (std::size_t l = 0; l < shards.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards_[l] = std::move(shards[l]);
      owned_[l] = shards_[l].size();
    }
  }
  /// Room for `records` records on every local rank, kept by scatter() and by migrate() (the
  /// buffer its split writes is reserved alike): while a rank holds no more, migrate() and
  /// halo_exchange() receive without growing its shard. A growth waits for the rank's stream and
  /// copies the shard into memory half as large again, and every rank waits for it in the
  /// exchange. Waits for the ranks' queued work. Strong guarantee for the records: on failure
  /// (out of memory on some device) every shard holds what it held, and the shards that grew keep
  /// their room.
  void reserve(std::size_t records) {
    comm_->synchronize_all();  // a growth copies the shard on the default stream
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards_[l].reserve(records);
    }
    reserved_ = std::max(reserved_, records);
  }
  /// Frees what migrate() and halo_exchange() keep for their next call: the send and split
  /// buffers and the scratch blocks (which go back to the scratch resource). The shards and their
  /// reserved room stay. Waits for the ranks' queued work.
  void release_buffers() {
    comm_->synchronize_all();
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      outgoing_[l] = soa_vector<T>();
      spare_[l] = soa_vector<T>();
      scratch_[l]->release();
    }
  }
  /// Bytes of device memory local rank l keeps for the next migrate() or halo_exchange(): the send
  /// and split buffers (their capacity) and the listed scratch blocks; release_buffers() frees them.
  std::size_t buffer_bytes(int l) const {
    const std::size_t k = std::size_t(l);
    return (outgoing_.at(k).capacity() + spare_.at(k).capacity()) * record_bytes() + scratch_.at(k)->listed_bytes();
  }
  /// Records local rank l's shard holds without growing.
  std::size_t capacity(int l) const { return shards_.at(std::size_t(l)).capacity(); }

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
  /// the ranks' partial sums are added (communicator::all_reduce_sum_in_place: exact for integers).
  template <class A, class Map>
  A transform_reduce_sum(Map map, A init = A{}) {
    // Each shard's partial sum stays in its device's memory, where the all-reduce adds them: the
    // ranks' reductions and the all-reduce are queued with no host wait between them, and one wait
    // brings the sum back (a host round trip per rank before the all-reduce cost about a
    // reduction's time per GPU).
    std::vector<std::unique_ptr<strata::detail::scratch_block>> parts;
    std::vector<A*> at;
    for (int l = 0; l < comm_->local_ranks(); ++l) {
      strata::detail::device_guard g(comm_->device(l));
      parts.push_back(std::make_unique<strata::detail::scratch_block>(sizeof(A), comm_->stream(l), *scratch_[std::size_t(l)]));
      at.push_back(parts.back()->as<A>());
#if defined(STRATA_BACKEND_CUDA)
      strata::detail::transform_reduce_async_from(shards_[std::size_t(l)], map, A{}, detail::plus{}, at.back(), comm_->stream(l),
                                                  *scratch_[std::size_t(l)]);
#else
      *at.back() = strata::transform_reduce(shards_[std::size_t(l)], map, A{}, detail::plus{}, comm_->stream(l));
#endif
    }
    comm_->all_reduce_sum_in_place(at);
    A sum{};
    {
      strata::detail::device_guard g(comm_->device(0));
      copy_bytes_async(&sum, at[0], sizeof(A), comm_->stream(0));
      synchronize(comm_->stream(0));
    }
    comm_->synchronize_all();
    // Each block goes back on its own device (a caller's scratch resource may rely on the current
    // device).
    for (int l = 0; l < comm_->local_ranks(); ++l) {
      strata::detail::device_guard g(comm_->device(l));
      parts[std::size_t(l)].reset();
    }
    return init + sum;
  }

  /// Sends every record to rank dest(record) (a global rank). One coalesced pass reads what dest
  /// needs and counts, per block of records, the leaving ones for every destination, along with
  /// the range of the destinations; one wait brings the totals to the host. Then, when few leave
  /// (at most 1 in leave_ratio_limit), they are gathered into a send buffer grouped by destination
  /// and the staying records from the shard's end fill their places (work in proportion to the
  /// leaving records); when many leave, one streaming pass splits the shard into the staying
  /// records, in order, and the leaving ones, grouped by destination. Both keep the records' order
  /// within a destination and need no sort and no further wait (with more than split_max_keys
  /// ranks, the leaving records are sorted by destination and their counts take a second wait).
  /// Both write each run that travels packed straight into its place in the wire block.
  /// The runs then go to their ranks through NCCL (each run as one message, its columns packed,
  /// unless packing_limit() says otherwise) and arrive behind the receiver's records, in
  /// source-rank order. Every local rank does all of its part on a host thread of its own, its
  /// NCCL calls included; the ranks meet twice: when every rank's counts are known (and checked),
  /// and when every rank holds the memory its exchange needs (room for the arrivals, wire blocks),
  /// so that a bad destination, or a rank that cannot get that memory, throws before any record
  /// moves (every shard as it was). A
  /// rank's records afterwards: its staying records in their order (when few left, those from the
  /// last places moved into the holes, in increasing order), then the arrivals. Send and split
  /// buffers, and each rank's scratch blocks (counts, index lists, wire blocks), are kept between
  /// calls, so a steady migration asks for no memory (release_buffers() frees them). Returns with the
  /// exchange queued on every rank's stream, where the container's own work (transform, the next
  /// migrate) follows it; shard(), gather() and the reductions wait for it.
  template <class DestFn>
  migration_counts migrate(DestFn dest) {
    for (int l = 0; l < comm_->local_ranks(); ++l)
      if (ghosts(l) != 0) throw size_error("strata: migrate: rank " + std::to_string(comm_->rank(l)) + " holds ghosts; drop_ghosts() first");
    renew();
    const std::size_t locals = std::size_t(comm_->local_ranks());
    counts send(locals);
    std::vector<migration_counts> moved(locals);
    detail::rank_barrier counted_all{int(locals)}, ready_all{int(locals)};
    // With two ranks every leaving record goes to the other one: nothing is counted per rank.
    const int keys = comm_->size() > 2 && comm_->size() <= strata::detail::split_max_keys ? comm_->size() : 0;
    on_every_rank([&](int l) {
      strata::detail::device_guard g(comm_->device(l));
      const std::size_t k = std::size_t(l);
      std::unique_ptr<strata::detail::scratch_block> leaving;     // the leaving records' indices (few leave)
      std::unique_ptr<strata::detail::scratch_block> packed_out;  // the runs that travel packed, on the wire already
      index_t out = 0;
      bool split = false;
      // Counts, checks and groups the leaving records; no shard changes.
      auto v = shards_[k].view();
      const detail::leaving_for<decltype(v), DestFn> pick{v, dest, comm_->rank(l)};
      if (!counted_all.after([&] { out = group_leaving(l, pick, dest, keys, send[k], leaving, split, packed_out); })) return;  // another rank failed
      const std::size_t base = shards_[k].size() - std::size_t(out);
      // The hole filling's memory is taken with the exchange's, before the ranks meet: a rank that
      // cannot get it stops every rank there, instead of failing while the others wait for it.
      std::unique_ptr<hole_filling> holes;
      const auto ex = prepare_exchange(l, outgoing_[k], send, split ? spare_[k] : shards_[k], base, ready_all, std::move(packed_out), [&] {
        if (!split && out > 0) holes = std::make_unique<hole_filling>(*this, l, out);
      });
      if (!ex) return;
      if (holes) fill_holes(l, leaving->as<std::int64_t>(), out, dest, *holes);
      leaving.reset();  // freed on the rank's stream, behind the moves
      // No wait: outgoing_ and spare_ live on, and the next migrate changes their size only after
      // its first wait on the rank's stream, which the exchange queued here precedes.
      moved[k] = ex->run();
      if (split) shards_[k].swap(spare_[k]);
      owned_[k] = shards_[k].size();
    });
    migration_counts total;
    for (const migration_counts& m : moved) total.sent += m.sent, total.received += m.received;
    return total;
  }
  /// migrate() streams the whole shard (partition_copy) when more than 1 in this many records
  /// leave a rank, and moves only the leaving records and as many others otherwise: a record moved
  /// through scattered accesses costs about 20 times a streamed record's share of the time on the
  /// H200 (bench/distributed.cpp), so the two cost the same near 1 in 20; 16 leans to streaming.
  static constexpr index_t leave_ratio_limit = 16;

  /// Ghost copies for a step that reads neighbours: for each direction k in [0, directions), every
  /// record r for which ghost_of(r, k) names another rank (-1: none) is copied there. Ghosts are
  /// appended after each rank's own records (ghosts(l) of them), in source-rank order, and from one
  /// source by direction, then in record order; they stay until drop_ghosts(), and the records
  /// themselves do not move. Every direction goes in one exchange: per direction one pass over each
  /// rank's own records (ghosts are not forwarded) counts the copies per destination, one wait
  /// brings all the counts to the host, and a destination outside the job's ranks throws on every
  /// rank before any copy is sent; the selected records are then gathered, grouped by destination,
  /// straight into the wire block their runs travel in (runs past packing_limit() into the rank's
  /// send buffer, kept between calls, as migrate's), so the work and the memory go with the ghosts,
  /// not with the shard. Returns the copies sent and received, with the exchange
  /// queued on the ranks' streams.
  template <class GhostFn>
  migration_counts halo_exchange(GhostFn ghost_of, int directions) {
    renew();
    const std::size_t locals = std::size_t(comm_->local_ranks());
    const int keys = comm_->size() > 2 && comm_->size() <= strata::detail::split_max_keys ? comm_->size() : 0;
    counts send(locals);
    std::vector<migration_counts> moved(locals);
    detail::rank_barrier counted_all{int(locals)}, ready_all{int(locals)};
    on_every_rank([&](int l) {
      strata::detail::device_guard g(comm_->device(l));
      const std::size_t q = std::size_t(l);
      std::unique_ptr<strata::detail::scratch_block> packed_out;  // the runs that travel packed, on the wire already
      if (!counted_all.after([&] { group_ghosts(l, ghost_of, std::max(directions, 0), keys, send[q], packed_out); })) return;  // another rank failed
      if (const auto ex = prepare_exchange(l, outgoing_[q], send, shards_[q], shards_[q].size(), ready_all, std::move(packed_out))) moved[q] = ex->run();
    });
    migration_counts total;
    for (const migration_counts& m : moved) total.sent += m.sent, total.received += m.received;
    return total;
  }
  /// Ghost records at the end of local rank l's shard.
  std::size_t ghosts(int l) const { return shards_.at(std::size_t(l)).size() - owned_.at(std::size_t(l)); }
  /// Messages of migrate() and halo_exchange() of at most this many bytes travel packed: every
  /// column of a run in one NCCL send, written into a wire block by the split or gather that
  /// selects the records, and copied out of one after the receive. One send is faster at every
  /// size measured, even with a copy in and a copy out: the same bytes between two H200s as 7
  /// column sends or as one took 0.066-0.077 / 0.027-0.033 ms for 5000 records, 0.21 / 0.14 ms for
  /// 2^20 and 1.19 / 0.65 ms for 6.7e6 (bench/distributed.cpp), where each copy costs about 0.09
  /// ms. So every run travels packed by default; the price is memory: wire blocks as large as what
  /// a rank sends and receives, taken from the scratch pool for the call. A smaller limit bounds
  /// that memory (0: every column on its own, in place). Every rank of a job must use the same
  /// limit (it decides the format of what a rank receives).
  void set_packing_limit(std::size_t bytes) { pack_limit_ = bytes; }
  std::size_t packing_limit() const { return pack_limit_; }
  /// Removes every ghost (each shard back to its own records).
  void drop_ghosts() {
    renew();
    for (std::size_t l = 0; l < shards_.size(); ++l) {
      strata::detail::device_guard g(comm_->device(int(l)));
      shards_[l].resize(owned_[l]);
    }
  }

 private:
  using counts = std::vector<std::vector<std::int64_t>>;  // [local rank][global rank]

  /// A generation no container has had (a process-wide count).
  void renew() {
    static std::atomic<std::uint64_t> next{1};
    generation_ = next.fetch_add(1, std::memory_order_relaxed);
  }

  /// Waits for every rank's stream; for the destructor and move assignment, which cannot throw (a
  /// CUDA error here has been or will be reported by the call that caused it).
  void settle_all() const noexcept {
    if (shards_.empty()) return;
    try {
      comm_->synchronize_all();
    } catch (...) {
    }
  }
  /// Every rank's listed scratch blocks back to the scratch resource (each on its own device).
  void release_scratch() noexcept {
    for (const auto& cache : scratch_) cache->release();
  }
  static constexpr std::size_t record_bytes() {
    std::size_t b = 0;
    for (std::size_t w : soa_vector<T>::layout_type::leaf_sizes) b += w;
    return b;
  }
  void settle(int l) const {
    strata::detail::device_guard g(comm_->device(l));
    synchronize(comm_->stream(l));
  }

  /// Local rank l's part of an exchange (detail::rank_exchange): out[p's run] to rank p (or, for
  /// the runs that travel packed, what packed_out holds when given), arrivals behind `into`'s first
  /// `base` records. Prepared, then every local rank meets at `ready`: null when another rank
  /// failed to prepare (that rank throws why), so that none sends alone.
  template <class Also = void (*)()>
  std::unique_ptr<detail::rank_exchange<T>> prepare_exchange(int l, soa_vector<T>& out, const counts& send, soa_vector<T>& into, std::size_t base,
                                                             detail::rank_barrier& ready, std::unique_ptr<strata::detail::scratch_block> packed_out,
                                                             Also also = [] {}) {
    std::unique_ptr<detail::rank_exchange<T>> ex;
    const bool all = ready.after([&] {
      also();
      strata::detail::stream_scratch& cache = *scratch_[std::size_t(l)];
      ex = std::make_unique<detail::rank_exchange<T>>(*comm_, l, out, send[std::size_t(l)], detail::receive_counts(*comm_, l, send, cache), into,
                                                      base, pack_limit_, std::move(packed_out), cache);
    });
    return all ? std::move(ex) : nullptr;
  }
  /// migrate()'s first step on local rank l, which changes no shard: counts the records that
  /// `pick` (a keyed pick whose key is the destination rank) picks, per destination (one pass, one
  /// wait), refuses a destination outside the job's ranks, and groups the leaving records by
  /// destination. Where the counts give every destination's run (keys counted, or one
  /// destination), the runs that travel packed go straight into a wire block (`packed_out`) and
  /// the others into outgoing_[l]; otherwise all go to outgoing_[l], sorted by destination after.
  /// Many leaving: one pass splits the shard (the staying records to spare_[l], `split` set). Few:
  /// they are gathered, and their indices, ascending, stay in `leaving` for the holes they leave.
  /// send_l gets the count for every rank; returns how many leave.
  template <class Pick, class DestFn>
  index_t group_leaving(int l, const Pick& pick, DestFn dest, int keys, std::vector<std::int64_t>& send_l,
                        std::unique_ptr<strata::detail::scratch_block>& leaving, bool& split,
                        std::unique_ptr<strata::detail::scratch_block>& packed_out) {
    const std::size_t k = std::size_t(l);
    const stream_t st = comm_->stream(l);
    auto v = shards_[k].view();
    const index_t n = v.size();
    send_l.assign(std::size_t(comm_->size()), 0);
    if (n == 0) return 0;
    const std::size_t words = strata::detail::split_head_words(keys);
    strata::detail::stream_scratch& cache = *scratch_[k];
    strata::detail::scratch_block head_block(sizeof(std::int64_t) * words, st, cache);
    strata::detail::keyed_split counted(pick, n, keys, head_block.as<std::int64_t>(), st, "strata migrate (leaving records)", cache);
    std::vector<std::int64_t> head(words);
    copy_bytes_async(head.data(), head_block.data(), sizeof(std::int64_t) * words, st);
    synchronize(st);
    const strata::detail::split_counts c = strata::detail::decode_split_head(head.data(), keys);
    if (c.lo > c.hi) return 0;  // nothing leaves
    const detail::key_range range(c.lo, c.hi);
    check_destinations(l, range, "migrate");
    const index_t out = index_t(c.picked);
    const bool one_dest = c.lo == c.hi;
    const bool many = out > n / leave_ratio_limit;
    if (keys > 0 || one_dest) {
      // Every run's size is known: each goes to its place on the wire now.
      if (keys > 0) send_l = c.per_key;
      else send_l[std::size_t(c.lo)] = out;
      send_l[std::size_t(comm_->rank(l))] = 0;
      const auto to = wire_target_for(l, send_l, out, packed_out);
      if (many) {
        spare_[k].clear();
        spare_[k].reserve(reserved_);  // it becomes the shard: the room reserve() asked for stays
        spare_[k].resize_for_overwrite(std::size_t(n - out));
        counted.split(pick, v, spare_[k].view(), to, keys > 0 ? c.single_key() : -1);
        split = true;
      } else {
        // Their indices in order (for the holes) and, when they go to several ranks, by destination
        // (for the gather); scratch [in order][by destination]. A gather by the list keeps every
        // record's loads independent of the others': the pass that lists them would wait for
        // them block by block.
        const bool several = keys > 0 && c.single_key() < 0;
        leaving = std::make_unique<strata::detail::scratch_block>(sizeof(std::int64_t) * std::size_t(out) * (several ? 2 : 1), st, cache);
        std::int64_t* in_order = leaving->as<std::int64_t>();
        std::int64_t* by_dest = several ? in_order + out : nullptr;
        counted.list(pick, 0, in_order, by_dest);
        strata::detail::run_each(detail::gather_records<decltype(v), decltype(to)>{v, to, several ? by_dest : in_order}, out, st,
                                 "strata migrate (gather)");
      }
      return out;
    }
    if (many) {
      spare_[k].clear();
      spare_[k].reserve(reserved_);
      strata::partition_copy(shards_[k], spare_[k], outgoing_[k], detail::stays_on<DestFn>{dest, comm_->rank(l)}, st);
      split = true;
    } else {
      leaving = std::make_unique<strata::detail::scratch_block>(sizeof(std::int64_t) * std::size_t(out), st, cache);
      counted.list(pick, 0, leaving->as<std::int64_t>(), nullptr);
      outgoing_[k].clear();
      outgoing_[k].resize_for_overwrite(std::size_t(out));
      auto o = outgoing_[k].view();
      strata::detail::run_each(detail::gather_records<decltype(v)>{v, o, leaving->as<std::int64_t>()}, out, st, "strata migrate (gather)");
    }
    send_l = group_by_destination(l, outgoing_[k], dest, range);
    return out;
  }
  /// Where local rank l's `total` outgoing records (send_l[p] for rank p, in rank order) are
  /// written: the runs that travel packed into a new wire block (packed_out), the others into
  /// outgoing_[l] at their place in the send order (sized for all of them only when some run
  /// travels column by column).
  auto wire_target_for(int l, const std::vector<std::int64_t>& send_l, index_t total, std::unique_ptr<strata::detail::scratch_block>& packed_out) {
    const std::size_t q = std::size_t(l);
    std::vector<std::size_t> at;
    const std::size_t bytes = detail::wire_offsets<soa_vector<T>>(send_l, pack_limit_, at);
    if (bytes > 0) packed_out = std::make_unique<strata::detail::scratch_block>(bytes, comm_->stream(l), *scratch_[q]);
    const bool all_packed =
        std::all_of(send_l.begin(), send_l.end(), [&](std::int64_t m) { return m == 0 || detail::travels_packed<soa_vector<T>>(m, pack_limit_); });
    outgoing_[q].clear();
    if (!all_packed) outgoing_[q].resize_for_overwrite(std::size_t(total));
    auto to = detail::make_wire_target<soa_vector<T>>(send_l, pack_limit_, at, packed_out ? packed_out->data() : nullptr, outgoing_[q].view());
    if (!to) throw std::logic_error("strata: exchange: more packed runs than a wire target holds");
    return *to;
  }

  /// halo_exchange()'s first step on local rank l, which changes no shard: for each direction k, one
  /// counting pass over the rank's own records for the ghosts ghost_of(record, k) names, per
  /// destination; one wait for every direction's counts; a destination outside the job's ranks
  /// refused; then the ghosts listed and gathered, grouped by destination and within one
  /// destination by direction, into a wire target (wire_target_for: packed runs into packed_out);
  /// without counts per rank (keys = 0 with more than two ranks), the directions one after another
  /// into outgoing_[l] and then sorted by destination, stably. send_l gets the count for every
  /// rank.
  template <class GhostFn>
  void group_ghosts(int l, GhostFn ghost_of, int directions, int keys, std::vector<std::int64_t>& send_l,
                    std::unique_ptr<strata::detail::scratch_block>& packed_out) {
    const std::size_t q = std::size_t(l);
    const stream_t st = comm_->stream(l);
    const int R = comm_->size(), me = comm_->rank(l);
    auto v = shards_[q].view();
    using view_t = decltype(v);
    using pick_t = detail::ghost_for<view_t, GhostFn>;
    const index_t n = index_t(owned_[q]);
    send_l.assign(std::size_t(R), 0);
    if (n == 0 || directions == 0) return;
    const std::size_t K = std::size_t(directions), words = strata::detail::split_head_words(keys);
    strata::detail::stream_scratch& cache = *scratch_[q];
    strata::detail::scratch_block head_block(sizeof(std::int64_t) * words * K, st, cache);
    std::vector<std::unique_ptr<strata::detail::keyed_split>> counted;
    for (int k = 0; k < directions; ++k)
      counted.push_back(std::make_unique<strata::detail::keyed_split>(pick_t{v, ghost_of, k, me}, n, keys,
                                                                      head_block.as<std::int64_t>() + words * std::size_t(k), st,
                                                                      "strata halo_exchange (ghost records)", cache));
    std::vector<std::int64_t> head(words * K);
    copy_bytes_async(head.data(), head_block.data(), sizeof(std::int64_t) * head.size(), st);
    synchronize(st);
    // Per direction: the counts, and how many go to each rank (known unless sorted below).
    const bool sort_after = keys == 0 && R > 2;
    std::vector<strata::detail::split_counts> c(K);
    std::vector<std::vector<std::int64_t>> per(K, std::vector<std::int64_t>(std::size_t(R), 0));
    detail::key_range range(std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min());
    std::int64_t total = 0;
    for (std::size_t k = 0; k < K; ++k) {
      c[k] = strata::detail::decode_split_head(head.data() + words * k, keys);
      if (c[k].lo > c[k].hi) continue;  // no ghosts in this direction
      check_destinations(l, detail::key_range(c[k].lo, c[k].hi), "halo_exchange");
      range = detail::widen_range{}(range, detail::key_range(c[k].lo, c[k].hi));
      total += c[k].picked;
      if (keys > 0) per[k] = c[k].per_key;
      else if (!sort_after) per[k][std::size_t(c[k].lo)] = c[k].picked;  // one rank besides this one
    }
    if (total == 0) return;
    // Rank p's run holds direction 0's ghosts for p, then direction 1's, ...
    std::vector<std::vector<std::int64_t>> at(K, std::vector<std::int64_t>(std::size_t(R), 0));
    std::int64_t end = 0;
    for (std::size_t p = 0; p < std::size_t(R); ++p)
      for (std::size_t k = 0; k < K; ++k) at[k][p] = end, end += per[k][p];
    if (sort_after) {
      // Without counts per rank (keys = 0): each direction's ghosts in order, their destinations
      // beside them, then one stable sort by destination.
      outgoing_[q].clear();
      outgoing_[q].resize_for_overwrite(std::size_t(total));
      auto o = outgoing_[q].view();
      strata::detail::scratch_block dest_keys(sizeof(std::int32_t) * std::size_t(total), st, cache);
      std::int64_t next = 0;
      for (std::size_t k = 0; k < K; ++k) {
        const index_t m = index_t(c[k].picked);
        if (m == 0) continue;
        strata::detail::scratch_block listed(sizeof(std::int64_t) * std::size_t(m), st, cache);
        counted[k]->list(pick_t{v, ghost_of, int(k), me}, 0, listed.as<std::int64_t>(), nullptr);
        strata::detail::run_each(detail::gather_records<view_t>{v, o, listed.as<std::int64_t>(), index_t(next)}, m, st, "strata halo_exchange (gather)");
        strata::detail::run_each(detail::destinations<view_t, detail::ghost_destination<GhostFn>>{dest_keys.as<std::int32_t>(), o, {ghost_of, int(k)}, index_t(next)},
                                 m, st, "strata halo_exchange (destinations)");
        next += m;
      }
      send_l = sort_by_destination(l, outgoing_[q], dest_keys.as<std::int32_t>(), range);
      return;
    }
    for (std::size_t p = 0; p < std::size_t(R); ++p)
      for (std::size_t k = 0; k < K; ++k) send_l[p] += per[k][p];
    const auto to = wire_target_for(l, send_l, index_t(total), packed_out);
    // Each direction's ghosts listed, then gathered by the list straight to their places in their
    // destinations' runs.
    for (std::size_t k = 0; k < K; ++k) {
      const index_t m = index_t(c[k].picked);
      if (m == 0) continue;
      const bool several = keys > 0 && c[k].single_key() < 0;
      strata::detail::scratch_block listed(sizeof(std::int64_t) * std::size_t(m) * (several ? 2 : 1), st, cache);
      std::int64_t* in_order = listed.as<std::int64_t>();
      std::int64_t* by_dest = several ? in_order + m : nullptr;
      counted[k]->list(pick_t{v, ghost_of, int(k), me}, 0, in_order, by_dest);
      if (!several) {
        const std::int64_t first = at[k][std::size_t(c[k].lo)];  // one destination
        strata::detail::run_each(detail::gather_records<view_t, decltype(to)>{v, to, in_order, index_t(first)}, m, st, "strata halo_exchange (gather)");
        continue;
      }
      std::int64_t from = 0;  // by_dest holds key 0's ghosts, then key 1's, ...
      for (std::size_t p = 0; p < std::size_t(R); ++p) {
        if (per[k][p] == 0) continue;
        strata::detail::run_each(detail::gather_records<view_t, decltype(to)>{v, to, by_dest + from, index_t(at[k][p])}, index_t(per[k][p]), st,
                                 "strata halo_exchange (gather)");
        from += per[k][p];
      }
    }
  }

  /// Closes the holes `count` leaving records (ascending indices idx) leave in local rank l's shard
  /// of n records: the staying records among the last `count` places move, in order, into the
  /// holes below n - count, and the shard shrinks to n - count. Queued on the rank's stream: the
  /// number of holes stays in device memory, so nothing waits.
  /// fill_holes' memory for `count` leaving records of local rank l, taken beforehand.
  struct hole_filling {
    strata::detail::scratch_block fillers;
    strata::detail::select_indices_workspace select;
    hole_filling(distributed_soa_vector& d, int l, index_t count)
        : fillers(sizeof(std::int64_t) * (std::size_t(count) + 1), d.comm_->stream(l), *d.scratch_[std::size_t(l)]),
          select(count, d.comm_->stream(l), "strata migrate (records that fill holes)", *d.scratch_[std::size_t(l)]) {}
  };
  template <class DestFn>
  void fill_holes(int l, const std::int64_t* idx, index_t count, DestFn dest, hole_filling& mem) {
    soa_vector<T>& s = shards_[std::size_t(l)];
    const index_t n = index_t(s.size());
    const stream_t st = comm_->stream(l);
    auto v = s.view();
    std::int64_t* holes = mem.fillers.template as<std::int64_t>();
    // Holes below n - count are as many as staying records at or above it.
    strata::detail::select_indices_async(detail::goes_to<decltype(v), DestFn>{v, dest, comm_->rank(l), n - count, true}, count, n - count,
                                         holes + 1, holes, st, "strata migrate (records that fill holes)", mem.select);
    strata::detail::run_each(detail::move_records<decltype(v)>{v, idx, holes + 1, holes}, count, st, "strata migrate (fill holes)");
    s.resize(std::size_t(n - count));  // a shrink: no device work, the moves stay queued
  }

  /// Throws, naming the rank, when a destination in range lies outside the job's ranks.
  void check_destinations(int l, const detail::key_range& range, const char* op) const {
    const int R = comm_->size();
    if (range.lo < 0 || range.hi >= R)
      throw size_error(std::string("strata: ") + op + ": a record of rank " + std::to_string(comm_->rank(l)) + " names rank " +
                       std::to_string(range.lo < 0 ? range.lo : range.hi) + "; ranks are 0 to " + std::to_string(R - 1) + " (no record moved)");
  }

  /// Groups s (local rank l's records, none of which stays on rank l) by dest(record), stably, and
  /// returns how many records go to each rank; `range` holds every destination, already checked.
  template <class DestFn>
  std::vector<std::int64_t> group_by_destination(int l, soa_vector<T>& s, DestFn dest, const detail::key_range& range) {
    const index_t n = index_t(s.size());
    if (n == 0) return std::vector<std::int64_t>(static_cast<std::size_t>(comm_->size()), 0);
    strata::detail::device_guard g(comm_->device(l));
    const stream_t st = comm_->stream(l);
    strata::detail::scratch_block keys(sizeof(std::int32_t) * std::size_t(n), st, *scratch_[std::size_t(l)]);
    auto v = s.view();
    strata::detail::run_each(detail::destinations<decltype(v), DestFn>{keys.as<std::int32_t>(), v, dest}, n, st, "destinations");
    return sort_by_destination(l, s, keys.as<std::int32_t>(), range);
  }
  /// Sorts s (local rank l's records) stably by their destinations keys[i] (device memory, queued
  /// on the rank's stream, every one within `range`, which is checked) and returns how many go to
  /// each rank; waits for the counts.
  std::vector<std::int64_t> sort_by_destination(int l, soa_vector<T>& s, std::int32_t* keys, const detail::key_range& range) {
    const int R = comm_->size();
    std::vector<std::int64_t> c(static_cast<std::size_t>(R), 0);
    const index_t n = index_t(s.size());
    if (n == 0) return c;
    if (range.lo == range.hi) {
      c[std::size_t(range.lo)] = n;
      return c;
    }
    const stream_t st = comm_->stream(l);
    const cuda::std::span<std::int32_t> key_span(keys, std::size_t(n));
    // Radix passes over the bits a rank number has, no more.
    strata::sort_by_key(s, key_span, st, 0, std::max(1, int(std::bit_width(unsigned(range.hi)))));
    strata::detail::scratch_block offsets(sizeof(std::int64_t) * std::size_t(R + 1), st, *scratch_[std::size_t(l)]);
    strata::detail::run_each(detail::rank_offsets{keys, n, offsets.as<std::int64_t>()}, index_t(R + 1), st, "destination counts");
    std::vector<std::int64_t> off(static_cast<std::size_t>(R + 1));
    synchronize(st);
    copy_bytes(off.data(), offsets.data(), off.size() * sizeof(std::int64_t));
    for (int p = 0; p < R; ++p) c[std::size_t(p)] = off[std::size_t(p + 1)] - off[std::size_t(p)];
    return c;
  }

  /// f(l) for every local rank l, each on a host thread of its own when there are several (their
  /// GPUs work at once); the first exception any of them threw is rethrown after all finish.
  template <class F>
  void on_every_rank(F f) {
    threads_->run(f);
  }

  communicator* comm_;
  std::vector<soa_vector<T>> shards_;
  std::vector<soa_vector<T>> outgoing_, spare_;  // migrate's send and split buffers, kept for the next call
  std::vector<std::size_t> owned_;  // each shard's own records; the rest are ghosts
  std::size_t pack_limit_ = std::numeric_limits<std::size_t>::max();
  std::size_t reserved_ = 0;  // reserve()'s room per rank
  std::uint64_t generation_ = 0;  // see generation()
  // Per rank: the scratch blocks migrate and the reductions use on the rank's stream, kept for the
  // next call (each rank's thread alone uses its own).
  std::vector<std::unique_ptr<strata::detail::stream_scratch>> scratch_;
  std::unique_ptr<detail::rank_threads> threads_;  // behind a pointer: the container stays movable
};

}  // namespace strata::distributed
