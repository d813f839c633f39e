// SPDX-License-Identifier: Apache-2.0
// The backward of layer and RMS normalization (normalize.hpp) over 2-D views of any pitch: given
// x, the gradient dy of the loss with respect to y and gamma, it writes dx and the column sums
// dgamma = sum over rows of dy * xhat and dbeta = sum over rows of dy, in fp32 arithmetic for
// fp32 / bf16 / fp16 storage. The row statistics (mean, 1 / sqrt(var + eps)) are computed again
// from x, which the backward reads anyway: no tensor is saved by the forward.
//
// Two shapes, chosen from the row length:
// - rows_held (rows up to max_held * max_group = 16384 elements): a group of up to 1024 threads
//   holds a row of x and dy in registers (up to 16 elements a thread), reduces the row's
//   statistics and its sums in two reductions of two values (RMS norm: one) with warp shuffles
//   (and barriers across a group's warps), reading gamma a 16-byte unit at a time, writes dx, and
//   adds dy * xhat and dy to per-thread accumulators in shared memory, laid out thread by thread
//   so no two threads of a warp share a bank. x and dy are read once, dx written once: the
//   traffic of a copy plus one read.
// - two_pass (longer rows, and rows whose accumulators exceed the device's shared memory a
//   block): a block per row computes the row's statistics in two exact passes over x and dy (the
//   second from L2 where the rows in flight fit there), then a column-tiled pass reads x and dy
//   again, writes dx and sums dgamma and dbeta over its range of rows.
// dgamma and dbeta are deterministic: each block (rows_held) or range of rows (two_pass) writes
// its partial sums to scratch, and a second kernel adds them per column in a fixed order (32
// threads a column, each adding every 32nd partial sum, then the 32 in order). The partition
// depends on the device (SM count, occupancy, shared memory) and on which sums are asked for, so
// a device gives the same bits on every run of one call. dx may be x or dy (the same rows: each
// row, or element, is read before it is written); other overlaps are refused. 16-byte accesses
// need x, dy, dx and gamma on 16-byte boundaries, pitches of whole 16-byte units and rows of whole
// units; other rows move element by element (the path returned says which).
#pragma once

#include <strata/algorithm/norm_row.hpp>  // norm_kind
#include <strata/algorithm/rows.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strata {

/// How a normalization backward ran.
enum class norm_backward_shape {
  rows_held,  ///< each row read once and held in registers by a group of threads
  two_pass,   ///< rows too long to hold: a statistics pass, then dx and the column sums
};
struct norm_backward_path {
  path access = path::scalar;  ///< vectorized: 16-byte units; scalar: element by element
  norm_backward_shape shape = norm_backward_shape::rows_held;
  int threads_per_row = 0;     ///< rows_held: the group holding a row; two_pass: the statistics pass's block
  index_t partial_sums = 0;    ///< partial sums of dgamma and dbeta added per column (blocks or ranges of rows)
};

namespace detail::norm_bwd {

inline constexpr int max_held = 16;       // elements of a row a thread holds (rows_held)
inline constexpr int max_group = 1024;    // threads a row (rows_held)
inline constexpr int group_block = 256;   // rows_held blocks of groups up to this size (bounded to it: the compiler's register budget)
inline constexpr int pass_block = 256;    // two_pass kernels

template <class T>
inline constexpr int lanes = rows::lanes<T>;

template <class T>
struct args {
  const T* x;
  const T* dy;
  const T* gamma;  // null: 1
  T* dx;
  float* partial;    // [partials][stats][cols]; null where neither dgamma nor dbeta is asked for
  float* row_stats;  // two_pass: [rows][4] = mean, rstd, mean of g, mean of g * xhat (g = dy * gamma)
  index_t rows, cols, x_pitch, dy_pitch, dx_pitch;
  float eps;
  int group;        // rows_held: threads a row
  int stats;        // 0, 1 (dgamma), 2 (dgamma, dbeta)
  index_t chunk;    // two_pass: rows a range
};

struct plan {
  norm_backward_shape shape = norm_backward_shape::rows_held;
  bool vec = false;
  int group = 1, held = 4, block = group_block;  // rows_held
  index_t blocks = 0;                            // rows_held: the grid; two_pass: ranges of rows
  index_t tiles = 0;                             // two_pass: blocks across the columns
};

/// Whether x, dy, dx and gamma move in 16-byte units: every row starts on a 16-byte boundary
/// and holds whole units.
template <class T>
bool whole_units(const args<T>& a) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  auto pitch_ok = [&](index_t pitch) { return a.rows <= 1 || (std::size_t(pitch) * sizeof(T)) % 16 == 0; };
  return aligned(a.x) && aligned(a.dy) && aligned(a.dx) && (!a.gamma || aligned(a.gamma)) && a.cols % lanes<T> == 0 &&
         pitch_ok(a.x_pitch) && pitch_ok(a.dy_pitch) && pitch_ok(a.dx_pitch);
}

/// The smallest power of two at least n (n >= 1).
inline int pow2_at_least(index_t n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}

