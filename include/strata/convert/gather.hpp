// SPDX-License-Identifier: Apache-2.0
// Gathers into SoA by index, two ways (algorithm/sort.hpp chooses):
// - from padded AoS records: dst record i = src[idx[i]]. A random gather of each 4-byte column
//   costs a 32-byte memory sector per element; gathering whole padded records (one or two 16-byte
//   loads each) costs one or two sectors per record. Each warp gathers a tile of records into its
//   own slice of shared memory and writes them out column by column with 16-byte stores (the
//   transposes' store phase).
// - from SoA columns: each leaf read at the indices and stored to its column, no staging, four
//   consecutive destinations per load of indices and per store (gather_quads): one copy of the
//   records when consecutive indices stay within a sector, a sector per leaf per jump.
// A sampling pass over the indices (count_far_sample) and gather_costs give the choice without
// the host waiting: both ways' kernels take a path_gate and return at once when not chosen. The
// host backend runs the same phases lane by lane, and the same count.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/scratch.hpp>
#include <strata/reflect/leaves.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace strata::detail {

/// Indices checked against the source as they are read: an index that is negative or not below
/// `size` reads nothing, its destination record is written as a zero record, and the lowest such
/// position goes to *first_bad (device memory holding ~0 before the gather; null: not recorded).
/// A compare per index, next to loads that wait on memory.
struct index_check {
  index_t size = 0;
  unsigned long long* first_bad = nullptr;
  template <class I>
  STRATA_HD bool valid(I j) const {
    return static_cast<unsigned long long>(j) < static_cast<unsigned long long>(size);  // negative: far above any size
  }
  STRATA_HD void bad(index_t i) const {
    if (!first_bad) return;
#if defined(__CUDA_ARCH__)
    atomicMin(first_bad, static_cast<unsigned long long>(i));
#else
    std::atomic_ref<unsigned long long> slot(*first_bad);
    unsigned long long seen = slot.load(std::memory_order_relaxed);
    while (static_cast<unsigned long long>(i) < seen && !slot.compare_exchange_weak(seen, static_cast<unsigned long long>(i))) {
    }
#endif
  }
};

/// Tests: the most blocks a gather with a grid of resident blocks launches (0: as many as the
/// device keeps resident), so that small gathers also run blocks that take several spans in turn
/// (for_each_span's counter) and a small sample takes the count several rounds (far_count_kernel).
inline index_t gather_grid_cap = 0;

template <class T, class Tile, bool Masked, class I>
struct gather_tile {
  static constexpr std::size_t Stride = Tile::stride;
  static constexpr index_t R = Tile::records;
  static constexpr std::size_t access = Stride < 16 ? Stride : 16;  // padded records: a power of two up to 32, then 16-byte multiples
  static constexpr int accesses = int(Stride / access);
  static constexpr int per_lane = int((R + Tile::lanes - 1) / Tile::lanes);

  /// Lane `lane`'s records of tile t, src[idx[t * R + r]] for r = lane, lane + 32, ..., into the
  /// warp's shared memory at r * Stride (zero bytes for an index outside the source); every load
  /// is issued before the first store.
  STRATA_HD static void load(int lane, std::byte* sm, const std::byte* src, const I* idx, index_t n, index_t t, const index_check& check) {
    vec::word_t<access> w[per_lane][accesses];
    const auto slice = slice_of<T, Tile>(sm, 0, nullptr);  // as store() reads them: records from byte 0
    STRATA_UNROLL
    for (int k = 0; k < per_lane; ++k) {
      const index_t r = index_t(lane) + index_t(Tile::lanes) * k, i = t * R + r;
      if (r < R && i < n) {
        const I j = idx[i];
        if (check.valid(j)) {
          const std::byte* rec = src + std::size_t(j) * Stride;
          STRATA_UNROLL
          for (int a = 0; a < accesses; ++a) w[k][a] = vec::load<access>(rec + a * access);
        } else {
          check.bad(i);
          STRATA_UNROLL
          for (int a = 0; a < accesses; ++a) w[k][a] = vec::word_t<access>{};
        }
      }
    }
    STRATA_UNROLL
    for (int k = 0; k < per_lane; ++k) {
      const index_t r = index_t(lane) + index_t(Tile::lanes) * k, i = t * R + r;
      if (r < R && i < n) {
        STRATA_UNROLL
        for (int a = 0; a < accesses; ++a) {
          if constexpr (access == 16) slice.store((std::size_t(r) * Stride) / 16 + std::size_t(a), w[k][a]);  // a swizzled slice permutes its words
          else std::memcpy(slice.elem(std::size_t(r), Stride, std::size_t(a) * access), &w[k][a], access);
        }
      }
    }
  }
  /// The tile's records, now contiguous in shared memory, to the columns (records [t * R, ...)).
  template <class M>
  STRATA_HD static void store(int lane, const std::byte* sm, index_t n, const basic_view<T, M>& dst, index_t t) {
    aos_to_soa_tile<T, Tile, Masked>::store(lane, sm, nullptr, n, dst, 0, t);
  }
};

