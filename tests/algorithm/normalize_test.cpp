// SPDX-License-Identifier: Apache-2.0
// Layer and RMS normalization against a double-precision reference: fp32, bf16 and fp16; row
// lengths from 1 to 2^22 elements that cross every configuration the chooser can pick (groups
// within a warp, blocks, long rows streamed in chunks); strata's padded matrix (its padding stays
// zero), dense rows someone else owns (guard elements after them must stay as they were), a
// strided slice whose rows start at every offset from 16-byte boundaries, an output that lies at
// another offset than the input (element stores), gamma and beta off their boundaries, in place;
// with and without gamma and beta. Every output element is checked. The chooser is checked to cover every row.
#include <strata/algorithm/normalize.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace {

using strata::index_t;
using strata::norm_kind;

enum class layout { matrix, dense, strided, in_place, shifted_output };
const char* name(layout l) {
  static const char* n[] = {"matrix", "dense", "strided", "in place", "shifted output"};
  return n[int(l)];
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 8e-3;
}

// Which of gamma and beta an affine layer norm is given (the kernels fold a missing one per call).
enum class given { both, gamma_only, beta_only };

// affine_offset: gamma and beta start this many elements past a 16-byte boundary.
// forced: the plan to run instead of the chosen one.
template <norm_kind Kind, class T>
void check(index_t rows, index_t cols, layout l, bool affine, int affine_offset = 0, given which = given::both,
           const strata::detail::norm::plan* forced = nullptr) {
  SCOPED_TRACE(std::string(Kind == norm_kind::layer ? "layer" : "rms") + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
               name(l) + (affine ? " affine" : " plain") + (affine_offset ? " affine+" + std::to_string(affine_offset) : "") +
               (which == given::gamma_only ? " gamma only" : which == given::beta_only ? " beta only" : ""));
  const bool with_gamma = affine && which != given::beta_only, with_beta = affine && which != given::gamma_only;
  std::mt19937_64 g(strata_test::test_seed() ^ std::uint64_t(cols * 131 + rows) ^ std::uint64_t(l));
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<T> x(static_cast<std::size_t>(rows * cols)), gam(static_cast<std::size_t>(cols)), bet(static_cast<std::size_t>(cols));
  for (auto& e : x) e = strata::from_float<T>(d(g));
  for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.1f * d(g));
  for (auto& e : bet) e = strata::from_float<T>(0.1f * d(g));
  const T poison = strata::from_float<T>(12345.0f), guard = strata::from_float<T>(-777.0f);

  // Rows in the chosen layout; out is read back dense. Foreign layouts get guard elements after
  // the last row (dense) or between rows (strided): they must come back unchanged.
  const index_t pitch = l == layout::strided ? cols + 3 : cols, slack = 37;
  strata::matrix<T> mx, my;
  strata::buffer fx, fy;
  strata::matrix_view<const T> xv;
  strata::matrix_view<T> yv;
  std::vector<T> foreign_in(static_cast<std::size_t>(rows * pitch + slack), guard), foreign_out = foreign_in;
  if (l == layout::matrix) {
    mx = strata::matrix<T>(rows, cols, x.data());
    std::vector<T> p(x.size(), poison);
    my = strata::matrix<T>(rows, cols, p.data());
    xv = mx.const_view(), yv = my.view();
  } else {
    for (index_t r = 0; r < rows; ++r)
      for (index_t c = 0; c < cols; ++c)
        foreign_in[std::size_t(r * pitch + c)] = x[std::size_t(r * cols + c)], foreign_out[std::size_t(r * pitch + c)] = poison;
    // The shifted output starts one element past the allocation's start: its rows lie at another
    // offset from 16-byte boundaries than the input's.
    const std::size_t shift = l == layout::shifted_output ? 1 : 0;
    fx = strata::buffer(foreign_in.size() * sizeof(T), strata::memory_space::device);
    fy = strata::buffer((foreign_out.size() + shift) * sizeof(T), strata::memory_space::device);
    strata::copy_bytes(fx.data(), foreign_in.data(), fx.bytes());
    T* out = reinterpret_cast<T*>(fy.data()) + shift;
    strata::copy_bytes(out, l == layout::in_place ? foreign_in.data() : foreign_out.data(), foreign_out.size() * sizeof(T));
    xv = strata::make_matrix_view<const T>(l == layout::in_place ? out : reinterpret_cast<const T*>(fx.data()), rows, cols, pitch);
    yv = strata::make_matrix_view(out, rows, cols, pitch);
  }
  const std::size_t off = std::size_t(affine_offset);
  strata::buffer gb((gam.size() + off) * sizeof(T), strata::memory_space::device), bb((bet.size() + off) * sizeof(T), strata::memory_space::device);
  const T* gp = reinterpret_cast<const T*>(gb.data()) + off;
  const T* bp = reinterpret_cast<const T*>(bb.data()) + off;
  strata::copy_bytes(const_cast<T*>(gp), gam.data(), gam.size() * sizeof(T));
  strata::copy_bytes(const_cast<T*>(bp), bet.data(), bet.size() * sizeof(T));
  const cuda::std::span<const T> gs(with_gamma ? gp : nullptr, with_gamma ? std::size_t(cols) : 0);
  const cuda::std::span<const T> bs(with_beta ? bp : nullptr, with_beta ? std::size_t(cols) : 0);
  strata::path p;
  if (forced) p = strata::detail::norm::run_with<Kind>(*forced, xv, yv, gs, Kind == norm_kind::layer ? bs : cuda::std::span<const T>{}, 1e-5f);
  else if constexpr (Kind == norm_kind::layer) p = strata::layer_norm<T>(xv, yv, gs, bs, 1e-5f);
  else p = strata::rms_norm<T>(xv, yv, gs, 1e-5f);
  strata::synchronize(strata::stream_t{});
  // Whole units are stored as vectors wherever the output's rows lie like the input's.
  EXPECT_EQ(p, l == layout::shifted_output ? strata::path::scalar : strata::path::vectorized);

  std::vector<T> y(x.size());
  if (l == layout::matrix) {
    my.copy_to_host(y.data());
    // The matrix's padding stays zero (a partial last unit is stored whole, zeros past the row).
    std::vector<T> raw(static_cast<std::size_t>(rows * my.pitch()));
    strata::copy_bytes(raw.data(), yv.data, raw.size() * sizeof(T));
    const T zero = strata::from_float<T>(0.0f);
    for (index_t r = 0; r < rows; ++r)
      for (index_t c = cols; c < my.pitch(); ++c)
        ASSERT_EQ(std::memcmp(&raw[std::size_t(r * my.pitch() + c)], &zero, sizeof(T)), 0) << "padding of row " << r << " at " << c << " written";
  } else {
    std::vector<T> back(foreign_out.size());
    strata::copy_bytes(back.data(), yv.data, back.size() * sizeof(T));
    for (std::size_t i = 0; i < back.size(); ++i) {
      const index_t r = index_t(i) / pitch, c = index_t(i) % pitch;
      if (r < rows && c < cols) y[std::size_t(r * cols + c)] = back[i];
      else ASSERT_EQ(std::memcmp(&back[i], &guard, sizeof(T)), 0) << "element " << i << " outside the rows was written";
    }
  }
  double err2 = 0, ref2 = 0;
  for (index_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (index_t c = 0; c < cols; ++c) mean += strata::to_float(x[std::size_t(r * cols + c)]);
    mean = Kind == norm_kind::layer ? mean / double(cols) : 0.0;
    for (index_t c = 0; c < cols; ++c) var += std::pow(strata::to_float(x[std::size_t(r * cols + c)]) - mean, 2);
    var /= double(cols);
    // fp32 arithmetic rounds the mean; x - mean then carries that error, amplified by
    // 1/sqrt(var + eps): each row's error is scaled by that condition number.
    const double kappa = std::max(1.0, std::abs(mean) / std::sqrt(var + 1e-5));
    for (index_t c = 0; c < cols; ++c) {
      const double gm = with_gamma ? strata::to_float(gam[std::size_t(c)]) : 1.0;
      const double bt = with_beta && Kind == norm_kind::layer ? strata::to_float(bet[std::size_t(c)]) : 0.0;
      const double want = (strata::to_float(x[std::size_t(r * cols + c)]) - mean) / std::sqrt(var + 1e-5) * gm + bt;
      const double got = strata::to_float(y[std::size_t(r * cols + c)]);
      ASSERT_TRUE(std::isfinite(got) && got != 12345.0) << "row " << r << " col " << c << " not written";
      err2 += (got - want) * (got - want) / (kappa * kappa), ref2 += want * want;
    }
  }
  EXPECT_LT(std::sqrt(err2 / std::max(ref2, 1e-30)), tolerance<T>());
}