/// The shape for rows of `cols` elements: the narrowest group (up to max_group threads) whose
/// threads hold at most max_held elements each (whole units where vec), then the fewest elements
/// a thread (4, 8 or 16, at least a unit) that cover the row; two_pass past max_group x max_held.
/// Groups up to group_block threads share blocks of up to group_block; a larger group is a block.
template <class T>
plan shape_for(index_t cols, bool vec) {
  plan p;
  p.vec = vec;
  const int unit = vec ? lanes<T> : 1;
  const index_t units = (cols + unit - 1) / unit, per_thread = max_held / unit;
  const index_t group = (units + per_thread - 1) / per_thread;
  if (group > max_group) {
    p.shape = norm_backward_shape::two_pass;
    p.group = 0, p.block = pass_block;
    return p;
  }
  // Groups within a warp are powers of two (butterflies); larger ones whole warps, as few as hold
  // the row (a row of 640 bf16 units takes 320 threads of 2 units, not 512).
  p.group = group <= 32 ? pow2_at_least(std::max<index_t>(group, 1)) : int((group + 31) / 32 * 32);
  p.held = std::max(4, unit);
  while (index_t(p.held) * p.group < index_t(unit) * units) p.held *= 2;
  p.block = p.group > group_block ? p.group : group_block / p.group * p.group;
  return p;
}

/// Shared memory of a rows_held block: 64 floats for the sums across warps, then `stats`
/// accumulators of `held` floats a thread.
inline std::size_t held_shared(const plan& p, int stats) { return sizeof(float) * (64 + std::size_t(stats) * p.held * p.block); }

/// shape_for, where a rows_held block's accumulators fit in `block_shared` bytes (the device's
/// opt-in limit a block: 227 KiB on the H200, 99 KiB on sm_86 / sm_89 / sm_120, 64 KiB on sm_75);
/// two passes where they do not.
template <class T>
plan shape_within(index_t cols, bool vec, int stats, std::size_t block_shared) {
  plan p = shape_for<T>(cols, vec);
  if (p.shape == norm_backward_shape::rows_held && held_shared(p, stats) > block_shared) {
    p = plan{};
    p.shape = norm_backward_shape::two_pass, p.vec = vec, p.group = 0, p.block = pass_block;
  }
  return p;
}

/// The current device's shared memory a block may opt in to (the host backend: the H200's).
inline std::size_t block_shared_limit() {
#if defined(STRATA_BACKEND_CUDA)
  static thread_local int cached_device = -1;
  static thread_local std::size_t limit = 0;
  const int dev = current_device();
  if (dev != cached_device) {
    int optin = 0;
    cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "cudaDeviceGetAttribute (normalization backward)");
    limit = std::size_t(std::max(optin, 0)), cached_device = dev;
  }
  return limit;
#else
  return std::size_t(227) * 1024;
#endif
}

template <class F>
decltype(auto) with_held(int held, F&& f) {
  switch (held) {
    case 4: return f.template operator()<4>();
    case 8: return f.template operator()<8>();
    default: return f.template operator()<16>();
  }
}

/// Element k of a thread's held elements, as a column of the row: unit k / L of the thread's
/// units t, t + G, ... (vec) or element t + k * G.
template <class T, bool Vec>
STRATA_HD inline index_t column_of(int t, int k, int G) {
  if constexpr (Vec) return (index_t(t) + index_t(k / lanes<T>) * G) * lanes<T> + k % lanes<T>;
  else return index_t(t) + index_t(k) * G;
}

/// Loads a thread's held elements of row `row` (zeros past its end, and for a group with no row).
template <class T, int E, bool Vec>
STRATA_HD inline void load_held(const T* row, index_t cols, int t, int G, bool live, float (&out)[E]) {
  if constexpr (Vec) {
    constexpr int L = lanes<T>;
    STRATA_UNROLL
    for (int u = 0; u < E / L; ++u) {
      const index_t c = column_of<T, true>(t, u * L, G);
      float f[L];
      if (live && c < cols) rows::unpack_floats<T>(vec::load<16>(row + c), f);
      else
        for (int l = 0; l < L; ++l) f[l] = 0.0f;
      STRATA_UNROLL
      for (int l = 0; l < L; ++l) out[u * L + l] = f[l];
    }
  } else {
    STRATA_UNROLL
    for (int k = 0; k < E; ++k) {
      const index_t c = column_of<T, false>(t, k, G);
      out[k] = live && c < cols ? to_float(row[c]) : 0.0f;
    }
  }
}

template <class T, int E, bool Vec>
STRATA_HD inline void store_held(T* row, index_t cols, int t, int G, const float (&in)[E]) {
  if constexpr (Vec) {
    constexpr int L = lanes<T>;
    STRATA_UNROLL
    for (int u = 0; u < E / L; ++u) {
      const index_t c = column_of<T, true>(t, u * L, G);
      if (c >= cols) continue;
      float f[L];
      STRATA_UNROLL
      for (int l = 0; l < L; ++l) f[l] = in[u * L + l];
      vec::store<16>(row + c, rows::pack_floats<T>(f));
    }
  } else {
    STRATA_UNROLL
    for (int k = 0; k < E; ++k) {
      const index_t c = column_of<T, false>(t, k, G);
      if (c < cols) row[c] = from_float<T>(in[k]);
    }
  }
}

STRATA_HD inline float rsqrt_of(float v) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(v);
#else
  return 1.0f / std::sqrt(v);
#endif
}

/// gamma's elements for the unit (vec: 16 bytes, one load) or element starting at column c: 1
/// where gamma is absent or c lies past the row.
template <class T, bool Vec>
STRATA_HD inline void gamma_at(const T* gamma, index_t c, index_t cols, float (&out)[Vec ? lanes<T> : 1]) {
  constexpr int U = Vec ? lanes<T> : 1;
  if (!gamma || c >= cols) {
    for (int l = 0; l < U; ++l) out[l] = 1.0f;
  } else if constexpr (Vec) {
    rows::unpack_floats<T>(vec::load<16>(gamma + c), out);
  } else {
    out[0] = to_float(gamma[c]);
  }
}