#if defined(STRATA_BACKEND_CUDA)
/// Spans [0, spans) to the blocks of a grid smaller than that. With `next` (device memory holding
/// 0 before the launch, in stream order) each block takes the next span when it has finished one,
/// so the blocks resident at once work on one narrow window that moves through the output in
/// order; with a fixed stride (next null) the blocks drift apart by many spans, and a source sector
/// that neighbouring spans share (a re-sort's moves to a nearby cell) has left L2 before the second
/// one reads it: the demo's re-sort after 50 steps reads 1.5x a copy's DRAM bytes with the counter
/// and 2.0x with the stride. Every thread of the block calls it.
template <class F>
__device__ void for_each_span(index_t spans, unsigned long long* next, F&& f) {
  if (!next) {
    for (index_t b = blockIdx.x; b < spans; b += gridDim.x) f(b);
    return;
  }
  __shared__ unsigned long long taken;
  for (;;) {
    if (threadIdx.x == 0) taken = atomicAdd(next, 1ull);
    __syncthreads();
    const index_t b = index_t(taken);
    __syncthreads();  // every thread has read it before thread 0 takes the next
    if (b >= spans) return;
    f(b);
  }
}
/// A span counter for a launch of `grid` blocks over `spans` spans (for_each_span): zeroed device
/// memory in stream order where the grid is smaller, none (null) where each block has one span.
/// The word comes from `at` where the caller took it beforehand (so that a call can take all its
/// memory before it writes anything), from scratch otherwise.
class span_counter {
 public:
  span_counter(index_t grid, index_t spans, stream_t stream, unsigned long long* at = nullptr)
      : block_(grid < spans && !at ? sizeof(unsigned long long) : 0, stream), at_(grid < spans ? (at ? at : block_.as<unsigned long long>()) : nullptr) {
    if (at_) cuda_check(cudaMemsetAsync(at_, 0, sizeof(unsigned long long), stream), "cudaMemsetAsync (strata gather)");
  }
  unsigned long long* get() const { return at_; }

 private:
  scratch_block block_;
  unsigned long long* at_;
};

/// Strided: resident blocks behind a gate, as soa_to_aos_gated_kernel, each block's warps taking
/// the tiles of one block's span at a time (for_each_span).
template <class T, class Tile, bool Masked, class I, class M, bool Strided = false>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks) gather_kernel(const std::byte* src, const I* idx, index_t n, basic_view<T, M> dst,
                                                                              path_gate gate, index_check check, unsigned long long* next) {
  if (!gate.open()) return;
  __shared__ __align__(16) std::byte smem[Tile::slices][Tile::slice_bytes];
  const int lane = int(threadIdx.x % unsigned(Tile::lanes));  // unsigned: the compiler knows 0 <= lane < lanes
  const index_t slice = index_t(threadIdx.x / unsigned(Tile::lanes));
  std::byte* sm = smem[slice];
  const index_t tiles = (n + Tile::records - 1) / Tile::records, t = index_t(blockIdx.x) * Tile::slices + slice;
  using tile = gather_tile<T, Tile, Masked, I>;
  if constexpr (Strided) {
    for_each_span((tiles + Tile::slices - 1) / Tile::slices, next, [&](index_t b) {
      const index_t u = b * Tile::slices + slice;
      if (u >= tiles) return;  // whole warps (or the whole block, for block tiles): no barrier is skipped
      tile::load(lane, sm, src, idx, n, u, check);
      tile_barrier<Tile>();
      tile::store(lane, sm, n, dst, u);
      tile_barrier<Tile>();
    });
  } else {
    if (t >= tiles) return;  // whole warps or blocks: no barrier is skipped
    tile::load(lane, sm, src, idx, n, t, check);
    tile_barrier<Tile>();
    tile::store(lane, sm, n, dst, t);
  }
}
#endif

/// Blocks whose runs are not whole 16-byte vectors (the tiles' stores need them): a thread a
/// record; an index outside the source gives a zero record and is reported, as in the tiles.
template <class T, std::size_t Stride, class I, class M>
struct gather_records_one_by_one {
  const std::byte* src;
  const I* idx;
  basic_view<T, M> dst;
  index_check check;
  path_gate gate;
  STRATA_HD void operator()(index_t i) const {
    if (!gate.open()) return;
    const I j = idx[i];
    if (check.valid(j)) {
      dst.store(i, *reinterpret_cast<const T*>(src + std::size_t(j) * Stride));
    } else {
      T zero;
      std::memset(static_cast<void*>(&zero), 0, sizeof zero);
      dst.store(i, zero);
      check.bad(i);
    }
  }
};

