// Row primitives for padded 2-D data (matrix<T>): a row is read from device memory once, as 16-byte
// vectors held in registers (packed as loaded, or as floats), by one warp (short rows) or one block
// (long rows); the group reduces over the row with warp shuffles (and one barrier across a block's
// warps). Rows of any length: elements past the row's end read as zero and are never counted or
// written back as data; where the group's vectors cover the row exactly, `packed<T, VPT, true>`
// drops those checks.
#pragma once

#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>

#include <cstdint>

namespace strata::rows {

template <class T>
inline constexpr int lanes = int(vector_bytes / sizeof(T));

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

/// The part of a row one thread holds, as it lies in memory: its k-th 16-byte vector is vector
/// (first + k * step) of the row. Every load is issued before any value is used; held packed, a
/// bf16 or fp16 row takes half the registers it would take as floats.
/// Exact: the caller guarantees cols == VPT * step * width (every vector lies wholly inside the
/// row), so no element is masked: on the H200 that took bf16 rows of 16384 from 0.75 to 0.85 of a
/// copy (bench/results/nvidia-h200-2026-11-22-experiments.md, run 8).
template <class T, int VPT, bool Exact = false>
struct packed {
  static constexpr int width = lanes<T>;
  vec::word16 w[VPT];

  /// Elements of vector k inside a row of `cols` (0 .. width; vectors past the row hold none).
  STRATA_HD static int valid(index_t cols, int first, int step, int k) {
    if constexpr (Exact) return (void)cols, (void)first, (void)step, (void)k, width;
    const index_t left = cols - (index_t(first) + index_t(k) * step) * width;
    return left <= 0 ? 0 : left >= width ? width : int(left);
  }
  /// Loads every vector that starts inside the row (the others are left as they were).
  STRATA_HD void load(const T* row, index_t cols, int first, int step) {
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if (Exact || j * width < cols) w[k] = vec::load<16>(row + j * width);
    }
  }
  /// Vector k as floats, elements past the row's end as 0.
  STRATA_HD void floats(index_t cols, int first, int step, int k, float (&out)[width]) const {
    unpack_floats<T>(w[k], out);
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
      unpack_floats<T>(w[k], f);
      const int n = valid(cols, first, step, k);
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) s += i < n ? (f[i] - c) * (f[i] - c) : 0.0f;
    }
    return s;
  }
};

/// The part of a row one thread holds, as floats: its k-th vector is vector (first + k * step) of the row.
template <class T, int VPT>
struct fragment {
  static constexpr int width = lanes<T>;
  float v[VPT][width];

  /// Writes vector j of a row; elements past `cols` are written as 0 (they lie in the pitch padding).
  STRATA_HD static void store_vector(T* row, index_t cols, index_t j, const float (&in)[width]) {
    float f[width];
    STRATA_UNROLL
    for (int i = 0; i < width; ++i) f[i] = j * width + i < cols ? in[i] : 0.0f;
    vec::store<16>(row + j * width, pack_floats<T>(f));
  }

  /// The floats of a packed part of a row; elements past `cols` become 0.
  STRATA_HD void unpack(const packed<T, VPT>& p, index_t cols, int first, int step) {
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) p.floats(cols, first, step, k, v[k]);
  }
  /// Loads every vector that starts inside the row; elements past `cols` become 0.
  STRATA_HD void load(const T* row, index_t cols, int first, int step) {
    packed<T, VPT> p;
    p.load(row, cols, first, step);
    unpack(p, cols, first, step);
  }
  /// Stores every vector that starts inside the row (elements past `cols` go to the pitch padding as 0).
  STRATA_HD void store(T* row, index_t cols, int first, int step) const {
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if (j * width < cols) store_vector(row, cols, j, v[k]);
    }
  }
  STRATA_HD float sum() const {
    float s = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k)
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) s += v[k][i];
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

/// One row per block of Threads threads: block b takes row first_row() == b.
/// sum() is a block-wide reduction every thread receives, with one barrier: each warp's total goes
/// to shared slot `slot`, and every thread adds the totals in the same order. Two slots let
/// reductions follow each other without a second barrier: consecutive reductions alternate slots.
template <int Threads>
struct block_group {
  static constexpr int threads = Threads, warps = Threads / 32;
  static constexpr int group_size = Threads;  // threads sharing a row
  struct storage {
    float partial[2][warps];
  };
  __device__ static int rank() { return int(threadIdx.x); }
  __device__ static int size() { return group_size; }
  __device__ static index_t first_row() { return blockIdx.x; }
  static constexpr index_t rows_per_block = 1;
  __device__ static float sum(storage& s, int slot, float x) {
    x = warp_sum(x);
    if (threadIdx.x % 32 == 0) s.partial[slot][threadIdx.x / 32] = x;
    __syncthreads();
    float t = 0;
    STRATA_UNROLL
    for (int i = 0; i < warps; ++i) t += s.partial[slot][i];
    return t;
  }
};

/// One row per warp, Warps warps per block; sum() is a warp-wide reduction every lane receives.
template <int Warps>
struct warp_group {
  struct storage {};
  static constexpr int threads = 32 * Warps;
  static constexpr int group_size = 32;
  __device__ static int rank() { return int(threadIdx.x % 32); }
  __device__ static int size() { return group_size; }
  __device__ static index_t first_row() { return index_t(blockIdx.x) * Warps + threadIdx.x / 32; }
  static constexpr index_t rows_per_block = Warps;
  __device__ static float sum(storage&, int, float x) { return warp_sum(x); }
};

/// Calls launch.template operator()<Group, VPT>() with a group and vectors per thread that hold a
/// row of `cols` elements of T in registers. Measured on the H200 with layer norm, one row per
/// group and as many groups resident as registers allow (bench/results/nvidia-h200-2026-11-22-
/// experiments.md, runs 7 and 8): four vectors per thread on small blocks beat two per thread on
/// large ones (fp32 x 4096: 256 x 4 at 0.93-0.97 of a copy, 512 x 2 at 0.90-0.94), and 1024-thread
/// blocks lose (fp32 x 16384: 512 x 8 at 0.90-0.92, 1024 x 4 at 0.79-0.81).
template <class T, class Launch>
void dispatch_row_shape(index_t cols, Launch&& launch) {
  const index_t v = (cols + lanes<T> - 1) / lanes<T>;
  if (v <= 32) return launch.template operator()<warp_group<4>, 1>();
  if (v <= 64) return launch.template operator()<warp_group<4>, 2>();
  if (v <= 128) return launch.template operator()<warp_group<4>, 4>();
  if (v <= 64 * 4) return launch.template operator()<block_group<64>, 4>();
  if (v <= 128 * 4) return launch.template operator()<block_group<128>, 4>();
  if (v <= 256 * 4) return launch.template operator()<block_group<256>, 4>();
  if (v <= 512 * 4) return launch.template operator()<block_group<512>, 4>();
  if (v <= 512 * 8) return launch.template operator()<block_group<512>, 8>();
  if (v <= 1024 * 8) return launch.template operator()<block_group<1024>, 8>();
  throw size_error("strata: rows of " + std::to_string(cols) + " elements are longer than a block can hold (" +
                   std::to_string(1024 * 8 * lanes<T>) + ")");
}
#endif

}  // namespace strata::rows
