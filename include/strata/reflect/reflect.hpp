// SPDX-License-Identifier: Apache-2.0
// Compile-time description of a struct reflected by Boost.Hana: its direct fields' count, types,
// names, member pointers and byte offsets. Hana runs only at compile time; device code uses member
// pointers. Offsets are read off the members themselves, so fields adapted in any order are placed
// where the compiler put them.
//
// One struct holds at most max_fields (54) fields: BOOST_HANA_DEFINE_STRUCT and
// BOOST_HANA_ADAPT_STRUCT count their arguments, the struct's name included, up to 55 (Boost 1.81),
// and past that the macro expands to nonsense before strata sees the type (errors such as "pasting
// BOOST_HANA_DEFINE_STRUCT_IMPL_ and ( does not give a valid preprocessing token"). A record may
// still have up to max_leaves columns: group fields into nested reflected structs or arrays.
#pragma once

#include <strata/config.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/detail/preprocessor.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace strata::reflect {

/// The most fields one BOOST_HANA_DEFINE_STRUCT or BOOST_HANA_ADAPT_STRUCT can list (Hana's
/// argument counter stops at 55 arguments, the struct's name being one).
inline constexpr std::size_t max_fields = 54;
// The counter's last value; should a Boost release raise it, max_fields may rise with it.
static_assert(BOOST_HANA_PP_NARG(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
                                 55) == max_fields + 1,
              "strata: Boost.Hana's struct macros take max_fields fields and the name");

/// True for a struct declared with BOOST_HANA_DEFINE_STRUCT or adapted with BOOST_HANA_ADAPT_STRUCT.
template <class T>
concept reflected = boost::hana::Struct<std::remove_cv_t<T>>::value;

namespace detail {
// Hana's accessor for a data member carries the member pointer as a template argument; that
// pointer, unlike Hana's function object, can be used in device code.
template <class Accessor>
struct member_pointer_of {
  static constexpr bool is_data_member = false;
};
template <class M, M P>
struct member_pointer_of<boost::hana::struct_detail::member_ptr<M, P>> {
  static constexpr bool is_data_member = true;
  static constexpr M value = P;
};

template <class T>
using accessors_t = decltype(boost::hana::accessors<T>());
template <class T, std::size_t I>
using accessor_pair_t = std::remove_cvref_t<decltype(boost::hana::at_c<I>(std::declval<accessors_t<T>>()))>;
template <class T, std::size_t I>
using accessor_t = std::remove_cvref_t<decltype(boost::hana::second(std::declval<accessor_pair_t<T, I>>()))>;
}  // namespace detail

/// Types whose bytes may be copied even though their class declares copy operations: CUDA's
/// paired half and bfloat16 types (their constructors only copy the bits). Specialize for similar
/// types of yours.
template <class F>
inline constexpr bool bitwise_copyable = std::is_trivially_copyable_v<F>;
#if defined(STRATA_BACKEND_CUDA)
template <>
inline constexpr bool bitwise_copyable<__half> = true;
template <>
inline constexpr bool bitwise_copyable<__half2> = true;
template <>
inline constexpr bool bitwise_copyable<__nv_bfloat16> = true;
template <>
inline constexpr bool bitwise_copyable<__nv_bfloat162> = true;
#endif

template <reflected T>
inline constexpr std::size_t field_count = decltype(boost::hana::length(boost::hana::accessors<T>()))::value;

template <reflected T, std::size_t I>
using field_type_t = std::remove_cvref_t<decltype(std::declval<detail::accessor_t<T, I>>()(std::declval<T&>()))>;

/// Name of field I as written in the struct.
template <reflected T, std::size_t I>
constexpr std::string_view field_name() {
  using name_t = std::remove_cvref_t<decltype(boost::hana::first(std::declval<detail::accessor_pair_t<T, I>>()))>;
  return std::string_view(boost::hana::to<char const*>(name_t{}));
}

/// Member pointer of field I: `obj.*member_pointer<T, I>` works on host and device.
template <reflected T, std::size_t I>
inline constexpr auto member_pointer = [] {
  using mp = detail::member_pointer_of<detail::accessor_t<T, I>>;
  static_assert(mp::is_data_member, "strata: every Hana accessor of a record must name a plain data member.");
  return mp::value;
}();

/// Index of the field that member pointer P names; field_count<T> if P names none.
template <reflected T, auto P>
constexpr std::size_t field_index() {
  std::size_t found = field_count<T>;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ([&] {
      if constexpr (std::is_same_v<std::remove_cv_t<decltype(member_pointer<T, I>)>, decltype(P)>) {
        if (member_pointer<T, I> == P) found = I;
      }
    }(), ...);
  }(std::make_index_sequence<field_count<T>>{});
  return found;
}

