// SPDX-License-Identifier: Apache-2.0
// A record as a tree flattened into leaves: members that are reflected structs, arrays
// (std::array, cuda::std::array, C arrays) or vector types (float3, int4, double2, ...) are opened
// up until every leaf is a scalar-like value; each leaf becomes a column. A leaf is a path of
// steps from the record (`pos.x`, `w[2]`) with a type, a name, a byte offset in the record and an
// accessor that works on host and device. Selectors (a member pointer, or strata::member<...> for
// deeper members) name one leaf or a contiguous run of leaves (a whole sub-struct).
#pragma once

#include <strata/config.hpp>
#include <strata/reflect/reflect.hpp>

#if __has_include(<cuda/std/array>)
#include <cuda/std/array>
#define STRATA_HAS_CUDA_STD_ARRAY 1
#endif

#include <array>
#include <bit>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace strata::reflect {

/// Records have at most this many leaves (columns); one struct lists at most max_fields (54) of
/// them directly (Hana's limit, see reflect.hpp), nested structs and arrays the rest.
inline constexpr std::size_t max_leaves = 128;

// ---- arrays and vector types ---------------------------------------------------------------------
template <class A>
struct array_traits {
  static constexpr bool is_array = false;
};
template <class E, std::size_t N>
struct array_traits<E[N]> {
  static constexpr bool is_array = true;
  using element = E;
  static constexpr std::size_t extent = N;
};
template <class E, std::size_t N>
struct array_traits<std::array<E, N>> : array_traits<E[N]> {};
#if defined(STRATA_HAS_CUDA_STD_ARRAY)
template <class E, std::size_t N>
struct array_traits<cuda::std::array<E, N>> : array_traits<E[N]> {};
#endif

namespace detail {
template <class M, class C>
M member_type_of(M C::*);
template <class V>
concept has_x = std::is_class_v<V> && requires { &V::x; } && std::is_member_object_pointer_v<decltype(&V::x)>;
template <class V>
concept has_y = requires { &V::y; } && std::is_member_object_pointer_v<decltype(&V::y)>;
template <class V>
concept has_z = requires { &V::z; } && std::is_member_object_pointer_v<decltype(&V::z)>;
template <class V>
concept has_w = requires { &V::w; } && std::is_member_object_pointer_v<decltype(&V::w)>;
}  // namespace detail

/// CUDA's vector types and any unreflected struct shaped like them: public members x [, y [, z
/// [, w]]] of one arithmetic type and nothing else (sizeof says so). count is 0 for other types.
/// __half2 and __nv_bfloat162 are not opened (their members are not arithmetic): each stays one
/// 4-byte leaf. Specialize for a type of yours to change what strata sees.
template <class V>
struct vector_traits {
  static constexpr std::size_t count = 0;
};
template <class V>
  requires(!reflected<V> && detail::has_x<V>)
struct vector_traits<V> {
  using component = decltype(detail::member_type_of(&V::x));
  static constexpr std::size_t present = 1 + detail::has_y<V> + (detail::has_y<V> && detail::has_z<V>) +
                                         (detail::has_y<V> && detail::has_z<V> && detail::has_w<V>);
  static constexpr bool same_components = [] {
    bool same = true;
    if constexpr (detail::has_y<V>) same = same && std::is_same_v<decltype(detail::member_type_of(&V::y)), component>;
    if constexpr (detail::has_z<V>) same = same && std::is_same_v<decltype(detail::member_type_of(&V::z)), component>;
    if constexpr (detail::has_w<V>) same = same && std::is_same_v<decltype(detail::member_type_of(&V::w)), component>;
    return same;
  }();
  static constexpr std::size_t count =
      std::is_arithmetic_v<component> && same_components && sizeof(V) == present * sizeof(component) ? present : 0;
  template <std::size_t K>
  static constexpr auto member() {
    if constexpr (K == 0) return &V::x;
    else if constexpr (K == 1) return &V::y;
    else if constexpr (K == 2) return &V::z;
    else return &V::w;
  }
};

