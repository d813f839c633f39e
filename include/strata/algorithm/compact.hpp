// Stable compaction of whole records: erase_if removes the records a predicate picks, in place, and
// copy_if copies the records it picks into another container. Through packets where the container
// takes them: a counting pass that reads only the leaves the predicate reads (plain loads: the
// others are never issued), a scan of the tile counts, then one pass that reads every column once
// (each warp's loads coalesced; byte and 2-byte columns in 16-byte vectors) and writes each kept record once, in order, at its tile's offset,
// in 16-byte vectors staged through shared memory. Through
// CUB's DeviceSelect over strata's record iterators otherwise. Scratch from strata::scratch(). The
// host backend runs the packet tiles in order.
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/config.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <cstdint>
#include <vector>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda/atomic>
#include <cub/block/block_scan.cuh>
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

// Stable compaction of packets in two passes: compact_count_kernel counts each tile's kept records
// (compact_threads * compact_records records a tile), a scan turns the counts into each tile's first
// output index, and compact_kernel reads each tile's records once and writes its kept records from
// there. In place, a tile's output lies below the end of its own input, but it may cover the input
// of earlier tiles: tiles are taken in order from a ticket counter, each marks itself loaded once
// its records are read, and a tile writes only after the tiles under its output are marked (they
// hold earlier tickets, so they are running or done). The predicate runs twice per record and must
// give the same answer both times (a pure function of the record); a tile that counts differently
// is reported.

/// Threads per tile. A tile's warps meet at a barrier once their loads return (the tile's count is
/// needed before any of it is written), so small tiles keep fewer warps waiting on the slowest one;
/// 4 warps a tile are faster than 8 (bench/results/nvidia-h200-2026-11-24-erase_if-ballot.md).
inline constexpr int compact_threads = 128;
/// Whether the writing kernel reads a column of `size`-byte leaves in 16-byte vectors through
/// shared memory when a thread holds W records: a warp's per-record load of a leaf under 4 bytes
/// moves only 32 or 64 bytes, and when a thread holds 16 bytes or more of the column each lane's
/// share of the warp's span is whole vectors. With fewer records a thread, the extra
/// shared-memory round trip costs more than it saves.
constexpr bool compact_stages_column(std::size_t size, int W) { return size < 4 && std::size_t(W) * size >= 16; }

/// Records a thread of the GPU kernels holds: whole packets (so a tile covers whole packets), and
/// as many as keep a thread's loads at 112 bytes or more (a 28-byte record's packet) within 32
/// leaf registers, at most 32 (a thread's keep flags are one word). Records of few narrow columns
/// get several packets a thread: otherwise their tiles are a few KiB each and the per-tile
/// barriers, flags and ticket outweigh the bytes they move.
template <class Record>
inline constexpr int compact_records = [] {
  constexpr int W = packet<Record>::width;
  constexpr int bytes = int(layout::record_descriptor<Record>::packed_size) * W, regs = int(soa_layout<Record>::leaves) * W;
  int k = 1;
  while (bytes * k < 112 && regs * (k + 1) <= 32 && W * (k + 1) <= 32) ++k;
  return W * k;
}();
template <class Record, int W, std::size_t L>
inline constexpr bool compact_narrow_leaf = compact_stages_column(soa_layout<Record>::leaf_sizes[L], W);
template <class Record, int W>
inline constexpr bool compact_has_narrow_leaf = [] {
  bool any = false;
  for (std::size_t size : soa_layout<Record>::leaf_sizes) any = any || compact_stages_column(size, W);
  return any;
}();

/// The rest output of a compaction that drops the records it does not keep.
struct discard {};
struct compact_state {
  const unsigned long long* counts;  // per tile: records kept (counting pass)
  const unsigned long long* ends;    // per tile: inclusive scan of counts
  unsigned* loaded;                  // per tile: 1 once its packets are read
  unsigned long long* ticket;
  unsigned* mismatch;                // set when a tile keeps another number than it counted
  bool in_place;
};

