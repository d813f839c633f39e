// Layer normalization over the rows of a matrix, built on strata's row primitive: each row read
// once into registers, mean and variance (two passes over the registers, so it is stable) by a warp
// or block reduction, y = (x - mean) / sqrt(var + eps) * gamma + beta. fp32, bf16 and fp16 storage,
// fp32 arithmetic.
#pragma once

#include <strata/memory/device.hpp>
#include <strata/algorithm/rows.hpp>
#include <strata/container/matrix.hpp>

#include <cmath>
#include <string>

namespace strata_examples {

using strata::index_t;
using strata::matrix_view;

namespace detail {
#if defined(STRATA_BACKEND_CUDA)
// One row per group and a grid of all rows: the GPU keeps as many rows in flight as registers allow
// (on the H200 this beat groups that loop over rows loading the next row ahead, 0.97 against 0.92
// of a copy for 65536 x 4096 fp32: bench/results/nvidia-h200-2026-11-22-experiments.md, run 7).
// No loop over rows: a loop kept its loop-carried state in registers (bf16 128 x 4: 64 registers
// with it, 61 without), which can cost resident rows. Rows are held packed (as loaded) and unpacked for
// each pass. Exact: the row fills every thread's vectors (no element masked). Early: gamma and beta
// are loaded with the row, before the reductions; otherwise after them, one vector ahead of the
// output vector that needs them (fewer registers).
template <class Group, int VPT, bool Exact, bool Early, class T>
__global__ void __launch_bounds__(Group::threads) layer_norm_kernel(matrix_view<const T> x, matrix_view<const T> gamma,
                                                                    matrix_view<const T> beta, matrix_view<T> y, float eps) {
  __shared__ typename Group::storage s;
  using packed = strata::rows::packed<T, VPT, Exact>;
  constexpr int width = packed::width;
  const int first = Group::rank(), step = Group::size();
  const index_t cols = x.cols, r = Group::first_row();
  if (r >= x.rows) return;  // a warp group's block past the last row (whole warps: no barrier is skipped)
  const float inv_n = 1.0f / float(cols);
  packed cur, gam, bet;
  cur.load(x.row(r), cols, first, step);
  if constexpr (Early) gam.load(gamma.data, cols, first, step), bet.load(beta.data, cols, first, step);
  const float mean = Group::sum(s, 0, cur.sum(cols, first, step)) * inv_n;
  const float rstd = rsqrtf(Group::sum(s, 1, cur.sum_squares(cols, first, step, mean)) * inv_n + eps);
  T* out = y.row(r);
  strata::vec::word16 g = {}, b = {};
  if (!Early && packed::valid(cols, first, step, 0) > 0) {
    g = strata::vec::load<16>(gamma.data + index_t(first) * width);
    b = strata::vec::load<16>(beta.data + index_t(first) * width);
  }
  STRATA_UNROLL
  for (int k = 0; k < VPT; ++k) {
    const int n = packed::valid(cols, first, step, k);
    if (n == 0) break;  // vectors past the row's end (and all after them)
    const index_t j = index_t(first) + index_t(k) * step;
    strata::vec::word16 gn = {}, bn = {};  // late: the next vector's gamma and beta, loaded now
    if constexpr (Early) {
      g = gam.w[k], b = bet.w[k];
    } else if (k + 1 < VPT && packed::valid(cols, first, step, k + 1) > 0) {
      gn = strata::vec::load<16>(gamma.data + (j + step) * width);
      bn = strata::vec::load<16>(beta.data + (j + step) * width);
    }
    float v[width], gf[width], bf[width];
    cur.floats(cols, first, step, k, v);
    strata::rows::unpack_floats<T>(g, gf);
    strata::rows::unpack_floats<T>(b, bf);
    STRATA_UNROLL
    for (int e = 0; e < width; ++e) v[e] = e < n ? (v[e] - mean) * rstd * gf[e] + bf[e] : 0.0f;  // pitch padding gets 0
    strata::vec::store<16>(out + j * width, strata::rows::pack_floats<T>(v));
    if constexpr (!Early) g = gn, b = bn;
  }
}

/// Whether to load gamma and beta with the row: only for block groups, and only where that keeps
/// at least 3/4 of the threads per SM the late kernel keeps resident. Measured on the H200 (run 12
/// of the experiments file): bf16 128 x 4 (80 against 61 registers; 6 against 8 blocks per SM)
/// 0.91 / 0.97-0.98 of a copy against 0.90 / 0.96 for 16384 / 65536 x 4096; where the early loads
/// cost more residency they lost (bf16 512 x 4: 114 registers, one block per SM, 0.59 against
/// 0.87; fp32 256 x 4: 64 against 40 registers, no change). Decided once per device.
template <class Group, int VPT, bool Exact, class T>
bool gamma_beta_early() {
  if constexpr (Group::rows_per_block != 1) {
    return false;
  } else {
    static thread_local int device = -1;
    static thread_local bool early = false;
    int dev = 0;
    strata::detail::cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev != device) {
      auto* with = &layer_norm_kernel<Group, VPT, Exact, true, T>;
      auto* without = &layer_norm_kernel<Group, VPT, Exact, false, T>;
      int blocks_with = 0, blocks_without = 0;
      cudaFuncAttributes a_with{}, a_without{};
      const char* what = "layer_norm: kernel attributes";
      strata::detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_with, with, Group::threads, 0), what);
      strata::detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_without, without, Group::threads, 0), what);
      strata::detail::cuda_check(cudaFuncGetAttributes(&a_with, with), what);
      strata::detail::cuda_check(cudaFuncGetAttributes(&a_without, without), what);
      // ... and never where the early kernel spills more (1024 x 8 does: 520 bytes of local memory).
      early = 4 * blocks_with >= 3 * blocks_without && a_with.localSizeBytes <= a_without.localSizeBytes;
      device = dev;
    }
    return early;
  }
}

