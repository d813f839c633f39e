// Non-owning SoA views (trivially copyable into kernels) and the proxy reference to one record.
// One column per leaf of the record. soa_view<const T> reads only; a mutable view converts to it,
// never the reverse. A view knows where its memory lives, so device algorithms refuse host memory
// and run on the GPU that holds it.
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/memory/device.hpp>
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
/// (writes every column), and reaches single leaves with get<&T::x>(), get<strata::member<...>>() or
/// get<L>() (L a leaf index).
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

  template <std::size_t L>
  STRATA_HD auto& get() const {
    return view_.template column_data<L>()[i_];
  }
  /// A selector naming one leaf gives a reference to it in its column; one naming a struct, array
  /// or vector member gives that member's value (read from its leaves' columns only).
  template <auto Sel>
    requires selector<Sel>
  STRATA_HD decltype(auto) get() const {
    using sel = reflect::selection<record, Sel>;
    if constexpr (sel::names_leaf) {
      return (view_.template column_data<sel::first>()[i_]);
    } else {
      record r{};
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((reflect::leaf<sel::first + K>(r) = view_.template column_data<sel::first + K>()[i_]), ...);
      }(std::make_index_sequence<sel::count>{});
      return std::remove_cvref_t<decltype(sel::path::get(r))>(sel::path::get(r));
    }
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

/// Leaf access on a proxy: strata::get<&particle::mass>(r), strata::get<strata::member<&particle::pos,
/// &vec3::x>>(r).
template <auto Sel, class T>
  requires selector<Sel>
STRATA_HD decltype(auto) get(const soa_reference<T>& r) {
  return r.template get<Sel>();
}

enum class alignment {
  vector,   ///< each column 16-byte aligned: the 128-bit paths may run on this view
  element,  ///< each column aligned for its leaf only: record iterators only, no packet access
};

template <class T>
class soa_view {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = soa_reference<T>;
  using layout_type = soa_layout<record>;
  static constexpr std::size_t leaves = layout_type::leaves;
  static constexpr bool is_const = std::is_const_v<T>;
  template <std::size_t L>
  using leaf_type = std::conditional_t<is_const, const reflect::leaf_type_t<record, L>, reflect::leaf_type_t<record, L>>;
  using byte_pointer = std::conditional_t<is_const, const std::byte*, std::byte*>;

  soa_view() = default;
  /// From column pointers, unchecked (containers use this; foreign memory goes through make_soa_view).
  /// Records [size, capacity) are padding the view may read and write (a container's own).
  STRATA_HD soa_view(const cuda::std::array<byte_pointer, leaves>& columns, index_t size, index_t capacity,
                     memory_location where = {})
      : cols_(columns), size_(size), capacity_(capacity), where_(where) {}

  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator soa_view<const record>() const {
    cuda::std::array<const std::byte*, leaves> c{};
    for (std::size_t i = 0; i < leaves; ++i) c[i] = cols_[i];
    return soa_view<const record>(c, size_, capacity_, where_);
  }

  STRATA_HD index_t size() const { return size_; }
  STRATA_HD index_t capacity() const { return capacity_; }
  STRATA_HD bool empty() const { return size_ == 0; }
  STRATA_HD memory_location location() const { return where_; }

  template <std::size_t L>
  STRATA_HD leaf_type<L>* column_data() const {
    return reinterpret_cast<leaf_type<L>*>(cols_[L]);
  }
  STRATA_HD byte_pointer column_bytes(std::size_t i) const { return cols_[i]; }

  template <std::size_t L>
  STRATA_HD cuda::std::span<leaf_type<L>> column() const {
    return {column_data<L>(), static_cast<std::size_t>(size_)};
  }
  template <auto Sel>
    requires selector<Sel>
  STRATA_HD auto column() const {
    return column<reflect::leaf_index_v<record, Sel>>();
  }

  STRATA_HD reference operator[](index_t i) const { return reference(*this, i); }