template <class T>
class Normalize : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates fp32 and bf16:
// fp16 takes bf16's 16-bit code with another conversion. Every other build runs all three.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Dtypes = ::testing::Types<float, strata::bfloat16>;
#else
using Dtypes = ::testing::Types<float, strata::bfloat16, strata::half>;
#endif
TYPED_TEST_SUITE(Normalize, Dtypes);

// Row lengths at and around configuration boundaries: groups within a warp, whole blocks of 1 to 8
// units per thread up to 512 threads (4096 units), blocks holding 1 to 8 more units a thread in
// shared memory past that (layer norm 2), streamed chunks beyond.
TYPED_TEST(Normalize, EveryRowLengthLayoutAndKind) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  std::vector<index_t> lengths = {1, 2, 3, 5, 7, 9, 31, 32, 100, 127, 128, 257, 513, 1000, 1023, 1024, 1025, 3000, 4095, 4096, 4097, 5120, 12288, 16384, 16395};
  // rows of 5000 and 8192 whole units: a block of more than 512 threads per row (block_rows_kernel)
  // in every dtype, under the sanitizers too
  constexpr index_t L = strata::detail::norm::lanes<T>;
  lengths.insert(lengths.end(), {5000 * L, 8192 * L});
  if (!strata_test::under_sanitizer()) lengths.insert(lengths.end(), {16388, 20000, 32768, 32769, 36000, 65536, 65537, 100003});
  for (index_t cols : lengths)
    for (layout l : {layout::matrix, layout::dense, layout::strided, layout::in_place, layout::shifted_output}) {
      const index_t rows = cols > 20000 ? 3 : 9;  // strided rows: nine cover every offset of a row start
      check<norm_kind::layer, T>(rows, cols, l, true);
      check<norm_kind::rms, T>(rows, cols, l, cols % 2 == 0);
      if (cols == 1000 || cols == 1) check<norm_kind::layer, T>(rows, cols, l, false);  // width 1: all zeros
      if (cols == 1025 || cols == 5120 || cols == 3) check<norm_kind::layer, T>(rows, cols, l, true, 1);
      if (cols == 1000 || cols == 1025 || cols == 20000 || cols == 36000) {
        check<norm_kind::layer, T>(rows, cols, l, true, 0, given::gamma_only);
        check<norm_kind::layer, T>(rows, cols, l, true, 0, given::beta_only);
      }
      if (cols == 5000 * L && l == layout::matrix) {  // more rows than the GPU holds blocks at once
        const index_t many = strata_test::under_sanitizer() ? 140 : 300;
        check<norm_kind::layer, T>(many, cols, l, true);
        check<norm_kind::layer, T>(many, cols, l, true, 0, given::beta_only);
        check<norm_kind::rms, T>(many, cols, l, true);
      }
    }
}

// The plan covers every row it is chosen for: the group's units hold the row's whole units (the
// parts' units span the row), the group has a thread for each element of the partial first and
// last units, groups within a
// warp are powers of two and larger ones whole warps of at most max_group threads; row plans
// prefetch about the model's prefetch bytes ahead, streamed plans and blocks holding units in
// shared memory nothing; those blocks hold at most the kind's limit and fit twice an SM; clusters
// hold rows of whole units only, every block some of the row; on a GPU model (RMS and layer
// norm's limits) and on one where blocks above 256 threads do not fit.
TEST(NormalizePlan, EveryRowIsCovered) {
  namespace sn = strata::detail::norm;
  sn::device_model small = sn::host_model(), layer = sn::host_model_for(norm_kind::layer);
  small.blocks_per_sm = [](const sn::plan& p) { return p.block > 256 ? 0 : 4; };
  const sn::device_model stacked = sn::host_model_for(norm_kind::rms, true, false, 2);
  for (const sn::device_model& model : {sn::host_model(), layer, small, stacked})
    for (index_t units = 1; units <= 70000; units += units < 5000 ? 1 : 997)
      for (int min_group : {0, 3, 7, 14}) {
        // the whole units: all of them, or all but a partial last unit, or a partial first one too
        const index_t held = std::max<index_t>(1, units - (min_group == 0 ? 0 : min_group < 8 ? 1 : 2));
        const sn::plan p = sn::choose(sn::row_units{units, held, min_group}, model);
        SCOPED_TRACE(std::to_string(units) + " units, " + std::to_string(held) + " whole, " + std::to_string(min_group) +
                     " partial elements: " + sn::describe(p));
        ASSERT_GE(index_t(p.parts) * p.group * (p.vpt + p.spill), p.shape == sn::shape::streamed ? units : held);
        ASSERT_LE(p.spill, model.max_spill);
        ASSERT_GE(p.group, min_group);
        ASSERT_TRUE(p.vpt >= 1 && p.vpt <= sn::max_vpt);
        ASSERT_TRUE(p.group <= 32 ? strata::is_pow2(std::size_t(p.group)) : p.group % 32 == 0 && p.group <= model.row_group);
        if (p.shape == sn::shape::rows && p.spill > 0) {  // a block per row, past the registers' capacity
          ASSERT_GT(held, index_t(sn::max_group) * sn::max_vpt);
          ASSERT_TRUE(p.group == p.block && p.vpt == sn::max_vpt && p.ahead == 0);
          ASSERT_GE(model.blocks_per_sm(p), 2);
        } else if (p.shape == sn::shape::rows) {
          ASSERT_EQ(p.block % p.group, 0);
          if (p.stack > 1) {  // rows of whole units only, groups within a warp, 2 or more units of each row a thread
            ASSERT_TRUE(model.stacked && min_group == 0 && held == units);
            ASSERT_TRUE(p.group <= 32 && p.vpt >= 2 && p.vpt * p.stack <= sn::max_vpt);
          }
          // the prefetch distance: the rows nearest the model's prefetch bytes, at least one
          const double row_bytes = double(units) * 16;
          ASSERT_GE(p.ahead, 1);
          ASSERT_NEAR(double(p.ahead) * row_bytes, std::max(model.prefetch_bytes, row_bytes), row_bytes / 2 + 1);
        } else if (p.shape == sn::shape::cluster) {  // rows of whole units past a block's registers
          ASSERT_EQ(held, units);
          ASSERT_GT(held, index_t(model.row_group) * sn::max_vpt);
          ASSERT_TRUE(p.block == p.group && p.parts >= 2 && p.parts <= model.max_cluster && p.ahead >= 1);
          ASSERT_LT(index_t(p.parts - 1) * p.group * p.vpt, held);  // every block holds some of the row
        } else {  // streamed: whole blocks per chunk, and a lag of at least a row's chunks (no deadlock)
          ASSERT_EQ(p.block, p.group);
          ASSERT_GE(p.lag, p.parts);
          ASSERT_GT(p.grid, 0);
          ASSERT_EQ(p.ahead, 0);
        }
        ASSERT_GT(model.blocks_per_sm(p), 0);
      }
}

// A row plan scores within the element size's share of the best weighed row plan's score (16-bit
// rows: 0.95, 4-byte: 0.85), and no plan holding fewer units a thread does: on the model GPU,
// 16-bit rows take plans holding more units a thread than 4-byte rows of the same units at some
// lengths. Plans that serve rows poorly are weighed only where nothing else fits: a row of one
// unit takes a thread, longer rows never a thread holding 3 or more units or a group narrower
// than 64 bytes holding 4 or more.
TEST(NormalizePlan, SixteenBitRowsTakePlansNearerTheBestScore) {
  namespace sn = strata::detail::norm;
  int differ = 0;
  for (index_t units = 1; units <= 4096; ++units) {
    sn::plan chosen[2];
    for (int i = 0; i < 2; ++i) {
      const int size = i == 0 ? 4 : 2;
      const sn::device_model model = sn::host_model_for(norm_kind::layer, true, false, size);
      const sn::plan p = sn::choose(sn::row_units{units, units, 0}, model);
      SCOPED_TRACE(std::to_string(units) + " units of " + std::to_string(size) + "-byte elements: " + sn::describe(p));
      ASSERT_FALSE(sn::poorly_coalesced(p));
      if (units == 1) {
        ASSERT_EQ(p.group, 1);
      }
      auto score_of = [&](const sn::plan& q) { return sn::score(q, units, model.blocks_per_sm(q), model.target_bytes_per_sm); };
      const sn::row_units u{units, units, 0};
      double best = 0;
      for (const sn::plan& q : sn::weighed_rows(u, model)) best = std::max(best, score_of(q));
      ASSERT_GE(score_of(p), sn::row_score_share(size) * best - 1e-9);
      for (const sn::plan& q : sn::weighed_rows(u, model)) {
        if (q.vpt * q.stack < p.vpt * p.stack) {
          ASSERT_LT(score_of(q), sn::row_score_share(size) * best - 1e-9) << sn::describe(q);
        }
      }
      chosen[i] = p;
    }
    differ += chosen[1].vpt * chosen[1].stack > chosen[0].vpt * chosen[0].stack ? 1 : 0;
    ASSERT_GE(chosen[1].vpt * chosen[1].stack, chosen[0].vpt * chosen[0].stack);
  }
  EXPECT_GT(differ, 0);
}

