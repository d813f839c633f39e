// SPDX-License-Identifier: Apache-2.0
// The GPU kernels of strata's stable compaction (compact.hpp): the counting pass over a tile's
// records and the writing pass that places its kept records, with the loads, the shared-memory
// staging and the flags between tiles they share. CUDA backend only: the host backend runs the
// tiles of compact_tiles.hpp in order.
#pragma once

#include <strata/algorithm/compact_tiles.hpp>
#include <strata/config.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/reflect/leaves.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda/atomic>

namespace strata {
namespace detail {

// Stable compaction of packets in two passes: compact_count_kernel counts each tile's kept records
// (compact_threads * compact_records records a tile), a scan turns the counts into each tile's first
// output index, and compact_kernel reads each tile's records once and writes its kept records from
// there. In place, a tile's output lies below the end of its own input, but it may cover the input
// of earlier tiles: tiles are taken in order from a ticket counter, each marks itself loaded once
// its records are read, and a tile writes only after the tiles under its output are marked (they
// hold earlier tickets, so they are running or done). The predicate runs twice per record and must
// give the same answer both times (a pure function of the record); a tile that counts differently
// is reported.

/// The OR of every word of a record's leaves, except those load_rounds<Staged> passes through
/// shared memory (Staged = 0: every leaf). An instruction that reads a loaded register waits for
/// its load to return, so storing this somewhere shows the record has arrived.
template <int Staged, class Record>
__device__ unsigned leaf_words_or(const Record& r) {
  unsigned acc = 0;
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    using E = reflect::leaf_type_t<Record, L>;
    if constexpr (compact_narrow_leaf<Record, Staged, L>) {
      // Stored to shared memory by load_rounds: arrived before that store.
    } else if constexpr (sizeof(E) % 4 == 0) {
      unsigned w[sizeof(E) / 4];
      memcpy(w, &reflect::leaf<L>(r), sizeof(E));
      for (unsigned x : w) acc |= x;
    } else {
      unsigned char b[sizeof(E)];
      memcpy(b, &reflect::leaf<L>(r), sizeof(E));
      for (unsigned char x : b) acc |= x;
    }
  });
  return acc;
}

/// Where load_rounds keeps the narrow columns' 16-byte vectors: a warp's span of W * 32 records of
/// an s-byte column is vectors = 2 W s of them, lane l loading vectors l, l + 32, ... (per_lane[L]
/// and slots[L] on in its register array), each holding `per` records, kept at column L's input
/// offset in compact_staging plus the warp's span.
template <class Record, int W>
struct narrow_columns {
  static constexpr std::size_t leaves = soa_layout<Record>::leaves;
  static constexpr auto slots = [] {
    std::array<int, leaves + 1> off{};
    for (std::size_t L = 0; L < leaves; ++L) {
      const std::size_t s = soa_layout<Record>::leaf_sizes[L];
      off[L + 1] = off[L] + (compact_stages_column(s, W) ? (2 * W * int(s) + 31) / 32 : 0);
    }
    return off;
  }();
  static constexpr int total = slots[leaves];
  template <std::size_t L>
  static constexpr int per_lane = slots[L + 1] - slots[L];
  template <std::size_t L>
  static constexpr int vectors = 2 * W * int(soa_layout<Record>::leaf_sizes[L]);
  template <std::size_t L>
  static constexpr int per = int(16 / soa_layout<Record>::leaf_sizes[L]);
  template <std::size_t L, class Byte>
  __device__ static Byte* span(Byte* stage, int warp) {
    return stage + compact_staging<Record>::in_offsets[L] + std::size_t(warp) * W * 32 * soa_layout<Record>::leaf_sizes[L];
  }
};

