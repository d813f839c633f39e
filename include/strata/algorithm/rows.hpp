// SPDX-License-Identifier: Apache-2.0
// Row primitives for 2-D data (matrix_view): a row is read from device memory once, in units of 16
// bytes (or of one element, for rows that do not start on 16-byte boundaries) held in registers
// as loaded, by one warp (short rows) or one block (long rows); the group reduces over the row
// with warp shuffles (and one barrier across a block's warps). Rows of any length: elements past
// the row's end read as zero and are never counted; a row's last, partial unit is read and written
// whole only where the rows own their padding (strata's matrix), element by element otherwise.
// Where the group's units cover the row exactly, `packed<T, VPT, A, true>` drops those checks.
#pragma once

#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace strata::rows {

/// Elements of T in one access of A bytes.
template <class T, int A = 16>
inline constexpr int lanes = int(A / sizeof(T));

/// The floats of one 16-byte vector of T. On the device, bf16 and fp16 unpack two elements per
/// 32-bit word with register operations (no round trip through a local array).
template <class T>
STRATA_HD inline void unpack_floats(const vec::word16& w, float (&out)[lanes<T>]) {
#if defined(__CUDA_ARCH__)
  constexpr bool registers = std::is_same_v<T, float> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>;
#else
  constexpr bool registers = false;
#endif
  if constexpr (registers) {
#if defined(__CUDA_ARCH__)
    const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
    STRATA_UNROLL
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        out[i] = __uint_as_float(u[i]);
      } else if constexpr (std::is_same_v<T, bfloat16>) {
        out[2 * i] = __uint_as_float(u[i] << 16), out[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
      } else {
        const float2 f = __half22float2(__halves2half2(__ushort_as_half((unsigned short)(u[i] & 0xffffu)),
                                                       __ushort_as_half((unsigned short)(u[i] >> 16))));
        out[2 * i] = f.x, out[2 * i + 1] = f.y;
      }
    }
#endif
  } else {
    T e[lanes<T>];
    std::memcpy(static_cast<void*>(e), &w, sizeof e);
    STRATA_UNROLL
    for (int i = 0; i < lanes<T>; ++i) out[i] = to_float(e[i]);
  }
}

/// One 16-byte vector of T from floats (round to nearest even for bf16 and fp16).
template <class T>
STRATA_HD inline vec::word16 pack_floats(const float (&in)[lanes<T>]) {
  vec::word16 w;
#if defined(__CUDA_ARCH__)
  constexpr bool registers = std::is_same_v<T, bfloat16> || std::is_same_v<T, half>;
#else
  constexpr bool registers = false;
#endif
  if constexpr (registers) {
#if defined(__CUDA_ARCH__)
    std::uint32_t u[4];
    STRATA_UNROLL
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, bfloat16>)
        u[i] = std::uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(in[2 * i]))) |
               std::uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(in[2 * i + 1]))) << 16;
      else
        u[i] = std::uint32_t(__half_as_ushort(__float2half_rn(in[2 * i]))) |
               std::uint32_t(__half_as_ushort(__float2half_rn(in[2 * i + 1]))) << 16;
    }
    w.x = u[0], w.y = u[1], w.z = u[2], w.w = u[3];
#endif
  } else {
    T e[lanes<T>];
    STRATA_UNROLL
    for (int i = 0; i < lanes<T>; ++i) e[i] = from_float<T>(in[i]);
    std::memcpy(&w, static_cast<const void*>(e), sizeof e);
  }
  return w;
}

/// The floats of one unit of A bytes (16: a vector; otherwise a single element).
template <class T, int A>
STRATA_HD inline void unpack_unit(const vec::word_t<A>& w, float (&out)[lanes<T, A>]) {
  if constexpr (A == 16) {
    unpack_floats<T>(w, out);
  } else {
    T e[lanes<T, A>];
    std::memcpy(static_cast<void*>(e), &w, sizeof e);
    STRATA_UNROLL
    for (int i = 0; i < lanes<T, A>; ++i) out[i] = to_float(e[i]);
  }
}
template <class T, int A>
STRATA_HD inline vec::word_t<A> pack_unit(const float (&in)[lanes<T, A>]) {
  if constexpr (A == 16) {
    return pack_floats<T>(in);
  } else {
    T e[lanes<T, A>];
    STRATA_UNROLL
    for (int i = 0; i < lanes<T, A>; ++i) e[i] = from_float<T>(in[i]);
    vec::word_t<A> w;
    std::memcpy(&w, static_cast<const void*>(e), sizeof e);
    return w;
  }
}

/// Unit j of a row of `cols` elements (units of A bytes): one access when it lies inside the row
/// or the row owns its padding; otherwise its elements inside the row one by one, the rest zero.
template <class T, int A>
STRATA_HD inline vec::word_t<A> load_unit(const T* row, index_t cols, index_t j, bool whole_tail) {
  constexpr int L = lanes<T, A>;
  const index_t left = cols - j * L;
  if (left >= L || whole_tail) return vec::load<A>(row + j * L);
  T e[L];
  STRATA_UNROLL
  for (int i = 0; i < L; ++i) e[i] = i < left ? row[j * L + i] : from_float<T>(0.0f);
  vec::word_t<A> w;
  std::memcpy(&w, static_cast<const void*>(e), sizeof e);
  return w;
}
/// Writes unit j of a row from floats: elements past `cols` go out as zeros where the row owns its
/// padding (one access), and are not written at all where it does not.
template <class T, int A>
STRATA_HD inline void store_unit(T* row, index_t cols, index_t j, const float (&v)[lanes<T, A>], bool whole_tail) {
  constexpr int L = lanes<T, A>;
  const index_t left = cols - j * L;
  if (left >= L || whole_tail) {
    float f[L];
    STRATA_UNROLL
    for (int i = 0; i < L; ++i) f[i] = i < left ? v[i] : 0.0f;
    vec::store<A>(row + j * L, pack_unit<T, A>(f));
    return;
  }
  STRATA_UNROLL
  for (int i = 0; i < L; ++i)
    if (i < left) row[j * L + i] = from_float<T>(v[i]);
}