// Rows ending in a partial unit (or starting in one) hold its elements one a thread: a group
// narrower than 64 bytes holding 2 or more units a thread serves them poorly and is chosen only
// where nothing else fits, in every kind and element size; rows of whole units may still take one
// (with fewer than 4 units a thread).
TEST(NormalizePlan, RowsWithPartialUnitsAvoidNarrowGroupsOfSeveralUnits) {
  namespace sn = strata::detail::norm;
  int narrow_whole = 0;
  for (norm_kind kind : {norm_kind::layer, norm_kind::rms})
    for (int size : {4, 2}) {
      const sn::device_model model = sn::host_model_for(kind, true, true, size);
      for (index_t held = 1; held <= 300; ++held)
        for (int partial : {0, 1, 3, 7}) {
          const sn::row_units u{held + (partial > 0), held, partial};
          const sn::plan p = sn::choose(u, model);
          SCOPED_TRACE(std::to_string(held) + " whole units, " + std::to_string(partial) + " partial elements: " + sn::describe(p));
          const std::vector<sn::plan> all = sn::row_candidates(u.held, u.partial, model.row_group, model.stacked);
          const bool other = std::any_of(all.begin(), all.end(), [&](const sn::plan& q) { return !sn::poorly_coalesced(q, partial); });
          if (other) {
            ASSERT_FALSE(sn::poorly_coalesced(p, partial));
          }
          if (partial > 0 && held >= 2) {
            ASSERT_FALSE(p.group * 16 < 64 && p.vpt >= 2);
          }
          narrow_whole += partial == 0 && p.group * 16 < 64 && p.vpt >= 2 ? 1 : 0;
        }
    }
  EXPECT_GT(narrow_whole, 0);  // the rule for whole rows stays as it was
}

// A row's partial units take no slot: rows of 8 x 128 + 1 and 8 x 128 + 7 bf16 elements (129 units
// spanned, 128 or 127 whole) get the plan of rows of 8 x 128, and a row starting off a 16-byte
// boundary whose whole units are 128 the same, while 129 whole units need more slots.
TEST(NormalizePlan, PartialUnitsTakeNoSlot) {
  namespace sn = strata::detail::norm;
  for (norm_kind kind : {norm_kind::layer, norm_kind::rms}) {
    const sn::device_model model = sn::host_model_for(kind);
    const sn::plan even = sn::choose(sn::row_units{128, 128, 0}, model);
    for (const sn::row_units u : {sn::row_units{129, 128, 1}, sn::row_units{129, 127, 7}, sn::row_units{130, 128, 8}}) {
      const sn::plan p = sn::choose(u, model);
      EXPECT_EQ(p.group * p.vpt, even.group * even.vpt) << sn::describe(p) << " against " << sn::describe(even);
    }
    const sn::plan more = sn::choose(sn::row_units{129, 129, 0}, model);
    EXPECT_GE(more.group * more.vpt, 129) << sn::describe(more);
  }
}

// Rows on 16-byte boundaries ending in a partial unit run the rows kernel's variant for them; a
// block partly in shared memory or a streamed chunk runs the general code for such rows, and rows
// of whole units the whole-unit code whatever the plan.
TEST(NormalizePlan, CodeForEachPlan) {
  namespace sn = strata::detail::norm;
  sn::plan rows, wide, streamed;
  wide.spill = 2, streamed.shape = sn::shape::streamed;
  EXPECT_EQ(sn::code_for(rows, true, true), sn::code::whole_tail);
  EXPECT_EQ(sn::code_for(wide, true, true), sn::code::general);
  EXPECT_EQ(sn::code_for(streamed, true, true), sn::code::general);
  for (const sn::plan& p : {rows, wide, streamed}) {
    EXPECT_EQ(sn::code_for(p, true, false), sn::code::whole);
    EXPECT_EQ(sn::code_for(p, false, false), sn::code::general);
    EXPECT_EQ(sn::code_for(p, false, true), sn::code::general);
  }
}

// Which rows take a block partly in shared memory on the model GPU: just past the registers'
// 4096 units a block (1 unit a thread more), up to 8 more for RMS norm and 2 for layer norm;
// streamed beyond.
TEST(NormalizePlan, WideRowsUpToTheKindsLimit) {
  namespace sn = strata::detail::norm;
  const auto whole_rows = [](index_t units, int partial) { return sn::row_units{units, units, partial}; };
  const sn::device_model rms = sn::host_model_for(norm_kind::rms), layer = sn::host_model_for(norm_kind::layer);
  EXPECT_EQ(sn::choose(whole_rows(4096, 0), rms).spill, 0);
  EXPECT_EQ(sn::choose(whole_rows(4097, 14), rms).spill, 1);
  EXPECT_EQ(sn::choose(whole_rows(4097, 14), layer).spill, 1);
  EXPECT_EQ(sn::choose(whole_rows(5120, 0), layer).spill, 2);
  EXPECT_EQ(sn::choose(whole_rows(5121, 0), layer).shape, sn::shape::streamed);
  EXPECT_EQ(sn::choose(whole_rows(8192, 0), rms).spill, 8);
  EXPECT_EQ(sn::choose(whole_rows(8193, 0), rms).shape, sn::shape::streamed);
  const sn::plan p = sn::choose(whole_rows(6000, 0), rms);
  EXPECT_EQ(sn::describe(p), "rows group=512 vpt=8 block=512 spill=4");
  // A device that lets a block take only 48 KiB of dynamic shared memory: 6 units a thread fit
  // (512 threads x 6 x 16 bytes), 7 do not, and such rows stream instead.
  sn::device_model small = rms;
  small.max_block_shared = 48 * 1024;
  EXPECT_EQ(sn::choose(whole_rows(4096 + 6 * 512, 0), small).spill, 6);
  EXPECT_EQ(sn::choose(whole_rows(4096 + 6 * 512 + 1, 0), small).shape, sn::shape::streamed);
  EXPECT_EQ(sn::choose(whole_rows(4096 + 6 * 512 + 1, 0), rms).spill, 7);
  small.max_block_shared = 0;  // no room past the default: no shared-memory plan at all
  EXPECT_EQ(sn::choose(whole_rows(4097, 14), small).shape, sn::shape::streamed);
}

// More rows than the GPU holds at once (rows in several waves; streamed rows with more chunks than
// the grid has blocks), and rows of 2^22 elements.
TYPED_TEST(Normalize, ManyRowsAndVeryLongRows) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  check<norm_kind::layer, T>(20000, 96, layout::matrix, true);
  check<norm_kind::layer, T>(3000, 2048, layout::dense, true);
  if (strata_test::under_sanitizer()) return;
  check<norm_kind::layer, T>(300, 40000, layout::dense, true);
  check<norm_kind::rms, T>(300, 40000, layout::matrix, true);
  check<norm_kind::layer, T>(2, index_t(1) << 22, layout::dense, true);
  check<norm_kind::rms, T>(2, index_t(1) << 22, layout::matrix, false);
}

