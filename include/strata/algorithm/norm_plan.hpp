// How a row normalization spreads rows over a GPU, and how that is chosen. A row is a run of
// 16-byte units; a plan gives each row (or each block's chunk of a long row) a group of threads
// holding `vpt` units each in registers. The choice is host code over a model of the device (SM
// count, the occupancy of each kernel), so the host backend makes the same choice against a
// model GPU and CI exercises it.
#pragma once

#include <strata/config.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace strata::detail::norm {

/// How rows are spread over the GPU.
enum class shape : int {
  rows,      ///< a group of `group` threads per row, block / group rows per block
  cluster,   ///< a thread block cluster of `parts` blocks per row (Hopper); the row is read once
  split,     ///< `parts` co-resident blocks per row (a cooperative grid); the row is read once
  two_pass,  ///< rows longer than the whole GPU holds: statistics, then x read again
};

struct plan {
  norm::shape shape = norm::shape::rows;
  int group = 32;   // threads per row, or per block for cluster and split (a power of two up to 32, else a multiple of 32)
  int vpt = 1;      // 16-byte units per thread, 1 .. max_vpt
  int block = 128;  // threads per block
  int parts = 1;    // blocks per row (cluster, split)
  int grid = 0;     // split: co-resident blocks launched
};

inline constexpr int max_vpt = 8;         // units per thread: 32 registers of row data at most
inline constexpr int max_group = 512;     // threads per block: more leave too few registers a thread
inline constexpr int small_block = 128;   // a block of rows whose group is at most a warp
inline constexpr int max_cluster = 16;    // blocks per cluster (above 8 only where the device allows)

