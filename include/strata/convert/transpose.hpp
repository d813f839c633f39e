// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA transposition of one run of records, and the argument checks its callers share.
// Each warp moves one tile of records between the AoS bytes and its own slice of shared memory with
// coalesced 16-byte accesses, and between shared memory and each leaf's column with 16-byte stores
// or loads. AoS pointers need only the record's natural alignment: 16-byte chunks that reach past
// the array's ends move byte by byte, as do chunks a tile shares with its neighbour on the output
// side (so no warp writes another warp's bytes). The tile logic is written once, as the two phases
// a lane runs on either side of __syncwarp(); the host backend runs the same phases lane by lane.
#pragma once

#include <strata/config.hpp>

#include <strata/container/soa_view.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace strata::detail {

/// Chooses between two ways of doing one job without the host waiting: a counting kernel leaves
/// a number in device memory, and the kernels of both ways are queued, each returning at once
/// unless the number selects it (`*far <= limit` selects the direct way). No count (far null):
/// the kernel always runs.
struct path_gate {
  const unsigned long long* far = nullptr;
  unsigned long long limit = 0;
  bool direct = false;
  STRATA_HD bool open() const { return far == nullptr || ((*far <= limit) == direct); }
};

/// Bytes of shared memory a tile of `records` records of `stride` bytes takes: its 16-byte chunks,
/// one more than its bytes need when the AoS side is not 16-byte aligned; a swizzled tile's are
/// whole 128-byte rows, so a swizzled unit stays in it.
constexpr std::size_t slice_bytes_for(std::size_t stride, index_t records, bool swizzle) {
  const std::size_t chunks = (std::size_t(records) * stride + 15) / 16 + 1;
  return swizzle ? (chunks + 7) / 8 * 128 : chunks * 16;
}

/// A tile: `records` records that `lanes` threads (a warp, or a whole block) move between the AoS
/// bytes and a slice of shared memory only they touch, with coalesced 16-byte accesses; `warps`
/// warps per block, so a block holds warps * 32 / lanes tiles. SwizzleUnit (4, 8 or 16; 0: none)
/// and SwizzleShift name the slice's swizzle (see swizzled).
template <std::size_t Stride, index_t Records, int Lanes, int Warps, int MinBlocks, int SwizzleUnit = 0, int SwizzleShift = 0>
struct tile_shape {
  static constexpr std::size_t stride = Stride;
  static constexpr index_t records = Records;
  static constexpr int lanes = Lanes;
  static constexpr int warps = Warps;
  static constexpr int threads = 32 * warps;
  static constexpr int slices = threads / lanes;  // tiles a block holds at once
  static constexpr int min_blocks = MinBlocks;
  /// 16-byte chunks a tile can touch (see slice_bytes_for).
  static constexpr std::size_t chunks = (std::size_t(records) * Stride + 15) / 16 + 1;
  static constexpr int chunks_per_lane = int((chunks + lanes - 1) / lanes);
  static constexpr int swizzle_unit = SwizzleUnit;
  static constexpr int swizzle_shift = SwizzleShift;
  /// Whether the tile's slice of shared memory is swizzled, where the records and the AoS pointer allow.
  static constexpr bool swizzle = SwizzleUnit != 0;
  static constexpr std::size_t slice_bytes = slice_bytes_for(Stride, Records, swizzle);
  static_assert(Lanes == 32 || Lanes == 32 * Warps, "a tile belongs to one warp or to the whole block");
  static_assert(Records % 16 == 0, "every column's part of a tile starts on a 16-byte boundary");
  static_assert(SwizzleUnit == 0 || SwizzleUnit == 4 || SwizzleUnit == 8 || SwizzleUnit == 16, "a swizzle moves 4-, 8- or 16-byte units");
};

/// Column L of a tile of R records moves in units of whole 16-byte vectors: u records, v vectors.
template <class T, std::size_t L, index_t R, int Lanes = 32>
struct column_unit {
  using leaf = reflect::leaf_type_t<T, L>;
  static constexpr std::size_t u = 16 / std::gcd(sizeof(leaf), std::size_t(16));
  static constexpr std::size_t v = u * sizeof(leaf) / 16;
  static constexpr int per_lane = int((std::size_t(R) / u + Lanes - 1) / Lanes);
  static constexpr std::size_t words = std::size_t(per_lane) * v;  // registers (x4) per lane
};
/// Lane k handles records k*u .. k*u+u-1 of a column, so at a given step the lanes of a warp touch
/// shared memory u*Stride bytes apart and lanes `period` apart hit the same bank. Where that
/// repeats within a warp (period < 32), each group of `period` lanes starts at a different record
/// of its unit, which spreads the accesses over more banks. 32: no rotation.
constexpr int rotation_period(std::size_t u, std::size_t stride) {
  if (u > 4 || (u * stride) % 4 != 0) return 32;
  return 32 / int(std::gcd(u * stride / 4, std::size_t(32)));
}
/// Which record of its unit lane `lane` handles at step j.
STRATA_HD inline int rotated(int j, int lane, int period, int u) { return period >= 32 ? j : (j + lane / period) & (u - 1); }

/// The leaves of T in the groups a tile's lanes take at once in its column phase: a column of R
/// records has R / u units, fewer than a warp has lanes once records pass 64 bytes (a 128-byte
/// record's tile of 64 records: 16 units of a 4-byte column), so consecutive leaves of one type
/// share the lanes, lane l taking unit l % units of leaf l / units of its group. Every lane then
/// loads and stores, where one leaf at a time would leave half a warp or more idle.
template <class T, index_t R, int Lanes = 32>
struct leaf_groups {
  template <std::size_t L>
  static constexpr std::size_t units = std::size_t(R) / column_unit<T, L, R, Lanes>::u;
  static constexpr auto bounds = [] {
    std::array<std::size_t, reflect::leaf_count<T> + 1> b{};
    std::size_t count = 0;
    [&]<std::size_t... L>(std::index_sequence<L...>) {
      constexpr std::array<std::size_t, sizeof...(L)> unit_count{units<L>...};
      constexpr std::array<bool, sizeof...(L)> same_as_previous{(L > 0 && std::is_same_v<reflect::leaf_type_t<T, L>, reflect::leaf_type_t<T, (L > 0 ? L - 1 : 0)>>)...};
      for (std::size_t l = 0; l < sizeof...(L); ++l) {
        const std::size_t fit = unit_count[l] < std::size_t(Lanes) ? std::size_t(Lanes) / unit_count[l] : 1;
        if (l == 0 || !same_as_previous[l] || l - b[count - 1] >= fit) b[count++] = l;
      }
    }(std::make_index_sequence<reflect::leaf_count<T>>{});
    b[count] = reflect::leaf_count<T>;
    return std::pair{b, count};
  }();
  static constexpr std::size_t count = bounds.second;
  static constexpr std::size_t begin(std::size_t k) { return bounds.first[k]; }
  static constexpr std::size_t size(std::size_t k) { return bounds.first[k + 1] - bounds.first[k]; }
  /// Lane steps a group takes (slots lane, lane + Lanes, ...) and the registers (x4) a lane holds.
  template <std::size_t K>
  static constexpr int per_lane = int((size(K) * units<begin(K)> + Lanes - 1) / Lanes);
  template <std::size_t K>
  static constexpr std::size_t words = std::size_t(per_lane<K>) * column_unit<T, begin(K), R, Lanes>::v;
};