/// A packet's steps of a tile as the host backend runs them, thread by thread in order (the GPU
/// kernels below place kept records by ballot instead).
template <class In, class Out, class Keep>
struct compact_tile {
  using record = typename In::record;
  static constexpr int W = packet<record>::width;
  /// Keep flags of the thread's packet p (lanes past the view's size are never kept).
  STRATA_HD static unsigned flags(const packet<record>& pk, const Keep& keep) {
    unsigned f = 0;
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (k < pk.valid && keep(pk.lane[k])) f |= 1u << k;
    return f;
  }
  /// Writes the kept lanes of a packet from output index `at` on.
  STRATA_HD static void write(const Out& out, const packet<record>& pk, unsigned f, index_t at) {
    STRATA_UNROLL
    for (int k = 0; k < W; ++k)
      if (f & (1u << k)) out.store(at++, pk.lane[k]);
  }
  /// Writes the valid lanes that are not kept into rest: the thread's first record is record
  /// `first` of the input and `kept_before` records before it were kept, so first - kept_before
  /// went to rest before it. Nothing for discard.
  template <class Rest>
  STRATA_HD static void write_rest(const Rest& rest, const packet<record>& pk, unsigned f, index_t first, index_t kept_before) {
    if constexpr (!std::is_same_v<Rest, discard>) {
      index_t at = first - kept_before;
      STRATA_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < pk.valid && !(f & (1u << k))) rest.store(at++, pk.lane[k]);
    } else {
      (void)rest, (void)pk, (void)f, (void)first, (void)kept_before;
    }
  }
};

/// Whether a tile gathers its kept records in shared memory and writes each column's run with
/// 16-byte stores (when the output is 16-byte aligned and the tile fits the budget below); false
/// writes every kept record with one store per leaf. Benchmarks set it to time both.
inline bool compact_staged = true;

/// A tile's kept records staged column by column in shared memory: column L holds up to
/// compact_threads * compact_records elements plus the room to start at the output's offset within a 16-byte
/// unit, so each 16-byte unit of the output is one aligned shared-memory vector.
template <class Record>
struct compact_staging {
  static constexpr index_t tile = index_t(compact_threads) * compact_records<Record>;
  static constexpr std::size_t leaves = soa_layout<Record>::leaves;
  static constexpr auto offsets = [] {
    std::array<std::size_t, leaves + 1> off{};
    for (std::size_t L = 0; L < leaves; ++L) {
      const std::size_t w = soa_layout<Record>::leaf_sizes[L];
      off[L + 1] = off[L] + align_up((std::size_t(tile) + 16 / w) * w, 16);
    }
    return off;
  }();
  static constexpr std::size_t bytes = offsets[leaves];
  /// At most 32 KiB a block: seven blocks still fit an SM's shared memory.
  static constexpr bool fits = bytes <= 32768;
  /// The input's narrow columns (compact_narrow_leaf), a tile of each, after the output's columns:
  /// the writing kernel keeps them there from its loads to its last use, so placing a kept record
  /// never overwrites a record another warp has yet to read.
  static constexpr auto in_offsets = [] {
    std::array<std::size_t, leaves + 1> off{};
    off[0] = bytes;
    for (std::size_t L = 0; L < leaves; ++L) {
      const std::size_t w = soa_layout<Record>::leaf_sizes[L];
      off[L + 1] = off[L] + (compact_stages_column(w, compact_records<Record>) ? std::size_t(tile) * w : 0);
    }
    return off;
  }();
  /// Whether the writing kernel reads the narrow columns through shared memory: a block's static
  /// shared memory is at most 48 KiB.
  static constexpr bool stage_in = fits && compact_has_narrow_leaf<Record, compact_records<Record>> && in_offsets[leaves] <= 49152;
  static constexpr std::size_t total = stage_in ? in_offsets[leaves] : bytes;
};

#if defined(STRATA_BACKEND_CUDA)
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
/// 32 or 64 bytes, and the pass ran at half of the memory bandwidth with them
/// (bench/results/raw-2026-11-25-count-probe/).
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
  if (threadIdx.x == 0) {
    if (total != counted) atomicOr(st.mismatch, 1u), under_loaded = false;
    if (st.in_place) {
      // Later tiles may overwrite this tile's input from now on.
      compact_flag(st.loaded + t).store(1u, cuda::memory_order_relaxed);
      if (total > 0 && !under_loaded) {
        const index_t end_tile = (prefix + total - 1) / tile_records, last = end_tile < t ? end_tile : t - 1;
        for (index_t q = prefix / tile_records; q <= last; ++q)
          while (compact_flag(st.loaded + q).load(cuda::memory_order_acquire) == 0u) __nanosleep(64);
      }
    }
  }
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
#endif

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