template <class T, std::size_t Stride, class I, class M>
void gather_aos_tiles(const std::byte* src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream, const index_check& check,
                      path_gate gate, unsigned long long* counter) {
  using tile = warp_tile<T, Stride>;
  auto run = [&]<bool Masked>() {
#if defined(STRATA_BACKEND_CUDA)
    if (gate.far) {
      constexpr auto kernel = &gather_kernel<T, tile, Masked, I, M, true>;
      const index_t spans = transpose_grid<tile>(n), resident = resident_blocks<kernel>(tile::threads);
      const index_t blocks = std::min({spans, resident, gather_grid_cap > 0 ? gather_grid_cap : resident});
      const span_counter next(blocks, spans, stream, counter);
      kernel<<<unsigned(blocks), tile::threads, 0, stream>>>(src, idx, n, dst, gate, check, next.get());
    } else {
      gather_kernel<T, tile, Masked, I, M><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, idx, n, dst, gate, check, nullptr);
    }
    check_launch("gather kernel launch");
#else
    (void)stream, (void)counter;
    if (!gate.open()) return;
    using phases = gather_tile<T, tile, Masked, I>;
    emulate_warp_tiles<tile>(n, [&](int lane, std::byte* sm, index_t t) { phases::load(lane, sm, src, idx, n, t, check); },
                             [&](int lane, std::byte* sm, index_t t) { phases::store(lane, sm, n, dst, t); });
#endif
  };
  if (needs_mask(dst, 0, n)) run.template operator()<true>();
  else run.template operator()<false>();
}

/// dst records [0, n) = records src[idx[i]] of a padded AoS array (Stride bytes each, check.size
/// of them).
template <class T, std::size_t Stride, class I, class M>
void gather_aos_to_soa(const std::byte* src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream, const index_check& check,
                       path_gate gate = {}, unsigned long long* counter = nullptr) {
  if (n == 0) return;
  if constexpr (!layout::whole_vector_blocks<M>()) {
    (void)counter;
    run_record_transpose(gather_records_one_by_one<T, Stride, I, M>{src, idx, dst, check, gate}, n, stream, "gather record kernel launch");
  } else {
    gather_aos_tiles<T, Stride>(src, idx, n, dst, stream, check, gate, counter);
  }
}

/// What a gather costs in memory traffic beyond reading its indices and writing its leaves once,
/// in bytes of streamed DRAM traffic. A 32-byte sector read at a random place costs about three
/// times what 32 bytes read in sequence do (HBM moves 64-byte bursts and opens a row for each).
/// Reading each column at the indices ("columns") costs the leaves' bytes where the sectors an
/// index reads are read anyway, and a random sector per leaf at every index that jumps somewhere
/// new ("far", see far_sample). Whole padded records ("records") cost a transpose of the source to
/// Stride-byte records (one read, one write) and then a record per index: Stride bytes in
/// sequence, or random sectors where the index jumps.
template <class T, std::size_t Stride>
struct gather_costs {
  static constexpr unsigned long long random_sector = 3;
  static constexpr unsigned long long sectors(std::size_t bytes) { return (bytes + 31) / 32 * 32; }
  static constexpr unsigned long long leaf_bytes = [] {
    std::size_t w = 0;
    for (std::size_t b : reflect::leaf_sizes<T>) w += b;
    return w;
  }();
  /// Extra bytes per far index: columns, and records.
  static constexpr unsigned long long far_columns = [] {
    unsigned long long x = 0;
    for (std::size_t b : reflect::leaf_sizes<T>) x += random_sector * sectors(b);
    return x - leaf_bytes;
  }();
  static constexpr unsigned long long far_records = random_sector * sectors(Stride) - Stride;
  /// Elements of the average leaf in one sector.
  static constexpr index_t near = index_t(std::max<unsigned long long>(1, 32 * reflect::leaf_count<T> / leaf_bytes));
  /// Records whose traffic (their leaves read and written, an index each) an L2 of `l2_bytes`
  /// holds: a source record this close to where the gather reads in step with its output is read
  /// shortly before or after by neighbouring indices (a re-sort's moves to a nearby cell), so it
  /// costs no DRAM sector of its own. At least `near`.
  static index_t window(std::size_t l2_bytes, std::size_t index_bytes) {
    return std::max<index_t>(near, index_t(l2_bytes / (2 * leaf_bytes + index_bytes)));
  }
  /// The most far indices at which reading the columns moves no more than the records way does:
  /// `gathered` indices into a source of `source` records.
  static unsigned long long direct_limit(index_t source, index_t gathered) {
    if (far_columns <= far_records) return ~0ull;
    const unsigned long long records = (unsigned long long)source * (leaf_bytes + Stride) + (unsigned long long)gathered * (Stride - leaf_bytes);
    return records / (far_columns - far_records);
  }
};

