// SPDX-License-Identifier: Apache-2.0
// Splitting records by a small integer key (a destination rank) on the device, for migration. A
// counting pass reads what the key needs once and counts, per block of records, the picked records
// of every key; one scan of those counts places every record, both in index order and grouped by
// key; the host copies one small head (how many were picked, how many of each key, the range of
// the keys) and then chooses a writing pass: the picked indices (in order and grouped by key), or
// the records themselves (the kept ones in order into one container, the picked ones grouped by key
// into another). No sort by key is needed, and the head is the only thing that crosses to the host.
#pragma once

#include <strata/config.hpp>
#include <strata/algorithm/select_indices.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/scratch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_scan.cuh>
#endif

namespace strata {
namespace detail {

/// The most keys a split counts one by one: every block keeps a count per key and per (item, warp)
/// in shared memory. More keys (ranks) than this are listed in index order only (keys = 0).
inline constexpr int split_max_keys = 32;

/// Records of at most this many bytes per thread (pick_items of them) are held in registers through
/// the split's ranking (the particle's 8 x 28 bytes are 56 registers); larger ones are read after it.
inline constexpr std::size_t split_early_bytes = 256;

/// The range of the picked keys travels as two unsigned words that both only go down (atomicMin),
/// so that one byte-wise memset to 0xff makes it empty: word 0 is the smallest key biased (key ^
/// 0x80000000, whose unsigned order is the keys' signed order), word 1 the largest biased and
/// complemented.
STRATA_HD constexpr std::uint32_t bias_key(std::int32_t k) { return std::uint32_t(k) ^ 0x80000000u; }
STRATA_HD constexpr std::int32_t unbias_key(std::uint32_t u) { return std::int32_t(u ^ 0x80000000u); }

/// What the counting pass reports. picked counts the picked records whose key lies in [0, keys)
/// (all picked records when keys = 0), the ones the writing passes place; range covers every picked
/// record, so a key outside [0, keys) shows there (lo > hi: nothing was picked).
struct split_counts {
  std::int64_t picked = 0;
  std::int32_t lo = 0, hi = -1;
  std::vector<std::int64_t> per_key;  // keys entries
  /// The one key with picked records, or -1 (none, or several): then the picked records in index
  /// order are already grouped by key, and a split or list needs no ranking by key.
  std::int32_t single_key() const {
    std::int32_t only = -1;
    for (std::size_t j = 0; j < per_key.size(); ++j)
      if (per_key[j] != 0) {
        if (only >= 0) return -1;
        only = std::int32_t(j);
      }
    return only;
  }
};
/// The head's size in 8-byte words: [0] picked, [1] the range's two words, [2 + j] key j's count.
constexpr std::size_t split_head_words(int keys) { return 2 + std::size_t(keys); }
inline split_counts decode_split_head(const std::int64_t* head, int keys) {
  split_counts c;
  c.picked = head[0];
  std::uint32_t words[2];
  static_assert(sizeof words == sizeof(std::int64_t));
  std::memcpy(words, &head[1], sizeof words);
  c.lo = unbias_key(words[0]), c.hi = unbias_key(~words[1]);
  c.per_key.assign(head + 2, head + 2 + keys);
  return c;
}

STRATA_HD inline bool key_in(std::int32_t key, int keys) { return keys == 0 || (key >= 0 && key < keys); }

#if defined(STRATA_BACKEND_CUDA)
/// The smallest and largest key among the block's picked records, in thread 0 (lo > hi when none).
__device__ inline void split_block_key_range(const bool (&f)[pick_items], const std::int32_t (&key)[pick_items], std::int32_t& lo,
                                             std::int32_t& hi) {
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
/// The lanes of the warp whose item is placed (in) and carries the same key as this lane's (0 when
/// this lane's is not placed). One ballot per distinct key among the placed items of the warp,
/// which is one or two when records move between neighbouring ranks.
__device__ inline unsigned same_key_lanes(bool in, std::int32_t key) {
  unsigned left = __ballot_sync(0xffffffffu, in), mine = 0;
  while (left != 0) {
    const std::int32_t k = __shfl_sync(0xffffffffu, key, __ffs(left) - 1);
    const unsigned group = __ballot_sync(0xffffffffu, in && key == k);
    if (in && key == k) mine = group;
    left &= ~group;
  }
  return mine;
}
/// Each placed item's place among the block's placed records of its key, in record order (item k,
/// warp, lane), into rank. Lanes of a warp with the same key find each other (same_key_lanes);
/// per-(key, item, warp) counts are scanned in record order by one thread per key.
__device__ inline void block_key_ranks(const bool (&in)[pick_items], const std::int32_t (&key)[pick_items], int keys, unsigned (&rank)[pick_items]) {
  constexpr int warps = pick_threads / 32;
  __shared__ unsigned counts[split_max_keys][pick_items][warps];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, below = (1u << lane) - 1u;
  for (int e = int(threadIdx.x); e < keys * pick_items * warps; e += pick_threads) (&counts[0][0][0])[e] = 0;
  __syncthreads();
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) {
    rank[k] = 0;
    const unsigned same = same_key_lanes(in[k], key[k]);
    if (in[k]) {
      rank[k] = unsigned(__popc(same & below));
      if (rank[k] == 0) counts[key[k]][k][warp] = unsigned(__popc(same));
    }
  }
  __syncthreads();
  if (int(threadIdx.x) < keys) {
    unsigned run = 0;
    for (int k = 0; k < pick_items; ++k)
      for (int w = 0; w < warps; ++w) {
        const unsigned c = counts[threadIdx.x][k][w];
        counts[threadIdx.x][k][w] = run, run += c;
      }
  }
  __syncthreads();
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (in[k]) rank[k] += counts[key[k]][k][warp];
}

/// Block b's counts: counts[j * blocks + b] = its picked records of key j (j < keys), and
/// counts[keys * blocks + b] = all its picked records with a key in [0, keys) (every picked record
/// when keys = 0). The range narrows by at most one atomic pair per block, skipped when the
/// block's keys lie inside the range already seen.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) count_split_kernel(Pick pick, index_t n, int keys, index_t blocks, std::int64_t* counts,
                                                                   std::uint32_t* range) {
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, index_t(blockIdx.x), f, key);
  __shared__ unsigned hist[split_max_keys + 1];
  if (int(threadIdx.x) <= keys) hist[threadIdx.x] = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32, below = (1u << lane) - 1u;
  unsigned c = 0;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) {
    const bool in = f[k] && key_in(key[k], keys);
    c += in;
    // One shared atomic per key present in the warp, by its first lane.
    if (keys > 0) {
      const unsigned same = same_key_lanes(in, key[k]);
      if (in && (same & below) == 0) atomicAdd(&hist[key[k]], unsigned(__popc(same)));
    }
  }
  c = __reduce_add_sync(0xffffffffu, c);
  if (lane == 0) atomicAdd(&hist[keys], c);
  std::int32_t lo, hi;
  split_block_key_range(f, key, lo, hi);  // synchronizes the block: hist is complete
  if (int(threadIdx.x) <= keys) counts[index_t(threadIdx.x) * blocks + blockIdx.x] = hist[threadIdx.x];
  if (threadIdx.x == 0 && lo <= hi) {
    const volatile std::uint32_t* seen = range;
    if (bias_key(lo) < seen[0]) atomicMin(range, bias_key(lo));
    if (~bias_key(hi) < seen[1]) atomicMin(range + 1, ~bias_key(hi));
  }
}
/// The head from the scanned counts (ends = inclusive scan of counts in row-major order, so row j's
/// total is the difference of the scan at the ends of rows j and j - 1).
__global__ inline void finish_split_kernel(const std::int64_t* ends, int keys, index_t blocks, std::int64_t* head) {
  const int j = int(threadIdx.x);
  if (j > keys) return;
  const std::int64_t total = ends[(index_t(j) + 1) * blocks - 1] - (j > 0 ? ends[index_t(j) * blocks - 1] : 0);
  head[j == keys ? 0 : 2 + j] = total;
}
/// Where block b's records go: picked (in key range) records start at `picked` in index order, and
/// key j's at key_start[j] (shared memory, set here); kept records start at `kept`.
struct split_block_starts {
  std::int64_t picked, kept;
  const std::int64_t* key_start;
};
__device__ inline split_block_starts block_starts(const std::int64_t* counts, const std::int64_t* ends, int keys, index_t blocks, index_t b) {
  __shared__ std::int64_t starts[split_max_keys];
  if (int(threadIdx.x) < keys) starts[threadIdx.x] = ends[index_t(threadIdx.x) * blocks + b] - counts[index_t(threadIdx.x) * blocks + b];
  __syncthreads();
  const index_t row = index_t(keys) * blocks;
  const std::int64_t before = ends[row + b] - counts[row + b] - (keys > 0 ? ends[row - 1] : 0);
  return {before, b * pick_block_records - before, starts};
}
/// Blocks with placed picks write their indices (first + record) in index order to ascending and,
/// when by_key is given, grouped by key (index order within a key) to by_key.
template <class Pick>
__global__ void __launch_bounds__(pick_threads) list_split_kernel(Pick pick, index_t n, int keys, index_t blocks, const std::int64_t* counts,
                                                                  const std::int64_t* ends, std::int64_t first, std::int64_t* ascending,
                                                                  std::int64_t* by_key) {
  const index_t b = index_t(blockIdx.x);
  if (counts[index_t(keys) * blocks + b] == 0) return;
  bool f[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, b, f, key);
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) f[k] = f[k] && key_in(key[k], keys);
  const split_block_starts at = block_starts(counts, ends, keys, blocks, b);
  place_block_picks(f, b, first, at.picked, ascending);
  if (by_key == nullptr) return;
  unsigned rank[pick_items];
  block_key_ranks(f, key, keys, rank);
  const index_t base = b * pick_block_records + threadIdx.x;
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k)
    if (f[k]) by_key[at.key_start[key[k]] + rank[k]] = first + base + k * pick_threads;
}
/// Every record of `from` to `kept` (kept records, index order) or `picked` (picked records grouped
/// by key, index order within a key), one streaming pass; picked records with a key outside [0,
/// keys) are written nowhere (the caller refuses those before it splits). single_key >= 0 (every
/// picked record has that key) or keys = 0 (no grouping): picked records go in index order and no
/// ranking by key runs.
template <class Pick, class From, class To, class ToPicked>
__global__ void __launch_bounds__(pick_threads) split_records_kernel(Pick pick, index_t n, int keys, index_t blocks, const std::int64_t* counts,
                                                                     const std::int64_t* ends, std::int32_t single_key, From from, To kept,
                                                                     ToPicked picked_to) {
  const index_t b = index_t(blockIdx.x);
  bool f[pick_items], stay[pick_items];
  std::int32_t key[pick_items];
  block_picks(pick, n, b, f, key);
  const index_t base = b * pick_block_records + threadIdx.x;
  // Small records are read into registers before the ranking, so that their loads are in flight
  // while the block ranks and synchronizes instead of starting after it, item by item, behind the
  // stores of the items before them (which may alias).
  using record = decltype(from.load(index_t(0)));
  constexpr bool early = sizeof(record) * pick_items <= split_early_bytes;
  record rec[early ? pick_items : 1];
  if constexpr (early) {
    STRATA_UNROLL
    for (int k = 0; k < pick_items; ++k)
      if (base + k * pick_threads < n) rec[k] = from.load(base + k * pick_threads);
  }
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) stay[k] = base + k * pick_threads < n && !f[k], f[k] = f[k] && key_in(key[k], keys);
  const split_block_starts at = block_starts(counts, ends, keys, blocks, b);
  unsigned pos[pick_items], rank[pick_items];
  block_ranks(stay, pos);
  const bool one_group = single_key >= 0 || keys == 0;
  if (one_group) block_ranks(f, rank);
  else block_key_ranks(f, key, keys, rank);
  STRATA_UNROLL
  for (int k = 0; k < pick_items; ++k) {
    const index_t i = base + k * pick_threads;
    if (!stay[k] && !f[k]) continue;
    // Two calls, not one on a choice of view: a reference to either kernel parameter would put
    // both views in local memory.
    const index_t to = stay[k] ? index_t(at.kept + pos[k]) : index_t((one_group ? at.picked : at.key_start[key[k]]) + rank[k]);
    const record r = [&] {
      if constexpr (early) return rec[k];
      else return from.load(i);
    }();
    if (stay[k]) kept.store(to, r);
    else picked_to.store(to, r);
  }
}
#endif

