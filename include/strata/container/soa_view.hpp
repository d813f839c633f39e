// Non-owning SoA views (trivially copyable into kernels) and the proxy reference to one record.
// soa_view<const T> reads only; a mutable view converts to it, never the reverse.
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/soa_layout.hpp>

#include <cuda/std/array>
#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T>
class soa_view;

/// Proxy for record i of an SoA view: converts to the record (reads every column), assigns from one
/// (writes every column), and reaches single fields with get<&T::x>() or get<I>().
template <class T>
class soa_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;

  STRATA_HD soa_reference(const soa_view<T>& v, index_t i) : view_(v), i_(i) {}
  soa_reference(const soa_reference&) = default;

  STRATA_HD operator record() const { return view_.load(i_); }
  STRATA_HD record get() const { return view_.load(i_); }

  STRATA_HD const soa_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, r);
    return *this;
  }
  // Assigning one proxy to another copies the record, as for a real reference.
  STRATA_HD const soa_reference& operator=(const soa_reference& o) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, o.get());
    return *this;
  }
  template <class U>
    requires(!std::is_const_v<T> && std::is_same_v<std::remove_const_t<U>, record>)
  STRATA_HD const soa_reference& operator=(const soa_reference<U>& o) const {
    view_.store(i_, o.get());
    return *this;
  }

  template <std::size_t I>
  STRATA_HD auto& get() const {
    return view_.template column_data<I>()[i_];
  }
  template <auto P>
    requires std::is_member_object_pointer_v<decltype(P)>
  STRATA_HD auto& get() const {
    return view_.template column_data<reflect::field_index_v<record, P>>()[i_];
  }

  friend STRATA_HD void swap(const soa_reference& a, const soa_reference& b)
    requires(!std::is_const_v<T>)
  {
    record t = a.get();
    a = b.get();
    b = t;
  }

 private:
  soa_view<T> view_;
  index_t i_;
};

/// Field access on a proxy or a plain record: strata::get<&particle::x>(r).
template <auto P, class T>
STRATA_HD auto& get(const soa_reference<T>& r) {
  return r.template get<P>();
}

enum class alignment {
  vector,   ///< each column 16-byte aligned: the 128-bit paths may run on this view
  element,  ///< each column aligned for its field only: record iterators only, no packet access
};

template <class T>
class soa_view {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = soa_reference<T>;
  using layout_type = soa_layout<record>;
  static constexpr std::size_t fields = layout_type::fields;
  static constexpr bool is_const = std::is_const_v<T>;
  template <std::size_t I>
  using field_type = std::conditional_t<is_const, const reflect::field_type_t<record, I>, reflect::field_type_t<record, I>>;
  using byte_pointer = std::conditional_t<is_const, const std::byte*, std::byte*>;

  soa_view() = default;
  /// From column pointers, unchecked (containers use this; foreign memory goes through make_soa_view).
  STRATA_HD soa_view(const cuda::std::array<byte_pointer, fields>& columns, index_t size, index_t capacity)
      : cols_(columns), size_(size), capacity_(capacity) {}

  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator soa_view<const record>() const {
    cuda::std::array<const std::byte*, fields> c{};
    for (std::size_t i = 0; i < fields; ++i) c[i] = cols_[i];
    return soa_view<const record>(c, size_, capacity_);
  }

  STRATA_HD index_t size() const { return size_; }
  STRATA_HD index_t capacity() const { return capacity_; }
  STRATA_HD bool empty() const { return size_ == 0; }

  template <std::size_t I>
  STRATA_HD field_type<I>* column_data() const {
    return reinterpret_cast<field_type<I>*>(cols_[I]);
  }
  STRATA_HD byte_pointer column_bytes(std::size_t i) const { return cols_[i]; }

  template <std::size_t I>
  STRATA_HD cuda::std::span<field_type<I>> column() const {
    return {column_data<I>(), static_cast<std::size_t>(size_)};
  }
  template <auto P>
    requires std::is_member_object_pointer_v<decltype(P)>
  STRATA_HD auto column() const {
    return column<reflect::field_index_v<record, P>>();
  }

