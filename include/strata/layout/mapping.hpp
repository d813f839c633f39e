// SPDX-License-Identifier: Apache-2.0
// A mapping says where an allocation holds each leaf of each record: the bytes an allocation of a
// given capacity needs and the byte offset of leaf L of record i. Views, packets, the owning
// container and the transposes are written once over it; SoA (soa_mapping.hpp), padded AoS
// (aos_mapping.hpp) and blocked layouts are mappings.
//
// Record mappings (aos_mapping.hpp) keep each record whole instead; the owning container is
// written over both kinds, the views are one per kind.
//
// Columnar mappings keep each leaf's values of consecutive records side by side, in blocks of
// `block` records (block == 0: one block, i.e. a column per leaf over the whole allocation). Leaf L
// of record i then lies at column_offset(capacity, L) + (i / block) * block_bytes + (i % block) *
// sizeof(leaf): the view stores one pointer per leaf and computes the rest, and a run of records
// that does not cross a block boundary is a plain array per leaf (16-byte packets, transposes).
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace strata::layout {

#if defined(__CUDACC__)
namespace detail {
/// A device-memory copy of a constexpr table, constant-initialized (no code runs to fill it).
template <const auto& Table>
__device__ const std::remove_cvref_t<decltype(Table)> device_table = Table;
}  // namespace detail
#endif

/// Element i of a constexpr table (a mapping's leaf sizes or offsets), in host or device code.
/// Device code may read a host variable (a static constexpr member is one) only inside constant
/// expressions: indexed at run time in a kernel it compiles to a trap. There the table's copy in
/// device memory is read instead.
template <const auto& Table>
STRATA_HD constexpr std::size_t table_at(std::size_t i) {
#if defined(__CUDA_ARCH__)
  if (!std::is_constant_evaluated()) return detail::device_table<Table>[i];
  constexpr auto local = Table;  // constant evaluation reads the table itself
  return local[i];
#else
  return Table[i];
#endif
}

template <class M>
concept mapping = requires(std::size_t n) {
  typename M::record;
  { M::leaves } -> std::convertible_to<std::size_t>;
  { M::capacity_quantum } -> std::convertible_to<std::size_t>;  ///< capacities are multiples of this
  { M::max_capacity } -> std::convertible_to<std::size_t>;
  { M::round_capacity(n) } -> std::same_as<std::size_t>;
  { M::bytes(n) } -> std::same_as<std::size_t>;             ///< allocation bytes for a capacity
  { M::leaf_offset(n, n, n) } -> std::same_as<std::size_t>;  ///< (capacity, record, leaf) -> byte offset
};

template <class M>
concept columnar_mapping = mapping<M> && requires(std::size_t n) {
  { M::block } -> std::convertible_to<std::size_t>;        ///< records per block; 0: one block
  { M::block_bytes } -> std::convertible_to<std::size_t>;  ///< bytes from one block to the next
  { M::column_offset(n, n) } -> std::same_as<std::size_t>;  ///< (capacity, leaf) -> offset of record 0's leaf
  { M::leaf_sizes[0] } -> std::convertible_to<std::size_t>;
};

/// Record mappings store each record whole, as one `stored` object `stride` bytes after the one
/// before (padded AoS): a reference to any member is a reference into that object.
template <class M>
concept record_mapping = mapping<M> && requires {
  typename M::stored;
  { M::stride } -> std::convertible_to<std::size_t>;
};

/// Records [i, i + count) of leaf columns lie in one block, so each leaf's values are one array.
template <class M>
  requires columnar_mapping<M>
constexpr bool same_block(std::size_t i, std::size_t count) {
  return M::block == 0 || count == 0 || i / M::block == (i + count - 1) / M::block;
}

/// The facts a columnar mapping must prove for the 16-byte paths (packets, transposes): every
/// leaf's part of a packet-aligned run of packet_width records is 16-byte aligned and inside one
/// block, and blocks keep that alignment.
template <class M>
  requires columnar_mapping<M>
constexpr bool packet_aligned_blocks() {
  using d = record_descriptor<typename M::record>;
  if constexpr (M::block == 0) {
    return true;
  } else {
    bool ok = M::block % d::column_quantum == 0 && M::block_bytes % vector_bytes == 0;
    for (std::size_t l = 0; l < M::leaves; ++l) ok = ok && M::column_offset(M::block, l) % vector_bytes == 0;
    return ok;
  }
}

/// The fact the AoS <-> columnar transposes need: every leaf's run in a block is whole 16-byte
/// vectors on a 16-byte boundary (SoA; AoSoA of N a multiple of 16, or of the units of every leaf).
template <class M>
  requires columnar_mapping<M>
constexpr bool whole_vector_blocks() {
  if constexpr (M::block == 0) {
    return true;
  } else {
    bool ok = M::block_bytes % vector_bytes == 0;
    for (std::size_t l = 0; l < M::leaves; ++l)
      ok = ok && M::column_offset(M::block, l) % vector_bytes == 0 && M::block * M::leaf_sizes[l] % vector_bytes == 0;
    return ok;
  }
}

/// A view or projection of a columnar mapping whose blocks keep whole, aligned packets: the
/// packet paths may be instantiated for it (AoSoA blocks of any other N move record by record).
template <class V>
constexpr bool packet_blocks_of() {
  if constexpr (requires { typename V::mapping_type; }) {
    if constexpr (columnar_mapping<typename V::mapping_type>) return packet_aligned_blocks<typename V::mapping_type>();
    else return false;
  } else {
    return false;
  }
}

}  // namespace strata::layout