// Streamed rows (shape::streamed) given small chunks, so that rows have 1 to 130 of them, on grids
// of 3 blocks (far fewer than the items) and 64, with the shortest lag that is safe (a row's
// chunks: a row's normalize items then follow its last statistics item at once and wait for its
// merge) and a longer one; one row and more rows than the grid has blocks. Forced streamed plans
// that could leave part of a row unwritten or wait for ever are refused.
TYPED_TEST(Normalize, StreamedRowsMergeTheirStatisticsOnce) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  constexpr index_t L = sn::lanes<T>;
  for (const int vpt : {1, 3})
    for (const index_t parts : {index_t(1), index_t(2), index_t(33), index_t(130)}) {
      const index_t units = parts * 32 * vpt - (parts > 1 ? 5 : 0);  // the last chunk partly used
      for (const index_t rows : {index_t(1), index_t(7)})
        for (const int grid : {3, 64})
          for (const index_t extra : {index_t(0), index_t(grid)}) {
            if (strata_test::under_sanitizer() && (parts == 130 || vpt == 3) && (rows > 1 || extra > 0)) continue;
            sn::plan p;
            p.shape = sn::shape::streamed, p.group = 32, p.block = 32, p.vpt = vpt, p.parts = int(parts), p.grid = grid, p.lag = parts + extra;
            SCOPED_TRACE(sn::describe(p));
            check<norm_kind::layer, T>(rows, units * L, layout::matrix, true, 0, given::both, &p);
            // Dense rows of an odd width start anywhere in a unit: one unit fewer, so that they span the plan's.
            check<norm_kind::rms, T>(rows, (units - 1) * L - 1, layout::dense, extra == 0, 0, given::both, &p);
          }
    }
  const cuda::std::span<const T> none;
  strata::matrix<T> x(2, 100 * 32 * L), y(2, 100 * 32 * L);
  sn::plan ok;
  ok.shape = sn::shape::streamed, ok.group = 32, ok.block = 32, ok.vpt = 1, ok.parts = 100, ok.grid = 8, ok.lag = 100;
  EXPECT_NO_THROW(sn::run_with<norm_kind::rms>(ok, x.const_view(), y.view(), none, none, 1e-6f));
  strata::synchronize(strata::stream_t{});
  for (int bad = 0; bad < 5; ++bad) {
    sn::plan p = ok;
    if (bad == 0) p.lag = 99;         // shorter than a row's chunks
    if (bad == 1) p.parts = 99;       // chunks that miss the row's end
    if (bad == 2) p.grid = 0;         // no block
    if (bad == 3) p.group = p.block = 16;  // not whole warps
    if (bad == 4) p.block = 64;       // a block that is not the chunk's group
    SCOPED_TRACE(sn::describe(p));
    EXPECT_THROW(sn::run_with<norm_kind::rms>(p, x.const_view(), y.view(), none, none, 1e-6f), std::invalid_argument);
  }
}

// Rows of whole units held by clusters of blocks (shape::cluster): every cluster plan a sweep
// weighs for them (a sample under the sanitizers and on the host backend), in strata's matrix and
// dense, with and without gamma and beta, layer norm too (whose 16-bit rows the chooser streams
// instead): each block's part and the merge of the parts' statistics in rank order. Plans for
// rows they do not fit are refused.
TYPED_TEST(Normalize, RowsHeldByClustersOfBlocks) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  constexpr index_t L = sn::lanes<T>;
  auto cluster_plans = [](index_t rows, index_t cols) {
    strata::matrix<T> probe(1, cols);
    const auto pv = probe.view();
    const sn::args<T> a{pv.data, pv.data, nullptr, nullptr, rows, cols, pv.pitch, pv.pitch, 1e-5f};
    std::vector<sn::plan> plans;
    for (const sn::plan& p : sn::plans_considered<norm_kind::rms, T>(sn::needs_of(a)))
      if (p.shape == sn::shape::cluster) plans.push_back(p);
    return plans;
  };
  int ran = 0;
  for (index_t units : {index_t(sn::block_max_group) * sn::max_vpt + 1, index_t(12000), index_t(16384), index_t(32768)}) {
    const index_t cols = units * L;
    const std::vector<sn::plan> plans = cluster_plans(3, cols);
#if !defined(STRATA_BACKEND_CUDA)
    ASSERT_FALSE(plans.empty()) << units << " units: no cluster plan weighed on the model GPU";
#endif
#if defined(STRATA_BACKEND_CUDA)
    const std::size_t share = strata_test::under_sanitizer() ? 3 : plans.size();
#else
    const std::size_t share = 4;  // the emulation runs every thread of every block on two cores
#endif
    const std::size_t step = std::max<std::size_t>(1, plans.size() / share);
    for (std::size_t i = 0; i < plans.size(); i += step) {
      const sn::plan& p = plans[i];
      SCOPED_TRACE(sn::describe(p));
      check<norm_kind::layer, T>(3, cols, layout::matrix, true, 0, given::both, &p);
      check<norm_kind::layer, T>(2, cols, layout::dense, true, 0, given::beta_only, &p);
      check<norm_kind::rms, T>(3, cols, layout::dense, i % 2 == 0, 0, given::both, &p);
      ++ran;
    }
    if (!plans.empty() && units == 12000) {
      const cuda::std::span<const T> none;
      strata::matrix<T> x(2, cols + 1), y(2, cols + 1);
      // a partial last unit
      EXPECT_THROW(sn::run_with<norm_kind::rms>(plans[0], x.const_view(), y.view(), none, none, 1e-6f), std::invalid_argument);
      auto xs = x.const_view();
      xs.cols = cols, xs.data += 1;  // whole units, one element off a 16-byte boundary
      auto ys = y.view();
      ys.cols = cols, ys.data += 1;
      EXPECT_THROW(sn::run_with<norm_kind::rms>(plans[0], xs, ys, none, none, 1e-6f), std::invalid_argument);
      sn::plan big = plans[0];  // more blocks than a cluster may have
      big.parts = sn::max_cluster + 1, big.group = 32, big.vpt = 1;
      EXPECT_THROW(sn::run_with<norm_kind::rms>(big, x.const_view(), y.view(), none, none, 1e-6f), std::invalid_argument);
      sn::plan small = plans[0];  // fewer units than a row has
      small.vpt = 1;
      EXPECT_THROW(sn::run_with<norm_kind::rms>(small, x.const_view(), y.view(), none, none, 1e-6f), std::invalid_argument);
    }
  }
  if (!strata_test::under_sanitizer()) {  // more rows than the GPU holds clusters at once
#if defined(STRATA_BACKEND_CUDA)
    const index_t rows = 400;
#else
    const index_t rows = 24;
#endif
    const index_t cols = 12000 * L;
    for (const sn::plan& p : cluster_plans(rows, cols))
      if (p.parts == 3) {
        SCOPED_TRACE(sn::describe(p));
        check<norm_kind::layer, T>(rows, cols, layout::matrix, true, 0, given::both, &p);
        break;
      }
  }
  if (ran == 0) GTEST_SKIP() << "this GPU runs no clusters of blocks (before sm_90)";
}

// Lowers the input size from which gamma and beta are copied per row offset, for one test.
struct copies_from_bytes {
  std::size_t before = strata::detail::norm::affine_copy_bytes.exchange(0);
  ~copies_from_bytes() { strata::detail::norm::affine_copy_bytes = before; }
};

// Rows of a dense tensor of odd width, and strided rows, enough of them that gamma and beta are
// copied per row offset (affine_copies): every row reads the copy of its offset, with gamma and
// beta, with one of them, and in rows held by one group, by a block and streamed.
TYPED_TEST(Normalize, RowsReadGammaAndBetaCopiedPerOffset) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  const copies_from_bytes any;
  for (index_t cols : {index_t(7), index_t(1025), index_t(4095)})
    for (layout l : {layout::dense, layout::strided, layout::in_place}) {
      check<norm_kind::layer, T>(40, cols, l, true);
      check<norm_kind::rms, T>(40, cols, l, true);
      check<norm_kind::layer, T>(40, cols, l, true, 1, given::gamma_only);
      check<norm_kind::layer, T>(40, cols, l, true, 3, given::beta_only);
    }
  if (strata_test::under_sanitizer()) return;
  check<norm_kind::layer, T>(40, 36001, layout::dense, true);
  check<norm_kind::rms, T>(40, 20001, layout::strided, true);
}

