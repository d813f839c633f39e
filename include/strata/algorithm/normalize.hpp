// SPDX-License-Identifier: Apache-2.0
// Row normalization over 2-D views of any pitch (strata's matrix or a dense tensor someone else
// owns): layer norm (y = (x - mean) / sqrt(var + eps) * gamma + beta) and RMS norm
// (y = x / sqrt(mean(x^2) + eps) * gamma), fp32 / bf16 / fp16 storage, fp32 arithmetic, gamma and
// beta optional. Each row is read from device memory once and held in registers, in 16-byte units
// on 16-byte boundaries (norm_row.hpp): by a group of threads per row; rows somewhat longer than a
// block holds in registers by a block with the rest in shared memory, or, rows of whole units, by a
// cluster of blocks that merge their statistics through distributed shared memory (sm_90); longer
// rows in chunks whose statistics are merged before the chunks are read again from L2.
// The configuration comes from the row length, the dtype and the device (norm_plan.hpp, the
// occupancy API); the path taken is returned. The kernels are in norm_kernels.hpp.
#pragma once

#include <strata/algorithm/norm_kernels.hpp>
#include <strata/algorithm/norm_plan.hpp>
#include <strata/algorithm/norm_row.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata {
namespace detail::norm {

/// Which code a plan runs: the whole-unit code where every row starts on a 16-byte boundary, y's
/// rows lie as x's and gamma and beta on 16-byte boundaries (whole_units, in_phase), which for a
/// row held by a block of more than max_group threads or by a cluster of blocks is
/// block_rows_kernel (code::block; cluster plans take no other rows); for such
/// rows ending in a partial unit, the rows kernel's variant holding its elements (blocks partly in
/// shared memory and streamed chunks take the general code for them); the general code otherwise.
enum class code { general, whole, whole_tail, block };
inline code code_for(const plan& p, bool whole, bool tail) {
  if (p.shape == norm::shape::cluster) return whole && !tail ? code::block : code::general;  // run() refuses the latter
  if (!whole) return code::general;
  if (!tail) return p.shape == norm::shape::rows && p.spill == 0 && p.group > max_group ? code::block : code::whole;
  return p.shape == norm::shape::rows && p.spill == 0 ? code::whole_tail : code::general;
}

/// What a device model takes from the rows, the same on the GPU (gpu_model) and the host backend
/// (host_model_for): the kind's limit on units held in shared memory, blocks of up to
/// block_max_group threads per row and clusters of blocks for rows of whole units (whole and not
/// tail) only, and the score share of the element size.
inline void fit_to_rows(device_model& m, norm_kind kind, bool whole, bool tail, int element_size) {
  m.max_spill = kind == norm_kind::layer ? layer_max_spill : rms_max_spill;
  m.row_group = whole && !tail ? block_max_group : max_group;
  m.max_cluster = whole && !tail ? std::min(m.max_cluster, cluster_limit(kind == norm_kind::layer, element_size)) : 0;
  m.score_share = row_score_share(element_size);
  m.stacked = whole && !tail;
}

#if defined(STRATA_BACKEND_CUDA)
// ---- the device model and the launch ---------------------------------------------------------

template <norm_kind Kind, class T, int V>
const void* kernel_of(const plan& p, code c) {
  const bool whole = c != code::general;
  if (p.shape == norm::shape::tiled)
    return with_tile_cols<T>(p.group, [&]<int C>() { return reinterpret_cast<const void*>(&tiled_rows_kernel<Kind, T, C>); });
  if (p.shape == norm::shape::streamed)
    return whole ? reinterpret_cast<const void*>(&streamed_kernel<Kind, T, V, true>) : reinterpret_cast<const void*>(&streamed_kernel<Kind, T, V, false>);
  if (p.spill > 0)
    return whole ? reinterpret_cast<const void*>(&rows_kernel<Kind, T, max_vpt, true, true>)
                 : reinterpret_cast<const void*>(&rows_kernel<Kind, T, max_vpt, false, true>);
  if (p.shape == norm::shape::cluster) return reinterpret_cast<const void*>(&block_rows_kernel<Kind, T, V, true>);
  if (c == code::block) return reinterpret_cast<const void*>(&block_rows_kernel<Kind, T, V>);
  if (c == code::whole_tail) return reinterpret_cast<const void*>(&rows_kernel<Kind, T, V, true, false, true>);
  if (p.stack > 1)  // run() has checked that the rows are whole units and the group within a warp
    return with_stack(p.vpt, p.stack, [&]<int SV, int S>() { return reinterpret_cast<const void*>(&stacked_rows_kernel<Kind, T, SV, S>); });
  return whole ? reinterpret_cast<const void*>(&rows_kernel<Kind, T, V, true>) : reinterpret_cast<const void*>(&rows_kernel<Kind, T, V, false>);
}

/// Lets a kernel that holds units in shared memory take as much dynamic shared memory as any plan
/// gives it (64 KiB, past the default 48 KiB) or as the device allows a block beside the kernel's
/// static shared memory, whichever is less; once per device and kernel. Returns the bytes allowed:
/// 0 where the device cannot raise the limit (its plans then stream such rows instead).
inline std::size_t allow_spill(const void* kernel) {
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> allowed;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_pair(current_device(), kernel);
  if (auto it = allowed.find(key); it != allowed.end()) return it->second;
  int optin = 0;
  cudaFuncAttributes attr{};
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, key.first), "cudaDeviceGetAttribute (normalization)");
  cuda_check(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes (normalization)");
  const std::size_t most = std::size_t(rms_max_spill) * max_group * 16, optin_bytes = std::size_t(std::max(0, optin));
  const std::size_t limit = std::min(most, optin_bytes > attr.sharedSizeBytes ? optin_bytes - attr.sharedSizeBytes : 0);
  if (limit > 48 * 1024 - attr.sharedSizeBytes)  // past the default limit, which needs no attribute
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(limit)), "cudaFuncSetAttribute (normalization)");
  return allowed.emplace(key, limit).first->second;
}