// ---- steps and paths ----------------------------------------------------------------------------
namespace detail {
/// Offset of member P of a trivially copyable V, read off bytes of 0 and 1 (see reflect.hpp).
template <class V, auto P>
constexpr std::size_t member_offset_by_pattern() {
  using M = decltype(member_type_of(P));
  std::size_t off = 0;
  for (std::size_t bit = 0; (std::size_t(1) << bit) < sizeof(V); ++bit) {
    std::array<unsigned char, sizeof(V)> bytes{};
    for (std::size_t i = 0; i < sizeof(V); ++i) bytes[i] = static_cast<unsigned char>((i >> bit) & 1u);
    off |= std::size_t(std::bit_cast<std::array<unsigned char, sizeof(M)>>(std::bit_cast<V>(bytes).*P)[0] & 1u) << bit;
  }
  return off;
}
}  // namespace detail

/// Field I of the reflected struct S.
template <class S, std::size_t I>
struct field_step {
  using type = field_type_t<S, I>;
  static constexpr std::size_t offset = field_offset<S, I>();
  static constexpr std::string_view name = field_name<S, I>();
  static constexpr auto member = member_pointer<S, I>;
  static constexpr bool is_element = false;
  template <class X>
  STRATA_HD static constexpr auto& apply(X& x) {
    return x.*member_pointer<S, I>;
  }
};
/// Component K (x, y, z, w) of a vector type V.
template <class V, std::size_t K>
struct component_step {
  using type = typename vector_traits<V>::component;
  static constexpr std::size_t offset = detail::member_offset_by_pattern<V, vector_traits<V>::template member<K>()>();
  static constexpr std::string_view name = std::string_view("xyzw").substr(K, 1);
  static constexpr auto member = vector_traits<V>::template member<K>();
  static constexpr bool is_element = false;
  template <class X>
  STRATA_HD static constexpr auto& apply(X& x) {
    return x.*member;
  }
};
/// Element K of an array type A.
template <class A, std::size_t K>
struct element_step {
  using type = typename array_traits<A>::element;
  static constexpr std::size_t offset = K * sizeof(type);
  static constexpr std::size_t index = K;
  static constexpr bool is_element = true;
  template <class X>
  STRATA_HD static constexpr auto& apply(X& x) {
    return x[K];
  }
};

namespace detail {
template <class X>
STRATA_HD constexpr X& apply_steps(X& x) {
  return x;
}
template <class S0, class... Sn, class X>
STRATA_HD constexpr auto& apply_steps(X& x) {
  return apply_steps<Sn...>(S0::apply(x));
}
}  // namespace detail

/// The steps from a record to one of its members (a leaf, or an inner node for selectors).
template <class... Steps>
struct leaf_path {
  static constexpr std::size_t depth = sizeof...(Steps);
  static constexpr std::size_t offset = (std::size_t(0) + ... + Steps::offset);
  template <class X>
  STRATA_HD static constexpr auto& get(X& x) {
    return detail::apply_steps<Steps...>(x);
  }
};
template <class... Paths>
struct leaf_list {
  static constexpr std::size_t size = sizeof...(Paths);
};
template <class... A, class... B>
constexpr leaf_list<A..., B...> operator+(leaf_list<A...>, leaf_list<B...>) {
  return {};
}

namespace detail {
template <class F, class Prefix>
struct flatten;
template <class F, class... S>
struct flatten<F, leaf_path<S...>> {
  static constexpr auto make() {
    if constexpr (reflected<F>) {
      return []<std::size_t... I>(std::index_sequence<I...>) {
        return (leaf_list<>{} + ... + typename flatten<field_type_t<F, I>, leaf_path<S..., field_step<F, I>>>::type{});
      }(std::make_index_sequence<field_count<F>>{});
    } else if constexpr (array_traits<F>::is_array) {
      using E = typename array_traits<F>::element;
      return []<std::size_t... K>(std::index_sequence<K...>) {
        return (leaf_list<>{} + ... + typename flatten<E, leaf_path<S..., element_step<F, K>>>::type{});
      }(std::make_index_sequence<array_traits<F>::extent>{});
    } else if constexpr (vector_traits<F>::count > 0) {
      return []<std::size_t... K>(std::index_sequence<K...>) {
        return leaf_list<leaf_path<S..., component_step<F, K>>...>{};
      }(std::make_index_sequence<vector_traits<F>::count>{});
    } else {
      return leaf_list<leaf_path<S...>>{};
    }
  }
  using type = decltype(make());
};

template <class List, std::size_t L>
struct nth;
template <class P0, class... P, std::size_t L>
struct nth<leaf_list<P0, P...>, L> : nth<leaf_list<P...>, L - 1> {};
template <class P0, class... P>
struct nth<leaf_list<P0, P...>, 0> {
  using type = P0;
};
}  // namespace detail

