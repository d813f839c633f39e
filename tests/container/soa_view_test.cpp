#include <strata/container/soa_vector.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <type_traits>

using namespace strata_test;
using strata::soa_view;

// Views are trivially copyable into kernels; a const view never becomes a mutable one.
static_assert(std::is_trivially_copyable_v<soa_view<particle>> && std::is_trivially_copyable_v<soa_view<const particle>>);
static_assert(std::is_convertible_v<soa_view<particle>, soa_view<const particle>>);
static_assert(!std::is_convertible_v<soa_view<const particle>, soa_view<particle>>);
static_assert(!std::is_constructible_v<soa_view<particle>, soa_view<const particle>>);
static_assert(!std::is_assignable_v<strata::soa_reference<const particle>, particle>);
static_assert(std::is_same_v<decltype(std::declval<soa_view<const particle>>().column<&particle::x>()),
                             cuda::std::span<const float>>);
// Compile-time layout proofs for every record the tests use.
static_assert(strata::soa_layout<particle>::proven() && strata::soa_layout<mixed>::proven() &&
              strata::soa_layout<three_bytes>::proven());
static_assert(!strata::soa_layout<particle>::check(5), "capacity must be whole packets");

TEST(SoaView, ProxyReadsAndWritesFieldsOnHostMemory) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(9);
  strata::host_soa_vector<particle> v(ref);
  auto view = v.view();
  particle p = view[4];
  EXPECT_TRUE(same_bits(p, ref[4]));
  strata::get<&particle::vx>(view[4]) = 42.0f;
  view[5].get<&particle::mass>() *= 2;
  view[6] = ref[0];
  view[7] = view[8];
  ref[4].vx = 42.0f;
  ref[5].mass *= 2;
  ref[6] = ref[0];
  ref[7] = ref[8];
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  soa_view<const particle> cv = view;
  EXPECT_EQ(cv[3].get<&particle::z>(), ref[3].z);
  EXPECT_EQ(cv.size(), 9);
  EXPECT_TRUE(view.vector_ready());
}

TEST(SoaView, ForeignColumnsAreChecked) {
  constexpr std::size_t n = 100;
  strata::host_soa_vector<particle> v(128);  // capacity 128: whole packets
  auto c = [&](auto col) { return cuda::std::span<float>(col.data(), 128); };
  auto x = c(v.column<0>()), y = c(v.column<1>()), z = c(v.column<2>()), vx = c(v.column<3>()), vy = c(v.column<4>()),
       vz = c(v.column<5>()), m = c(v.column<6>());
  auto view = strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, vy, vz, m);
  EXPECT_EQ(view.size(), 100);
  EXPECT_EQ(view.capacity(), 100);  // elements past n are the caller's: the view never reaches them
  EXPECT_TRUE(view.vector_ready());

  // Misaligned for vector access: the message names the column, the pointer and the alignment.
  cuda::std::span<float> shifted(x.data() + 1, 127);
  try {
    (void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, vy, vz, shifted);
    FAIL() << "expected misaligned_pointer";
  } catch (const strata::misaligned_pointer& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("'mass'"), std::string::npos) << w;
    EXPECT_NE(w.find("16 bytes"), std::string::npos) << w;
    EXPECT_EQ(e.pointer(), shifted.data());
  }
  // The same pointer is fine for element-aligned access (record iterators only).
  auto loose = strata::make_soa_view<particle>(n, strata::alignment::element, x, y, z, vx, vy, vz, shifted);
  EXPECT_FALSE(loose.vector_ready());
  // Too short, and null with records.
  EXPECT_THROW((void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z.first(50), vx, vy, vz, m),
               strata::size_error);
  cuda::std::span<float> null_col;
  EXPECT_THROW((void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, null_col, vz, m),
               strata::size_error);
  EXPECT_NO_THROW((void)strata::make_soa_view<particle>(0, strata::alignment::vector, null_col, null_col, null_col,
                                                        null_col, null_col, null_col, null_col));
}
