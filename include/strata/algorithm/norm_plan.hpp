// SPDX-License-Identifier: Apache-2.0
// How a row normalization spreads rows over a GPU, and how that is chosen. A row is a run of
// 16-byte units; a plan gives each row (or each block's chunk of a long row) a group of threads
// holding `vpt` units each in registers. The choice is host code over a model of the device (SM
// count, the occupancy of each kernel), so the host backend makes the same choice against a
// model GPU and CI exercises it.
#pragma once

#include <strata/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace strata::detail::norm {

/// How rows are spread over the GPU.
enum class shape : int {
  rows,      ///< a group of `group` threads per row, block / group rows per block (a block per
             ///< row holding `spill` more units a thread in shared memory where spill > 0)
  streamed,  ///< rows in chunks of `group` x `vpt` units: statistics items, then normalize items
             ///< `lag` items later that read the chunk again from L2 (x leaves DRAM once)
  cluster,   ///< rows of whole units held by a cluster of `parts` blocks, block q holding the
             ///< units [q, q + 1) x `group` x `vpt` in registers; the blocks merge their
             ///< statistics through distributed shared memory (sm_90 and later)
  tiled,     ///< short rows lying back to back: a block of `block` threads takes `tile` rows, reads
             ///< their bytes into shared memory in 16-byte vectors, normalizes a row a thread and
             ///< writes them back the same way
};

struct plan {
  norm::shape shape = norm::shape::rows;
  int group = 32;   // threads per row, or per chunk (streamed): a power of two up to 32, else a multiple of 32
  int vpt = 1;      // 16-byte units per thread, 1 .. max_vpt
  int block = 128;  // threads per block
  int parts = 1;    // streamed: chunks per row; cluster: blocks per row (the cluster's size)
  int grid = 0;     // streamed: blocks launched
  index_t lag = 0;  // streamed: items between a chunk's statistics and its normalization
  index_t ahead = 0;  // rows, cluster: a group first asks L2 for the row this many rows past its own (0: none)
  int spill = 0;      // rows: units a thread holds in shared memory past its vpt in registers
  int stack = 1;      // rows: rows a group holds at once, vpt units of each (groups within a warp)
  index_t tile = 0;   // tiled: rows a block holds
};

inline constexpr int max_vpt = 8;         // units per thread: 32 registers of row data at most
inline constexpr int max_group = 512;     // threads per block: more leave too few registers a thread
inline constexpr int block_max_group = 1024;  // rows of whole units (block_rows_kernel): a block of up to 1024 threads
inline constexpr int small_block = 128;   // a block of rows whose group is at most a warp
inline constexpr int max_cluster = 8;     // blocks of a cluster plan: the portable limit (16 ran slower than streaming)

/// Dynamic shared memory of a plan's blocks: the units they hold past their registers.
inline std::size_t spill_bytes(const plan& p) { return std::size_t(p.spill) * std::size_t(p.block) * 16; }

/// Tiled plans (rows lying back to back, shape::tiled): blocks of tiled_block threads, each taking
/// about tiled_bytes of rows, a thread holding a row of at most tiled_max_row_bytes in registers.
/// A block's rows span one range of memory, which its threads read and write as 16-byte vectors
/// however short the rows are, where a group of threads per row moves a row's few bytes per access.
/// On the H200, at 36 widths of dense rows of 1-62 bytes, tiled runs 1.25-18x faster than the
/// fastest row plan (fp32 rows of 1-15 elements at 0.54-0.90 of a copy, bf16 rows of 1-31 at
/// 0.29-0.81) but for bf16 rows of 24 elements (3 whole units: 0.88-0.93x, a row plan stacking
/// 4 rows being faster); rows of 4 whole 16-byte units (64 bytes) run 1.01-1.33x faster in row
/// plans, so those keep them (tiled_fits).
inline constexpr int tiled_block = 256;
inline constexpr std::size_t tiled_bytes = 16 * 1024;
inline constexpr std::size_t tiled_max_row_bytes = 64;
/// Dynamic shared memory of a tiled plan's blocks for rows of `row_bytes`: the rows, and the two
/// vectors the range's unaligned ends reach into.
inline std::size_t tile_shared_bytes(const plan& p, std::size_t row_bytes) { return std::size_t(p.tile) * row_bytes + 32; }

