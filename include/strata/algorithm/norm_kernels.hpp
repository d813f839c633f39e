// SPDX-License-Identifier: Apache-2.0
// The kernels of strata's row normalization (normalize.hpp): the reductions of a row's statistics
// over a group of threads, the rows kernel (a group holds each row in registers, a block past them
// in shared memory too), the block rows kernel (a block of up to 1024 threads or a cluster of
// blocks per row of whole units), the streamed kernel (longer rows, in chunks) and the tiled kernel
// (short rows lying back to back); with the helpers
// the host backend's emulation shares. The plan that picks among them and the launch are in
// normalize.hpp.
#pragma once

#include <strata/algorithm/norm_plan.hpp>
#include <strata/algorithm/norm_row.hpp>
#include <strata/config.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(STRATA_BACKEND_CUDA)
#include <cooperative_groups.h>
#endif

namespace strata {
namespace detail::norm {

/// Calls f.template operator()<V>() for a run-time count of units per thread.
template <class F>
decltype(auto) with_vpt(int vpt, F&& f) {
  switch (vpt) {
    case 1: return f.template operator()<1>();
    case 2: return f.template operator()<2>();
    case 3: return f.template operator()<3>();
    case 4: return f.template operator()<4>();
    case 5: return f.template operator()<5>();
    case 6: return f.template operator()<6>();
    case 7: return f.template operator()<7>();
    default: return f.template operator()<8>();
  }
}

/// Whether layer norm over a group of G threads of T combines per-warp statistics at one barrier
/// (fp32 rows held by several warps) or sums twice across the group. Inside a warp two plain sums
/// need no barrier. Across warps, fp32 rows gain from the single barrier (a block holding a whole
/// row waits there with nothing else in flight, and the kernel holds fewer registers); 16-bit rows
/// held by groups of up to max_group threads, which issue about twice the instructions per byte
/// (their elements are widened at each pass) and share their SM with other blocks, lose more to
/// the extra per-warp sums than they gain.
/// A block of more than max_group threads (block_rows_kernel) runs alone on its SM, so 16-bit rows
/// merge there too: bf16 and fp16 layer norm of 32776-65536 elements runs 1.03-1.07x faster that
/// way. So do the blocks of a cluster plan (`cluster`), which wait at a cluster barrier after their
/// own: bf16 layer norm's cluster plans run at a median 0.976x the time of two sums.
template <class T>
STRATA_HD constexpr bool merges_warps(int G, bool cluster = false) {
  return G > 32 && (cluster || sizeof(T) >= 4 || G > max_group);
}

/// Elements [0, cols) of `row` into v in words of W (cols a multiple of W's elements), and back.
template <class W, class T, int C>
STRATA_HD inline void read_short_row(const T* row, int cols, float (&v)[C]) {
  constexpr int E = int(sizeof(W) / sizeof(T));
  STRATA_UNROLL
  for (int j = 0; j < (C + E - 1) / E; ++j)
    if (j * E < cols) {
      T t[E];
#if defined(__CUDA_ARCH__)
      const W word = reinterpret_cast<const W*>(row)[j];  // one access of the word's width
      std::memcpy(t, &word, sizeof(W));
#else
      std::memcpy(t, row + j * E, sizeof(W));
#endif
      STRATA_UNROLL
      for (int e = 0; e < E; ++e)
        if (j * E + e < C) v[j * E + e] = to_float(t[e]);
    }
}
template <class W, class T, int C>
STRATA_HD inline void write_short_row(T* row, int cols, const float (&v)[C]) {
  constexpr int E = int(sizeof(W) / sizeof(T));
  STRATA_UNROLL
  for (int j = 0; j < (C + E - 1) / E; ++j)
    if (j * E < cols) {
      T t[E];
      STRATA_UNROLL
      for (int e = 0; e < E; ++e) t[e] = from_float<T>(j * E + e < C ? v[j * E + e] : 0.0f);
#if defined(__CUDA_ARCH__)
      W word;
      std::memcpy(&word, t, sizeof(W));
      reinterpret_cast<W*>(row)[j] = word;
#else
      std::memcpy(row + j * E, t, sizeof(W));
#endif
    }
}

/// One short row of `cols` elements (at most C), normalized where it lies (tiled plans: a row in
/// shared memory on the GPU, a copy of it on the host backend, whose emulation computes the same
/// bits): read once into registers in the widest words its address and length allow, the sums in
/// element order, written back once the same way.
template <norm_kind Kind, class T, int C>
STRATA_HD inline void normalize_short_row(T* row, int cols, const T* gamma, const T* beta, float eps) {
  float v[C];
  STRATA_UNROLL
  for (int c = 0; c < C; ++c) v[c] = 0.0f;
  const std::size_t fit = std::size_t(reinterpret_cast<std::uintptr_t>(row)) | (std::size_t(cols) * sizeof(T));
  auto in_words = [&](auto word, bool write) {
    using W = decltype(word);
    if (write) write_short_row<W, T, C>(row, cols, v);
    else read_short_row<W, T, C>(row, cols, v);
  };
  // A tiled thread moves a row in 16-, 8- or 4-byte words where the row's address and length allow
  // (a warp's shared-memory accesses to rows of 8-64 bytes then cover its banks in fewer passes
  // than element by element), no wider than the row's capacity.
  constexpr std::size_t most = std::size_t(C) * sizeof(T);
  auto move = [&](bool write) {
    if constexpr (most >= 16)
      if (fit % 16 == 0) return in_words(vec::word_t<16>{}, write);
    if constexpr (most >= 8)
      if (fit % 8 == 0) return in_words(vec::word_t<8>{}, write);
    if constexpr (most >= 4 && sizeof(T) < 4)
      if (fit % 4 == 0) return in_words(vec::word_t<4>{}, write);
    in_words(T{}, write);
  };
  move(false);
  float sum = 0.0f;
  if constexpr (Kind == norm_kind::layer) {
    STRATA_UNROLL
    for (int c = 0; c < C; ++c)
      if (c < cols) sum = add_rn(sum, v[c]);
  }
  const float centre = Kind == norm_kind::layer ? sum / float(cols) : 0.0f;
  float m2 = 0.0f;
  STRATA_UNROLL
  for (int c = 0; c < C; ++c) {
    const float d = v[c] - centre;
    if (c < cols) m2 = add_rn(m2, mul_rn(d, d));
  }
  float mean, rstd;
  finish<Kind>(moments{float(cols), centre, m2}, cols, eps, mean, rstd);
  STRATA_UNROLL
  for (int c = 0; c < C; ++c)
    if (c < cols) {
      const float g = gamma ? to_float(gamma[c]) : 1.0f, b = beta ? to_float(beta[c]) : 0.0f;
      v[c] = add_rn(mul_rn(v[c] - mean, mul_rn(rstd, g)), b);
    }
  move(true);
}
/// The most elements a tiled plan's row holds (its thread keeps the row in registers).
template <class T>
inline constexpr int tiled_max_cols = int(tiled_max_row_bytes / sizeof(T));
/// Calls f.template operator()<C>() with the row capacity of a tiled plan (plan::group: a power of
/// two from 1 to tiled_max_cols<T>).
template <class T, class F>
decltype(auto) with_tile_cols(int group, F&& f) {
  if (group <= 1) return f.template operator()<1>();
  if (group <= 2) return f.template operator()<2>();
  if (group <= 4) return f.template operator()<4>();
  if (group <= 8) return f.template operator()<8>();
  if constexpr (tiled_max_cols<T> >= 32) {
    if (group <= 16) return f.template operator()<16>();
    return f.template operator()<32>();
  } else {
    return f.template operator()<16>();
  }
}

#if defined(STRATA_BACKEND_CUDA)
template <norm_kind Kind>
__device__ inline moments shuffle_merge(const moments& m, int offset) {
  moments o{0.0f, 0.0f, __shfl_xor_sync(0xffffffffu, m.m2, offset)};
  if constexpr (Kind == norm_kind::layer) {
    o.count = __shfl_xor_sync(0xffffffffu, m.count, offset);
    o.mean = __shfl_xor_sync(0xffffffffu, m.mean, offset);
  }
  return merge<Kind>(m, o);
}
/// A butterfly over the lanes of each `width`-lane group of a warp: every lane ends with the same
/// bits (merge is symmetric).
template <norm_kind Kind>
__device__ inline moments butterfly(moments m, int width) {
  for (int o = 1; o < width; o <<= 1) m = shuffle_merge<Kind>(m, o);
  return m;
}

/// The sum of v over a group of G threads, the same bits in every thread (IEEE addition commutes,
/// so butterfly partners add the same two values): a group inside a warp by butterfly; a group of
/// several warps (a whole block) passes each warp's sum through `slots` and every warp adds them
/// all by the same butterfly. One barrier.
__device__ inline float group_sum(float v, int G, float* slots) {
  const int width = G < 32 ? G : 32;
  for (int o = 1; o < width; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (G <= 32) return v;
  const int lane = int(threadIdx.x % 32);
  if (lane == 0) slots[threadIdx.x / 32] = v;
  __syncthreads();
  v = lane < G / 32 ? slots[lane] : 0.0f;
  for (int o = 1; o < 32; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
/// A warp's part of a row: its element count, their sum and their squares about the warp's mean.
struct warp_moments {
  float count, sum, m2;
};

/// Shared memory of a block's reductions: one sum per warp (group_sum), or one set of statistics
/// per warp (layer norm over a group of several warps).
struct sum_slots {
  float sums[2][block_max_group / 32];  // consecutive sums take different slots: no warp overwrites a
                                  // slot that a slower warp has still to read
  warp_moments warps[block_max_group / 32];
};

/// The statistics of a part of a row (its n elements, held by a group of G threads). RMS norm: one
/// sum of squares. Layer norm, two sums: the sum, then the squares about the part's mean. Layer
/// norm, warps combined (merges_warps): each warp sums its elements, then their squares about the
/// warp's mean, with no barrier; the warps' statistics meet at one barrier, after which every warp
/// sums them twice more by butterfly: the part's mean from the warps' sums, then
/// M2 = sum over warps of (M2_w + count_w (mean_w - mean)^2), each term about the part's mean (no
/// cancellation, the same bits in every thread).
/// MostG: the largest group the calling kernel runs. Kernels whose groups never exceed max_group
/// do not carry the merging code for 16-bit rows, which would take registers from their rows.
/// Cluster: the group is a block of a cluster plan (merges_warps).
template <norm_kind Kind, int MostG = max_group, bool Cluster = false, class T, int V, bool Spill>
__device__ inline moments part_moments(const row_part<T, V, Spill>& part, float n, int G, sum_slots& slots) {
  if constexpr (Kind == norm_kind::rms) {
    return {n, 0.0f, group_sum(part.template sum<Kind>(), G, slots.sums[0])};
  } else {
    constexpr bool may_merge = sizeof(T) >= 4 || MostG > max_group || Cluster;
    if (!may_merge || !merges_warps<T>(G, Cluster)) {
      const float sum = group_sum(part.template sum<Kind>(), G, slots.sums[0]);
      const float mean = n > 0 ? sum / n : 0.0f;
      return {n, mean, group_sum(part.sum_squares(mean), G, slots.sums[1])};
    }
    const float count = group_sum(part.count(), 32, nullptr), sum = group_sum(part.template sum<Kind>(), 32, nullptr);
    const float m2 = group_sum(part.sum_squares(count > 0 ? sum / count : 0.0f), 32, nullptr);
    const int lane = int(threadIdx.x % 32);
    if (lane == 0) slots.warps[threadIdx.x / 32] = warp_moments{count, sum, m2};
    __syncthreads();
    const warp_moments w = lane < G / 32 ? slots.warps[lane] : warp_moments{0.0f, 0.0f, 0.0f};
    const float mean = n > 0 ? group_sum(w.sum, 32, nullptr) / n : 0.0f;
    const float d = w.count > 0 ? w.sum / w.count - mean : 0.0f;
    return {n, mean, group_sum(w.m2 + w.count * d * d, 32, nullptr)};
  }
}

/// Rows held by groups of G threads, blockDim.x / G rows per block, a grid of all rows: as many
/// rows in flight as registers allow and no loop (loop-carried state would cost resident rows).
/// Whole == true: every row starts on a 16-byte boundary and is whole units, y's rows lie as x's
/// and gamma and beta on 16-byte boundaries (checked per call); the thread loads its units at once.
/// Tail == true (with Whole): the rows end in a partial unit, whose elements the group's first
/// threads hold one each; a variant of its own, since those elements take registers that would
/// cost rows of whole units a block an SM (fp32, 512 threads: 44 registers a thread instead of 40).
/// The streamed kernel has the same fast path. Both kernels are built for two blocks of max_group
/// threads per SM (at most 64 registers a thread): a block of 512 threads holding 8 units each
/// would otherwise take more and run alone on its SM, and the streamed kernel's 16-bit variants
/// would take up to 126 (half the blocks per SM). At 64 the whole-unit variants do not spill; the
/// ragged-row 16-bit variants holding 7-8 units spill up to 40 bytes, which the sweep puts within
/// 1% of the uncapped build. Before loading
/// its row, a group's first thread asks L2 for the whole units of the row `ahead` rows later
/// (norm_plan.hpp: prefetch_seconds; 0: none), which a later block then reads from L2.
/// Spill: a block holds its row with `spill` units a thread past the registers' V in dynamic
/// shared memory (norm_plan.hpp: wide_candidates).
template <norm_kind Kind, class T, int V, bool Whole, bool Spill = false, bool Tail = false>
__global__ void __launch_bounds__(max_group, 2) rows_kernel(args<T> a, int G, index_t ahead, int spill) {
  __shared__ sum_slots slots;
  extern __shared__ vec::word16 spill_slots[];
  // Groups within a warp are powers of two (shift and mask); a larger group is the whole block.
  const int shift = G <= 32 ? __ffs(G) - 1 : 0, t = G <= 32 ? int(threadIdx.x) & (G - 1) : int(threadIdx.x);
  const index_t r = G <= 32 ? index_t(blockIdx.x) * (int(blockDim.x) >> shift) + (int(threadIdx.x) >> shift) : index_t(blockIdx.x);
  const bool live = r < a.rows;  // groups past the last row hold nothing but take part in the shuffles
  if (ahead > 0 && t == 0 && r + ahead < a.rows) prefetch_row(a.x + (r + ahead) * a.x_pitch, a.cols);
  const T* xrow = a.x + (live ? r : 0) * a.x_pitch;
  row_part<T, V, Spill> part;
  if constexpr (Spill) part.sp = spill_slots + t, part.spill = spill;
  if constexpr (Whole) {
    part.load_whole(xrow, 0, a.cols / lanes<T>, t, G, live);
    if constexpr (Tail) part.load_tail(xrow, a.cols, 0, a.cols / lanes<T> + 1, t, live);
    const moments m = part_moments<Kind>(part, float(a.cols), G, slots);
    if (!live) return;
    float mean, rstd;
    finish<Kind>(m, a.cols, a.eps, mean, rstd);
    part.template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, row_span{a.cols, 0, 0, 0, 0}, mean, rstd, 0, !(Tail && a.pad_tail));
    if constexpr (Tail) {
      if (a.pad_tail) {  // the partial unit written whole by one store instruction: its elements, zeros past the row
        T* unit = a.y + r * a.y_pitch + a.cols / lanes<T> * lanes<T>;
        for (int e = t; e < lanes<T>; e += G)
          unit[e] = from_float<T>(e == t && part.extra_c >= 0 ? part.tail_value(a.gamma, a.beta, mean, rstd) : 0.0f);
      }
    }
  } else {
    const row_span s = span_of(xrow, a.cols);
    part.load(xrow, s, 0, s.units, t, G, live);
    const moments m = part_moments<Kind>(part, float(a.cols), G, slots);
    if (!live) return;
    float mean, rstd;
    finish<Kind>(m, a.cols, a.eps, mean, rstd);
    write_part<Kind>(part, a, xrow, a.y + r * a.y_pitch, s, mean, rstd);
  }
}

/// Rows of whole units (as rows_kernel's Whole) held by groups of G <= 32 threads, S rows a group
/// at once: block b's groups take rows b x (rows a block) + g + j x (groups a block), j < S, so
/// each of a warp's loads covers a unit range of 32 / G consecutive rows. Short rows need this:
/// a narrow group holding many units a thread makes each warp access touch G x 16 bytes of each
/// of 32 / G rows, and a wider group holding few units a thread holds too few bytes an SM for the
/// memory's latency; stacked, a group wide enough for its accesses to cover whole sectors of a row
/// still holds S times the row's bytes, and its S rows' sums are independent. Each row's
/// statistics are the rows kernel's (the same group and units), so the host backend's emulation,
/// row by row, computes the same bits.
template <norm_kind Kind, class T, int V, int S>
__global__ void __launch_bounds__(max_group, 2) stacked_rows_kernel(args<T> a, int G, index_t ahead) {
  __shared__ sum_slots slots;  // not touched: groups within a warp reduce by shuffles
  const int shift = __ffs(G) - 1, t = int(threadIdx.x) & (G - 1);
  const index_t groups = index_t(int(blockDim.x) >> shift);
  const index_t r0 = index_t(blockIdx.x) * groups * S + (int(threadIdx.x) >> shift);
  const index_t units = a.cols / lanes<T>;
  row_part<T, V> part[S];
  STRATA_UNROLL
  for (int j = 0; j < S; ++j) {
    const index_t r = r0 + j * groups;
    const bool live = r < a.rows;  // groups past the last row hold nothing but take part in the shuffles
    if (ahead > 0 && t == 0 && r + ahead < a.rows) prefetch_row(a.x + (r + ahead) * a.x_pitch, a.cols);
    part[j].load_whole(a.x + (live ? r : 0) * a.x_pitch, 0, units, t, G, live);
  }
  moments m[S];
  STRATA_UNROLL
  for (int j = 0; j < S; ++j) m[j] = part_moments<Kind>(part[j], float(a.cols), G, slots);
  STRATA_UNROLL
  for (int j = 0; j < S; ++j) {
    const index_t r = r0 + j * groups;
    if (r >= a.rows) break;
    float mean, rstd;
    finish<Kind>(m[j], a.cols, a.eps, mean, rstd);
    part[j].template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, row_span{a.cols, 0, 0, 0, 0}, mean, rstd);
  }
}

/// Calls f.template operator()<V, S>() for a stacked plan's run-time units a thread and rows a group
/// (V >= 2, V x S <= max_vpt: S = 4 with V = 2, or S = 2 with V = 2-4).
template <class F>
decltype(auto) with_stack(int vpt, int stack, F&& f) {
  if (stack == 4) return f.template operator()<2, 4>();
  switch (vpt) {
    case 2: return f.template operator()<2, 2>();
    case 3: return f.template operator()<3, 2>();
    default: return f.template operator()<4, 2>();
  }
}

/// A 16-byte load that happens only where `pred` holds (zeros otherwise): a predicated
/// instruction, no branch, so a thread's loads issue back to back.
__device__ inline vec::word16 load16_if(const vec::word16* p, bool pred) {
  uint4 r;
  asm volatile(
      "{.reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];}"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p), "r"(int(pred)));
  return r;
}

/// Short rows lying back to back (shape::tiled; x's and y's rows at one offset from 16-byte
/// boundaries): block b takes rows [b x tile, (b + 1) x tile), one range of memory, which its
/// threads copy into shared memory 16 bytes at a time (cp.async; the range's partial first and
/// last vectors element by element), then each thread normalizes one row at a time there
/// (normalize_short_row), then the range goes back out as it came in. However short the rows, a
/// warp's accesses cover 512 contiguous bytes, where a group of threads per row would move a few
/// bytes a thread. Rows in place (x == y) are safe: a block reads all of its range before it
/// writes, and no other block touches it.
template <norm_kind Kind, class T, int C>
__global__ void __launch_bounds__(tiled_block) tiled_rows_kernel(args<T> a, index_t tile) {
  extern __shared__ vec::word16 tile_units[];
  constexpr int L = lanes<T>;
  T* const el = reinterpret_cast<T*>(tile_units);
  const index_t r0 = index_t(blockIdx.x) * tile, rows = a.rows - r0 < tile ? a.rows - r0 : tile;
  const index_t e0 = r0 * a.cols, n = rows * a.cols;
  const int head = int(reinterpret_cast<std::uintptr_t>(a.x + e0) % 16 / sizeof(T));
  const index_t units = (head + n + L - 1) / L;
  for (index_t u = threadIdx.x; u < units; u += blockDim.x) {
    const index_t first = u * L - head;  // the element of the range in the vector's first lane
    if (first >= 0 && first + L <= n) {
      copy16_async(tile_units + u, a.x + e0 + first);
    } else {
      for (int i = 0; i < L; ++i)
        if (first + i >= 0 && first + i < n) el[u * L + i] = a.x[e0 + first + i];
    }
  }
  wait_copies();
  __syncthreads();
  for (index_t i = threadIdx.x; i < rows; i += blockDim.x)
    normalize_short_row<Kind, T, C>(el + head + i * a.cols, int(a.cols), a.gamma, a.beta, a.eps);
  __syncthreads();
  for (index_t u = threadIdx.x; u < units; u += blockDim.x) {
    const index_t first = u * L - head;
    if (first >= 0 && first + L <= n) {
      store16(a.y + e0 + first, tile_units[u]);
    } else {
      for (int i = 0; i < L; ++i)
        if (first + i >= 0 && first + i < n) a.y[e0 + first + i] = el[u * L + i];
    }
  }
}

/// Rows of whole units (code::block: every row on a 16-byte boundary and a whole number of units,
/// y's rows in phase, gamma and beta on 16-byte boundaries) longer than a block of max_group
/// threads holds, a block of G (up to 1024) threads per row, so rows of up to 8192 units stay in
/// registers instead of going partly to shared memory or streaming: a thread's units addressed
/// from one pointer at 32-bit offsets, loaded by predicated instructions and stored without the
/// rows kernel's per-unit tests of the row's layout.
/// The statistics are part_moments' (the host backend's emulation of code::whole computes the same).
/// Cluster == true (shape::cluster): a cluster of blocks per row, block q of C holding the units
/// [q x chunk, (q + 1) x chunk) the same way. Each block pushes its part's statistics into every
/// block's shared memory once all have started (a relaxed cluster barrier arrived at on entry),
/// then one cluster barrier publishes them, and every block merges the C parts in rank order (the
/// same bits in every block; the host backend merges in that order). No block touches another's
/// shared memory after that barrier, so none waits for the others to finish.
template <norm_kind Kind, class T, int V, bool Cluster = false>
__global__ void __launch_bounds__(block_max_group, 1) block_rows_kernel(args<T> a, index_t ahead, int chunk) {
  __shared__ sum_slots slots;
  constexpr int L = lanes<T>;
  const int G = int(blockDim.x), t = int(threadIdx.x), units = int(a.cols / L);
  int C = 1, q = 0;
  if constexpr (Cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    C = int(cooperative_groups::this_cluster().num_blocks()), q = int(cooperative_groups::this_cluster().block_rank());
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#elif defined(__CUDA_ARCH__)
    __trap();  // cluster plans are weighed only for kernels built for sm_90 and later (gpu_model)
#endif
  }
  const index_t r = Cluster ? index_t(blockIdx.x) / C : index_t(blockIdx.x);
  const int begin = q * chunk, end = Cluster ? std::min(units, begin + chunk) : units;
  if (ahead > 0 && t == 0 && r + ahead < a.rows) prefetch_row(a.x + (r + ahead) * a.x_pitch + index_t(begin) * L, index_t(end - begin) * L);
  const vec::word16* x = reinterpret_cast<const vec::word16*>(a.x + r * a.x_pitch) + begin + t;
  row_part<T, V> part;
  part.first = begin + t, part.step = G, part.k_hi = 0, part.extra_c = -1, part.extra = 0.0f;
  STRATA_UNROLL
  for (int k = 0; k < V; ++k) {
    const bool mine = begin + t + k * G < end;
    part.w[k] = load16_if(x + k * G, mine);
    part.k_hi += mine ? 1 : 0;
  }
  moments m = part_moments<Kind, block_max_group, Cluster>(part, float(index_t(end - begin) * L), G, slots);
  if constexpr (Cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ moments parts[max_cluster];
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every block has started: its shared memory is there
    if (t < C) *cooperative_groups::this_cluster().map_shared_rank(&parts[q], t) = m;
    asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
    m = parts[0];
    for (int i = 1; i < C; ++i) m = merge<Kind>(m, parts[i]);
#endif
  }
  float mean, rstd;
  finish<Kind>(m, a.cols, a.eps, mean, rstd);
  vec::word16* y = reinterpret_cast<vec::word16*>(a.y + r * a.y_pitch) + begin + t;
  using part_t = row_part<T, V>;
  STRATA_UNROLL
  for (int k = 0; k < V; ++k) {
    if (begin + t + k * G >= end) break;
    float f[L], gf[L], bf[L];
    unpack_kept<T>(part.w[k], f);
    const int c0 = (begin + t + k * G) * L;
    part_t::template affine<true, part_t::given::maybe>(a.gamma, c0, 1.0f, gf);
    part_t::template affine<true, part_t::given::maybe>(a.beta, c0, 0.0f, bf);
    STRATA_UNROLL
    for (int i = 0; i < L; ++i) f[i] = (Kind == norm_kind::layer ? f[i] - mean : f[i]) * (rstd * gf[i]) + bf[i];
    store16(y + k * G, rows::pack_floats<T>(f));
  }
}

/// Copy h of gamma and of beta (h < L) for affine_copies: element c at out + h * (stride + 1) + c,
/// gamma's copies first, then beta's at out + L * stride.
template <class T>
__global__ void affine_copies_kernel(const T* gamma, const T* beta, T* out, index_t cols, index_t stride) {
  constexpr int L = lanes<T>;
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < L * cols; i += index_t(gridDim.x) * blockDim.x) {
    const index_t h = i / cols, c = i - h * cols, at = h * (stride + 1) + c;
    if (gamma) out[at] = gamma[c];
    if (beta) out[L * stride + at] = beta[c];
  }
}

/// Where streamed rows' items meet: the ticket counter, per row the statistics items done, per
/// chunk its statistics. Counters start at zero.
struct stream_state {
  unsigned long long* ticket;
  unsigned* done;     // [rows]
  moments* partials;  // [rows * parts]
  index_t lag;
};

/// The item of ticket t among `total` chunks: the first `lag` tickets are statistics items, then
/// statistics and normalize items alternate (normalization of chunk n after statistics of chunk
/// n + lag), then the last normalize items. With lag >= a row's chunks, every statistics item a
/// normalize item waits for has a smaller ticket.
STRATA_HD inline bool stream_item(index_t t, index_t total, index_t lag, index_t& chunk) {
  if (lag > total) lag = total;
  if (t < lag) return chunk = t, true;
  const index_t u = t - lag, mixed = 2 * (total - lag);
  if (u < mixed) return u % 2 == 0 ? (chunk = lag + u / 2, true) : (chunk = u / 2, false);
  return chunk = (total - lag) + (u - mixed), false;
}

/// Rows longer than a block holds, in chunks of G x V units (norm_plan.hpp: streamed): a block
/// takes tickets until every item is done, the next ticket asked for while it works on the
/// current one. A statistics item reads its chunk (kept in L2), folds it, publishes its moments
/// and counts the row's done chunks up (release; nothing waits for the count). A normalize item
/// reads its chunk again (from L2) while its first warp waits for the row's count (acquire) and
/// merges the row's moments in a fixed order (the same bits in every block), then writes the chunk.
/// No block holds a chunk while others work on its row, and nothing waits on a fence.
template <norm_kind Kind, class T, int V, bool Whole>
__global__ void __launch_bounds__(max_group, 2) streamed_kernel(args<T> a, int parts, stream_state st) {
  __shared__ sum_slots slots;
  __shared__ index_t ticket;
  __shared__ float2 row_stats;
  const int G = int(blockDim.x), lane = int(threadIdx.x % 32);
  const index_t total = a.rows * parts;
  const cache_policy keep = l2_policy<true>(), leave = l2_policy<false>();
  unsigned long long next = 0;
  if (threadIdx.x == 0) next = atomicAdd(st.ticket, 1ull);
  for (;;) {
    if (threadIdx.x == 0) ticket = index_t(next), next = atomicAdd(st.ticket, 1ull);  // used by the next item
    __syncthreads();
    index_t c;
    const index_t t = ticket;
    if (t >= 2 * total) break;
    const bool stats = stream_item(t, total, st.lag, c);
    const index_t r = c / parts, q = c % parts;
    const T* xrow = a.x + r * a.x_pitch;
    const row_span s = span_of(xrow, a.cols);
    const index_t begin = q * G * V, end = std::min<index_t>(s.units, begin + index_t(G) * V);
    row_part<T, V> part;
    if constexpr (Whole) part.load_whole(xrow, begin, end, int(threadIdx.x), G, begin < end, stats ? keep : leave);
    else part.load(xrow, s, begin, end, int(threadIdx.x), G, begin < end, stats ? keep : leave);
    if (stats) {
      const moments m = part_moments<Kind>(part, elements_in<T>(s, begin, end), G, slots);
      if (threadIdx.x == 0) {
        st.partials[c] = m;
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(st.done + r) : "memory");
      }
    } else {
      if (threadIdx.x < 32) {
        unsigned n = 0;
        do {
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(n) : "l"(st.done + r) : "memory");
        } while (n < unsigned(parts) && (__nanosleep(64), true));
        moments all{0.0f, 0.0f, 0.0f};  // lane l merges chunks l, l + 32, ... in order, then the butterfly
        for (int k = lane; k < parts; k += 32) {
          const moments* p = st.partials + r * parts + k;
          all = merge<Kind>(all, {__ldcg(&p->count), __ldcg(&p->mean), __ldcg(&p->m2)});
        }
        all = butterfly<Kind>(all, 32);
        if (lane == 0) finish<Kind>(all, a.cols, a.eps, row_stats.x, row_stats.y);
      }
      __syncthreads();
      if constexpr (Whole) part.template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, s, row_stats.x, row_stats.y, leave);
      else write_part<Kind>(part, a, xrow, a.y + r * a.y_pitch, s, row_stats.x, row_stats.y, leave);
    }
    __syncthreads();  // ticket and row_stats are rewritten by the next item
  }
}
#endif

}  // namespace detail::norm
}  // namespace strata
