// SPDX-License-Identifier: Apache-2.0
// Normalization with a residual added first, over per-head rows and into a narrower output type
// (norm_fused.hpp), against a double-precision reference computed from the sum as T rounds it:
// fp32, bf16 and fp16 rows (fp32 rows into bf16 output); row lengths across groups within a warp,
// blocks and the block-a-row sweeps; dense, strided and off-boundary rows; the sum stored apart,
// over the residual, over x or not at all; y over x or over the residual; per-head views with
// heads back to back, tokens strided (a slice of a fused QKV tensor) and heads strided (a
// transposed tensor). The sum must equal x + residual rounded to T bit for bit; every element of
// y and the sum is checked, and every element outside the rows, and every input not written
// over, must keep its bits.
#include <strata/algorithm/norm_fused.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using strata::index_t;
using strata::norm_fused_shape;
using strata::norm_kind;

/// Where the rows of every operand lie (each operand in its own allocation, with guard elements
/// around and between the rows).
struct geometry {
  index_t tokens, heads, dim, token_pitch, head_pitch, shift;
  index_t rows() const { return tokens * heads; }
  index_t at(index_t r, index_t c) const { return shift + (r / heads) * token_pitch + (r % heads) * head_pitch + c; }
  std::size_t span() const {
    if (tokens == 0 || heads == 0) return std::size_t(shift + 19);
    return std::size_t(at(rows() - 1, 0) + std::max(dim, index_t(0)) + 19);
  }
};
geometry matrix_rows(index_t rows, index_t cols, index_t pad = 0, index_t shift = 0) { return {rows, 1, cols, cols + pad, 0, shift}; }

enum class sum_to { apart, residual, x, none };
enum class y_to { apart, x, residual };
const char* name(sum_to s) {
  static const char* n[] = {"sum apart", "sum over residual", "sum over x", "sum not stored"};
  return n[int(s)];
}
const char* name(y_to y) {
  static const char* n[] = {"y apart", "y over x", "y over residual"};
  return n[int(y)];
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1.2e-2;  // y's type: fp32's sums over long rows, about 3 ulps of bf16
}

template <class T>
std::vector<T> placed(const geometry& g, const std::vector<T>& dense, T guard) {
  std::vector<T> out(g.span(), guard);
  for (index_t r = 0; r < g.rows(); ++r)
    for (index_t c = 0; c < g.dim; ++c) out[std::size_t(g.at(r, c))] = dense[std::size_t(r * g.dim + c)];
  return out;
}