/// select_indices_async's shape: each block looks at pick_threads * pick_items records, item k of
/// thread t being record k * pick_threads + t of the block, so every load instruction of a warp is
/// coalesced and each thread has pick_items loads in flight.
inline constexpr int pick_threads = 256, pick_items = 8;
inline constexpr index_t pick_block_records = index_t(pick_threads) * pick_items;

#if defined(STRATA_BACKEND_CUDA)
template <class Pick>
__global__ void __launch_bounds__(pick_threads) count_picks_kernel(Pick pick, index_t n, std::int64_t* counts) {
  const index_t base = index_t(blockIdx.x) * pick_block_records + threadIdx.x;
  bool f[pick_items];
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) f[k] = base + k * pick_threads < n && pick(base + k * pick_threads);
  unsigned c = 0;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) c += f[k];
  c = __reduce_add_sync(0xffffffffu, c);
  __shared__ unsigned warp_sums[pick_threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::int64_t sum = 0;
    for (int w = 0; w < pick_threads / 32; ++w) sum += warp_sums[w];
    counts[blockIdx.x] = sum;
  }
}
/// Blocks that picked records redo the picks and write their indices in increasing order: record
/// order within a block is (item k, warp, lane), so per-(k, warp) ballot counts scanned in that
/// order place every index.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) write_picks_kernel(Pick pick, index_t n, std::int64_t first, const std::int64_t* counts,
                                                                   const std::int64_t* ends, std::int64_t* out) {
  const std::int64_t total = counts[blockIdx.x];
  if (total == 0) return;
  const index_t base = index_t(blockIdx.x) * pick_block_records + threadIdx.x;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __shared__ unsigned offsets[pick_items][pick_threads / 32];
  bool f[pick_items];
  unsigned ballots[pick_items];
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) f[k] = base + k * pick_threads < n && pick(base + k * pick_threads);
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) ballots[k] = __ballot_sync(0xffffffffu, f[k]);
  if (lane == 0)
    for (int k = 0; k < pick_items; ++k) offsets[k][warp] = unsigned(__popc(ballots[k]));
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned run = 0;
    for (int k = 0; k < pick_items; ++k)
      for (int w = 0; w < pick_threads / 32; ++w) {
        const unsigned c = offsets[k][w];
        offsets[k][w] = run, run += c;
      }
  }
  __syncthreads();
  const std::int64_t start = ends[blockIdx.x] - total;
  const unsigned below = (1u << lane) - 1u;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (f[k]) out[start + offsets[k][warp] + unsigned(__popc(ballots[k] & below))] = first + base + k * pick_threads;
}
#endif

/// The indices first + i, i in [0, n), for which pick(i) is true, in increasing order, into out;
/// how many into *count (device memory), stream ordered, nothing waits. For predicates that read a
/// column or two and pick a few records: a counting pass (several coalesced loads in flight per
/// thread, one count per block), a scan of the block counts, and a writing pass that only the
/// blocks with picked records redo, so a sparse pick costs about one read of what pick reads.
template <class Pick>
void select_indices_async(Pick pick, index_t n, std::int64_t first, std::int64_t* out, std::int64_t* count, stream_t stream, const char* what) {
#if defined(STRATA_BACKEND_CUDA)
  if (n <= 0) {
    cuda_check(cudaMemsetAsync(count, 0, sizeof(std::int64_t), stream), what);
    return;
  }
  const index_t blocks = (n + pick_block_records - 1) / pick_block_records;
  if (blocks > index_t(0x7fffffff)) throw size_error(std::string(what) + ": " + std::to_string(n) + " records are more than one launch covers");
  scratch_block sums(sizeof(std::int64_t) * 2 * std::size_t(blocks), stream);
  std::int64_t* counts = sums.as<std::int64_t>();
  std::int64_t* ends = counts + blocks;
  count_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, counts);
  check_launch(what);
  std::size_t temp = 0;
  cuda_check(cub::DeviceScan::InclusiveSum(nullptr, temp, counts, ends, blocks, stream), what);
  scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
  cuda_check(cub::DeviceScan::InclusiveSum(tmp.data(), temp, counts, ends, blocks, stream), what);
  write_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, first, counts, ends, out);
  check_launch(what);
  copy_bytes_async(count, ends + (blocks - 1), sizeof(std::int64_t), stream);
#else
  (void)stream, (void)what;
  std::int64_t k = 0;
  for (index_t i = 0; i < n; ++i)
    if (pick(i)) out[k++] = first + i;
  *count = k;
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
