// SPDX-License-Identifier: Apache-2.0
// One local rank's part of moving records between ranks: the counts it receives, and the runs of
// records themselves. Every local rank runs its part on a host thread of its own (the container's
// rank threads), so the ranks' launches and NCCL calls go out side by side instead of queueing
// behind one thread while the GPUs wait for them.
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/distributed/communicator.hpp>
#include <strata/distributed/rank_work.hpp>
#include <strata/algorithm/split_by_key.hpp>  // split_max_keys
#include <strata/memory/scratch.hpp>
#include <strata/algorithm/transform.hpp>  // run_each

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace strata::distributed {

/// What one migrate() moved: records this process's ranks sent to other ranks and received.
struct migration_counts {
  std::int64_t sent = 0, received = 0;
};

namespace detail {

using rank_counts = std::vector<std::vector<std::int64_t>>;  // [local rank][global rank]

/// What local rank l receives: recv[p] records from rank p, where send[q][p] is what local rank q
/// sends to rank p (every local rank's row written before any rank calls this). When every rank
/// is in this process the counts are in host memory already; otherwise one 8-byte send and receive
/// per pair of ranks through NCCL (rank_group: every local rank calls this at once).
inline std::vector<std::int64_t> receive_counts(communicator& comm, int l, const rank_counts& send, scratch_resource& r = scratch()) {
  const int R = comm.size(), me = comm.rank(l);
  std::vector<std::int64_t> recv(std::size_t(R), 0);
  if (comm.all_local()) {
    for (int q = 0; q < comm.local_ranks(); ++q)
      if (comm.rank(q) != me) recv[std::size_t(comm.rank(q))] = send[std::size_t(q)][std::size_t(me)];
    return recv;
  }
  strata::detail::device_guard g(comm.device(l));
  const stream_t st = comm.stream(l);
  const std::size_t bytes = sizeof(std::int64_t) * std::size_t(R);
  strata::detail::scratch_block out(bytes, st, r), in(bytes, st, r);
  copy_bytes_async(out.data(), send[std::size_t(l)].data(), bytes, st);
  // No rank sends to itself: its own slot is written here, so every byte read back is defined.
  fill_bytes_async(in.data(), 0, bytes, st, memory_space::device);
  comm.rank_group(l, [&] {
    for (int p = 0; p < R; ++p) {
      if (p == me) continue;
      comm.send(l, out.data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
      comm.recv(l, in.data() + sizeof(std::int64_t) * std::size_t(p), sizeof(std::int64_t), p);
    }
  });
  copy_bytes_async(recv.data(), in.data(), bytes, st);
  synchronize(st);
  return recv;
}

/// The bytes of m records packed: an SoA block of capacity round_capacity(m), the layout a
/// container of that capacity has, so that both sides know it from m alone.
template <class Vec>
std::size_t packed_bytes(std::int64_t m) {
  return Vec::layout_type::bytes(Vec::layout_type::round_capacity(std::size_t(m)));
}
/// Whether a run of m records travels packed under a packing limit (distributed_soa_vector::
/// set_packing_limit): at most `limit` bytes as a wire block, and more than one column.
template <class Vec>
bool travels_packed(std::int64_t m, std::size_t limit) {
  return m > 0 && Vec::leaves > 1 && packed_bytes<Vec>(m) <= limit;
}
/// The wire block of one side of an exchange: runs[p] records to or from rank p, in rank order;
/// at[p] is where run p lies in the block when it travels packed. Returns the block's bytes.
template <class Vec>
std::size_t wire_offsets(const std::vector<std::int64_t>& runs, std::size_t limit, std::vector<std::size_t>& at) {
  at.clear();
  std::size_t bytes = 0;
  for (std::int64_t m : runs) {
    at.push_back(bytes);
    if (travels_packed<Vec>(m, limit)) bytes += packed_bytes<Vec>(m);
  }
  return bytes;
}

/// A store target over an exchange's send order (the runs for rank 0, 1, ... back to back): record
/// i goes straight into its run's place in the outgoing wire block when that run travels packed,
/// and to `rest` (the send buffer, at i) otherwise. Gathers and splits that write through it leave
/// nothing to pack: the records cross memory once on their way out instead of twice.
template <class View>
struct wire_target {
  using record = typename View::record;
  using layout_type = typename View::layout_type;
  static_assert(layout_type::block == 0, "strata: a wire block is SoA");
  static constexpr int most = strata::detail::split_max_keys;
  View rest;
  int runs = 0;  // packed runs, in send order
  std::int64_t first[most] = {}, count[most] = {};
  std::byte* base[most] = {};
  STRATA_HD void store(index_t i, const record& r) const {
    // Few runs; unrolled, the arrays are read at constant offsets of the kernel's parameters
    // (the gather keeps no stack: cuobjdump -res-usage).
    STRATA_UNROLL
    for (int k = 0; k < most; ++k) {
      if (k >= runs) break;
      if (i >= first[k] && i < first[k] + count[k]) {
        // The columns of an SoA block of capacity cap, as layout_type::column_offset places them;
        // the leaf widths as constants (the mapping's table of them is host memory).
        const std::size_t cap = layout_type::round_capacity(std::size_t(count[k]));
        cuda::std::array<std::byte*, View::leaves> cols{};
        std::size_t off = 0;
        reflect::for_each_leaf<record>([&](auto f) {
          constexpr std::size_t L = decltype(f)::value;
          constexpr std::size_t width = layout_type::leaf_sizes[L];
          cols[L] = base[k] + off;
          off = align_up(off + cap * width, column_alignment);
        });
        View(cols, index_t(count[k]), index_t(cap), rest.location()).store(i - first[k], r);
        return;
      }
    }
    rest.store(i, r);
  }
};
/// The target for local rank l's outgoing runs send[p] (none for itself), packed runs into `wire`
/// at at[p] (wire_offsets' layout), the others into `rest`. At most wire_target::most runs travel
/// packed; null when more would.
template <class Vec, class View>
std::optional<wire_target<View>> make_wire_target(const std::vector<std::int64_t>& send, std::size_t limit, const std::vector<std::size_t>& at,
                                                  std::byte* wire, View rest) {
  wire_target<View> t{rest};
  std::int64_t first = 0;
  for (std::size_t p = 0; p < send.size(); ++p) {
    if (travels_packed<Vec>(send[p], limit)) {
      if (t.runs == t.most) return std::nullopt;
      t.first[t.runs] = first, t.count[t.runs] = send[p], t.base[t.runs] = wire + at[p];
      ++t.runs;
    }
    first += send[p];
  }
  return t;
}

/// Local rank l's exchange of records: run p of `out` (send[p] records, runs in rank order, none
/// for rank l itself) goes to rank p, and recv[p] records from rank p arrive behind `into`'s first
/// `base` records, in source-rank order. A run of at most pack_limit bytes travels packed (one
/// message per rank pair: in a wire block, copied out of one after the receive); a larger one
/// goes column by column, received in place. `packed_out`, when given, is the outgoing wire block
/// already holding the packed runs (written through a wire_target, laid out as wire_offsets
/// says), and `out` holds only the runs that travel column by column; otherwise run() copies the
/// packed runs from `out` into a wire block of its own. Two steps: construction does what can
/// fail (grows `into`, takes the wire blocks) and sends nothing, so that a rank that fails there
/// can stop every rank before any record moves; run() queues the copies and the transfers.
template <class T>
class rank_exchange {
 public:
  using vec = soa_vector<T>;
  rank_exchange(communicator& comm, int l, vec& out, std::vector<std::int64_t> send, std::vector<std::int64_t> recv, vec& into, std::size_t base,
                std::size_t pack_limit, std::unique_ptr<strata::detail::scratch_block> packed_out, scratch_resource& r = scratch())
      : comm_(&comm), l_(l), out_(&out), into_(&into), base_(base), pack_limit_(pack_limit), send_(std::move(send)), recv_(std::move(recv)),
        wire_out_(std::move(packed_out)), prepacked_(wire_out_ != nullptr) {
    strata::detail::device_guard g(comm.device(l));
    const stream_t st = comm.stream(l);
    const std::size_t me = std::size_t(comm.rank(l));
    send_[me] = recv_[me] = 0;
    std::int64_t total = std::int64_t(base), at = 0;
    for (std::size_t p = 0; p < send_.size(); ++p) {
      recv_at_.push_back(total), total += recv_[p];
      send_at_.push_back(at), at += send_[p];
      moved_.sent += send_[p], moved_.received += recv_[p];
    }
    const std::size_t out_bytes = wire_offsets<vec>(send_, pack_limit_, wire_out_at_);
    const std::size_t in_bytes = wire_offsets<vec>(recv_, pack_limit_, wire_in_at_);
    total_ = std::size_t(total);
    if (total_ > into.capacity()) {
      // A growth copies the records on the default stream: the rank's queued work, which may
      // write them, must be done first.
      synchronize(st);
      into.reserve(std::max(total_, into.capacity() + into.capacity() / 2));
    }
    if (out_bytes > 0 && !prepacked_) wire_out_ = std::make_unique<strata::detail::scratch_block>(out_bytes, st, r);
    if (in_bytes > 0) wire_in_ = std::make_unique<strata::detail::scratch_block>(in_bytes, st, r);
  }

  /// Sizes `into` (which holds base records by now) to take the arrivals, packs, sends and receives
  /// (communicator::rank_group: every local rank runs its exchange at once), and unpacks, all
  /// queued on the rank's stream; nothing waits. The wire blocks are freed behind the unpacking.
  migration_counts run() {
    strata::detail::device_guard g(comm_->device(l_));
    const stream_t st = comm_->stream(l_);
    if (into_->size() != base_) throw std::logic_error("strata: exchange: the receiving shard changed size between preparing and running");
    into_->resize_for_overwrite(total_);  // within the capacity reserved: no device work
    auto o = out_->view();
    auto v = into_->view();
    const int R = comm_->size(), me = comm_->rank(l_);
    for (std::size_t p = 0; p < send_.size(); ++p) {
      if (prepacked_ || !packed(send_[p])) continue;
      auto w = wire_view(wire_out_->data() + wire_out_at_[p], send_[p], o.location());
      strata::detail::run_each(copy_run<decltype(o), decltype(w)>{o, w, index_t(send_at_[p]), 0}, index_t(send_[p]), st, "strata exchange (pack)");
    }
    comm_->rank_group(l_, [&] {
      for (int p = 0; p < R; ++p) {
        if (p == me) continue;
        const std::size_t q = std::size_t(p);
        const std::int64_t n_out = send_[q], n_in = recv_[q];
        if (packed(n_out)) comm_->send(l_, wire_out_->data() + wire_out_at_[q], wire_bytes(n_out), p);
        if (packed(n_in)) comm_->recv(l_, wire_in_->data() + wire_in_at_[q], wire_bytes(n_in), p);
        for (std::size_t c = 0; c < vec::leaves; ++c) {
          const std::size_t w = vec::layout_type::leaf_sizes[c];
          if (n_out > 0 && !packed(n_out)) comm_->send(l_, o.column_bytes(c) + std::size_t(send_at_[q]) * w, std::size_t(n_out) * w, p);
          if (n_in > 0 && !packed(n_in)) comm_->recv(l_, v.column_bytes(c) + std::size_t(recv_at_[q]) * w, std::size_t(n_in) * w, p);
        }
      }
    });
    for (std::size_t p = 0; p < recv_.size(); ++p) {
      if (!packed(recv_[p])) continue;
      auto w = wire_view(wire_in_->data() + wire_in_at_[p], recv_[p], v.location());
      strata::detail::run_each(unpack_run<decltype(w), decltype(v)>{{w, v, 0, index_t(recv_at_[p])}}, index_t(recv_[p]), st, "strata exchange (unpack)");
    }
    wire_in_.reset(), wire_out_.reset();  // freed on the rank's stream, behind the unpacking
    return moved_;
  }

  /// A message of m records, packed (packed_bytes): one NCCL send carries every column.
  static std::size_t wire_capacity(std::int64_t m) { return vec::layout_type::round_capacity(std::size_t(m)); }
  static std::size_t wire_bytes(std::int64_t m) { return packed_bytes<vec>(m); }

 private:
  static auto wire_view(std::byte* base, std::int64_t m, memory_location where) {
    using view = typename vec::view_type;
    cuda::std::array<std::byte*, vec::leaves> cols{};
    const std::size_t c = wire_capacity(m);
    for (std::size_t i = 0; i < vec::leaves; ++i) cols[i] = base + vec::layout_type::column_offset(c, i);
    return view(cols, index_t(m), index_t(c), where);
  }
  /// Whether a message of m records travels packed: at most pack_limit bytes as a wire block.
  bool packed(std::int64_t m) const { return travels_packed<vec>(m, pack_limit_); }

  communicator* comm_;
  int l_;
  vec *out_, *into_;
  std::size_t base_, pack_limit_, total_ = 0;
  std::vector<std::int64_t> send_, recv_, send_at_, recv_at_;
  std::vector<std::size_t> wire_out_at_, wire_in_at_;
  std::unique_ptr<strata::detail::scratch_block> wire_out_, wire_in_;
  bool prepacked_;
  migration_counts moved_;
};

}  // namespace detail
}  // namespace strata::distributed