template <class T>
struct device_rows {
  strata::buffer b;
  explicit device_rows(const std::vector<T>& host) : b(std::max<std::size_t>(1, host.size()) * sizeof(T), strata::memory_space::device) {
    strata::copy_bytes(b.data(), host.data(), host.size() * sizeof(T));
  }
  T* data(const geometry& g) { return reinterpret_cast<T*>(b.data()) + g.shift; }
  std::vector<T> back(std::size_t n) {
    std::vector<T> out(n);
    strata::copy_bytes(out.data(), b.data(), n * sizeof(T));
    return out;
  }
};

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Runs one call and checks every element. residual == false: the per-head / plain forward
/// (sum and y placement then concern x alone).
template <norm_kind Kind, class T, class O>
void check(const geometry& g, bool residual, sum_to s, y_to yt, bool with_gamma, strata::norm_fused_path* taken = nullptr,
           float first_offset = 0.0f) {
  SCOPED_TRACE(std::string(Kind == norm_kind::layer ? "layer" : "rms") + " " + std::to_string(g.tokens) + "x" + std::to_string(g.heads) + "x" +
               std::to_string(g.dim) + " pitches " + std::to_string(g.token_pitch) + "/" + std::to_string(g.head_pitch) + " shift " +
               std::to_string(g.shift) + (residual ? std::string(" residual, ") + name(s) : std::string(" no residual")) + ", " + name(yt) +
               (with_gamma ? ", gamma" : ", no gamma"));
  constexpr bool same_type = std::is_same_v<T, O>;
  std::mt19937_64 rng(strata_test::test_seed() ^ std::uint64_t(g.dim * 7919 + g.rows()) ^ (std::uint64_t(s) << 40) ^ (std::uint64_t(yt) << 44));
  std::normal_distribution<float> d(0.5f, 2.0f);
  const std::size_t n = std::size_t(g.rows() * g.dim);
  std::vector<T> x(n), r(n), gam(std::size_t(g.dim)), bet(std::size_t(g.dim));
  for (auto& e : x) e = strata::from_float<T>(d(rng));
  for (auto& e : r) e = strata::from_float<T>(d(rng));
  for (index_t row = 0; row < g.rows() && g.dim > 0; ++row)
    x[std::size_t(row * g.dim)] = strata::from_float<T>(strata::to_float(x[std::size_t(row * g.dim)]) + first_offset);
  for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.2f * d(rng));
  for (auto& e : bet) e = strata::from_float<T>(0.3f * d(rng));
  const T guard = strata::from_float<T>(-777.0f), poison = strata::from_float<T>(12345.0f);
  const O yguard = strata::from_float<O>(-555.0f), ypoison = strata::from_float<O>(23456.0f);
  const std::size_t span = g.span();
  const std::vector<T> hx = placed(g, x, guard), hr = placed(g, r, guard), hh = placed(g, std::vector<T>(n, poison), guard);
  const std::vector<O> hy = placed(g, std::vector<O>(n, ypoison), yguard);
  device_rows<T> bx(hx), br(hr), bh(hh), bg(gam), bb(bet);
  device_rows<O> by(hy);
  const auto heads_of = [&](auto* p) { return strata::make_heads_view(p, g.tokens, g.heads, g.dim, g.token_pitch, g.head_pitch); };
  const cuda::std::span<const T> gs(with_gamma ? bg.data({}) : nullptr, with_gamma ? std::size_t(g.dim) : 0);
  const cuda::std::span<const T> bs(with_gamma && Kind == norm_kind::layer ? bb.data({}) : nullptr,
                                    with_gamma && Kind == norm_kind::layer ? std::size_t(g.dim) : 0);
  const float eps = 1e-5f;
  strata::norm_fused_path p;
  T* const px = bx.data(g);
  T* const pr = br.data(g);
  if (!residual) {
    if constexpr (same_type) {
      O* py = yt == y_to::x ? px : by.data(g);
      if constexpr (Kind == norm_kind::layer) p = strata::layer_norm<T, O>(heads_of(static_cast<const T*>(px)), heads_of(py), gs, bs, eps);
      else p = strata::rms_norm<T, O>(heads_of(static_cast<const T*>(px)), heads_of(py), gs, eps);
    } else {
      if constexpr (Kind == norm_kind::layer) p = strata::layer_norm<T, O>(heads_of(static_cast<const T*>(px)), heads_of(by.data(g)), gs, bs, eps);
      else p = strata::rms_norm<T, O>(heads_of(static_cast<const T*>(px)), heads_of(by.data(g)), gs, eps);
    }
  } else {
    ASSERT_EQ(g.heads, 1) << "the fused entry points take matrices";
    auto mat = [&](auto* q) { return strata::make_matrix_view(q, g.tokens, g.dim, g.token_pitch); };
    O* py = by.data(g);
    if constexpr (same_type) {
      if (yt == y_to::x) py = px;
      if (yt == y_to::residual) py = pr;
    }
    if (s == sum_to::residual) {
      if constexpr (Kind == norm_kind::layer) p = strata::add_layer_norm<T, O>(mat(static_cast<const T*>(px)), mat(pr), mat(py), gs, bs, eps);
      else p = strata::add_rms_norm<T, O>(mat(static_cast<const T*>(px)), mat(pr), mat(py), gs, eps);
    } else {
      const strata::matrix_view<T> sum = s == sum_to::apart ? mat(bh.data(g)) : s == sum_to::x ? mat(px) : strata::matrix_view<T>{};
      if constexpr (Kind == norm_kind::layer)
        p = strata::add_layer_norm<T, O>(mat(static_cast<const T*>(px)), mat(static_cast<const T*>(pr)), sum, mat(py), gs, bs, eps);
      else p = strata::add_rms_norm<T, O>(mat(static_cast<const T*>(px)), mat(static_cast<const T*>(pr)), sum, mat(py), gs, eps);
    }
  }
  strata::synchronize(strata::stream_t{});
  if (taken) *taken = p;

  const std::vector<T> got_x = bx.back(span), got_r = br.back(span), got_h = bh.back(span);
  const std::vector<O> got_y_apart = by.back(span);
  // y as written: in its own buffer, or over x / the residual (same type only).
  std::vector<O> got_y(span);
  for (std::size_t i = 0; i < span; ++i) {
    if constexpr (same_type) got_y[i] = yt == y_to::x ? got_x[i] : yt == y_to::residual ? got_r[i] : got_y_apart[i];
    else got_y[i] = got_y_apart[i];
  }
  const std::vector<T>& got_sum = s == sum_to::residual ? got_r : s == sum_to::x ? got_x : got_h;
  for (index_t row = 0; row < g.rows(); ++row) {
    std::vector<double> h(std::size_t(g.dim));
    for (index_t c = 0; c < g.dim; ++c) {
      const std::size_t k = std::size_t(row * g.dim + c);
      const float sum = residual ? strata::to_float(x[k]) + strata::to_float(r[k]) : strata::to_float(x[k]);
      const T as_t = strata::from_float<T>(sum);
      h[std::size_t(c)] = strata::to_float(as_t);
      if (residual && s != sum_to::none) {
        const T stored = got_sum[std::size_t(g.at(row, c))];
        ASSERT_TRUE(same_bits(stored, as_t)) << "sum row " << row << " col " << c << ": " << strata::to_float(stored) << " want "
                                              << strata::to_float(as_t);
      }
    }
    double mean = 0, var = 0;
    if (Kind == norm_kind::layer) {
      for (double v : h) mean += v;
      mean /= double(g.dim);
    }
    for (double v : h) var += (v - mean) * (v - mean);
    const double rstd = 1.0 / std::sqrt(var / double(g.dim) + eps), cond = std::max(1.0, std::abs(mean) * rstd);
    for (index_t c = 0; c < g.dim; ++c) {
      const double gm = with_gamma ? strata::to_float(gam[std::size_t(c)]) : 1.0;
      const double bt = with_gamma && Kind == norm_kind::layer ? strata::to_float(bet[std::size_t(c)]) : 0.0;
      const double want = (h[std::size_t(c)] - mean) * rstd * gm + bt;
      const double got = strata::to_float(got_y[std::size_t(g.at(row, c))]);
      ASSERT_TRUE(std::isfinite(got) && got != 23456.0 && got != 12345.0) << "y row " << row << " col " << c << " not written";
      ASSERT_LE(std::abs(got - want), tolerance<O>() * cond * (std::abs(want) + std::abs(gm) + std::abs(bt)))
          << "y row " << row << " col " << c << ": " << got << " want " << want;
    }
  }
  // Outside the rows every buffer keeps its guards; inputs not written over keep their bits.
  std::vector<bool> in_rows(span, false);
  for (index_t row = 0; row < g.rows(); ++row)
    for (index_t c = 0; c < g.dim; ++c) in_rows[std::size_t(g.at(row, c))] = true;
  const bool x_written = (residual && s == sum_to::x) || yt == y_to::x, r_written = residual && (s == sum_to::residual || yt == y_to::residual);
  for (std::size_t i = 0; i < span; ++i) {
    if (!in_rows[i]) {
      ASSERT_TRUE(same_bits(got_x[i], guard) && same_bits(got_r[i], guard) && same_bits(got_h[i], guard)) << "element " << i << " outside the rows written";
      ASSERT_TRUE(same_bits(got_y_apart[i], yguard)) << "y's element " << i << " outside the rows written";
      continue;
    }
    if (!x_written) {
      ASSERT_TRUE(same_bits(got_x[i], hx[i])) << "x changed at " << i;
    }
    if (!r_written) {
      ASSERT_TRUE(same_bits(got_r[i], hr[i])) << "the residual changed at " << i;
    }
    if (!(residual && s == sum_to::apart)) {
      ASSERT_TRUE(same_bits(got_h[i], poison)) << "the sum's buffer written at " << i;
    }
    if (!(yt == y_to::apart || !same_type)) {
      ASSERT_TRUE(same_bits(got_y_apart[i], ypoison)) << "y's own buffer written at " << i;
    }
  }
}

