// SPDX-License-Identifier: Apache-2.0
// The backward of layer and RMS normalization against a double-precision reference (whose
// formula is itself checked against finite differences of the forward): fp32, bf16 and fp16;
// row lengths across both shapes (rows held by groups within a warp and by blocks, two passes
// past that); dense rows, strided rows (guard elements between them must stay), rows off 16-byte
// boundaries, dx written over dy or over x; with and without gamma, dgamma and dbeta. Every
// element of dx, dgamma and dbeta is checked. dgamma and dbeta keep their bits from run to run.
#include <strata/algorithm/norm_backward.hpp>
#include <strata/algorithm/normalize.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using strata::index_t;
using strata::norm_backward_shape;
using strata::norm_kind;

enum class layout { dense, strided, offset, dx_is_dy, dx_is_x };
const char* name(layout l) {
  static const char* n[] = {"dense", "strided", "offset", "dx over dy", "dx over x"};
  return n[int(l)];
}
enum class wanted { both, dgamma_only, none };
// Rows whose first element lies far from the rest (statistics computed from shifted sums lose
// their digits there); set by a test around its checks.
float first_element_offset = 0.0f;

/// The backward in double precision, from the inputs as stored.
struct reference {
  std::vector<double> dx, dgamma, dbeta;
  /// Per row, the size of the terms dx's formula adds (dx is their difference, much smaller where
  /// they cancel: rows of one or two elements), times the condition of xhat (|mean| / std: fp32
  /// rounds the mean): fp32's rounding error in dx scales with this.
  std::vector<double> row_scale;
  std::vector<double> dgamma_terms;  // per column, the sum of |dy * xhat| (dgamma's rounding scales with it)
};
reference backward_reference(norm_kind kind, const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>* gamma,
                             index_t rows, index_t cols, double eps) {
  reference ref{std::vector<double>(x.size()), std::vector<double>(std::size_t(cols)), std::vector<double>(std::size_t(cols)),
                std::vector<double>(std::size_t(rows)), std::vector<double>(std::size_t(cols))};
  for (index_t r = 0; r < rows; ++r) {
    const double* xr = &x[std::size_t(r * cols)];
    const double* dr = &dy[std::size_t(r * cols)];
    double mean = 0, var = 0;
    if (kind == norm_kind::layer) {
      for (index_t c = 0; c < cols; ++c) mean += xr[c];
      mean /= double(cols);
    }
    for (index_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const double rstd = 1.0 / std::sqrt(var / double(cols) + eps);
    double sg = 0, sgx = 0;
    for (index_t c = 0; c < cols; ++c) {
      const double g = dr[c] * (gamma ? (*gamma)[std::size_t(c)] : 1.0), xhat = (xr[c] - mean) * rstd;
      sg += g, sgx += g * xhat;
    }
    const double kappa = std::max(1.0, std::abs(mean) * rstd);
    for (index_t c = 0; c < cols; ++c) {
      const double g = dr[c] * (gamma ? (*gamma)[std::size_t(c)] : 1.0), xhat = (xr[c] - mean) * rstd;
      const double cg = kind == norm_kind::layer ? sg / double(cols) : 0.0, cgx = sgx / double(cols);
      ref.dx[std::size_t(r * cols + c)] = rstd * (g - cg - xhat * cgx);
      ref.row_scale[std::size_t(r)] = std::max(ref.row_scale[std::size_t(r)], kappa * rstd * (std::abs(g) + std::abs(cg) + std::abs(xhat * cgx)));
      ref.dgamma[std::size_t(c)] += dr[c] * xhat;
      ref.dgamma_terms[std::size_t(c)] += std::abs(dr[c] * xhat);
      ref.dbeta[std::size_t(c)] += dr[c];
    }
  }
  return ref;
}

/// The forward in double precision: sum over the rows of dy * norm(x).
double loss(norm_kind kind, const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>& gamma,
            const std::vector<double>& beta, index_t rows, index_t cols, double eps) {
  double l = 0;
  for (index_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    if (kind == norm_kind::layer) {
      for (index_t c = 0; c < cols; ++c) mean += x[std::size_t(r * cols + c)];
      mean /= double(cols);
    }
    for (index_t c = 0; c < cols; ++c) var += std::pow(x[std::size_t(r * cols + c)] - mean, 2);
    const double rstd = 1.0 / std::sqrt(var / double(cols) + eps);
    for (index_t c = 0; c < cols; ++c)
      l += dy[std::size_t(r * cols + c)] * ((x[std::size_t(r * cols + c)] - mean) * rstd * gamma[std::size_t(c)] +
                                            (kind == norm_kind::layer ? beta[std::size_t(c)] : 0.0));
  }
  return l;
}

TEST(NormBackwardReference, MatchesFiniteDifferencesOfTheForward) {
  std::mt19937_64 g(strata_test::test_seed());
  std::normal_distribution<double> d(0.3, 1.5);
  for (norm_kind kind : {norm_kind::layer, norm_kind::rms})
    for (index_t cols : {1, 2, 5, 17}) {
      const index_t rows = 3;
      std::vector<double> x(std::size_t(rows * cols)), dy(x.size()), gamma(static_cast<std::size_t>(cols)), beta(static_cast<std::size_t>(cols));
      for (auto* v : {&x, &dy, &gamma, &beta})
        for (double& e : *v) e = d(g);
      const double eps = 1e-3, h = 1e-6;
      const reference ref = backward_reference(kind, x, dy, &gamma, rows, cols, eps);
      auto central = [&](std::vector<double>& v, std::size_t i) {
        const double keep = v[i];
        v[i] = keep + h;
        const double up = loss(kind, x, dy, gamma, beta, rows, cols, eps);
        v[i] = keep - h;
        const double down = loss(kind, x, dy, gamma, beta, rows, cols, eps);
        v[i] = keep;
        return (up - down) / (2 * h);
      };
      for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(ref.dx[i], central(x, i), 1e-6) << "dx " << i << " cols " << cols;
      for (std::size_t c = 0; c < gamma.size(); ++c) {
        EXPECT_NEAR(ref.dgamma[c], central(gamma, c), 1e-6) << "dgamma " << c;
        if (kind == norm_kind::layer) {
          EXPECT_NEAR(ref.dbeta[c], central(beta, c), 1e-6) << "dbeta " << c;
        }
      }
    }
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1.5e-2;
}

/// Runs the backward on device rows in the given layout and checks dx, dgamma and dbeta against the
/// reference; gives the path taken and the bits of dgamma and dbeta.
template <norm_kind Kind, class T>
void check(index_t rows, index_t cols, layout l, bool with_gamma, wanted w, strata::norm_backward_path* taken = nullptr,
           std::vector<T>* sums = nullptr) {
  SCOPED_TRACE(std::string(Kind == norm_kind::layer ? "layer" : "rms") + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + name(l) +
               (with_gamma ? " gamma" : " no gamma") + (w == wanted::both ? " dgamma+dbeta" : w == wanted::dgamma_only ? " dgamma" : " dx only"));
  std::mt19937_64 g(strata_test::test_seed() ^ std::uint64_t(cols * 7919 + rows) ^ (std::uint64_t(l) << 40));
  std::normal_distribution<float> d(0.5f, 2.0f);
  const std::size_t n = std::size_t(rows * cols);
  std::vector<T> x(n), dy(n), gam(static_cast<std::size_t>(cols));
  for (auto& e : x) e = strata::from_float<T>(d(g));
  for (auto& e : dy) e = strata::from_float<T>(d(g));
  for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.2f * d(g));
  for (index_t r = 0; r < rows && cols > 0; ++r) x[std::size_t(r * cols)] = strata::from_float<T>(strata::to_float(x[std::size_t(r * cols)]) + first_element_offset);
  const T poison = strata::from_float<T>(12345.0f), guard = strata::from_float<T>(-777.0f);

  // One allocation per operand, rows at `pitch` starting `shift` elements in; guard elements
  // around and between the rows.
  const index_t pitch = l == layout::strided ? cols + 3 : cols, shift = l == layout::offset ? 1 : 0, slack = 19;
  const std::size_t span = std::size_t((rows > 0 ? rows - 1 : 0) * pitch + cols + shift + slack);
  auto place = [&](const std::vector<T>& v) {
    std::vector<T> out(span, guard);
    for (index_t r = 0; r < rows; ++r)
      for (index_t c = 0; c < cols; ++c) out[std::size_t(shift + r * pitch + c)] = v[std::size_t(r * cols + c)];
    return out;
  };
  strata::buffer bx(span * sizeof(T), strata::memory_space::device), bdy(span * sizeof(T), strata::memory_space::device),
      bdx(span * sizeof(T), strata::memory_space::device);
  strata::copy_bytes(bx.data(), place(x).data(), span * sizeof(T));
  strata::copy_bytes(bdy.data(), place(dy).data(), span * sizeof(T));
  strata::copy_bytes(bdx.data(), place(std::vector<T>(n, poison)).data(), span * sizeof(T));
  T* px = reinterpret_cast<T*>(bx.data()) + shift;
  T* pdy = reinterpret_cast<T*>(bdy.data()) + shift;
  T* pdx = l == layout::dx_is_dy ? pdy : l == layout::dx_is_x ? px : reinterpret_cast<T*>(bdx.data()) + shift;
  strata::buffer bg(std::max<std::size_t>(1, gam.size()) * sizeof(T), strata::memory_space::device);
  strata::copy_bytes(bg.data(), gam.data(), gam.size() * sizeof(T));
  std::vector<T> sums_init(2 * std::size_t(cols), poison);
  strata::buffer bsum(std::max<std::size_t>(1, sums_init.size()) * sizeof(T), strata::memory_space::device);
  strata::copy_bytes(bsum.data(), sums_init.data(), sums_init.size() * sizeof(T));
  T* pdg = reinterpret_cast<T*>(bsum.data());
  const cuda::std::span<const T> gs(with_gamma ? reinterpret_cast<const T*>(bg.data()) : nullptr, with_gamma ? std::size_t(cols) : 0);
  const cuda::std::span<T> dgs(w != wanted::none ? pdg : nullptr, w != wanted::none ? std::size_t(cols) : 0);
  const cuda::std::span<T> dbs(w == wanted::both ? pdg + cols : nullptr, w == wanted::both ? std::size_t(cols) : 0);
  const auto xv = strata::make_matrix_view<const T>(px, rows, cols, pitch), dyv = strata::make_matrix_view<const T>(pdy, rows, cols, pitch);
  const auto dxv = strata::make_matrix_view<T>(pdx, rows, cols, pitch);
  strata::norm_backward_path p;
  if constexpr (Kind == norm_kind::layer) p = strata::layer_norm_backward<T>(xv, dyv, gs, dxv, dgs, dbs, 1e-5f);
  else p = strata::rms_norm_backward<T>(xv, dyv, gs, dxv, dgs, 1e-5f);
  strata::synchronize(strata::stream_t{});

  std::vector<T> back(span), sums_back(sums_init.size());
  strata::copy_bytes(back.data(), pdx - shift, span * sizeof(T));
  strata::copy_bytes(sums_back.data(), pdg, sums_back.size() * sizeof(T));
  std::vector<double> xd(n), dyd(n), gd(gam.size());
  for (std::size_t i = 0; i < n; ++i) xd[i] = strata::to_float(x[i]), dyd[i] = strata::to_float(dy[i]);
  for (std::size_t c = 0; c < gam.size(); ++c) gd[c] = strata::to_float(gam[c]);
  const reference ref = backward_reference(Kind, xd, dyd, with_gamma ? &gd : nullptr, rows, cols, 1e-5);
  for (std::size_t i = 0; i < span; ++i) {
    const index_t at = index_t(i) - shift, r = at >= 0 ? at / pitch : -1, c = at >= 0 ? at % pitch : -1;
    if (r >= 0 && r < rows && c < cols) {
      const double got = strata::to_float(back[i]), want = ref.dx[std::size_t(r * cols + c)];
      ASSERT_TRUE(std::isfinite(got) && got != 12345.0) << "dx row " << r << " col " << c << " not written";
      ASSERT_LE(std::abs(got - want), tolerance<T>() * ref.row_scale[std::size_t(r)]) << "dx row " << r << " col " << c << ": " << got << " want " << want;
    } else if (l != layout::dx_is_x && l != layout::dx_is_dy) {
      ASSERT_EQ(std::memcmp(&back[i], &guard, sizeof(T)), 0) << "element " << i << " outside the rows was written";
    }
  }
  // Column sums: rounding grows with the rows added; the bound scales with the sum of magnitudes.
  for (index_t c = 0; c < cols; ++c) {
    double mag_g = 1e-30, mag_b = 1e-30;
    for (index_t r = 0; r < rows; ++r) {
      const double dyv_ = dyd[std::size_t(r * cols + c)];
      mag_b += std::abs(dyv_), mag_g += std::abs(dyv_);
    }
    const T* got = sums_back.data();
    if (w == wanted::none) {
      ASSERT_EQ(std::memcmp(&got[c], &poison, sizeof(T)), 0) << "dgamma written though not asked for";
      continue;
    }
    EXPECT_LE(std::abs(strata::to_float(got[c]) - ref.dgamma[std::size_t(c)]), tolerance<T>() * (mag_g + 2 * ref.dgamma_terms[std::size_t(c)]))
        << "dgamma col " << c;
    if (w == wanted::both && Kind == norm_kind::layer)
      EXPECT_LE(std::abs(strata::to_float(got[cols + c]) - ref.dbeta[std::size_t(c)]), tolerance<T>() * mag_b) << "dbeta col " << c;
    else
      ASSERT_EQ(std::memcmp(&got[cols + c], &poison, sizeof(T)), 0) << "dbeta written though not asked for";
  }
  if (sums) *sums = sums_back;
  if (taken) *taken = p;
}