template <reflected T, auto P>
inline constexpr std::size_t field_index_v = [] {
  constexpr std::size_t i = field_index<T, P>();
  static_assert(i < field_count<T>, "strata: the member pointer does not name a reflected field of this record.");
  return i;
}();

namespace detail {
template <class T>
concept constexpr_value_initializable = requires { typename std::integral_constant<int, (static_cast<void>(T{}), 0)>; };

/// Byte offsets of T's fields, read off the object: pass k sets byte i of T to bit k of i through
/// std::bit_cast, and the first byte of each field gives bit k of where the field starts. Every byte
/// is 0 or 1, a valid object representation of every member type (a bool holding any other byte is
/// not one, and reads back as 0 or 1). Exact whatever the order of adaptation and whatever alignas
/// a member carries. Needs a trivially copyable T.
template <class T>
constexpr std::array<std::size_t, field_count<T>> offsets_by_pattern() {
  std::array<std::size_t, field_count<T>> off{};
  for (std::size_t bit = 0; (std::size_t(1) << bit) < sizeof(T); ++bit) {
    std::array<unsigned char, sizeof(T)> bytes{};
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<unsigned char>((i >> bit) & 1u);
    const T obj = std::bit_cast<T>(bytes);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((off[I] |= std::size_t(std::bit_cast<std::array<unsigned char, sizeof(field_type_t<T, I>)>>(obj.*member_pointer<T, I>)[0] & 1u)
                  << bit),
       ...);
    }(std::make_index_sequence<field_count<T>>{});
  }
  return off;
}

/// For records that are not trivially copyable (they hold __half2 or __nv_bfloat162, whose copy
/// constructors are user-provided): fields ordered by address (members of one object compare in
/// declaration order, also in constant expressions), each placed at the next multiple of its
/// alignment. check_offsets<T>() confirms that the rule accounts for sizeof(T).
template <class T>
constexpr std::array<std::size_t, field_count<T>> offsets_by_rule() {
  constexpr std::size_t n = field_count<T>;
  std::array<std::size_t, n> order{}, size{}, align{}, off{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((size[I] = sizeof(field_type_t<T, I>), align[I] = alignof(field_type_t<T, I>), order[I] = I), ...);
    if constexpr (constexpr_value_initializable<T>) {
      const T obj{};
      const void* addr[] = {static_cast<const void*>(&(obj.*member_pointer<T, I>))...};
      for (std::size_t a = 0; a < n; ++a)  // insertion sort by address
        for (std::size_t b = a; b > 0 && addr[order[b]] < addr[order[b - 1]]; --b) std::swap(order[b], order[b - 1]);
    }
  }(std::make_index_sequence<n>{});
  std::size_t end = 0;
  for (std::size_t k = 0; k < n; ++k) off[order[k]] = align_up(end, align[order[k]]), end = off[order[k]] + size[order[k]];
  return off;
}

template <class T>
inline constexpr bool offsets_exact = std::is_trivially_copyable_v<T>;

template <class T>
inline constexpr auto field_offsets = [] {
  if constexpr (field_count<T> == 0) return std::array<std::size_t, 0>{};
  else if constexpr (offsets_exact<T>) return offsets_by_pattern<T>();
  else return offsets_by_rule<T>();
}();
}  // namespace detail

/// Byte offset of field I inside T.
template <reflected T, std::size_t I>
constexpr std::size_t field_offset() {
  return detail::field_offsets<T>[I];
}

/// Where offsets come from the placement rule (records holding types that are not trivially
/// copyable), proves that the rule accounts for every byte of T up to its tail padding.
template <reflected T>
constexpr bool check_offsets() {
  if constexpr (!detail::offsets_exact<T> && field_count<T> > 0) {
    constexpr auto end = [] {
      std::size_t e = 0;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((e = std::max(e, field_offset<T, I>() + sizeof(field_type_t<T, I>))), ...);
      }(std::make_index_sequence<field_count<T>>{});
      return e;
    }();
    static_assert(align_up(end, alignof(T)) == sizeof(T),
                  "strata: the record has members Hana does not reflect (or members with their own alignas); "
                  "list every data member in BOOST_HANA_DEFINE_STRUCT/ADAPT_STRUCT.");
  }
  return true;
}

namespace detail {
STRATA_EXEC_CHECK_DISABLE
template <class F, std::size_t... I>
STRATA_HD constexpr void for_each_index(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
}  // namespace detail

/// Calls f(std::integral_constant<std::size_t, I>{}) for every field I of T, in order.
STRATA_EXEC_CHECK_DISABLE
template <class T, class F>
STRATA_HD constexpr void for_each_field(F&& f) {
  detail::for_each_index(f, std::make_index_sequence<field_count<std::remove_const_t<T>>>{});
}

}  // namespace strata::reflect
