// SPDX-License-Identifier: Apache-2.0
// Stable compaction of whole records: erase_if removes the records a predicate picks, in place, and
// copy_if copies the records it picks into another container. Through packets where the container
// takes them: a counting pass that reads only the leaves the predicate reads (plain loads: the
// others are never issued), a scan of the tile counts, then one pass that reads every column once
// (each warp's loads coalesced; byte and 2-byte columns in 16-byte vectors) and writes each kept record once, in order, at its tile's offset,
// in 16-byte vectors staged through shared memory. Through
// CUB's DeviceSelect over strata's record iterators otherwise. Scratch from strata::scratch(). The
// host backend runs the packet tiles in order. The tiles are in compact_tiles.hpp, the GPU kernels
// in compact_kernels.hpp.
#pragma once

#include <strata/algorithm/compact_kernels.hpp>
#include <strata/algorithm/compact_tiles.hpp>
#include <strata/algorithm/select_indices.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/config.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#else
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/remove.h>
#endif

namespace strata {

namespace detail {
[[noreturn]] inline void throw_impure_predicate() {
  throw std::logic_error("strata compaction: the predicate kept a different number of records when asked again (it must be a pure "
                         "function of the record); nothing was written outside the outputs, whose records are unspecified");
}

template <class Pred>
struct unless {
  Pred pred;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    return !pred(r);
  }
};

/// The scratch memory of one compaction through packets, taken before any operand changes: a
/// failed allocation then leaves every container as it was.
struct compact_scratch {
  index_t tiles = 0;
  std::size_t tile_bytes = 0, temp = 0;
  std::optional<scratch_block> state, tmp;
};

/// Whether compact_packets runs for this input, taking its scratch into ws if so; false where
/// packets cannot run (not 16-byte aligned, leaves that no vector carries, too many tiles).
template <class InView>
bool compact_prepare(const InView& in, stream_t stream, compact_scratch& ws) {
  using record = typename InView::value_type;
  if constexpr (!layout::record_descriptor<record>::all_leaves_vectorizable || !layout::packet_blocks_of<InView>()) {
    (void)in, (void)stream, (void)ws;
    return false;
  } else {
    if (!in.vector_ready()) return false;
#if defined(STRATA_BACKEND_CUDA)
    constexpr index_t tile_records = index_t(compact_threads) * compact_records<record>;
    ws.tiles = (in.size() + tile_records - 1) / tile_records;
    if (ws.tiles > index_t(0x7fffffff)) return false;
    if (ws.tiles == 0) return true;
    ws.tile_bytes = align_up(std::size_t(ws.tiles) * 8, 256);
    ws.state.emplace(3 * ws.tile_bytes + 256, stream);
    auto* counts = ws.state->as<unsigned long long>();
    cuda_check(cub::DeviceScan::InclusiveSum(nullptr, ws.temp, counts, counts, ws.tiles, stream), "strata compaction (scan)");
    ws.tmp.emplace(std::max<std::size_t>(ws.temp, 1), stream);
#else
    (void)stream, (void)ws;
#endif
    return true;
  }
}

/// Compacts the records of `in` kept by `keep` into `out` (in place when they are the same view)
/// through packets, with the scratch compact_prepare took, and the others, in order, into `rest`
/// unless it is discard (then out of place only); returns how many it kept. Allocates nothing.
template <class InView, class OutView, class Keep, class Rest = discard>
std::int64_t compact_packets(const InView& in, const OutView& out, Keep keep, stream_t stream, compact_scratch& ws, const Rest& rest = {}) {
  using record = typename InView::value_type;
  if constexpr (!layout::record_descriptor<record>::all_leaves_vectorizable || !layout::packet_blocks_of<InView>()) {
    (void)in, (void)out, (void)keep, (void)stream, (void)ws, (void)rest;
    return -1;
  } else {
    const auto pin = packets(in);
    if (pin.size() == 0) return 0;
#if defined(STRATA_BACKEND_CUDA)
    const index_t tiles = ws.tiles;
    const std::size_t tile_bytes = ws.tile_bytes;
    scratch_block& state = *ws.state;
    auto* counts = state.as<unsigned long long>();
    auto* ends = state.as<unsigned long long>(tile_bytes);
    auto* loaded = state.as<unsigned>(2 * tile_bytes);
    auto* ticket = state.as<unsigned long long>(3 * tile_bytes);
    auto* mismatch = state.as<unsigned>(3 * tile_bytes + 8);
    cuda_check(cudaMemsetAsync(state.data() + 2 * tile_bytes, 0, tile_bytes + 16, stream), "cudaMemsetAsync (compaction)");
    compact_count_kernel<<<unsigned(tiles), compact_threads, 0, stream>>>(in, keep, counts, in.vector_aligned());
    check_launch("strata compaction (counts)");
    std::size_t temp = ws.temp;
    cuda_check(cub::DeviceScan::InclusiveSum(ws.tmp->data(), temp, counts, ends, tiles, stream), "strata compaction (scan)");
    bool in_place = false;
    for (std::size_t L = 0; L < soa_layout<record>::leaves; ++L)
      in_place = in_place || static_cast<const void*>(in.column_bytes(L)) == static_cast<const void*>(out.column_bytes(L));
    const compact_state st{counts, ends, loaded, ticket, mismatch, in_place};
    const bool staged = compact_staged && out.vector_aligned();
    compact_kernel<<<unsigned(tiles), compact_threads, 0, stream>>>(in, out, rest, keep, tiles, st, staged);
    check_launch("strata compaction");
    struct {
      unsigned long long kept;
      unsigned mismatch;
    } back{};
    copy_bytes_async(&back.kept, ends + (tiles - 1), sizeof back.kept, stream);
    copy_bytes_async(&back.mismatch, mismatch, sizeof back.mismatch, stream);
    synchronize(stream);
    if (back.mismatch) throw_impure_predicate();
    const unsigned long long kept = back.kept;
    return std::int64_t(kept);
#else
    // The same tiles in order on the host: flags, offsets within the tile, then the running prefix.
    (void)stream, (void)ws;
    using tile_fn = compact_tile<typename decltype(pin)::reference, OutView, Keep>;
    const index_t tiles = (pin.size() + compact_threads - 1) / compact_threads;
    index_t prefix = 0;
    std::vector<packet<record>> pks(compact_threads);
    std::vector<unsigned> fs(compact_threads);
    for (index_t t = 0; t < tiles; ++t) {
      int n = 0;
      for (int i = 0; i < compact_threads; ++i) {
        const index_t p = t * compact_threads + i;
        fs[i] = 0;
        if (p < pin.size()) pks[i] = pin[p].get(), fs[i] = tile_fn::flags(pks[i], keep);
      }
      for (int i = 0; i < compact_threads; ++i) {
        const index_t p = t * compact_threads + i;
        if (fs[i]) tile_fn::write(out, pks[i], fs[i], prefix + n);
        if (p < pin.size()) tile_fn::write_rest(rest, pks[i], fs[i], p * tile_fn::W, prefix + n);
        n += std::popcount(fs[i]);
      }
      prefix += n;
    }
    return prefix;
#endif
  }
}

/// CUB's selection of the items of in that keep picks, in order, into out (in place when out is
/// in). Its scratch is taken at construction, before any operand changes; run() allocates nothing
/// and returns how many items it kept (the host waits for the count).
template <class In, class Out, class Keep>
class selection {
 public:
  selection(In in, Out out, index_t n, Keep keep, stream_t stream, const char* what) : n_(n), keep_(keep), stream_(stream), what_(what) {
#if defined(STRATA_BACKEND_CUDA)
    count_.emplace(sizeof(std::int64_t), stream);
    cuda_check(select(nullptr, temp_, in, out), what);
    tmp_.emplace(std::max<std::size_t>(temp_, 1), stream);
#else
    (void)in, (void)out;
#endif
  }
  std::int64_t run(In in, Out out) {
#if defined(STRATA_BACKEND_CUDA)
    cuda_check(select(tmp_->data(), temp_, in, out), what_);
    std::int64_t kept = 0;
    copy_bytes_async(&kept, count_->data(), sizeof kept, stream_);
    synchronize(stream_);
    return kept;
#else
    if constexpr (std::is_same_v<In, Out>)
      if (in == out) return thrust::remove_if(thrust::device, in, in + n_, unless<Keep>{keep_}) - in;
    return thrust::copy_if(thrust::device, in, in + n_, out, keep_) - out;
#endif
  }