template <class T>
class NormFused : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates fp32 here and
// fp32 rows into bf16 output below (every kernel's 16-bit code); every other build runs fp32,
// bf16 and fp16 rows.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Dtypes = ::testing::Types<float>;
#else
using Dtypes = ::testing::Types<float, strata::bfloat16, strata::half>;
#endif
TYPED_TEST_SUITE(NormFused, Dtypes);

constexpr index_t held = index_t(strata::detail::norm_bwd::max_held) * strata::detail::norm_bwd::max_group;

// The residual forms: every row length shape, layout, place of the sum and of y.
TYPED_TEST(NormFused, ResidualEveryRowLengthAndPlace) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  std::vector<index_t> lengths = {1, 2, 3, 8, 17, 64, 100, 128, 256, 768, 1000, 2880, 4096, held, held + 8};
  if (!strata_test::under_sanitizer()) lengths.insert(lengths.end(), {5120, 40000});
  for (index_t cols : lengths) {
    const index_t rows = cols >= held ? 3 : cols >= 1000 ? 9 : 37;
    for (const geometry& g : {matrix_rows(rows, cols), matrix_rows(rows, cols, 3), matrix_rows(rows, cols, 0, 1)}) {
      strata::norm_fused_path p;
      check<norm_kind::rms, T, T>(g, true, sum_to::residual, y_to::apart, true, &p);
      const bool vec = g.token_pitch == cols && g.shift == 0 && cols % strata::detail::norm_bwd::lanes<T> == 0;
      EXPECT_EQ(p.access, vec ? strata::path::vectorized : strata::path::scalar);
      EXPECT_EQ(p.shape, cols > held ? norm_fused_shape::two_pass : norm_fused_shape::rows_held);
      check<norm_kind::layer, T, T>(g, true, sum_to::residual, y_to::x, true);
      if (cols == 100 || cols == 4096 || cols == held + 8) {
        for (sum_to s : {sum_to::apart, sum_to::x, sum_to::none}) {
          check<norm_kind::rms, T, T>(g, true, s, y_to::apart, true);
          check<norm_kind::layer, T, T>(g, true, s, y_to::apart, false);
        }
        check<norm_kind::rms, T, T>(g, true, sum_to::x, y_to::residual, true);
        check<norm_kind::layer, T, T>(g, true, sum_to::none, y_to::x, true);
        check<norm_kind::rms, T, T>(g, true, sum_to::none, y_to::residual, false);
      }
    }
  }
}

