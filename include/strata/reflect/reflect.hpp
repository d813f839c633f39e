// Compile-time description of a user struct reflected by Boost.Hana: field count, types, names,
// member pointers and byte offsets. Hana runs only at compile time; device code uses member pointers.
#pragma once

#include <strata/config.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace strata::reflect {

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

/// Types whose bytes may be copied even though their class declares copy operations: CUDA's half
/// and bfloat16 types (their constructors only copy the bits). Specialize for similar types of yours.
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

template <class T>
constexpr bool record_is_bitwise_copyable() {
  if constexpr (std::is_trivially_copyable_v<T>) {
    return true;
  } else if constexpr (!std::is_trivially_destructible_v<T> || !boost::hana::Struct<T>::value) {
    return false;
  } else {
    // Accepted only when a field explains the non-trivial copy (a __half2 member, say) and every
    // field may be copied as bytes; a record's own copy constructor is never bypassed.
    return []<std::size_t... I>(std::index_sequence<I...>) {
      using fields = std::tuple<std::remove_cvref_t<decltype(std::declval<detail::accessor_t<T, I>>()(std::declval<T&>()))>...>;
      return (bitwise_copyable<std::tuple_element_t<I, fields>> && ...) &&
             (!std::is_trivially_copyable_v<std::tuple_element_t<I, fields>> || ...);
    }(std::make_index_sequence<decltype(boost::hana::length(boost::hana::accessors<T>()))::value>{});
  }
}

/// Proves at compile time that strata can store T; each failure says what to change.
template <class T>
constexpr bool check_record() {
  static_assert(reflected<T>,
                "strata: this type is not reflected. Declare its fields with BOOST_HANA_DEFINE_STRUCT(T, (type, "
                "name), ...) or adapt an existing struct with BOOST_HANA_ADAPT_STRUCT(T, name, ...).");
  static_assert(record_is_bitwise_copyable<T>(),
                "strata: records are copied as bytes between host and device and between layouts, so the "
                "type must be trivially copyable: remove user-defined copy/move operations and destructors.");
  static_assert(std::is_standard_layout_v<T>,
                "strata: records must be standard-layout (no virtual functions, no base class with data).");
  return true;
}

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

/// Byte offset of field I inside T. Standard layout lays fields out in declaration order, each at
/// the next multiple of its alignment; check_offsets<T>() confirms the rule gives sizeof(T).
template <reflected T, std::size_t I>
constexpr std::size_t field_offset() {
  std::size_t off = 0;
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    ((off = align_up(off, alignof(field_type_t<T, J>)) + (J < I ? sizeof(field_type_t<T, J>) : 0)), ...);
  }(std::make_index_sequence<I + 1>{});
  return off;
}

template <reflected T>
constexpr bool check_offsets() {
  constexpr std::size_t n = field_count<T>;
  if constexpr (n == 0) {
    return true;
  } else {
    constexpr std::size_t end = field_offset<T, n - 1>() + sizeof(field_type_t<T, n - 1>);
    static_assert(align_up(end, alignof(T)) == sizeof(T),
                  "strata: the record has members Hana does not reflect, or reflected fields out of declaration "
                  "order; list every data member, in order, in BOOST_HANA_DEFINE_STRUCT/ADAPT_STRUCT.");
    return true;
  }
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
