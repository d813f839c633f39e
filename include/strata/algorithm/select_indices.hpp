// The indices of the records a predicate picks, in order, on the device and without a host wait
// (select_indices_async): how migration lists the records that leave a shard, and, for a pick by
// key, the range of the picked records' keys in the same pass.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/scratch.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_scan.cuh>
#endif

namespace strata {
namespace detail {

/// select_indices_async's shape: each block looks at pick_threads * pick_items records, item k of
/// thread t being record k * pick_threads + t of the block, so every load instruction of a warp is
/// coalesced and each thread has pick_items loads in flight.
inline constexpr int pick_threads = 256, pick_items = 8;
inline constexpr index_t pick_block_records = index_t(pick_threads) * pick_items;

/// A pick by key: record i is picked when key(i) != keep (e.g. the key is a record's destination
/// rank and keep the rank it is on), and select_indices_async also reports the smallest and largest
/// key among the picked records, which costs nothing past the pick itself.
template <class Pick>
concept keyed_pick = requires(const Pick& p, index_t i) {
  { p.key(i) } -> std::convertible_to<std::int32_t>;
  { p.keep } -> std::convertible_to<std::int32_t>;
};
/// A keyed pick's key range in device memory: two unsigned words that both only go down
/// (atomicMin), so that one byte-wise memset to 0xff makes the range empty. Word 0 is the smallest
/// key biased (key ^ 0x80000000, whose unsigned order is the keys' signed order), word 1 the
/// largest key biased and complemented.
STRATA_HD constexpr std::uint32_t bias_key(std::int32_t k) { return std::uint32_t(k) ^ 0x80000000u; }
STRATA_HD constexpr std::int32_t unbias_key(std::uint32_t u) { return std::int32_t(u ^ 0x80000000u); }
struct picked_key_range {
  std::int32_t lo, hi;  // lo > hi: nothing was picked
};
/// The range two such words hold (copied to the host).
STRATA_HD constexpr picked_key_range decode_key_range(const std::uint32_t* words) { return {unbias_key(words[0]), unbias_key(~words[1])}; }

/// Whether pick picks record i; a keyed pick also leaves record i's key in `key`.
template <class Pick>
STRATA_HD bool picked(const Pick& pick, index_t i, std::int32_t& key) {
  if constexpr (keyed_pick<Pick>) {
    key = std::int32_t(pick.key(i));
    return key != std::int32_t(pick.keep);
  } else {
    (void)key;
    return bool(pick(i));
  }
}

#if defined(STRATA_BACKEND_CUDA)
/// The picks of this thread's records in block b: item k is record b * pick_block_records + k *
/// pick_threads + thread, so every load instruction of a warp is coalesced.
template <class Pick>
__device__ void block_picks(const Pick& pick, index_t n, index_t b, bool (&f)[pick_items], std::int32_t (&key)[pick_items]) {
  const index_t base = b * pick_block_records + threadIdx.x;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) f[k] = base + k * pick_threads < n && picked(pick, base + k * pick_threads, key[k]);
}
/// The smallest and largest key among the block's picked records, in thread 0 (lo > hi when none).
__device__ inline void block_key_range(const bool (&f)[pick_items], const std::int32_t (&key)[pick_items], std::int32_t& lo, std::int32_t& hi) {
  __shared__ std::int32_t warp_lo[pick_threads / 32], warp_hi[pick_threads / 32];
  lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (f[k]) lo = key[k] < lo ? key[k] : lo, hi = key[k] > hi ? key[k] : hi;
  lo = __reduce_min_sync(0xffffffffu, lo);
  hi = __reduce_max_sync(0xffffffffu, hi);
  if (threadIdx.x % 32 == 0) warp_lo[threadIdx.x / 32] = lo, warp_hi[threadIdx.x / 32] = hi;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < pick_threads / 32; ++w) lo = warp_lo[w] < lo ? warp_lo[w] : lo, hi = warp_hi[w] > hi ? warp_hi[w] : hi;
}
/// Writes the indices (first + record) of block b's picked records to out[start], out[start + 1],
/// ... in increasing order and returns how many (in every thread). Record order within a block is
/// (item k, warp, lane), so per-(k, warp) ballot counts scanned in that order place every index.
__device__ inline unsigned place_block_picks(const bool (&f)[pick_items], index_t b, std::int64_t first, std::int64_t start, std::int64_t* out) {
  const index_t base = b * pick_block_records + threadIdx.x;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __shared__ unsigned offsets[pick_items][pick_threads / 32];
  __shared__ unsigned total;
  unsigned ballots[pick_items];
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
    total = run;
  }
  __syncthreads();
  const unsigned below = (1u << lane) - 1u;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (f[k]) out[start + offsets[k][warp] + unsigned(__popc(ballots[k] & below))] = first + base + k * pick_threads;
  return total;
}