// Per-head rows: heads back to back (normalize.hpp's matrix rows), tokens strided as a slice of a
// fused QKV projection is, heads strided as a transposed tensor is; y over x.
TYPED_TEST(NormFused, PerHeadRows) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (index_t dim : {1, 7, 64, 100, 128, 256}) {
    const index_t tokens = 23, heads = 5;
    const geometry dense{tokens, heads, dim, heads * dim, dim, 0};
    const geometry qkv{tokens, heads, dim, 3 * heads * dim, dim, 0};
    const geometry transposed{tokens, heads, dim, dim, tokens * dim, 0};
    const geometry padded{tokens, heads, dim, heads * (dim + 5) + 2, dim + 5, 1};
    const geometry shapes[] = {dense, qkv, transposed, padded};
    for (const geometry& g : shapes) {
      strata::norm_fused_path p;
      check<norm_kind::rms, T, T>(g, false, sum_to::none, y_to::apart, true, &p);
      EXPECT_EQ(p.shape, &g == &shapes[0] ? norm_fused_shape::matrix_rows : norm_fused_shape::rows_held);
      check<norm_kind::layer, T, T>(g, false, sum_to::none, y_to::apart, true);
      check<norm_kind::rms, T, T>(g, false, sum_to::none, y_to::x, false);
      check<norm_kind::layer, T, T>(g, false, sum_to::none, y_to::x, true);
    }
  }
  // Rows past what a group holds, per head.
  check<norm_kind::layer, T, T>(geometry{3, 2, held + 8, 3 * (held + 8), held + 8, 0}, false, sum_to::none, y_to::apart, true);
}

