// SPDX-License-Identifier: Apache-2.0
// AoSoA: records in blocks of N, each block stored SoA (N values of the first leaf, then of the
// second, ...), as Cabana's core layout. A block of a few hundred bytes per leaf keeps one record's
// leaves close together (one DRAM page) while packets and transposes still move 16-byte vectors of
// one leaf. This header is the mapping and its names; the view, container, packets, transposes and
// algorithms are the generic ones.
#pragma once

#include <strata/config.hpp>
#include <strata/container/basic_vector.hpp>
#include <strata/container/view.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/mapping.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>

namespace strata {

namespace detail {
/// Records per block by default: at least 128 bytes of the narrowest leaf (32 fp32 records), so a
/// warp's 16-byte accesses to one leaf fill whole 128-byte lines; a multiple of 16 records.
template <class T>
inline constexpr std::size_t default_aosoa_block = align_up(std::max<std::size_t>(16, 128 / layout::record_descriptor<T>::narrowest_leaf), 16);
}  // namespace detail

template <class T, std::size_t N = detail::default_aosoa_block<T>>
struct aosoa_mapping {
  using record = T;
  using descriptor = layout::record_descriptor<T>;
  static constexpr const char* container_name = "aosoa_vector";
  static constexpr std::size_t leaves = descriptor::leaves;
  static constexpr std::size_t block = N;
  static_assert(N > 0, "strata: aosoa_mapping<T, N>: N must be at least 1");
  // A block's bytes (N records and under 16 bytes of alignment a run) must not wrap: every offset
  // below is computed in size_t.
  static_assert(N <= (std::numeric_limits<std::size_t>::max() / 4 - 16 * (descriptor::leaves + 1)) / descriptor::packed_size,
                "strata: aosoa_mapping<T, N>: N records a block do not fit in size_t's range; choose a smaller N");
  static constexpr std::array<std::size_t, leaves> leaf_sizes = reflect::leaf_sizes<T>;
  static constexpr std::array<std::size_t, leaves> leaf_alignments = reflect::leaf_alignments<T>;
  /// The alignment of a block: the largest leaf alignment, or 16 bytes where N keeps every run a
  /// whole number of 16-byte vectors.
  static constexpr std::size_t block_alignment = [] {
    std::size_t a = 1;
    for (std::size_t j = 0; j < leaves; ++j) a = std::max(a, leaf_alignments[j]);
    for (std::size_t j = 0; j < leaves; ++j)
      if (N * leaf_sizes[j] % vector_bytes != 0) return a;
    return std::max(a, vector_bytes);
  }();
  /// Offset of leaf l's run inside a block: the runs follow one another, each at its leaf's
  /// alignment (on 16-byte boundaries where N is a multiple of 16: every run is then whole 16-byte
  /// vectors); the layout of a block does not depend on the capacity.
  static constexpr std::size_t column_offset(std::size_t /*capacity*/, std::size_t l) {
    std::size_t off = 0;
    for (std::size_t j = 0; j < l; ++j) {
      off += N * layout::table_at<leaf_sizes>(j);
      if (j + 1 < leaves) off = align_up(off, layout::table_at<leaf_alignments>(j + 1));
    }
    return l == leaves ? align_up(off, block_alignment) : off;
  }
  static constexpr std::size_t block_bytes = column_offset(0, leaves);
  static constexpr std::size_t capacity_quantum = N;
  static constexpr std::size_t max_capacity = (std::numeric_limits<std::size_t>::max() / 2) / block_bytes * N;
  static constexpr std::size_t round_capacity(std::size_t n) { return align_up(n, N); }
  static constexpr std::size_t bytes(std::size_t capacity) { return capacity / N * block_bytes; }
  static constexpr std::size_t leaf_offset(std::size_t /*capacity*/, std::size_t i, std::size_t l) {
    return i / N * block_bytes + column_offset(0, l) + i % N * layout::table_at<leaf_sizes>(l);
  }
  /// The layout facts: runs in order, apart and each at its leaf's alignment, and blocks that keep
  /// that alignment.
  static constexpr bool check(std::size_t capacity) {
    if (capacity % N != 0) return false;
    for (std::size_t j = 0; j < leaves; ++j)
      if (column_offset(0, j) + N * leaf_sizes[j] > column_offset(0, j + 1) || column_offset(0, j) % leaf_alignments[j] != 0 ||
          block_alignment % leaf_alignments[j] != 0)
        return false;
    return block_bytes % block_alignment == 0 && block_bytes >= N * layout::record_descriptor<T>::packed_size;
  }
  static constexpr bool proven() { return check(0) && check(N) && check(round_capacity(99991)); }
};

/// Owning AoSoA container: soa_vector's interface (views, record iterators, packets, transform,
/// for_each, reduce, push_back/append/resize) over blocks of N records.
template <class T, std::size_t N = detail::default_aosoa_block<T>, memory_space Space = memory_space::device>
using aosoa_vector = basic_vector<T, aosoa_mapping<T, N>, Space>;
template <class T, std::size_t N = detail::default_aosoa_block<T>>
using host_aosoa_vector = aosoa_vector<T, N, memory_space::host>;
template <class T, std::size_t N = detail::default_aosoa_block<T>>
using pinned_aosoa_vector = aosoa_vector<T, N, memory_space::pinned>;
template <class T, std::size_t N = detail::default_aosoa_block<std::remove_const_t<T>>>
using aosoa_view = basic_view<T, aosoa_mapping<std::remove_const_t<T>, N>>;

/// Packed AoS: blocks of one record, so records follow one another with each leaf at its own
/// alignment and no padding to 16 bytes (28 bytes a particle of seven floats where aos_vector
/// stores 32). A record of scalar leaves then has the layout of its plain C++ struct. Every access
/// moves a record a thread (path::scalar): the layout saves bytes, not instructions.
template <class T, memory_space Space = memory_space::device>
using packed_aos_vector = aosoa_vector<T, 1, Space>;
template <class T>
using host_packed_aos_vector = packed_aos_vector<T, memory_space::host>;
template <class T>
using packed_aos_view = aosoa_view<T, 1>;

}  // namespace strata
