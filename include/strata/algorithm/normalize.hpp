// Row normalization over 2-D views of any pitch (strata's matrix or a dense tensor someone else
// owns): layer norm (y = (x - mean) / sqrt(var + eps) * gamma + beta) and RMS norm
// (y = x / sqrt(mean(x^2) + eps) * gamma), fp32 / bf16 / fp16 storage, fp32 arithmetic, gamma and
// beta optional. Each row is read from device memory once and held in registers: by one warp or one
// block per row (the row's units spread over the group), or for rows longer than a block holds, by
// several co-resident blocks that exchange partial statistics. Rows whose starts are not 16-byte
// aligned move element by element. The configuration comes from the row length, the dtype and the
// device (occupancy API); the path taken is returned.
#pragma once

#include <strata/algorithm/rows.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#if defined(STRATA_BACKEND_CUDA)
#include <cooperative_groups.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace strata {

enum class norm_kind { layer, rms };

namespace detail::norm {

/// Everything a normalization kernel needs, by value.
template <class T>
struct args {
  const T* x;
  T* y;
  const T* gamma;  // null: 1
  const T* beta;   // null: 0
  index_t rows, cols, x_pitch, y_pitch;
  float eps;
  bool whole_tail;  // both x and y own their rows' padding: a partial last unit moves whole
};

/// How rows are spread over the GPU.
enum class shape : int {
  warp,      ///< a warp per row, four warps per block
  block,     ///< a block per row, `threads` threads
  cluster,   ///< a thread block cluster of `parts` blocks per row (Hopper), row still read once
  split,     ///< `parts` co-resident blocks per row (a cooperative grid), row still read once
  two_pass,  ///< rows longer than the whole GPU holds: statistics, then x read again
};
struct plan {
  norm::shape shape = norm::shape::block;
  int vpt = 4;         // units per thread
  int threads = 128;   // per block
  int parts = 1;       // blocks per row (split)
  bool exact = false;  // the group's units cover the row exactly: no masks
  int access = 16;     // bytes per unit: 16, or sizeof(T) for rows not 16-byte aligned
  int grid = 0;        // blocks launched (split: co-resident blocks)
};

inline std::string describe(const plan& p) {
  static const char* names[] = {"warp", "block", "cluster", "split", "two_pass"};
  return std::string(names[int(p.shape)]) + " vpt=" + std::to_string(p.vpt) + " threads=" + std::to_string(p.threads) +
         (p.parts > 1 ? " parts=" + std::to_string(p.parts) : "") + (p.exact ? " exact" : "") +
         " access=" + std::to_string(p.access);
}

/// Row statistics as (count, mean, M2), merged as Chan et al. do (stable for long rows).
struct moments {
  float count, mean, m2;
};
STRATA_HD inline moments merge(const moments& a, const moments& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const float n = a.count + b.count, d = b.mean - a.mean;
  return {n, a.mean + d * (b.count / n), a.m2 + b.m2 + d * d * (a.count * b.count / n)};
}
/// mean and 1/sqrt(var + eps) for layer norm, 0 and 1/sqrt(mean(x^2) + eps) for RMS norm, from
/// moments of the row (for RMS norm, mean is 0 and m2 the sum of squares).
template <norm_kind Kind>
STRATA_HD inline void finish(const moments& m, float eps, float& mean, float& rstd) {
  const float var = m.count > 0 ? m.m2 / m.count : 0.0f;
#if defined(__CUDA_ARCH__)
  rstd = rsqrtf(var + eps);
#else
  rstd = 1.0f / std::sqrt(var + eps);
#endif
  mean = Kind == norm_kind::layer ? m.mean : 0.0f;
}

#if defined(STRATA_BACKEND_CUDA)
/// gamma or beta's unit j as loaded: one access inside the row, element by element for a partial
/// unit (they are the caller's arrays).
template <class T, int A, bool Exact>
__device__ inline vec::word_t<A> load_affine(const T* p, index_t cols, index_t j) {
  if constexpr (Exact) return vec::load<A>(p + j * rows::lanes<T, A>);
  else return rows::load_unit<T, A>(p, cols, j, false);
}

/// Writes the thread's units of a row: (x - mean) * rstd * gamma + beta (gamma 1 and beta 0 where
/// null). Gamma and beta are held as loaded (a bf16 unit is 4 registers, not 8 floats), and the
/// next unit's are loaded before the current one is stored.
template <class T, int VPT, int A, bool Exact>
__device__ inline void write_row(const rows::packed<T, VPT, A, Exact>& cur, T* out, const T* gamma, const T* beta, index_t cols,
                                 bool whole_tail, int first, int step, float mean, float rstd) {
  using P = rows::packed<T, VPT, A, Exact>;
  constexpr int width = P::width;
  vec::word_t<A> g{}, b{}, gn{}, bn{};
  if (P::valid(cols, first, step, 0) > 0) {
    if (gamma) g = load_affine<T, A, Exact>(gamma, cols, first);
    if (beta) b = load_affine<T, A, Exact>(beta, cols, first);
  }
  STRATA_UNROLL
  for (int k = 0; k < VPT; ++k) {
    const int n = P::valid(cols, first, step, k);
    if (n == 0) break;  // units past the row's end (and all after them)
    const index_t j = index_t(first) + index_t(k) * step;
    if (k + 1 < VPT && P::valid(cols, first, step, k + 1) > 0) {
      if (gamma) gn = load_affine<T, A, Exact>(gamma, cols, j + step);
      if (beta) bn = load_affine<T, A, Exact>(beta, cols, j + step);
    }
    float v[width], gf[width], bf[width];
    cur.floats(cols, first, step, k, v);
    rows::unpack_unit<T, A>(g, gf);
    rows::unpack_unit<T, A>(b, bf);
    STRATA_UNROLL
    for (int e = 0; e < width; ++e) {
      const float scale = gamma ? gf[e] : 1.0f, shift = beta ? bf[e] : 0.0f;
      v[e] = e < n ? (v[e] - mean) * rstd * scale + shift : 0.0f;
    }
    if constexpr (Exact) vec::store<A>(out + j * width, rows::pack_unit<T, A>(v));
    else rows::store_unit<T, A>(out, cols, j, v, whole_tail);
    g = gn, b = bn;
  }
}

/// One row per group (a warp or a block), a grid of all rows: as many rows in flight as registers
/// allow, no loop over rows (a loop keeps loop-carried state in registers, which costs resident rows).
template <norm_kind Kind, class Group, int VPT, int A, bool Exact, class T>
__global__ void __launch_bounds__(Group::max_threads) rows_kernel(args<T> a) {
  __shared__ typename Group::storage s;
  const int first = Group::rank(), step = Group::size();
  const index_t r = Group::first_row();
  if (r >= a.rows) return;  // a warp group's block past the last row (whole warps: no barrier is skipped)
  rows::packed<T, VPT, A, Exact> cur;
  cur.load(a.x + r * a.x_pitch, a.cols, first, step, a.whole_tail);
  const float n = float(a.cols);
  moments m{n, 0.0f, 0.0f};
  if constexpr (Kind == norm_kind::layer) {
    m.mean = Group::sum(s, 0, cur.sum(a.cols, first, step)) / n;
    m.m2 = Group::sum(s, 1, cur.sum_squares(a.cols, first, step, m.mean));
  } else {
    m.m2 = Group::sum(s, 0, cur.sum_squares(a.cols, first, step, 0.0f));
  }
  float mean, rstd;
  finish<Kind>(m, a.eps, mean, rstd);
  write_row(cur, a.y + r * a.y_pitch, a.gamma, a.beta, a.cols, a.whole_tail, first, step, mean, rstd);
}

/// Rows longer than a block holds and at most `max_cluster` blocks long: a thread block cluster of
/// `parts` blocks per row (grid = rows x parts), each block holding its chunk of the row in
/// registers. The blocks' partial (count, mean, M2) meet in the first block's shared memory
/// (distributed shared memory) behind the cluster's hardware barrier, and every block merges them
/// in part order: no spinning and no waves, and the GPU overlaps clusters as it overlaps blocks.
inline constexpr int cluster_threads = 512, max_cluster = 16;

template <norm_kind Kind, int VPT, bool Exact, class T>
__global__ void __launch_bounds__(cluster_threads) cluster_kernel(args<T> a, int parts) {
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  using group = rows::block_group<cluster_threads>;
  __shared__ typename group::storage s;
  __shared__ moments partial[max_cluster];  // the rank-0 block's: every block's moments
  __shared__ float stats[2];
  const int part = int(cluster.block_rank()), step = int(blockDim.x);
  const index_t r = index_t(blockIdx.x) / parts;
  const index_t chunk = index_t(step) * VPT, units = (a.cols + rows::lanes<T> - 1) / rows::lanes<T>;
  const index_t u0 = index_t(part) * chunk;
  const index_t cols = std::min<index_t>(a.cols - u0 * rows::lanes<T>, chunk * rows::lanes<T>);
  const bool last = u0 + chunk >= units;
  rows::packed<T, VPT, 16, Exact> cur;
  const T* xrow = a.x + r * a.x_pitch + u0 * rows::lanes<T>;
  if (cols > 0) cur.load(xrow, cols, int(threadIdx.x), step, a.whole_tail && last);
  moments mine{float(std::max<index_t>(cols, 0)), 0.0f, 0.0f};
  if (cols > 0) {
    if constexpr (Kind == norm_kind::layer) {
      mine.mean = group::sum(s, 0, cur.sum(cols, int(threadIdx.x), step)) / mine.count;
      mine.m2 = group::sum(s, 1, cur.sum_squares(cols, int(threadIdx.x), step, mine.mean));
    } else {
      mine.m2 = group::sum(s, 0, cur.sum_squares(cols, int(threadIdx.x), step, 0.0f));
    }
  }
  if (threadIdx.x == 0) cluster.map_shared_rank(partial, 0)[part] = mine;
  cluster.sync();
  if (threadIdx.x == 0) {
    const moments* all = cluster.map_shared_rank(partial, 0);
    moments m{0.0f, 0.0f, 0.0f};
    for (int q = 0; q < parts; ++q) m = merge(m, all[q]);
    finish<Kind>(m, a.eps, stats[0], stats[1]);
  }
  cluster.sync();  // also keeps the first block's shared memory alive until every block has read it
  if (cols > 0)
    write_row(cur, a.y + r * a.y_pitch + u0 * rows::lanes<T>, a.gamma ? a.gamma + u0 * rows::lanes<T> : nullptr,
              a.beta ? a.beta + u0 * rows::lanes<T> : nullptr, cols, a.whole_tail && last, int(threadIdx.x), step, stats[0], stats[1]);
}

/// Launches cluster_kernel with clusters of `parts` blocks (sizes over 8 need the non-portable
/// attribute); returns false where the device cannot run such clusters.
template <norm_kind Kind, int VPT, bool Exact, class T>
bool launch_clusters(const args<T>& a, int parts, stream_t stream, bool dry_run) {
  auto* kernel = &cluster_kernel<Kind, VPT, Exact, T>;
  if (parts > 8 && cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(a.rows * parts));
  config.blockDim = dim3(unsigned(cluster_threads));
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = unsigned(parts), attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
  config.attrs = &attribute, config.numAttrs = 1;
  if (dry_run) {
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess && clusters > 0;
  }
  cuda_check(cudaLaunchKernelEx(&config, kernel, a, parts), "cudaLaunchKernelEx (normalization, clusters)");
  return true;
}

/// Where split rows' blocks meet: per row slot, two sets of partials (waves alternate) and an
/// arrival counter that only grows (wave w waits for (w + 1) * parts arrivals).
struct split_state {
  moments* partials;   // [2][slots][parts]
  unsigned* arrived;   // [slots], zero before the launch
  int slots;
};

/// Rows longer than a block holds: `parts` blocks per row, each holding its chunk of the row in
/// registers. The grid is co-resident (a cooperative launch), so the blocks of a row can wait for
/// each other: each publishes its chunk's (count, mean, M2), waits until all parts of the row have,
/// merges them in part order (the same result in every block) and writes its chunk. Blocks go
/// through the rows in waves of gridDim.x / parts rows.
// A 1024-thread bound leaves 64 registers a thread, and eight units per thread with the masks of a
// partial chunk need more than 128: split rows take blocks of 512 threads and 4 units each.
inline constexpr int split_threads = 512, split_vpt = 4;

template <norm_kind Kind, int VPT, bool Exact, class T>
__global__ void __launch_bounds__(split_threads) split_kernel(args<T> a, int parts, split_state st) {
  using group = rows::block_group<split_threads>;
  __shared__ typename group::storage s;
  __shared__ float stats[2];
  const int slot = int(blockIdx.x) / parts, part = int(blockIdx.x) % parts;
  if (slot >= st.slots) return;  // blocks past the last whole row slot take no part
  const int step = int(blockDim.x);
  const index_t chunk = index_t(step) * VPT;  // units per block
  const index_t units = (a.cols + rows::lanes<T> - 1) / rows::lanes<T>;
  for (index_t wave = 0;; ++wave) {
    const index_t r = wave * st.slots + slot;
    if (r >= a.rows) break;
    // This block's chunk: units [part * chunk, part * chunk + chunk) of the row, as a row of its own.
    const index_t u0 = index_t(part) * chunk;
    const index_t cols = std::min<index_t>(a.cols - u0 * rows::lanes<T>, chunk * rows::lanes<T>);
    const bool last = u0 + chunk >= units;
    rows::packed<T, VPT, 16, Exact> cur;
    const T* xrow = a.x + r * a.x_pitch + u0 * rows::lanes<T>;
    if (cols > 0) cur.load(xrow, cols, int(threadIdx.x), step, a.whole_tail && last);
    moments mine{float(std::max<index_t>(cols, 0)), 0.0f, 0.0f};
    if (cols > 0) {
      if constexpr (Kind == norm_kind::layer) {
        mine.mean = group::sum(s, 0, cur.sum(cols, int(threadIdx.x), step)) / mine.count;
        mine.m2 = group::sum(s, 1, cur.sum_squares(cols, int(threadIdx.x), step, mine.mean));
      } else {
        mine.m2 = group::sum(s, 0, cur.sum_squares(cols, int(threadIdx.x), step, 0.0f));
      }
    }
    moments* set = st.partials + (std::size_t(wave & 1) * st.slots + slot) * parts;
    if (threadIdx.x == 0) {
      set[part] = mine;
      __threadfence();
      atomicAdd(st.arrived + slot, 1u);
      const unsigned target = unsigned(wave + 1) * unsigned(parts);
      while (*static_cast<volatile unsigned*>(st.arrived + slot) < target) __nanosleep(64);
      __threadfence();
      // Other blocks' partials, read past L1 (which is not coherent across SMs), merged in part order.
      moments all{0.0f, 0.0f, 0.0f};
      for (int q = 0; q < parts; ++q) all = merge(all, {__ldcg(&set[q].count), __ldcg(&set[q].mean), __ldcg(&set[q].m2)});
      finish<Kind>(all, a.eps, stats[0], stats[1]);
    }
    __syncthreads();
    const float mean = stats[0], rstd = stats[1];
    if (cols > 0)
      write_row(cur, a.y + r * a.y_pitch + u0 * rows::lanes<T>, a.gamma ? a.gamma + u0 * rows::lanes<T> : nullptr,
                a.beta ? a.beta + u0 * rows::lanes<T> : nullptr, cols, a.whole_tail && last, int(threadIdx.x), step, mean, rstd);
    __syncthreads();  // stats[] is rewritten in the next wave
  }
}

/// Rows longer than the GPU holds at once: each block folds the (count, mean, M2) of one chunk of
/// one row, then `normalize` reads x again. Three passes over memory instead of two.
template <norm_kind Kind, class T>
__global__ void __launch_bounds__(512) chunk_moments_kernel(args<T> a, index_t chunk, index_t chunks, moments* out) {
  using group = rows::block_group<512>;
  __shared__ typename group::storage s;
  const index_t r = blockIdx.x / chunks, c = blockIdx.x % chunks;
  const index_t begin = c * chunk, end = std::min(a.cols, begin + chunk);
  const T* row = a.x + r * a.x_pitch;
  float sum = 0;
  for (index_t e = begin + threadIdx.x; e < end; e += blockDim.x) sum += to_float(row[e]);
  moments m{float(end - begin), 0.0f, 0.0f};
  if constexpr (Kind == norm_kind::layer) m.mean = group::sum(s, 0, sum) / m.count;
  float sq = 0;
  for (index_t e = begin + threadIdx.x; e < end; e += blockDim.x) sq += (to_float(row[e]) - m.mean) * (to_float(row[e]) - m.mean);
  m.m2 = group::sum(s, 1, sq);
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}
template <norm_kind Kind, class T>
__global__ void __launch_bounds__(512) chunk_normalize_kernel(args<T> a, index_t chunk, index_t chunks, const moments* in) {
  const index_t r = blockIdx.x / chunks, c = blockIdx.x % chunks;
  moments all{0.0f, 0.0f, 0.0f};
  for (index_t p = 0; p < chunks; ++p) all = merge(all, in[r * chunks + p]);
  float mean, rstd;
  finish<Kind>(all, a.eps, mean, rstd);
  const index_t begin = c * chunk, end = std::min(a.cols, begin + chunk);
  const T* row = a.x + r * a.x_pitch;
  T* out = a.y + r * a.y_pitch;
  for (index_t e = begin + threadIdx.x; e < end; e += blockDim.x) {
    const float g = a.gamma ? to_float(a.gamma[e]) : 1.0f, b = a.beta ? to_float(a.beta[e]) : 0.0f;
    out[e] = from_float<T>((to_float(row[e]) - mean) * rstd * g + b);
  }
}

// ---- choosing a configuration -------------------------------------------------------------------

/// Blocks of `kernel` one SM holds at `threads` threads per block (the occupancy API; cached).
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads) {
  static std::mutex m;
  static std::map<std::pair<int, int>, int> cache;  // (device, threads) -> blocks
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(m);
  auto [it, fresh] = cache.try_emplace({dev, threads}, 0);
  if (fresh) cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&it->second, kernel, threads, 0), "normalization: occupancy");
  return it->second;
}