/// The launch configuration of a cluster plan's kernel: `blocks` blocks of `threads`, `size` to a
/// cluster.
struct cluster_launch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  cluster_launch(unsigned blocks, int threads, int size, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(size), attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(blocks), config.blockDim = dim3(unsigned(threads)), config.stream = stream;
    config.attrs = &attribute, config.numAttrs = 1;
  }
};

/// Blocks of a cluster plan's kernel an SM holds where the current device runs clusters of `size`
/// such blocks (the clusters it holds at once, as blocks per SM, at least 1), 0 where it runs none
/// (a device before sm_90, a kernel built for an earlier architecture). Once per device, kernel,
/// block and size.
inline int cluster_blocks_per_sm(const void* kernel, int threads, int size) {
  static std::mutex m;
  static std::map<std::tuple<int, const void*, int, int>, int> cache;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_tuple(current_device(), kernel, threads, size);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  int fits = 0;
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.ptxVersion >= 90) {
    const cluster_launch launch(unsigned(size) * 64, threads, size, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) == cudaSuccess && clusters > 0)
      fits = std::max(1, int(std::lround(double(clusters) * size / current_device_shape().sms)));
  }
  (void)cudaGetLastError();  // a refusal above is an answer, not an error of the caller's
  return cache.emplace(key, fits).first->second;
}

/// The current GPU's memory bandwidth in bytes per second, from its memory clock and bus width
/// (double data rate); the H200's where the driver does not say.
inline double memory_bandwidth() {
  int khz = 0, bits = 0;
  const int dev = current_device();
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess || khz <= 0 || bits <= 0) {
    (void)cudaGetLastError();
    return 4.8e12;
  }
  return 2.0 * double(khz) * 1e3 * double(bits) / 8.0;
}

/// The current GPU as the chooser sees it: its SM count, the occupancy API for the kernel each
/// plan would run (code_for).
template <norm_kind Kind, class T>
device_model gpu_model(bool whole, bool tail) {
  device_model m;
  m.sms = current_device_shape().sms;
  const double bandwidth = memory_bandwidth();
  m.target_bytes_per_sm = bandwidth / m.sms * resident_seconds;
  m.prefetch_bytes = bandwidth * prefetch_seconds;
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, current_device()) == cudaSuccess && l2 > 0) m.l2_bytes = l2;
  else (void)cudaGetLastError();
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, current_device()) == cudaSuccess && major >= 9) m.max_cluster = max_cluster;
  else (void)cudaGetLastError();
  fit_to_rows(m, Kind, whole, tail, int(sizeof(T)));
  plan wide;
  wide.spill = 1;
  m.max_block_shared = allow_spill(kernel_of<Kind, T, max_vpt>(wide, code_for(wide, whole, tail)));
  m.blocks_per_sm = [whole, tail](const plan& p) {
    return with_vpt(p.vpt, [&]<int V>() {
      const void* k = kernel_of<Kind, T, V>(p, code_for(p, whole, tail));
      if (p.spill > 0 && spill_bytes(p) > allow_spill(k)) return 0;
      if (p.shape == norm::shape::cluster) return cluster_blocks_per_sm(k, p.block, p.parts);
      if (p.shape == norm::shape::tiled) return strata::detail::blocks_per_sm(k, p.block, tiled_bytes + 32);
      return strata::detail::blocks_per_sm(k, p.block, spill_bytes(p));
    });
  };
  return m;
}

/// choose() for the current GPU, remembered per device and row span: a call after the first pays
/// one map lookup.
template <norm_kind Kind, class T>
plan chosen(const row_units& units, bool whole, bool tail) {
  static std::mutex m;
  static std::map<std::tuple<int, index_t, index_t, int, index_t, bool, bool>, plan> cache;
  const auto key = std::make_tuple(current_device(), units.spanned, units.held, units.partial, units.dense_bytes, whole, tail);
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const plan p = choose(units, gpu_model<Kind, T>(whole, tail));
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(key, p).first->second;
}

