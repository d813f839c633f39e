// SPDX-License-Identifier: Apache-2.0
// layer_norm_example: normalizes the rows of a dense row-major array with strata's library call,
// on strata's padded matrix and on dense rows the caller allocated, and checks both against a
// plain host loop. bench/layer_norm_torch.py checks the same calls against PyTorch.
//   layer_norm_example [ROWS COLS]   (--help says more)
#include <strata/algorithm/normalize.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  strata::index_t rows = 1000, cols = 5120;
  CLI::App app{"strata::layer_norm over the rows of a ROWS x COLS fp32 matrix, checked against a host loop."};
  app.add_option("rows", rows, "rows")->capture_default_str()->check(CLI::Range(strata::index_t(1), strata::index_t(1) << 24));
  app.add_option("cols", cols, "columns (the normalized length)")->capture_default_str()->check(CLI::Range(strata::index_t(1), strata::index_t(1) << 24));
  CLI11_PARSE(app, argc, argv);
  std::mt19937 g(7);
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * cols)), gamma(static_cast<std::size_t>(cols)), beta(static_cast<std::size_t>(cols));
  for (auto& v : x) v = d(g);
  for (auto& v : gamma) v = 1.0f + 0.1f * d(g);
  for (auto& v : beta) v = 0.1f * d(g);
  try {
    // strata's matrix: rows padded to 16 bytes.
    strata::matrix<float> mx(rows, cols, x.data()), my(rows, cols), mg(1, cols, gamma.data()), mb(1, cols, beta.data());
    const cuda::std::span<const float> gs(mg.const_view().data, std::size_t(cols)), bs(mb.const_view().data, std::size_t(cols));
    const auto p1 = strata::layer_norm<float>(mx.const_view(), my.view(), gs, bs, 1e-5f);
    // Dense rows someone else allocated (pitch == cols): rows need not start on 16-byte boundaries.
    strata::buffer dx(x.size() * sizeof(float), strata::memory_space::device), dy(x.size() * sizeof(float), strata::memory_space::device);
    strata::copy_bytes(dx.data(), x.data(), dx.bytes());
    auto* px = reinterpret_cast<float*>(dx.data());
    auto* py = reinterpret_cast<float*>(dy.data());
    const auto p2 = strata::layer_norm<float>(strata::make_matrix_view<const float>(px, rows, cols),
                                              strata::make_matrix_view(py, rows, cols), gs, bs, 1e-5f);
    strata::synchronize(strata::stream_t{});
    std::vector<float> y1(x.size()), y2(x.size());
    my.copy_to_host(y1.data());
    strata::copy_bytes(y2.data(), py, dy.bytes());
    double err1 = 0, err2 = 0, ref2 = 0;
    for (strata::index_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (strata::index_t c = 0; c < cols; ++c) mean += x[std::size_t(r * cols + c)];
      mean /= double(cols);
      for (strata::index_t c = 0; c < cols; ++c) var += std::pow(x[std::size_t(r * cols + c)] - mean, 2);
      var /= double(cols);
      for (strata::index_t c = 0; c < cols; ++c) {
        const std::size_t i = std::size_t(r * cols + c);
        const double want = (x[i] - mean) / std::sqrt(var + 1e-5) * gamma[std::size_t(c)] + beta[std::size_t(c)];
        err1 += (y1[i] - want) * (y1[i] - want), err2 += (y2[i] - want) * (y2[i] - want), ref2 += want * want;
      }
    }
    const double e1 = std::sqrt(err1 / ref2), e2 = std::sqrt(err2 / ref2);
    auto name = [](strata::path p) { return p == strata::path::vectorized ? "16-byte vectors" : "element by element"; };
    std::printf("layer norm of %lld x %lld fp32: strata matrix (%s) relative error %.2e; dense rows (%s) %.2e\n", (long long)rows,
                (long long)cols, name(p1), e1, name(p2), e2);
    return e1 < 1e-5 && e2 < 1e-5 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "layer_norm_example: %s\n", e.what());
    return 1;
  }
}