/// Launches layer_norm_kernel<Group, VPT> with one group per row.
template <class Group, int VPT, class T>
void launch_layer_norm(matrix_view<const T> x, matrix_view<const T> gamma, matrix_view<const T> beta, matrix_view<T> y,
                       float eps, strata::stream_t stream) {
  const index_t blocks = (x.rows + Group::rows_per_block - 1) / Group::rows_per_block;
  if (blocks > index_t(0x7fffffff))
    throw strata::size_error("strata layer_norm: " + std::to_string(x.rows) + " rows need more than 2^31 - 1 blocks");
  auto pick = [&]<bool Exact>() {
    if constexpr (Group::rows_per_block == 1)
      if (gamma_beta_early<Group, VPT, Exact, T>()) return &layer_norm_kernel<Group, VPT, Exact, true, T>;
    return &layer_norm_kernel<Group, VPT, Exact, false, T>;
  };
  const bool exact = x.cols == index_t(Group::group_size) * VPT * strata::rows::lanes<T>;
  auto* kernel = exact ? pick.template operator()<true>() : pick.template operator()<false>();
  kernel<<<unsigned(blocks), Group::threads, 0, stream>>>(x, gamma, beta, y, eps);
  strata::detail::check_launch("layer_norm kernel");
}
#endif
}  // namespace detail

/// y = layer_norm(x) * gamma + beta, row by row. gamma and beta are 1 x cols matrices (so they are
/// padded for vector reads too). Stream ordered on the CUDA backend.
template <class T>
void layer_norm(matrix_view<const T> x, matrix_view<const T> gamma, matrix_view<const T> beta, matrix_view<T> y, float eps,
                strata::stream_t stream = {}) {
  if (y.rows != x.rows || y.cols != x.cols)
    throw strata::size_error("strata layer_norm: output is " + std::to_string(y.rows) + " x " + std::to_string(y.cols) +
                             ", input " + std::to_string(x.rows) + " x " + std::to_string(x.cols));
  if (gamma.cols != x.cols || beta.cols != x.cols || gamma.rows < 1 || beta.rows < 1)
    throw strata::size_error("strata layer_norm: gamma and beta need " + std::to_string(x.cols) + " columns");
  if (x.rows == 0 || x.cols == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  strata::rows::dispatch_row_shape<T>(x.cols, [&]<class Group, int VPT>() {
    detail::launch_layer_norm<Group, VPT, T>(x, gamma, beta, y, eps, stream);
  });
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(x.rows > 16)
  for (index_t r = 0; r < x.rows; ++r) {
    const T* in = x.row(r);
    float mean = 0, dev = 0;
    for (index_t c = 0; c < x.cols; ++c) mean += strata::to_float(in[c]);
    mean /= float(x.cols);
    for (index_t c = 0; c < x.cols; ++c) dev += (strata::to_float(in[c]) - mean) * (strata::to_float(in[c]) - mean);
    const float rstd = 1.0f / std::sqrt(dev / float(x.cols) + eps);
    for (index_t c = 0; c < x.cols; ++c)
      y.row(r)[c] = strata::from_float<T>((strata::to_float(in[c]) - mean) * rstd * strata::to_float(gamma.data[c]) +
                                          strata::to_float(beta.data[c]));
  }
#endif
}

}  // namespace strata_examples