// fp32 rows into bf16 / fp16 output, with and without a residual.
TEST(NormFused, NarrowerOutput) {
  STRATA_SEED_TRACE();
  for (index_t cols : std::vector<index_t>{1, 8, 100, 128, 4096, held + 8}) {
    const index_t rows = cols > held ? 3 : 19;
    for (const geometry& g : {matrix_rows(rows, cols), matrix_rows(rows, cols, 0, 1)}) {
      strata::norm_fused_path p;
      check<norm_kind::rms, float, strata::bfloat16>(g, true, sum_to::residual, y_to::apart, true, &p);
      EXPECT_EQ(p.access, g.shift == 0 && cols % 4 == 0 ? strata::path::vectorized : strata::path::scalar);
      check<norm_kind::layer, float, strata::bfloat16>(g, true, sum_to::none, y_to::apart, true);
      check<norm_kind::rms, float, strata::bfloat16>(g, false, sum_to::none, y_to::apart, true);
#if !defined(STRATA_TEST_COMPILE_CHECK)
      check<norm_kind::layer, float, strata::half>(g, true, sum_to::apart, y_to::apart, true);
#endif
    }
  }
  check<norm_kind::rms, float, strata::bfloat16>(geometry{17, 4, 128, 3 * 4 * 128, 128, 0}, false, sum_to::none, y_to::apart, true);
}

// Many rows: the grid stops at what the device holds and every block takes several.
TYPED_TEST(NormFused, ManyRows) {
  using T = TypeParam;
  const index_t many = strata_test::under_sanitizer() ? 3000 : 30000;
  for (index_t cols : {64, 128, 1000}) check<norm_kind::rms, T, T>(matrix_rows(many, cols), true, sum_to::residual, y_to::x, true);
  check<norm_kind::layer, T, T>(geometry{many / 32, 32, 128, 3 * 32 * 128, 128, 0}, false, sum_to::none, y_to::apart, true);
}

// A first element far from the rest: the statistics are exact two-pass sums in both shapes.
TEST(NormFused, RowsWhoseFirstElementIsAnOutlier) {
  for (index_t cols : std::vector<index_t>{1000, held + 8})
    check<norm_kind::layer, float, float>(matrix_rows(5, cols), true, sum_to::residual, y_to::apart, true, nullptr, 1000.0f);
}