 private:
#if defined(STRATA_BACKEND_CUDA)
  cudaError_t select(void* tmp, std::size_t& temp, In in, Out out) {
    auto* kept = count_->template as<std::int64_t>();
    if constexpr (std::is_same_v<In, Out>)
      if (in == out) return cub::DeviceSelect::If(tmp, temp, in, kept, n_, keep_, stream_);
    return cub::DeviceSelect::If(tmp, temp, in, out, kept, n_, keep_, stream_);
  }
  std::optional<scratch_block> count_, tmp_;
  std::size_t temp_ = 0;
#endif
  index_t n_;
  Keep keep_;
  stream_t stream_;
  const char* what_;
};

/// out (to be overwritten by up to n records of in's compaction) made ready without losing its
/// records on failure: where it must grow, the new storage is allocated aside (on the current
/// device) and swapped in by commit(); where it holds n already, commit() only resizes it.
template <class C>
class output_storage {
 public:
  output_storage(C& out, std::size_t n) : out_(out), n_(n) {
    if (n > out.capacity()) fresh_.resize_for_overwrite(n);
  }
  void commit() {
    if (n_ > out_.capacity()) {
      out_.swap(fresh_);
    } else {
      out_.clear();
      out_.resize_for_overwrite(n_);
    }
  }

