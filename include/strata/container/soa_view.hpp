// SPDX-License-Identifier: Apache-2.0
// SoA views: the generic view (view.hpp) over the SoA mapping, one column per leaf, and views over
// foreign columns with the checks their 16-byte paths need.
#pragma once

#include <strata/config.hpp>
#include <strata/container/view.hpp>
#include <strata/layout/soa_mapping.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <cuda/std/array>
#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace strata {

template <class T>
using soa_view = basic_view<T, soa_mapping<std::remove_const_t<T>>>;
template <class T>
using soa_reference = basic_reference<T, soa_mapping<std::remove_const_t<T>>>;

enum class alignment {
  vector,   ///< each column 16-byte aligned: the 128-bit paths may run on this view
  element,  ///< each column aligned for its leaf only: record iterators only, no packet access
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