inline std::string describe(const plan& p) {
  static const char* names[] = {"rows", "cluster", "split", "two_pass"};
  return std::string(names[int(p.shape)]) + " group=" + std::to_string(p.group) + " vpt=" + std::to_string(p.vpt) +
         " block=" + std::to_string(p.block) + (p.parts > 1 ? " parts=" + std::to_string(p.parts) : "");
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
/// row's partial first and last units): for each units-per-thread count, the smallest such group
/// that covers the row (and no group that a smaller count would cover with the same threads).
inline std::vector<plan> row_candidates(index_t units, int min_group) {
  std::vector<plan> out;
  for (int vpt = 1; vpt <= max_vpt; ++vpt) {
    const int group = std::max(group_for(units, vpt), int(next_pow2(std::size_t(std::max(min_group, 1)))));
    if (group > max_group || (units + group - 1) / group != vpt) continue;
    plan p;
    p.shape = norm::shape::rows, p.group = group, p.vpt = vpt, p.block = group > 32 ? group : small_block;
    out.push_back(p);
  }
  return out;
}

/// Rows longer than one block holds: `parts` blocks of `group` threads per row, each holding its
/// chunk in registers. For each units-per-thread count, the fewest parts whose blocks fit, and
/// the next count of parts (smaller blocks, more of them resident per SM).
inline std::vector<plan> long_candidates(index_t units, norm::shape s) {
  std::vector<plan> out;
  for (int vpt = 2; vpt <= max_vpt; ++vpt) {
    const index_t fewest = (units + index_t(max_group) * vpt - 1) / (index_t(max_group) * vpt);
    for (index_t parts = std::max<index_t>(fewest, 2); parts <= fewest + 1; ++parts) {
      if (s == norm::shape::cluster && parts > max_cluster) continue;
      if (parts > (index_t(1) << 20)) continue;
      const index_t chunk = (units + parts - 1) / parts;
      const int group = int(align_up(std::size_t((chunk + vpt - 1) / vpt), 32));
      if (group > max_group || group < 64 || (chunk + group - 1) / group != vpt) continue;
      plan p;
      p.shape = s, p.group = group, p.vpt = vpt, p.block = group, p.parts = int(parts);
      out.push_back(p);
    }
  }
  return out;
}

/// Row bytes an SM should hold so that its share of the memory bandwidth covers the latency of a
/// row's loads and its reductions: bandwidth per SM times this time (fitted by the H200 sweep,
/// bench/results/nvidia-h200-2026-11-23-norm_sweep*: plans holding less ran up to 1.9x slower,
/// plans holding more ran within 1% of the best).
inline constexpr double resident_seconds = 2.0e-6;

/// What the choice needs to know of a device: its SM count, its row-byte target per SM and, per
/// plan, how many of its blocks one SM holds (the occupancy API on a GPU; a register model on the
/// host backend) and whether clusters of its size can run.
struct device_model {
  int sms = 132;
  double target_bytes_per_sm = 4.8e12 / 132 * resident_seconds;
  std::function<int(const plan&)> blocks_per_sm;
  std::function<bool(const plan&)> clusters_fit;
};

/// Row bytes a plan keeps resident on one SM, counting only units inside rows.
inline double resident_bytes(const plan& p, index_t units, int blocks) {
  const double rows_per_block = p.shape == norm::shape::rows ? double(p.block / p.group) : 1.0 / p.parts;
  return double(blocks) * rows_per_block * double(units) * 16.0;
}

/// How well a plan is expected to run, 0 .. 1: the share of the device's target its resident row
/// bytes cover, times the square root of the share of its threads' units that hold row data
/// (idle units cost registers, which resident bytes already count, and a little issue time).
inline double score(const plan& p, index_t units, int blocks, double target_bytes_per_sm) {
  if (blocks <= 0) return -1;
  const double saturation = std::min(1.0, resident_bytes(p, units, blocks) / target_bytes_per_sm);
  const double used = double(units) / (double(p.parts) * p.group * p.vpt);
  return saturation * std::sqrt(used);
}

/// The plan for rows spanning `units` 16-byte units (with up to `min_group` elements in partial
/// units): the best-scoring row plan; rows longer than a block holds take the best cluster plan
/// the device runs, else co-resident split blocks, else two passes (blocks of 64 threads and more
/// hold any row's partial elements).
inline plan choose(index_t units, int min_group, const device_model& dev) {
  plan best;
  double best_score = -1;
  auto consider = [&](const std::vector<plan>& cands) {
    for (const plan& p : cands) {
      if (p.shape == norm::shape::cluster && !dev.clusters_fit(p)) continue;
      const double s = score(p, units, dev.blocks_per_sm(p), dev.target_bytes_per_sm);
      if (s > best_score + 1e-9) best_score = s, best = p;
    }
  };
  consider(row_candidates(units, min_group));
  if (best_score >= 0) return best;
  consider(long_candidates(units, norm::shape::cluster));
  if (best_score >= 0) return best;
  for (const plan& c : long_candidates(units, norm::shape::split)) {
    const int per_sm = dev.blocks_per_sm(c);
    const index_t resident = index_t(per_sm) * dev.sms;
    if (per_sm == 0 || resident < c.parts) continue;
    const double s = score(c, units, per_sm, dev.target_bytes_per_sm);
    if (s > best_score + 1e-9) best_score = s, best = c, best.grid = int(resident / c.parts * c.parts);
  }
  if (best_score >= 0) return best;
  plan p;
  p.shape = norm::shape::two_pass, p.group = 512, p.block = 512;
  return p;
}

/// Every plan choose() weighs for such rows (sweeps time them all to check the choice).
inline std::vector<plan> considered(index_t units, int min_group, const device_model& dev) {
  std::vector<plan> out = row_candidates(units, min_group);
  for (plan p : long_candidates(units, norm::shape::cluster))
    if (dev.clusters_fit(p)) out.push_back(p);
  for (plan p : long_candidates(units, norm::shape::split)) {
    const int per_sm = dev.blocks_per_sm(p);
    const index_t resident = index_t(per_sm) * dev.sms;
    if (per_sm > 0 && resident >= p.parts) p.grid = int(resident / p.parts * p.parts), out.push_back(p);
  }
  return out;
}

/// The host backend's model GPU: an H100-like SM (64 Ki registers, 2048 threads, 32 blocks) and a
/// kernel that takes 32 registers plus 4 per unit a thread holds.
inline device_model host_model() {
  device_model m;
  m.blocks_per_sm = [](const plan& p) {
    const int regs = 32 + 4 * p.vpt;
    return std::max(0, std::min({32, 2048 / p.block, 65536 / (p.block * regs)}));
  };
  m.clusters_fit = [](const plan& p) { return p.parts <= 8; };
  return m;
}

}  // namespace strata::detail::norm