inline void check_blocks(index_t blocks, index_t rows) {
  if (blocks > index_t(0x7fffffff))
    throw size_error("strata: normalization of " + std::to_string(rows) + " rows needs more than 2^31 - 1 blocks");
}

template <norm_kind Kind, class T>
void launch(const plan& p, const args<T>& a, code c, stream_t stream) {
  const bool whole = c != code::general;
  if (p.shape == norm::shape::tiled) {  // run() has checked that the rows lie back to back, in phase
    const index_t blocks = (a.rows + p.tile - 1) / p.tile;
    check_blocks(blocks, a.rows);
    with_tile_cols<T>(p.group, [&]<int C>() {
      tiled_rows_kernel<Kind, T, C><<<unsigned(blocks), p.block, tile_shared_bytes(p, std::size_t(a.cols) * sizeof(T)), stream>>>(a, p.tile);
    });
    check_launch("normalization kernel (short rows in tiles)");
  } else if (p.shape == norm::shape::rows && p.spill > 0) {  // a block per row, part of it in shared memory
    check_blocks(a.rows, a.rows);
    allow_spill(kernel_of<Kind, T, max_vpt>(p, c));  // run() has checked the plan against its limit
    if (whole) rows_kernel<Kind, T, max_vpt, true, true><<<unsigned(a.rows), p.block, spill_bytes(p), stream>>>(a, p.group, p.ahead, p.spill);
    else rows_kernel<Kind, T, max_vpt, false, true><<<unsigned(a.rows), p.block, spill_bytes(p), stream>>>(a, p.group, p.ahead, p.spill);
    check_launch("normalization kernel (rows partly in shared memory)");
  } else if (p.shape == norm::shape::cluster) {  // run() has checked that the rows are whole units
    check_blocks(a.rows * p.parts, a.rows);
    with_vpt(p.vpt, [&]<int V>() {
      const cluster_launch l(unsigned(a.rows * p.parts), p.block, p.parts, stream);
      cuda_check(cudaLaunchKernelEx(&l.config, &block_rows_kernel<Kind, T, V, true>, a, p.ahead, p.group * V),
                 "normalization kernel (rows held by clusters of blocks)");
    });
  } else if (p.shape == norm::shape::rows) {
    const index_t per_block = index_t(p.block / p.group) * p.stack, blocks = (a.rows + per_block - 1) / per_block;
    check_blocks(blocks, a.rows);
    if (p.stack > 1) {
      with_stack(p.vpt, p.stack, [&]<int V, int S>() {
        stacked_rows_kernel<Kind, T, V, S><<<unsigned(blocks), p.block, 0, stream>>>(a, p.group, p.ahead);
      });
      check_launch("normalization kernel (rows stacked in groups)");
      return;
    }
    with_vpt(p.vpt, [&]<int V>() {
      if (c == code::block) block_rows_kernel<Kind, T, V><<<unsigned(blocks), p.block, 0, stream>>>(a, p.ahead, 0);
      else if (c == code::whole_tail) rows_kernel<Kind, T, V, true, false, true><<<unsigned(blocks), p.block, 0, stream>>>(a, p.group, p.ahead, 0);
      else if (whole) rows_kernel<Kind, T, V, true><<<unsigned(blocks), p.block, 0, stream>>>(a, p.group, p.ahead, 0);
      else rows_kernel<Kind, T, V, false><<<unsigned(blocks), p.block, 0, stream>>>(a, p.group, p.ahead, 0);
    });
    check_launch("normalization kernel");
  } else {
    const std::size_t rows = std::size_t(a.rows), chunks = rows * std::size_t(p.parts);
    const std::size_t counters = align_up(sizeof(unsigned long long) + sizeof(unsigned) * rows, 256);
    scratch_block state(counters + sizeof(moments) * chunks, stream);
    cuda_check(cudaMemsetAsync(state.data(), 0, counters, stream), "cudaMemsetAsync (normalization)");
    stream_state st{state.as<unsigned long long>(), state.as<unsigned>(sizeof(unsigned long long)), state.as<moments>(counters), p.lag};
    const index_t grid = std::min<index_t>(p.grid, 2 * index_t(chunks));
    with_vpt(p.vpt, [&]<int V>() {
      if (whole) streamed_kernel<Kind, T, V, true><<<unsigned(grid), p.block, 0, stream>>>(a, p.parts, st);
      else streamed_kernel<Kind, T, V, false><<<unsigned(grid), p.block, 0, stream>>>(a, p.parts, st);
    });
    check_launch("normalization (streamed rows)");
  }
}
#endif

// ---- the host backend: the same plan, groups and parts emulated thread by thread ---------------