/// The most units a thread of a block holding a whole row keeps in shared memory past its 8 in
/// registers (wide_candidates), by kind: such blocks run 10-25% faster than streamed rows up to
/// these lengths on the H200 (RMS norm reads each shared unit twice, layer norm three times and
/// gains less), and slower beyond; the library's plans run 1.06-1.23x as fast as the streamed ones
/// at 16640-65536 elements.
inline constexpr int layer_max_spill = 2, rms_max_spill = 8;

inline std::string describe(const plan& p) {
  static const char* names[] = {"rows", "streamed", "cluster", "tiled"};
  return std::string(names[int(p.shape)]) + " group=" + std::to_string(p.group) + " vpt=" + std::to_string(p.vpt) +
         " block=" + std::to_string(p.block) + (p.parts > 1 ? " parts=" + std::to_string(p.parts) : "") +
         (p.shape == norm::shape::streamed ? " grid=" + std::to_string(p.grid) + " lag=" + std::to_string(p.lag) : "") +
         (p.spill > 0 ? " spill=" + std::to_string(p.spill) : "") + (p.stack > 1 ? " stack=" + std::to_string(p.stack) : "") +
         (p.shape == norm::shape::tiled ? " tile=" + std::to_string(p.tile) : "") +
         (p.ahead > 0 ? " ahead=" + std::to_string(p.ahead) : "");
}

/// 16-byte units a row of `cols` elements of `size` bytes spans: one more unit where a row may
/// start off a 16-byte boundary (then its first and last units are partial).
inline index_t units_spanned(index_t cols, int size, int head) {
  const index_t lanes = 16 / size;
  return (index_t(head) + cols + lanes - 1) / lanes;
}

/// Threads of a group holding `units` units with `vpt` each: a power of two up to a warp (the
/// group's lanes reduce with shuffles inside the warp), a whole number of warps above that.
inline int group_for(index_t units, int vpt) {
  const index_t need = (units + vpt - 1) / vpt;
  if (need <= 32) return int(next_pow2(std::size_t(need)));
  return int(align_up(std::size_t(need), 32));
}

/// Rows of `units` units held by one group of at least `min_group` threads (one per element of the
/// row's partial first and last units) and at most max_group, or, for rows longer than such a
/// group holds, at most `most` (device_model::row_group): for each units-per-thread count, the
/// smallest such group that covers the row (and no group that a smaller count would cover with
/// the same threads). A block of more than max_group threads runs alone on its SM (64 registers a
/// thread): where a group of max_group threads holds the row, two such blocks an SM run faster at
/// bf16 layer norm of 32768 elements (1.11x) and fp32 layer norm of 16384 (1.03x), and slower at
/// fp32 rows of 12288.
/// Whether a row plan serves short rows poorly: a thread per row holding 3 or more units, or a
/// group narrower than 64 bytes holding 4 or more units a thread, touches a sector or less of each
/// of 16-32 rows per warp access and works through its units alone. On the H200 such plans run
/// rows of 40-112 bf16 elements at 0.24-0.69 of a copy where wider groups run 0.65-0.91, and they
/// score high (they hold many bytes), so choose() takes them only where no other plan fits.
/// Rows with `partial` elements in
/// partial units (one a thread, read and written one by one over the group's first threads) are
/// served poorly by such a narrow group from 2 units a thread: on the H200, at 154 widths of up to
/// 1025 elements ending in a partial unit, the chosen plan runs at a mean 0.974 of the speed of the
/// fastest plan weighed with this rule (0.75 at the lowest) and at 0.950 without it (0.56 at bf16
/// rows of 17, a thread holding 2 units); the same rule for rows of whole units would lower theirs
/// from 0.982 to 0.958.
inline bool poorly_coalesced(const plan& p, int partial = 0) {
  return p.shape == norm::shape::rows && ((p.group == 1 && p.vpt >= 3) || (p.group * 16 < 64 && p.vpt >= (partial > 0 ? 2 : 4)));
}

