// SPDX-License-Identifier: Apache-2.0
// Row units over a padded matrix: elements past the row read as zero, stores put zero in the pitch
// padding of owned rows and nothing past the row in someone else's; matrix round trips bit for bit.
#include <strata/algorithm/rows.hpp>
#include <strata/container/matrix.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

TEST(Matrix, PitchIsSixteenBytesAndRoundTrips) {
  STRATA_SEED_TRACE();
  for (strata::index_t cols : {1, 3, 4, 5, 1023, 4099}) {
    const strata::index_t rows = 7;
    std::vector<float> dense(std::size_t(rows * cols));
    std::mt19937_64 g(strata_test::test_seed() + std::uint64_t(cols));
    for (auto& x : dense) x = std::uniform_real_distribution<float>(-1, 1)(g);
    strata::matrix<float> m(rows, cols, dense.data());
    EXPECT_EQ(m.pitch() * 4 % 16, 0);
    EXPECT_GE(m.pitch(), cols);
    std::vector<float> back(dense.size(), -7.0f);
    m.copy_to_host(back.data());
    EXPECT_EQ(back, dense);
  }
}

TEST(RowUnits, PartialUnitsMoveWholeOnlyWhereTheRowsOwnTheirPadding) {
  // Host-memory rows: the unit logic is the same code on both backends.
  const strata::index_t cols = 10;  // 3 units of 4 floats, the last with 2 elements inside the row
  strata::matrix<float, strata::memory_space::host> m(2, cols);
  auto v = m.view();
  for (strata::index_t c = 0; c < v.pitch; ++c) v.row(0)[c] = float(c + 1), v.row(1)[c] = -1.0f;
  // Owned padding: the last unit is one access, padding elements go out as zeros.
  float in[4] = {9.0f, 10.0f, 99.0f, 99.0f};
  strata::rows::store_unit<float, 16>(v.row(1), cols, 2, in, true);
  EXPECT_EQ(v.row(1)[8], 9.0f);
  EXPECT_EQ(v.row(1)[9], 10.0f);
  EXPECT_EQ(v.row(1)[10], 0.0f);
  EXPECT_EQ(v.row(1)[7], -1.0f);  // other units untouched
  // Someone else's rows: elements past cols are neither read nor written.
  v.row(1)[10] = -5.0f, v.row(1)[11] = -6.0f;
  strata::rows::store_unit<float, 16>(v.row(1), cols, 2, in, false);
  EXPECT_EQ(v.row(1)[10], -5.0f);
  EXPECT_EQ(v.row(1)[11], -6.0f);
  float out[4];
  strata::rows::unpack_unit<float, 16>(strata::rows::load_unit<float, 16>(v.row(1), cols, 2, false), out);
  EXPECT_EQ(out[0], 9.0f);
  EXPECT_EQ(out[2], 0.0f);  // read as zero, whatever the memory holds
  strata::rows::unpack_unit<float, 16>(strata::rows::load_unit<float, 16>(v.row(1), cols, 2, true), out);
  EXPECT_EQ(out[2], -5.0f);  // owned padding: the whole unit (values past cols are masked by packed::floats)
}

TEST(RowPacked, CountsOnlyElementsInsideTheRow) {
  const strata::index_t cols = 10;  // vectors 0, 1 whole; vector 2 holds 2 elements; 3 and on: none
  strata::matrix<float, strata::memory_space::host> m(1, cols);
  auto v = m.view();
  for (strata::index_t c = 0; c < v.pitch; ++c) v.row(0)[c] = float(c + 1);  // pitch padding non-zero on purpose
  using packed = strata::rows::packed<float, 2>;
  EXPECT_EQ(packed::valid(cols, 1, 1, 0), 4);
  EXPECT_EQ(packed::valid(cols, 1, 1, 1), 2);
  EXPECT_EQ(packed::valid(cols, 1, 2, 1), 0);
  packed p;
  p.load(v.row(0), cols, 1, 1, true);  // vectors 1 (5..8) and 2 (9, 10, padding 11, 12)
  EXPECT_EQ(p.sum(cols, 1, 1), 5.0f + 6 + 7 + 8 + 9 + 10);
  EXPECT_EQ(p.sum_squares(cols, 1, 1, 7.0f), 4.0f + 1 + 0 + 1 + 4 + 9);
  float f[4];
  p.floats(cols, 1, 1, 1, f);
  EXPECT_EQ(f[1], 10.0f);
  EXPECT_EQ(f[2], 0.0f);  // past the row's end
}

TEST(RowPacked, HalfPrecisionVectorsRoundTripThroughFloats) {
  float in[8] = {1.0f, -2.5f, 0.15625f, 65504.0f, -0.0f, 3.0e-3f, 1.0e4f, -7.75f};
  const auto wb = strata::rows::pack_floats<strata::bfloat16>(in);
  const auto wh = strata::rows::pack_floats<strata::half>(in);
  float ob[8], oh[8];
  strata::rows::unpack_floats<strata::bfloat16>(wb, ob);
  strata::rows::unpack_floats<strata::half>(wh, oh);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ob[i], strata::to_float(strata::from_float<strata::bfloat16>(in[i]))) << i;
    EXPECT_EQ(oh[i], strata::to_float(strata::from_float<strata::half>(in[i]))) << i;
  }
}
