// SPDX-License-Identifier: Apache-2.0
// Projections: a view over a chosen subset of a columnar view's leaves. Reads fill only those leaves
// of the record (the rest are value-initialised); writes store only those columns. Selectors name a
// field (&particle::mass), a whole sub-struct (&particle::pos: all its leaves) or one leaf below
// (strata::member<&particle::pos, &vec3::x>).
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>

#include <type_traits>
#include <utility>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T, class M, std::size_t... L>
class basic_projection;

template <class T, class M, std::size_t... L>
class projection_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  STRATA_HD projection_reference(const basic_view<T, M>& v, index_t i) : view_(v), i_(i) {}
  projection_reference(const projection_reference&) = default;

  STRATA_HD operator record() const { return get(); }
  STRATA_HD record get() const {
    record r{};
    ((reflect::leaf<L>(r) = *view_.template leaf_ptr<L>(i_)), ...);
    return r;
  }
  STRATA_HD const projection_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    ((*view_.template leaf_ptr<L>(i_) = reflect::leaf<L>(r)), ...);
    return *this;
  }
  STRATA_HD const projection_reference& operator=(const projection_reference& o) const
    requires(!std::is_const_v<T>)
  {
    return *this = o.get();
  }
  /// Writes the projected leaves of r whose bits differ from before: an in-place update's store.
  STRATA_HD void store_changed(const record& r, const record& before) const
    requires(!std::is_const_v<T>)
  {
    ((detail::bits_differ(reflect::leaf<L>(r), reflect::leaf<L>(before)) ? void(*view_.template leaf_ptr<L>(i_) = reflect::leaf<L>(r))
                                                                           : void()),
     ...);
  }
  template <auto Sel>
    requires selector<Sel>
  STRATA_HD auto& get() const {
    constexpr std::size_t k = reflect::leaf_index_v<record, Sel>;
    static_assert(((k == L) || ...), "strata: this leaf is not part of the projection");
    return *view_.template leaf_ptr<k>(i_);
  }

 private:
  basic_view<T, M> view_;
  index_t i_;
};

template <auto Sel, class T, class M, std::size_t... L>
  requires selector<Sel>
STRATA_HD auto& get(const projection_reference<T, M, L...>& r) {
  return r.template get<Sel>();
}

template <class T, class M, std::size_t... L>
class basic_projection {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = projection_reference<T, M, L...>;
  using base_view = basic_view<T, M>;
  using mapping_type = M;
  static constexpr std::size_t projected = sizeof...(L);

  basic_projection() = default;
  STRATA_HD explicit basic_projection(const basic_view<T, M>& v) : view_(v) {}
  STRATA_HD index_t size() const { return view_.size(); }
  STRATA_HD index_t capacity() const { return view_.capacity(); }
  STRATA_HD memory_location location() const { return view_.location(); }
  STRATA_HD const basic_view<T, M>& base() const { return view_; }
  STRATA_HD reference operator[](index_t i) const { return reference(view_, i); }
  STRATA_HD record load(index_t i) const { return reference(view_, i).get(); }
  STRATA_HD void store(index_t i, const record& r) const { reference(view_, i) = r; }
  STRATA_HD bool vector_aligned() const { return view_.vector_aligned(); }
  STRATA_HD bool whole_packets() const { return view_.whole_packets(); }
  STRATA_HD bool vector_ready() const { return view_.vector_ready(); }
  STRATA_HD bool packets_fit() const { return view_.packets_fit(); }
  STRATA_HD bool packet_ready() const { return view_.packet_ready(); }
  STRATA_HD basic_projection first(index_t n) const { return basic_projection(view_.first(n)); }
  /// The same leaves of the same records (one mutable, one const, say).
  template <class U>
  STRATA_HD bool same_records(const basic_projection<U, M, L...>& o) const {
    return view_.same_records(o.base());
  }

 private:
  basic_view<T, M> view_{};
};

template <class T, std::size_t... L>
using soa_projection = basic_projection<T, soa_mapping<std::remove_const_t<T>>, L...>;

namespace detail {
template <class T, class M, std::size_t... L>
STRATA_HD auto projection_of(const basic_view<T, M>& v, std::index_sequence<L...>) {
  return basic_projection<T, M, L...>(v);
}
template <std::size_t... A, std::size_t... B>
constexpr std::index_sequence<A..., B...> operator+(std::index_sequence<A...>, std::index_sequence<B...>) {
  return {};
}
template <class T, auto Sel>
constexpr auto selected_leaves() {
  using sel = reflect::selection<T, Sel>;
  return []<std::size_t... K>(std::index_sequence<K...>) { return std::index_sequence<sel::first + K...>{}; }(
      std::make_index_sequence<sel::count>{});
}
/// The leaves of all selectors, in the order given.
template <class T, auto... Sel>
constexpr auto projected_leaves() {
  return (std::index_sequence<>{} + ... + selected_leaves<T, Sel>());
}
}  // namespace detail

/// project<&particle::x, &particle::vx>(view): reads and writes touch only columns x and vx;
/// project<&particle::pos>(view): every leaf of pos.
template <auto... Sel, class T, class M>
  requires(selector<Sel> && ...)
STRATA_HD auto project(const basic_view<T, M>& v) {
  return detail::projection_of(v, detail::projected_leaves<std::remove_const_t<T>, Sel...>());
}
template <auto... Sel, class Container>
  requires((selector<Sel> && ...) && requires(Container& c) { c.view(); })
auto project(Container& c) {
  return project<Sel...>(c.view());
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T, class M, std::size_t... L>
struct thrust::detail::is_proxy_reference<strata::projection_reference<T, M, L...>> : thrust::detail::true_type {};