// A matrix row that ends inside a 16-byte unit, held by the rows kernel, has that unit written
// whole: the elements past the row (the matrix's own padding) come back zero even where they were
// not, so its rows' bytes are written as one range. (The padding is zero by the matrix's contract;
// the test fills it first to see the store.)
TYPED_TEST(Normalize, MatrixRowsEndingInAPartialUnitWriteItWhole) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  constexpr index_t L = sn::lanes<T>;
  std::mt19937_64 g(strata_test::test_seed());
  std::normal_distribution<float> d(0.5f, 2.0f);
  for (index_t cols : {index_t(1), L + 3, index_t(1025), index_t(4097)}) {
    const index_t rows = 9;
    std::vector<T> x(static_cast<std::size_t>(rows * cols));
    for (auto& e : x) e = strata::from_float<T>(d(g));
    const strata::matrix<T> mx(rows, cols, x.data());
    strata::matrix<T> my(rows, cols);
    const std::size_t n = std::size_t(rows * my.pitch());
    const sn::args<T> a{mx.const_view().data, my.view().data, nullptr, nullptr, rows, cols, mx.pitch(), my.pitch(), 1e-5f};
    const sn::row_needs needs = sn::needs_of(a);
    ASSERT_TRUE(needs.whole && needs.tail);
    for (norm_kind kind : {norm_kind::layer, norm_kind::rms}) {
      SCOPED_TRACE(std::to_string(cols) + " cols, " + (kind == norm_kind::layer ? "layer" : "rms"));
      const sn::plan p = kind == norm_kind::layer ? sn::planned<norm_kind::layer, T>(needs) : sn::planned<norm_kind::rms, T>(needs);
      ASSERT_EQ(sn::code_for(p, needs.whole, needs.tail), sn::code::whole_tail) << sn::describe(p);
      const std::vector<T> filled(n, strata::from_float<T>(3.0f));
      strata::copy_bytes(my.view().data, filled.data(), n * sizeof(T));
      if (kind == norm_kind::layer) strata::layer_norm<T>(mx.const_view(), my.view(), {}, {});
      else strata::rms_norm<T>(mx.const_view(), my.view(), {});
      strata::synchronize(strata::stream_t{});
      std::vector<T> raw(n);
      strata::copy_bytes(raw.data(), my.view().data, n * sizeof(T));
      const T zero = strata::from_float<T>(0.0f);
      for (index_t r = 0; r < rows; ++r) {
        for (index_t c = cols; c < my.pitch(); ++c)
          ASSERT_EQ(std::memcmp(&raw[std::size_t(r * my.pitch() + c)], &zero, sizeof(T)), 0) << "row " << r << " element " << c;
        const float last = strata::to_float(raw[std::size_t(r * my.pitch() + cols - 1)]);
        ASSERT_TRUE(std::isfinite(last) && last != 3.0f) << "row " << r << ": its last element not written";
      }
    }
  }
}

// The rows kernel's prefetch of the row `ahead` rows later is a hint: at any distance, on rows at
// every offset from 16-byte boundaries (the prefetch covers the whole units inside a row) and on
// whole rows, the output is the same bit for bit as without it, and nothing past the rows changes.
TYPED_TEST(Normalize, PrefetchAheadChangesNoBit) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  std::mt19937_64 g(strata_test::test_seed());
  std::normal_distribution<float> d(0.5f, 2.0f);
  for (index_t cols : {index_t(5), index_t(96), index_t(1023), index_t(4097)})
    for (index_t pitch : {cols, cols + 3}) {
      const index_t rows = 64, n = rows * pitch + 40;
      std::vector<T> x(static_cast<std::size_t>(n)), gam(static_cast<std::size_t>(cols));
      for (auto& e : x) e = strata::from_float<T>(d(g));
      for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.1f * d(g));
      strata::buffer fx(x.size() * sizeof(T), strata::memory_space::device), fy(x.size() * sizeof(T), strata::memory_space::device);
      strata::buffer gb(gam.size() * sizeof(T), strata::memory_space::device);
      strata::copy_bytes(fx.data(), x.data(), fx.bytes());
      strata::copy_bytes(gb.data(), gam.data(), gb.bytes());
      const auto xv = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(fx.data()), rows, cols, pitch);
      const auto yv = strata::make_matrix_view(reinterpret_cast<T*>(fy.data()), rows, cols, pitch);
      const cuda::std::span<const T> gs(reinterpret_cast<const T*>(gb.data()), std::size_t(cols)), none;
      const sn::args<T> a{xv.data, yv.data, gs.data(), nullptr, rows, cols, pitch, pitch, 1e-5f};
      sn::plan p = sn::planned<norm_kind::layer, T>(sn::needs_of(a));
      if (pitch == cols && std::size_t(cols) * sizeof(T) < sn::tiled_max_row_bytes) {  // short rows back to back: tiles, no prefetch
        EXPECT_EQ(p.shape, sn::shape::tiled) << sn::describe(p);
        continue;
      }
      ASSERT_EQ(p.shape, sn::shape::rows) << sn::describe(p);
      std::vector<T> want;
      for (index_t ahead : {index_t(0), index_t(1), index_t(3), rows - 1, rows}) {
        SCOPED_TRACE(std::to_string(cols) + " cols, pitch " + std::to_string(pitch) + ", ahead " + std::to_string(ahead));
        p.ahead = ahead;
        strata::copy_bytes(fy.data(), x.data(), fy.bytes());  // the elements past the rows stay x's
        sn::run_with<norm_kind::layer>(p, xv, yv, gs, none, 1e-5f);
        strata::synchronize(strata::stream_t{});
        std::vector<T> got(x.size());
        strata::copy_bytes(got.data(), fy.data(), fy.bytes());
        for (std::size_t i = std::size_t(rows - 1) * pitch + cols; i < got.size(); ++i)
          ASSERT_EQ(std::memcmp(&got[i], &x[i], sizeof(T)), 0) << "element " << i << " past the rows was written";
        if (want.empty()) want = got;
        else ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0);
      }
    }
}

// Short rows lying back to back (dense tensors, in place) move as tiles (tiled_rows_kernel): the
// chooser takes a tile for dense rows of up to tiled_max_row_bytes (not for 4 whole units) and for
// no other layout; forced
// tiles of 1, 7 and 64 rows and the chosen one write every row right (the check's poison) and
// nothing past the rows (its guard elements), block ranges starting at every offset from a
// 16-byte boundary (7-row tiles) and rows starting off one (a base one element past a boundary);
// tiles for rows that are not back to back or longer than a thread holds are refused.
// Rows at every length up to tiled_max_cols: the threads move them in words of 16, 8 or 4 bytes
// or element by element, as their places in shared memory allow.
TYPED_TEST(Normalize, ShortRowsBackToBackMoveAsTiles) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  const int most = sn::tiled_max_cols<T>;
  for (index_t cols = 1; cols <= most; ++cols) {
    SCOPED_TRACE(std::to_string(cols) + " cols");
    // Tiled: rows back to back of up to tiled_max_row_bytes, but for 4 whole 16-byte units.
    const std::size_t bytes = std::size_t(cols) * sizeof(T);
    const bool short_row = bytes <= sn::tiled_max_row_bytes && !(bytes % 16 == 0 && bytes >= 64);
    const index_t pitches[] = {cols, cols + 3};
    for (index_t pitch : pitches) {
      const sn::args<T> a{reinterpret_cast<const T*>(std::uintptr_t(256)), reinterpret_cast<T*>(std::uintptr_t(1024)), nullptr, nullptr,
                          100, cols, pitch, pitch, 1e-5f};
      const sn::plan p = sn::planned<norm_kind::layer, T>(sn::needs_of(a));
      EXPECT_EQ(p.shape == sn::shape::tiled, short_row && pitch == cols) << sn::describe(p) << ", pitch " << pitch;
    }
    sn::plan tiled = sn::tiled_plan(cols, int(sizeof(T)));
    const bool small = cols % 5 == 1 || cols == most;  // every length under the sanitizers would take too long
    if (strata_test::under_sanitizer() && !small) continue;
    for (index_t tile : {index_t(1), index_t(7), index_t(64), tiled.tile}) {
      sn::plan f = tiled;
      f.tile = tile;
      SCOPED_TRACE("tile " + std::to_string(tile));
      const index_t rows = std::min<index_t>(3 * tile + 5, 4000);
      check<norm_kind::layer, T>(rows, cols, layout::dense, true, 0, given::both, &f);
      check<norm_kind::rms, T>(rows, cols, layout::in_place, true, 0, given::both, &f);
      if (tile == 7) {
        check<norm_kind::layer, T>(rows, cols, layout::in_place, false, 0, given::both, &f);
        check<norm_kind::layer, T>(rows, cols, layout::dense, true, 1, given::gamma_only, &f);
        check<norm_kind::layer, T>(rows, cols, layout::dense, true, 0, given::beta_only, &f);
        check<norm_kind::rms, T>(rows, cols, layout::dense, false, 0, given::both, &f);
      }
    }
    // The chosen plan on the same rows (tiled where short).
    check<norm_kind::layer, T>(1000, cols, layout::dense, true);
    check<norm_kind::rms, T>(1000, cols, layout::in_place, true);

    // Rows starting one element past a 16-byte boundary, x and y alike: against the same rows at
    // the boundary (the statistics do not depend on where a row lies).
    const index_t rows = 37;
    std::mt19937_64 g(strata_test::test_seed() ^ std::uint64_t(cols));
    std::normal_distribution<float> d(0.5f, 2.0f);
    std::vector<T> x(static_cast<std::size_t>(rows * cols + 1));
    for (auto& e : x) e = strata::from_float<T>(d(g));
    strata::buffer bx(x.size() * sizeof(T), strata::memory_space::device), by(x.size() * sizeof(T), strata::memory_space::device);
    std::vector<std::vector<T>> got;
    for (int shift : {0, 1}) {
      strata::copy_bytes(reinterpret_cast<T*>(bx.data()) + shift, x.data() + 1, std::size_t(rows * cols) * sizeof(T));
      const auto xv = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(bx.data()) + shift, rows, cols, cols);
      const auto yv = strata::make_matrix_view(reinterpret_cast<T*>(by.data()) + shift, rows, cols, cols);
      for (index_t tile : {index_t(1), index_t(7), tiled.tile}) {
        sn::plan f = tiled;
        f.tile = tile;
        sn::run_with<norm_kind::layer>(f, xv, yv, cuda::std::span<const T>{}, cuda::std::span<const T>{}, 1e-5f);
        strata::synchronize(strata::stream_t{});
        got.emplace_back(static_cast<std::size_t>(rows * cols));
        strata::copy_bytes(got.back().data(), reinterpret_cast<const T*>(by.data()) + shift, got.back().size() * sizeof(T));
      }
    }
    for (std::size_t i = 1; i < got.size(); ++i)
      ASSERT_EQ(std::memcmp(got[i].data(), got[0].data(), got[0].size() * sizeof(T)), 0) << "run " << i << " differs from the first";

    // Refused: rows not back to back (a pitch past the row, an output at another offset), rows
    // longer than a tiled thread holds, no rows a tile, blocks of another size.
    auto refused = [&](index_t c, index_t pitch, int y_shift, sn::plan f) {
      strata::buffer b(std::size_t(8 * pitch + 16) * sizeof(T), strata::memory_space::device);
      const auto xv = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(b.data()), 8, c, pitch);
      const auto yv = strata::make_matrix_view(reinterpret_cast<T*>(b.data()) + y_shift, 8, c, pitch);
      EXPECT_THROW(sn::run_with<norm_kind::rms>(f, xv, yv, cuda::std::span<const T>{}, cuda::std::span<const T>{}, 1e-5f), std::invalid_argument)
          << c << " cols, pitch " << pitch << ", y shifted " << y_shift << ", " << sn::describe(f);
    };
    refused(cols, cols + 3, 0, tiled);
    refused(cols, cols, 1, tiled);
    sn::plan none = tiled, other = tiled;
    none.tile = 0, other.block = 128;
    refused(cols, cols, 0, none);
    refused(cols, cols, 0, other);
    if (cols > 1) {  // a thread holding fewer elements than a row has
      sn::plan narrow = tiled;
      narrow.group = int(cols) / 2;
      refused(cols, cols, 0, narrow);
    }
  }
  {  // rows longer than a tiled thread holds
    sn::plan f = sn::tiled_plan(most, int(sizeof(T)));
    strata::buffer b(std::size_t(8 * (most + 1)) * sizeof(T), strata::memory_space::device);
    const auto xv = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(b.data()), 8, most + 1, most + 1);
    const auto yv = strata::make_matrix_view(reinterpret_cast<T*>(b.data()), 8, most + 1, most + 1);
    EXPECT_THROW(sn::run_with<norm_kind::rms>(f, xv, yv, cuda::std::span<const T>{}, cuda::std::span<const T>{}, 1e-5f), std::invalid_argument);
  }
}