/// group_sum() for a group's threads held in an array: the same butterflies the device runs.
inline float host_group_sum(std::vector<float> lane, int G) {
  auto butterfly_sum = [](std::vector<float>& v, int width) {
    for (int o = 1; o < width; o <<= 1) {
      std::vector<float> next(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) next[i] = v[i] + v[i ^ std::size_t(o)];
      v.swap(next);
    }
  };
  lane.resize(std::max<std::size_t>(lane.size(), 32), 0.0f);
  butterfly_sum(lane, G < 32 ? G : 32);
  if (G <= 32) return lane[0];
  std::vector<float> warps(32, 0.0f);
  for (int w = 0; w < G / 32; ++w) warps[std::size_t(w)] = lane[std::size_t(w) * 32];
  butterfly_sum(warps, 32);
  return warps[0];
}
/// butterfly() over 32 lanes' statistics held in an array (the merge of a streamed row's chunks).
template <norm_kind Kind>
moments host_butterfly(std::vector<moments> lane) {
  for (int o = 1; o < 32; o <<= 1) {
    std::vector<moments> next(lane.size());
    for (std::size_t i = 0; i < lane.size(); ++i) next[i] = merge<Kind>(lane[i], lane[i ^ std::size_t(o)]);
    lane.swap(next);
  }
  return lane[0];
}
/// part_moments() for a part's threads held in an array.
template <norm_kind Kind, class T, int V, bool Spill>
moments host_part_moments(const row_part<T, V, Spill>* th, float n, int G, bool cluster) {
  // value(thread) of threads [first, first + width), summed as a group of that width sums it.
  auto sum_of = [&](int first, int width, auto value) {
    std::vector<float> lane(static_cast<std::size_t>(width));
    for (int t = 0; t < width; ++t) lane[std::size_t(t)] = value(th[first + t]);
    return host_group_sum(std::move(lane), width);
  };
  if constexpr (Kind == norm_kind::rms) {
    return {n, 0.0f, sum_of(0, G, [](const auto& t) { return t.template sum<Kind>(); })};
  } else {
    if (!merges_warps<T>(G, cluster)) {
      const float sum = sum_of(0, G, [](const auto& t) { return t.template sum<Kind>(); });
      const float mean = n > 0 ? sum / n : 0.0f;
      return {n, mean, sum_of(0, G, [&](const auto& t) { return t.sum_squares(mean); })};
    }
    std::vector<float> wsum(32, 0.0f), wterm(32, 0.0f), wcount(32, 0.0f), wm2(32, 0.0f);
    for (int w = 0; w < G / 32; ++w) {
      const float count = sum_of(w * 32, 32, [](const auto& t) { return t.count(); });
      const float sum = sum_of(w * 32, 32, [](const auto& t) { return t.template sum<Kind>(); });
      wcount[std::size_t(w)] = count, wsum[std::size_t(w)] = sum;
      wm2[std::size_t(w)] = sum_of(w * 32, 32, [&](const auto& t) { return t.sum_squares(count > 0 ? sum / count : 0.0f); });
    }
    const float mean = n > 0 ? host_group_sum(wsum, 32) / n : 0.0f;
    for (std::size_t w = 0; w < 32; ++w) {
      const float d = wcount[w] > 0 ? wsum[w] / wcount[w] - mean : 0.0f;
      wterm[w] = wm2[w] + wcount[w] * d * d;
    }
    return {n, mean, host_group_sum(wterm, 32)};
  }
}

/// One row the way the plan's kernel treats it: every thread of every part loads its units, each
/// part's group merges its threads' statistics, the parts merge theirs, every thread writes.
template <norm_kind Kind, class T, int V, bool Spill = false>
void host_row(const plan& p, const args<T>& a, code c, index_t r) {
  const T* xrow = a.x + r * a.x_pitch;
  const row_span s = span_of(xrow, a.cols);
  const int G = p.group, parts = p.shape == norm::shape::rows ? 1 : p.parts;
  const index_t chunk = p.shape == norm::shape::rows ? s.units : index_t(G) * V;
  std::vector<row_part<T, V, Spill>> threads(std::size_t(parts) * G);
  std::vector<vec::word16> shared(Spill ? std::size_t(p.spill) * std::size_t(G) : 0);  // the block's shared-memory slots
  if constexpr (Spill)
    for (int t = 0; t < G; ++t) threads[std::size_t(t)].sp = shared.data() + t, threads[std::size_t(t)].spill = p.spill;
  std::vector<moments> part_stats(std::size_t(std::max(parts, 32)), moments{0.0f, 0.0f, 0.0f});
  for (int q = 0; q < parts; ++q) {
    const index_t begin = q * chunk, end = std::min(s.units, begin + chunk);
    int head_n;
    index_t tail_c;
    if (partial_elements(s, begin, end, lanes<T>, head_n, tail_c) > G)
      throw std::logic_error("strata: normalization plan " + describe(p) + " has fewer threads than partial elements");
    row_part<T, V, Spill>* th = &threads[std::size_t(q) * G];
    for (int t = 0; t < G; ++t) {
      if (c == code::general) {
        th[t].load(xrow, s, begin, end, t, G, begin < end);
      } else {
        th[t].load_whole(xrow, begin, std::min(end, a.cols / lanes<T>), t, G, begin < end);
        if (c == code::whole_tail) th[t].load_tail(xrow, a.cols, begin, s.units, t, begin < end);
      }
    }
    part_stats[std::size_t(q)] = host_part_moments<Kind>(th, p.shape == norm::shape::rows ? float(a.cols) : elements_in<T>(s, begin, end), G,
                                                   p.shape == norm::shape::cluster);
  }
  moments m = part_stats[0];
  if (p.shape == norm::shape::cluster)  // every block merges the parts in rank order
    for (int q = 1; q < parts; ++q) m = merge<Kind>(m, part_stats[std::size_t(q)]);
  if (p.shape == norm::shape::streamed) {
    std::vector<moments> lane(32, moments{0.0f, 0.0f, 0.0f});
    for (int q = 0; q < parts; ++q) lane[std::size_t(q % 32)] = merge<Kind>(lane[std::size_t(q % 32)], part_stats[std::size_t(q)]);
    m = host_butterfly<Kind>(lane);
  }
  float mean, rstd;
  finish<Kind>(m, a.cols, a.eps, mean, rstd);
  for (const row_part<T, V, Spill>& th : threads) {
    if (c != code::general) th.template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, row_span{a.cols, 0, 0, 0, 0}, mean, rstd);
    else write_part<Kind>(th, a, xrow, a.y + r * a.y_pitch, s, mean, rstd);
  }
  if (c == code::whole_tail && a.pad_tail)  // the partial unit written whole (rows_kernel)
    for (index_t e = a.cols; e % lanes<T> != 0; ++e) a.y[r * a.y_pitch + e] = from_float<T>(0.0f);
}

