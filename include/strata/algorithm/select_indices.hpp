// The indices of the records a predicate picks, in order, on the device and without a host wait
// (select_indices_async): how migration lists the records that leave a shard.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/scratch.hpp>

#include <algorithm>
#include <cstdint>
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

}  // namespace detail
}  // namespace strata