/// stacked == true (rows of whole units, groups within a warp): also plans whose groups hold 2 or 4
/// rows at once (`stack`, stacked_rows_kernel), at least 2 units of each row a thread (a group
/// holding one unit a thread spends its reductions' shuffles on 16 bytes a row: bf16 layer norm of
/// 128 and 256 elements runs 1.33-1.35x slower that way than with 4 units) and at most max_vpt
/// units a thread in all. The list is in the order choose() takes good plans in: fewer units a
/// thread (vpt x stack), then unstacked before stacked (at equal units a thread, bf16 layer norm of
/// 128-256 elements runs 4-5% faster unstacked), then fewer units of a row.
inline std::vector<plan> row_candidates(index_t units, int min_group, int most = max_group, bool stacked = false) {
  std::vector<plan> out;
  if (units <= index_t(max_group) * max_vpt) most = std::min(most, max_group);
  for (int vpt = 1; vpt <= max_vpt; ++vpt) {
    const int group = std::max(group_for(units, vpt), int(next_pow2(std::size_t(std::max(min_group, 1)))));
    if (group > most || (units + group - 1) / group != vpt) continue;
    plan p;
    p.shape = norm::shape::rows, p.group = group, p.vpt = vpt, p.block = group > 32 ? group : small_block;
    out.push_back(p);
    if (stacked && min_group == 0 && group <= 32 && vpt >= 2)
      for (p.stack = 2; p.vpt * p.stack <= max_vpt; p.stack *= 2) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(), [](const plan& a, const plan& b) {
    return std::make_tuple(a.vpt * a.stack, a.stack) < std::make_tuple(b.vpt * b.stack, b.stack);
  });
  return out;
}

/// Row bytes an SM should hold so that its share of the memory bandwidth covers the latency of a
/// row's loads and its reductions: bandwidth per SM times this time (fitted to the H200's sweep
/// of every plan: plans holding less run up to 1.9x slower, plans holding more within 1% of the
/// best).
inline constexpr double resident_seconds = 2.0e-6;

/// How far ahead of the rows being loaded the rows kernel asks L2 for rows, as time at the device's
/// memory bandwidth: each group's first thread prefetches the row `ahead` rows past its own (one
/// bulk prefetch), so DRAM keeps reading while an SM's blocks reduce and write. On the H200, 2 MB
/// ahead (0.4 us) runs 92 row shapes at a median 1.016x the speed without (0.99-1.05x; the same
/// code against itself: 0.98-1.02x), 1-4 MB alike, and 7 MB or more 5-25% slower: rows fetched
/// that early no longer wait in L2 for their blocks.
inline constexpr double prefetch_seconds = 0.4e-6;

/// Row plans scoring at least this share of the best row plan's score count as good as it, and
/// of those the one holding the fewest units a thread runs. Past the resident bytes that cover the
/// memory's latency, more units a thread lengthen each thread's serial passes over its units and
/// the time its block holds them, so a plan scoring a little lower with fewer units can run
/// faster. How much lower depends on the element size. In the H200's sweep of every plan at 296 row
/// shapes:
/// - fp32 plans scoring 0.67-0.90 of the best often run fastest; within 0.85, the chosen plans run
///   at a mean 1.0019x (layer norm) and 1.0010x (RMS norm) the fastest one's time, at most 1.011x;
/// - bf16 layer norm plans scoring 0.86-0.92 run 3-5% slower than the best-scoring ones (at 1792,
///   8448-11008 and 15872-16384 elements): 16-bit rows issue about twice the instructions per byte
///   and sum twice across warps (merges_warps), each sum waiting at a barrier, and fewer warps wait
///   less. Within 0.95, bf16 plans run at a mean 1.0037x (layer) and 1.0022x (RMS) the fastest,
///   at most 1.024x (at 0.85: 1.0081x and 1.0020x, at most 1.045x).
inline constexpr double row_score_share(int element_size) { return element_size >= 4 ? 0.85 : 0.95; }