TEST(NormFused, Refusals) {
  strata::buffer b(4096 * sizeof(float), strata::memory_space::device);
  const std::vector<float> zeros(4096, 0.0f);  // the calls that run read defined values
  strata::copy_bytes(b.data(), zeros.data(), zeros.size() * sizeof(float));
  float* p = reinterpret_cast<float*>(b.data());
  const auto m = [](auto* q, index_t rows, index_t cols) { return strata::make_matrix_view(q, rows, cols, cols); };
  const cuda::std::span<const float> none;
  // sizes that disagree
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 9), m(p + 200, 4, 8), none)), strata::size_error);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 200, 3, 8), none)), strata::size_error);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 200, 4, 8), {p + 300, 7})), strata::size_error);
  // outputs overlapping inputs other than as the same rows, and each other
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 4, 4, 8), none)), std::invalid_argument);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 100, 4, 8), none)), std::invalid_argument);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 200, 4, 8), {p + 200, 8})), std::invalid_argument);
  EXPECT_THROW((strata::add_layer_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 400, 4, 8), m(p + 410, 4, 8), none, none)),
               std::invalid_argument);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), strata::make_matrix_view(p + 100, 4, 8, 9), none)),
               std::invalid_argument);
  // a narrower y cannot be x's rows
  EXPECT_THROW((strata::add_rms_norm<float, strata::bfloat16>(m(p, 4, 8), m(p + 100, 4, 8), m(reinterpret_cast<strata::bfloat16*>(p), 4, 8), none)),
               std::invalid_argument);
  // hostile views: negative sizes, overlapping rows, per-head shapes that disagree
  strata::matrix_view<float> bad{p, -1, 8, 8};
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), bad, m(p + 200, 4, 8), none)), strata::size_error);
  strata::matrix_view<float> overlapping{p + 100, 4, 8, 2};
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), overlapping, m(p + 200, 4, 8), none)), strata::size_error);
  EXPECT_THROW((strata::make_heads_view(p, 4, 3, 8, 16, 8)), strata::size_error);  // a token's heads run into the next token
  EXPECT_THROW((strata::make_heads_view(p, 4, 3, 8, 24, 4)), strata::size_error);  // heads overlap
  EXPECT_THROW((strata::make_heads_view(p, -1, 3, 8, 24, 8)), strata::size_error);
  EXPECT_NO_THROW((strata::make_heads_view(p, 4, 3, 8, 8, 32)));                   // transposed: tokens apart within a head
  EXPECT_THROW((strata::rms_norm<float, float>(strata::make_heads_view<const float>(p, 4, 3, 8, 24, 8), strata::make_heads_view(p + 1000, 4, 2, 8, 16, 8),
                                              none)),
               strata::size_error);
  EXPECT_THROW((strata::add_rms_norm<float, float>(m(p, 4, 8), m(p + 100, 4, 8), m(p + 200, 4, 8), none, -1.0f)), std::invalid_argument);
  // per-head views of one pitch (run as matrix rows) take the same checks: y one head past x,
  // gamma inside y, eps < 0
  const auto dense = [&](float* q) { return strata::make_heads_view(q, 4, 2, 8, 16, 8); };
  EXPECT_THROW((strata::rms_norm<float, float>(dense(p), dense(p + 8), none)), std::invalid_argument);
  EXPECT_THROW((strata::rms_norm<float, float>(dense(p), dense(p + 200), {p + 210, 8})), std::invalid_argument);
  EXPECT_THROW((strata::rms_norm<float, float>(dense(p), dense(p + 200), none, -1.0f)), std::invalid_argument);
  EXPECT_NO_THROW((strata::rms_norm<float, float>(dense(p), dense(p), none)));  // in place
  // aggregates: a pointer off its type's alignment, counts whose product overflows
  const strata::matrix_view<const float> off{reinterpret_cast<const float*>(reinterpret_cast<const char*>(p) + 2), 4, 8, 8};
  EXPECT_THROW((strata::add_rms_norm<float, float>(off, m(p + 100, 4, 8), m(p + 200, 4, 8), none)), strata::misaligned_pointer);
  const strata::heads_view<float> huge{p, index_t(1) << 32, index_t(1) << 32, 8, 8, 8};
  EXPECT_THROW((strata::rms_norm<float, float>(huge, dense(p + 200), none)), strata::size_error);
}

TEST(NormFused, EmptyRowsWriteNothing) {
  strata::buffer b(64, strata::memory_space::device);
  float* p = reinterpret_cast<float*>(b.data());
  const auto v = strata::make_matrix_view(p, 0, 8, 8);
  EXPECT_NO_THROW((strata::add_rms_norm<float, float>(v, v, v, {})));
  const auto h = strata::make_heads_view(p, 0, 4, 8, 32, 8);
  EXPECT_NO_THROW((strata::rms_norm<float, float>(h, h, {})));
}

}  // namespace