template <norm_kind Kind, class T>
struct kernels {
  template <class Group, int VPT, bool Exact>
  static auto rows_fn() {
    return &rows_kernel<Kind, Group, VPT, 16, Exact, T>;
  }
  /// Calls f(kernel) for the row kernel of a plan (16-byte units).
  template <class F>
  static void with_rows_kernel(const plan& p, F&& f) {
    auto vpt_exact = [&]<class Group>() {
      // Eight units per thread only where they cover the row exactly: with the masks of a partial
      // unit, eight units need more than 128 registers.
      auto go = [&]<int VPT>() {
        if constexpr (VPT == 8) f(rows_fn<Group, 8, true>());
        else p.exact ? f(rows_fn<Group, VPT, true>()) : f(rows_fn<Group, VPT, false>());
      };
      switch (p.vpt) {
        case 1: return go.template operator()<1>();
        case 2: return go.template operator()<2>();
        case 4: return go.template operator()<4>();
        default: return go.template operator()<8>();
      }
    };
    if (p.shape == norm::shape::warp) return vpt_exact.template operator()<rows::warp_group<4>>();
    if (p.threads <= 256) return vpt_exact.template operator()<rows::block_group<256>>();
    return vpt_exact.template operator()<rows::block_group<512>>();
  }
};