/// Group member m's column pointer at `row` in a view, and its byte offset in the record: the
/// group's leaves have one type, so a select picks among them.
template <std::size_t L0, std::size_t N, class V>
STRATA_HD auto member_ptr(const V& view, unsigned m, index_t row) {
  auto p = view.template leaf_ptr<L0>(row);
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    ((p = m == unsigned(J) ? view.template leaf_ptr<L0 + J>(row) : p), ...);
  }(std::make_index_sequence<N>{});
  return p;
}
template <class T, std::size_t L0, std::size_t N>
STRATA_HD constexpr std::size_t member_offset(unsigned m) {
  constexpr std::size_t o0 = reflect::leaf_offset<T, L0>();
  constexpr std::size_t step = N > 1 ? reflect::leaf_offset<T, L0 + (N > 1 ? 1 : 0)>() - o0 : 0;
  constexpr bool even = [] {
    bool e = true;
    [&]<std::size_t... J>(std::index_sequence<J...>) { ((e = e && reflect::leaf_offset<T, L0 + J>() == o0 + J * step), ...); }(std::make_index_sequence<N>{});
    return e;
  }();
  if constexpr (even) {
    return o0 + std::size_t(m) * step;  // an array's elements
  } else {
    std::size_t off = o0;
    [&]<std::size_t... J>(std::index_sequence<J...>) { ((off = m == unsigned(J) ? reflect::leaf_offset<T, L0 + J>() : off), ...); }(std::make_index_sequence<N>{});
    return off;
  }
}

/// Records up to 32 bytes: every warp transposes its own tile of a multiple of 128 records (one
/// 16-byte vector of a 4-byte column per lane) near 4 KiB through a slice of shared memory only it
/// touches, so warps never wait for each other (__syncwarp, no __syncthreads); one tile per warp,
/// a grid of all tiles, and a register bound that keeps six 128-thread blocks per SM let the GPU
/// hold many tiles' loads in flight. Larger records: about 8 KiB of records per warp (at least 16);
/// warp_tile (below) takes the count that keeps the most lanes busy for a given record type.
template <std::size_t Stride>
constexpr index_t warp_tile_records = Stride <= 32 ? index_t(4096 / Stride) / 128 * 128 : std::clamp<index_t>(index_t(8192 / Stride) / 16 * 16, 16, 128);
/// Warps per block: four, fewer where a tile is so large that four would not fit the 48 KiB of
/// static shared memory a block may have (44 KiB of tiles).
template <std::size_t SliceBytes>
constexpr int warp_tile_warps = int(std::clamp<std::size_t>(45056 / SliceBytes, 1, 4));

/// Where byte x of a tile's slice of shared memory lies once swizzled: within each 128-byte row y
/// of the slice, the Unit-byte units trade places, unit i going to i ^ ((y >> Shift) & mask)
/// (mask below 128 / Unit; 0: no swizzle). A column's accesses, records a power of two or an odd
/// multiple of 16 bytes apart, then spread over the banks. The units of a 16-byte chunk stay
/// together in one chunk (their order within it permuted, see tile_slice), so the AoS side still
/// moves whole 16-byte vectors, and a quarter-warp's chunks stay in distinct banks.
template <int Unit, int Shift>
STRATA_HD constexpr unsigned swizzled(unsigned x, unsigned mask) {
  constexpr unsigned lg = Unit == 4 ? 2 : Unit == 8 ? 3 : 4;
  return x ^ ((((x >> 7) >> Shift) & mask) << lg);
}

/// The unit a swizzle of T's records of Stride bytes may move: the smallest of 4, 8 and 16 bytes
/// that divides Stride and holds each leaf within one unit; 0 where none does (a leaf that
/// crosses a 16-byte boundary, or a stride that is not a multiple of 4).
template <class T, std::size_t Stride>
inline constexpr int swizzle_unit_for = [] {
  for (int unit : {4, 8, 16}) {
    if (Stride % std::size_t(unit) != 0) continue;
    bool ok = true;
    [&]<std::size_t... L>(std::index_sequence<L...>) {
      ((ok = ok && reflect::leaf_offset<T, L>() / unit == (reflect::leaf_offset<T, L>() + sizeof(reflect::leaf_type_t<T, L>) - 1) / unit), ...);
    }(std::make_index_sequence<reflect::leaf_count<T>>{});
    if (ok) return unit;
  }
  return 0;
}();