/// One count per block of the records pick picks; a keyed pick also narrows range (smallest, largest
/// picked key, biased) by at most one atomic pair per block, skipped when the block's keys lie
/// inside the range already seen.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) count_picks_kernel(Pick pick, index_t n, std::int64_t* counts, std::uint32_t* range) {
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, index_t(blockIdx.x), f, key);
  unsigned c = 0;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) c += f[k];
  c = __reduce_add_sync(0xffffffffu, c);
  __shared__ unsigned warp_sums[pick_threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = c;
  std::int32_t lo = 0, hi = 0;
  if constexpr (keyed_pick<Pick>) block_key_range(f, key, lo, hi);  // synchronizes the block
  else __syncthreads();
  if (threadIdx.x == 0) {
    std::int64_t sum = 0;
    for (int w = 0; w < pick_threads / 32; ++w) sum += warp_sums[w];
    counts[blockIdx.x] = sum;
    if constexpr (keyed_pick<Pick>) {
      if (sum != 0) {
        const volatile std::uint32_t* seen = range;
        if (bias_key(lo) < seen[0]) atomicMin(range, bias_key(lo));
        if (~bias_key(hi) < seen[1]) atomicMin(range + 1, ~bias_key(hi));
      }
    }
  }
}
/// Blocks that picked records redo the picks and write their indices in increasing order.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) write_picks_kernel(Pick pick, index_t n, std::int64_t first, const std::int64_t* counts,
                                                                   const std::int64_t* ends, std::int64_t* out) {
  const std::int64_t total = counts[blockIdx.x];
  if (total == 0) return;
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, index_t(blockIdx.x), f, key);
  place_block_picks(f, index_t(blockIdx.x), first, ends[blockIdx.x] - total, out);
}
/// All of a selection of at most pick_block_records records in one block and one launch: the picks,
/// their indices, the count and (keyed) the key range, with no scan and no copy behind it.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) pick_one_block_kernel(Pick pick, index_t n, std::int64_t first, std::int64_t* out,
                                                                      std::int64_t* count, std::uint32_t* range) {
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, 0, f, key);
  const unsigned total = place_block_picks(f, 0, first, 0, out);
  std::int32_t lo = 0, hi = 0;
  if constexpr (keyed_pick<Pick>) block_key_range(f, key, lo, hi);
  if (threadIdx.x == 0) {
    *count = total;
    if constexpr (keyed_pick<Pick>) {
      range[0] = total != 0 ? bias_key(lo) : 0xffffffffu;
      range[1] = total != 0 ? ~bias_key(hi) : 0xffffffffu;
    }
  }
}
#endif

/// The indices first + i, i in [0, n), for which pick(i) is true, in increasing order, into out;
/// how many into *count (device memory), stream ordered, nothing waits. For predicates that read a
/// column or two and pick a few records: a counting pass (several coalesced loads in flight per
/// thread, one count per block), a scan of the block counts, and a writing pass that only the
/// blocks with picked records redo, so a sparse pick costs about one read of what pick reads; at
/// most pick_block_records records take one launch. A keyed pick (keyed_pick) also writes the
/// smallest and largest picked key to key_range[0..1] (device memory; decode_key_range reads them;
/// with nothing picked, lo > hi).
template <class Pick>
void select_indices_async(Pick pick, index_t n, std::int64_t first, std::int64_t* out, std::int64_t* count, stream_t stream, const char* what,
                          std::uint32_t* key_range = nullptr) {
  if (keyed_pick<Pick> && key_range == nullptr)
    throw std::invalid_argument(std::string(what) + ": a pick by key needs device memory for the range of its keys");
#if defined(STRATA_BACKEND_CUDA)
  // A selection of one block (none too: its count and range are written the same way) is a single
  // launch; migrate lists the records that fill its holes this way.
  if (n <= pick_block_records) {
    pick_one_block_kernel<<<1, pick_threads, 0, stream>>>(pick, std::max<index_t>(n, 0), first, out, count, key_range);
    check_launch(what);
    return;
  }
  if constexpr (keyed_pick<Pick>) {
    cuda_check(cudaMemsetAsync(key_range, 0xff, 2 * sizeof(std::uint32_t), stream), what);
  }
  const index_t blocks = (n + pick_block_records - 1) / pick_block_records;
  if (blocks > index_t(0x7fffffff)) throw size_error(std::string(what) + ": " + std::to_string(n) + " records are more than one launch covers");
  scratch_block sums(sizeof(std::int64_t) * 2 * std::size_t(blocks), stream);
  std::int64_t* counts = sums.as<std::int64_t>();
  std::int64_t* ends = counts + blocks;
  count_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, counts, key_range);
  check_launch(what);
  std::size_t temp = 0;
  cuda_check(cub::DeviceScan::InclusiveSum(nullptr, temp, counts, ends, blocks, stream), what);
  scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
  cuda_check(cub::DeviceScan::InclusiveSum(tmp.data(), temp, counts, ends, blocks, stream), what);
  write_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, first, counts, ends, out);
  check_launch(what);
  copy_bytes_async(count, ends + (blocks - 1), sizeof(std::int64_t), stream);
#else
  (void)stream;
  std::int64_t k = 0;
  std::uint32_t lo = 0xffffffffu, hi = 0xffffffffu;
  for (index_t i = 0; i < n; ++i) {
    std::int32_t key = 0;
    if (picked(pick, i, key)) {
      out[k++] = first + i;
      if constexpr (keyed_pick<Pick>) lo = std::min(lo, bias_key(key)), hi = std::min(hi, ~bias_key(key));
    }
  }
  *count = k;
  if constexpr (keyed_pick<Pick>) key_range[0] = lo, key_range[1] = hi;
#endif
}

}  // namespace detail
}  // namespace strata