template <class T>
class NormBackward : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates fp32 and bf16:
// fp16 takes bf16's 16-bit code with another conversion. Every other build runs all three.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Dtypes = ::testing::Types<float, strata::bfloat16>;
#else
using Dtypes = ::testing::Types<float, strata::bfloat16, strata::half>;
#endif
TYPED_TEST_SUITE(NormBackward, Dtypes);

// Row lengths across the group sizes (1 to 32 threads, blocks of 64 to 1024) and past what a
// block holds (two passes).
TYPED_TEST(NormBackward, EveryRowLengthLayoutAndKind) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  constexpr index_t held = index_t(strata::detail::norm_bwd::max_held) * strata::detail::norm_bwd::max_group;
  std::vector<index_t> lengths = {1, 2, 3, 7, 8, 16, 17, 64, 100, 128, 255, 256, 768, 1000, 2048, 2880, 4096, held, held + 1, held + 8};
  if (!strata_test::under_sanitizer()) lengths.insert(lengths.end(), {5120, 40000});
  for (index_t cols : lengths)
    for (layout l : {layout::dense, layout::strided, layout::offset, layout::dx_is_dy, layout::dx_is_x}) {
      const index_t rows = cols >= held ? 3 : cols >= 1000 ? 9 : 37;
      strata::norm_backward_path p;
      check<norm_kind::layer, T>(rows, cols, l, true, wanted::both, &p);
      const bool vec = l != layout::strided && l != layout::offset && cols % strata::detail::norm_bwd::lanes<T> == 0;
      EXPECT_EQ(p.access, vec ? strata::path::vectorized : strata::path::scalar);
      EXPECT_EQ(p.shape, cols > held ? norm_backward_shape::two_pass : norm_backward_shape::rows_held);
      check<norm_kind::rms, T>(rows, cols, l, true, wanted::dgamma_only);
      if (cols == 100 || cols == held + 1) {
        check<norm_kind::layer, T>(rows, cols, l, false, wanted::both);
        check<norm_kind::rms, T>(rows, cols, l, false, wanted::none);
        check<norm_kind::layer, T>(rows, cols, l, true, wanted::dgamma_only);
      }
    }
}

