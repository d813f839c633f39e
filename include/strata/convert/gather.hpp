// Gathers into SoA by index, two ways (algorithm/sort.hpp chooses):
// - from padded AoS records: dst record i = src[idx[i]]. A random gather of each 4-byte column
//   costs a 32-byte memory sector per element; gathering whole padded records (one or two 16-byte
//   loads each) costs one or two sectors per record. Each warp gathers a tile of records into its
//   own slice of shared memory and writes them out column by column with 16-byte stores (the
//   transposes' store phase).
// - from SoA columns: each leaf read at the indices and stored to its column, no staging: one copy
//   of the records when consecutive indices stay within a sector, a sector per leaf per jump.
// A sampling pass over the indices (count_far_sample) and gather_costs give the choice without
// the host waiting: both ways' kernels take a path_gate and return at once when not chosen. The
// host backend runs the same phases lane by lane, and the same count.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/reflect/leaves.hpp>

#include <algorithm>
#include <atomic>
#include <string>

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
/// Strided as soa_to_aos_gated_kernel: resident blocks looping over the tiles, behind a gate.
template <class T, class Tile, bool Masked, class I, class M, bool Strided = false>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    gather_kernel(const std::byte* src, const I* idx, index_t n, basic_view<T, M> dst, path_gate gate, index_check check) {
  if (!gate.open()) return;
  __shared__ __align__(16) std::byte smem[Tile::slices][Tile::slice_bytes];
  const int lane = int(threadIdx.x % unsigned(Tile::lanes));  // unsigned: the compiler knows 0 <= lane < lanes
  std::byte* sm = smem[threadIdx.x / unsigned(Tile::lanes)];
  const index_t tiles = (n + Tile::records - 1) / Tile::records, t = index_t(blockIdx.x) * Tile::slices + index_t(threadIdx.x / unsigned(Tile::lanes));
  using tile = gather_tile<T, Tile, Masked, I>;
  if constexpr (Strided) {
    for (index_t u = t; u < tiles; u += index_t(gridDim.x) * Tile::slices) {
      tile::load(lane, sm, src, idx, n, u, check);
      tile_barrier<Tile>();
      tile::store(lane, sm, n, dst, u);
      tile_barrier<Tile>();
    }
  } else {
    if (t >= tiles) return;  // whole warps or blocks: no barrier is skipped
    tile::load(lane, sm, src, idx, n, t, check);
    tile_barrier<Tile>();
    tile::store(lane, sm, n, dst, t);
  }
}
#endif

/// dst records [0, n) = records src[idx[i]] of a padded AoS array (Stride bytes each, check.size
/// of them).
template <class T, std::size_t Stride, class I, class M>
void gather_aos_to_soa(const std::byte* src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream, const index_check& check,
                       path_gate gate = {}) {
  if (n == 0) return;
  using tile = warp_tile<T, Stride>;
  auto run = [&]<bool Masked>() {
#if defined(STRATA_BACKEND_CUDA)
    if (gate.far) {
      constexpr auto kernel = &gather_kernel<T, tile, Masked, I, M, true>;
      const index_t blocks = std::min<index_t>(transpose_grid<tile>(n), resident_blocks<kernel>(tile::threads));
      kernel<<<unsigned(blocks), tile::threads, 0, stream>>>(src, idx, n, dst, gate, check);
    } else {
      gather_kernel<T, tile, Masked, I, M><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, idx, n, dst, gate, check);
    }
    check_launch("gather kernel launch");
#else
    (void)stream;
    if (!gate.open()) return;
    using phases = gather_tile<T, tile, Masked, I>;
    emulate_warp_tiles<tile>(n, [&](int lane, std::byte* sm, index_t t) { phases::load(lane, sm, src, idx, n, t, check); },
                             [&](int lane, std::byte* sm, index_t t) { phases::store(lane, sm, n, dst, t); });
#endif
  };
  if (needs_mask(dst, 0, n)) run.template operator()<true>();
  else run.template operator()<false>();
}