/// Where the choice looks: one line of 32 consecutive indices (one 128-byte read of 4-byte
/// indices) in every group of 64 lines, at a place in the group that a hash of the group's number
/// picks (a pattern that repeats with the groups cannot hide from it), and in each such line the 31
/// pairs of neighbours. The choice only weighs costs, so a sample does: 1/64 of the indices are
/// read. A line whose indices mostly jump costs its warp about 350 instructions, and on the host
/// model of the swept index families a line in 64 picks the same way as a line in 16 in every case
/// at a quarter of the count's time.
/// An index is far, a random sector per leaf, when all three hold:
/// - it jumps more than `near` records from the index before it;
/// - it lies more than `window` records (gather_costs::window: farther than L2 keeps what the
///   gather reads) from its position scaled to the source (position x source / indices: in a
///   permutation, its own position), where a gather in step with its output reads;
/// - it lies more than `near` records from every earlier index of its line (compared on the
///   indices' low 32 bits: indices 2^32 apart that alias only miscount).
/// A jump back to the stream the line came from, or to the next of several indices that jump
/// together (particles that moved to the same cell), reads a sector the line reads anyway, and a
/// move to a nearby cell reads one the gather reads shortly before or after. Counting every jump
/// past `near` would price such moves as random reads and take the records way where reading the
/// columns is 1.1-2.1x faster; counting only jumps longer than the window would miss indices that
/// sweep the whole source in short steps (random records sorted by cell: 2.7x slower by columns).
struct far_sample {
  static constexpr int line_bits = 6;  // lines a group: 2^line_bits
  static constexpr index_t line = 32, lines = index_t(1) << line_bits, group = line * lines;
  static index_t groups(index_t n) { return n / group; }
  /// Neighbour pairs the sample of n indices tests.
  static unsigned long long pairs(index_t n) { return (unsigned long long)groups(n) * (line - 1); }
  STRATA_HD static index_t line_start(index_t g) {
    return g * group + index_t(((unsigned long long)g + 1) * 0x9E3779B97F4A7C15ull >> (64 - line_bits)) * line;
  }
  /// Where index i of n would read in a source of `source` records, moving in step with the output.
  STRATA_HD static long long in_step(index_t i, double scale) { return (long long)((double)i * scale); }
  static double scale(index_t source, index_t n) { return n > 0 ? (double)source / (double)n : 1.0; }
  /// A limit on far indices among all n, scaled to the sample.
  static unsigned long long scaled(unsigned long long limit, index_t n) {
    if (limit == ~0ull || n == 0) return limit;
    return (unsigned long long)((long double)limit * (long double)pairs(n) / (long double)n);
  }
};