// Many rows: every block takes several rows of its groups (the grid stops at what the device
// holds), and partial sums of hundreds of blocks.
TYPED_TEST(NormBackward, ManyRows) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  const index_t many = strata_test::under_sanitizer() ? 3000 : 20000;
  for (index_t cols : {64, 128, 1000}) {
    check<norm_kind::layer, T>(many, cols, layout::dense, true, wanted::both);
    check<norm_kind::rms, T>(many, cols, layout::dense, true, wanted::dgamma_only);
  }
  check<norm_kind::layer, T>(strata_test::under_sanitizer() ? 40 : 300, 20000, layout::dense, true, wanted::both);
}

// A row's first element far from its mean: the statistics are exact two-pass sums in both shapes
// (a one-pass sum shifted by the first element loses digits as (x0 - mean)^2 / var grows).
TEST(NormBackward, RowsWhoseFirstElementIsAnOutlier) {
  first_element_offset = 1000.0f;
  for (index_t cols : {1000, 20000}) {
    check<norm_kind::layer, float>(5, cols, layout::dense, true, wanted::both);
    check<norm_kind::rms, float>(5, cols, layout::dense, true, wanted::dgamma_only);
  }
  first_element_offset = 0.0f;
}

// Rows whose accumulators do not fit the device's shared memory a block take two passes instead
// of a refusal (sm_75 allows 64 KiB a block, sm_86 / sm_89 / sm_120 99 KiB).
TEST(NormBackwardPlan, RowsHeldOnlyWhereTheirAccumulatorsFit) {
  namespace nb = strata::detail::norm_bwd;
  const std::size_t kib = 1024;
  EXPECT_EQ(nb::shape_within<float>(8192, true, 2, 64 * kib).shape, norm_backward_shape::two_pass);
  EXPECT_EQ(nb::shape_within<float>(8192, true, 1, 64 * kib).shape, norm_backward_shape::rows_held);
  EXPECT_EQ(nb::shape_within<float>(16384, true, 2, 99 * kib).shape, norm_backward_shape::two_pass);
  EXPECT_EQ(nb::shape_within<float>(12288, true, 2, 99 * kib).shape, norm_backward_shape::rows_held);
  EXPECT_EQ(nb::shape_within<float>(16384, true, 2, 227 * kib).shape, norm_backward_shape::rows_held);
  for (index_t cols = 1; cols <= 16384; cols += 97)
    for (int stats : {0, 1, 2})
      for (std::size_t limit : {64 * kib, 99 * kib, 227 * kib}) {
        const nb::plan p = nb::shape_within<strata::bfloat16>(cols, cols % 8 == 0, stats, limit);
        if (p.shape == norm_backward_shape::rows_held) {
          EXPECT_LE(nb::held_shared(p, stats), limit) << cols;
        }
      }
}