/// What the choice needs to know of a device: its SM count, L2 size, its row-byte target per SM,
/// the row bytes to prefetch ahead and, per plan, how many of its blocks one SM holds (the
/// occupancy API on a GPU; a register model on the host backend).
struct device_model {
  int sms = 132;
  double l2_bytes = 50.0 * 1024 * 1024;
  double target_bytes_per_sm = 4.8e12 / 132 * resident_seconds;
  double prefetch_bytes = 4.8e12 * prefetch_seconds;
  int max_spill = rms_max_spill;  // the kind's limit on a plan's spill
  double score_share = row_score_share(4);  // row_score_share of the rows' element size
  /// The largest group of a row plan longer than max_group x max_vpt units: block_max_group for
  /// rows of whole units, which a block of up to 1024 threads holds (block_rows_kernel),
  /// max_group otherwise (such rows go partly to shared memory or stream).
  int row_group = max_group;
  /// The most blocks of a cluster plan (a row held by several blocks that merge through distributed
  /// shared memory): 0 where the device or the rows allow none (before sm_90; rows not of whole
  /// units, which the cluster kernel does not take; cluster_limit of the kind and element size).
  int max_cluster = 0;
  /// Whether row plans may stack rows in a group (row_candidates): rows of whole units only, which
  /// the stacked rows kernel takes.
  bool stacked = false;
  /// Dynamic shared memory a block of the shared-memory plan may take: the device's opt-in limit
  /// per block less the kernel's static shared memory, capped at the most any plan needs (64 KiB,
  /// which GPUs before sm_70, and sm_75 beside static shared memory, do not give). Plans needing
  /// more are not weighed.
  std::size_t max_block_shared = 227 * 1024 - 1024;
  std::function<int(const plan&)> blocks_per_sm;
};

/// The rows nearest the device's prefetch bytes (at least one): a row or cluster plan's `ahead`
/// (each block of a cluster asks for its part of that row). Streamed
/// plans prefetch nothing: chunks prefetched by their statistics items run 1-8% slower at every
/// distance from 1 to 8 MB; nor do blocks holding rows partly in shared memory (3-10% slower).
inline void set_ahead(plan& p, index_t units, const device_model& dev) {
  if (p.shape == norm::shape::streamed || p.shape == norm::shape::tiled || p.spill > 0 || dev.prefetch_bytes <= 0) return;
  p.ahead = std::max<index_t>(1, index_t(std::llround(dev.prefetch_bytes / (double(units) * 16.0))));
}

/// Row bytes a plan keeps resident on one SM, counting only units inside rows.
inline double resident_bytes(const plan& p, index_t units, int blocks) {
  const double rows_per_block = p.shape == norm::shape::rows ? double(p.block / p.group * p.stack) : 1.0 / p.parts;  // cluster: a part of a row
  return double(blocks) * rows_per_block * double(units) * 16.0;
}

/// How well a plan is expected to run, 0 .. 1: the share of the device's target its resident row
/// bytes cover, times (row plans) the square root of the share of its threads' units that hold row
/// data (idle units cost registers, which resident bytes already count, and a little issue time).
/// Streamed plans are not charged for a row's last, partly filled chunk: there each item's fixed
/// cost (a ticket, a published count) weighs more, and larger chunks measured faster.
inline double score(const plan& p, index_t units, int blocks, double target_bytes_per_sm) {
  if (blocks <= 0) return -1;
  const double saturation = std::min(1.0, resident_bytes(p, units, blocks) / target_bytes_per_sm);
  if (p.shape == norm::shape::streamed) return saturation;
  const double used = double(units) / (double(p.parts) * p.group * p.vpt);
  return saturation * std::sqrt(used);
}