/// Whether idx[i] (first < i < first + line) is far in far_sample's sense.
template <class I>
STRATA_HD bool far_in_line(const I* idx, index_t first, index_t i, index_t near, index_t window, double scale) {
  const long long j = (long long)idx[i], d = j - (long long)idx[i - 1], e = j - far_sample::in_step(i, scale);
  if ((d <= near && d >= -near) || (e <= window && e >= -window)) return false;
  for (index_t m = first; m < i; ++m) {
    const int e = int(std::uint32_t(j) - std::uint32_t(idx[m]));
    if (e <= near && e >= -near) return false;
  }
  return true;
}

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int far_count_threads = 256;
/// Sampled lines a warp reads before it tests any (their loads in flight together).
inline constexpr int far_count_unroll = 4;
/// A warp per sampled line: lane k reads the line's index k, compares it with lane k - 1's and its
/// in-step place, and where both are far, with every earlier lane's. The blocks go through the
/// sample in rounds of far_count_unroll lines a warp, adding each round's count to *far; a block
/// stops once *far passes `enough`, since the choice the count feeds is then made: random
/// indices, whose every line runs the comparisons with earlier lanes, cost a few rounds instead of
/// the whole sample.
template <class I>
__global__ void __launch_bounds__(far_count_threads) far_count_kernel(const I* idx, index_t groups, index_t near, index_t window, double scale,
                                                                      unsigned long long enough, unsigned long long* far) {
  constexpr index_t warps = far_count_threads / 32;
  const int lane = int(threadIdx.x % 32);
  const index_t stride = index_t(gridDim.x) * warps;
  __shared__ unsigned long long block_far;
  __shared__ bool stop;
  if (threadIdx.x == 0) block_far = 0;
  __syncthreads();
  // Rounds are block-uniform (r0), so every thread reaches the barriers; lines past the sample test nothing.
  for (index_t r0 = index_t(blockIdx.x) * warps; r0 < groups; r0 += stride * far_count_unroll) {
    const index_t g0 = r0 + index_t(threadIdx.x / 32);
    long long at[far_count_unroll];
    STRATA_UNROLL
    for (int k = 0; k < far_count_unroll; ++k) {
      const index_t g = g0 + k * stride;
      at[k] = g < groups ? (long long)idx[far_sample::line_start(g) + lane] : 0;
    }
    unsigned c = 0;
    STRATA_UNROLL
    for (int k = 0; k < far_count_unroll; ++k) {
      const index_t g = g0 + k * stride;
      const long long before = __shfl_up_sync(0xffffffffu, at[k], 1), d = at[k] - before;
      const long long e = at[k] - far_sample::in_step(far_sample::line_start(g) + lane, scale);
      bool jumps = g < groups && lane > 0 && (d > near || d < -near) && (e > window || e < -window);
      if (__any_sync(0xffffffffu, jumps)) {
        const unsigned low = unsigned(at[k]);
        STRATA_UNROLL
        for (int o = 1; o < 32; ++o) {
          const int e = int(low - __shfl_up_sync(0xffffffffu, low, unsigned(o)));
          jumps = jumps && !(lane >= o && e <= near && e >= -near);
        }
      }
      c += jumps ? 1u : 0u;
    }
    c = __reduce_add_sync(0xffffffffu, c);
    if (lane == 0 && c) atomicAdd(&block_far, (unsigned long long)c);
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned long long mine = block_far;
      const unsigned long long total = mine ? atomicAdd(far, mine) + mine : (enough == ~0ull ? 0 : *static_cast<volatile unsigned long long*>(far));
      block_far = 0;
      stop = total > enough;
    }
    __syncthreads();
    if (stop) return;
  }
}
#endif

/// *far = how many of the indices far_sample tests in idx[0, n), into a source of `source`
/// records, are far (device memory, stream ordered). The device may stop counting once more than
/// `enough` are found: *far is then more than `enough` and at most the full count; at or below
/// `enough` it is the full count, so a choice between *far <= enough and more is the same on both
/// backends.
template <class I>
void count_far_sample(const I* idx, index_t n, index_t source, index_t near, index_t window, unsigned long long* far, stream_t stream,
                      unsigned long long enough = ~0ull) {
  const double scale = far_sample::scale(source, n);
  const index_t groups = far_sample::groups(n);
#if defined(STRATA_BACKEND_CUDA)
  cuda_check(cudaMemsetAsync(far, 0, sizeof *far, stream), "cudaMemsetAsync (strata gather)");
  if (groups == 0) return;
  constexpr index_t per_block = index_t(far_count_threads / 32) * far_count_unroll;
  const device_shape& d = current_device_shape();
  const index_t full = index_t(d.sms) * std::max(1, d.max_threads_per_sm / far_count_threads);
  const index_t blocks = std::max<index_t>(1, std::min({full, (groups + per_block - 1) / per_block, gather_grid_cap > 0 ? gather_grid_cap : full}));
  far_count_kernel<I><<<unsigned(blocks), far_count_threads, 0, stream>>>(idx, groups, near, window, scale, enough, far);
  check_launch("strata gather (index sample)");
#else
  (void)stream;
  (void)enough;
  unsigned long long c = 0;
  STRATA_PARALLEL_SUM_IF(groups > 64, c)
  for (index_t g = 0; g < groups; ++g) {
    const index_t first = far_sample::line_start(g);
    for (index_t i = first + 1; i < first + far_sample::line; ++i) c += far_in_line(idx, first, i, near, window, scale) ? 1u : 0u;
  }
  *far = c;
#endif
}

/// Direct gather, one record at a time: dst[i] = src[idx[i]] leaf by leaf. A block takes `span`
/// consecutive records and its thread t records t, t + threads, ...: neighbouring threads read
/// neighbouring indices, each thread has per_thread records' loads in flight before its first
/// store, and the blocks resident at once cover one window of the output that moves through it in
/// order (sources near the window, such as a re-sort's moves to a neighbouring cell, are still in
/// L2 when read again). Taken for records whose leaves are not all 1, 2, 4, 8 or 16 bytes, or
/// whose destination columns are not 16-byte aligned (gather_quads covers the rest).
struct gather_columns {
  static constexpr int threads = 256, per_thread = 4;
  static constexpr index_t span = index_t(threads) * per_thread;
  template <class T, class M, class I>
  STRATA_HD static void run(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, index_t block, int t,
                            const index_check& check) {
    const index_t first = block * span + t;
    I j[per_thread] = {};
    T r[per_thread]{};
    STRATA_UNROLL
    for (int k = 0; k < per_thread; ++k)
      if (first + k * threads < n) j[k] = idx[first + k * threads];
    STRATA_UNROLL
    for (int k = 0; k < per_thread; ++k)
      if (first + k * threads < n) {
        if (check.valid(j[k])) r[k] = src.load(index_t(j[k]));
        else check.bad(first + k * threads);
      }
    STRATA_UNROLL
    for (int k = 0; k < per_thread; ++k)
      if (first + k * threads < n) dst.store(first + k * threads, r[k]);
  }
};