/// Bytes of rows a GPU's SMs should have in flight to cover memory latency (a few microseconds of
/// bandwidth spread over the SMs); saturating at this is what the chooser aims for.
inline constexpr double target_bytes_per_sm = 48.0 * 1024;

/// The warp and block configurations whose units cover a row of `units` 16-byte units: a warp
/// (four per block) with 1, 2 or 4 units per thread, or a block of 2, 4 or 8 units per thread and
/// just enough warps, up to 512 threads (larger blocks get too few registers per thread).
template <class T>
std::vector<plan> candidates(index_t cols) {
  const index_t units = (cols + rows::lanes<T> - 1) / rows::lanes<T>;
  const bool whole_units = units * rows::lanes<T> == cols;
  std::vector<plan> out;
  for (int vpt : {1, 2, 4}) {
    if (32 * vpt < units) continue;
    plan p;
    p.shape = norm::shape::warp, p.vpt = vpt, p.threads = 128, p.exact = whole_units && units == 32 * vpt;
    out.push_back(p);
  }
  for (int vpt : {2, 4, 8}) {
    const index_t threads = index_t(align_up(std::size_t((units + vpt - 1) / vpt), 32));
    if (threads > 512 || threads < 64) continue;
    plan p;
    p.shape = norm::shape::block, p.vpt = vpt, p.threads = int(threads), p.exact = whole_units && threads * vpt == units;
    if (vpt == 8 && !p.exact) continue;  // see kernels::with_rows_kernel
    out.push_back(p);
  }
  return out;
}