 private:
  C& out_;
  std::size_t n_;
  C fresh_;
};
}  // namespace detail

/// Removes every record of c for which pred(record) is true; the others keep their order. Returns
/// how many were removed (c.size() shrinks by that; capacity stays). pred is asked twice per record
/// and must be a pure function of it: a predicate that answers differently the second time makes
/// the call throw std::logic_error, having written nothing outside c (c's records are then
/// unspecified: each is one of its records before the call). A failed allocation leaves c as it
/// was. Waits for the count.
template <class T, class Pred>
std::size_t erase_if(soa_vector<T>& c, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(c.size());
  auto v = c.view();
  detail::check_not_capturing(stream, "strata::erase_if", "waits for the number of records it kept");
  detail::launch_scope scope("strata::erase_if", stream, {detail::described(v, "container")});
  c.note_stream(stream);
  if (n == 0) return 0;
  std::int64_t kept = -1;
  if (detail::compact_scratch ws; detail::compact_prepare(v, stream, ws)) {
    kept = detail::compact_packets(v, v, detail::unless<Pred>{pred}, stream, ws);
  } else {
    auto it = records_begin(v);
    detail::selection<decltype(it), decltype(it), detail::unless<Pred>> sel(it, it, n, {pred}, stream,
                                                                             "strata::erase_if (cub::DeviceSelect::If)");
    kept = sel.run(it, it);
  }
  c.note_done(stream);  // the count's wait covered the work queued here
  c.resize(std::size_t(kept));
  return std::size_t(n - kept);
}

