// SPDX-License-Identifier: Apache-2.0
// The generic non-owning view over a columnar mapping (trivially copyable into kernels) and the
// proxy reference to one record. basic_view<const T, M> reads only; a mutable view converts to it,
// never the reverse. A view knows where its memory lives, so device algorithms refuse host memory
// and run on the GPU that holds it. soa_view (soa_view.hpp) is this view over the SoA mapping.
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/reflect/changes.hpp>

#include <cuda/std/array>
#include <cuda/std/span>

#include <cstdint>
#include <type_traits>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T, class M>
class basic_view;
template <class T, class M, auto Sel>
class member_reference;

/// Proxy for a struct, array or vector member of record i of a columnar view, which the view stores
/// as the leaves [first, first + count) of the record (one column each): converts to the member
/// (reads those leaves), and assignment writes every one of them. Members of a member are reached
/// through the record: strata::get<strata::member<&body::vel, &vec3::x>>(ref).
template <class T, class M, auto Sel>
class member_reference {
  using sel = reflect::selection<std::remove_const_t<T>, Sel>;
  using member_type = std::remove_cvref_t<decltype(sel::path::get(std::declval<std::remove_const_t<T>&>()))>;
  static_assert(!std::is_array_v<member_type>,
                "strata: a C array member cannot be read or assigned whole (C arrays do not copy); declare it as "
                "std::array or cuda::std::array, or name one element: strata::member<&record::member, 2>.");

 public:
  using record = std::remove_const_t<T>;
  using value_type = member_type;
  static constexpr std::size_t first_leaf = sel::first, leaf_count = sel::count;

  STRATA_HD member_reference(const basic_view<T, M>& v, index_t i) : view_(v), i_(i) {}
  member_reference(const member_reference&) = default;

  STRATA_HD operator value_type() const { return get(); }
  /// Reads through the proxy: ref->x and ref[k] read the member's field or element (a copy of the
  /// member is read first); write the whole member, or name the leaf: get<member<&T::pos, &vec3::x>>.
  struct arrow {
    value_type v;
    STRATA_HD const value_type* operator->() const { return &v; }
  };
  STRATA_HD arrow operator->() const { return {get()}; }
  template <class U = value_type>
    requires requires(const U& u) { u[0]; }
  STRATA_HD auto operator[](std::size_t k) const {
    return get()[k];
  }
  STRATA_HD value_type get() const {
    record r{};
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((reflect::leaf<sel::first + K>(r) = *view_.template leaf_ptr<sel::first + K>(i_)), ...);
    }(std::make_index_sequence<sel::count>{});
    return sel::path::get(r);
  }

  /// Writes every leaf of the member into its column. A reference from a const view refuses.
  template <class V>
    requires std::is_convertible_v<const V&, value_type>
  STRATA_HD const member_reference& operator=(const V& value) const {
    static_assert(!std::is_const_v<T>,
                  "strata: this member reference comes from a const view (basic_view<const T, M>, a const "
                  "container's const_view()), which reads only; write through a mutable view: container.view().");
    if constexpr (!std::is_const_v<T>) {
      record r{};
      sel::path::get(r) = value_type(value);
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((*view_.template leaf_ptr<sel::first + K>(i_) = reflect::leaf<sel::first + K>(r)), ...);
      }(std::make_index_sequence<sel::count>{});
    }
    return *this;
  }
  // Assigning one proxy to another copies the member, as for a real reference.
  STRATA_HD const member_reference& operator=(const member_reference& o) const { return *this = o.get(); }
  template <class U, class N, auto S>
    requires std::is_same_v<typename member_reference<U, N, S>::value_type, value_type>
  STRATA_HD const member_reference& operator=(const member_reference<U, N, S>& o) const {
    return *this = o.get();
  }

 private:
  basic_view<T, M> view_;
  index_t i_;
};


