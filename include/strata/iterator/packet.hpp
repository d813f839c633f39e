// SPDX-License-Identifier: Apache-2.0
// Packets: W consecutive records of a columnar view (SoA, or blocks of a multiple of W) held in registers, loaded and stored as one 16-byte
// vector per column (two or more for columns wider than the narrowest). Packet iterators make a
// Thrust algorithm issue LDG.E.128 / STG.E.128; per_record() lifts a per-record functor to packets.
// Packets cover whole packets only: a view whose last packet would reach past its capacity (a
// foreign view of 50 records of 4-record packets, say) is refused; strata's algorithms run its whole
// packets and then its last records one by one.
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/iterator/record_iterator.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/reflect/changes.hpp>

#include <cstring>
#include <string>
#include <type_traits>

#include <thrust/detail/type_traits.h>

namespace strata {

template <class T>
struct packet {
  static constexpr int width = static_cast<int>(layout::record_descriptor<T>::packet_width);
  T lane[width];
  /// Lanes [0, valid) hold records; lanes past it lie in the container's padding and must not reach
  /// a result (per_record_reduce skips them).
  int valid;

  using value_type = packet;
  STRATA_HD const packet& get() const { return *this; }
};

namespace detail {
/// Column L's part of packet p is W * sizeof(leaf) bytes: one access when that is at most 16 bytes,
/// otherwise whole 16-byte vectors.
template <class T, std::size_t L>
struct packet_column {
  using leaf = reflect::leaf_type_t<T, L>;
  static constexpr std::size_t bytes = std::size_t(packet<T>::width) * sizeof(leaf);
  static constexpr std::size_t access = bytes < vector_bytes ? bytes : vector_bytes;
  static constexpr std::size_t accesses = bytes / access;
  static_assert(bytes % access == 0 && layout::vector_size_ok(access));
};

template <class T, std::size_t L, class V>
STRATA_HD inline void load_column(const V& view, index_t p, packet<T>& pk) {
  using col = packet_column<T, L>;
  using F = typename col::leaf;
  constexpr std::size_t w = packet<T>::width;
  const char* src = reinterpret_cast<const char*>(view.template leaf_ptr<L>(p * index_t(w)));
  vec::word_t<col::access> words[col::accesses];
  STRATA_UNROLL
  for (std::size_t k = 0; k < col::accesses; ++k) words[k] = vec::load<col::access>(src + k * col::access);
  F e[w];
  std::memcpy(e, words, col::bytes);
  STRATA_UNROLL
  for (std::size_t k = 0; k < w; ++k) reflect::leaf<L>(pk.lane[k]) = e[k];
}

template <class T, std::size_t L, class V>
STRATA_HD inline void store_column(const V& view, index_t p, const packet<T>& pk) {
  using col = packet_column<T, L>;
  using F = typename col::leaf;
  constexpr std::size_t w = packet<T>::width;
  F e[w];
  STRATA_UNROLL
  for (std::size_t k = 0; k < w; ++k) e[k] = reflect::leaf<L>(pk.lane[k]);
  vec::word_t<col::access> words[col::accesses];
  std::memcpy(words, e, col::bytes);
  char* dst = reinterpret_cast<char*>(view.template leaf_ptr<L>(p * index_t(w)));
  STRATA_UNROLL
  for (std::size_t k = 0; k < col::accesses; ++k) vec::store<col::access>(dst + k * col::access, words[k]);
}
/// Stores column L of packet p only where the update changed that leaf in some lane.
template <class T, std::size_t L, class V>
STRATA_HD inline void store_changed_column(const V& view, index_t p, const packet<T>& pk, const leaf_changes<T>& c) {
  if (c.leaf[L]) store_column<T, L>(view, p, pk);
}
}  // namespace detail

/// Proxy for packet p over leaves I... of a columnar view.
template <class T, class M, std::size_t... I>
class packet_reference {
 public:
  using record = std::remove_const_t<T>;
  using value_type = packet<record>;
  static constexpr index_t width = packet<record>::width;

  STRATA_HD packet_reference(const basic_view<T, M>& v, index_t p) : view_(v), p_(p) {}
  packet_reference(const packet_reference&) = default;

  STRATA_HD operator value_type() const { return get(); }
  STRATA_HD value_type get() const {
    value_type pk;
    if constexpr (sizeof...(I) < reflect::leaf_count<record>) {
      for (int k = 0; k < int(width); ++k) pk.lane[k] = record{};
    }
    (detail::load_column<record, I>(view_, p_, pk), ...);
    index_t left = view_.size() - p_ * width;
    pk.valid = static_cast<int>(left < width ? left : width);
    return pk;
  }
  STRATA_HD const packet_reference& operator=(const value_type& pk) const
    requires(!std::is_const_v<T>)
  {
    (detail::store_column<record, I>(view_, p_, pk), ...);
    return *this;
  }
  STRATA_HD const packet_reference& operator=(const packet_reference& o) const
    requires(!std::is_const_v<T>)
  {
    return *this = o.get();
  }
  /// Writes back the columns (of leaves I...) that c flags as changed, leaving the others' memory
  /// as it is: an in-place update's store.
  STRATA_HD void store_changed(const value_type& pk, const detail::leaf_changes<record>& c) const
    requires(!std::is_const_v<T>)
  {
    (detail::store_changed_column<record, I>(view_, p_, pk, c), ...);
  }