/// The configuration for rows of `cols` elements of T on the current device: among the
/// candidates, the one with the most row bytes resident per SM (as far as target_bytes_per_sm)
/// and the fewest idle units (occupancy API); rows longer than a block holds are split over
/// co-resident blocks, or, past what the whole GPU holds, take two passes.
template <norm_kind Kind, class T>
plan choose(index_t cols, int access) {
  const auto& dev = current_device_shape();
  plan best;
  if (access != 16) {  // element-wise rows: a block per row, many elements per thread
    best.shape = norm::shape::block, best.access = access, best.vpt = 8;
    best.threads = int(std::clamp<index_t>(index_t(align_up(std::size_t((cols + 7) / 8), 32)), 32, 512));
    if (index_t(best.threads) * 8 < cols) best.shape = norm::shape::two_pass;
    return best;
  }
  const index_t units = (cols + rows::lanes<T> - 1) / rows::lanes<T>;
  const double row_bytes = double(units) * 16;
  double best_score = -1;
  for (const plan& p : candidates<T>(cols)) {
    int blocks = 0;
    kernels<Kind, T>::with_rows_kernel(p, [&](auto kernel) { blocks = blocks_per_sm(kernel, p.threads); });
    if (blocks == 0) continue;
    const double covered = double(p.shape == norm::shape::warp ? 32 : p.threads) * p.vpt;
    const double resident_rows = double(blocks) * (p.shape == norm::shape::warp ? 4 : 1);
    const double saturation = std::min(1.0, resident_rows * row_bytes / target_bytes_per_sm);
    const double score = saturation * (double(units) / covered);
    if (score > best_score + 1e-9) best_score = score, best = p;
  }
  if (best_score >= 0) return best;
  // Longer than a block holds: a cluster of blocks of 4 units per thread (8 where they cover the
  // row exactly), if the device runs clusters that large.
  for (int vpt : {8, 4}) {
    const index_t chunk = index_t(cluster_threads) * vpt;
    const index_t parts = (units + chunk - 1) / chunk;
    const bool exact = units * rows::lanes<T> == cols && parts * chunk == units;
    if (parts > max_cluster || (vpt == 8 && !exact)) continue;
    args<T> probe{};
    probe.rows = 1;
    const bool ok = vpt == 8 ? launch_clusters<Kind, 8, true, T>(probe, int(parts), nullptr, true)
                             : launch_clusters<Kind, 4, false, T>(probe, int(parts), nullptr, true);
    if (!ok) continue;
    plan p;
    p.shape = norm::shape::cluster, p.vpt = vpt, p.threads = cluster_threads, p.parts = int(parts), p.exact = exact;
    return p;
  }
  // Longer than a cluster holds: blocks of split_vpt units per thread, as many per row as needed.
  plan p;
  p.shape = norm::shape::split, p.vpt = split_vpt, p.threads = split_threads;
  p.parts = int((units + split_vpt * split_threads - 1) / (split_vpt * split_threads));
  const int per_sm = blocks_per_sm(&split_kernel<Kind, split_vpt, false, T>, split_threads);
  const index_t resident = index_t(per_sm) * dev.sms;
  if (per_sm == 0 || resident < p.parts) {
    p.shape = norm::shape::two_pass, p.threads = 512;
    return p;
  }
  p.grid = int(resident / p.parts * p.parts);
  return p;
}