/// Leaf L's values of a thread's Q quads (4 records each), in registers between loads and stores.
template <class T, std::size_t L, int Q>
struct quad_values {
  reflect::leaf_type_t<T, L> v[Q][4];
};
template <class T, int Q, class Leaves>
struct quad_holder;
template <class T, int Q, std::size_t... L>
struct quad_holder<T, Q, std::index_sequence<L...>> : quad_values<T, L, Q>... {};

/// Direct gather, four consecutive destinations at a time ("quads"): a thread loads the quad's 4
/// indices as one access (16 bytes for 4-byte indices), reads each leaf of the 4 source records,
/// and stores each leaf's 4 values as one access of 4 x its size (one 16-byte store per fp32
/// column). Streaming indices run at copy speed only with wide index loads and stores, and
/// scattered ones only with many loads in flight: a thread keeps `quads` quads' loads (16 records
/// of 7 fp32 leaves, 448 bytes of registers) in flight before its first store, fewer for larger
/// records, and records larger still go through in batches of leaves. Needs every leaf 1, 2, 4, 8
/// or 16 bytes and 16-byte aligned destination columns (vector_aligned()); indices are loaded as
/// vectors where the caller's array is aligned for it (VecIdx), one by one otherwise. Records
/// past the last whole quad (n % 4 of them) are moved one by one by the first block.
/// Bytes of gathered values a thread holds between its loads and its stores: 16 records of the
/// demo's 7 fp32 leaves, one 256-thread block per SM. Loads in flight per thread matter more than
/// blocks resident here: fewer quads with more blocks, or two blocks forced by launch bounds
/// (spilling), gather the re-sorts slower.
inline constexpr std::size_t gather_held_bytes = 448;
template <class T, std::size_t HeldBytes = gather_held_bytes>
struct gather_quads {
  static constexpr int threads = 256;
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  /// Bytes of gathered values a thread may hold at once.
  static constexpr std::size_t held_bytes = HeldBytes;
  static constexpr std::size_t record_bytes = [] {
    std::size_t w = 0;
    for (std::size_t b : reflect::leaf_sizes<T>) w += b;
    return w;
  }();
  static constexpr int quads = int(std::clamp<std::size_t>(held_bytes / (4 * record_bytes), 1, 4));
  static constexpr index_t span = index_t(threads) * quads;  // quads a block takes per step
  /// Leaves are taken in batches of at most batch_bytes of each record (greedy, in leaf order).
  static constexpr std::size_t batch_bytes = std::max<std::size_t>(held_bytes / (4 * quads), 16);
  static constexpr std::array<std::size_t, leaves> batch_of = [] {
    std::array<std::size_t, leaves> b{};
    std::size_t batch = 0, used = 0;
    for (std::size_t l = 0; l < leaves; ++l) {
      const std::size_t s = reflect::leaf_sizes<T>[l];
      if (used + s > batch_bytes) ++batch, used = 0;
      b[l] = batch;
      used += s;
    }
    return b;
  }();
  static constexpr std::size_t batches = leaves == 0 ? 0 : batch_of[leaves - 1] + 1;
  template <class M>
  static constexpr bool applies =
      layout::record_descriptor<T>::all_leaves_vectorizable && layout::packet_aligned_blocks<M>() && (M::block == 0 || M::block % 4 == 0);
  /// The caller's index array allows the quads' vector loads of indices.
  template <class I>
  static bool indices_aligned(const I* idx) {
    return reinterpret_cast<std::uintptr_t>(idx) % std::min<std::size_t>(4 * sizeof(I), 16) == 0;
  }