/// Shared-memory wavefronts of a tile's column phase: every leaf group's accesses as the kernels
/// make them (slot s of a group: unit s % units of its leaf s / units, records rotated as
/// rotation_period says), each access counted as the most words any one bank serves, with the
/// swizzle (Unit, Shift) or none (Unit 0). Bound: the count no swizzle can beat, each access's words
/// spread evenly over the 32 banks.
template <class T, std::size_t Stride, index_t R>
constexpr long column_wavefronts(int unit, int shift, bool bound = false) {
  using groups = leaf_groups<T, R, 32>;
  long total = 0;
  const unsigned lg = unit == 4 ? 2 : unit == 8 ? 3 : 4, mask = unit == 0 ? 0u : 128u / unsigned(unit) - 1;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    auto group = [&]<std::size_t G>(std::integral_constant<std::size_t, G>) {
      constexpr std::size_t L0 = groups::begin(G), N = groups::size(G), size = sizeof(reflect::leaf_type_t<T, L0>);
      constexpr std::size_t u = column_unit<T, L0, R, 32>::u, units = groups::template units<L0>;
      const int period = rotation_period(u, Stride);
      for (int q = 0; q < groups::template per_lane<G>; ++q)
        for (int j = 0; j < int(u); ++j) {
          int per_bank[32] = {}, worst = 0;
          if (bound) {
            const std::size_t lanes = std::min<std::size_t>(32, N * units - std::min(N * units, 32 * std::size_t(q)));
            total += long((lanes * ((size + 3) / 4) + 31) / 32);
            continue;
          }
          for (std::size_t lane = 0; lane < 32; ++lane) {
            const std::size_t slot = lane + 32 * std::size_t(q), m = slot / units, k = slot % units;
            if (m >= N) break;
            const int jj = period >= 32 ? j : (j + int(k % 32) / period) & (int(u) - 1);
            const unsigned x0 = unsigned((k * u + std::size_t(jj)) * Stride + member_offset<T, L0, N>(unsigned(m)));
            const unsigned x = x0 ^ ((((x0 >> 7) >> shift) & mask) << lg);
            for (unsigned w = x / 4; w <= (x + unsigned(size) - 1) / 4; ++w) worst = std::max(worst, ++per_bank[w % 32]);
          }
          total += worst;
        }
    };
    (group(std::integral_constant<std::size_t, K>{}), ...);
  }(std::make_index_sequence<groups::count>{});
  return total;
}

/// The swizzle a tile of R records of T takes: {unit, shift}, the one with the fewest column
/// wavefronts among the units T allows and shifts 0-3, where it cuts the unswizzled count at
/// least fourfold; otherwise, and for records up to 32 bytes (their tiles take no swizzle math),
/// {0, 0}. 4-byte units (a word permutation of every 16-byte chunk on the AoS side, in registers)
/// are taken only where they halve what 8- or 16-byte units give. Measured on the H200 (records
/// of 36-256 bytes, both directions): smaller cuts did not pay for the swizzle's work.
template <class T, std::size_t Stride, index_t R>
inline constexpr std::pair<int, int> tile_swizzle_choice = [] {
  std::pair<int, int> none_taken{0, 0};
  if (Stride <= 32 || swizzle_unit_for<T, Stride> == 0) return none_taken;
  const long none = column_wavefronts<T, Stride, R>(0, 0);
  if (4 * column_wavefronts<T, Stride, R>(0, 0, true) > none) return none_taken;  // no swizzle could cut fourfold
  auto best_of = [](int unit) {
    std::pair<long, int> b{-1, 0};
    if (unit < swizzle_unit_for<T, Stride> || Stride % std::size_t(unit) != 0) return b;
    for (int shift = 0; shift < 4; ++shift) {
      const long w = column_wavefronts<T, Stride, R>(unit, shift);
      if (b.first < 0 || w < b.first) b = {w, shift};
    }
    return b;
  };
  const auto b16 = best_of(16), b8 = best_of(8), b4 = best_of(4);
  std::pair<long, int> best = b16;
  int unit = 16;
  if (b8.first >= 0 && (best.first < 0 || b8.first < best.first)) best = b8, unit = 8;
  if (b4.first >= 0 && (best.first < 0 || 2 * b4.first <= best.first)) best = b4, unit = 4;
  if (best.first < 0 || 4 * best.first > none) return none_taken;
  return std::pair<int, int>{unit, best.second};
}();

/// Records per tile for T's records of Stride bytes: up to 32 bytes, warp_tile_records; above, the
/// multiple of 16 up to 128 records and 8 KiB whose column phase keeps the largest share of the
/// warp's lanes busy (leaf_groups; ties: the larger tile). A 96-byte record's 80-record tile would
/// leave 12 of 32 lanes idle at each 4-byte column, its 64-record tile leaves none (on the H200:
/// 0.73 against 0.96 of a copy to SoA; 12 KiB tiles, which hold more registers, run slower than 6 KiB).
template <class T, std::size_t Stride>
inline constexpr index_t tile_records = [] {
  if constexpr (Stride <= 32) {
    return warp_tile_records<Stride>;
  } else {
    index_t best = 16;
    double best_use = -1;
    [&]<index_t... I>(std::integer_sequence<index_t, I...>) {
      auto consider = [&]<index_t Rc>(std::integral_constant<index_t, Rc>) {
        if constexpr (Rc * index_t(Stride) <= 8192 || Rc == 16) {
          using g = leaf_groups<T, Rc, 32>;
          double busy = 0, slots = 0;
          [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((busy += double(g::size(K) * g::template units<g::begin(K)>), slots += double(32 * g::template per_lane<K>)), ...);
          }(std::make_index_sequence<g::count>{});
          const double use = busy / slots;
          if (use >= best_use) best_use = use, best = Rc;
        }
      };
      (consider(std::integral_constant<index_t, 16 * (I + 1)>{}), ...);
    }(std::make_integer_sequence<index_t, 8>{});
    return best;
  }
}();

/// The tile a transpose of T's records of Stride bytes takes. Blocks per SM the register
/// allocation must allow (__launch_bounds__): six (80 registers) for records up to 32 bytes,
/// measured with 24- and 28-byte records; two for larger records, whose tiles take more registers
/// per lane; three where the tile swizzles, whose column phase still waits on shared memory, which
/// a third block per SM hides better.
template <class T, std::size_t Stride, index_t R = tile_records<T, Stride>, int Unit = tile_swizzle_choice<T, Stride, R>.first>
using warp_tile = tile_shape<Stride, R, 32, warp_tile_warps<slice_bytes_for(Stride, R, Unit != 0)>, Stride <= 32 ? 6 : Unit != 0 ? 3 : 2, Unit,
                             tile_swizzle_choice<T, Stride, R>.second>;