/// choose(), remembered per device, row length and access width: a call after the first pays one
/// map lookup.
template <norm_kind Kind, class T>
plan chosen(index_t cols, int access) {
  static std::mutex m;
  static std::map<std::tuple<int, index_t, int>, plan> cache;
  const auto key = std::make_tuple(current_device(), cols, access);
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const plan p = choose<Kind, T>(cols, access);
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(key, p).first->second;
}

template <norm_kind Kind, class T>
void launch(const plan& p, const args<T>& a, stream_t stream) {
  if (p.shape == norm::shape::warp || p.shape == norm::shape::block) {
    const index_t per_block = p.shape == norm::shape::warp ? 4 : 1;
    const index_t blocks = (a.rows + per_block - 1) / per_block;
    if (blocks > index_t(0x7fffffff)) throw size_error("strata: normalization of " + std::to_string(a.rows) + " rows needs more than 2^31 - 1 blocks");
    if (p.access == 16) {
      kernels<Kind, T>::with_rows_kernel(p, [&](auto kernel) { kernel<<<unsigned(blocks), p.threads, 0, stream>>>(a); });
    } else if (p.access == int(sizeof(T))) {
      rows_kernel<Kind, rows::block_group<512>, 8, int(sizeof(T)), false, T><<<unsigned(blocks), p.threads, 0, stream>>>(a);
    }
    check_launch("normalization kernel");
    return;
  }
  if (p.shape == norm::shape::cluster) {
    if (index_t(p.parts) * a.rows > index_t(0x7fffffff))
      throw size_error("strata: normalization of " + std::to_string(a.rows) + " rows needs more than 2^31 - 1 blocks");
    if (p.vpt == 8) launch_clusters<Kind, 8, true, T>(a, p.parts, stream, false);
    else launch_clusters<Kind, 4, false, T>(a, p.parts, stream, false);
    return;
  }
  if (p.shape == norm::shape::split) {
    const int slots = int(std::min<index_t>(p.grid / p.parts, a.rows));
    scratch_block state(sizeof(moments) * 2 * std::size_t(slots) * p.parts + sizeof(unsigned) * std::size_t(slots) + 256, stream);
    split_state st{state.as<moments>(), state.as<unsigned>(align_up(sizeof(moments) * 2 * std::size_t(slots) * p.parts, 256)), slots};
    cuda_check(cudaMemsetAsync(st.arrived, 0, sizeof(unsigned) * std::size_t(slots), stream), "cudaMemsetAsync (normalization)");
    const bool exact = a.cols % (index_t(rows::lanes<T>) * p.threads * p.vpt) == 0;
    auto* kernel = exact ? &split_kernel<Kind, split_vpt, true, T> : &split_kernel<Kind, split_vpt, false, T>;
    args<T> aa = a;
    int parts = p.parts;
    void* params[] = {&aa, &parts, &st};
    cuda_check(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), dim3(unsigned(slots * p.parts)), dim3(unsigned(p.threads)),
                                           params, 0, stream),
               "cudaLaunchCooperativeKernel (normalization of long rows)");
    return;
  }
  // Two passes: statistics per chunk of 64 Ki elements, then normalize reading x again.
  const index_t chunk = index_t(1) << 16, chunks = (a.cols + chunk - 1) / chunk;
  const index_t blocks = a.rows * chunks;
  if (blocks > index_t(0x7fffffff)) throw size_error("strata: normalization of " + std::to_string(a.rows) + " rows needs more than 2^31 - 1 blocks");
  scratch_block part(sizeof(moments) * std::size_t(blocks), stream);
  chunk_moments_kernel<Kind, T><<<unsigned(blocks), 512, 0, stream>>>(a, chunk, chunks, part.as<moments>());
  check_launch("normalization statistics");
  chunk_normalize_kernel<Kind, T><<<unsigned(blocks), 512, 0, stream>>>(a, chunk, chunks, part.as<moments>());
  check_launch("normalization");
}
#endif