/// The leaves of record T, in reflection order (depth first).
template <class T>
using leaves_t = typename detail::flatten<std::remove_const_t<T>, leaf_path<>>::type;
template <class T>
inline constexpr std::size_t leaf_count = leaves_t<T>::size;
/// The path of leaf L of T.
template <class T, std::size_t L>
using leaf_t = typename detail::nth<leaves_t<T>, L>::type;
template <class T, std::size_t L>
using leaf_type_t = std::remove_cvref_t<decltype(leaf_t<T, L>::get(std::declval<std::remove_const_t<T>&>()))>;

template <class T, std::size_t L>
constexpr std::size_t leaf_offset() {
  return leaf_t<T, L>::offset;
}
/// The byte size of every leaf of T, in leaf order (what each layout's columns or runs hold).
template <class T>
inline constexpr std::array<std::size_t, leaf_count<T>> leaf_sizes = []<std::size_t... L>(std::index_sequence<L...>) {
  return std::array<std::size_t, leaf_count<T>>{sizeof(leaf_type_t<T, L>)...};
}(std::make_index_sequence<leaf_count<T>>{});
/// The alignment of every leaf of T, in leaf order.
template <class T>
inline constexpr std::array<std::size_t, leaf_count<T>> leaf_alignments = []<std::size_t... L>(std::index_sequence<L...>) {
  return std::array<std::size_t, leaf_count<T>>{alignof(leaf_type_t<T, L>)...};
}(std::make_index_sequence<leaf_count<T>>{});

/// Leaf L of a record (const record: const leaf), on host and device.
template <std::size_t L, class T>
STRATA_HD constexpr auto& leaf(T& r) {
  return leaf_t<std::remove_const_t<T>, L>::get(r);
}

/// Calls f(std::integral_constant<std::size_t, L>{}) for every leaf L of T, in order.
STRATA_EXEC_CHECK_DISABLE
template <class T, class F>
STRATA_HD constexpr void for_each_leaf(F&& f) {
  detail::for_each_index(f, std::make_index_sequence<leaf_count<std::remove_const_t<T>>>{});
}

// ---- names --------------------------------------------------------------------------------------
/// A name built at compile time (a structural type, so it can name a member in a template
/// argument of a diagnostic).
struct fixed_name {
  char c[200]{};
  std::size_t n = 0;
  constexpr void append(std::string_view s) {
    for (char ch : s)
      if (n + 1 < sizeof c) c[n++] = ch;
  }
  constexpr void append_number(std::size_t k) {
    char digits[24]{};
    std::size_t d = 0;
    do digits[d++] = char('0' + k % 10), k /= 10;
    while (k);
    while (d) append(std::string_view(&digits[--d], 1));
  }
  constexpr std::string_view view() const { return {c, n}; }
};
namespace detail {
template <class Path>
struct path_name;
template <class... S>
struct path_name<leaf_path<S...>> {
  static constexpr fixed_name value = [] {
    fixed_name out;
    auto add = [&]<class Step>(Step) {
      if constexpr (Step::is_element) {
        out.append("[");
        out.append_number(Step::index);
        out.append("]");
      } else {
        if (out.n) out.append(".");
        out.append(Step::name);
      }
    };
    (add(S{}), ...);
    return out;
  }();
};
}  // namespace detail

/// Name of leaf L as a path: `pos.x`, `w[2]`, `mass`.
template <class T, std::size_t L>
constexpr std::string_view leaf_name() {
  return detail::path_name<leaf_t<T, L>>::value.view();
}

/// Every leaf's name, indexed at run time (for messages).
template <class T>
inline constexpr auto leaf_names = []<std::size_t... L>(std::index_sequence<L...>) {
  return std::array<std::string_view, sizeof...(L)>{leaf_name<T, L>()...};
}(std::make_index_sequence<leaf_count<T>>{});

// ---- selectors ----------------------------------------------------------------------------------
/// A member below the record's own fields, named by the steps to it: strata::member<&particle::pos,
/// &vec3::x>, or with array indices, strata::member<&cell::w, 2>. A plain member pointer names a
/// field of the record itself.
template <auto... Steps>
struct member_t {};
template <auto... Steps>
inline constexpr member_t<Steps...> member{};

