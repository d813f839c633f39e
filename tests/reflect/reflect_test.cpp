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