/// What a gather costs in memory traffic beyond reading its indices and writing its leaves once,
/// in bytes of streamed DRAM traffic. A 32-byte sector read at a random place costs about three
/// times what 32 bytes read in sequence do (HBM moves 64-byte bursts and opens a row for each).
/// Reading each column at the indices ("columns") costs the leaves' bytes while consecutive
/// indices stay within a sector of each other (`near` records apart), and a random sector per
/// leaf at every index that jumps ("far"). Whole padded records ("records") cost a transpose of
/// the source to Stride-byte records (one read, one write) and then a record per index: Stride
/// bytes in sequence, or random sectors where the index jumps.
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
  /// The most far indices at which reading the columns moves no more than the records way does:
  /// `gathered` indices into a source of `source` records.
  static unsigned long long direct_limit(index_t source, index_t gathered) {
    if (far_columns <= far_records) return ~0ull;
    const unsigned long long records = (unsigned long long)source * (leaf_bytes + Stride) + (unsigned long long)gathered * (Stride - leaf_bytes);
    return records / (far_columns - far_records);
  }
};

/// Where the choice looks: one line of 32 consecutive indices (one 128-byte read of 4-byte
/// indices) in every group of 16 lines, at a place in the group that a hash of the group's number
/// picks (a pattern that repeats with the groups cannot hide from it), and in each such line the 31
/// pairs of neighbours. The choice only weighs costs, so a sample does: 1/16 of the indices are
/// read, where counting every pair cost as much time as a tenth of the gather itself.
struct far_sample {
  static constexpr index_t line = 32, lines = 16, group = line * lines;
  static index_t groups(index_t n) { return n / group; }
  /// Neighbour pairs the sample of n indices tests.
  static unsigned long long pairs(index_t n) { return (unsigned long long)groups(n) * (line - 1); }
  STRATA_HD static index_t line_start(index_t g) {
    return g * group + index_t(((unsigned long long)g + 1) * 0x9E3779B97F4A7C15ull >> 60) * line;
  }
  /// A limit on far indices among all n, scaled to the sample.
  static unsigned long long scaled(unsigned long long limit, index_t n) {
    if (limit == ~0ull || n == 0) return limit;
    return (unsigned long long)((long double)limit * (long double)pairs(n) / (long double)n);
  }
};

/// Whether idx[i] is more than `near` records away from idx[i - 1] (i > 0).
template <class I>
STRATA_HD bool far_pair(const I* idx, index_t i, index_t near) {
  const long long d = (long long)idx[i] - (long long)idx[i - 1];
  return d > near || d < -near;
}

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int far_count_threads = 256;
/// Sampled lines a warp reads before it tests any (their loads in flight together).
inline constexpr int far_count_unroll = 4;
/// A warp per sampled line: lane k reads the line's index k and compares it with lane k - 1's.
template <class I>
__global__ void __launch_bounds__(far_count_threads) far_count_kernel(const I* idx, index_t groups, index_t near, unsigned long long* far) {
  constexpr index_t warps = far_count_threads / 32;
  const int lane = int(threadIdx.x % 32);
  const index_t stride = index_t(gridDim.x) * warps;
  unsigned c = 0;
  for (index_t g0 = index_t(blockIdx.x) * warps + index_t(threadIdx.x / 32); g0 < groups; g0 += stride * far_count_unroll) {
    long long at[far_count_unroll];
    STRATA_UNROLL
    for (int k = 0; k < far_count_unroll; ++k) {
      const index_t g = g0 + k * stride;
      at[k] = g < groups ? (long long)idx[far_sample::line_start(g) + lane] : 0;
    }
    STRATA_UNROLL
    for (int k = 0; k < far_count_unroll; ++k) {
      const long long before = __shfl_up_sync(0xffffffffu, at[k], 1), d = at[k] - before;
      c += g0 + k * stride < groups && lane > 0 && (d > near || d < -near) ? 1u : 0u;
    }
  }
  c = __reduce_add_sync(0xffffffffu, c);
  if (lane == 0 && c) atomicAdd(far, (unsigned long long)c);
}
#endif