/// Streamed plans for rows longer than a block holds: chunks of `group` threads x `vpt` units, a
/// grid of every block the GPU holds at once, and a lag between a chunk's statistics and its
/// normalization of at least a row's chunks (every statistics item a row's normalization waits
/// for is then taken earlier, by a running block: no deadlock). A row of more chunks than an
/// eighth of the grid takes a lag of its chunks and the grid: its first normalize item then
/// trails its last statistics item by a grid of items, which have finished by then instead of
/// running beside it while every block waits for them. The chunks read and written in between
/// outgrow L2, and still the rows of 2^20-2^22 elements that take it run 1.02-1.21x faster on the
/// H200 than at a row's chunks alone, rows of 74-92 chunks (just past the eighth) 0.98-1.00x.
/// Shorter rows take as many items as
/// the grid runs at once, as far as the chunks read and written in between stay well inside L2 (a
/// quarter of the grid or a row's chunks run 1-6% slower, twice the grid 1-3% slower; the
/// row's chunks and the grid 1-2% slower at 2^18-500000 elements).
inline std::vector<plan> streamed_candidates(index_t units, const device_model& dev) {
  std::vector<plan> out;
  for (int vpt : {8, 4})
    for (int group : {256, 128, 512}) {
      plan p;
      p.shape = norm::shape::streamed, p.group = group, p.vpt = vpt, p.block = group;
      const index_t chunk = index_t(group) * vpt;
      p.parts = int(std::min<index_t>((units + chunk - 1) / chunk, index_t(1) << 30));
      const int per_sm = dev.blocks_per_sm(p);
      if (per_sm <= 0) continue;
      p.grid = per_sm * dev.sms;
      const index_t in_l2 = index_t(dev.l2_bytes / 4 / double(chunk * 16));
      p.lag = index_t(p.parts) * 8 > p.grid ? index_t(p.parts) + p.grid : std::max<index_t>(p.parts, std::min<index_t>(p.grid, in_l2));
      out.push_back(p);
    }
  return out;
}

/// Rows longer than a block holds in registers but at most `max_spill` units a thread longer: one
/// block of max_group threads per row, max_vpt units a thread in registers and the rest in shared
/// memory, where the device lets a block take that much and two such blocks fit an SM (one alone
/// runs at 0.42-0.55 of a copy).
inline std::vector<plan> wide_candidates(index_t units, const device_model& dev) {
  std::vector<plan> out;
  const index_t in_regs = index_t(max_group) * max_vpt;
  if (units <= in_regs) return out;
  const index_t spill = (units - in_regs + max_group - 1) / max_group;
  if (spill > dev.max_spill) return out;
  plan p;
  p.shape = norm::shape::rows, p.group = max_group, p.vpt = max_vpt, p.block = max_group, p.spill = int(spill);
  if (spill_bytes(p) <= dev.max_block_shared && dev.blocks_per_sm(p) >= 2) out.push_back(p);
  return out;
}

/// The most blocks of a cluster plan for rows of this kind and element size (fit_to_rows). A
/// cluster's blocks each wait at the cluster barrier for the slowest of them while holding their
/// part of the row, which costs more the more blocks there are: on the H200, RMS norm in fp32
/// blocks of 512 threads x 8 units runs at 0.962 of a copy alone and at 0.944, 0.921, 0.876 and
/// 0.807 in clusters of 2, 4, 8 and 16. Against streaming such rows, RMS norm and fp32 layer norm in
/// clusters of up to 8 run 1.02-1.14x faster at 16384-32768 units, in clusters of 16 no faster or
/// slower; 16-bit layer norm, whose blocks issue about twice the instructions per byte and so
/// differ more in when they reach the barrier, runs 1.02-1.10x slower in clusters of 4-8 and streams.
inline constexpr int cluster_limit(bool layer, int element_size) { return layer && element_size < 4 ? 0 : max_cluster; }