/// Host backend: the same function row by row (two passes over each row for layer norm; the
/// sums run in double, as a sequential sum of a long row in float would drift where the GPU's tree
/// reductions do not).
template <norm_kind Kind, class T>
void host_rows(const args<T>& a) {
  STRATA_PARALLEL_FOR_IF(a.rows > 16)
  for (index_t r = 0; r < a.rows; ++r) {
    const T* in = a.x + r * a.x_pitch;
    double mu = 0, m2 = 0;
    if constexpr (Kind == norm_kind::layer) {
      for (index_t c = 0; c < a.cols; ++c) mu += to_float(in[c]);
      mu /= double(a.cols);
    }
    for (index_t c = 0; c < a.cols; ++c) m2 += (to_float(in[c]) - mu) * (to_float(in[c]) - mu);
    float mean, rstd;
    finish<Kind>(moments{float(a.cols), float(mu), float(m2)}, a.eps, mean, rstd);
    for (index_t c = 0; c < a.cols; ++c) {
      const float g = a.gamma ? to_float(a.gamma[c]) : 1.0f, b = a.beta ? to_float(a.beta[c]) : 0.0f;
      a.y[r * a.y_pitch + c] = from_float<T>((to_float(in[c]) - mean) * rstd * g + b);
    }
  }
}