// Short rows of whole units whose groups stack several rows (stacked_rows_kernel): every stacked
// plan the chooser weighs gives the bits of the unstacked plan of the same group and units a
// thread (a row's statistics do not depend on the stacking), writes every row (the output is
// poisoned first) and nothing past the rows or in the gaps between them; row counts that leave a
// block's last groups empty. The chooser stacks rows at some of these lengths.
TYPED_TEST(Normalize, StackedRowsGiveTheBitsOfOneRowAGroup) {
  using T = TypeParam;
  namespace sn = strata::detail::norm;
  STRATA_SEED_TRACE();
  constexpr index_t L = index_t(16 / sizeof(T));
  std::mt19937_64 g(strata_test::test_seed());
  std::normal_distribution<float> d(0.5f, 2.0f);
  int stacked_plans = 0, stacked_chosen = 0;
  for (norm_kind kind : {norm_kind::layer, norm_kind::rms})
    for (index_t units : {index_t(1), index_t(2), index_t(3), index_t(4), index_t(6), index_t(8), index_t(12), index_t(16), index_t(32)})
      for (index_t gap : {index_t(0), L}) {
        const index_t cols = units * L, pitch = cols + gap, rows = 1000, n = rows * pitch + 40;
        std::vector<T> x(static_cast<std::size_t>(n)), gam(static_cast<std::size_t>(cols)), bet(static_cast<std::size_t>(cols));
        for (auto& e : x) e = strata::from_float<T>(d(g));
        for (auto& e : gam) e = strata::from_float<T>(1.0f + 0.1f * d(g));
        for (auto& e : bet) e = strata::from_float<T>(0.1f * d(g));
        strata::buffer fx(x.size() * sizeof(T), strata::memory_space::device), fy(x.size() * sizeof(T), strata::memory_space::device);
        strata::buffer gb(gam.size() * sizeof(T), strata::memory_space::device), bb(bet.size() * sizeof(T), strata::memory_space::device);
        strata::copy_bytes(fx.data(), x.data(), fx.bytes());
        strata::copy_bytes(gb.data(), gam.data(), gb.bytes());
        strata::copy_bytes(bb.data(), bet.data(), bb.bytes());
        const cuda::std::span<const T> gs(reinterpret_cast<const T*>(gb.data()), std::size_t(cols)),
            bs(reinterpret_cast<const T*>(bb.data()), std::size_t(cols));
        for (index_t r : {index_t(1), index_t(5), index_t(33), index_t(257), rows}) {
          const auto xv = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(fx.data()), r, cols, pitch);
          const auto yv = strata::make_matrix_view(reinterpret_cast<T*>(fy.data()), r, cols, pitch);
          const sn::args<T> a{xv.data, yv.data, gs.data(), bs.data(), r, cols, pitch, pitch, 1e-5f};
          const sn::row_needs needs = sn::needs_of(a);
          ASSERT_TRUE(needs.whole && !needs.tail);
          const std::vector<sn::plan> plans = kind == norm_kind::layer ? sn::plans_considered<norm_kind::layer, T>(needs)
                                                                     : sn::plans_considered<norm_kind::rms, T>(needs);
          if (r == rows) {
            const sn::plan chosen = kind == norm_kind::layer ? sn::planned<norm_kind::layer, T>(needs) : sn::planned<norm_kind::rms, T>(needs);
            stacked_chosen += chosen.stack > 1 ? 1 : 0;
          }
          for (const sn::plan& p : plans) {
            if (p.stack == 1) continue;
            ++stacked_plans;
            sn::plan one = p;
            one.stack = 1;
            std::vector<T> got[2];
            for (int i = 0; i < 2; ++i) {
              SCOPED_TRACE(std::string(kind == norm_kind::layer ? "layer " : "rms ") + std::to_string(r) + "x" + std::to_string(cols) +
                           ", pitch " + std::to_string(pitch) + ": " + sn::describe(i == 0 ? p : one));
              std::vector<T> poisoned(x.size(), strata::from_float<T>(12345.0f));
              strata::copy_bytes(fy.data(), poisoned.data(), fy.bytes());
              if (kind == norm_kind::layer) sn::run_with<norm_kind::layer>(i == 0 ? p : one, xv, yv, gs, bs, 1e-5f);
              else sn::run_with<norm_kind::rms>(i == 0 ? p : one, xv, yv, gs, bs, 1e-5f);
              strata::synchronize(strata::stream_t{});
              got[i].resize(x.size());
              strata::copy_bytes(got[i].data(), fy.data(), fy.bytes());
              for (std::size_t e = 0; e < got[i].size(); ++e) {
                const bool in_row = index_t(e) < r * pitch && index_t(e) % pitch < cols;
                ASSERT_EQ(std::memcmp(&got[i][e], &poisoned[e], sizeof(T)) != 0, in_row) << "element " << e;
              }
            }
            ASSERT_EQ(std::memcmp(got[0].data(), got[1].data(), got[0].size() * sizeof(T)), 0) << sn::describe(p);
          }
        }
      }
  EXPECT_GT(stacked_plans, 0);
  EXPECT_GT(stacked_chosen, 0);
  // A stacked plan given for rows it cannot take is refused before anything runs: rows ending in a
  // partial unit, one unit of a row a thread, a group past a warp, 8 rows a group.
  strata::matrix<T> x(64, 4 * L + 1), y(64, 4 * L + 1), xw(64, 4 * L), yw(64, 4 * L);
  sn::plan bad;
  bad.group = 2, bad.vpt = 2, bad.block = 128, bad.stack = 2;
  const cuda::std::span<const T> none;
  EXPECT_THROW(sn::run_with<norm_kind::rms>(bad, x.const_view(), y.view(), none, none, 1e-5f), std::invalid_argument);
  EXPECT_NO_THROW(sn::run_with<norm_kind::rms>(bad, xw.const_view(), yw.view(), none, none, 1e-5f));
  {
    // A row plan of any stack whose group has fewer threads than a row's partial units have
    // elements (one a thread), or fewer slots than its whole units, is refused; a group of as many runs.
    strata::matrix<T> xt(64, 4 * L + 3), yt(64, 4 * L + 3);
    sn::plan narrow;
    narrow.group = 2, narrow.vpt = 2, narrow.block = 128;
    EXPECT_THROW(sn::run_with<norm_kind::rms>(narrow, xt.const_view(), yt.view(), none, none, 1e-5f), std::invalid_argument);
    narrow.group = 4;
    EXPECT_NO_THROW(sn::run_with<norm_kind::rms>(narrow, xt.const_view(), yt.view(), none, none, 1e-5f));
    strata::synchronize(strata::stream_t{});
    narrow.vpt = 1;  // 4 slots for rows of 4 whole units and a partial one: enough
    EXPECT_NO_THROW(sn::run_with<norm_kind::rms>(narrow, xt.const_view(), yt.view(), none, none, 1e-5f));
    strata::synchronize(strata::stream_t{});
    strata::matrix<T> x5(64, 5 * L), y5(64, 5 * L);  // 5 whole units: 4 slots leave one out
    EXPECT_THROW(sn::run_with<norm_kind::rms>(narrow, x5.const_view(), y5.view(), none, none, 1e-5f), std::invalid_argument);
  }
  for (const auto& [group, vpt, stack] : {std::tuple{4, 1, 2}, std::tuple{64, 2, 2}, std::tuple{1, 4, 8}, std::tuple{2, 2, 3}}) {
    bad.group = group, bad.vpt = vpt, bad.stack = stack, bad.block = std::max(group, 128);
    EXPECT_THROW(sn::run_with<norm_kind::layer>(bad, xw.const_view(), yw.view(), none, none, 1e-5f), std::invalid_argument) << sn::describe(bad);
  }
}