TEST(NormBackward, ColumnSumsKeepTheirBits) {
  std::vector<float> first, second;
  for (index_t cols : {64, 1000, 20000}) {
    const index_t rows = cols > 10000 ? 50 : 2000;
    check<norm_kind::layer, float>(rows, cols, layout::dense, true, wanted::both, nullptr, &first);
    check<norm_kind::layer, float>(rows, cols, layout::dense, true, wanted::both, nullptr, &second);
    ASSERT_EQ(first.size(), second.size());
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << cols << " columns";
  }
}

TEST(NormBackward, NoRowsWriteZeroSums) {
  strata::buffer x(64, strata::memory_space::device), dy(64, strata::memory_space::device), dx(64, strata::memory_space::device);
  std::vector<float> sums(10, 5.0f);
  strata::buffer bs(sums.size() * sizeof(float), strata::memory_space::device);
  strata::copy_bytes(bs.data(), sums.data(), sums.size() * sizeof(float));
  auto* s = reinterpret_cast<float*>(bs.data());
  const auto xv = strata::make_matrix_view<const float>(reinterpret_cast<const float*>(x.data()), 0, 5, 5);
  const auto dyv = strata::make_matrix_view<const float>(reinterpret_cast<const float*>(dy.data()), 0, 5, 5);
  const auto dxv = strata::make_matrix_view<float>(reinterpret_cast<float*>(dx.data()), 0, 5, 5);
  strata::layer_norm_backward<float>(xv, dyv, {}, dxv, {s, 5}, {s + 5, 5});
  strata::synchronize(strata::stream_t{});
  strata::copy_bytes(sums.data(), s, sums.size() * sizeof(float));
  for (float v : sums) EXPECT_EQ(v, 0.0f);
}

