// SPDX-License-Identifier: Apache-2.0
// Leaves: records flattened through nested structs, arrays and vector types; names, offsets
// against the compiler's, selectors, and leaf access that reads and writes the right member.
#include <strata/reflect/leaves.hpp>

#include "../common/records.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace sr = strata::reflect;
using namespace strata_test;

// The nested particle has the flat particle's seven leaves, in the same places.
static_assert(sr::leaf_count<nested_particle> == 7 && sr::leaf_count<particle> == 7);
static_assert(sr::leaf_name<nested_particle, 0>() == "pos.x" && sr::leaf_name<nested_particle, 5>() == "vel.z" &&
              sr::leaf_name<nested_particle, 6>() == "mass");
static_assert(sr::leaf_offset<nested_particle, 4>() == offsetof(nested_particle, vel) + offsetof(vec3, y));
static_assert(std::is_same_v<sr::leaf_type_t<nested_particle, 3>, float>);

// Arrays become one leaf per element, vector types one per component; mixed leaf sizes.
static_assert(sr::leaf_count<cell_record> == 3 + 3 + 1 + 1 + 2);
static_assert(sr::leaf_name<cell_record, 2>() == "w[2]" && sr::leaf_name<cell_record, 4>() == "v.y" &&
              sr::leaf_name<cell_record, 9>() == "tag[1]");
static_assert(sr::leaf_offset<cell_record, 2>() == offsetof(cell_record, w) + 2 * sizeof(double));
static_assert(sr::leaf_offset<cell_record, 6>() == offsetof(cell_record, k) && sr::leaf_offset<cell_record, 9>() == offsetof(cell_record, tag) + 1);
static_assert(std::is_same_v<sr::leaf_type_t<cell_record, 9>, std::uint8_t>);

// Two levels of nesting and a record over 64 bytes.
static_assert(sizeof(big_record) > 64 && sr::leaf_count<big_record> == 5 + 2 + 5 + 5 + 1 + 1);
static_assert(sr::leaf_name<big_record, 8>() == "b.f[0]" && sr::leaf_name<big_record, 6>() == "d.y");
static_assert(sr::leaf_offset<big_record, 8>() == offsetof(big_record, b) + offsetof(inner_block, f));
static_assert(sr::leaf_offset<big_record, 18>() == offsetof(big_record, id));

// bool members after wider ones, in arrays and nested structs, sit where the compiler put them
// (offsets are read off bytes of 0 and 1, the only bytes a bool may hold).
static_assert(sr::leaf_count<with_bools> == 1 + 1 + 3 + 2 + 1 + 1);
static_assert(sr::leaf_offset<with_bools, 1>() == offsetof(with_bools, alive));
static_assert(sr::leaf_offset<with_bools, 4>() == offsetof(with_bools, mask) + 2);
static_assert(sr::leaf_offset<with_bools, 6>() == offsetof(with_bools, inner) + offsetof(flagged, hit));
static_assert(sr::leaf_offset<with_bools, 8>() == offsetof(with_bools, last));
static_assert(strata::reflect::field_offset<flagged, 1>() == offsetof(flagged, hit));

// __half2 (and its host stand-in) stays one 4-byte leaf; float3 opens.
static_assert(sr::leaf_count<mixed_convert> == 3 + 1 + 1 + 1 && sr::leaf_name<mixed_convert, 4>() == "q");

// Selectors: a field with several leaves names them all; strata::member<...> names one leaf.
static_assert(sr::selection<nested_particle, &nested_particle::vel>::first == 3 &&
              sr::selection<nested_particle, &nested_particle::vel>::count == 3 &&
              !sr::selection<nested_particle, &nested_particle::vel>::names_leaf);
static_assert(sr::leaf_index_v<nested_particle, strata::member<&nested_particle::vel, &vec3::z>> == 5);
static_assert(sr::leaf_index_v<nested_particle, &nested_particle::mass> == 6);
static_assert(sr::leaf_index_v<cell_record, strata::member<&cell_record::w, 1>> == 1);
static_assert(sr::selection<big_record, strata::member<&big_record::b, &inner_block::f>>::first == 8 &&
              sr::selection<big_record, strata::member<&big_record::b, &inner_block::f>>::count == 4);
static_assert(sr::check_record<nested_particle>() && sr::check_record<cell_record>() && sr::check_record<big_record>());

TEST(Leaves, AccessReachesTheNamedMember) {
  big_record r{};
  sr::leaf<8>(r) = 2.5f;   // b.f[0]
  sr::leaf<6>(r) = -1.0;   // d.y
  sr::leaf<15>(r) = 7;     // s[3]
  sr::leaf<18>(r) = 1234;  // id
  EXPECT_EQ(r.b.f[0], 2.5f);
  EXPECT_EQ(r.d.y, -1.0);
  EXPECT_EQ(r.s[3], 7);
  EXPECT_EQ(r.id, 1234);
  const big_record& c = r;
  static_assert(std::is_same_v<decltype(sr::leaf<8>(c)), const float&>);
}

TEST(Leaves, NamesInOrder) {
  std::string names;
  sr::for_each_leaf<cell_record>([&](auto l) { names += std::string(sr::leaf_name<cell_record, decltype(l)::value>()) + ","; });
  EXPECT_EQ(names, "w[0],w[1],w[2],v.x,v.y,v.z,k,flags,tag[0],tag[1],");
}

// Every leaf's offset, for every test record, equals where the compiler put the member.
template <class T>
void expect_offsets_match_addresses() {
  T r{};
  const auto* base = reinterpret_cast<const unsigned char*>(&r);
  sr::for_each_leaf<T>([&](auto l) {
    constexpr std::size_t L = decltype(l)::value;
    EXPECT_EQ(reinterpret_cast<const unsigned char*>(&sr::leaf<L>(r)) - base, std::ptrdiff_t(sr::leaf_offset<T, L>()))
        << sr::leaf_name<T, L>();
  });
}
TEST(Leaves, OffsetsAreTheCompilers) {
  expect_offsets_match_addresses<nested_particle>();
  expect_offsets_match_addresses<cell_record>();
  expect_offsets_match_addresses<big_record>();
  expect_offsets_match_addresses<mixed_convert>();
  expect_offsets_match_addresses<mixed>();
  expect_offsets_match_addresses<order_cba>();
}
