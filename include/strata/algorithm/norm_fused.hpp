// SPDX-License-Identifier: Apache-2.0
// Normalization as model code calls it, beyond normalize.hpp's rows of one pitch:
// - a residual added first: h = x + residual (rounded to the storage type, as x + residual
//   computed by itself would be), h stored (in place over the residual, into another view, or not
//   at all) and y = norm(h); one read of x and the residual, one write of h and y;
// - rows of a [tokens, heads, head_dim] view with a pitch between tokens and another between heads
//   (the query or key heads of a fused QKV projection, a transposed attention tensor), normalized
//   over head_dim with one gamma;
// - y in a narrower type than x (fp32 rows, bf16 or fp16 output).
// Rows of up to 16384 elements are held in registers by a group of threads (norm_backward.hpp's
// shape: up to 16 elements a thread, up to 1024 threads a row): the statistics are exact two-pass
// sums over the registers (layer norm: sum, then sum of squares about the mean), and every input
// element is read once, every output element written once. Longer rows take a block each and
// sweep the row two or three times, the later sweeps reading h back from where it was stored (or x
// and the residual again), mostly from L2. 16-byte accesses need every view on 16-byte boundaries
// with pitches and rows of whole units (y: units of the same elements in its own type); other rows
// move element by element. The path taken is returned.
//
// Per-head views whose tokens lie back to back (token pitch = heads x head pitch, the dense case)
// and that need no residual or narrower output are rows of one pitch, run by normalize.hpp's tuned
// kernels (norm_fused_shape::matrix_rows).
#pragma once

#include <strata/algorithm/norm_backward.hpp>
#include <strata/algorithm/normalize.hpp>
#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/memory/checked.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strata {

/// How a fused or per-head normalization ran.
enum class norm_fused_shape {
  rows_held,    ///< each row read once and held in registers by a group of threads
  two_pass,     ///< rows too long to hold: a block a row, sweeping it two (RMS) or three (layer) times
  matrix_rows,  ///< per-head rows of one pitch: layer_norm / rms_norm over a matrix_view
};
struct norm_fused_path {
  path access = path::scalar;  ///< vectorized: 16-byte units; scalar: element by element
  norm_fused_shape shape = norm_fused_shape::rows_held;
  int threads_per_row = 0;     ///< rows_held: the group holding a row; two_pass: the block
};

/// Rows of `dim` elements, `heads` of them per token: row (token i, head j) starts at
/// data + i * token_pitch + j * head_pitch (pitches in elements). Rows may not overlap: the heads
/// of a token lie apart (head_pitch >= dim) within a token's span (token_pitch >=
/// (heads - 1) * head_pitch + dim), or the tokens of a head lie so within a head's span (a
/// transposed [heads, tokens, dim] tensor read as [tokens, heads, dim]).
template <class T>
struct heads_view {
  T* data = nullptr;
  index_t tokens = 0, heads = 0, dim = 0, token_pitch = 0, head_pitch = 0;
  memory_location where{};

  STRATA_HD index_t rows() const { return tokens * heads; }
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator heads_view<const U>() const {
    return {data, tokens, heads, dim, token_pitch, head_pitch, where};
  }
};

namespace detail::norm_fused {

/// Elements spanned from a view's first element to the end of its last row.
inline std::size_t heads_span(index_t tokens, index_t heads, index_t dim, index_t token_pitch, index_t head_pitch, const char* what) {
  return checked_add(checked_add(checked_mul(std::size_t(tokens - 1), std::size_t(token_pitch), what),
                                 checked_mul(std::size_t(heads - 1), std::size_t(head_pitch), what), what),
                     std::size_t(dim), what);
}

/// Whether the rows of such a view lie apart (heads_view's rule). Sizes >= 0.
inline bool rows_apart(index_t tokens, index_t heads, index_t dim, index_t token_pitch, index_t head_pitch) {
  if (tokens == 0 || heads == 0 || dim == 0) return true;
  const auto within = [&](index_t outer_n, index_t outer_pitch, index_t inner_n, index_t inner_pitch) {
    // inner rows apart within an outer one, outer rows apart as wholes (an outer count of 1 needs no pitch)
    // (inner_n - 1) * inner_pitch + dim, where it fits in index_t (a wider span cannot fit a pitch)
    index_t span = 0;
    const bool fits = !__builtin_mul_overflow(inner_n - 1, inner_pitch, &span) && !__builtin_add_overflow(span, dim, &span);
    return (inner_n == 1 || inner_pitch >= dim) && (outer_n == 1 || (fits && outer_pitch >= span));
  };
  return within(tokens, token_pitch, heads, head_pitch) || within(heads, head_pitch, tokens, token_pitch);
}

}  // namespace detail::norm_fused

