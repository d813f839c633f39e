// SPDX-License-Identifier: Apache-2.0
// The tiles of strata's stable compaction (compact.hpp): how many records a tile and a thread hold,
// how a tile's kept records are staged in shared memory, and a tile's steps as the host backend
// runs them. The GPU kernels over these tiles are in compact_kernels.hpp.
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/soa_mapping.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

namespace strata {
namespace detail {

/// Threads per tile. A tile's warps meet at a barrier once their loads return (the tile's count is
/// needed before any of it is written), so small tiles keep fewer warps waiting on the slowest one;
/// 4 warps a tile are faster than 8.
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
/// kernels of compact_kernels.hpp place kept records by ballot instead).
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

}  // namespace detail
}  // namespace strata