/// Cluster plans for rows of `units` whole units longer than a block of the model's row group
/// holds in registers: for each cluster size from 2 to the model's limit, the row plans of whole
/// warps (at most max_group threads) for a block's share of the row, where every block holds some
/// of it and the device runs such a cluster (sweeps time them all; choose() takes cluster_plan).
inline std::vector<plan> cluster_candidates(index_t units, const device_model& dev) {
  std::vector<plan> out;
  if (units <= index_t(dev.row_group) * max_vpt) return out;
  for (int c = 2; c <= dev.max_cluster; ++c)
    for (plan p : row_candidates((units + c - 1) / c, 32)) {
      if (index_t(c - 1) * p.group * p.vpt >= units) continue;
      p.shape = norm::shape::cluster, p.parts = c, p.block = p.group;
      if (dev.blocks_per_sm(p) > 0) out.push_back(p);
    }
  return out;
}

/// The cluster plan for such rows: the fewest blocks of at most max_group / 2 threads x max_vpt
/// units that hold the row, or of max_group threads where those would take more blocks than the
/// model allows; each block holds its share with the most units a thread. Smaller blocks share
/// an SM four ways, so one waiting at the cluster barrier leaves three others' loads in flight:
/// at 12288-16384 units they run 1.00-1.07x faster than half as many blocks of 512 threads. None
/// past the model's limit or where the device runs no such cluster.
inline bool cluster_plan(index_t units, const device_model& dev, plan& out) {
  if (units <= index_t(dev.row_group) * max_vpt) return false;
  for (int threads : {max_group / 2, max_group}) {
    const index_t per_block = index_t(threads) * max_vpt, c = (units + per_block - 1) / per_block;
    if (c < 2 || c > dev.max_cluster) continue;
    const std::vector<plan> rows = row_candidates((units + c - 1) / c, 32, threads);
    if (rows.empty()) continue;
    plan p = rows.back();
    p.shape = norm::shape::cluster, p.parts = int(c), p.block = p.group;
    if (dev.blocks_per_sm(p) <= 0) continue;
    out = p;
    return true;
  }
  return false;
}

/// What a plan must cover for rows of some length: the units a row spans (a streamed row's chunks
/// run over them), the whole units among them (what a row plan's slots hold; at least 1) and the
/// elements of the partial first and last units (fewer than 2 x 16 bytes), which a group's first
/// threads hold one each.
struct row_units {
  index_t spanned, held;
  int partial;
  /// Bytes of a row where x's and y's rows lie back to back (pitch = row length) at one offset from
  /// 16-byte boundaries, so a run of rows is one range of memory (tiled plans); 0 otherwise.
  index_t dense_bytes = 0;
  int element_size = 0;  // with dense_bytes: the rows' element size
};

/// Whether choose() takes the tiled plan for such rows: rows lying back to back of at most
/// tiled_max_row_bytes, other than rows of 4 or more whole units (stacked row plans serve those).
inline bool tiled_fits(const row_units& u) {
  return u.dense_bytes > 0 && std::size_t(u.dense_bytes) <= tiled_max_row_bytes && !(u.partial == 0 && u.held >= 4);
}

/// The tiled plan for rows lying back to back of `cols` elements of `size` bytes: tiled_bytes of
/// rows a block, each thread holding a row of up to `group` elements (the power of two at or above
/// the row's; the kernel is built for each).
inline plan tiled_plan(index_t cols, int size) {
  plan p;
  p.shape = norm::shape::tiled, p.group = int(next_pow2(std::size_t(std::max<index_t>(1, cols)))), p.vpt = 1, p.block = tiled_block;
  p.tile = std::max<index_t>(1, index_t(tiled_bytes) / std::max<index_t>(1, cols * size));
  return p;
}