/// The widest unit (16 bytes, else one element) every row start and gamma/beta allow.
template <class T>
int access_bytes(const args<T>& a) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % vector_bytes == 0; };
  const bool rows16 = aligned(a.x) && aligned(a.y) && (std::size_t(a.x_pitch) * sizeof(T)) % vector_bytes == 0 &&
                      (std::size_t(a.y_pitch) * sizeof(T)) % vector_bytes == 0;
  const bool affine16 = (!a.gamma || aligned(a.gamma)) && (!a.beta || aligned(a.beta));
  return rows16 && affine16 ? 16 : int(sizeof(T));
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
  const args<T> a{x.data, y.data, gamma.empty() ? nullptr : gamma.data(), beta.empty() ? nullptr : beta.data(), x.rows, x.cols,
                  x.pitch, y.pitch, eps, x.owns_padding && y.owns_padding};
  const int access = access_bytes(a);
  const path taken = access == 16 ? path::vectorized : path::scalar;
  std::string (*const type)() = &type_name<T>;
  const operand in{"input", x.where, x.rows, type, "rows"}, out{"output", y.where, y.rows, type, "rows"};
  const operand g{"gamma", a.gamma ? locate(a.gamma) : memory_location{}, index_t(gamma.size()), type, "elements"};
  const operand b{"beta", a.beta ? locate(a.beta) : memory_location{}, index_t(beta.size()), type, "elements"};
  launch_scope scope(op, stream, {in, out, g, b});
  if (x.rows == 0 || x.cols == 0) return taken;