  STRATA_HD record load(index_t i) const {
    record r;
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      reflect::leaf<L>(r) = column_data<L>()[i];
    });
    return r;
  }
  STRATA_HD void store(index_t i, const record& r) const
    requires(!is_const)
  {
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      column_data<L>()[i] = reflect::leaf<L>(r);
    });
  }

  /// Every column 16-byte aligned and every leaf 1, 2, 4, 8 or 16 bytes: 16-byte accesses may run.
  STRATA_HD bool vector_aligned() const {
    if (!layout::record_descriptor<record>::all_leaves_vectorizable) return false;
    for (std::size_t i = 0; i < leaves; ++i)
      if (reinterpret_cast<std::uintptr_t>(cols_[i]) % vector_bytes != 0) return false;
    return true;
  }
  /// The packets covering size() lie inside capacity(): a partial last packet may be read and
  /// written whole (its lanes past size() are the view's own padding).
  STRATA_HD bool whole_packets() const {
    const index_t w = index_t(layout_type::capacity_quantum);
    return (size_ + w - 1) / w * w <= capacity_;
  }
  /// True when packets may cover the whole view: vector_aligned() and whole_packets().
  STRATA_HD bool vector_ready() const { return vector_aligned() && whole_packets(); }

  /// Records [0, n) as a view of its own whose capacity is n: nothing past them is touched.
  STRATA_HD soa_view first(index_t n) const { return soa_view(cols_, n, n, where_); }

 private:
  cuda::std::array<byte_pointer, leaves> cols_{};
  index_t size_ = 0;
  index_t capacity_ = 0;
  memory_location where_{};
};

namespace detail {
template <class T, std::size_t L, class F>
void check_foreign_column(const cuda::std::span<F>& col, index_t n, alignment a) {
  using leaf = reflect::leaf_type_t<T, L>;
  static_assert(std::is_same_v<std::remove_const_t<F>, leaf>,
                "strata: make_soa_view: each column span's element type must be the leaf's type, in leaf order");
  std::string name = "column '" + std::string(reflect::leaf_name<T, L>()) + "'";
  if (col.data() == nullptr && n > 0) throw size_error("strata: make_soa_view: " + name + " is a null pointer with " + std::to_string(n) + " records");
  if (static_cast<index_t>(col.size()) < n)
    throw size_error("strata: make_soa_view: " + name + " holds " + std::to_string(col.size()) + " elements; the view needs " + std::to_string(n));
  std::size_t need = a == alignment::vector ? vector_bytes : alignof(leaf);
  if (reinterpret_cast<std::uintptr_t>(col.data()) % need != 0)
    throw misaligned_pointer("make_soa_view: " + name + (a == alignment::vector ? " (vector access)" : ""), col.data(), need);
}

/// Where foreign columns live: all in one memory space and on one device, or an error naming both.
template <class T, std::size_t... L>
memory_location locate_columns(const cuda::std::array<const void*, sizeof...(L)>& cols, std::index_sequence<L...>) {
  memory_location where{};
  bool found = false;
  std::string first_name;
  auto visit = [&](const void* p, std::string_view name) {
    if (!p) return;
    const memory_location m = locate(p);
    if (!found) {
      where = m, found = true, first_name = std::string(name);
    } else if (m.space != where.space || m.device != where.device) {
      throw memory_space_error("strata: make_soa_view: column '" + std::string(name) + "' is " + to_string(m.space) +
                               " memory (device " + std::to_string(m.device) + ") but column '" + first_name + "' is " +
                               to_string(where.space) + " memory (device " + std::to_string(where.device) + ")");
    }
  };
  (visit(cols[L], reflect::leaf_name<T, L>()), ...);
  return where;
}
}  // namespace detail

/// A view over foreign columns, one span per leaf in leaf order. Checks that no column is null or
/// shorter than n and that each is aligned as `a` requires; throws naming the column. The view's
/// capacity is n: elements past n belong to the caller and are never read or written, so a last
/// partial packet is handled record by record (strata's algorithms do this; packets() refuses).
template <class T, class... F>
soa_view<std::conditional_t<(std::is_const_v<F> || ...), const T, T>> make_soa_view(index_t n, alignment a,
                                                                                      cuda::std::span<F>... cols) {
  static_assert(sizeof...(F) == reflect::leaf_count<T>, "strata: make_soa_view needs one span per leaf (column) of the record");
  using view_t = soa_view<std::conditional_t<(std::is_const_v<F> || ...), const T, T>>;
  if (n < 0) throw size_error("strata: make_soa_view: negative size " + std::to_string(n));
  [&]<std::size_t... L>(std::index_sequence<L...>) {
    (detail::check_foreign_column<T, L>(cols, n, a), ...);
  }(std::make_index_sequence<sizeof...(F)>{});
  const memory_location where = detail::locate_columns<T>(
      cuda::std::array<const void*, sizeof...(F)>{static_cast<const void*>(cols.data())...}, std::make_index_sequence<sizeof...(F)>{});
  cuda::std::array<typename view_t::byte_pointer, sizeof...(F)> ptrs{
      reinterpret_cast<typename view_t::byte_pointer>(cols.data())...};
  return view_t(ptrs, n, n, where);
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T>
struct thrust::detail::is_proxy_reference<strata::soa_reference<T>> : thrust::detail::true_type {};