  /// Thread t of block `block`: quads block * span + k * threads + t for k < quads.
  template <bool VecIdx, class M, class I>
  STRATA_HD static void run(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, index_t block, int t,
                            const index_check& check) {
    const index_t whole = n / 4;
    index_t q[quads];
    I j[quads][4];
    bool ok[quads][4];
    STRATA_UNROLL
    for (int k = 0; k < quads; ++k) {
      q[k] = block * span + index_t(k) * threads + t;
      if (q[k] < whole) {
        load_indices<VecIdx>(idx + 4 * q[k], j[k]);
      } else {
        STRATA_UNROLL
        for (int r = 0; r < 4; ++r) j[k][r] = I(0);
      }
    }
    STRATA_UNROLL
    for (int k = 0; k < quads; ++k) {
      STRATA_UNROLL
      for (int r = 0; r < 4; ++r) {
        ok[k][r] = check.valid(j[k][r]);
        if (q[k] < whole && !ok[k][r]) check.bad(4 * q[k] + r);
      }
    }
    [&]<std::size_t... B>(std::index_sequence<B...>) { (move_batch<B>(src, dst, whole, q, j, ok), ...); }(std::make_index_sequence<batches>{});
  }
  /// Records [4 * (n / 4), n): lane t < n % 4 moves one.
  template <class M, class I>
  STRATA_HD static void tail(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, int t,
                             const index_check& check) {
    const index_t i = n / 4 * 4 + t;
    if (t >= 4 || i >= n) return;
    T r{};
    const I j = idx[i];
    if (check.valid(j)) r = src.load(index_t(j));
    else check.bad(i);
    dst.store(i, r);
  }

 private:
  template <bool VecIdx, class I>
  STRATA_HD static void load_indices(const I* p, I (&j)[4]) {
    if constexpr (VecIdx) {
      constexpr std::size_t bytes = 4 * sizeof(I), access = bytes < 16 ? bytes : 16, count = bytes / access;
      vec::word_t<access> w[count];
      STRATA_UNROLL
      for (std::size_t a = 0; a < count; ++a) w[a] = vec::load<access>(reinterpret_cast<const std::byte*>(p) + a * access);
      std::memcpy(j, w, bytes);
    } else {
      STRATA_UNROLL
      for (int r = 0; r < 4; ++r) j[r] = p[r];
    }
  }
  /// Leaf L of every record of the thread's quads, where L is in the holder's batch: loads, then stores.
  template <std::size_t L, class H, class M, class I>
  STRATA_HD static void load_leaf(H& h, const basic_view<const T, M>& src, index_t whole, const index_t (&q)[quads], const I (&j)[quads][4],
                                  const bool (&ok)[quads][4]) {
    if constexpr (batch_of[L] == H::batch) {
      auto& v = static_cast<quad_values<T, L, quads>&>(h).v;
      STRATA_UNROLL
      for (int k = 0; k < quads; ++k) {
        STRATA_UNROLL
        for (int r = 0; r < 4; ++r) v[k][r] = q[k] < whole && ok[k][r] ? *src.template leaf_ptr<L>(index_t(j[k][r])) : reflect::leaf_type_t<T, L>{};
      }
    }
  }
  template <std::size_t L, class H, class M>
  STRATA_HD static void store_leaf(const H& h, const basic_view<T, M>& dst, index_t whole, const index_t (&q)[quads]) {
    if constexpr (batch_of[L] == H::batch) {
      using leaf = reflect::leaf_type_t<T, L>;
      constexpr std::size_t bytes = 4 * sizeof(leaf), access = bytes < 16 ? bytes : 16, count = bytes / access;
      const auto& v = static_cast<const quad_values<T, L, quads>&>(h).v;
      STRATA_UNROLL
      for (int k = 0; k < quads; ++k) {
        if (q[k] >= whole) continue;
        vec::word_t<access> w[count];
        std::memcpy(w, v[k], bytes);
        std::byte* at = reinterpret_cast<std::byte*>(dst.template leaf_ptr<L>(4 * q[k]));
        STRATA_UNROLL
        for (std::size_t a = 0; a < count; ++a) vec::store<access>(at + a * access, w[a]);
      }
    }
  }
  template <std::size_t B>
  struct batch_holder : quad_holder<T, quads, std::make_index_sequence<leaves>> {
    static constexpr std::size_t batch = B;
  };
  template <std::size_t B, class M, class I>
  STRATA_HD static void move_batch(const basic_view<const T, M>& src, const basic_view<T, M>& dst, index_t whole, const index_t (&q)[quads],
                                   const I (&j)[quads][4], const bool (&ok)[quads][4]) {
    batch_holder<B> h;
    [&]<std::size_t... L>(std::index_sequence<L...>) {
      (load_leaf<L>(h, src, whole, q, j, ok), ...);
      (store_leaf<L>(h, dst, whole, q), ...);
    }(std::make_index_sequence<leaves>{});
  }
};