/// The swizzle mask for a tile of T whose AoS bytes are at `aos`: every unit bit where the tile
/// swizzles and the AoS array lies on a unit boundary (so its records' leaves stay within units),
/// 0 otherwise.
template <class T, class Tile>
STRATA_HD inline unsigned tile_swizzle(const void* aos) {
  if constexpr (Tile::swizzle) {
    static_assert(Tile::swizzle_unit >= swizzle_unit_for<T, Tile::stride> && swizzle_unit_for<T, Tile::stride> != 0,
                  "strata: a swizzled tile needs every leaf within one of its units");
    return reinterpret_cast<std::uintptr_t>(aos) % unsigned(Tile::swizzle_unit) == 0 ? 128u / unsigned(Tile::swizzle_unit) - 1 : 0u;
  } else {
    return 0u;
  }
}

/// A tile's slice of shared memory, addressed by the tile's AoS bytes: load/store move 16-byte
/// chunk c, byte(c, i) is byte i of chunk c, elem(r, off) byte off of record r (records from byte
/// `first` of the slice). Without the swizzle the addresses are the plain sums the compiler folds
/// into its shared-memory accesses. With units under 16 bytes, a chunk's words sit in its slot in
/// an order permuted by an exclusive-or of the word index (p = the unit bits of the row's swizzle
/// that fall inside the chunk), which its load and store undo and apply in registers.
template <class Tile, class B>
struct tile_slice {
  B* sm;
  std::size_t first;  // byte of the slice where the tile's first record starts
  unsigned mask;      // tile_swizzle's mask (swizzled tiles only)
  static constexpr int unit = Tile::swizzle_unit, shift = Tile::swizzle_shift;

  STRATA_HD unsigned at(std::size_t x) const {
    if constexpr (Tile::swizzle) return swizzled<unit, shift>(unsigned(x), mask);
    else return unsigned(x);
  }
  STRATA_HD B* byte(std::size_t c, std::size_t i) const { return sm + at(c * 16 + i); }
  STRATA_HD B* elem(std::size_t r, std::size_t stride, std::size_t off) const { return sm + at(first + r * stride + off); }
  STRATA_HD void store(std::size_t c, vec::word16 w) const {
    const unsigned x = at(c * 16);
    if constexpr (Tile::swizzle && unit < 16) w = permute_words(w, (x / 4) % 4);
    vec::store_local(sm + (x & ~15u), w);
  }
  STRATA_HD vec::word16 load(std::size_t c) const {
    const unsigned x = at(c * 16);
    vec::word16 w = vec::load_local(sm + (x & ~15u));
    if constexpr (Tile::swizzle && unit < 16) w = permute_words(w, (x / 4) % 4);
    return w;
  }

 private:
  /// Word i of the result is word i ^ p of w (an involution: the same call undoes it).
  STRATA_HD static vec::word16 permute_words(vec::word16 w, unsigned p) {
    if (p & 1u) w = vec::word16{w.y, w.x, w.w, w.z};
    if (p & 2u) w = vec::word16{w.z, w.w, w.x, w.y};
    return w;
  }
};
template <class T, class Tile, class B>
STRATA_HD tile_slice<Tile, B> slice_of(B* sm, std::size_t first, const void* aos) {
  return {sm, first, tile_swizzle<T, Tile>(aos)};
}

/// The leaf groups whose vectors a lane holds in registers at once on the SoA -> AoS side:
/// consecutive groups up to 16 vectors (64 registers); records with more go through several batches.
template <class T, index_t R, int Lanes = 32>
struct leaf_batches {
  using groups = leaf_groups<T, R, Lanes>;
  static constexpr std::size_t max_words = 16;
  static constexpr auto bounds = [] {
    std::array<std::size_t, groups::count + 1> b{};
    std::size_t count = 0, words = 0;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      auto add = [&](std::size_t group, std::size_t w) {
        if (group == 0 || words + w > max_words) b[count++] = group, words = 0;
        words += w;
      };
      (add(K, groups::template words<K>), ...);
    }(std::make_index_sequence<groups::count>{});
    b[count] = groups::count;
    return std::pair{b, count};
  }();
  static constexpr std::size_t count = bounds.second;
  static constexpr std::size_t begin(std::size_t k) { return bounds.first[k]; }
  static constexpr std::size_t end(std::size_t k) { return bounds.first[k + 1]; }
  /// Word offset of group G inside its batch's registers, and the batch's register count.
  template <std::size_t G>
  static constexpr std::size_t word_offset() {
    std::size_t k = 0;
    while (end(k) <= G) ++k;
    std::size_t off = 0;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((off += (J >= begin(k) && J < G) ? groups::template words<J> : 0), ...);
    }(std::make_index_sequence<groups::count>{});
    return off;
  }
  static constexpr std::size_t words(std::size_t k) {
    std::size_t w = 0;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((w += (J >= begin(k) && J < end(k)) ? groups::template words<J> : 0), ...);
    }(std::make_index_sequence<groups::count>{});
    return w;
  }
};

/// padding_byte<T, Stride>[b]: byte b of a Stride-byte record holds no leaf of T.
template <class T, std::size_t Stride>
inline constexpr auto padding_byte = [] {
  std::array<bool, Stride> pad{};
  for (auto& p : pad) p = true;
  [&]<std::size_t... L>(std::index_sequence<L...>) {
    ((std::fill_n(pad.begin() + reflect::leaf_offset<T, L>(), sizeof(reflect::leaf_type_t<T, L>), false)), ...);
  }(std::make_index_sequence<reflect::leaf_count<T>>{});
  return pad;
}();

/// Where a warp's tile lies: records [t * R, t * R + count), AoS bytes [gbegin, gend), and the
/// 16-byte chunks from w0 that cover them (chunk c holds bytes w0 + 16c .. w0 + 16c + 15).
struct tile_span {
  index_t count;
  std::uintptr_t gbegin, gend, w0;
  std::size_t chunks;
  template <std::size_t Stride, index_t R>
  STRATA_HD static tile_span of(std::uintptr_t abegin, index_t n, index_t t) {
    tile_span s;
    s.count = n - t * R < R ? n - t * R : R;
    s.gbegin = abegin + std::uintptr_t(t * R) * Stride;
    s.gend = s.gbegin + std::uintptr_t(s.count) * Stride;
    s.w0 = s.gbegin & ~std::uintptr_t(15);
    s.chunks = (s.gend - s.w0 + 15) / 16;
    return s;
  }
};