#if defined(STRATA_BACKEND_CUDA)
  const plan p = forced && access == 16 ? *forced : chosen<Kind, T>(x.cols, access);
  launch<Kind>(p, a, stream);
#else
  (void)stream, (void)forced;
  host_rows<Kind>(a);
#endif
  return taken;
}

/// The plan a call would take (for sweeps and tests).
template <norm_kind Kind, class T>
plan planned(index_t cols, int access = 16) {
#if defined(STRATA_BACKEND_CUDA)
  return chosen<Kind, T>(cols, access);
#else
  (void)cols, (void)access;
  return {};
#endif
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
/// gamma and beta hold x.cols elements, or are empty (1 and 0). Stream ordered. Returns
/// path::vectorized when rows move in 16-byte units, path::scalar when some row start (or gamma,
/// beta) is not 16-byte aligned and they move element by element.
template <class T>
path layer_norm(matrix_view<const T> x, matrix_view<T> y, cuda::std::span<const T> gamma, cuda::std::span<const T> beta,
                float eps = 1e-5f, stream_t stream = {}) {
  return detail::norm::run<norm_kind::layer>("strata::layer_norm", x, y, gamma, beta, eps, stream, nullptr);
}

/// RMS normalization: y = x / sqrt(mean(x^2) + eps) * gamma (gamma may be empty: 1).
template <class T>
path rms_norm(matrix_view<const T> x, matrix_view<T> y, cuda::std::span<const T> gamma, float eps = 1e-6f, stream_t stream = {}) {
  return detail::norm::run<norm_kind::rms>("strata::rms_norm", x, y, gamma, cuda::std::span<const T>{}, eps, stream, nullptr);
}

}  // namespace strata
