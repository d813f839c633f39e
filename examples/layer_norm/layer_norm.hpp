// Layer normalization over the rows of a matrix, built on strata's row primitive: each row read
// once into registers, mean and variance by one warp or block reduction of per-thread (count,
// mean, M2) merged pairwise (stable), y = (x - mean) / sqrt(var + eps) * gamma + beta. fp32, bf16
// and fp16 storage with fp32 arithmetic.
#pragma once

#include <strata/algorithm/launch.hpp>
#include <strata/algorithm/rows.hpp>
#include <strata/container/matrix.hpp>

#include <cmath>
#include <string>

namespace strata_examples {

using strata::index_t;
using strata::matrix_view;

namespace detail {
#if defined(STRATA_BACKEND_CUDA)
// Each thread holds its vectors of the row as raw 16-byte words (8 bf16 values in 4 registers) and
// converts them to float in each pass; gamma and beta are loaded once per group, before the first
// row, so their latency overlaps the row's. One merged (count, mean, M2) reduction per row.
template <class Group, int VPT, class T>
__global__ void __launch_bounds__(Group::threads, 1024 / Group::threads)
    layer_norm_kernel(matrix_view<const T> x, matrix_view<const T> gamma, matrix_view<const T> beta, matrix_view<T> y,
                      float eps) {
  __shared__ typename Group::storage s;
  constexpr int L = strata::rows::lanes<T>;
  const int first = Group::rank(), step = Group::size();
  const index_t cols = x.cols;
  auto valid = [&](int k) { return (index_t(first) + index_t(k) * step) * L < cols; };
  auto offset = [&](int k) { return (index_t(first) + index_t(k) * step) * L; };
  auto unpack = [](const strata::vec::word16& w, float (&f)[L]) {
    T e[L];
    std::memcpy(static_cast<void*>(e), &w, sizeof e);
    STRATA_UNROLL
    for (int i = 0; i < L; ++i) f[i] = strata::to_float(e[i]);
  };
  strata::vec::word16 gw[VPT], bw[VPT];
  STRATA_UNROLL
  for (int k = 0; k < VPT; ++k)
    if (valid(k)) gw[k] = strata::vec::load<16>(gamma.data + offset(k)), bw[k] = strata::vec::load<16>(beta.data + offset(k));
  for (index_t r = Group::first_row(); r < x.rows; r += Group::row_stride()) {
    strata::vec::word16 xw[VPT];
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k)
      if (valid(k)) xw[k] = strata::vec::load<16>(x.row(r) + offset(k));
    // This thread's part: count, mean, then deviations from that mean (two passes in registers).
    float n = 0, sum = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      if (!valid(k)) continue;
      float v[L];
      unpack(xw[k], v);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i)
        if (offset(k) + i < cols) n += 1, sum += v[i];
    }
    const float local_mean = n > 0 ? sum / n : 0.0f;
    float m2 = 0;
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      if (!valid(k)) continue;
      float v[L];
      unpack(xw[k], v);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i)
        if (offset(k) + i < cols) m2 += (v[i] - local_mean) * (v[i] - local_mean);
    }
    const strata::rows::row_stats row = Group::merge(s, {n, local_mean, m2});
    const float mean = row.mean, rstd = rsqrtf(row.m2 / float(cols) + eps);
    STRATA_UNROLL
    for (int k = 0; k < VPT; ++k) {
      if (!valid(k)) continue;
      float v[L], g[L], b[L];
      unpack(xw[k], v);
      unpack(gw[k], g);
      unpack(bw[k], b);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) v[i] = (v[i] - mean) * rstd * g[i] + b[i];
      strata::rows::fragment<T, 1>::store_vector(y.row(r), cols, offset(k) / L, v);
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
