// Layer norm against a double-precision reference: fp32, bf16 and fp16, row lengths that hit every
// dispatch shape (warp per row, block per row) and lengths that are not a multiple of the vector.
#include "layer_norm/layer_norm.hpp"

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

template <class T>
void check_layer_norm(strata::index_t rows, strata::index_t cols, double tol) {
  SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
  std::mt19937_64 g(strata_test::test_seed() ^ std::uint64_t(cols * 131 + rows));
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<T> x(static_cast<std::size_t>(rows * cols)), gam(static_cast<std::size_t>(cols)), bet(static_cast<std::size_t>(cols));
  for (auto& e : x) e = strata::from_float<T>(d(g));
  for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.1f * d(g));
  for (auto& e : bet) e = strata::from_float<T>(0.1f * d(g));
  strata::matrix<T> mx(rows, cols, x.data()), mg(1, cols, gam.data()), mb(1, cols, bet.data());
  std::vector<T> poison(static_cast<std::size_t>(rows * cols), strata::from_float<T>(12345.0f));
  strata::matrix<T> my(rows, cols, poison.data());
  strata_examples::layer_norm<T>(mx.const_view(), mg.const_view(), mb.const_view(), my.view(), 1e-5f);
  strata::synchronize(strata::stream_t{});
  std::vector<T> y(x.size());
  my.copy_to_host(y.data());
  double err2 = 0, ref2 = 0;
  for (strata::index_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (strata::index_t c = 0; c < cols; ++c) mean += strata::to_float(x[r * cols + c]);
    mean /= double(cols);
    for (strata::index_t c = 0; c < cols; ++c) var += std::pow(strata::to_float(x[r * cols + c]) - mean, 2);
    var /= double(cols);
    for (strata::index_t c = 0; c < cols; ++c) {
      double want = (strata::to_float(x[r * cols + c]) - mean) / std::sqrt(var + 1e-5) * strata::to_float(gam[c]) +
                    strata::to_float(bet[c]);
      double got = strata::to_float(y[r * cols + c]);
      ASSERT_TRUE(std::isfinite(got)) << "row " << r << " col " << c;
      err2 += (got - want) * (got - want);
      ref2 += want * want;
    }
  }
  EXPECT_LT(std::sqrt(err2 / std::max(ref2, 1e-30)), tol);
}

}  // namespace

TEST(LayerNorm, Fp32EveryRowShape) {
  STRATA_SEED_TRACE();
  for (strata::index_t cols : {1, 3, 17, 128, 255, 513, 1000, 1024, 2050, 4096, 4099, 8192, 16384, 20001})
    check_layer_norm<float>(37, cols, 1e-5);
  check_layer_norm<float>(1, 4096, 1e-5);
  check_layer_norm<float>(2048, 64, 1e-5);
}

TEST(LayerNorm, Bf16AndFp16) {
  STRATA_SEED_TRACE();
  for (strata::index_t cols : {7, 256, 1001, 4096, 16384, 30000}) {
    check_layer_norm<strata::bfloat16>(19, cols, 1e-2);
    check_layer_norm<strata::half>(19, cols, 1e-2);
  }
}

// Many rows: many more groups than the GPU holds at once (block and warp groups, whole and masked
// rows, a last block of warp groups partly past the last row).
TEST(LayerNorm, ManyRows) {
  STRATA_SEED_TRACE();
  check_layer_norm<float>(40001, 64, 1e-5);
  check_layer_norm<float>(3000, 1000, 1e-5);
  check_layer_norm<float>(301, 4096, 1e-5);
  check_layer_norm<strata::bfloat16>(2500, 4099, 1e-2);
  check_layer_norm<strata::half>(200, 16384, 1e-2);
}

TEST(LayerNorm, ShapeErrors) {
  strata::matrix<float> x(4, 8), y(4, 9), g(1, 8);
  EXPECT_THROW(strata_examples::layer_norm<float>(x.const_view(), g.const_view(), g.const_view(), y.view(), 1e-5f),
               strata::size_error);
}