template <norm_kind Kind, class T>
void host_rows(const plan& p, const args<T>& a, code c) {
  if (p.shape == norm::shape::tiled) {  // the kernel's rows in shared memory: here a copy of each
    with_tile_cols<T>(p.group, [&]<int C>() {
      STRATA_PARALLEL_FOR_IF(a.rows > 4096)
      for (index_t r = 0; r < a.rows; ++r) {
        alignas(16) T row[C];
        std::copy(a.x + r * a.x_pitch, a.x + r * a.x_pitch + a.cols, row);
        normalize_short_row<Kind, T, C>(row, int(a.cols), a.gamma, a.beta, a.eps);
        std::copy(row, row + a.cols, a.y + r * a.y_pitch);
      }
    });
    return;
  }
  if (p.spill > 0) {
    STRATA_PARALLEL_FOR_IF(a.rows > 16)
    for (index_t r = 0; r < a.rows; ++r) host_row<Kind, T, max_vpt, true>(p, a, c, r);
    return;
  }
  with_vpt(p.vpt, [&]<int V>() {
    STRATA_PARALLEL_FOR_IF(a.rows > 16)
    for (index_t r = 0; r < a.rows; ++r) host_row<Kind, T, V>(p, a, c, r);
  });
}

// ---- the entry point ----------------------------------------------------------------------------

/// Whether every row starts on a 16-byte boundary (whole units, then perhaps a partial last one),
/// and gamma and beta lie on 16-byte boundaries: the whole-unit code (code_for).
template <class T>
bool whole_units(const args<T>& a) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(a.x) && (std::size_t(a.x_pitch) * sizeof(T)) % 16 == 0 && (!a.gamma || aligned(a.gamma)) && (!a.beta || aligned(a.beta));
}

/// Whether y's rows lie as x's do relative to 16-byte boundaries (whole units store as vectors).
template <class T>
bool in_phase(const args<T>& a) {
  return same_phase(a.x, a.y) && (a.rows <= 1 || (std::size_t(a.x_pitch - a.y_pitch) * sizeof(T)) % 16 == 0);
}

/// Row 0's offset from a 16-byte boundary in elements, and whether the pitch moves the offset from
/// row to row (a dense tensor of odd width).
template <class T>
int first_head(const args<T>& a) {
  return int(reinterpret_cast<std::uintptr_t>(a.x) % 16 / sizeof(T));
}
template <class T>
bool offsets_vary(const args<T>& a) {
  return a.rows > 1 && (std::size_t(a.x_pitch) * sizeof(T)) % 16 != 0;
}

/// Whether x's rows and y's lie back to back (pitch = row length) at one offset from 16-byte
/// boundaries: a run of rows is then one range of memory in each (tiled plans).
template <class T>
bool lies_back_to_back(const args<T>& a) {
  return a.x_pitch == a.cols && a.y_pitch == a.cols && same_phase(a.x, a.y);
}