// Which calls copy gamma and beta per row offset (affine_copies): 16-bit rows of a dense tensor of
// odd width (their starts move) and rows all starting off gamma's offset, given gamma and beta;
// not rows on 16-byte boundaries, not gamma or beta alone or fp32 rows (8 element-wise reads a
// unit cost less than the copy's launch), not an output off the input's phase (written element by
// element), not copies that would outweigh the input (two rows) or inputs under the size limit.
TEST(NormalizePlan, AffineCopiesWhereRowsNeedThem) {
  namespace sn = strata::detail::norm;
  using bf = strata::bfloat16;
  const index_t cols = 1025, rows = 64;
  strata::buffer fx((rows * 1032 + 64) * sizeof(bf), strata::memory_space::device), fy(fx.bytes(), strata::memory_space::device);
  strata::buffer fg((cols + 8) * sizeof(bf), strata::memory_space::device);
  strata::fill_bytes_async(fg.data(), 0, fg.bytes(), strata::stream_t{}, strata::memory_space::device);
  bf *x = reinterpret_cast<bf*>(fx.data()), *y = reinterpret_cast<bf*>(fy.data());
  const bf* g = reinterpret_cast<const bf*>(fg.data());
  auto copies = [&](const bf* xp, bf* yp, index_t n, index_t pitch, const bf* gp, const bf* bp) {
    sn::args<bf> a{xp, yp, gp, bp, n, cols, pitch, pitch, 1e-5f};
    std::optional<strata::detail::scratch_block> block;
    const std::size_t bytes = sn::affine_copies(a, block, strata::stream_t{});
    for (int h = 0; h < 8 && bytes > 0; ++h)  // the copy a row of each offset reads lies as that row does
      for (const bf* p : {a.gamma, a.beta}) {
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p + h * a.affine_step) % 16, std::uintptr_t(h) * sizeof(bf));
      }
    strata::synchronize(strata::stream_t{});
    return bytes;
  };
  EXPECT_EQ(copies(x, y, rows, cols, g, g), 0u);  // 128 KiB of input: under the limit
  const copies_from_bytes any;
  EXPECT_GT(copies(x, y, rows, cols, g, g), 0u);              // dense rows of odd width
  EXPECT_GT(copies(x + 1, y + 1, rows, 1032, g, g), 0u);      // every row one element past a boundary, gamma on one
  EXPECT_EQ(copies(x + 1, y + 1, rows, 1032, g + 1, g + 1), 0u);  // gamma lies as the rows do
  EXPECT_EQ(copies(x, y, rows, cols, g, nullptr), 0u);        // gamma alone
  EXPECT_EQ(copies(x, y, rows, cols, nullptr, g), 0u);        // beta alone
  EXPECT_EQ(copies(x, y, rows, 1032, g, g), 0u);              // rows on boundaries
  EXPECT_EQ(copies(x, y + 1, rows, cols, g, g), 0u);          // output off the input's phase
  EXPECT_EQ(copies(x, y, 2, cols, g, g), 0u);                 // copies larger than the input
  const float* f = reinterpret_cast<const float*>(g);
  sn::args<float> a{f, reinterpret_cast<float*>(y), f, f, rows, cols, cols, cols, 1e-5f};
  std::optional<strata::detail::scratch_block> block;
  EXPECT_EQ(sn::affine_copies(a, block, strata::stream_t{}), 0u);  // fp32: 2 x 4 reads a unit
  EXPECT_FALSE(sn::vec_rows(a));  // so those rows read gamma and beta element by element
  // Whether every row writes as vectors and reads its gamma and beta units as vectors, after the
  // copies: the flag that lets write_part skip its per-row tests.
  auto vec = [&](const bf* xp, bf* yp, index_t pitch, const bf* gp, const bf* bp) {
    sn::args<bf> b{xp, yp, gp, bp, rows, cols, pitch, pitch, 1e-5f};
    std::optional<strata::detail::scratch_block> copied;
    sn::affine_copies(b, copied, strata::stream_t{});
    const bool v = sn::vec_rows(b);
    strata::synchronize(strata::stream_t{});
    return v;
  };
  EXPECT_TRUE(vec(x, y, cols, g, g));                    // copied per offset
  EXPECT_TRUE(vec(x, y, cols, nullptr, nullptr));        // nothing to read
  EXPECT_TRUE(vec(x + 1, y + 1, 1032, g + 1, g + 1));    // gamma and beta lie as every row does
  EXPECT_TRUE(vec(x, y, 1032, g, g));                    // rows on boundaries
  EXPECT_FALSE(vec(x, y, cols, g, nullptr));             // gamma alone, not copied, rows' starts move
  EXPECT_FALSE(vec(x + 1, y + 1, 1032, g, nullptr));     // every row off gamma's offset, not copied
  EXPECT_FALSE(vec(x, y + 1, cols, nullptr, nullptr));   // output off the input's phase
}

// The shared-memory plan takes no more than the device lets a block have: rows of 24000 floats take
// it where the device allows the 32 KiB it needs past the kernel's own shared memory, and a plan
// given with more than any device allows is refused before anything is launched.
TEST(NormalizeErrors, SharedMemoryPlansStayWithinTheDevicesLimit) {
  namespace sn = strata::detail::norm;
  // rows ending in a partial unit: rows of whole units this long are held by a block of 1024
  // threads (RowsOfWholeUnitsTakeBlocksOf1024Threads), these partly in shared memory
  const index_t rows = 3, cols = 23999;
  strata::matrix<float> x(rows, cols), y(rows, cols);
  std::vector<float> h(std::size_t(rows * x.view().pitch), 1.5f);
  strata::copy_bytes(x.view().data, h.data(), h.size() * sizeof(float));
  const sn::args<float> a{x.view().data, y.view().data, nullptr, nullptr, rows, cols, x.view().pitch, y.view().pitch, 1e-6f};
  sn::plan p = sn::planned<norm_kind::rms, float>(sn::needs_of(a));
  bool room = true;
#if defined(STRATA_BACKEND_CUDA)
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, strata::detail::current_device()), cudaSuccess);
  room = optin >= 40 * 1024;
