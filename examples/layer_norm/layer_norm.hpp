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
// with it, 48 without), which cost resident rows. Rows are held packed (as loaded) and unpacked for
// each pass; gamma and beta come from L1/L2, one vector ahead of the output vector that needs them.
// Exact: the row fills every thread's vectors (no element masked).
template <class Group, int VPT, bool Exact, class T>
__global__ void __launch_bounds__(Group::threads) layer_norm_kernel(matrix_view<const T> x, matrix_view<const T> gamma,
                                                                    matrix_view<const T> beta, matrix_view<T> y, float eps) {
  __shared__ typename Group::storage s;
  using packed = strata::rows::packed<T, VPT, Exact>;
  constexpr int width = packed::width;
  const int first = Group::rank(), step = Group::size();
  const index_t cols = x.cols, r = Group::first_row();
  if (r >= x.rows) return;  // a warp group's block past the last row (whole warps: no barrier is skipped)
  const float inv_n = 1.0f / float(cols);
  packed cur;
  cur.load(x.row(r), cols, first, step);
  const float mean = Group::sum(s, 0, cur.sum(cols, first, step)) * inv_n;
  const float rstd = rsqrtf(Group::sum(s, 1, cur.sum_squares(cols, first, step, mean)) * inv_n + eps);
  T* out = y.row(r);
  strata::vec::word16 g = {}, b = {};
  if (packed::valid(cols, first, step, 0) > 0) {
    g = strata::vec::load<16>(gamma.data + index_t(first) * width);
    b = strata::vec::load<16>(beta.data + index_t(first) * width);
  }
  STRATA_UNROLL
  for (int k = 0; k < VPT; ++k) {
    const int n = packed::valid(cols, first, step, k);
    if (n == 0) break;  // vectors past the row's end (and all after them)
    const index_t j = index_t(first) + index_t(k) * step;
    strata::vec::word16 gn = {}, bn = {};
    if (k + 1 < VPT && packed::valid(cols, first, step, k + 1) > 0) {
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
    g = gn, b = bn;
  }
}

/// Launches layer_norm_kernel<Group, VPT> with one group per row.
template <class Group, int VPT, class T>
void launch_layer_norm(matrix_view<const T> x, matrix_view<const T> gamma, matrix_view<const T> beta, matrix_view<T> y,
                       float eps, strata::stream_t stream) {
  const index_t blocks = (x.rows + Group::rows_per_block - 1) / Group::rows_per_block;
  if (blocks > index_t(0x7fffffff))
    throw strata::size_error("strata layer_norm: " + std::to_string(x.rows) + " rows need more than 2^31 - 1 blocks");
  const bool exact = x.cols == index_t(Group::group_size) * VPT * strata::rows::lanes<T>;
  auto* kernel = exact ? &layer_norm_kernel<Group, VPT, true, T> : &layer_norm_kernel<Group, VPT, false, T>;
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