TEST(NormBackwardErrors, ShapesSizesAndOverlapsAreRefusedBeforeAnythingIsWritten) {
  strata::matrix<float> x(4, 10), dy(4, 10), dx(4, 10), dx_short(3, 10);
  std::vector<float> ones(40, 1.0f);
  x = strata::matrix<float>(4, 10, ones.data()), dy = strata::matrix<float>(4, 10, ones.data()), dx = strata::matrix<float>(4, 10, ones.data());
  strata::buffer gb(64 * sizeof(float), strata::memory_space::device);
  auto* g = reinterpret_cast<float*>(gb.data());
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, dx_short.view(), {}, {}), strata::size_error);
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {g, 9}, dx.view(), {}, {}), strata::size_error);
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, dx.view(), {g, 11}, {}), strata::size_error);
  // dx one element past x's start: neither x's rows nor apart from them.
  auto shifted = x.view();
  shifted.data += 1, shifted.cols = 9;
  auto xs = x.const_view();
  xs.cols = 9;
  auto dys = dy.const_view();
  dys.cols = 9;
  EXPECT_THROW(strata::layer_norm_backward<float>(xs, dys, {}, shifted, {}, {}), std::invalid_argument);
  // dgamma inside dx; dgamma and dbeta overlapping.
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, dx.view(), {dx.view().data, 10}, {}), std::invalid_argument);
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, dx.view(), {g, 10}, {g + 5, 10}), std::invalid_argument);
  std::vector<float> back(40);
  dx.copy_to_host(back.data());
  for (float v : back) EXPECT_EQ(v, 1.0f);
  // Views filled by hand: negative sizes, a pitch that wraps the address space.
  auto negative = dx.view();
  negative.rows = -1;
  EXPECT_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, negative, {g, 10}, {}), strata::size_error);
  auto wrapping = x.const_view();
  wrapping.pitch = strata::index_t(1) << 61;
  EXPECT_THROW(strata::layer_norm_backward<float>(wrapping, dy.const_view(), {}, dx.view(), {}, {}), strata::size_error);
  // dx over dy or x, row for row, is allowed.
  EXPECT_NO_THROW(strata::layer_norm_backward<float>(x.const_view(), dy.const_view(), {}, strata::matrix_view<float>(dy.view()), {}, {}));
}

}  // namespace
