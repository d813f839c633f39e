// SPDX-License-Identifier: Apache-2.0
#include <strata/layout/descriptor.hpp>

#include "../common/records.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace strata_test;
using strata::layout::aligned_record;
using strata::layout::leaf_descriptor;
using strata::layout::record_descriptor;

// {float a, b}: natural alignment 4 (two 32-bit accesses); padded record aligned to 8 (one 64-bit).
static_assert(record_descriptor<two_floats>::natural_alignment == 4);
static_assert(!record_descriptor<two_floats>::natural_vector_access);
static_assert(record_descriptor<two_floats>::padded_size == 8 && alignof(aligned_record<two_floats>) == 8);
static_assert(record_descriptor<two_floats>::access_bytes == 8 && record_descriptor<two_floats>::accesses_per_record == 1);

// 3 x int8 -> __align__(4).
static_assert(record_descriptor<three_bytes>::natural_size == 3);
static_assert(sizeof(aligned_record<three_bytes>) == 4 && alignof(aligned_record<three_bytes>) == 4);
static_assert(record_descriptor<three_bytes>::packet_width == 16);

// 12 bytes -> 16-byte aligned record, one 128-bit access.
static_assert(sizeof(aligned_record<with_float3>) == 16 && alignof(aligned_record<with_float3>) == 16);
static_assert(record_descriptor<with_float3>::accesses_per_record == 1);

// float4 after two floats: alignment propagates to the record, padding inserted before the vector.
static_assert(record_descriptor<floats_then_vec4>::natural_alignment == 16);
static_assert(leaf_descriptor<floats_then_vec4, 2>::offset == 16);
static_assert(record_descriptor<floats_then_vec4>::packed_size == 24);
static_assert(record_descriptor<floats_then_vec4>::natural_size == 32);
static_assert(record_descriptor<floats_then_vec4>::padded_size == 32);

// 32 bytes: two 128-bit accesses.
static_assert(record_descriptor<eight_floats>::padded_size == 32 && record_descriptor<eight_floats>::accesses_per_record == 2);
static_assert(record_descriptor<eight_floats>::access_bytes == 16);

// The particle: 28 B packed -> 32 B padded, W = 4.
static_assert(record_descriptor<particle>::packed_size == 28 && record_descriptor<particle>::padded_size == 32);
static_assert(record_descriptor<particle>::packet_width == 4 && !record_descriptor<particle>::natural_vector_access);

// Mixed: narrowest field is 1 byte, so 16 records per packet; the double column takes 8 vectors.
static_assert(record_descriptor<mixed>::narrowest_leaf == 1 && record_descriptor<mixed>::packet_width == 16);
static_assert(record_descriptor<mixed>::widest_leaf == 8);
static_assert(leaf_descriptor<mixed, 0>::lanes == 2 && leaf_descriptor<mixed, 2>::lanes == 8);

static_assert(strata::layout::check_aligned_record<particle>() && strata::layout::check_aligned_record<three_bytes>() &&
              strata::layout::check_aligned_record<mixed>() && strata::layout::check_aligned_record<floats_then_vec4>());
static_assert(strata::layout::require_vectorizable_leaves<particle>());

// A float3-shaped member opens into three float leaves: every column takes 16-byte vectors.
struct has_float3 {
  BOOST_HANA_DEFINE_STRUCT(has_float3, (float3_like, pos), (int, id));
};
static_assert(record_descriptor<has_float3>::leaves == 4 && leaf_descriptor<has_float3, 2>::name == "pos.z");
static_assert(record_descriptor<has_float3>::all_leaves_vectorizable && record_descriptor<has_float3>::packet_width == 4);
// A 12-byte member strata cannot open stays one leaf, which no 16-byte vector carries whole.
static_assert(!leaf_descriptor<with_opaque, 0>::vectorizable && leaf_descriptor<with_opaque, 0>::lanes == 0);
static_assert(!record_descriptor<with_opaque>::all_leaves_vectorizable && record_descriptor<with_opaque>::packet_width == 1);

TEST(Descriptor, AlignedRecordRoundTripsAndZeroesPadding) {
  particle p{1, 2, 3, 4, 5, 6, 7};
  aligned_record<particle> r(p);
  particle back = r;
  EXPECT_EQ(std::memcmp(&back, &p, sizeof p), 0);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&r);
  for (std::size_t i = sizeof(particle); i < sizeof(r); ++i) EXPECT_EQ(bytes[i], 0) << "padding byte " << i;
}

TEST(Descriptor, FieldNamesAndSizes) {
  EXPECT_EQ((leaf_descriptor<mixed, 3>::name), "flags");
  EXPECT_EQ((leaf_descriptor<mixed, 0>::size), 8u);
  EXPECT_EQ((leaf_descriptor<mixed, 1>::offset), 8u);
}
