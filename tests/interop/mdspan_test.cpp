// SPDX-License-Identifier: Apache-2.0
// Columns and matrices as cuda::std::mdspan: extents, strides and elements against the views they
// come from, in host code and inside strata::transform's functor.
#include <strata/interop/mdspan.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/container/matrix.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

namespace {

using strata_test::fetch;
using strata_test::nested_particle;
using strata_test::vec3;

TEST(Mdspan, ColumnsOfNestedRecords) {
  STRATA_SEED_TRACE();
  const auto host = strata_test::random_records<nested_particle>(513);
  strata::soa_vector<nested_particle> s(host);
  auto v = s.view();
  auto pz = strata::to_mdspan<strata::member<&nested_particle::pos, &vec3::z>>(v);
  auto mass = strata::to_mdspan<&nested_particle::mass>(v);
  static_assert(decltype(pz)::rank() == 1);
  EXPECT_EQ(pz.extent(0), 513);
  EXPECT_EQ(pz.data_handle(), (v.column<strata::member<&nested_particle::pos, &vec3::z>>().data()));
  EXPECT_EQ(strata::to_mdspan<2>(v).data_handle(), pz.data_handle());
  const auto got = fetch(mass.data_handle(), std::size_t(mass.extent(0)));
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], host[i].mass) << i;
  // A const view gives read-only elements.
  strata::soa_view<const nested_particle> c = v;
  static_assert(std::is_same_v<decltype(strata::to_mdspan<&nested_particle::mass>(c))::element_type, const float>);
  EXPECT_EQ(strata::to_mdspan<&nested_particle::mass>(c).data_handle(), mass.data_handle());
}

TEST(Mdspan, MatricesStrideByThePitch) {
  strata::matrix<double, strata::memory_space::host> m(3, 5);
  auto view = m.view();
  for (strata::index_t r = 0; r < 3; ++r)
    for (strata::index_t c = 0; c < 5; ++c) view.row(r)[c] = double(10 * r + c);
  auto md = strata::to_mdspan(view);
  static_assert(decltype(md)::rank() == 2);
  EXPECT_EQ(md.extent(0), 3);
  EXPECT_EQ(md.extent(1), 5);
  EXPECT_EQ(md.stride(0), m.pitch());
  EXPECT_EQ(md.stride(1), 1);
  EXPECT_GT(m.pitch(), 5) << "a 5-double row is padded to whole 16-byte vectors";
  for (strata::index_t r = 0; r < 3; ++r)
    for (strata::index_t c = 0; c < 5; ++c) EXPECT_EQ(md(r, c), double(10 * r + c));
}

}  // namespace