namespace detail {
template <auto... Sel>
struct selector_list {};
template <auto P>
struct selector_of {
  using type = selector_list<P>;
};
template <auto... S, member_t<S...> P>
struct selector_of<P> {
  using type = selector_list<S...>;
};

template <class Step, auto Sel>
constexpr bool step_matches() {
  if constexpr (Step::is_element) {
    if constexpr (std::is_integral_v<decltype(Sel)>) return std::size_t(Sel) == Step::index;
    else return false;
  } else if constexpr (std::is_same_v<std::remove_cv_t<decltype(Step::member)>, decltype(Sel)>) {
    return Step::member == Sel;
  } else {
    return false;
  }
}
template <class Path, class Selectors>
struct prefix_match : std::false_type {};
template <class... S>
struct prefix_match<leaf_path<S...>, selector_list<>> : std::true_type {};
template <class S0, class... S, auto Sel0, auto... Sel>
struct prefix_match<leaf_path<S0, S...>, selector_list<Sel0, Sel...>>
    : std::bool_constant<step_matches<S0, Sel0>() && prefix_match<leaf_path<S...>, selector_list<Sel...>>::value> {};

template <class T, class Selectors>
constexpr std::array<std::size_t, 2> select_leaves() {
  std::size_t first = leaf_count<T>, count = 0;
  [&]<std::size_t... L>(std::index_sequence<L...>) {
    auto take = [&](std::size_t l, bool match) {
      if (match) first = first < l ? first : l, ++count;
    };
    (take(L, prefix_match<leaf_t<T, L>, Selectors>::value), ...);
  }(std::make_index_sequence<leaf_count<T>>{});
  return {first, count};
}
}  // namespace detail

namespace detail {
template <class Path, std::size_t Depth, class Taken = leaf_path<>>
struct path_prefix;
template <class... S, std::size_t Depth, class... Taken>
  requires(sizeof...(Taken) == Depth)
struct path_prefix<leaf_path<S...>, Depth, leaf_path<Taken...>> {
  using type = leaf_path<Taken...>;
};
template <class S0, class... S, std::size_t Depth, class... Taken>
  requires(sizeof...(Taken) < Depth)
struct path_prefix<leaf_path<S0, S...>, Depth, leaf_path<Taken...>> : path_prefix<leaf_path<S...>, Depth, leaf_path<Taken..., S0>> {};
template <auto... S>
constexpr std::size_t selector_depth(selector_list<S...>) {
  return sizeof...(S);
}
}  // namespace detail

/// The leaves a selector names: a member pointer to a field of T, or a strata::member<...>. A field
/// that is a struct, array or vector type names all its leaves (they are contiguous). path is the
/// steps to the named member; names_leaf says whether that member is itself a leaf.
template <class T, auto Sel>
struct selection {
  using selectors = typename detail::selector_of<Sel>::type;
  static constexpr auto range = detail::select_leaves<std::remove_const_t<T>, selectors>();
  static_assert(range[1] > 0, "strata: the selector (member pointer or strata::member<...>) names no member of this record.");
  static constexpr std::size_t first = range[0], count = range[1];
  using path = typename detail::path_prefix<leaf_t<std::remove_const_t<T>, first>, detail::selector_depth(selectors{})>::type;
  static constexpr bool names_leaf = count == 1 && path::depth == leaf_t<std::remove_const_t<T>, first>::depth;
};
/// The one leaf a selector names; a selector that names a whole struct, array or vector member
/// stops compilation here (a column is one leaf).
template <class T, auto Sel>
inline constexpr std::size_t leaf_index_v = [] {
  static_assert(selection<T, Sel>::names_leaf,
                "strata: this selector names a member with several leaves (a struct, array or vector type); name "
                "one leaf with strata::member<...>, e.g. strata::member<&particle::pos, &vec3::x>.");
  return selection<T, Sel>::first;
}();

/// A leaf index, or the leaf a selector names: what interop functions accept as "a column".
template <class T, auto Sel>
inline constexpr std::size_t leaf_of = [] {
  if constexpr (std::is_integral_v<decltype(Sel)>) {
    static_assert(!(Sel < 0) && std::size_t(Sel) < leaf_count<T>, "strata: leaf index out of range for this record");
    return std::size_t(Sel);
  } else {
    return leaf_index_v<T, Sel>;
  }
}();