 private:
  basic_view<T, M> view_;
  index_t p_;
};

/// A sequence of ceil(size / W) packets over leaves I... of a columnar view.
template <class T, class M, std::size_t... I>
class basic_packet_view {
 public:
  using record = std::remove_const_t<T>;
  using value_type = packet<record>;
  using reference = packet_reference<T, M, I...>;
  static constexpr index_t width = packet<record>::width;
  /// Bytes one packet reads: its columns' parts (the leaves I... only).
  static constexpr std::size_t loaded_bytes = (std::size_t(0) + ... + detail::packet_column<record, I>::bytes);

  basic_packet_view() = default;
  /// Throws misaligned_pointer / size_error if the view cannot take 128-bit accesses.
  explicit basic_packet_view(const basic_view<T, M>& v) : view_(v) {
    static_assert(layout::require_vectorizable_leaves<record>());
    static_assert(layout::packet_aligned_blocks<M>(),
                  "strata: packets need blocks of whole, 16-byte aligned packets: an aosoa_mapping<T, N> takes them "
                  "where N is a multiple of the records one 16-byte vector of T's narrowest leaf holds");
    if (v.packet_ready()) return;
    std::string names[] = {std::string(reflect::leaf_name<record, I>())...};
    const std::size_t cols[] = {I...};
    for (std::size_t k = 0; k < sizeof...(I); ++k)
      if (reinterpret_cast<std::uintptr_t>(v.column_bytes(cols[k])) % vector_bytes != 0)
        throw misaligned_pointer("packet access: column '" + names[k] + "' of the view", v.column_bytes(cols[k]), vector_bytes);
    throw size_error("strata: packet access: the view's capacity " + std::to_string(v.capacity()) +
                     " does not hold whole packets of " + std::to_string(width) + " records covering its size " +
                     std::to_string(v.size()) + " (a foreign view ends where its caller's memory does)");
  }
  STRATA_HD index_t size() const { return (view_.size() + width - 1) / width; }
  STRATA_HD reference operator[](index_t p) const { return reference(view_, p); }
  STRATA_HD const basic_view<T, M>& base() const { return view_; }

 private:
  basic_view<T, M> view_{};
};

/// Packets over leaves I... of an SoA view.
template <class T, std::size_t... I>
using packet_view = basic_packet_view<T, soa_mapping<std::remove_const_t<T>>, I...>;

namespace detail {
template <class T, class M, std::size_t... I>
basic_packet_view<T, M, I...> make_packet_view(const basic_view<T, M>& v, std::index_sequence<I...>) {
  return basic_packet_view<T, M, I...>(v);
}
}  // namespace detail

/// Packets over every leaf of a view, or over a projection's leaves only.
template <class T, class M>
auto packets(const basic_view<T, M>& v) {
  return detail::make_packet_view(v, std::make_index_sequence<reflect::leaf_count<std::remove_const_t<T>>>{});
}
template <class T, class M, std::size_t... I>
auto packets(const basic_projection<T, M, I...>& p) {
  return basic_packet_view<T, M, I...>(p.base());
}

template <class System = thrust::device_system_tag, class T, class M, std::size_t... I>
auto packets_begin(const basic_packet_view<T, M, I...>& p) {
  return record_iterator<basic_packet_view<T, M, I...>, System>(p, 0);
}
template <class System = thrust::device_system_tag, class T, class M, std::size_t... I>
auto packets_end(const basic_packet_view<T, M, I...>& p) {
  return record_iterator<basic_packet_view<T, M, I...>, System>(p, p.size());
}

/// Lifts f(record) -> record to packets, for transform.
template <class F>
struct per_record_fn {
  F f;
  // P is a packet or a packet_reference (Thrust passes either, depending on the algorithm).
  template <class P>
  STRATA_HD typename P::value_type operator()(const P& ref) const {
    const typename P::value_type in = ref.get();
    typename P::value_type out;
    STRATA_UNROLL
    for (int k = 0; k < P::value_type::width; ++k) out.lane[k] = f(in.lane[k]);
    out.valid = in.valid;
    return out;
  }
};
template <class F>
STRATA_HD per_record_fn<F> per_record(F f) {
  return {f};
}

/// Lifts map(record) -> A and op(A, A) -> A to packets: folds the valid lanes only.
template <class Map, class Op, class A>
struct per_record_reduce_fn {
  Map map;
  Op op;
  A identity;
  template <class P>
  STRATA_HD A operator()(const P& ref) const {
    const typename P::value_type in = ref.get();
    A acc = identity;
    STRATA_UNROLL
    for (int k = 0; k < P::value_type::width; ++k)
      if (k < in.valid) acc = op(acc, map(in.lane[k]));
    return acc;
  }
};
template <class Map, class Op, class A>
STRATA_HD per_record_reduce_fn<Map, Op, A> per_record_reduce(Map map, Op op, A identity) {
  return {map, op, identity};
}

}  // namespace strata

// Thrust writes through a proxy only if it is registered as one (as its own fancy iterators do).
template <class T, class M, std::size_t... I>
struct thrust::detail::is_proxy_reference<strata::packet_reference<T, M, I...>> : thrust::detail::true_type {};