/// *far = how many of the pairs far_sample tests in idx[0, n) are more than `near` records apart
/// (device memory, stream ordered).
template <class I>
void count_far_sample(const I* idx, index_t n, index_t near, unsigned long long* far, stream_t stream) {
  const index_t groups = far_sample::groups(n);
#if defined(STRATA_BACKEND_CUDA)
  cuda_check(cudaMemsetAsync(far, 0, sizeof *far, stream), "cudaMemsetAsync (strata gather)");
  if (groups == 0) return;
  constexpr index_t per_block = index_t(far_count_threads / 32) * far_count_unroll;
  const device_shape& d = current_device_shape();
  const index_t full = index_t(d.sms) * std::max(1, d.max_threads_per_sm / far_count_threads);
  const index_t blocks = std::max<index_t>(1, std::min(full, (groups + per_block - 1) / per_block));
  far_count_kernel<I><<<unsigned(blocks), far_count_threads, 0, stream>>>(idx, groups, near, far);
  check_launch("strata gather (index sample)");
#else
  (void)stream;
  unsigned long long c = 0;
  STRATA_PARALLEL_SUM_IF(groups > 64, c)
  for (index_t g = 0; g < groups; ++g) {
    const index_t first = far_sample::line_start(g);
    for (index_t i = first + 1; i < first + far_sample::line; ++i) c += far_pair(idx, i, near) ? 1u : 0u;
  }
  *far = c;
#endif
}

/// Direct gather: dst[i] = src[idx[i]] leaf by leaf. A block takes `span` consecutive records and
/// its thread t records t, t + threads, ...: neighbouring threads read neighbouring indices, each
/// thread has per_thread records' loads in flight before its first store, and the blocks resident
/// at once cover one window of the output that moves through it in order (sources near the window,
/// such as a re-sort's moves to a neighbouring cell, are still in L2 when read again).
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

#if defined(STRATA_BACKEND_CUDA)
template <class T, class M, class I>
__global__ void __launch_bounds__(gather_columns::threads)
    gather_columns_kernel(basic_view<const T, M> src, const I* idx, index_t n, basic_view<T, M> dst, path_gate gate, index_check check) {
  if (!gate.open()) return;
  for (index_t b = blockIdx.x; b * gather_columns::span < n; b += gridDim.x) gather_columns::run(src, idx, n, dst, b, int(threadIdx.x), check);
}
#endif

/// dst records [0, n) = src records idx[i], read column by column (see gather_columns); indices
/// checked against src.size().
template <class T, class M, class I>
void gather_soa_to_soa(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream,
                       unsigned long long* first_bad, path_gate gate = {}) {
  const index_check check{src.size(), first_bad};
  if (n == 0) return;
  const index_t blocks = (n + gather_columns::span - 1) / gather_columns::span;
#if defined(STRATA_BACKEND_CUDA)
  // As many blocks as the device keeps resident (the occupancy API, once per kernel), striding
  // over the spans: a closed gate costs one wave of blocks that return at once.
  const index_t grid = std::max<index_t>(1, std::min(blocks, resident_blocks<&gather_columns_kernel<T, M, I>>(gather_columns::threads)));
  gather_columns_kernel<T, M, I><<<unsigned(grid), gather_columns::threads, 0, stream>>>(src, idx, n, dst, gate, check);
  check_launch("strata gather (columns) kernel launch");
#else
  (void)stream;
  if (!gate.open()) return;
  STRATA_PARALLEL_FOR_IF(blocks > 4)
  for (index_t b = 0; b < blocks; ++b)
    for (int t = 0; t < gather_columns::threads; ++t) gather_columns::run(src, idx, n, dst, b, t, check);
#endif
}

}  // namespace strata::detail