/// A row's statistics and sums from x and dy as held, in two reductions of two values each
/// (RMS norm: one): sum x and sum g (g = dy * gamma), giving mean and c_g = mean of g; then
/// sum (x - mean)^2 and sum g * (x - mean), giving rstd and c_gx = mean of g * xhat. RMS norm:
/// sum x^2 and sum g * x. `sum(a, b)` reduces two values over the row's group, in an order that
/// gives every thread of the group the same bits. Elements past the row are held as zeros.
/// gamma is read a unit at a time (one 16-byte load for a unit's elements where vec).
template <norm_kind Kind, class T, int E, bool Vec, class Sum>
STRATA_HD inline void row_terms(const float (&x)[E], const float (&dy)[E], const T* gamma, index_t cols, int t, int G, float eps,
                                Sum&& sum, float& mean, float& rstd, float& c_g, float& c_gx) {
  constexpr int U = Vec ? lanes<T> : 1;
  const float n = float(cols);
  mean = 0.0f, c_g = 0.0f;
  if constexpr (Kind == norm_kind::layer) {
    float s = 0.0f, sg = 0.0f;
    STRATA_UNROLL
    for (int u = 0; u < E / U; ++u) {
      float gm[U];
      gamma_at<T, Vec>(gamma, column_of<T, Vec>(t, u * U, G), cols, gm);
      STRATA_UNROLL
      for (int l = 0; l < U; ++l) s += x[u * U + l], sg += dy[u * U + l] * gm[l];
    }
    sum(s, sg);
    mean = s / n, c_g = sg / n;
  }
  float q = 0.0f, sgd = 0.0f;
  STRATA_UNROLL
  for (int u = 0; u < E / U; ++u) {
    const index_t c = column_of<T, Vec>(t, u * U, G);
    float gm[U];
    gamma_at<T, Vec>(gamma, c, cols, gm);
    STRATA_UNROLL
    for (int l = 0; l < U; ++l) {
      const float d = c < cols ? x[u * U + l] - mean : 0.0f;
      q += d * d, sgd += dy[u * U + l] * gm[l] * d;
    }
  }
  sum(q, sgd);
  rstd = rsqrt_of(q / n + eps);
  c_gx = rstd * sgd / n;
}

/// dx = rstd * (g - c_g - xhat * c_gx), into x's registers.
template <class T, int E, bool Vec>
STRATA_HD inline void dx_held(float (&x)[E], const float (&dy)[E], const T* gamma, index_t cols, int t, int G, float mean, float rstd,
                              float c_g, float c_gx) {
  constexpr int U = Vec ? lanes<T> : 1;
  STRATA_UNROLL
  for (int u = 0; u < E / U; ++u) {
    float gm[U];
    gamma_at<T, Vec>(gamma, column_of<T, Vec>(t, u * U, G), cols, gm);
    STRATA_UNROLL
    for (int l = 0; l < U; ++l) {
      const int k = u * U + l;
      const float xhat = (x[k] - mean) * rstd;
      // g rounded as the sums rounded it: where c_g is g itself (rows of one element), g - c_g is 0
      x[k] = rstd * (norm::mul_rn(dy[k], gm[l]) - c_g - xhat * c_gx);
    }
  }
}

#if defined(STRATA_BACKEND_CUDA)
/// Two values summed over a group of G threads: butterflies within a warp (G <= 32), then across
/// the group's warps in warp order through `red` (G > 32: the block's groups are whole warps,
/// at most 32 warps in all). Every thread of the group ends with the same bits.
__device__ inline void group_sum2(float& a, float& b, int G, float* red) {
  const int width = G < 32 ? G : 32;
  for (int o = 1; o < width; o <<= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  if (G <= 32) return;
  const int warp = int(threadIdx.x) / 32, warps = G / 32, first = int(threadIdx.x) / G * warps;
  if (threadIdx.x % 32 == 0) red[warp] = a, red[32 + warp] = b;
  __syncthreads();
  a = 0.0f, b = 0.0f;
  for (int w = first; w < first + warps; ++w) a += red[w], b += red[32 + w];
  __syncthreads();
}

template <norm_kind Kind, class T, int E, bool Vec, int Bound>
__global__ void __launch_bounds__(Bound, Bound > group_block ? 1 : 3) held_kernel(args<T> a) {
  extern __shared__ float shared[];
  float* red = shared;        // 64 floats: group_sum2's warps
  float* acc = shared + 64;   // [stats][E][blockDim.x]: element k of thread i at acc[(s * E + k) * blockDim.x + i]
  const int G = a.group, groups = int(blockDim.x) / G, g = int(threadIdx.x) / G, t = int(threadIdx.x) % G, B = int(blockDim.x);
  for (int i = int(threadIdx.x); i < a.stats * E * B; i += B) acc[i] = 0.0f;  // each thread its own elements
  auto sum = [&](float& u, float& v) { group_sum2(u, v, G, red); };
  for (index_t base = index_t(blockIdx.x) * groups; base < a.rows; base += index_t(gridDim.x) * groups) {
    const index_t r = base + g;
    const bool live = r < a.rows;
    float x[E], dy[E];
    load_held<T, E, Vec>(a.x + (live ? r : 0) * a.x_pitch, a.cols, t, G, live, x);
    load_held<T, E, Vec>(a.dy + (live ? r : 0) * a.dy_pitch, a.cols, t, G, live, dy);
    float mean, rstd, c_g, c_gx;
    row_terms<Kind, T, E, Vec>(x, dy, a.gamma, a.cols, t, G, a.eps, sum, mean, rstd, c_g, c_gx);
    if (!live) continue;  // the group's sums are done: a group with no row has no more barriers
    if (a.stats > 0) {
      STRATA_UNROLL
      for (int k = 0; k < E; ++k) {
        acc[k * B + int(threadIdx.x)] += dy[k] * ((x[k] - mean) * rstd);
        if (a.stats > 1) acc[(E + k) * B + int(threadIdx.x)] += dy[k];
      }
    }
    dx_held<T, E, Vec>(x, dy, a.gamma, a.cols, t, G, mean, rstd, c_g, c_gx);
    store_held<T, E, Vec>(a.dx + r * a.dx_pitch, a.cols, t, G, x);
  }
  if (a.stats == 0) return;
  __syncthreads();
  // The block's partial sums: per column, its groups' accumulators in group order.
  for (int i = int(threadIdx.x); i < a.stats * E * G; i += B) {
    const int s = i / (E * G), k = i / G % E, tt = i % G;
    const index_t c = column_of<T, Vec>(tt, k, G);
    if (c >= a.cols) continue;
    float v = 0.0f;
    for (int q = 0; q < groups; ++q) v += acc[(s * E + k) * B + q * G + tt];
    a.partial[(index_t(blockIdx.x) * a.stats + s) * a.cols + c] = v;
  }
}

/// Two values summed over the block in warp order (every thread ends with the same bits).
__device__ inline void block_sum2(float& a, float& b, float (*red)[pass_block / 32]) {
  for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o), b += __shfl_xor_sync(0xffffffffu, b, o);
  if (threadIdx.x % 32 == 0) red[0][threadIdx.x / 32] = a, red[1][threadIdx.x / 32] = b;
  __syncthreads();
  a = 0.0f, b = 0.0f;
  for (int w = 0; w < int(blockDim.x) / 32; ++w) a += red[0][w], b += red[1][w];
  __syncthreads();
}