/// AoS (records of Stride bytes; Stride = sizeof(T) or the padded size) -> SoA columns, from dst
/// record `first` on. Masked: the destination's capacity may end inside a column unit (a foreign
/// view), so a unit that reaches past it is written element by element, its records only;
/// otherwise units past the last record are written whole, their padding lanes as zeros.
template <class T, class Tile, bool Masked>
struct aos_to_soa_tile {
  static constexpr std::size_t Stride = Tile::stride;
  static constexpr index_t R = Tile::records;
  static constexpr int C = Tile::chunks_per_lane;

  /// Lane `lane`'s chunks of tile t: AoS bytes -> the warp's shared memory. Every load is issued
  /// before the first shared-memory store. A chunk is loaded whole when it lies inside the array;
  /// the array's first and last chunks (reaching past its ends) move byte by byte.
  STRATA_HD static void load(int lane, std::byte* sm, const std::byte* src, index_t n, index_t t) {
    const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(src), aend = abegin + std::uintptr_t(n) * Stride;
    auto whole = [&](std::uintptr_t a) { return a >= abegin && a + 16 <= aend; };
    const tile_span s = tile_span::of<Stride, R>(abegin, n, t);
    const auto slice = slice_of<T, Tile>(sm, 0, src);
    vec::word16 w[C];
    STRATA_UNROLL
    for (int j = 0; j < C; ++j) {
      const std::size_t c = std::size_t(lane + Tile::lanes * j);
      const std::uintptr_t a = s.w0 + c * 16;
      if (c < s.chunks && whole(a)) w[j] = vec::load<16>(src + (a - abegin));
    }
    STRATA_UNROLL
    for (int j = 0; j < C; ++j) {
      const std::size_t c = std::size_t(lane + Tile::lanes * j);
      const std::uintptr_t a = s.w0 + c * 16;
      if (c >= s.chunks) break;
      if (whole(a)) {
        slice.store(c, w[j]);
      } else {
        const std::uintptr_t lo = std::max(a, s.gbegin), hi = std::min(a + 16, s.gend);
        for (std::uintptr_t b = lo; b < hi; ++b) *slice.byte(c, b - a) = src[b - abegin];
      }
    }
  }

  /// Lane `lane`'s units of every column: the warp's shared memory -> 16-byte column stores.
  template <class M>
  STRATA_HD static void store(int lane, const std::byte* sm, const std::byte* src, index_t n, const basic_view<T, M>& dst,
                              index_t first, index_t t) {
    const tile_span s = tile_span::of<Stride, R>(reinterpret_cast<std::uintptr_t>(src), n, t);
    const auto slice = slice_of<T, Tile>(sm, s.gbegin - s.w0, src);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (store_group<K>(lane, slice, s, dst, first, t), ...);
    }(std::make_index_sequence<groups::count>{});
  }

 private:
  using groups = leaf_groups<T, R, Tile::lanes>;

  /// Group K's units: slot lane + lanes * q is unit slot % units of the group's leaf slot / units.
  template <std::size_t K, class Slice, class M>
  STRATA_HD static void store_group(int lane, const Slice& slice, const tile_span& s, const basic_view<T, M>& dst, index_t first, index_t t) {
    constexpr std::size_t L0 = groups::begin(K), N = groups::size(K);
    using cu = column_unit<T, L0, R, Tile::lanes>;
    using F = typename cu::leaf;
    constexpr unsigned units = unsigned(groups::template units<L0>);
    STRATA_UNROLL
    for (int q = 0; q < groups::template per_lane<K>; ++q) {
      const unsigned slot = unsigned(lane) + unsigned(Tile::lanes) * unsigned(q), m = slot / units, k = slot % units;
      if (m >= unsigned(N)) break;
      const std::size_t off = member_offset<T, L0, N>(m);
      const index_t r0 = index_t(k) * index_t(cu::u);
      const index_t row = first + t * R + r0;
      if constexpr (Masked) {
        if (r0 < s.count && row + index_t(cu::u) > dst.capacity()) {
          // A unit the destination does not wholly own: its records, one by one.
          for (int j = 0; j < int(cu::u) && r0 + j < s.count; ++j) {
            F value;
            std::memcpy(static_cast<void*>(&value), slice.elem(std::size_t(r0 + j), Stride, off), sizeof(F));
            *member_ptr<L0, N>(dst, m, row + j) = value;
          }
          continue;
        }
      }
      if (r0 >= s.count || row + index_t(cu::u) > dst.capacity()) continue;  // capacity: whole units in containers
      constexpr int period = rotation_period(cu::u, Stride);
      F lanes[cu::u];
      STRATA_UNROLL
      for (int j = 0; j < int(cu::u); ++j) {
        const int jj = rotated(j, int(k % 32u), period, int(cu::u));
        F value;
        if (r0 + jj < s.count) value = *reinterpret_cast<const F*>(slice.elem(std::size_t(r0 + jj), Stride, off));
        else std::memset(static_cast<void*>(&value), 0, sizeof(F));  // padding lanes past the last record stay zero
        if constexpr (period >= 32) {
          lanes[j] = value;
        } else {
          STRATA_UNROLL
          for (int q2 = 0; q2 < int(cu::u); ++q2)
            if (q2 == jj) lanes[q2] = value;  // selects: the array stays in registers
        }
      }
      vec::word16 words[cu::v];
      std::memcpy(words, lanes, sizeof lanes);
      auto* col = reinterpret_cast<std::byte*>(member_ptr<L0, N>(dst, m, row));
      STRATA_UNROLL
      for (std::size_t j = 0; j < cu::v; ++j) vec::store<16>(col + j * 16, words[j]);
    }
  }
};

/// SoA columns from src record `first` on -> AoS records of Stride bytes (padding bytes zero).
/// Masked: the source's capacity may end inside a column unit (a foreign view), whose records are
/// then read element by element.
template <class T, class Tile, bool Masked>
struct soa_to_aos_tile {
  static constexpr std::size_t Stride = Tile::stride;
  static constexpr index_t R = Tile::records;
  using batches = leaf_batches<T, R, Tile::lanes>;
  using groups = typename batches::groups;