/// The counts of a keyed pick (keyed_pick) over records [0, n), between the counting pass and a
/// writing pass, all queued on one stream. Construction queues the counting pass and writes the
/// head (split_head_words(keys) words of device memory, decode_split_head reads a host copy);
/// list() or split() then queue a writing pass, at most one of them, with the same pick and the
/// same records. keys in [0, split_max_keys]; with keys = 0 nothing is counted per key and the
/// picked records are listed or split in index order only (a two-way stable partition).
class keyed_split {
 public:
  template <class Pick>
    requires keyed_pick<Pick>
  keyed_split(Pick pick, index_t n, int keys, std::int64_t* head, stream_t stream, const char* what, scratch_resource& r = scratch())
      : n_(std::max<index_t>(n, 0)), keys_(keys), blocks_((n_ + pick_block_records - 1) / pick_block_records), stream_(stream), what_(what) {
    if (keys < 0 || keys > split_max_keys)
      throw std::invalid_argument(std::string(what) + ": " + std::to_string(keys) + " keys; a split counts 0 to " + std::to_string(split_max_keys));
    if (blocks_ > index_t(0x7fffffff)) throw size_error(std::string(what) + ": " + std::to_string(n) + " records are more than one launch covers");
#if defined(STRATA_BACKEND_CUDA)
    // The range starts empty; with records, the counts come from finish_split_kernel.
    if (blocks_ == 0) cuda_check(cudaMemsetAsync(head, 0, sizeof(std::int64_t) * split_head_words(keys), stream), what);
    cuda_check(cudaMemsetAsync(head + 1, 0xff, sizeof(std::int64_t), stream), what);
    if (blocks_ == 0) return;
    const std::size_t cells = std::size_t(keys + 1) * std::size_t(blocks_);
    sums_ = std::make_unique<scratch_block>(sizeof(std::int64_t) * 2 * cells, stream, r);
    count_split_kernel<<<unsigned(blocks_), pick_threads, 0, stream>>>(pick, n_, keys, blocks_, counts(), reinterpret_cast<std::uint32_t*>(head + 1));
    check_launch(what);
    std::size_t temp = 0;
    cuda_check(cub::DeviceScan::InclusiveSum(nullptr, temp, counts(), ends(), cells, stream), what);
    scratch_block tmp(std::max<std::size_t>(temp, 1), stream, r);
    cuda_check(cub::DeviceScan::InclusiveSum(tmp.data(), temp, counts(), ends(), cells, stream), what);
    finish_split_kernel<<<1, split_max_keys + 1, 0, stream>>>(ends(), keys, blocks_, head);
    check_launch(what);
#else
    (void)r;
    std::uint32_t lo = 0xffffffffu, hi = 0xffffffffu;
    std::int64_t picked_in = 0;
    std::vector<std::int64_t> per_key(std::size_t(keys), 0);
    for (index_t i = 0; i < n_; ++i) {
      std::int32_t key = 0;
      if (!picked(pick, i, key)) continue;
      lo = std::min(lo, bias_key(key)), hi = std::min(hi, ~bias_key(key));
      if (!key_in(key, keys)) continue;
      ++picked_in;
      if (keys > 0) ++per_key[std::size_t(key)];
    }
    head[0] = picked_in;
    std::uint32_t words[2] = {lo, hi};
    std::memcpy(&head[1], words, sizeof words);
    std::copy(per_key.begin(), per_key.end(), head + 2);
    key_start_.assign(std::size_t(keys), 0);
    for (int j = 1; j < keys; ++j) key_start_[std::size_t(j)] = key_start_[std::size_t(j - 1)] + per_key[std::size_t(j - 1)];
#endif
  }
  keyed_split(const keyed_split&) = delete;
  keyed_split& operator=(const keyed_split&) = delete;