#if defined(STRATA_BACKEND_CUDA)
template <class T, class M, class I>
__global__ void __launch_bounds__(gather_columns::threads) gather_columns_kernel(basic_view<const T, M> src, const I* idx, index_t n, basic_view<T, M> dst,
                                                                                 path_gate gate, index_check check, unsigned long long* next) {
  if (!gate.open()) return;
  for_each_span((n + gather_columns::span - 1) / gather_columns::span, next,
                [&](index_t b) { gather_columns::run(src, idx, n, dst, b, int(threadIdx.x), check); });
}
template <class T, class M, class I, bool VecIdx, std::size_t Held = gather_held_bytes, int MinBlocks = 1>
__global__ void __launch_bounds__(gather_quads<T, Held>::threads, MinBlocks)
    gather_quads_kernel(basic_view<const T, M> src, const I* idx, index_t n, basic_view<T, M> dst, path_gate gate, index_check check,
                        unsigned long long* next) {
  if (!gate.open()) return;
  using g = gather_quads<T, Held>;
  if (blockIdx.x == 0) g::tail(src, idx, n, dst, int(threadIdx.x), check);
  for_each_span((n / 4 + g::span - 1) / g::span, next, [&](index_t b) { g::template run<VecIdx>(src, idx, n, dst, b, int(threadIdx.x), check); });
}
#endif

/// How a columns gather read its indices and wrote its columns.
enum class columns_path { quads, quads_scalar_indices, records_one_by_one };

/// dst records [0, n) = src records idx[i], read column by column (gather_quads where the record
/// and the destination allow, gather_columns otherwise); indices checked against src.size().
/// Returns the path taken (known on the host: it depends on types and alignment only).
template <class T, class M, class I>
columns_path gather_soa_to_soa(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream,
                               unsigned long long* first_bad, path_gate gate = {}, unsigned long long* counter = nullptr) {
  const index_check check{src.size(), first_bad};
  using g = gather_quads<T>;
  if constexpr (g::template applies<M>) {
    if (dst.vector_aligned()) {
      const bool vec_idx = g::indices_aligned(idx);
      if (n == 0) return vec_idx ? columns_path::quads : columns_path::quads_scalar_indices;
      const index_t blocks = std::max<index_t>(1, (n / 4 + g::span - 1) / g::span);
      auto launch = [&]<bool VecIdx>() {
#if defined(STRATA_BACKEND_CUDA)
        constexpr auto kernel = &gather_quads_kernel<T, M, I, VecIdx>;
        const index_t resident = resident_blocks<kernel>(g::threads);
        const index_t grid = std::max<index_t>(1, std::min({blocks, resident, gather_grid_cap > 0 ? gather_grid_cap : resident}));
        const span_counter next(grid, blocks, stream, counter);
        kernel<<<unsigned(grid), g::threads, 0, stream>>>(src, idx, n, dst, gate, check, next.get());
        check_launch("strata gather (columns) kernel launch");
#else
        (void)stream, (void)counter;
        if (!gate.open()) return;
        for (int t = 0; t < 4; ++t) g::tail(src, idx, n, dst, t, check);
        STRATA_PARALLEL_FOR_IF(blocks > 4)
        for (index_t b = 0; b < blocks; ++b)
          for (int t = 0; t < g::threads; ++t) g::template run<VecIdx>(src, idx, n, dst, b, t, check);
#endif
      };
      if (vec_idx) launch.template operator()<true>();
      else launch.template operator()<false>();
      return vec_idx ? columns_path::quads : columns_path::quads_scalar_indices;
    }
  }
  if (n == 0) return columns_path::records_one_by_one;
  const index_t blocks = (n + gather_columns::span - 1) / gather_columns::span;
#if defined(STRATA_BACKEND_CUDA)
  // As many blocks as the device keeps resident (the occupancy API, once per kernel), taking the
  // spans in order: a closed gate costs one wave of blocks that return at once.
  const index_t resident = resident_blocks<&gather_columns_kernel<T, M, I>>(gather_columns::threads);
  const index_t grid = std::max<index_t>(1, std::min({blocks, resident, gather_grid_cap > 0 ? gather_grid_cap : resident}));
  const span_counter next(grid, blocks, stream, counter);
  gather_columns_kernel<T, M, I><<<unsigned(grid), gather_columns::threads, 0, stream>>>(src, idx, n, dst, gate, check, next.get());
  check_launch("strata gather (columns) kernel launch");
#else
  (void)stream, (void)counter;
  if (!gate.open()) return columns_path::records_one_by_one;
  STRATA_PARALLEL_FOR_IF(blocks > 4)
  for (index_t b = 0; b < blocks; ++b)
    for (int t = 0; t < gather_columns::threads; ++t) gather_columns::run(src, idx, n, dst, b, t, check);
#endif
  return columns_path::records_one_by_one;
}

}  // namespace strata::detail