  STRATA_HD reference operator[](index_t i) const { return reference(*this, i); }

  STRATA_HD record load(index_t i) const {
    record r;
    reflect::for_each_field<record>([&](auto f) {
      constexpr std::size_t I = decltype(f)::value;
      r.*reflect::member_pointer<record, I> = column_data<I>()[i];
    });
    return r;
  }
  STRATA_HD void store(index_t i, const record& r) const
    requires(!is_const)
  {
    reflect::for_each_field<record>([&](auto f) {
      constexpr std::size_t I = decltype(f)::value;
      column_data<I>()[i] = r.*reflect::member_pointer<record, I>;
    });
  }

  /// True when the 128-bit paths may run: columns 16-byte aligned and capacity a whole packet count.
  STRATA_HD bool vector_ready() const {
    if (capacity_ % static_cast<index_t>(layout_type::capacity_quantum) != 0) return false;
    for (std::size_t i = 0; i < fields; ++i)
      if (reinterpret_cast<std::uintptr_t>(cols_[i]) % vector_bytes != 0) return false;
    return layout::record_descriptor<record>::all_fields_vectorizable;
  }

 private:
  cuda::std::array<byte_pointer, fields> cols_{};
  index_t size_ = 0;
  index_t capacity_ = 0;
};

namespace detail {
template <class T, std::size_t I, class F>
void check_foreign_column(const cuda::std::span<F>& col, index_t n, index_t capacity, alignment a) {
  using field = reflect::field_type_t<T, I>;
  static_assert(std::is_same_v<std::remove_const_t<F>, field>,
                "strata: make_soa_view: each column span's element type must be the field's type, in field order");
  std::string name = "column '" + std::string(reflect::field_name<T, I>()) + "'";
  if (col.data() == nullptr && capacity > 0) throw size_error("strata: make_soa_view: " + name + " is a null pointer with " + std::to_string(capacity) + " records");
  if (static_cast<index_t>(col.size()) < capacity)
    throw size_error("strata: make_soa_view: " + name + " holds " + std::to_string(col.size()) + " elements; the view needs " +
                     std::to_string(capacity) + " (size " + std::to_string(n) + ")");
  std::size_t need = a == alignment::vector ? vector_bytes : alignof(field);
  if (reinterpret_cast<std::uintptr_t>(col.data()) % need != 0)
    throw misaligned_pointer("make_soa_view: " + name + (a == alignment::vector ? " (vector access)" : ""), col.data(), need);
}
}  // namespace detail

/// A view over foreign columns, one span per field in declaration order. Checks that no column is
/// null or shorter than the view and that each is aligned as `a` requires; throws naming the column.
/// With alignment::vector the view's capacity is the shortest column rounded down to whole packets,
/// so packet loops may read (never write past size) up to it.
template <class T, class... F>
soa_view<std::conditional_t<(std::is_const_v<F> || ...), const T, T>> make_soa_view(index_t n, alignment a,
                                                                                      cuda::std::span<F>... cols) {
  static_assert(sizeof...(F) == reflect::field_count<T>, "strata: make_soa_view needs one span per field of the record");
  using view_t = soa_view<std::conditional_t<(std::is_const_v<F> || ...), const T, T>>;
  if (n < 0) throw size_error("strata: make_soa_view: negative size " + std::to_string(n));
  index_t capacity = n;
  if (a == alignment::vector) {
    index_t shortest = std::min({static_cast<index_t>(cols.size())...});
    index_t q = static_cast<index_t>(soa_layout<T>::capacity_quantum);
    if (shortest / q * q >= n) capacity = shortest / q * q;
  }
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (detail::check_foreign_column<T, I>(cols, n, n, a), ...);
  }(std::make_index_sequence<sizeof...(F)>{});
  cuda::std::array<typename view_t::byte_pointer, sizeof...(F)> ptrs{
      reinterpret_cast<typename view_t::byte_pointer>(cols.data())...};
  return view_t(ptrs, n, capacity);
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T>
struct thrust::detail::is_proxy_reference<strata::soa_reference<T>> : thrust::detail::true_type {};