/// The row plans choose() weighs for such rows: row_candidates (stacked where the model allows),
/// less those that serve rows poorly (poorly_coalesced) where any other fits.
inline std::vector<plan> weighed_rows(const row_units& u, const device_model& dev) {
  std::vector<plan> rows = row_candidates(u.held, u.partial, dev.row_group, dev.stacked);
  if (std::any_of(rows.begin(), rows.end(), [&](const plan& p) { return !poorly_coalesced(p, u.partial); }))
    std::erase_if(rows, [&](const plan& p) { return poorly_coalesced(p, u.partial); });
  return rows;
}

/// The plan for such rows: among the row plans weighed (weighed_rows) scoring within the model's
/// score_share (row_score_share) of the best of them, the first in their order (the fewest units a
/// thread, unstacked first);
/// rows longer than a block holds in registers are held by a block with the rest in shared memory
/// up to the kind's limit (wide_candidates), rows of whole units longer than that by a cluster of
/// blocks up to the model's cluster limit (cluster_plan), and streamed beyond (blocks of 128
/// threads and more hold any row's partial elements; no limit on row length).
inline plan choose(const row_units& u, const device_model& dev) {
  if (tiled_fits(u)) return tiled_plan(u.dense_bytes / u.element_size, u.element_size);
  plan best;
  double best_score = -1;
  auto score_of = [&](const plan& p) {
    return score(p, p.shape == norm::shape::streamed ? u.spanned : u.held, dev.blocks_per_sm(p), dev.target_bytes_per_sm);
  };
  auto consider = [&](const std::vector<plan>& cands) {
    for (const plan& p : cands)
      if (const double s = score_of(p); s > best_score + 1e-9) best_score = s, best = p;
  };
  const std::vector<plan> rows = weighed_rows(u, dev);
  consider(rows);
  if (best_score > 0) {
    const double good = dev.score_share * best_score;
    for (const plan& p : rows)  // in order of units a thread: the first good one
      if (score_of(p) >= good) {
        best = p;
        break;
      }
  }
  if (best_score < 0) {
    if (const std::vector<plan> wide = wide_candidates(u.held, dev); !wide.empty()) best = wide.front(), best_score = 1;
  }
  if (best_score < 0 && u.held == u.spanned && cluster_plan(u.held, dev, best)) best_score = 1;
  if (best_score < 0) consider(streamed_candidates(u.spanned, dev));
  if (best_score < 0) throw std::runtime_error("strata: normalization: no kernel configuration fits this device");
  set_ahead(best, u.spanned, dev);
  return best;
}

/// Every plan choose() weighs for such rows (sweeps time them all to check the choice).
inline std::vector<plan> considered(const row_units& u, const device_model& dev) {
  std::vector<plan> out = row_candidates(u.held, u.partial, dev.row_group, dev.stacked);
  if (out.empty()) {
    out = wide_candidates(u.held, dev);
    for (const plan& p : streamed_candidates(u.spanned, dev)) out.push_back(p);
  }
  for (const plan& p : cluster_candidates(u.held, dev)) out.push_back(p);
  for (plan& p : out) set_ahead(p, u.spanned, dev);
  if (u.dense_bytes > 0 && std::size_t(u.dense_bytes) <= tiled_max_row_bytes) out.push_back(tiled_plan(u.dense_bytes / u.element_size, u.element_size));
  return out;
}

/// The host backend's model GPU: an H100-like SM (64 Ki registers, 2048 threads, 32 blocks, 228 KiB
/// of shared memory) and a kernel that takes 32 registers plus 4 per unit a thread holds.
inline device_model host_model() {
  device_model m;
  m.max_cluster = max_cluster;
  m.blocks_per_sm = [](const plan& p) {
    const int regs = 32 + 4 * p.vpt * p.stack, smem = 1024 + p.spill * p.block * 16 + (p.shape == norm::shape::tiled ? int(tiled_bytes) + 32 : 0);  // 228 KiB of shared memory an SM
    return std::max(0, std::min({32, 2048 / p.block, 65536 / (p.block * regs), 228 * 1024 / smem}));
  };
  return m;
}

}  // namespace strata::detail::norm