/// A row's statistics and sums (two_pass), exact two-pass as the held rows compute them: sum x
/// and sum g, then sum (x - mean)^2 and sum g * (x - mean) (RMS norm: the second pass alone, with
/// mean 0). The block reads its row a second time, mostly from L2 (a block's row is the last
/// thing it read).
template <norm_kind Kind, class T, bool Vec>
__global__ void __launch_bounds__(pass_block) stats_kernel(args<T> a) {
  __shared__ float red[2][pass_block / 32];
  constexpr int L = Vec ? lanes<T> : 1;
  const float n = float(a.cols);
  for (index_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const T* xr = a.x + r * a.x_pitch;
    const T* dr = a.dy + r * a.dy_pitch;
    // f(x, g) for every element of the row this thread reads
    auto over_row = [&](auto&& f) {
      for (index_t c = index_t(threadIdx.x) * L; c < a.cols; c += index_t(blockDim.x) * L) {
        float xf[L], df[L];
        if constexpr (Vec) {
          rows::unpack_floats<T>(vec::load<16>(xr + c), xf), rows::unpack_floats<T>(vec::load<16>(dr + c), df);
        } else {
          xf[0] = to_float(xr[c]), df[0] = to_float(dr[c]);
        }
        STRATA_UNROLL
        for (int l = 0; l < L; ++l) f(xf[l], a.gamma ? norm::mul_rn(df[l], to_float(a.gamma[c + l])) : df[l]);
      }
    };
    float mean = 0.0f, c_g = 0.0f;
    if constexpr (Kind == norm_kind::layer) {
      float sx = 0.0f, sg = 0.0f;
      over_row([&](float x, float g) { sx += x, sg += g; });
      block_sum2(sx, sg, red);
      mean = sx / n, c_g = sg / n;
    }
    float q = 0.0f, sgd = 0.0f;
    over_row([&](float x, float g) {
      const float d = x - mean;
      q += d * d, sgd += g * d;
    });
    block_sum2(q, sgd, red);
    if (threadIdx.x == 0) {
      const float rstd = rsqrtf(q / n + a.eps);
      float* out = a.row_stats + r * 4;
      out[0] = mean, out[1] = rstd, out[2] = c_g, out[3] = rstd * sgd / n;
    }
  }
}

/// dx and the column sums over a range of rows (two_pass): a block's threads hold consecutive
/// units (or elements) of the columns, gamma's among them in registers.
template <norm_kind Kind, class T, bool Vec>
__global__ void __launch_bounds__(pass_block) columns_kernel(args<T> a) {
  constexpr int L = Vec ? lanes<T> : 1;
  const index_t c = (index_t(blockIdx.x) * blockDim.x + threadIdx.x) * L;
  if (c >= a.cols) return;
  float gam[L], acc0[L], acc1[L];
  STRATA_UNROLL
  for (int l = 0; l < L; ++l) gam[l] = a.gamma ? to_float(a.gamma[c + l]) : 1.0f, acc0[l] = 0.0f, acc1[l] = 0.0f;
  const index_t first = index_t(blockIdx.y) * a.chunk, last = std::min(a.rows, first + a.chunk);
  for (index_t r = first; r < last; ++r) {
    const float4 st = *reinterpret_cast<const float4*>(a.row_stats + r * 4);
    float xf[L], df[L], out[L];
    if constexpr (Vec) {
      rows::unpack_floats<T>(vec::load<16>(a.x + r * a.x_pitch + c), xf), rows::unpack_floats<T>(vec::load<16>(a.dy + r * a.dy_pitch + c), df);
    } else {
      xf[0] = to_float(a.x[r * a.x_pitch + c]), df[0] = to_float(a.dy[r * a.dy_pitch + c]);
    }
    STRATA_UNROLL
    for (int l = 0; l < L; ++l) {
      const float xhat = (xf[l] - st.x) * st.y;
      out[l] = st.y * (norm::mul_rn(df[l], gam[l]) - st.z - xhat * st.w);
      acc0[l] += df[l] * xhat, acc1[l] += df[l];
    }
    if constexpr (Vec) vec::store<16>(a.dx + r * a.dx_pitch + c, rows::pack_floats<T>(out));
    else a.dx[r * a.dx_pitch + c] = from_float<T>(out[0]);
  }
  if (a.stats == 0) return;
  for (int l = 0; l < L; ++l) {
    a.partial[(index_t(blockIdx.y) * a.stats) * a.cols + c + l] = acc0[l];
    if (a.stats > 1) a.partial[(index_t(blockIdx.y) * a.stats + 1) * a.cols + c + l] = acc1[l];
  }
}