/// Proxy for record i of a columnar view: converts to the record (reads every column), assigns from one
/// (writes every column), and reaches single leaves with get<&T::x>(), get<strata::member<...>>() or
/// get<L>() (L a leaf index), and whole struct, array or vector members with get<&T::pos>() (a
/// member_reference: `get<&body::vel>(ref) = v` writes every leaf of vel).
template <class T, class M>
class basic_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;

  STRATA_HD basic_reference(const basic_view<T, M>& v, index_t i) : view_(v), i_(i) {}
  basic_reference(const basic_reference&) = default;

  STRATA_HD operator record() const { return view_.load(i_); }
  STRATA_HD record get() const { return view_.load(i_); }

  STRATA_HD const basic_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, r);
    return *this;
  }
  // Assigning one proxy to another copies the record, as for a real reference.
  STRATA_HD const basic_reference& operator=(const basic_reference& o) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, o.get());
    return *this;
  }
  template <class U>
    requires(!std::is_const_v<T> && std::is_same_v<std::remove_const_t<U>, record>)
  STRATA_HD const basic_reference& operator=(const basic_reference<U, M>& o) const {
    view_.store(i_, o.get());
    return *this;
  }

  /// Writes the leaves of r whose bits differ from before (the record as read): an in-place
  /// update's store.
  STRATA_HD void store_changed(const record& r, const record& before) const
    requires(!std::is_const_v<T>)
  {
    view_.store_changed(i_, r, before);
  }

  template <std::size_t L>
  STRATA_HD auto& get() const {
    return *view_.template leaf_ptr<L>(i_);
  }
  /// A selector naming one leaf gives a reference to it in its column; one naming a struct, array
  /// or vector member gives a member_reference: it reads the member from its leaves' columns, and
  /// assigning to it writes every one of them.
  template <auto Sel>
    requires selector<Sel>
  STRATA_HD decltype(auto) get() const {
    using sel = reflect::selection<record, Sel>;
    if constexpr (sel::names_leaf) {
      return (*view_.template leaf_ptr<sel::first>(i_));
    } else {
      return member_reference<T, M, Sel>(view_, i_);
    }
  }

  friend STRATA_HD void swap(const basic_reference& a, const basic_reference& b)
    requires(!std::is_const_v<T>)
  {
    record t = a.get();
    a = b.get();
    b = t;
  }

 private:
  basic_view<T, M> view_;
  index_t i_;
};

/// Leaf access on a proxy: strata::get<&particle::mass>(r), strata::get<strata::member<&particle::pos,
/// &vec3::x>>(r).
template <auto Sel, class T, class M>
  requires selector<Sel>
STRATA_HD decltype(auto) get(const basic_reference<T, M>& r) {
  return r.template get<Sel>();
}

/// A non-owning view of records placed by a columnar mapping M (see layout/mapping.hpp): one
/// pointer per leaf (to record 0's value), size and capacity. Records [size, capacity) are padding
/// the view may read and write (a container's own).
template <class T, class M>
class basic_view {
  static_assert(layout::columnar_mapping<M>, "strata: basic_view needs a columnar mapping");
  static_assert(std::is_same_v<typename M::record, std::remove_const_t<T>>, "strata: the mapping's record is not the view's");

 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = basic_reference<T, M>;
  using mapping_type = M;
  using layout_type = M;
  static constexpr std::size_t leaves = layout_type::leaves;
  static constexpr bool is_const = std::is_const_v<T>;
  template <std::size_t L>
  using leaf_type = std::conditional_t<is_const, const reflect::leaf_type_t<record, L>, reflect::leaf_type_t<record, L>>;
  using byte_pointer = std::conditional_t<is_const, const std::byte*, std::byte*>;

  basic_view() = default;
  /// From leaf pointers, unchecked (containers use this; foreign memory goes through make_soa_view).
  STRATA_HD basic_view(const cuda::std::array<byte_pointer, leaves>& columns, index_t size, index_t capacity,
                     memory_location where = {})
      : cols_(columns), size_(size), capacity_(capacity), where_(where) {}

  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator basic_view<const record, M>() const {
    cuda::std::array<const std::byte*, leaves> c{};
    for (std::size_t i = 0; i < leaves; ++i) c[i] = cols_[i];
    return basic_view<const record, M>(c, size_, capacity_, where_);
  }

  STRATA_HD index_t size() const { return size_; }
  STRATA_HD index_t capacity() const { return capacity_; }
  STRATA_HD bool empty() const { return size_ == 0; }
  STRATA_HD memory_location location() const { return where_; }

  /// Leaf L of record i. Within one block (all records, for SoA) consecutive records' values are
  /// consecutive elements.
  template <std::size_t L>
  STRATA_HD leaf_type<L>* leaf_ptr(index_t i) const {
    if constexpr (M::block == 0) {
      return reinterpret_cast<leaf_type<L>*>(cols_[L]) + i;
    } else {
      constexpr index_t b = index_t(M::block);
      return reinterpret_cast<leaf_type<L>*>(cols_[L] + (i / b) * index_t(M::block_bytes)) + i % b;
    }
  }
  /// Leaf i of record 0: a column's start, for SoA.
  STRATA_HD byte_pointer column_bytes(std::size_t i) const { return cols_[i]; }

