// SPDX-License-Identifier: Apache-2.0
// Layer norm (strata::layer_norm), rows x hidden, fp32 / bf16 / fp16: bytes = input read once +
// output written once. PyTorch's eager and compiled layer_norm are timed by
// bench/layer_norm_torch.py in the same gpu-check run and merged into the same results file; the
// sweep over hidden sizes is bench/norm_sweep.cpp.
#include "common.hpp"

#include <strata/algorithm/normalize.hpp>

#include <random>

namespace {

template <class T>
struct ln_case {
  strata::matrix<T> x, y, gamma, beta;
  ln_case(strata::index_t rows, strata::index_t cols) : x(rows, cols), y(rows, cols), gamma(1, cols), beta(1, cols) {
    std::vector<T> h(static_cast<std::size_t>(rows * cols));
    std::mt19937 g(42);
    std::normal_distribution<float> d(0.5f, 2.0f);
    for (auto& e : h) e = strata::from_float<T>(d(g));
    x.copy_from_host(h.data());
    std::vector<T> ones(static_cast<std::size_t>(cols), strata::from_float<T>(1.0f)), zeros(static_cast<std::size_t>(cols), strata::from_float<T>(0.0f));
    gamma.copy_from_host(ones.data());
    beta.copy_from_host(zeros.data());
  }
};

template <class T>
void run(benchmark::State& state, strata::index_t rows, strata::index_t cols) {
  ln_case<T> c(rows, cols);
  strata_bench::run_timed(state, 2.0 * double(rows) * double(cols) * sizeof(T), double(rows * cols), [&] {
    strata::layer_norm<T>(c.x.const_view(), c.y.view(), {c.gamma.const_view().data, std::size_t(cols)},
                          {c.beta.const_view().data, std::size_t(cols)}, 1e-5f);
  });
}

template <class T>
void add(const char* dtype, strata::index_t rows, strata::index_t cols) {
  rows = std::max<strata::index_t>(1, strata_bench::scaled(rows));
  std::string name = "layer_norm/strata/" + std::to_string(rows) + "x" + std::to_string(cols) + "/" + dtype;
  strata_bench::configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { run<T>(s, rows, cols); }));
}

// The shapes of the targets: hidden 1024 to 16384, inputs of 256 MB and more, and the
// launch-bound 512 x 4096.
const bool registered = [] {
  for (auto [rows, cols] : {std::pair<strata::index_t, strata::index_t>{512, 4096}, {16384, 1024}, {16384, 4096}, {65536, 4096}, {4096, 16384}}) {
    add<float>("fp32", rows, cols);
    add<strata::bfloat16>("bf16", rows, cols);
  }
  add<strata::half>("fp16", 16384, 4096);
  return true;
}();

}  // namespace
