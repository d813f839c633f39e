// SPDX-License-Identifier: Apache-2.0
// The SoA mapping: one allocation, one column per leaf, every column on a 256-byte boundary,
// capacity rounded up to the packet width so vector loops need no scalar tail.
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/mapping.hpp>

#include <array>
#include <cstddef>
#include <limits>

namespace strata {

template <class T>
struct soa_mapping {
  using record = T;
  using descriptor = layout::record_descriptor<T>;
  static constexpr const char* container_name = "soa_vector";
  static constexpr std::size_t leaves = descriptor::leaves;
  /// Capacity is a multiple of this: one packet, or 16 records when some leaf cannot be vectorized.
  static constexpr std::size_t capacity_quantum = descriptor::all_leaves_vectorizable ? descriptor::column_quantum : 16;
  static constexpr std::array<std::size_t, leaves> leaf_sizes = reflect::leaf_sizes<T>;
  /// Capacities above this would overflow the byte count.
  static constexpr std::size_t max_capacity =
      (std::numeric_limits<std::size_t>::max() / 2 - leaves * column_alignment) / (descriptor::packed_size ? descriptor::packed_size : 1);

  static constexpr std::size_t round_capacity(std::size_t n) { return align_up(n, capacity_quantum); }

  /// Byte offset of column i (i == leaves gives the total size) for a given capacity.
  static constexpr std::size_t column_offset(std::size_t capacity, std::size_t i) {
    std::size_t off = 0;
    for (std::size_t j = 0; j < i; ++j) off = align_up(off + capacity * layout::table_at<leaf_sizes>(j), column_alignment);
    return off;
  }
  static constexpr std::size_t bytes(std::size_t capacity) { return column_offset(capacity, leaves); }
  /// One block: a column per leaf over the whole allocation.
  static constexpr std::size_t block = 0;
  static constexpr std::size_t block_bytes = 0;
  static constexpr std::size_t leaf_offset(std::size_t capacity, std::size_t i, std::size_t leaf) {
    return column_offset(capacity, leaf) + i * layout::table_at<leaf_sizes>(leaf);
  }

  /// The facts the 128-bit iterators rely on, for one capacity: columns start on 256-byte
  /// boundaries, never overlap, and each column's length is a whole number of 16-byte vectors.
  static constexpr bool check(std::size_t capacity) {
    if (capacity % capacity_quantum != 0) return false;
    for (std::size_t j = 0; j < leaves; ++j) {
      std::size_t begin = column_offset(capacity, j), end = begin + capacity * leaf_sizes[j];
      if (begin % column_alignment != 0 || end > column_offset(capacity, j + 1)) return false;
      if (descriptor::all_leaves_vectorizable && (capacity * leaf_sizes[j]) % vector_bytes != 0) return false;
    }
    return true;
  }
  static constexpr bool proven() {
    constexpr std::size_t q = capacity_quantum;
    return check(0) && check(q) && check(3 * q) && check(round_capacity(99991)) && check(round_capacity(1u << 20)) &&
           check(round_capacity(std::size_t{1} << 31 | 5));
  }
};

/// The SoA mapping under its other name, soa_layout.
template <class T>
using soa_layout = soa_mapping<T>;

}  // namespace strata
