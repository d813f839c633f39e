// Field projections: a view over a chosen subset of an SoA record's fields. Reads fill only those
// fields of the record (the rest are value-initialised); writes store only those columns.
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>

#include <type_traits>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T, std::size_t... I>
class soa_projection;

template <class T, std::size_t... I>
class projection_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  STRATA_HD projection_reference(const soa_view<T>& v, index_t i) : view_(v), i_(i) {}
  projection_reference(const projection_reference&) = default;

  STRATA_HD operator record() const { return get(); }
  STRATA_HD record get() const {
    record r{};
    ((r.*reflect::member_pointer<record, I> = view_.template column_data<I>()[i_]), ...);
    return r;
  }
  STRATA_HD const projection_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    ((view_.template column_data<I>()[i_] = r.*reflect::member_pointer<record, I>), ...);
    return *this;
  }
  STRATA_HD const projection_reference& operator=(const projection_reference& o) const
    requires(!std::is_const_v<T>)
  {
    return *this = o.get();
  }
  template <auto P>
  STRATA_HD auto& get() const {
    constexpr std::size_t k = reflect::field_index_v<record, P>;
    static_assert(((k == I) || ...), "strata: this field is not part of the projection");
    return view_.template column_data<k>()[i_];
  }

 private:
  soa_view<T> view_;
  index_t i_;
};

template <class T, std::size_t... I>
class soa_projection {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = projection_reference<T, I...>;
  using base_view = soa_view<T>;
  static constexpr std::size_t projected = sizeof...(I);

  soa_projection() = default;
  STRATA_HD explicit soa_projection(const soa_view<T>& v) : view_(v) {}
  STRATA_HD index_t size() const { return view_.size(); }
  STRATA_HD index_t capacity() const { return view_.capacity(); }
  STRATA_HD const soa_view<T>& base() const { return view_; }
  STRATA_HD reference operator[](index_t i) const { return reference(view_, i); }
  STRATA_HD record load(index_t i) const { return reference(view_, i).get(); }
  STRATA_HD void store(index_t i, const record& r) const { reference(view_, i) = r; }
  STRATA_HD bool vector_ready() const { return view_.vector_ready(); }

 private:
  soa_view<T> view_{};
};

/// project<&particle::x, &particle::vx>(view): reads and writes touch only columns x and vx.
template <auto... P, class T>
STRATA_HD auto project(const soa_view<T>& v) {
  return soa_projection<T, reflect::field_index_v<std::remove_const_t<T>, P>...>(v);
}
template <auto... P, class Container>
  requires requires(Container& c) { c.view(); }
auto project(Container& c) {
  return project<P...>(c.view());
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T, std::size_t... I>
struct thrust::detail::is_proxy_reference<strata::projection_reference<T, I...>> : thrust::detail::true_type {};
