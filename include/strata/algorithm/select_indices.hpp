// SPDX-License-Identifier: Apache-2.0
// The indices of the records a predicate picks, in order, on the device and without a host wait
// (select_indices_async): how migration lists the records that fill the holes leaving records
// leave. The block-level pieces (coalesced picks, in-order placement) also serve split_by_key.hpp.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/scratch.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
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
/// Selections of at most this many blocks' records run in one block, block after block.
inline constexpr index_t serial_pick_blocks = 8;

/// A pick by key: record i is picked when key(i) != keep (e.g. the key is a record's destination
/// rank and keep the rank it is on); split_by_key.hpp counts and groups such picks by key.
template <class Pick>
concept keyed_pick = requires(const Pick& p, index_t i) {
  { p.key(i) } -> std::convertible_to<std::int32_t>;
  { p.keep } -> std::convertible_to<std::int32_t>;
};

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
/// Each flagged item's place among the block's flagged records, in record order, into pos; returns
/// how many are flagged (in every thread). Record order within a block is (item k, warp, lane), so
/// per-(k, warp) ballot counts scanned in that order place every record.
__device__ inline unsigned block_ranks(const bool (&f)[pick_items], unsigned (&pos)[pick_items]) {
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
  for (int k = 0; k < pick_items; ++k) pos[k] = offsets[k][warp] + unsigned(__popc(ballots[k] & below));
  const unsigned t = total;
  __syncthreads();  // offsets and total are free for the next call
  return t;
}
/// Writes the indices (first + record) of block b's picked records to out[start], out[start + 1],
/// ... in increasing order and returns how many (in every thread).
__device__ inline unsigned place_block_picks(const bool (&f)[pick_items], index_t b, std::int64_t first, std::int64_t start, std::int64_t* out) {
  const index_t base = b * pick_block_records + threadIdx.x;
  unsigned pos[pick_items];
  const unsigned total = block_ranks(f, pos);
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (f[k]) out[start + pos[k]] = first + base + k * pick_threads;
  return total;
}

/// One count per block of the records pick picks.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) count_picks_kernel(Pick pick, index_t n, std::int64_t* counts) {
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, index_t(blockIdx.x), f, key);
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
/// All of a small selection (at most serial_pick_blocks blocks' worth of records) in one block and
/// one launch: block after block of picks placed behind the ones before, then the count; no scan
/// and no scratch. A few serial rounds of coalesced loads cost less than the three launches, the
/// scan's scratch and their host calls that the general path takes (migrate's holes are this size).
template <class Pick>
__global__ void __launch_bounds__(pick_threads) pick_serial_kernel(Pick pick, index_t n, std::int64_t first, std::int64_t* out, std::int64_t* count) {
  std::int64_t placed = 0;
  for (index_t b = 0; b * pick_block_records < n; ++b) {
    bool f[pick_items];
    std::int32_t key[pick_items];
    block_picks(pick, n, b, f, key);
    placed += place_block_picks(f, b, first, placed, out);  // block_ranks synchronizes: no race on placed
  }
  if (threadIdx.x == 0) *count = placed;
}
#endif

/// The scratch of one select_indices_async over n records, taken before the caller commits to
/// the work (migrate takes it before the ranks meet, so that no rank fails after they have).
struct select_indices_workspace {
  std::optional<scratch_block> sums, tmp;
  std::size_t temp = 0;
  index_t blocks = 0;
  select_indices_workspace(index_t n, stream_t stream, const char* what, scratch_resource& r = scratch()) {
#if defined(STRATA_BACKEND_CUDA)
    if (n <= serial_pick_blocks * pick_block_records) return;
    blocks = (n + pick_block_records - 1) / pick_block_records;
    if (blocks > index_t(0x7fffffff)) throw size_error(std::string(what) + ": " + std::to_string(n) + " records are more than one launch covers");
    sums.emplace(sizeof(std::int64_t) * 2 * std::size_t(blocks), stream, r);
    std::int64_t* counts = sums->as<std::int64_t>();
    cuda_check(cub::DeviceScan::InclusiveSum(nullptr, temp, counts, counts + blocks, blocks, stream), what);
    tmp.emplace(std::max<std::size_t>(temp, 1), stream, r);
#else
    (void)n, (void)stream, (void)what, (void)r;
#endif
  }
};

/// The indices first + i, i in [0, n), for which pick(i) is true, in increasing order, into out;
/// how many into *count (device memory), stream ordered, nothing waits. For predicates that read a
/// column or two and pick a few records: a counting pass (several coalesced loads in flight per
/// thread, one count per block), a scan of the block counts, and a writing pass that only the
/// blocks with picked records redo, so a sparse pick costs about one read of what pick reads; at
/// most serial_pick_blocks * pick_block_records records take one launch (pick_serial_kernel).
/// With the scratch a select_indices_workspace of n records took: allocates nothing.
template <class Pick>
void select_indices_async(Pick pick, index_t n, std::int64_t first, std::int64_t* out, std::int64_t* count, stream_t stream, const char* what,
                          select_indices_workspace& ws) {
#if defined(STRATA_BACKEND_CUDA)
  // A small selection (none too: its count is written the same way) is a single launch; migrate
  // lists the records that fill its holes this way.
  if (n <= serial_pick_blocks * pick_block_records) {
    pick_serial_kernel<<<1, pick_threads, 0, stream>>>(pick, std::max<index_t>(n, 0), first, out, count);
    check_launch(what);
    return;
  }
  const index_t blocks = ws.blocks;
  std::int64_t* counts = ws.sums->as<std::int64_t>();
  std::int64_t* ends = counts + blocks;
  count_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, counts);
  check_launch(what);
  std::size_t temp = ws.temp;
  cuda_check(cub::DeviceScan::InclusiveSum(ws.tmp->data(), temp, counts, ends, blocks, stream), what);
  write_picks_kernel<<<unsigned(blocks), pick_threads, 0, stream>>>(pick, n, first, counts, ends, out);
  check_launch(what);
  copy_bytes_async(count, ends + (blocks - 1), sizeof(std::int64_t), stream);
#else
  (void)stream, (void)what, (void)ws;
  std::int64_t k = 0;
  for (index_t i = 0; i < n; ++i) {
    std::int32_t key = 0;
    if (picked(pick, i, key)) out[k++] = first + i;
  }
  *count = k;
#endif
}
/// The same, its scratch taken here from r.
template <class Pick>
void select_indices_async(Pick pick, index_t n, std::int64_t first, std::int64_t* out, std::int64_t* count, stream_t stream, const char* what,
                          scratch_resource& r = scratch()) {
  select_indices_workspace ws(n, stream, what, r);
  select_indices_async(pick, n, first, out, count, stream, what, ws);
}

}  // namespace detail
}  // namespace strata
