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
template <class Pred>
struct unless {
  Pred pred;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    return !pred(r);
  }
};

/// Compacts the records of `in` kept by `keep` into `out` (in place when they are the same view)
/// through packets, and the others, in order, into `rest` unless it is discard (then out of place
/// only); returns how many it kept, or -1 where packets cannot run (not 16-byte aligned, or leaves
/// that no vector carries).
template <class InView, class OutView, class Keep, class Rest = discard>
std::int64_t compact_packets(const InView& in, const OutView& out, Keep keep, stream_t stream, const Rest& rest = {}) {
  using record = typename InView::value_type;
  if constexpr (!layout::record_descriptor<record>::all_leaves_vectorizable) {
    return -1;
  } else {
    if (!in.vector_ready()) return -1;
    const auto pin = packets(in);
    if (pin.size() == 0) return 0;
#if defined(STRATA_BACKEND_CUDA)
    constexpr index_t tile_records = index_t(compact_threads) * compact_records<record>;
    const index_t tiles = (in.size() + tile_records - 1) / tile_records;
    if (tiles > index_t(0x7fffffff)) return -1;
    const std::size_t tile_bytes = align_up(std::size_t(tiles) * 8, 256);
    scratch_block state(3 * tile_bytes + 256, stream);
    auto* counts = state.as<unsigned long long>();
    auto* ends = state.as<unsigned long long>(tile_bytes);
    auto* loaded = state.as<unsigned>(2 * tile_bytes);
    auto* ticket = state.as<unsigned long long>(3 * tile_bytes);
    auto* mismatch = state.as<unsigned>(3 * tile_bytes + 8);
    cuda_check(cudaMemsetAsync(state.data() + 2 * tile_bytes, 0, tile_bytes + 16, stream), "cudaMemsetAsync (compaction)");
    compact_count_kernel<<<unsigned(tiles), compact_threads, 0, stream>>>(in, keep, counts, in.vector_aligned());
    check_launch("strata compaction (counts)");
    std::size_t temp = 0;
    cuda_check(cub::DeviceScan::InclusiveSum(nullptr, temp, counts, ends, tiles, stream), "strata compaction (scan)");
    scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
    cuda_check(cub::DeviceScan::InclusiveSum(tmp.data(), temp, counts, ends, tiles, stream), "strata compaction (scan)");
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
    if (back.mismatch)
      throw std::logic_error("strata compaction: the predicate kept a different number of records when asked again (it must be a pure "
                             "function of the record); the output is not a compaction of the input");
    const unsigned long long kept = back.kept;
    return std::int64_t(kept);
#else
    // The same tiles in order on the host: flags, offsets within the tile, then the running prefix.
    (void)stream;
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
/// in); how many it kept goes to *kept (device memory: the caller reads it after the stream gets
/// there), so nothing waits.
template <class In, class Out, class Keep>
void select_async(In in, Out out, index_t n, Keep keep, std::int64_t* kept, stream_t stream, const char* what) {
#if defined(STRATA_BACKEND_CUDA)
  auto run = [&](void* tmp, std::size_t& temp) {
    if constexpr (std::is_same_v<In, Out>)
      if (in == out) return cub::DeviceSelect::If(tmp, temp, in, kept, n, keep, stream);
    return cub::DeviceSelect::If(tmp, temp, in, out, kept, n, keep, stream);
  };
  std::size_t temp = 0;
  cuda_check(run(nullptr, temp), what);
  scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
  cuda_check(run(tmp.data(), temp), what);
#else
  (void)stream, (void)what;
  if constexpr (std::is_same_v<In, Out>)
    if (in == out) {
      *kept = thrust::remove_if(thrust::device, in, in + n, unless<Keep>{keep}) - in;
      return;
    }
  *kept = thrust::copy_if(thrust::device, in, in + n, out, keep) - out;
#endif
}

/// Runs CUB's selection (in place when out is in) and returns how many records it kept.
template <class In, class Out, class Keep>
std::int64_t select(In in, Out out, index_t n, Keep keep, stream_t stream, const char* what) {
  scratch_block count(sizeof(std::int64_t), stream);
  select_async(in, out, n, keep, count.as<std::int64_t>(), stream, what);
  std::int64_t kept = 0;
  copy_bytes_async(&kept, count.data(), sizeof kept, stream);
  synchronize(stream);
  return kept;
}
}  // namespace detail

/// Removes every record of c for which pred(record) is true; the others keep their order. Returns
/// how many were removed (c.size() shrinks by that; capacity stays). pred is asked twice per record
/// and must be a pure function of it (std::logic_error otherwise). Waits for the count.
template <class T, class Pred>
std::size_t erase_if(soa_vector<T>& c, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(c.size());
  auto v = c.view();
  detail::launch_scope scope("strata::erase_if", stream, {detail::described(v, "container")});
  if (n == 0) return 0;
  std::int64_t kept = detail::compact_packets(v, v, detail::unless<Pred>{pred}, stream);
  if (kept < 0) {
    auto it = records_begin(v);
    kept = detail::select(it, it, n, detail::unless<Pred>{pred}, stream, "strata::erase_if (cub::DeviceSelect::If)");
  }
  c.resize(std::size_t(kept));
  return std::size_t(n - kept);
}

/// Copies the records of in for which pred(record) is true into out (replacing its contents), in
/// order; returns how many. pred must be a pure function of the record. Waits for the count.
template <class T, class Pred>
std::size_t copy_if(const soa_vector<T>& in, soa_vector<T>& out, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(in.size());
  if (&in == &out) throw std::invalid_argument("strata::copy_if: in and out are the same container (use erase_if)");
  // Checked before out changes: a refused call leaves out as it was. An out with no memory yet is
  // allocated on in's device (the scope makes it current).
  detail::launch_scope scope("strata::copy_if", stream, {detail::described(in.const_view(), "input"), detail::described(out.const_view(), "output")});
  out.clear();
  out.resize_for_overwrite(std::size_t(n));
  auto iv = in.const_view();
  auto ov = out.view();
  std::int64_t kept = n == 0 ? 0 : detail::compact_packets(iv, ov, pred, stream);
  if (kept < 0) kept = detail::select(records_begin(iv), records_begin(ov), n, pred, stream, "strata::copy_if (cub::DeviceSelect::If)");
  out.resize(std::size_t(kept));
  return std::size_t(kept);
}

/// Copies the records of in for which pred(record) is true into selected and the others into
/// rest, each in its original order (std::partition_copy; both are replaced and sized to what they
/// got); returns how many went to selected. One read of every column of in (and one of what pred
/// reads) and one write of every record through packets where the containers take them, two
/// selections otherwise; pred must be a pure function of the record. The three containers are
/// distinct; outputs with no memory yet are allocated on in's device. Waits for the count.
template <class T, class Pred>
std::size_t partition_copy(const soa_vector<T>& in, soa_vector<T>& selected, soa_vector<T>& rest, Pred pred, stream_t stream = {}) {
  if (&in == &selected || &in == &rest || &selected == &rest)
    throw std::invalid_argument("strata::partition_copy: in, selected and rest must be three distinct containers");
  const index_t n = index_t(in.size());
  detail::launch_scope scope("strata::partition_copy", stream,
                             {detail::described(in.const_view(), "input"), detail::described(selected.const_view(), "selected output"),
                              detail::described(rest.const_view(), "rest output")});
  selected.clear(), rest.clear();
  selected.resize_for_overwrite(std::size_t(n));
  rest.resize_for_overwrite(std::size_t(n));
  auto iv = in.const_view();
  auto sv = selected.view();
  auto rv = rest.view();
  std::int64_t kept = n == 0 ? 0 : detail::compact_packets(iv, sv, pred, stream, rv);
  if (kept < 0) {
    kept = detail::select(records_begin(iv), records_begin(sv), n, pred, stream, "strata::partition_copy (cub::DeviceSelect::If)");
    detail::select(records_begin(iv), records_begin(rv), n, detail::unless<Pred>{pred}, stream, "strata::partition_copy (cub::DeviceSelect::If)");
  }
  selected.resize(std::size_t(kept));
  rest.resize(std::size_t(n - kept));
  return std::size_t(kept);
}

}  // namespace strata