  /// Whole columns exist only where one block holds every record (SoA).
  template <std::size_t L>
    requires(M::block == 0)
  STRATA_HD leaf_type<L>* column_data() const {
    return reinterpret_cast<leaf_type<L>*>(cols_[L]);
  }
  template <std::size_t L>
    requires(M::block == 0)
  STRATA_HD cuda::std::span<leaf_type<L>> column() const {
    return {column_data<L>(), static_cast<std::size_t>(size_)};
  }
  template <auto Sel>
    requires(selector<Sel> && M::block == 0)
  STRATA_HD auto column() const {
    return column<reflect::leaf_index_v<record, Sel>>();
  }

  STRATA_HD reference operator[](index_t i) const { return reference(*this, i); }

  STRATA_HD record load(index_t i) const {
    record r;
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      reflect::leaf<L>(r) = *leaf_ptr<L>(i);
    });
    return r;
  }
  STRATA_HD void store(index_t i, const record& r) const
    requires(!is_const)
  {
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      *leaf_ptr<L>(i) = reflect::leaf<L>(r);
    });
  }

  STRATA_HD void store_changed(index_t i, const record& r, const record& before) const
    requires(!is_const)
  {
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      if (detail::bits_differ(reflect::leaf<L>(r), reflect::leaf<L>(before))) *leaf_ptr<L>(i) = reflect::leaf<L>(r);
    });
  }
  /// True when o's records are these records: the same columns (mutable or const) and size.
  template <class U>
  STRATA_HD bool same_records(const basic_view<U, M>& o) const {
    if (o.size() != size_) return false;
    for (std::size_t i = 0; i < leaves; ++i)
      if (static_cast<const void*>(o.column_bytes(i)) != static_cast<const void*>(cols_[i])) return false;
    return true;
  }

  /// Every column 16-byte aligned and every leaf 1, 2, 4, 8 or 16 bytes: 16-byte accesses may run.
  STRATA_HD bool vector_aligned() const {
    if constexpr (!layout::record_descriptor<record>::all_leaves_vectorizable || !layout::packet_aligned_blocks<M>()) {
      return false;
    } else {
      for (std::size_t i = 0; i < leaves; ++i)
        if (reinterpret_cast<std::uintptr_t>(cols_[i]) % vector_bytes != 0) return false;
      return true;
    }
  }
  /// The 16-byte vectors of every column covering size() lie inside capacity() (column_quantum
  /// records: 16 for a 1-byte leaf): kernels that read whole column vectors past a packet's records
  /// (compaction's narrow columns, the transposes) may run over all of it.
  STRATA_HD bool whole_packets() const {
    const index_t w = index_t(layout::record_descriptor<record>::all_leaves_vectorizable
                                  ? layout::record_descriptor<record>::column_quantum
                                  : M::capacity_quantum);
    return (size_ + w - 1) / w * w <= capacity_;
  }
  /// True when whole column vectors may cover the whole view: vector_aligned() and whole_packets().
  STRATA_HD bool vector_ready() const { return vector_aligned() && whole_packets(); }
  /// The packets (packet_width records, fewer than column_quantum for wide records with narrow
  /// leaves) covering size() lie inside capacity(): a partial last packet may be read and written
  /// whole, its lanes past size() being the view's own padding.
  STRATA_HD bool packets_fit() const {
    const index_t w = index_t(layout::record_descriptor<record>::packet_width);
    return (size_ + w - 1) / w * w <= capacity_;
  }
  /// True when packets may cover the whole view: vector_aligned() and packets_fit().
  STRATA_HD bool packet_ready() const { return vector_aligned() && packets_fit(); }

  /// Records [0, n) as a view of its own whose capacity is n: nothing past them is touched.
  STRATA_HD basic_view first(index_t n) const { return basic_view(cols_, n, n, where_); }

 private:
  cuda::std::array<byte_pointer, leaves> cols_{};
  index_t size_ = 0;
  index_t capacity_ = 0;
  memory_location where_{};
};

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T, class M>
struct thrust::detail::is_proxy_reference<strata::basic_reference<T, M>> : thrust::detail::true_type {};