/// A warp's W rounds of records (round k: record warp_first + 32 k + lane). Most leaves: one load
/// per record and leaf into r (a warp's load covers 128 bytes or more for leaves of 4 bytes or
/// more). Narrow leaves (compact_narrow_leaf): the warp reads its span of the column in 16-byte
/// vectors (only vectors that start before the view's size: whole packets keep the rest of such a
/// vector inside the capacity) into its part of `stage`, where they stay (round_record reads them):
/// a byte held in a register takes a register of its own, so holding them there would cap how
/// many tiles fit an SM. Every global load is issued before the first shared-memory store, so all
/// are in flight together; once a narrow vector is stored it has arrived.
template <int W, class View, class Record>
__device__ void load_rounds(const View& in, index_t warp_first, int warp, int lane, Record (&r)[W], unsigned char* stage) {
  using nc = narrow_columns<Record, W>;
  const index_t n = in.size(), first = warp_first + lane;
  uint4 v[nc::total > 0 ? nc::total : 1];
  // Whether vector j of this lane's share of column L holds records of the view.
  auto held = [&](auto lf, int j) {
    constexpr std::size_t L = decltype(lf)::value;
    const int c = lane + 32 * j;
    return c < nc::template vectors<L> && warp_first + index_t(c) * nc::template per<L> < n;
  };
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    if constexpr (compact_narrow_leaf<Record, W, L>) {
      const uint4* src = reinterpret_cast<const uint4*>(in.template column_data<L>() + warp_first);
      STRATA_UNROLL
      for (int j = 0; j < nc::template per_lane<L>; ++j)
        if (held(lf, j)) v[nc::slots[L] + j] = src[lane + 32 * j];
    } else {
      STRATA_UNROLL
      for (int k = 0; k < W; ++k)
        if (first + index_t(k) * 32 < n) reflect::leaf<L>(r[k]) = in.template column_data<L>()[first + index_t(k) * 32];
    }
  });
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    if constexpr (compact_narrow_leaf<Record, W, L>) {
      STRATA_UNROLL
      for (int j = 0; j < nc::template per_lane<L>; ++j)
        if (held(lf, j)) vec::store_local(nc::template span<L>(stage, warp) + 16 * (lane + 32 * j), v[nc::slots[L] + j]);
    }
  });
  __syncwarp();
}

/// Record k of a thread's rounds after load_rounds: its narrow leaves from the warp's span in
/// `stage`, the others from r. Only for records of the view (the span past its end is not loaded).
template <int W, class Record>
__device__ Record round_record(const Record (&r)[W], int k, int warp, int lane, const unsigned char* stage) {
  using nc = narrow_columns<Record, W>;
  Record x;
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    using E = reflect::leaf_type_t<Record, L>;
    if constexpr (compact_narrow_leaf<Record, W, L>)
      reflect::leaf<L>(x) = reinterpret_cast<const E*>(nc::template span<L>(stage, warp))[k * 32 + lane];
    else
      reflect::leaf<L>(x) = reflect::leaf<L>(r[k]);
  });
  return x;
}

/// A tile's "loaded" flag, shared by the tiles of one compaction on one device.
__device__ inline cuda::atomic_ref<unsigned, cuda::thread_scope_device> compact_flag(unsigned* p) {
  return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*p);
}

/// Writes a tile's kept records [prefix, prefix + total) of out from shared memory: each thread
/// puts its kept leaves at their place (pos[k], counted from the tile's start, shifted by the
/// output's offset within a 16-byte unit), then whole 16-byte units go out as one store each and the
/// partial units at both ends element by element. The kept records of one warp's round land on
/// consecutive elements, so the placing stores meet no bank conflicts. rec(k) gives the thread's
/// record of round k.
template <class Out, class Rec, int W>
__device__ void write_staged(const Out& out, const Rec& rec, unsigned f, const int (&pos)[W], int total, index_t prefix,
                             unsigned char* stage) {
  using Record = std::remove_cvref_t<decltype(rec(0))>;
  using staging = compact_staging<Record>;
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    using E = reflect::leaf_type_t<Record, L>;
    constexpr int per = int(16 / sizeof(E));
    E* buf = reinterpret_cast<E*>(stage + staging::offsets[L]);
    const int shift = int(prefix % per);
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (f & (1u << k)) {
        const auto x = rec(k);
        buf[shift + pos[k]] = reflect::leaf<L>(x);
      }
  });
  __syncthreads();
  reflect::for_each_leaf<Record>([&](auto lf) {
    constexpr std::size_t L = decltype(lf)::value;
    using E = reflect::leaf_type_t<Record, L>;
    constexpr int per = int(16 / sizeof(E));
    const E* buf = reinterpret_cast<const E*>(stage + staging::offsets[L]);
    const int shift = int(prefix % per), end = shift + total;
    E* col = out.template column_data<L>() + (prefix - shift);
    for (int c = int(threadIdx.x); c * per < end; c += compact_threads) {
      const int lo = c * per, hi = lo + per;
      if (lo >= shift && hi <= end) {
        *reinterpret_cast<uint4*>(col + lo) = *reinterpret_cast<const uint4*>(buf + lo);
      } else {
        for (int e = lo < shift ? shift : lo; e < (hi < end ? hi : end); ++e) col[e] = buf[e];
      }
    }
  });
}

