// SPDX-License-Identifier: Apache-2.0
// The __align__ side of a record: per-leaf size, alignment, offset and vector lanes; per record the
// packed, natural and padded sizes, the packet width, the aligned record type and static diagnostics.
#pragma once

#include <strata/config.hpp>
#include <strata/reflect/leaves.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace strata::layout {

/// Sizes a single 128-bit (or narrower, power-of-two) vector access can carry whole.
constexpr bool vector_size_ok(std::size_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

/// One leaf (column) of a record: its type, name (`pos.x`), size, alignment, offset in the record
/// and how many of it one 16-byte vector holds.
template <class T, std::size_t L>
struct leaf_descriptor {
  using type = reflect::leaf_type_t<T, L>;
  static constexpr std::string_view name = reflect::leaf_name<T, L>();
  static constexpr std::size_t index = L;
  static constexpr std::size_t size = sizeof(type);
  static constexpr std::size_t alignment = alignof(type);
  static constexpr std::size_t offset = reflect::leaf_offset<T, L>();
  static constexpr bool vectorizable = vector_size_ok(size);
  /// Elements of this leaf in one 16-byte vector (0 when the size does not divide 16).
  static constexpr std::size_t lanes = vectorizable ? vector_bytes / size : 0;
};

template <class T>
struct record_descriptor {
 private:
  static_assert(reflect::check_record<T>());
  template <class F>
  static constexpr std::size_t fold(F f, std::size_t init) {
    std::size_t acc = init;
    [&]<std::size_t... L>(std::index_sequence<L...>) { ((acc = f(acc, leaf_descriptor<T, L>{})), ...); }(
        std::make_index_sequence<reflect::leaf_count<T>>{});
    return acc;
  }

 public:
  using record = T;
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  /// Bytes of data with no padding at all (what SoA stores per record).
  static constexpr std::size_t packed_size = fold([](std::size_t a, auto f) { return a + f.size; }, 0);
  static constexpr std::size_t natural_size = sizeof(T);
  static constexpr std::size_t natural_alignment = alignof(T);
  /// Record size in AoS storage: a power of two up to 32 bytes, so one record is one access of up to
  /// 16 bytes or two 128-bit accesses (12 B -> 16, 28 B -> 32); past 32 bytes, whole 16-byte vectors.
  static constexpr std::size_t padded_size = natural_size <= 32 ? next_pow2(natural_size) : align_up(natural_size, 16);
  static constexpr std::size_t padded_alignment = std::max(natural_alignment, std::min<std::size_t>(padded_size, 16));
  /// Width in bytes of each instruction of a whole-record access, and how many it takes.
  static constexpr std::size_t access_bytes = std::min<std::size_t>(padded_size, vector_bytes);
  static constexpr std::size_t accesses_per_record = padded_size / access_bytes;
  static constexpr bool all_leaves_vectorizable =
      fold([](std::size_t a, auto f) { return a && f.vectorizable; }, 1) != 0;
  static constexpr std::size_t narrowest_leaf = fold([](std::size_t a, auto f) { return std::min(a, f.size); }, 16);
  static constexpr std::size_t widest_leaf = fold([](std::size_t a, auto f) { return std::max(a, f.size); }, 1);
  /// Records whose narrowest column fills exactly one 16-byte vector (4 for fp32, 8 for fp16/bf16,
  /// 2 for 64-bit leaves): a capacity in multiples of this leaves every column whole vectors.
  static constexpr std::size_t column_quantum = all_leaves_vectorizable ? vector_bytes / narrowest_leaf : 1;
  /// A packet's leaves live in registers (an input and an output packet at once in transform), so
  /// a packet holds at most this many bytes of leaves.
  static constexpr std::size_t packet_byte_budget = 256;
  /// Records per packet: column_quantum, halved while a packet would exceed the register budget.
  /// Every column of a packet is then one access of W * size bytes (16 for the narrowest column
  /// when W = column_quantum), or several 16-byte vectors for wider columns; wide records with
  /// narrow leaves move those leaves in accesses under 16 bytes rather than spill.
  static constexpr std::size_t packet_width = [] {
    std::size_t w = column_quantum;
    while (w > 1 && w * packed_size > packet_byte_budget) w /= 2;
    return w;
  }();
  /// A bare T can be read from an array with vector instructions only if its size and alignment allow.
  static constexpr bool natural_vector_access =
      vector_size_ok(natural_size) ? natural_alignment >= natural_size : natural_size % 16 == 0 && natural_alignment >= 16;
};

/// Fires with the record, the leaf's path and its size in the instantiation context when a column
/// cannot be loaded with vector instructions.
template <class T, reflect::fixed_name Leaf, std::size_t Bytes>
struct leaf_is_not_1_2_4_8_or_16_bytes {
  static_assert(vector_size_ok(Bytes),
                "strata: a leaf of this record is not 1, 2, 4, 8 or 16 bytes (record, leaf path and size are the "
                "template arguments above), so 128-bit vector access is impossible for its column. Use a type of 1, "
                "2, 4, 8 or 16 bytes, or reflect the member's struct (BOOST_HANA_ADAPT_STRUCT) so that strata "
                "stores its members as separate columns.");
  static constexpr bool value = true;
};

template <class T>
constexpr bool require_vectorizable_leaves() {
  [&]<std::size_t... L>(std::index_sequence<L...>) {
    ((void)leaf_is_not_1_2_4_8_or_16_bytes<T, reflect::detail::path_name<reflect::leaf_t<T, L>>::value,
                                           leaf_descriptor<T, L>::size>::value,
     ...);
  }(std::make_index_sequence<reflect::leaf_count<T>>{});
  return true;
}

namespace detail {
template <class T, std::size_t Pad>
struct record_storage {
  T value;
  unsigned char padding[Pad];
};
template <class T>
struct record_storage<T, 0> {
  T value;
};
}  // namespace detail

/// T stored in its padded, aligned form (the element of aos_vector<T>); padding bytes are zeroed on
/// construction so they never carry stale data across a copy.
template <class T>
struct alignas(record_descriptor<T>::padded_alignment) aligned_record
    : detail::record_storage<T, record_descriptor<T>::padded_size - sizeof(T)> {
  aligned_record() = default;
  STRATA_HD constexpr aligned_record(const T& v) : detail::record_storage<T, record_descriptor<T>::padded_size - sizeof(T)>{} {
    this->value = v;
  }
  STRATA_HD constexpr operator T() const { return this->value; }
};

template <class T>
constexpr bool check_aligned_record() {
  using d = record_descriptor<T>;
  static_assert(sizeof(aligned_record<T>) == d::padded_size, "strata: aligned_record has the padded size");
  static_assert(alignof(aligned_record<T>) == d::padded_alignment, "strata: aligned_record has the padded alignment");
  static_assert(d::padded_size <= 32 ? is_pow2(d::padded_size) : d::padded_size % 16 == 0,
                "strata: padded records up to 32 bytes are powers of two");
  static_assert(std::is_trivially_copyable_v<aligned_record<T>>, "strata: aligned records copy as bytes");
  return true;
}

}  // namespace strata::layout