/// dgamma and dbeta: a block of finish_rows x 32 threads takes 32 columns; thread (row j, column
/// c) adds partials j, j + finish_rows, ... in order, then the block adds its rows' sums in row
/// order. The loads of a thread are independent, so unrolling overlaps their latency.
inline constexpr int finish_rows = 32;
template <class T>
__global__ void __launch_bounds__(32 * finish_rows) finish_kernel(const float* partial, index_t partials, int stats, index_t cols, T* dgamma, T* dbeta) {
  __shared__ float sums[2][finish_rows][33];
  const index_t c = index_t(blockIdx.x) * 32 + threadIdx.x;
  float g = 0.0f, b = 0.0f;
  if (c < cols) {
#pragma unroll 8
    for (index_t p = threadIdx.y; p < partials; p += finish_rows) {
      g += partial[p * stats * cols + c];
      if (stats > 1) b += partial[(p * stats + 1) * cols + c];
    }
  }
  sums[0][threadIdx.y][threadIdx.x] = g, sums[1][threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  g = 0.0f, b = 0.0f;
  for (int j = 0; j < finish_rows; ++j) g += sums[0][j][threadIdx.x], b += sums[1][j][threadIdx.x];
  if (dgamma) dgamma[c] = from_float<T>(g);
  if (dbeta) dbeta[c] = from_float<T>(b);
}

/// The rows_held kernel for a plan: bounded to group_block threads, or to max_group for a group
/// that is a larger block.
template <norm_kind Kind, class T, int E, bool Vec>
const void* held_kernel_of(int block) {
  if constexpr (Vec && E < lanes<T>) return nullptr;  // shape_for holds at least a unit a thread
  else if (block > group_block) return reinterpret_cast<const void*>(&held_kernel<Kind, T, E, Vec, max_group>);
  else return reinterpret_cast<const void*>(&held_kernel<Kind, T, E, Vec, group_block>);
}


/// Lets the rows_held kernel take the dynamic shared memory its accumulators need past 48 KiB
/// (1024 threads x 16 elements x 2 sums = 128 KiB), once per device and kernel; throws where the
/// device allows less.
inline void allow_shared(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> allowed;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_pair(current_device(), kernel);
  if (auto it = allowed.find(key); it != allowed.end() && it->second >= bytes) return;
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, key.first), "cudaDeviceGetAttribute (normalization backward)");
  if (std::size_t(optin) < bytes)
    throw std::invalid_argument("strata: normalization backward: rows held by " + std::to_string(bytes) +
                                " bytes of shared memory a block; this device allows " + std::to_string(optin));
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
             "cudaFuncSetAttribute (normalization backward)");
  allowed[key] = bytes;
}
#endif

/// The partition for these rows on the current device: rows_held grids as many blocks as the
/// device keeps resident (at most one a group of rows), two_pass ranges of rows so that the column
/// pass fills the device about four times; in both, partial sums of dgamma and dbeta stay within
/// about a sixteenth of the call's traffic (written, then read once more).
template <norm_kind Kind, class T>
plan planned(index_t rows, index_t cols, bool vec, int stats) {
  plan p = shape_within<T>(cols, vec, stats, block_shared_limit());
#if defined(STRATA_BACKEND_CUDA)
  const int sms = current_device_shape().sms;
#else
  constexpr int sms = 16;  // the host backend's partition: any fixed one keeps its bits fixed
#endif
  if (p.shape == norm_backward_shape::rows_held) {
    const index_t groups = p.block / p.group, needed = (rows + groups - 1) / groups;
#if defined(STRATA_BACKEND_CUDA)
    const void* k = vec ? with_held(p.held, [&]<int E>() { return held_kernel_of<Kind, T, E, true>(p.block); })
                        : with_held(p.held, [&]<int E>() { return held_kernel_of<Kind, T, E, false>(p.block); });
    if (!k) throw std::logic_error("strata: normalization backward: no kernel holds " + std::to_string(p.held) + " elements a thread");
    const std::size_t bytes = held_shared(p, stats);
    allow_shared(k, bytes);
    const int per_sm = std::max(1, blocks_per_sm(k, p.block, bytes));
#else
    const int per_sm = 2;
#endif
    // Partial sums cost stats x cols floats a block, written and read once: each at most about a
    // sixteenth of the call's traffic (3 x rows x cols elements), but never fewer than a block an SM.
    const index_t by_traffic = std::max<index_t>(sms, 3 * rows * index_t(sizeof(T)) / (64 * std::max(stats, 1)));
    p.blocks = std::max<index_t>(1, std::min({needed, index_t(sms) * per_sm, stats > 0 ? by_traffic : needed}));
  } else {
    const int L = vec ? lanes<T> : 1;
    p.tiles = (cols / L + pass_block - 1) / pass_block;
    const index_t want = std::max<index_t>(1, 4 * index_t(sms) * 8 / std::max<index_t>(p.tiles, 1));  // 8: blocks of 256 an SM
    // As for rows_held: the ranges' partial sums at most about a sixteenth of the call's traffic
    // (written, then read), but enough ranges that the column pass has a block for every SM.
    const index_t by_traffic = std::max<index_t>((sms + p.tiles - 1) / p.tiles, 3 * rows * index_t(sizeof(T)) / (64 * std::max(stats, 1)));
    p.blocks = std::max<index_t>(1, std::min({rows, want, stats > 0 ? by_traffic : want}));
  }
  return p;
}