/// Whether the counting pass reads a tile's records as 16-byte vectors of each column, thread t
/// holding records t * W .. t * W + W - 1 of the tile: records whose leaves are all under 4 bytes
/// and fill whole vectors at W records a thread. A warp's load of one such leaf per record moves only
/// 32 or 64 bytes, and the pass runs at half of the memory bandwidth with them.
template <class Record, int W>
inline constexpr bool compact_counts_in_vectors = [] {
  bool ok = soa_layout<Record>::leaves > 0;
  for (std::size_t size : soa_layout<Record>::leaf_sizes) ok = ok && size < 4 && (std::size_t(W) * size) % 16 == 0;
  return ok;
}();

/// Kept records of each tile of compact_kernel: plain loads of the records (only what keep reads is
/// loaded), compact_threads * W records a tile (W = compact_records), record k * compact_threads + t of the tile to thread t
/// so every load of a warp is coalesced. Records of narrow leaves only (compact_counts_in_vectors)
/// in a whole tile of 16-byte aligned columns (`vectors`) are read in 16-byte vectors instead.
template <class InView, class Keep>
__global__ void __launch_bounds__(compact_threads) compact_count_kernel(InView in, Keep keep, unsigned long long* counts, bool vectors) {
  using record = typename InView::value_type;
  constexpr int W = compact_records<record>;
  constexpr index_t tile_records = index_t(compact_threads) * W;
  unsigned c = 0;
  bool counted = false;
  if constexpr (compact_counts_in_vectors<record, W>) {
    const index_t first = index_t(blockIdx.x) * tile_records;
    if (vectors && first + tile_records <= in.size()) {
      record r[W];
      reflect::for_each_leaf<record>([&](auto lf) {
        constexpr std::size_t L = decltype(lf)::value;
        using E = reflect::leaf_type_t<record, L>;
        constexpr int words = int(W * sizeof(E) / 16);
        const uint4* src = reinterpret_cast<const uint4*>(in.template column_data<L>() + first + index_t(threadIdx.x) * W);
        uint4 v[words];
        STRATA_UNROLL
        for (int j = 0; j < words; ++j) v[j] = src[j];
        STRATA_UNROLL
        for (int k = 0; k < W; ++k) memcpy(&reflect::leaf<L>(r[k]), reinterpret_cast<const unsigned char*>(v) + k * sizeof(E), sizeof(E));
      });
      STRATA_UNROLL
      for (int k = 0; k < W; ++k) c += keep(r[k]) ? 1u : 0u;
      counted = true;
    }
  }
  if (!counted) {
    const index_t base = index_t(blockIdx.x) * tile_records + threadIdx.x;
    STRATA_UNROLL
    for (int k = 0; k < W; ++k) {
      const index_t i = base + index_t(k) * compact_threads;
      if (i < in.size() && keep(in.load(i))) ++c;
    }
  }
  c = __reduce_add_sync(0xffffffffu, c);
  __shared__ unsigned warp_sums[compact_threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long sum = 0;
    for (int w = 0; w < compact_threads / 32; ++w) sum += warp_sums[w];
    counts[blockIdx.x] = sum;
  }
}