/// Checks sizes, pitches (>= 0, rows apart), the pointer's alignment for T and that no address
/// wraps, and finds the memory's space and device.
template <class T>
heads_view<T> make_heads_view(T* data, index_t tokens, index_t heads, index_t dim, index_t token_pitch, index_t head_pitch) {
  const std::string shape = std::to_string(tokens) + " x " + std::to_string(heads) + " x " + std::to_string(dim) + " with pitches " +
                            std::to_string(token_pitch) + " (tokens) and " + std::to_string(head_pitch) + " (heads)";
  if (tokens < 0 || heads < 0 || dim < 0 || token_pitch < 0 || head_pitch < 0)
    throw size_error("strata: make_heads_view: " + shape + " (sizes and pitches must be >= 0)");
  if (tokens > 0 && heads > 0 && dim > 0) {
    if (!detail::norm_fused::rows_apart(tokens, heads, dim, token_pitch, head_pitch))
      throw size_error("strata: make_heads_view: " + shape + ": rows overlap (heads need head_pitch >= dim within a token's span, or tokens "
                       "token_pitch >= dim within a head's)");
    if (!data) throw size_error("strata: make_heads_view: null pointer with " + shape);
    (void)detail::checked_extent(data, detail::norm_fused::heads_span(tokens, heads, dim, token_pitch, head_pitch, "make_heads_view: elements"),
                                 sizeof(T), "make_heads_view: rows");
  }
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) != 0) throw misaligned_pointer("make_heads_view: rows", data, alignof(T));
  return {data, tokens, heads, dim, token_pitch, head_pitch, detail::locate(data)};
}