  /// Lane `lane`'s units of every column of tile t -> the warp's shared memory, batch by batch:
  /// a batch's vectors are all loaded into registers before any is used.
  template <class M>
  STRATA_HD static void gather(int lane, std::byte* sm, const basic_view<const T, M>& src, index_t first, std::byte* dst,
                               index_t n, index_t t) {
    const index_t count = n - t * R < R ? n - t * R : R;
    const tile_span s = tile_span::of<Stride, R>(reinterpret_cast<std::uintptr_t>(dst), n, t);
    const auto slice = slice_of<T, Tile>(sm, s.gbegin - s.w0, dst);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (gather_batch<K>(lane, slice, src, first, count, t, s), ...);
    }(std::make_index_sequence<batches::count>{});
  }

  /// Lane `lane`'s chunks of tile t: shared memory -> AoS bytes. Whole chunks of this tile go out
  /// as 16-byte stores; a chunk shared with the neighbouring tile (or reaching past the array) is
  /// written byte by byte, only this tile's bytes.
  STRATA_HD static void scatter(int lane, const std::byte* sm, std::byte* dst, index_t n, index_t t) {
    const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(dst);
    const tile_span s = tile_span::of<Stride, R>(abegin, n, t);
    const auto slice = slice_of<T, Tile>(sm, 0, dst);
    for (std::size_t c = std::size_t(lane); c < s.chunks; c += std::size_t(Tile::lanes)) {
      const std::uintptr_t a = s.w0 + c * 16;
      if (a >= s.gbegin && a + 16 <= s.gend) {
        vec::store<16>(dst + (a - abegin), slice.load(c));
      } else {
        const std::uintptr_t lo = std::max(a, s.gbegin), hi = std::min(a + 16, s.gend);
        for (std::uintptr_t b = lo; b < hi; ++b) dst[b - abegin] = *slice.byte(c, b - a);
      }
    }
  }

 private:
  template <std::size_t K, class Slice, class M>
  STRATA_HD static void gather_batch(int lane, const Slice& slice, const basic_view<const T, M>& src, index_t first, index_t count,
                                     index_t t, const tile_span& s) {
    vec::word16 w[batches::words(K)];
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (load_group<batches::begin(K) + J>(lane, w, src, first, count, t), ...);
    }(std::make_index_sequence<batches::end(K) - batches::begin(K)>{});
    if constexpr (K == 0 && layout::record_descriptor<T>::packed_size < Stride) {
      // Padding bytes (between leaves, after the last, and up to Stride) are written as zeros;
      // only those bytes, so no leaf byte is written twice.
      for (index_t i = lane; i < s.count; i += Tile::lanes)
        [&]<std::size_t... B>(std::index_sequence<B...>) {
          ((padding_byte<T, Stride>[B] ? void(*slice.elem(std::size_t(i), Stride, B) = std::byte{0}) : void()), ...);
        }(std::make_index_sequence<Stride>{});
    }
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (write_group<batches::begin(K) + J>(lane, w, slice, first + t * R, src.capacity(), s), ...);
    }(std::make_index_sequence<batches::end(K) - batches::begin(K)>{});
  }

  /// Group G's units (see leaf_groups) -> the batch's registers.
  template <std::size_t G, std::size_t W, class M>
  STRATA_HD static void load_group(int lane, vec::word16 (&w)[W], const basic_view<const T, M>& src, index_t first, index_t count,
                                   index_t t) {
    constexpr std::size_t L0 = groups::begin(G), N = groups::size(G);
    using cu = column_unit<T, L0, R, Tile::lanes>;
    constexpr unsigned units = unsigned(groups::template units<L0>);
    constexpr std::size_t base = batches::template word_offset<G>();
    STRATA_UNROLL
    for (int q = 0; q < groups::template per_lane<G>; ++q) {
      const unsigned slot = unsigned(lane) + unsigned(Tile::lanes) * unsigned(q), m = slot / units, k = slot % units;
      if (m >= unsigned(N)) break;
      const index_t r0 = index_t(k) * index_t(cu::u);
      const index_t row = first + t * R + r0;
      if constexpr (Masked) {
        if (r0 < count && row + index_t(cu::u) > src.capacity()) {
          // A unit the source does not wholly own: its records, one by one.
          typename cu::leaf e[cu::u]{};
          for (int j = 0; j < int(cu::u) && r0 + j < count; ++j) e[j] = *member_ptr<L0, N>(src, m, row + j);
          std::memcpy(&w[base + q * cu::v], e, sizeof e);
          continue;
        }
      }
      if (r0 >= count || row + index_t(cu::u) > src.capacity()) continue;
      auto* col = reinterpret_cast<const std::byte*>(member_ptr<L0, N>(src, m, row));
      STRATA_UNROLL
      for (std::size_t j = 0; j < cu::v; ++j) w[base + q * cu::v + j] = vec::load<16>(col + j * 16);
    }
  }

  /// The batch's registers of group G -> the records' bytes in shared memory.
  template <std::size_t G, std::size_t W, class Slice>
  STRATA_HD static void write_group(int lane, const vec::word16 (&w)[W], const Slice& slice, index_t tile_first, index_t capacity,
                                    const tile_span& s) {
    constexpr std::size_t L0 = groups::begin(G), N = groups::size(G);
    using cu = column_unit<T, L0, R, Tile::lanes>;
    using F = typename cu::leaf;
    constexpr unsigned units = unsigned(groups::template units<L0>);
    constexpr std::size_t base = batches::template word_offset<G>();
    STRATA_UNROLL
    for (int q = 0; q < groups::template per_lane<G>; ++q) {
      const unsigned slot = unsigned(lane) + unsigned(Tile::lanes) * unsigned(q), m = slot / units, k = slot % units;
      if (m >= unsigned(N)) break;
      const index_t r0 = index_t(k) * index_t(cu::u);
      if (r0 >= s.count || (!Masked && tile_first + r0 + index_t(cu::u) > capacity)) continue;
      const std::size_t off = member_offset<T, L0, N>(m);
      constexpr int period = rotation_period(cu::u, Stride);
      F lanes[cu::u];
      std::memcpy(static_cast<void*>(lanes), &w[base + q * cu::v], sizeof lanes);
      STRATA_UNROLL
      for (int j = 0; j < int(cu::u); ++j) {
        const int jj = rotated(j, int(k % 32u), period, int(cu::u));
        F value = lanes[j];
        if constexpr (period < 32) {
          STRATA_UNROLL
          for (int q2 = 0; q2 < int(cu::u); ++q2)
            if (q2 == jj) value = lanes[q2];  // selects: the array stays in registers
        }
        if (r0 + jj < s.count) *reinterpret_cast<F*>(slice.elem(std::size_t(r0 + jj), Stride, off)) = value;
      }
    }
  }
};