/// What a plan must cover for these rows (norm_plan.hpp: row_units) and whether the kernels' fast
/// path applies (whole_units and y's rows in phase with x's). Rows that all start at one offset
/// from a 16-byte boundary give exact counts; rows whose pitch moves that offset take the largest
/// over offsets.
struct row_needs {
  row_units units;
  bool whole, tail;  // tail: rows end in a partial unit (code_for)
};
template <class T>
row_needs needs_of(const args<T>& a) {
  const int L = lanes<T>, head0 = first_head(a);
  const bool vary = offsets_vary(a);
  row_needs n{row_units{0, 1, 0}, whole_units(a) && in_phase(a), a.cols % L != 0};
  if (lies_back_to_back(a)) n.units.dense_bytes = a.cols * index_t(sizeof(T)), n.units.element_size = int(sizeof(T));
  for (int head = vary ? 0 : head0; head <= (vary ? L - 1 : head0); ++head) {
    const index_t units = units_spanned(a.cols, int(sizeof(T)), head);
    const row_span s{a.cols, units, head > 0 ? 1 : 0, (head + a.cols) / L, head};
    int head_n;
    index_t tail_c;
    n.units.spanned = std::max(n.units.spanned, units);
    n.units.held = std::max(n.units.held, s.full_end - s.full_begin);
    n.units.partial = std::max(n.units.partial, partial_elements(s, 0, units, L, head_n, tail_c));
  }
  return n;
}

/// The host backend's model GPU, fitted to the rows as gpu_model is (fit_to_rows).
inline device_model host_model_for(norm_kind kind, bool whole = false, bool tail = false, int element_size = 4) {
  device_model m = host_model();
  fit_to_rows(m, kind, whole, tail, element_size);
  return m;
}

/// The plan a call would take for such rows, and every plan the choice weighs (sweeps, tests).
template <norm_kind Kind, class T>
plan planned(const row_needs& n) {
#if defined(STRATA_BACKEND_CUDA)
  return chosen<Kind, T>(n.units, n.whole, n.tail);
#else
  return choose(n.units, host_model_for(Kind, n.whole, n.tail, int(sizeof(T))));
#endif
}
template <norm_kind Kind, class T>
std::vector<plan> plans_considered(const row_needs& n) {
#if defined(STRATA_BACKEND_CUDA)
  return considered(n.units, gpu_model<Kind, T>(n.whole, n.tail));
#else
  return considered(n.units, host_model_for(Kind, n.whole, n.tail, int(sizeof(T))));
#endif
}

/// gamma and beta as every row reads them in 16-byte units: where the rows start at varying
/// offsets from 16-byte boundaries (a dense tensor of odd width) or all at one offset that gamma
/// and beta do not share, most rows read gamma and beta element by element. For such rows, a copy
/// of gamma and beta per offset, each placed so its units lie as the rows of that offset hold
/// theirs, is made in stream-ordered scratch before the launch (16 bytes per element of a row for
/// each array), where it pays for its launch: where a unit's element-wise affine reads number at
/// least affine_copy_reads and the input holds at least affine_copy_bytes. On the H200, dense
/// torch tensors of 1023-12287 elements a row (about 128 MiB each way) run bf16 layer norm with
/// gamma and beta 1.13-1.19x faster with the copies, while RMS norm (gamma only, 8 reads a unit)
/// and fp32 layer norm (2 x 4) would run 2-4.5% slower, the copy's launch costing more than the
/// reads it saves. The copies are
/// at most the input's size. Returns the bytes taken (0: none; `a` unchanged).
inline constexpr int affine_copy_reads = 16;
inline std::atomic<std::size_t> affine_copy_bytes{std::size_t(32) << 20};  // tests lower it to run the copies on small inputs
template <class T>
std::size_t affine_copies(args<T>& a, std::optional<scratch_block>& block, stream_t stream) {
  constexpr int L = lanes<T>;
  if ((!a.gamma && !a.beta) || !in_phase(a) || whole_units(a)) return 0;  // element-wise stores, or vectors already
  if (!offsets_vary(a) && affine_on_units(a.gamma, a.beta, first_head(a))) return 0;
  const std::size_t input = std::size_t(a.rows) * std::size_t(a.cols) * sizeof(T);
  if ((a.gamma ? L : 0) + (a.beta ? L : 0) < affine_copy_reads || input < affine_copy_bytes.load(std::memory_order_relaxed)) return 0;
  const index_t stride = index_t(align_up(std::size_t(a.cols + L), std::size_t(L)));
  const std::size_t bytes = 2 * std::size_t(L) * std::size_t(stride) * sizeof(T);
  if (bytes > input) return 0;
  block.emplace(bytes, stream);
  T* out = block->template as<T>();
#if defined(STRATA_BACKEND_CUDA)
  const index_t n = L * a.cols, blocks = std::min<index_t>((n + 255) / 256, 4096);
  affine_copies_kernel<T><<<unsigned(blocks), 256, 0, stream>>>(a.gamma, a.beta, out, a.cols, stride);
  check_launch("normalization (gamma and beta per row offset)");
#else
  (void)stream;
  for (index_t h = 0; h < L; ++h)
    for (index_t c = 0; c < a.cols; ++c) {
      if (a.gamma) out[h * (stride + 1) + c] = a.gamma[c];
      if (a.beta) out[L * stride + h * (stride + 1) + c] = a.beta[c];
    }
#endif
  a.gamma = a.gamma ? out : nullptr;
  a.beta = a.beta ? out + L * stride : nullptr;
  a.affine_step = stride + 1;
  return bytes;
}