/// The part of a row one thread holds, as it lies in memory: its k-th unit of A bytes is unit
/// (first + k * step) of the row. Every load is issued before any value is used; held packed, a
/// bf16 or fp16 row takes half the registers it would take as floats.
/// Exact: the caller guarantees cols == VPT * step * width (every unit lies wholly inside the
/// row), so no element is masked.
template <class T, int VPT, int A = 16, bool Exact = false>
struct packed {
  static constexpr int width = lanes<T, A>;
  vec::word_t<A> w[VPT];

  /// Elements of unit k inside a row of `cols` (0 .. width; units past the row hold none).
  STRATA_HD static int valid(index_t cols, int first, int step, int k) {
    if constexpr (Exact) return (void)cols, (void)first, (void)step, (void)k, width;
    const index_t left = cols - (index_t(first) + index_t(k) * step) * width;
    return left <= 0 ? 0 : left >= width ? width : int(left);
  }
  /// Loads every unit that starts inside the row (the others are left as they were). The units
  /// that move whole are loaded first, each a predicated 16-byte access with nothing between them,
  /// so all are in flight at once; a partial last unit follows element by element.
  STRATA_HD void load(const T* row, index_t cols, int first, int step, bool whole_tail) {
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if constexpr (Exact) w[k] = vec::load<A>(row + j * width);
      else if (j * width + width <= cols || (whole_tail && j * width < cols)) w[k] = vec::load<A>(row + j * width);
    }
    if constexpr (!Exact) {
      if (!whole_tail) {
        STRATA_UNROLL
        for (int k = 0; k < VPT; ++k) {
          const index_t j = index_t(first) + index_t(k) * step, left = cols - j * width;
          if (left > 0 && left < width) w[k] = load_unit<T, A>(row, cols, j, false);
        }
      }
    }
  }
  /// Unit k as floats, elements past the row's end as 0.
  STRATA_HD void floats(index_t cols, int first, int step, int k, float (&out)[width]) const {
    unpack_unit<T, A>(w[k], out);
    const int n = valid(cols, first, step, k);
    if (n < width) {
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) out[i] = i < n ? out[i] : 0.0f;
    }
  }
  /// Sum of the elements inside the row.
  STRATA_HD float sum(index_t cols, int first, int step) const {
    float s = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      float f[width];
      floats(cols, first, step, k, f);
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) s += f[i];
    }
    return s;
  }
  /// Sum of (x - c)^2 over the elements inside the row.
  STRATA_HD float sum_squares(index_t cols, int first, int step, float c) const {
    float s = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      float f[width];
      unpack_unit<T, A>(w[k], f);
      const int n = valid(cols, first, step, k);
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) s += i < n ? (f[i] - c) * (f[i] - c) : 0.0f;
    }
    return s;
  }
};

#if defined(STRATA_BACKEND_CUDA)
/// Sum over a warp that every lane receives, bit for bit the same in every lane (each butterfly
/// step adds the same two values in every lane pair).
__device__ inline float warp_sum(float x) {
  STRATA_UNROLL
  for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

/// One row per block of blockDim.x threads (a multiple of 32, at most MaxThreads): block b takes
/// row first_row() == b. sum() is a block-wide reduction every thread receives, with one barrier:
/// each warp's total goes to shared slot `slot`, and every thread adds the totals in the same
/// order. Two slots let reductions follow each other without a second barrier: consecutive
/// reductions alternate slots.
template <int MaxThreads>
struct block_group {
  static constexpr int max_threads = MaxThreads, max_warps = MaxThreads / 32;
  static constexpr index_t rows_per_block = 1;
  struct storage {
    float partial[2][max_warps];
  };
  __device__ static int rank() { return int(threadIdx.x); }
  __device__ static int size() { return int(blockDim.x); }
  __device__ static index_t first_row() { return blockIdx.x; }
  __device__ static float sum(storage& s, int slot, float x) {
    x = warp_sum(x);
    if (threadIdx.x % 32 == 0) s.partial[slot][threadIdx.x / 32] = x;
    __syncthreads();
    float t = 0;
    const int warps = int(blockDim.x / 32);
    for (int i = 0; i < warps; ++i) t += s.partial[slot][i];
    return t;
  }
};

/// One row per warp, Warps warps per block; sum() is a warp-wide reduction every lane receives.
template <int Warps>
struct warp_group {
  struct storage {};
  static constexpr int max_threads = 32 * Warps;
  static constexpr index_t rows_per_block = Warps;
  __device__ static int rank() { return int(threadIdx.x % 32); }
  __device__ static int size() { return 32; }
  __device__ static index_t first_row() { return index_t(blockIdx.x) * Warps + threadIdx.x / 32; }
  __device__ static float sum(storage&, int, float x) { return warp_sum(x); }
};
#endif

}  // namespace strata::rows