#endif
  if (room) EXPECT_EQ(sn::describe(p), "rows group=512 vpt=8 block=512 spill=4");
  else EXPECT_EQ(p.shape, sn::shape::streamed) << sn::describe(p);
  p = sn::plan{};
  p.group = p.block = 512, p.vpt = 8, p.spill = 29;  // 232 KiB: more than any GPU's block takes
  const cuda::std::span<const float> none;
  try {
    sn::run_with<norm_kind::rms>(p, x.const_view(), y.view(), none, none, 1e-6f);
    ADD_FAILURE() << "a plan needing 232 KiB of shared memory a block ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(strata::rms_norm<float>(x.const_view(), y.view(), none), strata::path::vectorized);  // later work runs
  strata::synchronize(strata::stream_t{});
  std::vector<float> got(h.size());
  strata::copy_bytes(got.data(), y.view().data, got.size() * sizeof(float));
  EXPECT_NEAR(got[0], 1.0f, 1e-5f);
  EXPECT_NEAR(got[std::size_t((rows - 1) * y.view().pitch + cols - 1)], 1.0f, 1e-5f);
}

// The element type comes from the output: a matrix's mutable view() and mutable gamma / beta
// spans are accepted as they are (they needed an explicit <float>), with the same result.
TEST(Normalize, ElementTypeIsDeducedFromMutableViews) {
  STRATA_SEED_TRACE();
  const strata::index_t rows = 5, cols = 37;
  strata::matrix<float> x(rows, cols), y(rows, cols), want(rows, cols), g(1, cols), b(1, cols);
  std::mt19937_64 gen(strata_test::test_seed());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  auto fill = [&](strata::matrix<float>& m) {
    std::vector<float> h(std::size_t(m.view().rows * m.view().pitch));
    for (auto& e : h) e = u(gen);
    strata::copy_bytes(m.view().data, h.data(), h.size() * sizeof(float));
  };
  fill(x), fill(g), fill(b);
  auto fetch_rows = [&](const strata::matrix<float>& m) {
    std::vector<float> h(std::size_t(rows * cols));
    for (strata::index_t r = 0; r < rows; ++r)
      strata::copy_bytes(h.data() + r * cols, m.const_view().data + r * m.const_view().pitch, cols * sizeof(float));
    return h;
  };
  cuda::std::span<float> gamma(g.view().data, std::size_t(cols)), beta(b.view().data, std::size_t(cols));
  strata::layer_norm<float>(x.const_view(), want.view(), gamma, beta);
  strata::layer_norm(x.view(), y.view(), gamma, beta);
  strata::synchronize(strata::stream_t{});
  EXPECT_EQ(fetch_rows(y), fetch_rows(want)) << "layer_norm";
  strata::rms_norm<float>(x.const_view(), want.view(), gamma);
  strata::rms_norm(x.view(), y.view(), gamma);
  strata::synchronize(strata::stream_t{});
  EXPECT_EQ(fetch_rows(y), fetch_rows(want)) << "rms_norm";
  strata::rms_norm(x.view(), y.view(), {});
  strata::rms_norm<float>(x.const_view(), want.view(), {});
  strata::synchronize(strata::stream_t{});
  EXPECT_EQ(fetch_rows(y), fetch_rows(want)) << "rms_norm without gamma";
}

TEST(NormalizeErrors, ShapesAndSizesAreChecked) {
  strata::matrix<float> x(4, 10), y(4, 11), g(1, 9);
  const cuda::std::span<const float> none;
  EXPECT_THROW(strata::layer_norm<float>(x.const_view(), y.view(), none, none), strata::size_error);
  strata::matrix<float> y2(4, 10);
  EXPECT_THROW(strata::layer_norm<float>(x.const_view(), y2.view(), {g.const_view().data, 9}, none), strata::size_error);
  EXPECT_THROW((void)strata::make_matrix_view<float>(nullptr, 4, 10, 10), strata::size_error);
  float dummy[20];
  EXPECT_THROW((void)strata::make_matrix_view<float>(dummy, 2, 10, 9), strata::size_error);
  strata::matrix<float> empty_in(0, 5), empty_out(0, 5);
  EXPECT_NO_THROW(strata::layer_norm<float>(empty_in.const_view(), empty_out.view(), none, none));
}

}  // namespace

// Rows of whole units longer than a block of max_group threads holds in registers are held by a
// block of up to 1024 threads (block_rows_kernel); rows that end in a partial unit or start off a
// 16-byte boundary keep blocks of max_group threads and go partly to shared memory or stream.
TEST(NormalizePlan, RowsOfWholeUnitsTakeBlocksOf1024Threads) {
  namespace sn = strata::detail::norm;
  for (norm_kind kind : {norm_kind::rms, norm_kind::layer}) {
    const sn::device_model whole = sn::host_model_for(kind, true, false), tail = sn::host_model_for(kind, true, true);
    for (index_t units : {index_t(4097), index_t(6000), index_t(8192)}) {
      const sn::plan p = sn::choose(sn::row_units{units, units, 0}, whole);
      SCOPED_TRACE(std::to_string(units) + " units: " + sn::describe(p));
      EXPECT_EQ(p.shape, sn::shape::rows);
      EXPECT_EQ(p.spill, 0);
      EXPECT_GT(p.group, sn::max_group);
      EXPECT_LE(p.group, sn::block_max_group);
      EXPECT_EQ(p.block, p.group);
      EXPECT_GE(index_t(p.group) * p.vpt, units);
      EXPECT_EQ(sn::code_for(p, true, false), sn::code::block);
      EXPECT_EQ(sn::code_for(p, false, false), sn::code::general);
      const sn::plan q = sn::choose(sn::row_units{units + 1, units, 3}, tail);
      EXPECT_LE(q.group, sn::max_group) << sn::describe(q);
    }
    // whole rows a block of max_group threads holds keep groups of at most max_group (the rows kernel)
    for (index_t units = 1; units <= 4096; units = units * 3 + 1) {
      const sn::plan p = sn::choose(sn::row_units{units, units, 0}, whole);
      EXPECT_TRUE(p.shape == sn::shape::rows && p.spill == 0 && p.group <= sn::max_group) << units << ": " << sn::describe(p);
      EXPECT_NE(sn::code_for(p, true, false), sn::code::block) << units;
    }
    EXPECT_NE(sn::code_for(sn::choose(sn::row_units{4096, 4096, 0}, whole), true, false), sn::code::block);
  }
}

// Rows of whole units longer than a block of 1024 threads holds (8192 units) are held by a cluster
// of the fewest blocks of at most 256 threads x 8 units, or of 512 threads where that takes more
// than 8 blocks, up to 8 blocks of 512 (32768 units), and stream beyond; so do 16-bit layer norm's
// at any length, rows with a partial unit, and rows on a device that runs no clusters.
TEST(NormalizePlan, LongerRowsOfWholeUnitsTakeClustersUpToTheLimit) {
  namespace sn = strata::detail::norm;
  const index_t most = index_t(sn::max_group) * sn::max_vpt * sn::max_cluster;
  for (norm_kind kind : {norm_kind::rms, norm_kind::layer})
    for (int size : {4, 2}) {
      const sn::device_model whole = sn::host_model_for(kind, true, false, size), tail = sn::host_model_for(kind, true, true, size);
      const bool clusters = kind == norm_kind::rms || size == 4;
      for (index_t units = 8193; units <= most + 5000; units += 997) {
        const sn::plan p = sn::choose(sn::row_units{units, units, 0}, whole);
        SCOPED_TRACE(std::to_string(units) + " units of " + std::to_string(size) + " bytes, " + (kind == norm_kind::rms ? "rms: " : "layer: ") +
                     sn::describe(p));
        if (!clusters || units > most) {
          EXPECT_EQ(p.shape, sn::shape::streamed);
          continue;
        }
        ASSERT_EQ(p.shape, sn::shape::cluster);
        const index_t quarter = (units + 2047) / 2048, half = (units + 4095) / 4096;  // blocks of 256 and of 512 threads
        EXPECT_EQ(p.parts, quarter <= sn::max_cluster ? quarter : half);
        EXPECT_TRUE(p.group % 32 == 0 && p.group <= (quarter <= sn::max_cluster ? 256 : 512) && p.block == p.group);
        EXPECT_GE(index_t(p.parts) * p.group * p.vpt, units);
        EXPECT_LT(index_t(p.parts - 1) * p.group * p.vpt, units);  // every block holds some of the row
        EXPECT_GE(p.ahead, 1);
        EXPECT_EQ(sn::code_for(p, true, false), sn::code::block);
        EXPECT_EQ(sn::choose(sn::row_units{units + 1, units, 3}, tail).shape, sn::shape::streamed);
        sn::device_model none = whole;
        none.max_cluster = 0;
        EXPECT_EQ(sn::choose(sn::row_units{units, units, 0}, none).shape, sn::shape::streamed);
      }
    }
}