#if defined(STRATA_BACKEND_CUDA)
/// Between a tile's two phases: the warp's or the block's barrier.
template <class Tile>
__device__ inline void tile_barrier() {
  if constexpr (Tile::lanes == 32) __syncwarp();
  else __syncthreads();
}

/// One tile per warp (or block), no loop over tiles: a loop kept its loop-carried state in registers (the
/// mixed record's SoA -> AoS kernel: 80 registers with it, 56 without).
template <class T, class Tile, bool Masked, class M>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    aos_to_soa_kernel(const std::byte* src, index_t n, basic_view<T, M> dst, index_t first) {
  __shared__ __align__(16) std::byte smem[Tile::slices][Tile::slice_bytes];
  const int lane = int(threadIdx.x % unsigned(Tile::lanes));  // unsigned: the compiler knows 0 <= lane < lanes
  std::byte* sm = smem[threadIdx.x / unsigned(Tile::lanes)];
  const index_t tiles = (n + Tile::records - 1) / Tile::records, t = index_t(blockIdx.x) * Tile::slices + index_t(threadIdx.x / unsigned(Tile::lanes));
  if (t >= tiles) return;  // whole warps or blocks: no barrier is skipped
  using tile = aos_to_soa_tile<T, Tile, Masked>;
  tile::load(lane, sm, src, n, t);
  tile_barrier<Tile>();
  tile::store(lane, sm, src, n, dst, first, t);
}

/// One tile per warp, as aos_to_soa_kernel.
template <class T, class Tile, bool Masked, class M>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    soa_to_aos_kernel(basic_view<const T, M> src, index_t first, std::byte* dst, index_t n) {
  __shared__ __align__(16) std::byte smem[Tile::slices][Tile::slice_bytes];
  const int lane = int(threadIdx.x % unsigned(Tile::lanes));  // unsigned: the compiler knows 0 <= lane < lanes
  std::byte* sm = smem[threadIdx.x / unsigned(Tile::lanes)];
  const index_t tiles = (n + Tile::records - 1) / Tile::records, t = index_t(blockIdx.x) * Tile::slices + index_t(threadIdx.x / unsigned(Tile::lanes));
  if (t >= tiles) return;  // whole warps or blocks: no barrier is skipped
  using tile = soa_to_aos_tile<T, Tile, Masked>;
  tile::gather(lane, sm, src, first, dst, n, t);
  tile_barrier<Tile>();
  tile::scatter(lane, sm, dst, n, t);
}

/// Behind a path_gate that may close (the device, not the host, picks between ways that are all
/// launched): a grid of the blocks the device keeps resident, each warp taking every so many
/// tiles, so that a closed gate costs one wave of blocks that return at once, not one block per
/// tile. Its one load besides the tiles' 16-byte vectors is the gate's 8-byte count.
template <class T, class Tile, bool Masked, class M>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    soa_to_aos_gated_kernel(basic_view<const T, M> src, index_t first, std::byte* dst, index_t n, path_gate gate) {
  if (!gate.open()) return;
  __shared__ __align__(16) std::byte smem[Tile::slices][Tile::slice_bytes];
  const int lane = int(threadIdx.x % unsigned(Tile::lanes));  // unsigned: the compiler knows 0 <= lane < lanes
  std::byte* sm = smem[threadIdx.x / unsigned(Tile::lanes)];
  const index_t tiles = (n + Tile::records - 1) / Tile::records;
  using tile = soa_to_aos_tile<T, Tile, Masked>;
  // Every thread of a tile runs the same rounds (t depends on the slice only).
  for (index_t t = index_t(blockIdx.x) * Tile::slices + index_t(threadIdx.x / unsigned(Tile::lanes)); t < tiles; t += index_t(gridDim.x) * Tile::slices) {
    tile::gather(lane, sm, src, first, dst, n, t);
    tile_barrier<Tile>();
    tile::scatter(lane, sm, dst, n, t);
    tile_barrier<Tile>();  // the slice is filled again next round
  }
}

/// Blocks for a warp-tiled transpose: one tile per warp.
template <class Tile>
int transpose_grid(index_t n) {
  const index_t tiles = (n + Tile::records - 1) / Tile::records, blocks = (tiles + Tile::slices - 1) / Tile::slices;
  if (blocks > index_t(0x7fffffff))
    throw size_error("strata: " + std::to_string(n) + " records need more than 2^31 - 1 blocks of " +
                     std::to_string(Tile::slices * Tile::records) + " records each");
  return int(std::max<index_t>(blocks, 1));
}
#else
/// The host backend runs each tile's two phases for all 32 lanes in turn (tiles on OpenMP
/// threads), with the tile's shared memory in a buffer each thread keeps.
template <class Tile, class Load, class Store>
void emulate_warp_tiles(index_t n, Load&& load, Store&& store) {
  const index_t tiles = (n + Tile::records - 1) / Tile::records;
  STRATA_PARALLEL_FOR_IF(tiles > 4)
  for (index_t t = 0; t < tiles; ++t) {
    thread_local std::vector<vec::word16> shared(Tile::slice_bytes / 16);
    std::byte* sm = reinterpret_cast<std::byte*>(shared.data());
    for (int lane = 0; lane < Tile::lanes; ++lane) load(lane, sm, t);
    for (int lane = 0; lane < Tile::lanes; ++lane) store(lane, sm, t);
  }
}
#endif

/// The columnar side of a transpose: n records, every column 16-byte aligned (each leaf's own
/// alignment where the blocks move record by record).
template <class T, class M>
void check_soa_destination(const char* op, const basic_view<T, M>& v, index_t n) {
  if (v.size() != n) throw_size_error(std::string(op) + ": SoA records", v.size(), n);
  for (std::size_t i = 0; i < basic_view<T, M>::leaves; ++i) {
    const std::size_t align = layout::whole_vector_blocks<M>() ? vector_bytes : reflect::leaf_alignments<std::remove_const_t<T>>[i];
    if (reinterpret_cast<std::uintptr_t>(v.column_bytes(i)) % align != 0)
      throw misaligned_pointer(std::string(op) + ": SoA column '" + std::string(reflect::leaf_names<std::remove_const_t<T>>[i]) + "'",
                               v.column_bytes(i), align);
  }
}