// ---- the host backend: the same partition, each block's rows in order -------------------------

template <norm_kind Kind, class T>
void host_row(const args<T>& a, index_t r, float* acc0, float* acc1) {
  const T* xr = a.x + r * a.x_pitch;
  const T* dr = a.dy + r * a.dy_pitch;
  T* out = a.dx + r * a.dx_pitch;
  const index_t n = a.cols;
  std::vector<float> x(static_cast<std::size_t>(n)), dy(static_cast<std::size_t>(n));
  for (index_t c = 0; c < n; ++c) x[std::size_t(c)] = to_float(xr[c]), dy[std::size_t(c)] = to_float(dr[c]);
  auto g_of = [&](index_t c) { return a.gamma ? dy[std::size_t(c)] * to_float(a.gamma[c]) : dy[std::size_t(c)]; };
  float mean = 0.0f, c_g = 0.0f;
  if constexpr (Kind == norm_kind::layer) {
    float s = 0.0f, sg = 0.0f;
    for (index_t c = 0; c < n; ++c) s += x[std::size_t(c)], sg += g_of(c);
    mean = s / float(n), c_g = sg / float(n);
  }
  float q = 0.0f, sgd = 0.0f;
  for (index_t c = 0; c < n; ++c) {
    const float d = x[std::size_t(c)] - mean;
    q += d * d, sgd += g_of(c) * d;
  }
  const float rstd = rsqrt_of(q / float(n) + a.eps), c_gx = rstd * sgd / float(n);
  for (index_t c = 0; c < n; ++c) {
    const float g = a.gamma ? dy[std::size_t(c)] * to_float(a.gamma[c]) : dy[std::size_t(c)];
    const float xhat = (x[std::size_t(c)] - mean) * rstd;
    if (acc0) acc0[c] += dy[std::size_t(c)] * xhat;
    if (acc1) acc1[c] += dy[std::size_t(c)];
    out[c] = from_float<T>(rstd * (g - c_g - xhat * c_gx));
  }
}

/// Rows `p.blocks` ranges (two_pass) or blocks (rows_held, rows dealt as the kernel deals them),
/// each range's sums into its partial.
template <norm_kind Kind, class T>
void host_rows(const plan& p, const args<T>& a) {
  const index_t groups = p.shape == norm_backward_shape::rows_held ? p.block / p.group : 0;
  STRATA_PARALLEL_FOR_IF(p.blocks > 1 && a.rows * a.cols > 65536)
  for (index_t b = 0; b < p.blocks; ++b) {
    float* acc0 = a.stats > 0 ? a.partial + b * a.stats * a.cols : nullptr;
    float* acc1 = a.stats > 1 ? acc0 + a.cols : nullptr;
    for (index_t c = 0; acc0 && c < a.cols; ++c) acc0[c] = 0.0f;
    for (index_t c = 0; acc1 && c < a.cols; ++c) acc1[c] = 0.0f;
    if (p.shape == norm_backward_shape::rows_held) {
      for (index_t base = b * groups; base < a.rows; base += p.blocks * groups)
        for (index_t r = base; r < std::min(a.rows, base + groups); ++r) host_row<Kind>(a, r, acc0, acc1);
    } else {
      for (index_t r = b * a.chunk; r < std::min(a.rows, (b + 1) * a.chunk); ++r) host_row<Kind>(a, r, acc0, acc1);
    }
  }
}

template <class T>
void host_finish(const float* partial, index_t partials, int stats, index_t cols, T* dgamma, T* dbeta) {
  for (index_t c = 0; c < cols; ++c) {
    float g = 0.0f, b = 0.0f;
    for (index_t q = 0; q < partials; ++q) {
      g += partial[q * stats * cols + c];
      if (stats > 1) b += partial[(q * stats + 1) * cols + c];
    }
    if (dgamma) dgamma[c] = from_float<T>(g);
    if (dbeta) dbeta[c] = from_float<T>(b);
  }
}

// ---- the entry point ----------------------------------------------------------------------------

/// Bytes [begin, end) a view's rows span.
template <class T>
std::pair<std::uintptr_t, std::uintptr_t> extent_of(const T* data, index_t rows, index_t cols, index_t pitch) {
  const auto b = reinterpret_cast<std::uintptr_t>(data);
  if (!data || rows == 0 || cols == 0) return {b, b};
  return {b, b + (std::size_t(rows - 1) * std::size_t(pitch) + std::size_t(cols)) * sizeof(T)};
}
inline bool overlaps(std::pair<std::uintptr_t, std::uintptr_t> p, std::pair<std::uintptr_t, std::uintptr_t> q) {
  return p.first < p.second && q.first < q.second && p.first < q.second && q.first < p.second;
}