/// args::vec_rows for these rows, after affine_copies: y's rows in phase with x's, and gamma and
/// beta absent, copied per offset, or on the one offset every row starts at.
template <class T>
bool vec_rows(const args<T>& a) {
  if (!in_phase(a)) return false;
  if ((!a.gamma && !a.beta) || a.affine_step > 0) return true;
  return !offsets_vary(a) && affine_on_units(a.gamma, a.beta, first_head(a));
}

template <norm_kind Kind, class T>
path run(const char* op, matrix_view<const T> x, matrix_view<T> y, cuda::std::span<const T> gamma, cuda::std::span<const T> beta,
         float eps, stream_t stream, const plan* forced) {
  if (y.rows != x.rows || y.cols != x.cols)
    throw size_error("strata: " + std::string(op) + ": output is " + std::to_string(y.rows) + " x " + std::to_string(y.cols) + ", input " +
                     std::to_string(x.rows) + " x " + std::to_string(x.cols));
  if ((!gamma.empty() && index_t(gamma.size()) != x.cols) || (!beta.empty() && index_t(beta.size()) != x.cols))
    throw size_error("strata: " + std::string(op) + ": gamma and beta hold " + std::to_string(gamma.size()) + " and " +
                     std::to_string(beta.size()) + " elements; rows have " + std::to_string(x.cols) + " (or pass none)");
  if (x.pitch < x.cols || y.pitch < y.cols) throw size_error("strata: " + std::string(op) + ": a pitch is shorter than a row");
  args<T> a{x.data, y.data, gamma.empty() ? nullptr : gamma.data(), beta.empty() ? nullptr : beta.data(), x.rows, x.cols,
            x.pitch, y.pitch, eps};
  // Whole units are stored as vectors where y's rows start where x's do relative to 16 bytes.
  const path taken = in_phase(a) ? path::vectorized : path::scalar;
  std::string (*const type)() = &type_name<T>;
  const operand in{"input", x.where, x.rows, type, "rows"}, out{"output", y.where, y.rows, type, "rows"};
  const operand g{"gamma", a.gamma ? locate(a.gamma) : memory_location{}, index_t(gamma.size()), type, "elements"};
  const operand b{"beta", a.beta ? locate(a.beta) : memory_location{}, index_t(beta.size()), type, "elements"};
  launch_scope scope(op, stream, {in, out, g, b});
  if (x.rows == 0 || x.cols == 0) return taken;
  const row_needs needs = needs_of(a);
  const plan p = forced ? *forced : planned<Kind, T>(needs);
  if (p.spill > 0) {  // a plan given, not chosen, may need more shared memory than the device lets a block have
#if defined(STRATA_BACKEND_CUDA)
    const std::size_t limit = allow_spill(kernel_of<Kind, T, max_vpt>(p, code_for(p, needs.whole, needs.tail)));
#else
    const std::size_t limit = host_model_for(Kind).max_block_shared;
#endif
    if (spill_bytes(p) > limit)
      throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" holds " + std::to_string(spill_bytes(p)) +
                                  " bytes of a row in shared memory a block; this device allows " + std::to_string(limit));
  }
  if (p.shape == norm::shape::cluster && (code_for(p, needs.whole, needs.tail) != code::block || p.parts < 1 || p.parts > max_cluster ||
                                         index_t(p.parts) * p.group * p.vpt < needs.units.held))
    throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" (at most " + std::to_string(max_cluster) +
                                " blocks a cluster) needs rows of at most " +
                                std::to_string(index_t(p.parts) * p.group * p.vpt) + " whole 16-byte units on 16-byte boundaries; these rows span " +
                                std::to_string(needs.units.spanned) + " units" + (needs.whole && !needs.tail ? "" : ", not all whole or not in phase"));
  // A row plan given, not chosen, whose group has fewer threads than a row has elements in
  // partial units, or fewer slots than the row has whole units, would leave elements out: each
  // partial unit's element is held by a thread of its own, each whole unit by a slot.
  if (p.shape == norm::shape::rows &&
      ((p.spill == 0 && p.group < needs.units.partial) || index_t(p.group) * (p.vpt + p.spill) < needs.units.held))
    throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" holds a row with " + std::to_string(p.group) + " threads of " +
                                std::to_string(p.vpt + p.spill) + " units; these rows have " + std::to_string(needs.units.held) +
                                " whole 16-byte units and " + std::to_string(needs.units.partial) + " elements in partial units, one a thread");
  if (p.stack > 1 && (p.shape != norm::shape::rows || code_for(p, needs.whole, needs.tail) != code::whole || p.group > 32 || p.spill > 0 ||
                     p.vpt < 2 || (p.stack != 2 && p.stack != 4) || p.vpt * p.stack > max_vpt || index_t(p.group) * p.vpt < needs.units.held))
    throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" stacks rows in a group: it needs 2 or 4 rows a group of "
                                "at most 32 threads, 2 or more units of a row a thread and at most " + std::to_string(max_vpt) +
                                " in all, rows of at most " + std::to_string(index_t(p.group) * p.vpt) +
                                " whole 16-byte units on 16-byte boundaries; these rows span " + std::to_string(needs.units.spanned) + " units" +
                                (needs.whole && !needs.tail ? "" : ", not all whole or not in phase"));
  // A streamed plan given, not chosen: chunks that miss part of a row leave it unwritten, and a lag
  // shorter than a row's chunks can leave a normalize item waiting for a statistics item that no
  // running block has taken.
  if (p.shape == norm::shape::streamed && (p.group < 32 || p.group % 32 != 0 || p.group > max_group || p.block != p.group || p.vpt < 1 ||
                                           p.vpt > max_vpt || p.grid < 1 || p.lag < p.parts ||
                                           index_t(p.parts) * p.group * p.vpt < needs.units.spanned))
    throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" streams rows in chunks of a block of 32 to " +
                                std::to_string(max_group) + " threads (a multiple of 32) holding 1 to " + std::to_string(max_vpt) +
                                " units a thread, on a grid of at least one block, with a lag of at least a row's chunks, and chunks that cover "
                                "the row; these rows span " + std::to_string(needs.units.spanned) + " units");
  // A tiled plan given, not chosen: its blocks read a range of rows as one, and its threads hold a
  // row in registers.
  if (p.shape == norm::shape::tiled &&
      (!lies_back_to_back(a) || std::size_t(a.cols) * sizeof(T) > tiled_max_row_bytes || p.group < a.cols || p.tile < 1 || p.block != tiled_block ||
       tile_shared_bytes(p, std::size_t(a.cols) * sizeof(T)) > 48 * 1024))
    throw std::invalid_argument("strata: normalization plan \"" + describe(p) + "\" takes rows of at most " + std::to_string(tiled_max_row_bytes) +
                                " bytes lying back to back in x and y at one offset from 16-byte boundaries, blocks of " +
                                std::to_string(tiled_block) + " threads and at most 48 KiB of rows a block; these rows hold " +
                                std::to_string(std::size_t(a.cols) * sizeof(T)) + " bytes" + (lies_back_to_back(a) ? "" : ", not back to back"));
  std::optional<scratch_block> copies;  // given back in stream order after the launch
  if (p.shape != norm::shape::tiled) affine_copies(a, copies, stream);  // tiled rows read gamma and beta as given
  a.vec_rows = vec_rows(a);
  a.pad_tail = y.owns_padding && needs.whole && needs.tail;