/// Copies the records of in for which pred(record) is true into out (replacing its contents), in
/// order; returns how many. A refused call or a failed allocation leaves out as it was; a predicate
/// that is not a pure function of the record (asked twice, answering differently) throws
/// std::logic_error and leaves out empty. Waits for the count.
template <class T, class Pred>
std::size_t copy_if(const soa_vector<T>& in, soa_vector<T>& out, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(in.size());
  if (&in == &out) throw std::invalid_argument("strata::copy_if: in and out are the same container (use erase_if)");
  // Checked before out changes. An out with no memory yet is allocated on in's device (the scope
  // makes it current).
  detail::check_not_capturing(stream, "strata::copy_if", "waits for the number of records it kept");
  detail::launch_scope scope("strata::copy_if", stream, {detail::described(in.const_view(), "input"), detail::described(out.const_view(), "output")});
  auto iv = in.const_view();
  in.note_stream(stream), out.note_stream(stream);
  detail::output_storage<soa_vector<T>> storage(out, std::size_t(n));
  detail::compact_scratch ws;
  const bool by_packets = n > 0 && detail::compact_prepare(iv, stream, ws);
  using in_it = decltype(records_begin(iv));
  using out_it = decltype(records_begin(out.view()));
  std::optional<detail::selection<in_it, out_it, Pred>> sel;
  if (n > 0 && !by_packets) sel.emplace(records_begin(iv), records_begin(out.view()), n, pred, stream, "strata::copy_if (cub::DeviceSelect::If)");
  storage.commit();  // nothing below allocates
  auto ov = out.view();
  std::int64_t kept = 0;
  try {
    if (by_packets) kept = detail::compact_packets(iv, ov, pred, stream, ws);
    else if (sel) kept = sel->run(records_begin(iv), records_begin(ov));
  } catch (...) {
    out.clear();
    throw;
  }
  in.note_done(stream), out.note_done(stream);  // the count's wait covered the work queued here
  out.resize(std::size_t(kept));
  return std::size_t(kept);
}

/// Copies the records of in for which pred(record) is true into selected and the others into
/// rest, each in its original order (std::partition_copy; both are replaced and sized to what they
/// got); returns how many went to selected. One read of every column of in (and one of what pred
/// reads) and one write of every record through packets where the containers take them, two
/// selections otherwise; pred must be a pure function of the record (std::logic_error otherwise,
/// both outputs left empty). The three containers are distinct; outputs with no memory yet are
/// allocated on in's device. A refused call or a failed allocation leaves both outputs as they
/// were. Waits for the count.
template <class T, class Pred>
std::size_t partition_copy(const soa_vector<T>& in, soa_vector<T>& selected, soa_vector<T>& rest, Pred pred, stream_t stream = {}) {
  if (&in == &selected || &in == &rest || &selected == &rest)
    throw std::invalid_argument("strata::partition_copy: in, selected and rest must be three distinct containers");
  const index_t n = index_t(in.size());
  detail::check_not_capturing(stream, "strata::partition_copy", "waits for the number of records it kept");
  detail::launch_scope scope("strata::partition_copy", stream,
                             {detail::described(in.const_view(), "input"), detail::described(selected.const_view(), "selected output"),
                              detail::described(rest.const_view(), "rest output")});
  auto iv = in.const_view();
  in.note_stream(stream), selected.note_stream(stream), rest.note_stream(stream);
  detail::output_storage<soa_vector<T>> sel_storage(selected, std::size_t(n)), rest_storage(rest, std::size_t(n));
  detail::compact_scratch ws;
  const bool by_packets = n > 0 && detail::compact_prepare(iv, stream, ws);
  using in_it = decltype(records_begin(iv));
  using out_it = decltype(records_begin(selected.view()));
  std::optional<detail::selection<in_it, out_it, Pred>> pick;
  std::optional<detail::selection<in_it, out_it, detail::unless<Pred>>> leave;
  if (n > 0 && !by_packets) {
    pick.emplace(records_begin(iv), records_begin(selected.view()), n, pred, stream, "strata::partition_copy (cub::DeviceSelect::If)");
    leave.emplace(records_begin(iv), records_begin(rest.view()), n, detail::unless<Pred>{pred}, stream,
                  "strata::partition_copy (cub::DeviceSelect::If)");
  }
  sel_storage.commit(), rest_storage.commit();  // nothing below allocates
  auto sv = selected.view();
  auto rv = rest.view();
  std::int64_t kept = 0;
  try {
    if (by_packets) {
      kept = detail::compact_packets(iv, sv, pred, stream, ws, rv);
    } else if (pick) {
      kept = pick->run(records_begin(iv), records_begin(sv));
      if (leave->run(records_begin(iv), records_begin(rv)) != n - kept) detail::throw_impure_predicate();
    }
  } catch (...) {
    selected.clear(), rest.clear();
    throw;
  }
  in.note_done(stream), selected.note_done(stream), rest.note_done(stream);  // the count's wait covered the work
  selected.resize(std::size_t(kept));
  rest.resize(std::size_t(n - kept));
  return std::size_t(kept);
}

}  // namespace strata