template <norm_kind Kind, class T>
norm_backward_path run(const char* op, matrix_view<const T> x, matrix_view<const T> dy, cuda::std::span<const T> gamma,
                       matrix_view<T> dx, cuda::std::span<T> dgamma, cuda::std::span<T> dbeta, float eps, stream_t stream) {
  const std::string name(op);
  auto shape = [](const auto& v) { return std::to_string(v.rows) + " x " + std::to_string(v.cols); };
  // The views are aggregates anyone can fill: what make_matrix_view checks is checked again.
  auto check_view = [&](const auto& v, const char* role) {
    if (v.rows < 0 || v.cols < 0 || v.pitch < v.cols)
      throw size_error("strata: " + name + ": " + role + " is " + shape(v) + " with pitch " + std::to_string(v.pitch) +
                       " (rows and cols must be >= 0, the pitch at least cols)");
    if (v.rows > 0 && v.cols > 0) {
      if (!v.data) throw size_error("strata: " + name + ": " + role + " is a null pointer with " + std::to_string(v.rows) + " rows");
      const std::size_t elements = checked_add(checked_mul(std::size_t(v.rows - 1), std::size_t(v.pitch), role), std::size_t(v.cols), role);
      (void)checked_extent(v.data, elements, sizeof(*v.data), role);
    }
  };
  check_view(x, "x"), check_view(dy, "dy"), check_view(dx, "dx");
  if (dy.rows != x.rows || dy.cols != x.cols || dx.rows != x.rows || dx.cols != x.cols)
    throw size_error("strata: " + name + ": x is " + shape(x) + ", dy " + shape(dy) + ", dx " + shape(dx) + " (all must agree)");
  if (x.pitch < x.cols || dy.pitch < dy.cols || dx.pitch < dx.cols) throw size_error("strata: " + name + ": a pitch is shorter than a row");
  auto length_ok = [&](std::size_t n) { return n == 0 || index_t(n) == x.cols; };
  if (!length_ok(gamma.size()) || !length_ok(dgamma.size()) || !length_ok(dbeta.size()))
    throw size_error("strata: " + name + ": gamma, dgamma and dbeta hold " + std::to_string(gamma.size()) + ", " + std::to_string(dgamma.size()) +
                     " and " + std::to_string(dbeta.size()) + " elements; rows have " + std::to_string(x.cols) + " (or pass none)");
  // dx may be x or dy, row for row; any other overlap of an output with an input or another
  // output would read what the call has written.
  const auto ex = extent_of(x.data, x.rows, x.cols, x.pitch), ed = extent_of(dy.data, dy.rows, dy.cols, dy.pitch),
             eo = extent_of(dx.data, dx.rows, dx.cols, dx.pitch);
  const auto eg = extent_of(gamma.data(), 1, index_t(gamma.size()), index_t(gamma.size()));
  const auto edg = extent_of(dgamma.data(), 1, index_t(dgamma.size()), index_t(dgamma.size()));
  const auto edb = extent_of(dbeta.data(), 1, index_t(dbeta.size()), index_t(dbeta.size()));
  auto same_rows = [&](const auto& v) { return v.data == dx.data && v.pitch == dx.pitch; };
  if ((overlaps(eo, ex) && !same_rows(x)) || (overlaps(eo, ed) && !same_rows(dy)) || overlaps(eo, eg))
    throw std::invalid_argument("strata: " + name + ": dx overlaps x, dy or gamma other than as the same rows (dx may be x or dy)");
  for (const auto& out : {edg, edb})
    for (const auto& other : {ex, ed, eo, eg})
      if (overlaps(out, other)) throw std::invalid_argument("strata: " + name + ": dgamma or dbeta overlaps x, dy, dx or gamma");
  if (overlaps(edg, edb)) throw std::invalid_argument("strata: " + name + ": dgamma and dbeta overlap");

  std::string (*const type)() = &type_name<T>;
  const operand ox{"x", x.where, x.rows, type, "rows"}, ody{"dy", dy.where, dy.rows, type, "rows"}, odx{"dx", dx.where, dx.rows, type, "rows"};
  const operand og{"gamma", gamma.empty() ? memory_location{} : locate(gamma.data()), index_t(gamma.size()), type, "elements"};
  const operand odg{"dgamma", dgamma.empty() ? memory_location{} : locate(dgamma.data()), index_t(dgamma.size()), type, "elements"};
  const operand odb{"dbeta", dbeta.empty() ? memory_location{} : locate(dbeta.data()), index_t(dbeta.size()), type, "elements"};
  launch_scope scope(op, stream, {ox, ody, odx, og, odg, odb});

  const int stats = !dbeta.empty() ? 2 : !dgamma.empty() ? 1 : 0;
  args<T> a{x.data, dy.data, gamma.empty() ? nullptr : gamma.data(), dx.data, nullptr, nullptr, x.rows, x.cols, x.pitch, dy.pitch,
            dx.pitch, eps, 1, stats, 0};
  const bool vec = whole_units(a);
  norm_backward_path taken{vec ? path::vectorized : path::scalar, norm_backward_shape::rows_held, 0, 0};
  if (x.cols == 0) return taken;
  T* const dg = dgamma.empty() ? nullptr : dgamma.data();
  T* const db = dbeta.empty() ? nullptr : dbeta.data();
  const plan p = planned<Kind, T>(std::max<index_t>(x.rows, 1), x.cols, vec, stats);
  taken.shape = p.shape;
  taken.threads_per_row = p.shape == norm_backward_shape::rows_held ? p.group : p.block;
  taken.partial_sums = x.rows == 0 ? 0 : p.blocks;
  const index_t partials = x.rows == 0 ? 0 : p.blocks;
  if (p.shape == norm_backward_shape::rows_held && p.blocks > index_t(0x7fffffff))
    throw size_error("strata: " + name + ": " + std::to_string(x.rows) + " rows need more than 2^31 - 1 blocks");
  if (p.shape == norm_backward_shape::two_pass && (p.tiles > index_t(0x7fffffff) || p.blocks > 65535))
    throw size_error("strata: " + name + ": rows of " + std::to_string(x.cols) + " elements need more than 2^31 - 1 blocks");
  if (stats > 0 && (x.cols + 31) / 32 > index_t(0x7fffffff))
    throw size_error("strata: " + name + ": " + std::to_string(x.cols) + " columns need more than 2^31 - 1 blocks to sum dgamma");
  // Scratch first: where it cannot be had, nothing has been written.
  const std::size_t partial_bytes = std::size_t(stats) * std::size_t(partials) * std::size_t(x.cols) * sizeof(float);
  const std::size_t stats_bytes = p.shape == norm_backward_shape::two_pass ? std::size_t(x.rows) * 4 * sizeof(float) : 0;
  detail::scratch_block scratch(align_up(partial_bytes, 256) + stats_bytes, stream);
  a.partial = partial_bytes ? scratch.as<float>() : nullptr;
  a.row_stats = stats_bytes ? scratch.as<float>(align_up(partial_bytes, 256)) : nullptr;
  a.group = p.group;
  a.chunk = p.shape == norm_backward_shape::two_pass ? (x.rows + p.blocks - 1) / p.blocks : 0;
#if defined(STRATA_BACKEND_CUDA)
  if (x.rows > 0) {
    if (p.shape == norm_backward_shape::rows_held) {
      const std::size_t bytes = held_shared(p, stats);
      auto go = [&]<bool V>() {
        with_held(p.held, [&]<int E>() {
          if constexpr (!V || E >= lanes<T>) {
            if (p.block > group_block) held_kernel<Kind, T, E, V, max_group><<<unsigned(p.blocks), p.block, bytes, stream>>>(a);
            else held_kernel<Kind, T, E, V, group_block><<<unsigned(p.blocks), p.block, bytes, stream>>>(a);
          }
        });
      };
      if (vec) go.template operator()<true>();
      else go.template operator()<false>();
      check_launch("normalization backward (rows held)");
    } else {
      const unsigned rows_grid = unsigned(std::min<index_t>(x.rows, index_t(current_device_shape().sms) * 8));
      if (vec) stats_kernel<Kind, T, true><<<rows_grid, pass_block, 0, stream>>>(a);
      else stats_kernel<Kind, T, false><<<rows_grid, pass_block, 0, stream>>>(a);
      check_launch("normalization backward (row statistics)");
      const dim3 grid(unsigned(p.tiles), unsigned(p.blocks));
      if (vec) columns_kernel<Kind, T, true><<<grid, pass_block, 0, stream>>>(a);
      else columns_kernel<Kind, T, false><<<grid, pass_block, 0, stream>>>(a);
      check_launch("normalization backward (dx and column sums)");
    }
  }
  if (stats > 0) {
    const index_t blocks = (x.cols + 31) / 32;
    finish_kernel<T><<<unsigned(blocks), dim3(32, finish_rows), 0, stream>>>(a.partial, partials, stats, x.cols, dg, db);
    check_launch("normalization backward (dgamma and dbeta)");
  }
#else
  (void)stream;
  if (x.rows > 0) host_rows<Kind>(p, a);
  if (stats > 0) host_finish<T>(a.partial, partials, stats, x.cols, dg, db);
#endif
  return taken;
}

}  // namespace detail::norm_bwd

