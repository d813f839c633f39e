// Row primitives for padded 2-D data (matrix<T>): a row is read from device memory once, as 16-byte
// vectors held in registers as floats, by one warp (short rows) or one block (long rows); the
// group reduces over the row with CUB's warp or block reduction. Rows of any length: elements
// past the row's end read as zero and are never counted or written back as data.
#pragma once

#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#endif

namespace strata::rows {

template <class T>
inline constexpr int lanes = int(vector_bytes / sizeof(T));

/// The part of a row one thread holds: its k-th vector is vector (first + k * step) of the row.
template <class T, int VPT>
struct fragment {
  static constexpr int width = lanes<T>;
  float v[VPT][width];

  STRATA_HD static bool in_row(index_t cols, int first, int step, int k, int e) {
    return (index_t(first) + index_t(k) * step) * width + e < cols;
  }
  /// Vector j of a row (elements j*width ...) as floats; elements past `cols` read as 0.
  STRATA_HD static void load_vector(const T* row, index_t cols, index_t j, float (&out)[width]) {
    T e[width];
    vec::word16 w = vec::load<16>(row + j * width);
    std::memcpy(static_cast<void*>(e), &w, sizeof e);
    STRATA_UNROLL
    for (int i = 0; i < width; ++i) out[i] = j * width + i < cols ? to_float(e[i]) : 0.0f;
  }
  /// Writes vector j of a row; elements past `cols` are written as 0 (they lie in the pitch padding).
  STRATA_HD static void store_vector(T* row, index_t cols, index_t j, const float (&in)[width]) {
    T e[width];
    STRATA_UNROLL
    for (int i = 0; i < width; ++i) e[i] = from_float<T>(j * width + i < cols ? in[i] : 0.0f);
    vec::word16 w;
    std::memcpy(&w, static_cast<const void*>(e), sizeof e);
    vec::store<16>(row + j * width, w);
  }

  /// Loads every vector that starts inside the row; elements past `cols` become 0.
  STRATA_HD void load(const T* row, index_t cols, int first, int step) {
    vec::word16 w[VPT];
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if (j * width < cols) w[k] = vec::load<16>(row + j * width);
    }
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      T e[width];
      std::memcpy(static_cast<void*>(e), &w[k], sizeof e);
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) v[k][i] = in_row(cols, first, step, k, i) ? to_float(e[i]) : 0.0f;
    }
  }
  /// Stores every vector that starts inside the row (elements past `cols` go to the pitch padding as 0).
  STRATA_HD void store(T* row, index_t cols, int first, int step) const {
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if (j * width >= cols) continue;
      T e[width];
      STRATA_UNROLL
      for (int i = 0; i < width; ++i) e[i] = from_float<T>(in_row(cols, first, step, k, i) ? v[k][i] : 0.0f);
      vec::word16 w;
      std::memcpy(&w, static_cast<const void*>(e), sizeof e);
      vec::store<16>(row + j * width, w);
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
/// One row per block of Threads threads; sum() is a block-wide reduction every thread receives.
template <int Threads>
struct block_group {
  using reduce = cub::BlockReduce<float, Threads>;
  struct storage {
    typename reduce::TempStorage temp;
    float result;
  };
  static constexpr int threads = Threads;
  __device__ static int rank() { return int(threadIdx.x); }
  __device__ static int size() { return Threads; }
  __device__ static index_t first_row() { return blockIdx.x; }
  __device__ static index_t row_stride() { return gridDim.x; }
  static index_t blocks(index_t rows) { return rows; }
  __device__ static float sum(storage& s, float x) {
    float t = reduce(s.temp).Sum(x);
    if (threadIdx.x == 0) s.result = t;
    __syncthreads();
    t = s.result;
    __syncthreads();  // temp and result are reused by the next reduction
    return t;
  }
};

/// One row per warp, Warps warps per block; sum() is a warp-wide reduction every lane receives.
template <int Warps>
struct warp_group {
  using reduce = cub::WarpReduce<float>;
  struct storage {
    typename reduce::TempStorage temp[Warps];
  };
  static constexpr int threads = 32 * Warps;
  __device__ static int rank() { return int(threadIdx.x % 32); }
  __device__ static int size() { return 32; }
  __device__ static index_t first_row() { return index_t(blockIdx.x) * Warps + threadIdx.x / 32; }
  __device__ static index_t row_stride() { return index_t(gridDim.x) * Warps; }
  static index_t blocks(index_t rows) { return (rows + Warps - 1) / Warps; }
  __device__ static float sum(storage& s, float x) {
    float t = reduce(s.temp[threadIdx.x / 32]).Sum(x);
    return __shfl_sync(0xffffffffu, t, 0);
  }
};

/// Calls launch.template operator()<Group, VPT>() with the narrowest group and the fewest vectors
/// per thread that hold a row of `cols` elements of T in registers.
template <class T, class Launch>
void dispatch_row_shape(index_t cols, Launch&& launch) {
  const index_t v = (cols + lanes<T> - 1) / lanes<T>;
  // Two vectors per thread where a block can: few registers per thread keep many rows in flight.
  if (v <= 32) return launch.template operator()<warp_group<4>, 1>();
  if (v <= 64) return launch.template operator()<warp_group<4>, 2>();
  if (v <= 128) return launch.template operator()<warp_group<4>, 4>();
  if (v <= 128 * 2) return launch.template operator()<block_group<128>, 2>();
  if (v <= 256 * 2) return launch.template operator()<block_group<256>, 2>();
  if (v <= 512 * 2) return launch.template operator()<block_group<512>, 2>();
  if (v <= 1024 * 2) return launch.template operator()<block_group<1024>, 2>();
  if (v <= 1024 * 4) return launch.template operator()<block_group<1024>, 4>();
  if (v <= 1024 * 8) return launch.template operator()<block_group<1024>, 8>();
  throw size_error("strata: rows of " + std::to_string(cols) + " elements are longer than a block can hold (" +
                   std::to_string(1024 * 8 * lanes<T>) + ")");
}
#endif

}  // namespace strata::rows
