// SPDX-License-Identifier: Apache-2.0
// Non-owning view over padded, aligned AoS records, and its proxy reference: whole records move as
// one or two 128-bit accesses (layout::load_record / store_record).
#pragma once

#include <strata/config.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/reflect/leaves.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <string>
#include <type_traits>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T>
class aos_view;

template <class T>
class aos_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using stored = std::conditional_t<std::is_const_v<T>, const layout::aligned_record<record>, layout::aligned_record<record>>;

  STRATA_HD explicit aos_reference(stored* p) : p_(p) {}
  aos_reference(const aos_reference&) = default;

  STRATA_HD operator record() const { return layout::load_record<record>(p_); }
  STRATA_HD record get() const { return layout::load_record<record>(p_); }
  STRATA_HD const aos_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    layout::store_record<record>(p_, r);
    return *this;
  }
  STRATA_HD const aos_reference& operator=(const aos_reference& o) const
    requires(!std::is_const_v<T>)
  {
    return *this = o.get();
  }
  /// Writes the 16-byte accesses of the record that hold a leaf whose bits differ from before.
  STRATA_HD void store_changed(const record& r, const record& before) const
    requires(!std::is_const_v<T>)
  {
    layout::store_record_changed<record>(p_, r, before);
  }
  template <std::size_t L>
  STRATA_HD auto& get() const {
    return reflect::leaf<L>(p_->value);
  }
  /// Any member a selector names, a leaf or a whole struct, array or vector member (records are
  /// stored whole, so each is one object in memory).
  template <auto Sel>
    requires selector<Sel>
  STRATA_HD auto& get() const {
    return reflect::selection<record, Sel>::path::get(p_->value);
  }
  friend STRATA_HD void swap(const aos_reference& a, const aos_reference& b)
    requires(!std::is_const_v<T>)
  {
    record t = a.get();
    a = b.get();
    b = t;
  }

 private:
  stored* p_;
};

template <auto Sel, class T>
  requires selector<Sel>
STRATA_HD auto& get(const aos_reference<T>& r) {
  return r.template get<Sel>();
}

template <class T>
class aos_view {
 public:
  using record = std::remove_const_t<T>;
  using value_type = record;
  using reference = aos_reference<T>;
  using stored = typename reference::stored;
  static constexpr bool is_const = std::is_const_v<T>;

  aos_view() = default;
  STRATA_HD aos_view(stored* data, index_t size, memory_location where = {}) : data_(data), size_(size), where_(where) {}
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator aos_view<const record>() const {
    return aos_view<const record>(data_, size_, where_);
  }

  STRATA_HD index_t size() const { return size_; }
  STRATA_HD memory_location location() const { return where_; }
  STRATA_HD bool empty() const { return size_ == 0; }
  STRATA_HD stored* data() const { return data_; }
  STRATA_HD cuda::std::span<stored> records() const { return {data_, static_cast<std::size_t>(size_)}; }
  STRATA_HD reference operator[](index_t i) const { return reference(data_ + i); }
  /// The same records of the same memory (one mutable, one const, say).
  template <class U>
    requires std::is_same_v<std::remove_const_t<U>, record>
  STRATA_HD bool same_records(const aos_view<U>& o) const {
    return static_cast<const void*>(o.data()) == static_cast<const void*>(data_) && o.size() == size_;
  }
  STRATA_HD record load(index_t i) const { return layout::load_record<record>(data_ + i); }
  STRATA_HD void store(index_t i, const record& r) const
    requires(!is_const)
  {
    layout::store_record<record>(data_ + i, r);
  }

 private:
  stored* data_ = nullptr;
  index_t size_ = 0;
  memory_location where_{};
};

/// A view over n foreign padded records (the order of make_soa_view: the count first): throws if
/// the span is shorter than n, the pointer is null with records, or not aligned to the padded
/// record's alignment (which the 128-bit accesses need).
template <class T, class S>
  requires std::is_same_v<std::remove_const_t<S>, layout::aligned_record<std::remove_const_t<T>>>
aos_view<T> make_aos_view(index_t n, cuda::std::span<S> records) {
  if (n < 0 || static_cast<index_t>(records.size()) < n)
    throw size_error("strata: make_aos_view: the span holds " + std::to_string(records.size()) + " records; the view needs " + std::to_string(n));
  if (records.data() == nullptr && n > 0) throw size_error("strata: make_aos_view: null pointer with " + std::to_string(n) + " records");
  constexpr std::size_t need = alignof(layout::aligned_record<std::remove_const_t<T>>);
  if (reinterpret_cast<std::uintptr_t>(records.data()) % need != 0) throw misaligned_pointer("make_aos_view: records", records.data(), need);
  return aos_view<T>(records.data(), n, detail::locate(records.data()));
}
/// The span-first order make_aos_view had; it still compiles, with a warning.
template <class T, class S>
  requires std::is_same_v<std::remove_const_t<S>, layout::aligned_record<std::remove_const_t<T>>>
[[deprecated("strata: make_aos_view(records, n) is make_aos_view(n, records) now, the order of make_soa_view(n, alignment, "
             "columns...): put the count first")]]
aos_view<T> make_aos_view(cuda::std::span<S> records, index_t n) {
  return make_aos_view<T>(n, records);
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T>
struct thrust::detail::is_proxy_reference<strata::aos_reference<T>> : thrust::detail::true_type {};