/// The backward of layer_norm: from x, the output's gradient dy and gamma (x.cols elements, or
/// empty: 1), writes dx = rstd * (dy * gamma - mean(dy * gamma) - xhat * mean(dy * gamma * xhat))
/// with xhat = (x - mean) * rstd, and, where given (x.cols elements each), dgamma = sum over rows
/// of dy * xhat and dbeta = sum over rows of dy, deterministically. x, dy and dx have one shape
/// (any pitch); dx may be x or dy. eps as the forward's. Stream ordered; rows == 0 writes zeros
/// to dgamma and dbeta. Returns the path taken.
template <class T>
norm_backward_path layer_norm_backward(std::type_identity_t<matrix_view<const T>> x, std::type_identity_t<matrix_view<const T>> dy,
                                       std::type_identity_t<cuda::std::span<const T>> gamma, matrix_view<T> dx,
                                       std::type_identity_t<cuda::std::span<T>> dgamma, std::type_identity_t<cuda::std::span<T>> dbeta,
                                       float eps = 1e-5f, stream_t stream = {}) {
  return detail::norm_bwd::run<norm_kind::layer, T>("strata::layer_norm_backward", x, dy, gamma, dx, dgamma, dbeta, eps, stream);
}

/// The backward of rms_norm: dx = rstd * (dy * gamma - xhat * mean(dy * gamma * xhat)) with
/// xhat = x * rstd, and dgamma = sum over rows of dy * xhat where given.
template <class T>
norm_backward_path rms_norm_backward(std::type_identity_t<matrix_view<const T>> x, std::type_identity_t<matrix_view<const T>> dy,
                                     std::type_identity_t<cuda::std::span<const T>> gamma, matrix_view<T> dx,
                                     std::type_identity_t<cuda::std::span<T>> dgamma, float eps = 1e-6f, stream_t stream = {}) {
  return detail::norm_bwd::run<norm_kind::rms, T>("strata::rms_norm_backward", x, dy, gamma, dx, dgamma, cuda::std::span<T>{}, eps, stream);
}

}  // namespace strata
