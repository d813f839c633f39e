// Layer normalization over the rows of a matrix, built on strata's row primitive: each row read
// once into registers, mean and variance (two passes over the registers, so it is stable) by a
// warp or block reduction, y = (x - mean) / sqrt(var + eps) * gamma + beta. fp32, bf16 and fp16
// storage with fp32 arithmetic.
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
template <class Group, int VPT, class T>
__global__ void __launch_bounds__(Group::threads) layer_norm_kernel(matrix_view<const T> x, matrix_view<const T> gamma,
                                                                    matrix_view<const T> beta, matrix_view<T> y, float eps) {
  __shared__ typename Group::storage s;
  using frag = strata::rows::fragment<T, VPT>;
  const int first = Group::rank(), step = Group::size();
  const float inv_n = 1.0f / float(x.cols);
  for (index_t r = Group::first_row(); r < x.rows; r += Group::row_stride()) {
    frag f;
    f.load(x.row(r), x.cols, first, step);
    const float mean = Group::sum(s, f.sum()) * inv_n;
    float dev = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k)
      STRATA_UNROLL
      for (int i = 0; i < frag::width; ++i)
        if (frag::in_row(x.cols, first, step, k, i)) dev += (f.v[k][i] - mean) * (f.v[k][i] - mean);
    const float rstd = rsqrtf(Group::sum(s, dev) * inv_n + eps);
    // One output vector at a time, with its gamma and beta (from L1/L2: every row reads the same
    // ones), so only the row fragment stays live in registers.
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      const index_t j = index_t(first) + index_t(k) * step;
      if (j * frag::width >= x.cols) continue;
      float g[frag::width], b[frag::width];
      frag::load_vector(gamma.data, x.cols, j, g);
      frag::load_vector(beta.data, x.cols, j, b);
      STRATA_UNROLL
      for (int i = 0; i < frag::width; ++i) f.v[k][i] = (f.v[k][i] - mean) * rstd * g[i] + b[i];
      frag::store_vector(y.row(r), y.cols, j, f.v[k]);
    }
  }
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
    const index_t blocks = Group::blocks(x.rows);
    detail::layer_norm_kernel<Group, VPT, T><<<unsigned(blocks), Group::threads, 0, stream>>>(x, gamma, beta, y, eps);
    strata::detail::check_launch("layer_norm kernel");
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