/// Writes each tile's kept records at its offset. Warp w of a tile reads, in round k, the 32
/// records from (w * W + k) * 32 on (one coalesced load per leaf, or the warp's span of a narrow
/// column in 16-byte vectors through shared memory: load_rounds); a record's place among the tile's
/// kept records is the kept count of the earlier warps, of the warp's earlier rounds and of the
/// lower lanes of its round (ballots), so kept records of one round are adjacent.
///
/// In place, the waits stay off the tile's critical path: the tile's offset (from the counting
/// pass) and the flags of the tiles under its output are read while its records are in flight.
/// Its own flag is a relaxed store after a block barrier that every thread reaches only once an
/// instruction has read every word it loaded (leaf_words_or into shared memory): the loads have
/// returned their values before any other tile can see the flag, so no fence (a round trip that
/// every tile would wait for) precedes it. Flags are read with acquire loads, so this tile's stores
/// come after what it saw; only a tile that saw an unread tile under its output waits, after
/// publishing its own flag.
template <class InView, class Out, class Rest, class Keep>
__global__ void __launch_bounds__(compact_threads) compact_kernel(InView in, Out out, Rest rest, Keep keep, index_t tiles, compact_state st,
                                                                   bool staged) {
  using record = typename InView::value_type;
  constexpr int W = compact_records<record>;  // records a thread holds
  constexpr int warps = compact_threads / 32;
  constexpr index_t tile_records = index_t(compact_threads) * W;
  __shared__ index_t tile_shared;
  __shared__ int warp_kept[warps];
  __shared__ unsigned arrived[compact_threads];
  if (threadIdx.x == 0) tile_shared = index_t(atomicAdd(st.ticket, 1ull));
  __syncthreads();
  const index_t t = tile_shared;
  if (t >= tiles) return;
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  const index_t first = t * tile_records + index_t(warp * W) * 32 + lane;  // this thread's record of round 0
  const index_t n = in.size();
  const index_t end_t = index_t(st.ends[t]);  // issued before the records: it arrives with them
  const index_t counted = index_t(st.counts[t]);
  // The input's narrow columns stay in `stage` after the output's columns (write_staged's part).
  constexpr bool stage_in = compact_staging<record>::stage_in;
  __shared__ __align__(16) unsigned char stage[compact_staging<record>::fits ? compact_staging<record>::total : 16];
  record r[W];
  if constexpr (stage_in) {
    load_rounds<W>(in, first - lane, warp, lane, r, stage);
  } else {
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (first + index_t(k) * 32 < n) r[k] = in.load(first + index_t(k) * 32);
  }
  // The thread's record of round k.
  const auto rec = [&](int k) -> record {
    if constexpr (stage_in)
      return round_record<W>(r, k, warp, lane, stage);
    else
      return r[k];
  };
  // Thread 0: whether every tile under the output the counting pass gave this tile is loaded
  // already (the usual case: a compaction's output runs behind its input).
  bool under_loaded = true;
  if (st.in_place && threadIdx.x == 0 && counted > 0) {
    const index_t lo = end_t - counted, hi = (end_t - 1) / tile_records;
    for (index_t q = lo / tile_records; q <= (hi < t ? hi : t - 1); ++q)
      under_loaded = under_loaded && compact_flag(st.loaded + q).load(cuda::memory_order_acquire) != 0u;
  }
  unsigned f = 0;
  int pos[W];
  int kept = 0;
  const unsigned below = (1u << lane) - 1u;
  STRATA_UNROLL
  for (int k = 0; k < W; ++k) {
    const bool keep_k = first + index_t(k) * 32 < n && keep(rec(k));
    const unsigned b = __ballot_sync(0xffffffffu, keep_k);
    pos[k] = kept + __popc(b & below);
    kept += __popc(b);
    f |= unsigned(keep_k) << k;
  }
  if (lane == 0) warp_kept[warp] = kept;
  if (st.in_place) {
    unsigned words = 0;
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (first + index_t(k) * 32 < n) words |= leaf_words_or<stage_in ? W : 0>(r[k]);
    arrived[threadIdx.x] = words;
  }
  __syncthreads();  // every record of the tile has arrived (in place) and been asked about
  int before = 0, total = 0;
  STRATA_UNROLL
  for (int w = 0; w < warps; ++w) {
    before += w < warp ? warp_kept[w] : 0;
    total += warp_kept[w];
  }
  STRATA_UNROLL
  for (int k = 0; k < W; ++k) pos[k] += before;
  const index_t prefix = end_t - total;
  // A tile whose predicate answered differently than in the counting pass writes nothing: its
  // place in the output was sized by the first answers, so writing the second ones could land
  // outside it (before the output, or over later tiles). Every thread of the block sees the same
  // total and count, so the whole block takes the same branch.
  const bool consistent = total == counted;
  if (threadIdx.x == 0) {
    if (!consistent) atomicOr(st.mismatch, 1u);
    if (st.in_place) {
      // Later tiles may overwrite this tile's input from now on.
      compact_flag(st.loaded + t).store(1u, cuda::memory_order_relaxed);
      if (consistent && total > 0 && !under_loaded) {
        const index_t end_tile = (prefix + total - 1) / tile_records, last = end_tile < t ? end_tile : t - 1;
        for (index_t q = prefix / tile_records; q <= last; ++q)
          while (compact_flag(st.loaded + q).load(cuda::memory_order_acquire) == 0u) __nanosleep(64);
      }
    }
  }
  if (!consistent) return;
  // Every global store below follows a block barrier after thread 0's wait (write_staged's, or this).
  if constexpr (compact_staging<record>::fits) {
    if (staged) write_staged(out, rec, f, pos, total, prefix, stage);
  }
  if (!compact_staging<record>::fits || !staged) {
    if (st.in_place) __syncthreads();
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (f & (1u << k)) out.store(prefix + pos[k], rec(k));
  }
  if constexpr (!std::is_same_v<Rest, discard>) {
    // Record i goes to rest at i minus the records kept before it.
    STRATA_UNROLL
    for (int k = 0; k < W; ++k) {
      const index_t i = first + index_t(k) * 32;
      if (i < n && !(f & (1u << k))) rest.store(i - (prefix + pos[k]), rec(k));
    }
  }
}

}  // namespace detail
}  // namespace strata
#endif