#if defined(STRATA_BACKEND_CUDA)
  launch<Kind>(p, a, code_for(p, needs.whole, needs.tail), stream);
#else
  (void)stream;
  host_rows<Kind>(p, a, code_for(p, needs.whole, needs.tail));
#endif
  return taken;
}

/// The normalization with a configuration given instead of chosen (sweeps that validate the choice).
template <norm_kind Kind, class T>
path run_with(const plan& p, matrix_view<const T> x, matrix_view<T> y, cuda::std::span<const T> gamma, cuda::std::span<const T> beta,
              float eps, stream_t stream = {}) {
  return run<Kind>("strata normalization", x, y, gamma, beta, eps, stream, &p);
}

}  // namespace detail::norm

/// Layer normalization of every row of x into y (same shape; any pitch, in place is fine):
/// y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and variance over the row in fp32.
/// gamma and beta hold x.cols elements, or are empty (1 and 0). Stream ordered. Rows move in
/// 16-byte units on 16-byte boundaries, a row's partial first and last units element by element
/// (a matrix's rows held by one group each write the last one whole, zeros in the padding it owns).
/// Returns path::vectorized when y's rows lie like x's relative to 16-byte boundaries (whole units
/// stored as vectors), path::scalar when they do not and y is written element by element.
/// T comes from y alone: x, gamma and beta may be mutable views and spans (they convert to const).
template <class T>
path layer_norm(std::type_identity_t<matrix_view<const T>> x, matrix_view<T> y, std::type_identity_t<cuda::std::span<const T>> gamma,
                std::type_identity_t<cuda::std::span<const T>> beta, float eps = 1e-5f, stream_t stream = {}) {
  return detail::norm::run<norm_kind::layer>("strata::layer_norm", x, y, gamma, beta, eps, stream, nullptr);
}

/// RMS normalization: y = x / sqrt(mean(x^2) + eps) * gamma (gamma may be empty: 1).
template <class T>
path rms_norm(std::type_identity_t<matrix_view<const T>> x, matrix_view<T> y, std::type_identity_t<cuda::std::span<const T>> gamma,
              float eps = 1e-6f, stream_t stream = {}) {
  return detail::norm::run<norm_kind::rms>("strata::rms_norm", x, y, gamma, cuda::std::span<const T>{}, eps, stream, nullptr);
}

}  // namespace strata