  /// The picked records' indices (first + i) in index order into ascending and, when by_key is given
  /// (keys > 0), grouped by key into by_key: head[0] entries each. (With a single key the two are
  /// the same: pass no by_key.)
  template <class Pick>
  void list(Pick pick, std::int64_t first, std::int64_t* ascending, std::int64_t* by_key) {
    if (by_key != nullptr && keys_ == 0) throw std::invalid_argument(std::string(what_) + ": a list grouped by key needs keys");
#if defined(STRATA_BACKEND_CUDA)
    if (blocks_ == 0) return;
    list_split_kernel<<<unsigned(blocks_), pick_threads, 0, stream_>>>(pick, n_, keys_, blocks_, counts(), ends(), first, ascending, by_key);
    check_launch(what_);
#else
    std::vector<std::int64_t> at = key_start_;
    std::int64_t k = 0;
    for (index_t i = 0; i < n_; ++i) {
      std::int32_t key = 0;
      if (!picked(pick, i, key) || !key_in(key, keys_)) continue;
      ascending[k++] = first + i;
      if (by_key != nullptr) by_key[at[std::size_t(key)]++] = first + i;
    }
#endif
  }
  /// Record i of from to kept (n - picked records, index order) when the pick keeps it, else to
  /// picked (head[0] records, grouped by key; in index order when keys = 0); both are sized by the
  /// caller. No picked key may lie outside [0, keys) (the caller checks the head's range first).
  /// single_key: the head's split_counts::single_key(), which spares the ranking by key when it is
  /// not -1.
  template <class Pick, class From, class To, class ToPicked>
  void split(Pick pick, From from, To kept, ToPicked picked_to, std::int32_t single_key = -1) {
#if defined(STRATA_BACKEND_CUDA)
    if (blocks_ == 0) return;
    split_records_kernel<<<unsigned(blocks_), pick_threads, 0, stream_>>>(pick, n_, keys_, blocks_, counts(), ends(), single_key, from, kept, picked_to);
    check_launch(what_);
#else
    (void)single_key;
    std::vector<std::int64_t> at = key_start_;
    index_t stay = 0, in_order = 0;
    for (index_t i = 0; i < n_; ++i) {
      std::int32_t key = 0;
      if (!picked(pick, i, key)) kept.store(stay++, from.load(i));
      else if (keys_ == 0) picked_to.store(in_order++, from.load(i));
      else if (key_in(key, keys_)) picked_to.store(index_t(at[std::size_t(key)]++), from.load(i));
    }
#endif
  }

 private:
#if defined(STRATA_BACKEND_CUDA)
  std::int64_t* counts() const { return sums_->as<std::int64_t>(); }
  std::int64_t* ends() const { return counts() + std::size_t(keys_ + 1) * std::size_t(blocks_); }
  std::unique_ptr<scratch_block> sums_;  // per-block counts, then their inclusive scan
#else
  std::vector<std::int64_t> key_start_;
#endif
  index_t n_;
  int keys_;
  index_t blocks_;
  stream_t stream_;
  const char* what_;
};

}  // namespace detail
}  // namespace strata