/// Blocks whose runs are not whole 16-byte vectors (AoSoA of N = 1, 3, 8 ... records of a leaf that
/// N of do not fill 16 bytes) move record by record: a thread a record, the AoS record read whole
/// and every leaf stored on its own (the returned path says path::scalar).
template <class T, std::size_t Stride, class M>
struct records_to_columns {
  const std::byte* src;
  basic_view<T, M> dst;
  index_t first;
  STRATA_HD void operator()(index_t i) const { dst.store(first + i, *reinterpret_cast<const T*>(src + std::size_t(i) * Stride)); }
};
/// The other way: the record's own padding and a padded record's tail are written as zero bytes,
/// as the transposes write them; a closed gate (sort's choice between two ways) writes nothing.
template <class T, std::size_t Stride, class M>
struct columns_to_records {
  basic_view<const T, M> src;
  index_t first;
  std::byte* dst;
  path_gate gate;
  STRATA_HD void operator()(index_t i) const {
    if (!gate.open()) return;
    const T r = src.load(first + i);
    T out;
    std::memset(static_cast<void*>(&out), 0, sizeof out);
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      reflect::leaf<L>(out) = reflect::leaf<L>(r);
    });
    std::byte* at = dst + std::size_t(i) * Stride;
    std::memcpy(at, &out, sizeof out);
    if constexpr (Stride > sizeof(T)) std::memset(at + sizeof(T), 0, Stride - sizeof(T));
  }
};
#if defined(STRATA_BACKEND_CUDA)
template <class Body>
__global__ void __launch_bounds__(256) record_transpose_kernel(Body body, index_t n) {
  const index_t i = index_t(blockIdx.x) * 256 + threadIdx.x;
  if (i < n) body(i);
}
#endif
template <class Body>
void run_record_transpose(const Body& body, index_t n, stream_t stream, const char* what) {
#if defined(STRATA_BACKEND_CUDA)
  const index_t blocks = (n + 255) / 256;
  if (blocks > index_t(0x7fffffff)) throw size_error("strata: " + std::to_string(n) + " records need more than 2^31 - 1 blocks of 256 threads");
  record_transpose_kernel<<<unsigned(blocks), 256, 0, stream>>>(body, n);
  check_launch(what);
#else
  (void)stream, (void)what;
  STRATA_PARALLEL_FOR_IF(n > 4096)
  for (index_t i = 0; i < n; ++i) body(i);
#endif
}

template <class T>
void check_aos_pointer(const char* op, const void* p, index_t n, std::size_t align) {
  if (n < 0) throw size_error(std::string("strata: ") + op + ": negative record count");
  if (n > 0 && p == nullptr) throw size_error(std::string("strata: ") + op + ": null AoS pointer with " + std::to_string(n) + " records");
  if (reinterpret_cast<std::uintptr_t>(p) % align != 0) throw misaligned_pointer(std::string(op) + ": AoS records", p, align);
}

/// Whether a view's capacity ends inside a column unit, so the transposes must mask that unit.
template <class T, class M>
bool needs_mask(const basic_view<T, M>& v, index_t first, index_t n) {
  return align_up(std::size_t(first + n), M::capacity_quantum) > std::size_t(v.capacity());
}

/// Stride-byte records at src -> dst records [first, first + n).
template <class T, std::size_t Stride, class M, class Tile = warp_tile<T, Stride>>
void aos_bytes_to_soa(const std::byte* src, index_t n, const basic_view<T, M>& dst, index_t first, stream_t stream) {
  if (n == 0) return;
  if constexpr (!layout::whole_vector_blocks<M>()) {
    run_record_transpose(records_to_columns<T, Stride, M>{src, dst, first}, n, stream, "aos_to_soa record kernel launch");
  } else {
    using tile = Tile;
    auto run = [&]<bool Masked>() {
#if defined(STRATA_BACKEND_CUDA)
      aos_to_soa_kernel<T, tile, Masked, M><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, n, dst, first);
      check_launch("aos_to_soa kernel launch");
#else
      (void)stream;
      using phases = aos_to_soa_tile<T, tile, Masked>;
      emulate_warp_tiles<tile>(n, [&](int lane, std::byte* sm, index_t t) { phases::load(lane, sm, src, n, t); },
                               [&](int lane, std::byte* sm, index_t t) { phases::store(lane, sm, src, n, dst, first, t); });
#endif
    };
    if (needs_mask(dst, first, n)) run.template operator()<true>();
    else run.template operator()<false>();
  }
}

template <class T, std::size_t Stride, class M, class Tile = warp_tile<T, Stride>>
void soa_to_aos_bytes(const basic_view<const T, M>& src, index_t first, std::byte* dst, index_t n, stream_t stream, path_gate gate = {}) {
  if (n == 0) return;
  if constexpr (!layout::whole_vector_blocks<M>()) {
    run_record_transpose(columns_to_records<T, Stride, M>{src, first, dst, gate}, n, stream, "soa_to_aos record kernel launch");
  } else {
    using tile = Tile;
    auto run = [&]<bool Masked>() {
#if defined(STRATA_BACKEND_CUDA)
      if (gate.far) {
        constexpr auto kernel = &soa_to_aos_gated_kernel<T, tile, Masked, M>;
        const index_t blocks = std::min<index_t>(transpose_grid<tile>(n), resident_blocks<kernel>(tile::threads));
        kernel<<<unsigned(blocks), tile::threads, 0, stream>>>(src, first, dst, n, gate);
      } else {
        soa_to_aos_kernel<T, tile, Masked, M><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, first, dst, n);
      }
      check_launch("soa_to_aos kernel launch");
#else
      (void)stream;
      if (!gate.open()) return;
      using phases = soa_to_aos_tile<T, tile, Masked>;
      emulate_warp_tiles<tile>(n, [&](int lane, std::byte* sm, index_t t) { phases::gather(lane, sm, src, first, dst, n, t); },
                               [&](int lane, std::byte* sm, index_t t) { phases::scatter(lane, sm, dst, n, t); });
#endif
    };
    if (needs_mask(src, first, n)) run.template operator()<true>();
    else run.template operator()<false>();
  }
}

}  // namespace strata::detail