namespace detail::norm_fused {

using norm_bwd::column_of;
using norm_bwd::load_held;
using norm_bwd::lanes;
using norm_bwd::store_held;
inline constexpr int group_block = norm_bwd::group_block;
inline constexpr int pass_block = norm_bwd::pass_block;

/// Where row r starts: rows of a matrix (heads == 1: r * outer) or row (r / heads, r % heads) of
/// a per-head view.
struct rows_map {
  index_t heads = 1, outer = 0, inner = 0;
  STRATA_HD index_t at(index_t r) const { return heads == 1 ? r * outer : (r / heads) * outer + (r % heads) * inner; }
};

/// A view of rows as the kernels see it: its data, rows, row length and map.
template <class T>
struct rows_of {
  T* data = nullptr;
  index_t rows = 0, cols = 0;
  rows_map map;
  index_t tokens = 0;  // the outer count (rows / heads), for the checks
  memory_location where{};
};
template <class T>
rows_of<T> rows_from(matrix_view<T> v) {
  return {v.data, v.rows, v.cols, rows_map{1, v.pitch, 0}, v.rows, v.where};
}
template <class T>
rows_of<T> rows_from(heads_view<T> v) {
  index_t rows = 0;
  if (v.tokens >= 0 && v.heads >= 0 && __builtin_mul_overflow(v.tokens, v.heads, &rows))
    throw size_error("strata: per-head normalization: " + std::to_string(v.tokens) + " tokens x " + std::to_string(v.heads) +
                     " heads overflow a row count");
  return {v.data, v.tokens < 0 || v.heads < 0 ? -1 : rows, v.dim, rows_map{v.heads < 1 ? 1 : v.heads, v.token_pitch, v.head_pitch}, v.tokens, v.where};
}

template <class T, class O>
struct args {
  const T* x;
  const T* r;      // null: no residual
  T* h;            // null: h not stored
  O* y;
  const T* gamma;  // null: 1
  const T* beta;   // null: 0
  rows_map xm, rm, hm, ym;
  index_t rows, cols;
  float eps;
  int group;       // rows_held: threads a row
};

/// The value of x + r as T holds it (fp32: the sum itself).
template <class T>
STRATA_HD inline float rounded(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return to_float(from_float<T>(v));
}

/// gamma's or beta's elements for the unit (vec) or element at column c: `fill` where absent or
/// past the row.
template <class T, bool Vec>
STRATA_HD inline void affine_at(const T* p, index_t c, index_t cols, float fill, float (&out)[Vec ? lanes<T> : 1]) {
  constexpr int U = Vec ? lanes<T> : 1;
  if (!p || c >= cols) {
    for (int l = 0; l < U; ++l) out[l] = fill;
  } else if constexpr (Vec) {
    rows::unpack_floats<T>(vec::load<16>(p + c), out);
  } else {
    out[0] = to_float(p[c]);
  }
}

/// Stores a thread's held values as O: a unit of lanes<T> elements is one access of
/// lanes<T> x sizeof(O) bytes (16, or 8 for fp32 rows stored as 16-bit floats).
template <class T, class O, int E, bool Vec>
STRATA_HD inline void store_as(O* row, index_t cols, int t, int G, const float (&in)[E]) {
  if constexpr (Vec) {
    constexpr int L = lanes<T>, B = L * int(sizeof(O));
    STRATA_UNROLL
    for (int u = 0; u < E / L; ++u) {
      const index_t c = column_of<T, true>(t, u * L, G);
      if (c >= cols) continue;
      float f[L];
      STRATA_UNROLL
      for (int l = 0; l < L; ++l) f[l] = in[u * L + l];
      vec::store<B>(row + c, rows::pack_unit<O, B>(f));
    }
  } else {
    STRATA_UNROLL
    for (int k = 0; k < E; ++k) {
      const index_t c = column_of<T, false>(t, k, G);
      if (c < cols) row[c] = from_float<O>(in[k]);
    }
  }
}

/// A row's mean (layer norm; 0 for RMS norm) and 1 / sqrt(var + eps) from the values a group
/// holds (zeros past the row), exact two-pass for layer norm. `sum(v)` adds v over the group,
/// every thread ending with the same bits.
template <norm_kind Kind, class T, int E, bool Vec, class Sum>
STRATA_HD inline void stats_held(const float (&h)[E], index_t cols, int t, int G, float eps, Sum&& sum, float& mean, float& rstd) {
  constexpr int U = Vec ? lanes<T> : 1;
  const float n = float(cols);
  mean = 0.0f;
  if constexpr (Kind == norm_kind::layer) {
    float s = 0.0f;
    STRATA_UNROLL
    for (int k = 0; k < E; ++k) s += h[k];
    sum(s);
    mean = s / n;
  }
  float q = 0.0f;
  STRATA_UNROLL
  for (int u = 0; u < E / U; ++u) {
    const bool in_row = column_of<T, Vec>(t, u * U, G) < cols;
    STRATA_UNROLL
    for (int l = 0; l < U; ++l) {
      const float d = in_row ? h[u * U + l] - mean : 0.0f;
      q += d * d;
    }
  }
  sum(q);
  rstd = norm_bwd::rsqrt_of(q / n + eps);
}

/// y = (h - mean) * (rstd * gamma) + beta over a thread's held values, in place.
template <class T, int E, bool Vec>
STRATA_HD inline void normalize_held(float (&h)[E], const T* gamma, const T* beta, index_t cols, int t, int G, float mean, float rstd) {
  constexpr int U = Vec ? lanes<T> : 1;
  STRATA_UNROLL
  for (int u = 0; u < E / U; ++u) {
    const index_t c = column_of<T, Vec>(t, u * U, G);
    float g[U], b[U];
    affine_at<T, Vec>(gamma, c, cols, 1.0f, g);
    affine_at<T, Vec>(beta, c, cols, 0.0f, b);
    STRATA_UNROLL
    for (int l = 0; l < U; ++l) h[u * U + l] = (h[u * U + l] - mean) * (rstd * g[l]) + b[l];
  }
}

/// Elements a thread holds: 4, 8 or 16 (norm_bwd::shape_for), at least a unit where the rows move
/// in units.
template <class T, int E, bool Vec>
constexpr bool held_ok() {
  return !(Vec && E < lanes<T>);
}

#if defined(STRATA_BACKEND_CUDA)
/// A value summed over a group of G threads (norm_bwd::group_sum2's order, one value).
__device__ inline void group_sum1(float& a, int G, float* red) {
  const int width = G < 32 ? G : 32;
  for (int o = 1; o < width; o <<= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
  if (G <= 32) return;
  const int warp = int(threadIdx.x) / 32, warps = G / 32, first = int(threadIdx.x) / G * warps;
  if (threadIdx.x % 32 == 0) red[warp] = a;
  __syncthreads();
  a = 0.0f;
  for (int w = first; w < first + warps; ++w) a += red[w];
  __syncthreads();
}

template <norm_kind Kind, class T, class O, int E, bool Vec, int Bound>
__global__ void __launch_bounds__(Bound, Bound > group_block ? 1 : 3) held_kernel(args<T, O> a) {
  __shared__ float red[32];
  const int G = a.group, groups = int(blockDim.x) / G, g = int(threadIdx.x) / G, t = int(threadIdx.x) % G;
  auto sum = [&](float& v) { group_sum1(v, G, red); };
  for (index_t base = index_t(blockIdx.x) * groups; base < a.rows; base += index_t(gridDim.x) * groups) {
    const index_t r = base + g;
    const bool live = r < a.rows;
    const index_t rr = live ? r : 0;
    float h[E];
    load_held<T, E, Vec>(a.x + a.xm.at(rr), a.cols, t, G, live, h);
    if (a.r) {
      float q[E];
      load_held<T, E, Vec>(a.r + a.rm.at(rr), a.cols, t, G, live, q);
      STRATA_UNROLL
      for (int k = 0; k < E; ++k) h[k] = rounded<T>(h[k] + q[k]);
    }
    if (a.h && live) store_held<T, E, Vec>(a.h + a.hm.at(r), a.cols, t, G, h);
    float mean, rstd;
    stats_held<Kind, T, E, Vec>(h, a.cols, t, G, a.eps, sum, mean, rstd);
    if (!live) continue;  // the group's sums are done: a group with no row has no more barriers
    normalize_held<T, E, Vec>(h, a.gamma, a.beta, a.cols, t, G, mean, rstd);
    store_as<T, O, E, Vec>(a.y + a.ym.at(r), a.cols, t, G, h);
  }
}

__device__ inline void block_sum1(float& a, float* red) {
  for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = a;
  __syncthreads();
  a = 0.0f;
  for (int w = 0; w < int(blockDim.x) / 32; ++w) a += red[w];
  __syncthreads();
}

/// Rows too long to hold: a block a row. The first sweep forms h (storing it where asked) and sums
/// it (or its squares); layer norm sums the squares about the mean in a second; the last writes y.
/// Each thread visits the same elements in every sweep, so h read back is the thread's own store,
/// and an output over an input is written only after its last read.
template <norm_kind Kind, class T, class O, bool Vec>
__global__ void __launch_bounds__(pass_block) rows_kernel(args<T, O> a) {
  __shared__ float red[32];
  constexpr int L = Vec ? lanes<T> : 1;
  const float n = float(a.cols);
  const index_t step = index_t(blockDim.x) * L;
  for (index_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const T* xr = a.x + a.xm.at(r);
    const T* rr = a.r ? a.r + a.rm.at(r) : nullptr;
    T* hr = a.h ? a.h + a.hm.at(r) : nullptr;
    O* yr = a.y + a.ym.at(r);
    auto formed = [&](index_t c, float (&f)[L]) {
      load_held<T, L, Vec>(xr + c, L, 0, 1, true, f);
      if (rr) {
        float q[L];
        load_held<T, L, Vec>(rr + c, L, 0, 1, true, q);
        STRATA_UNROLL
        for (int l = 0; l < L; ++l) f[l] = rounded<T>(f[l] + q[l]);
      }
    };
    auto again = [&](index_t c, float (&f)[L]) {
      if (hr) load_held<T, L, Vec>(hr + c, L, 0, 1, true, f);
      else formed(c, f);
    };
    float s = 0.0f;
    for (index_t c = index_t(threadIdx.x) * L; c < a.cols; c += step) {
      float f[L];
      formed(c, f);
      if (hr) store_held<T, L, Vec>(hr + c, L, 0, 1, f);
      STRATA_UNROLL
      for (int l = 0; l < L; ++l) s += Kind == norm_kind::layer ? f[l] : f[l] * f[l];
    }
    block_sum1(s, red);
    float mean = 0.0f, q = s;
    if constexpr (Kind == norm_kind::layer) {
      mean = s / n, q = 0.0f;
      for (index_t c = index_t(threadIdx.x) * L; c < a.cols; c += step) {
        float f[L];
        again(c, f);
        STRATA_UNROLL
        for (int l = 0; l < L; ++l) q += (f[l] - mean) * (f[l] - mean);
      }
      block_sum1(q, red);
    }
    const float rstd = rsqrtf(q / n + a.eps);
    for (index_t c = index_t(threadIdx.x) * L; c < a.cols; c += step) {
      float f[L], g[L], b[L];
      again(c, f);
      affine_at<T, Vec>(a.gamma, c, a.cols, 1.0f, g);
      affine_at<T, Vec>(a.beta, c, a.cols, 0.0f, b);
      STRATA_UNROLL
      for (int l = 0; l < L; ++l) f[l] = (f[l] - mean) * (rstd * g[l]) + b[l];
      store_as<T, O, L, Vec>(yr + c, L, 0, 1, f);
    }
  }
}

template <norm_kind Kind, class T, class O, int E, bool Vec>
const void* held_kernel_of(int block) {
  if constexpr (!held_ok<T, E, Vec>()) return nullptr;
  else if (block > group_block) return reinterpret_cast<const void*>(&held_kernel<Kind, T, O, E, Vec, norm_bwd::max_group>);
  else return reinterpret_cast<const void*>(&held_kernel<Kind, T, O, E, Vec, group_block>);
}
#endif

/// Whether every view moves in 16-byte units (y: units of lanes<T> elements of O, one access
/// each): rows of whole units, every row on such a boundary.
template <class T, class O>
bool whole_units(const args<T, O>& a, index_t tokens) {
  constexpr std::size_t y_unit = std::size_t(lanes<T>) * sizeof(O);
  auto aligned = [](const void* p, std::size_t b) { return reinterpret_cast<std::uintptr_t>(p) % b == 0; };
  auto map_ok = [&](const rows_map& m, std::size_t size, std::size_t unit) {
    return (tokens <= 1 || (std::size_t(m.outer) * size) % unit == 0) && (m.heads <= 1 || (std::size_t(m.inner) * size) % unit == 0);
  };
  return a.cols % lanes<T> == 0 && aligned(a.x, 16) && map_ok(a.xm, sizeof(T), 16) && (!a.r || (aligned(a.r, 16) && map_ok(a.rm, sizeof(T), 16))) &&
         (!a.h || (aligned(a.h, 16) && map_ok(a.hm, sizeof(T), 16))) && aligned(a.y, y_unit) && map_ok(a.ym, sizeof(O), y_unit) &&
         (!a.gamma || aligned(a.gamma, 16)) && (!a.beta || aligned(a.beta, 16));
}

struct plan {
  norm_fused_shape shape = norm_fused_shape::rows_held;
  int group = 0, held = 4, block = group_block;
  index_t blocks = 0;
};

/// The shape is norm_bwd::shape_for's: the narrowest group (up to 1024 threads) whose threads hold
/// at most 16 elements, then the fewest elements a thread that cover the row. The grid: fp32 rows
/// held by groups of 32 threads or more take a block of rows each, every row at once (the blocks'
/// phases of loads, sums and stores then overlap on each SM); other groups loop over the rows on
/// the blocks the device keeps resident. On the H200 the full grid runs fp32 rows of 768-4096
/// elements at 0.96-1.0 of a copy against 0.88-0.92 looping, while the resident grid runs bf16 rows
/// of 64-256 elements at 0.94-0.96 against 0.87-0.91 and longer bf16 rows as fast or faster
/// (docs/performance.md, "Fused residual and per-head rows").
template <norm_kind Kind, class T, class O>
plan planned(index_t rows, index_t cols, bool vec) {
  const norm_bwd::plan s = norm_bwd::shape_for<T>(cols, vec);
  plan p;
#if defined(STRATA_BACKEND_CUDA)
  const int sms = current_device_shape().sms;
#else
  constexpr int sms = 16;
#endif
  if (s.shape == norm_backward_shape::two_pass) {
    p.shape = norm_fused_shape::two_pass, p.block = pass_block;
    p.blocks = std::max<index_t>(1, std::min<index_t>(rows, index_t(sms) * 8));
    return p;
  }
  p.group = s.group, p.held = s.held, p.block = s.block;
  const index_t groups = p.block / p.group, needed = (rows + groups - 1) / groups;
#if defined(STRATA_BACKEND_CUDA)
  const void* k = vec ? norm_bwd::with_held(p.held, [&]<int E>() { return held_kernel_of<Kind, T, O, E, true>(p.block); })
                      : norm_bwd::with_held(p.held, [&]<int E>() { return held_kernel_of<Kind, T, O, E, false>(p.block); });
  if (!k) throw std::logic_error("strata: fused normalization: no kernel holds " + std::to_string(p.held) + " elements a thread");
  const int per_sm = std::max(1, blocks_per_sm(k, p.block, 0));
#else
  const int per_sm = 2;
#endif
  p.blocks = sizeof(T) == 4 && p.group >= 32 ? needed : std::max<index_t>(1, std::min<index_t>(needed, index_t(sms) * per_sm));
  return p;
}

// ---- the host backend: the kernels' arithmetic, row by row ---------------------------------------

template <norm_kind Kind, class T, class O>
void host_rows(const args<T, O>& a) {
  STRATA_PARALLEL_FOR_IF(a.rows * a.cols > 65536)
  for (index_t r = 0; r < a.rows; ++r) {
    const T* xr = a.x + a.xm.at(r);
    const T* rr = a.r ? a.r + a.rm.at(r) : nullptr;
    T* hr = a.h ? a.h + a.hm.at(r) : nullptr;
    O* yr = a.y + a.ym.at(r);
    std::vector<float> h(static_cast<std::size_t>(a.cols));
    for (index_t c = 0; c < a.cols; ++c) h[std::size_t(c)] = rr ? rounded<T>(to_float(xr[c]) + to_float(rr[c])) : to_float(xr[c]);
    if (hr)
      for (index_t c = 0; c < a.cols; ++c) hr[c] = from_float<T>(h[std::size_t(c)]);
    float mean = 0.0f;
    if constexpr (Kind == norm_kind::layer) {
      float s = 0.0f;
      for (float v : h) s += v;
      mean = s / float(a.cols);
    }
    float q = 0.0f;
    for (float v : h) q += (v - mean) * (v - mean);
    const float rstd = norm_bwd::rsqrt_of(q / float(a.cols) + a.eps);
    for (index_t c = 0; c < a.cols; ++c) {
      const float g = a.gamma ? to_float(a.gamma[c]) : 1.0f, b = a.beta ? to_float(a.beta[c]) : 0.0f;
      yr[c] = from_float<O>((h[std::size_t(c)] - mean) * (rstd * g) + b);
    }
  }
}

// ---- the entry point ----------------------------------------------------------------------------

/// Bytes [begin, end) a view's rows span.
template <class T>
std::pair<std::uintptr_t, std::uintptr_t> extent_of(const rows_of<T>& v) {
  const auto b = reinterpret_cast<std::uintptr_t>(v.data);
  if (!v.data || v.rows == 0 || v.cols == 0) return {b, b};
  const index_t heads = v.map.heads;
  return {b, b + heads_span(v.tokens, heads, v.cols, v.map.outer, v.map.inner, "normalization: elements") * sizeof(T)};
}

template <class A, class B>
bool same_rows(const rows_of<A>& a, const rows_of<B>& b) {
  return std::is_same_v<std::remove_const_t<A>, std::remove_const_t<B>> && static_cast<const void*>(a.data) == static_cast<const void*>(b.data) &&
         a.map.heads == b.map.heads && (a.tokens <= 1 || a.map.outer == b.map.outer) && (a.map.heads <= 1 || a.map.inner == b.map.inner);
}

/// Checks a view (the aggregates anyone can fill are checked again as their make_ functions do).
template <class T>
void check_rows(const std::string& op, const rows_of<T>& v, const char* role) {
  const index_t heads = v.map.heads;
  if (v.rows < 0 || v.cols < 0 || v.tokens < 0 || v.map.outer < 0 || v.map.inner < 0 || heads < 1)
    throw size_error("strata: " + op + ": " + role + " has negative sizes or pitches");
  if (v.rows == 0 || v.cols == 0) return;
  if (heads == 1 ? v.map.outer < v.cols && v.rows > 1 : !rows_apart(v.tokens, heads, v.cols, v.map.outer, v.map.inner))
    throw size_error("strata: " + op + ": " + role + "'s rows overlap (a pitch shorter than a row)");
  if (!v.data) throw size_error("strata: " + op + ": " + role + " is a null pointer with " + std::to_string(v.rows) + " rows");
  if (reinterpret_cast<std::uintptr_t>(v.data) % alignof(T) != 0) throw misaligned_pointer((op + ": " + role).c_str(), v.data, alignof(T));
  (void)checked_extent(v.data, heads_span(v.tokens, heads, v.cols, v.map.outer, v.map.inner, role), sizeof(T), role);
}

/// The checks of every call, before anything runs: each view, shapes that agree, gamma and beta's
/// lengths and alignment, eps, and overlaps (an output may be an input's very rows: each element is
/// read before the thread holding it writes it; any other overlap would read what the call wrote).
template <class T, class O>
void check_call(const std::string& name, const rows_of<const T>& x, const std::optional<rows_of<const T>>& res, const std::optional<rows_of<T>>& h,
                const rows_of<O>& y, cuda::std::span<const T> gamma, cuda::std::span<const T> beta, float eps) {
  check_rows(name, x, "x"), check_rows(name, y, "y");
  if (res) check_rows(name, *res, "residual");
  if (h) check_rows(name, *h, "the sum");
  auto shape = [](const auto& v) { return std::to_string(v.rows) + " x " + std::to_string(v.cols); };
  auto agrees = [&](const auto& v) { return v.rows == x.rows && v.cols == x.cols && v.map.heads == x.map.heads; };
  if (!agrees(y) || (res && !agrees(*res)) || (h && !agrees(*h)))
    throw size_error("strata: " + name + ": x has " + shape(x) + " rows (" + std::to_string(x.map.heads) + " heads), y " + shape(y) +
                     (res ? ", the residual " + shape(*res) : std::string()) + (h ? ", the sum " + shape(*h) : std::string()) +
                     " (all must agree)");
  auto length_ok = [&](std::size_t n) { return n == 0 || index_t(n) == x.cols; };
  if (!length_ok(gamma.size()) || !length_ok(beta.size()))
    throw size_error("strata: " + name + ": gamma and beta hold " + std::to_string(gamma.size()) + " and " + std::to_string(beta.size()) +
                     " elements; rows have " + std::to_string(x.cols) + " (or pass none)");
  for (const T* p : {gamma.data(), beta.data()})
    if (p && reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0) throw misaligned_pointer((name + ": gamma or beta").c_str(), p, alignof(T));
  if (!std::isfinite(eps) || eps < 0) throw std::invalid_argument("strata: " + name + ": eps is " + std::to_string(eps) + "; it must be finite and >= 0");
  using norm_bwd::overlaps;
  const auto ex = extent_of(x), ey = extent_of(y);
  const auto er = res ? extent_of(*res) : std::pair<std::uintptr_t, std::uintptr_t>{}, eh = h ? extent_of(*h) : std::pair<std::uintptr_t, std::uintptr_t>{};
  const auto eg = norm_bwd::extent_of(gamma.data(), 1, index_t(gamma.size()), index_t(gamma.size()));
  const auto eb = norm_bwd::extent_of(beta.data(), 1, index_t(beta.size()), index_t(beta.size()));
  auto output_ok = [&](const auto& out, auto eo, const char* role) {
    if ((overlaps(eo, ex) && !same_rows(out, x)) || (res && overlaps(eo, er) && !same_rows(out, *res)) || overlaps(eo, eg) || overlaps(eo, eb))
      throw std::invalid_argument("strata: " + name + ": " + role + " overlaps x, the residual, gamma or beta other than as the same rows");
  };
  output_ok(y, ey, "y");
  if (h) output_ok(*h, eh, "the sum");
  if (h && overlaps(eh, ey)) throw std::invalid_argument("strata: " + name + ": y and the sum overlap");
}

template <norm_kind Kind, class T, class O>
norm_fused_path run(const char* op, rows_of<const T> x, std::optional<rows_of<const T>> res, std::optional<rows_of<T>> h, rows_of<O> y,
                    cuda::std::span<const T> gamma, cuda::std::span<const T> beta, float eps, stream_t stream) {
  static_assert(sizeof(O) <= sizeof(T), "strata: normalization writes y in the input's type or a narrower one");
  const std::string name(op);
  check_call(name, x, res, h, y, gamma, beta, eps);
  std::string (*const type)() = &type_name<T>;
  std::string (*const out_type)() = &type_name<O>;
  const operand ox{"x", x.where, x.rows, type, "rows"}, oy{"y", y.where, y.rows, out_type, "rows"};
  const operand orr{"residual", res ? res->where : memory_location{}, res ? res->rows : 0, type, "rows"};
  const operand oh{"sum", h ? h->where : memory_location{}, h ? h->rows : 0, type, "rows"};
  const operand og{"gamma", gamma.empty() ? memory_location{} : locate(gamma.data()), index_t(gamma.size()), type, "elements"};
  const operand ob{"beta", beta.empty() ? memory_location{} : locate(beta.data()), index_t(beta.size()), type, "elements"};
  launch_scope scope(op, stream, {ox, oy, orr, oh, og, ob});

  args<T, O> a{x.data, res ? res->data : nullptr, h ? h->data : nullptr, y.data, gamma.empty() ? nullptr : gamma.data(),
               beta.empty() ? nullptr : beta.data(), x.map, res ? res->map : rows_map{}, h ? h->map : rows_map{}, y.map, x.rows, x.cols, eps, 1};
  const bool vec = whole_units(a, x.tokens);
  norm_fused_path taken{vec ? path::vectorized : path::scalar, norm_fused_shape::rows_held, 0};
  if (x.rows == 0 || x.cols == 0) return taken;
  const plan p = planned<Kind, T, O>(x.rows, x.cols, vec);
  taken.shape = p.shape;
  taken.threads_per_row = p.shape == norm_fused_shape::rows_held ? p.group : p.block;
  a.group = p.group;
  if (p.blocks > index_t(0x7fffffff)) throw size_error("strata: " + name + ": " + std::to_string(x.rows) + " rows need more than 2^31 - 1 blocks");
#if defined(STRATA_BACKEND_CUDA)
  if (p.shape == norm_fused_shape::rows_held) {
    auto go = [&]<bool V>() {
      norm_bwd::with_held(p.held, [&]<int E>() {
        if constexpr (held_ok<T, E, V>()) {
          if (p.block > group_block) held_kernel<Kind, T, O, E, V, norm_bwd::max_group><<<unsigned(p.blocks), p.block, 0, stream>>>(a);
          else held_kernel<Kind, T, O, E, V, group_block><<<unsigned(p.blocks), p.block, 0, stream>>>(a);
        }
      });
    };
    if (vec) go.template operator()<true>();
    else go.template operator()<false>();
    check_launch("normalization (rows held)");
  } else {
    if (vec) rows_kernel<Kind, T, O, true><<<unsigned(p.blocks), pass_block, 0, stream>>>(a);
    else rows_kernel<Kind, T, O, false><<<unsigned(p.blocks), pass_block, 0, stream>>>(a);
    check_launch("normalization (a block a row)");
  }
#else
  (void)stream;
  host_rows<Kind>(a);
#endif
  return taken;
}

/// A per-head view as rows of one pitch, where it is one (heads back to back within tokens, or a
/// single token or head).
template <class T>
std::optional<matrix_view<T>> as_matrix(const heads_view<T>& v) {
  if (v.tokens == 0 || v.heads == 0) return matrix_view<T>{v.data, 0, v.dim, v.dim, false, v.where};
  if (v.heads == 1) return matrix_view<T>{v.data, v.tokens, v.dim, std::max(v.token_pitch, v.dim), false, v.where};
  if (v.tokens <= 1) return matrix_view<T>{v.data, v.heads, v.dim, std::max(v.head_pitch, v.dim), false, v.where};
  index_t span = 0;
  if (v.head_pitch >= v.dim && !__builtin_mul_overflow(v.heads, v.head_pitch, &span) && v.token_pitch == span) return matrix_view<T>{v.data, v.tokens * v.heads, v.dim, v.head_pitch, false, v.where};
  return std::nullopt;
}

template <norm_kind Kind, class T, class O>
norm_fused_path run_heads(const char* op, heads_view<const T> x, heads_view<O> y, cuda::std::span<const T> gamma, cuda::std::span<const T> beta,
                          float eps, stream_t stream) {
  const rows_of<const T> xr = rows_from(x);  // refuses row counts that overflow
  const rows_of<O> yr = rows_from(y);
  if constexpr (std::is_same_v<O, T>) {
    const auto xm = as_matrix(x);
    const auto ym = as_matrix(y);
    if (xm && ym && x.tokens == y.tokens && x.heads == y.heads && x.dim == y.dim) {
      check_call<T, O>(op, xr, std::nullopt, std::nullopt, yr, gamma, beta, eps);
      const path access = norm::run<Kind, T>(op, *xm, *ym, gamma, beta, eps, stream, nullptr);
      return {access, norm_fused_shape::matrix_rows, 0};
    }
  }
  if (x.tokens != y.tokens || x.heads != y.heads || x.dim != y.dim)
    throw size_error("strata: " + std::string(op) + ": x is " + std::to_string(x.tokens) + " x " + std::to_string(x.heads) + " x " +
                     std::to_string(x.dim) + ", y " + std::to_string(y.tokens) + " x " + std::to_string(y.heads) + " x " + std::to_string(y.dim));
  return run<Kind, T, O>(op, xr, std::nullopt, std::nullopt, yr, gamma, beta, eps, stream);
}

}  // namespace detail::norm_fused

/// residual = x + residual (rounded to T), then y = rms_norm(residual) * gamma, in one pass over
/// the rows (vLLM's fused_add_rms_norm). y may be x's rows (same data and pitch) and may be of a
/// narrower type than T; gamma holds x.cols elements or is empty (1). Stream ordered.
template <class T, class O>
norm_fused_path add_rms_norm(std::type_identity_t<matrix_view<const T>> x, matrix_view<T> residual, matrix_view<O> y,
                             std::type_identity_t<cuda::std::span<const T>> gamma, float eps = 1e-6f, stream_t stream = {}) {
  using namespace detail::norm_fused;
  return run<norm_kind::rms, T, O>("strata::add_rms_norm", rows_from(x), rows_from(matrix_view<const T>(residual)), rows_from(residual),
                                   rows_from(y), gamma, {}, eps, stream);
}

/// sum = x + residual (rounded to T; not stored where `sum` is an empty view), y = rms_norm(x +
/// residual) * gamma. sum may be x's or the residual's rows, y x's or the residual's.
template <class T, class O>
norm_fused_path add_rms_norm(std::type_identity_t<matrix_view<const T>> x, std::type_identity_t<matrix_view<const T>> residual,
                             matrix_view<T> sum, matrix_view<O> y, std::type_identity_t<cuda::std::span<const T>> gamma, float eps = 1e-6f,
                             stream_t stream = {}) {
  using namespace detail::norm_fused;
  const bool keep = sum.data != nullptr || sum.rows != 0 || sum.cols != 0;
  return run<norm_kind::rms, T, O>("strata::add_rms_norm", rows_from(x), rows_from(residual),
                                   keep ? std::optional(rows_from(sum)) : std::nullopt, rows_from(y), gamma, {}, eps, stream);
}

/// residual = x + residual, then y = layer_norm(residual) * gamma + beta (gamma, beta: x.cols
/// elements or empty).
template <class T, class O>
norm_fused_path add_layer_norm(std::type_identity_t<matrix_view<const T>> x, matrix_view<T> residual, matrix_view<O> y,
                               std::type_identity_t<cuda::std::span<const T>> gamma, std::type_identity_t<cuda::std::span<const T>> beta,
                               float eps = 1e-5f, stream_t stream = {}) {
  using namespace detail::norm_fused;
  return run<norm_kind::layer, T, O>("strata::add_layer_norm", rows_from(x), rows_from(matrix_view<const T>(residual)), rows_from(residual),
                                     rows_from(y), gamma, beta, eps, stream);
}

/// sum = x + residual (not stored where `sum` is empty), y = layer_norm(x + residual).
template <class T, class O>
norm_fused_path add_layer_norm(std::type_identity_t<matrix_view<const T>> x, std::type_identity_t<matrix_view<const T>> residual,
                               matrix_view<T> sum, matrix_view<O> y, std::type_identity_t<cuda::std::span<const T>> gamma,
                               std::type_identity_t<cuda::std::span<const T>> beta, float eps = 1e-5f, stream_t stream = {}) {
  using namespace detail::norm_fused;
  const bool keep = sum.data != nullptr || sum.rows != 0 || sum.cols != 0;
  return run<norm_kind::layer, T, O>("strata::add_layer_norm", rows_from(x), rows_from(residual),
                                     keep ? std::optional(rows_from(sum)) : std::nullopt, rows_from(y), gamma, beta, eps, stream);
}

/// rms_norm over head_dim of every (token, head) row of x into y (same counts; y may be x's rows,
/// or of a narrower type), one gamma of x.dim elements (or empty) for every head.
template <class T, class O>
norm_fused_path rms_norm(std::type_identity_t<heads_view<const T>> x, heads_view<O> y, std::type_identity_t<cuda::std::span<const T>> gamma,
                         float eps = 1e-6f, stream_t stream = {}) {
  return detail::norm_fused::run_heads<norm_kind::rms, T, O>("strata::rms_norm (heads)", x, y, gamma, {}, eps, stream);
}

/// layer_norm over head_dim of every (token, head) row of x into y.
template <class T, class O>
norm_fused_path layer_norm(std::type_identity_t<heads_view<const T>> x, heads_view<O> y, std::type_identity_t<cuda::std::span<const T>> gamma,
                           std::type_identity_t<cuda::std::span<const T>> beta, float eps = 1e-5f, stream_t stream = {}) {
  return detail::norm_fused::run_heads<norm_kind::layer, T, O>("strata::layer_norm (heads)", x, y, gamma, beta, eps, stream);
}

}  // namespace strata