// ---- diagnostics --------------------------------------------------------------------------------
/// Each of these fails with the member's path as its template argument (the compiler prints it).
template <fixed_name Member>
struct member_is_a_pointer {
  static_assert(Member.n == 0,
                "strata: the record member named in this template argument is a pointer. Records are copied between "
                "host and device, where a pointer does not stay valid: store an index or an offset instead.");
  static constexpr bool ok = true;
};
template <fixed_name Member>
struct member_is_a_union {
  static_assert(Member.n == 0,
                "strata: the record member named in this template argument is a union; strata stores each member in "
                "its own column and cannot tell which alternative is live. Use a struct or a plain integer.");
  static constexpr bool ok = true;
};
template <fixed_name Member>
struct member_is_not_bitwise_copyable {
  static_assert(Member.n == 0,
                "strata: the record member named in this template argument is not trivially copyable; records are "
                "copied as bytes. Remove its user-defined copy/move operations and destructor, or declare it "
                "strata::reflect::bitwise_copyable if its copies only copy bits.");
  static constexpr bool ok = true;
};
template <class T, std::size_t Leaves>
struct record_has_more_leaves_than_the_limit {
  static_assert(Leaves <= max_leaves,
                "strata: this record flattens into more leaves (columns) than strata::reflect::max_leaves; group "
                "rarely used members into a separate container.");
  static constexpr bool ok = true;
};

namespace detail {
/// A type strata may copy as bytes: trivially copyable, declared bitwise_copyable, or a reflected
/// struct (or array) made only of such types whose own copy is the members' copies.
template <class F>
constexpr bool copies_as_bytes() {
  if constexpr (std::is_trivially_copyable_v<F> || bitwise_copyable<F>) {
    return true;
  } else if constexpr (array_traits<F>::is_array) {
    return copies_as_bytes<typename array_traits<F>::element>();
  } else if constexpr (reflected<F> && std::is_trivially_destructible_v<F>) {
    // Accepted only where a member explains the non-trivial copy (a __half2 member, say): a
    // struct's own copy constructor is never bypassed.
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (copies_as_bytes<field_type_t<F, I>>() && ...) && (!std::is_trivially_copyable_v<field_type_t<F, I>> || ...);
    }(std::make_index_sequence<field_count<F>>{});
  } else {
    return false;
  }
}
template <class T, std::size_t L>
constexpr bool check_leaf() {
  using F = leaf_type_t<T, L>;
  constexpr fixed_name name = path_name<leaf_t<T, L>>::value;
  if constexpr (std::is_pointer_v<F> || std::is_member_pointer_v<F>) return member_is_a_pointer<name>::ok;
  else if constexpr (std::is_union_v<F>) return member_is_a_union<name>::ok;
  else if constexpr (!copies_as_bytes<F>()) return member_is_not_bitwise_copyable<name>::ok;
  else return true;
}
}  // namespace detail

/// Proves at compile time that strata can store T; each failure says what to change.
template <class T>
constexpr bool check_record() {
  static_assert(reflected<T>,
                "strata: this type is not reflected. Declare its fields with BOOST_HANA_DEFINE_STRUCT(T, (type, "
                "name), ...) or adapt an existing struct with BOOST_HANA_ADAPT_STRUCT(T, name, ...); either takes at "
                "most 54 fields (strata::reflect::max_fields): group more into nested structs or arrays.");
  if constexpr (reflected<T>) {
    static_assert(detail::copies_as_bytes<T>(),
                  "strata: records are copied as bytes between host and device and between layouts, so the type must "
                  "be trivially copyable: remove user-defined copy/move operations and destructors.");
    static_assert(std::is_standard_layout_v<T>,
                  "strata: records must be standard-layout (no virtual functions, no base class with data).");
    static_assert(record_has_more_leaves_than_the_limit<T, leaf_count<T>>::ok);
    [[maybe_unused]] constexpr bool leaves_ok = []<std::size_t... L>(std::index_sequence<L...>) {
      return (detail::check_leaf<T, L>() && ...);
    }(std::make_index_sequence<leaf_count<T>>{});
    static_assert(check_offsets<T>());
  }
  return true;
}

}  // namespace strata::reflect

namespace strata {
using reflect::member;

namespace reflect::detail {
template <class>
struct is_member_t : std::false_type {};
template <auto... S>
struct is_member_t<member_t<S...>> : std::true_type {};
}  // namespace reflect::detail

/// A member pointer to a field of the record, or strata::member<...> to a member below it.
template <auto Sel>
concept selector = std::is_member_object_pointer_v<decltype(Sel)> || reflect::detail::is_member_t<std::remove_cvref_t<decltype(Sel)>>::value;
}  // namespace strata
