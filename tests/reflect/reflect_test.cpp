// SPDX-License-Identifier: Apache-2.0
#include <strata/reflect/leaves.hpp>

#include "../common/records.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace sr = strata::reflect;
using namespace strata_test;

static_assert(sr::reflected<particle> && sr::reflected<legacy> && !sr::reflected<float3_like>);
static_assert(sr::field_count<particle> == 7 && sr::field_count<legacy> == 2);
static_assert(std::is_same_v<sr::field_type_t<mixed, 0>, double>);
static_assert(std::is_same_v<sr::field_type_t<mixed, 2>, std::uint16_t>);
static_assert(sr::field_name<particle, 6>() == "mass" && sr::field_name<legacy, 0>() == "id");
static_assert(sr::member_pointer<particle, 3> == &particle::vx);
static_assert(sr::field_index_v<particle, &particle::mass> == 6);
static_assert(sr::field_index<particle, &mixed::x>() == sr::field_count<particle>);  // not a field of particle
static_assert(sr::check_record<particle>() && sr::check_offsets<floats_then_vec4>());

// Hana's struct macros take at most reflect::max_fields (54) fields; both spellings reach it (55
// break inside the macro, before strata sees the type: see reflect.hpp).
namespace {
struct fields54 {
  BOOST_HANA_DEFINE_STRUCT(fields54, (float, f0), (double, f1), (std::int32_t, f2), (std::uint8_t, f3),
                           (float, f4), (double, f5), (std::int32_t, f6), (std::uint8_t, f7), (float, f8),
                           (double, f9), (std::int32_t, f10), (std::uint8_t, f11), (float, f12), (double,
                           f13), (std::int32_t, f14), (std::uint8_t, f15), (float, f16), (double, f17),
                           (std::int32_t, f18), (std::uint8_t, f19), (float, f20), (double, f21),
                           (std::int32_t, f22), (std::uint8_t, f23), (float, f24), (double, f25),
                           (std::int32_t, f26), (std::uint8_t, f27), (float, f28), (double, f29),
                           (std::int32_t, f30), (std::uint8_t, f31), (float, f32), (double, f33),
                           (std::int32_t, f34), (std::uint8_t, f35), (float, f36), (double, f37),
                           (std::int32_t, f38), (std::uint8_t, f39), (float, f40), (double, f41),
                           (std::int32_t, f42), (std::uint8_t, f43), (float, f44), (double, f45),
                           (std::int32_t, f46), (std::uint8_t, f47), (float, f48), (double, f49),
                           (std::int32_t, f50), (std::uint8_t, f51), (float, f52), (double, f53));
};
struct adapted54 {
  float f0; double f1; std::int32_t f2; std::uint8_t f3; float f4; double f5; std::int32_t f6; std::uint8_t
  f7; float f8; double f9; std::int32_t f10; std::uint8_t f11; float f12; double f13; std::int32_t f14;
  std::uint8_t f15; float f16; double f17; std::int32_t f18; std::uint8_t f19; float f20; double f21;
  std::int32_t f22; std::uint8_t f23; float f24; double f25; std::int32_t f26; std::uint8_t f27; float f28;
  double f29; std::int32_t f30; std::uint8_t f31; float f32; double f33; std::int32_t f34; std::uint8_t f35;
  float f36; double f37; std::int32_t f38; std::uint8_t f39; float f40; double f41; std::int32_t f42;
  std::uint8_t f43; float f44; double f45; std::int32_t f46; std::uint8_t f47; float f48; double f49;
  std::int32_t f50; std::uint8_t f51; float f52; double f53;
};
}  // namespace
BOOST_HANA_ADAPT_STRUCT(adapted54, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33,
                        f34, f35, f36, f37, f38, f39, f40, f41, f42, f43, f44, f45, f46, f47, f48, f49, f50,
                        f51, f52, f53);
static_assert(sr::max_fields == 54);
static_assert(sr::field_count<fields54> == sr::max_fields && sr::leaf_count<fields54> == sr::max_fields);
static_assert(sr::field_count<adapted54> == sr::max_fields && sr::check_record<adapted54>());
static_assert(sr::field_name<fields54, 53>() == "f53" && std::is_same_v<sr::field_type_t<fields54, 53>, double>);
static_assert(sr::field_offset<adapted54, 53>() == offsetof(adapted54, f53));

template <class T, std::size_t... I>
void expect_offsets(std::index_sequence<I...>, std::initializer_list<std::size_t> want) {
  std::size_t got[] = {sr::field_offset<T, I>()...};
  std::size_t k = 0;
  for (std::size_t w : want) EXPECT_EQ(got[k++], w) << "field " << k - 1;
}

TEST(Reflect, OffsetsMatchTheCompiler) {
  expect_offsets<particle>(std::make_index_sequence<7>{}, {0, 4, 8, 12, 16, 20, 24});
  expect_offsets<mixed>(std::make_index_sequence<4>{},
                        {offsetof(mixed, energy), offsetof(mixed, x), offsetof(mixed, cell), offsetof(mixed, flags)});
  expect_offsets<floats_then_vec4>(std::make_index_sequence<3>{}, {0, 4, offsetof(floats_then_vec4, v)});
  EXPECT_EQ(offsetof(floats_then_vec4, v), 16u);
}

// Offsets come from the members: adapted in any order, each field is where the compiler put it.
template <class T>
constexpr bool offsets_match_offsetof() {
  constexpr std::size_t want[] = {offsetof(T, a), offsetof(T, b), offsetof(T, c)};
  bool ok = true;
  sr::for_each_field<T>([&](auto i) {
    constexpr std::size_t I = decltype(i)::value;
    const std::string_view name = sr::field_name<T, I>();
    ok = ok && sr::field_offset<T, I>() == want[name[0] - 'a'];
  });
  return ok;
}
static_assert(offsets_match_offsetof<order_abc>() && offsets_match_offsetof<order_acb>() && offsets_match_offsetof<order_bac>() &&
              offsets_match_offsetof<order_bca>() && offsets_match_offsetof<order_cab>() && offsets_match_offsetof<order_cba>());
static_assert(sr::field_offset<pair_ab, 0>() == offsetof(pair_ab, b) && sr::field_offset<pair_ab, 1>() == offsetof(pair_ab, a));

// A member's own alignas moves it in a way no placement rule over the member types can see.
struct member_alignas {
  double d;
  char a;
  alignas(4) char b;
};
BOOST_HANA_ADAPT_STRUCT(member_alignas, b, d, a);
static_assert(sr::field_offset<member_alignas, 0>() == offsetof(member_alignas, b));

TEST(Reflect, MemberPointersReachFields) {
  particle p{1, 2, 3, 4, 5, 6, 7};
  float sum = 0;
  sr::for_each_field<particle>([&](auto i) { sum += p.*sr::member_pointer<particle, decltype(i)::value>; });
  EXPECT_EQ(sum, 28.0f);
  legacy l{42, 0.5f};
  EXPECT_EQ((l.*sr::member_pointer<legacy, 0>), 42);
  l.*sr::member_pointer<legacy, 1> = 2.5f;
  EXPECT_EQ(l.w, 2.5f);
}

TEST(Reflect, NamesInOrder) {
  std::string names;
  sr::for_each_field<mixed>([&](auto i) { names += std::string(sr::field_name<mixed, decltype(i)::value>()) + ","; });
  EXPECT_EQ(names, "energy,x,cell,flags,");
}
