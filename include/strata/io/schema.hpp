// SPDX-License-Identifier: Apache-2.0
// What every file and table format of the io layer says about a record, independent of the format:
// the kind of value each leaf holds (leaf_kind: its name, as files spell it), which kinds convert to
// which without loss, the JSON schema strata stores beside the data, and how a container's
// allocation is walked leaf by leaf (where SoA columns lie whole, where values are gathered).
#pragma once

#include <strata/container/basic_vector.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/reflect/leaves.hpp>
#include <strata/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace strata::io {

/// The file's records do not fit the record type they are read into: a leaf missing, stored
/// narrower than the file holds it, or of another kind. The message names the leaf.
class schema_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The kind of value a leaf holds, as files describe it.
struct leaf_kind {
  enum class category { signed_integer, unsigned_integer, floating, boolean, opaque } what;
  std::size_t bytes;
  std::size_t mantissa_bits = 0;  // floats: stored mantissa bits
  std::size_t exponent_bits = 0;  // floats
  std::string tag;                // opaque: the C++ type's name
  std::string name() const {
    switch (what) {
      case category::signed_integer: return "int" + std::to_string(bytes * 8);
      case category::unsigned_integer: return "uint" + std::to_string(bytes * 8);
      case category::boolean: return "bool";
      case category::opaque: return "opaque" + std::to_string(bytes) + (tag.empty() ? "" : " (" + tag + ")");
      case category::floating:
        if (bytes == 2 && exponent_bits == 8) return "bfloat16";
        return "float" + std::to_string(bytes * 8);
    }
    return "?";
  }
};

/// Opaque leaves are tagged with their C++ type's name, cut to this many bytes (HDF5's limit for an
/// opaque type's tag, H5T_OPAQUE_TAG_MAX - 1), so every format compares the same tag.
inline constexpr std::size_t max_tag_bytes = 255;

namespace detail {

template <class L>
leaf_kind kind_of() {
  using category = leaf_kind::category;
  if constexpr (std::is_same_v<L, bool>) return {category::boolean, 1, 0, 0, {}};
  else if constexpr (std::is_integral_v<L> && (sizeof(L) == 1 || sizeof(L) == 2 || sizeof(L) == 4 || sizeof(L) == 8))
    return {std::is_signed_v<L> ? category::signed_integer : category::unsigned_integer, sizeof(L), 0, 0, {}};
  else if constexpr (std::is_same_v<L, float>) return {category::floating, 4, 23, 8, {}};
  else if constexpr (std::is_same_v<L, double>) return {category::floating, 8, 52, 11, {}};
  else if constexpr (std::is_same_v<L, strata::half>) return {category::floating, 2, 10, 5, {}};
  else if constexpr (std::is_same_v<L, strata::bfloat16>) return {category::floating, 2, 7, 8, {}};
  else return {category::opaque, sizeof(L), 0, 0, strata::detail::type_name<L>().substr(0, max_tag_bytes)};
}

/// Whether every value of `from` is a value of `to` (a conversion that loses nothing).
inline bool widens(const leaf_kind& from, const leaf_kind& to) {
  using category = leaf_kind::category;
  switch (to.what) {
    case category::boolean: return from.what == category::boolean;
    case category::opaque: return from.what == category::opaque && from.bytes == to.bytes && from.tag == to.tag;
    case category::signed_integer:
      return (from.what == category::signed_integer && from.bytes <= to.bytes) ||
             (from.what == category::unsigned_integer && from.bytes < to.bytes);
    case category::unsigned_integer: return from.what == category::unsigned_integer && from.bytes <= to.bytes;
    case category::floating:
      if (from.what == category::floating) return from.mantissa_bits <= to.mantissa_bits && from.exponent_bits <= to.exponent_bits;
      if (from.what == category::signed_integer || from.what == category::unsigned_integer)
        return from.bytes * 8 - (from.what == category::signed_integer ? 1 : 0) <= to.mantissa_bits + 1;
      return false;
  }
  return false;
}

/// Whether HDF5 converts `from` to `to` at all (with rounding or clamping where it narrows).
inline bool convertible(const leaf_kind& from, const leaf_kind& to) {
  using category = leaf_kind::category;
  auto numeric = [](const leaf_kind& k) { return k.what == category::signed_integer || k.what == category::unsigned_integer || k.what == category::floating; };
  if (numeric(from) && numeric(to)) return !(from.what == category::floating && to.what != category::floating);
  return widens(from, to);
}

inline std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out;
}

template <class T>
std::string schema_json() {
  std::string s = "{\"record\": \"" + json_escape(strata::detail::type_name<T>()) + "\", \"strata\": \"" STRATA_VERSION_STRING "\", \"leaves\": [";
  reflect::for_each_leaf<T>([&](auto f) {
    constexpr std::size_t L = decltype(f)::value;
    if (L) s += ", ";
    s += "{\"name\": \"" + json_escape(reflect::leaf_name<T, L>()) + "\", \"type\": \"" + json_escape(kind_of<reflect::leaf_type_t<T, L>>().name()) +
         "\", \"bytes\": " + std::to_string(sizeof(reflect::leaf_type_t<T, L>)) + ", \"offset\": " + std::to_string(reflect::leaf_offset<T, L>()) + "}";
  });
  return s + "]}";
}

template <class M>
std::string layout_name() {
  if constexpr (layout::record_mapping<M>) return "aos";
  else if constexpr (M::block == 0) return "soa";
  else return "aosoa" + std::to_string(M::block);
}

/// Where a container's allocation starts (leaf L of record i lies M::leaf_offset(capacity, i, L)
/// bytes after it), from its view.
template <class T, class M, memory_space S>
const std::byte* storage_base(const basic_vector<T, M, S>& c) {
  if (c.capacity() == 0) return nullptr;
  if constexpr (layout::record_mapping<M>) return reinterpret_cast<const std::byte*>(c.data());
  else return c.const_view().column_bytes(0) - M::column_offset(c.capacity(), 0);
}
template <class T, class M, memory_space S>
std::byte* storage_base(basic_vector<T, M, S>& c) {
  return const_cast<std::byte*>(storage_base(std::as_const(c)));
}

/// Records per block of a blocked columnar mapping (AoSoA); 0 for SoA and record mappings.
template <class M>
constexpr std::size_t block_of() {
  if constexpr (layout::columnar_mapping<M>) return M::block;
  else return 0;
}
/// Records [s, e) of a mapping whose records lie together (a record mapping, or blocks of a
/// blocked one): the byte range of the allocation covering them, widened to whole blocks.
template <class M>
std::pair<std::size_t, std::size_t> covering_bytes(std::size_t capacity, std::size_t s, std::size_t e) {
  std::size_t s0 = s, e1 = e;
  if constexpr (constexpr std::size_t blk = block_of<M>(); blk > 0) {
    s0 = s / blk * blk;
    e1 = std::min(capacity, (e + blk - 1) / blk * blk);
  }
  std::size_t lo = ~std::size_t(0), hi = 0;
  for (std::size_t l = 0; l < M::leaves; ++l) {
    lo = std::min(lo, M::leaf_offset(capacity, s0, l));
    hi = std::max(hi, M::leaf_offset(capacity, e1 - 1, l) + reflect::leaf_sizes<typename M::record>[l]);
  }
  return {lo, hi};
}

/// A leaf's values of consecutive records are one array over the whole allocation (SoA).
template <class M>
inline constexpr bool whole_columns = layout::columnar_mapping<M> && block_of<M>() == 0;

/// Leaf l (`bytes` wide) of records [s, s + n) gathered into `out` (n values) from `at`, which
/// holds an allocation of `capacity` records from its byte `origin` on (the whole allocation:
/// origin 0). Leaves of 1, 2, 4, 8 and 16 bytes move as one constant-size copy per value.
template <class M, std::size_t Bytes>
void gather_values(const std::byte* at, std::size_t origin, std::size_t capacity, std::size_t s, std::size_t n, std::size_t l, std::size_t bytes,
                   std::byte* out) {
  const std::size_t w = Bytes ? Bytes : bytes;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out + i * w, at + (M::leaf_offset(capacity, s + i, l) - origin), Bytes ? Bytes : w);
}
template <class M, std::size_t Bytes>
void scatter_values(std::byte* at, std::size_t origin, std::size_t capacity, std::size_t s, std::size_t n, std::size_t l, std::size_t bytes,
                    const std::byte* in) {
  const std::size_t w = Bytes ? Bytes : bytes;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(at + (M::leaf_offset(capacity, s + i, l) - origin), in + i * w, Bytes ? Bytes : w);
}
template <class M>
void gather_leaf(const std::byte* at, std::size_t origin, std::size_t capacity, std::size_t s, std::size_t n, std::size_t l, std::size_t bytes,
                 std::byte* out) {
  switch (bytes) {
    case 1: return gather_values<M, 1>(at, origin, capacity, s, n, l, bytes, out);
    case 2: return gather_values<M, 2>(at, origin, capacity, s, n, l, bytes, out);
    case 4: return gather_values<M, 4>(at, origin, capacity, s, n, l, bytes, out);
    case 8: return gather_values<M, 8>(at, origin, capacity, s, n, l, bytes, out);
    case 16: return gather_values<M, 16>(at, origin, capacity, s, n, l, bytes, out);
    default: return gather_values<M, 0>(at, origin, capacity, s, n, l, bytes, out);
  }
}
template <class M>
void scatter_leaf(std::byte* at, std::size_t origin, std::size_t capacity, std::size_t s, std::size_t n, std::size_t l, std::size_t bytes,
                  const std::byte* in) {
  switch (bytes) {
    case 1: return scatter_values<M, 1>(at, origin, capacity, s, n, l, bytes, in);
    case 2: return scatter_values<M, 2>(at, origin, capacity, s, n, l, bytes, in);
    case 4: return scatter_values<M, 4>(at, origin, capacity, s, n, l, bytes, in);
    case 8: return scatter_values<M, 8>(at, origin, capacity, s, n, l, bytes, in);
    case 16: return scatter_values<M, 16>(at, origin, capacity, s, n, l, bytes, in);
    default: return scatter_values<M, 0>(at, origin, capacity, s, n, l, bytes, in);
  }
}

/// A device container's stage holds columns: a block's values per leaf, back to back. SoA columns
/// cross as they are; an AoS block is transposed on the GPU (strata's transpose kernels, at copy
/// speed) into a device SoA scratch block whose columns then cross. AoSoA blocks cross as the
/// allocation holds them and are gathered on the host.
template <class M>
inline constexpr bool staged_as_columns = whole_columns<M> || layout::record_mapping<M>;

/// How a device container crosses through pinned memory: blocks of `step` records, each stage
/// holding `stage_bytes` (a block's values per leaf, back to back, where staged_as_columns, or the
/// allocation's bytes covering the block otherwise). `block` is the records per HDF5 call (at most
/// staging_records, whole chunks of `chunk` records where one fits). An AoSoA container crosses in
/// whole AoSoA blocks: `step` is the most records that are whole AoSoA blocks and whole chunks
/// within `block`; else whole AoSoA blocks (a chunk then takes two calls); else, where `block` is
/// below one AoSoA block, one AoSoA block (the stage then holds more than staging_records records).
struct staging_plan {
  std::size_t step = 0, stage_bytes = 0;
};
template <class M>
staging_plan plan_staging(std::size_t n, std::size_t capacity, std::size_t block, std::size_t chunk) {
  staging_plan p;
  p.step = std::min(n, block);
  if constexpr (constexpr std::size_t blk = block_of<M>(); blk > 0) {
    chunk = std::max<std::size_t>(chunk, 1);
    const std::size_t both = chunk > block ? block + 1 : std::lcm(blk, chunk);  // records that are whole blocks and chunks
    if (both <= block) p.step = block / both * both;
    else if (blk <= block) p.step = block / blk * blk;
    else p.step = blk;
    p.step = std::min(p.step, (n + blk - 1) / blk * blk);
  }
  for (std::size_t s = 0; s < n; s += p.step) {
    const std::size_t b = std::min(p.step, n - s);
    std::size_t bytes = 0;
    if constexpr (staged_as_columns<M>) {
      for (std::size_t l = 0; l < M::leaves; ++l) bytes += b * reflect::leaf_sizes<typename M::record>[l];
    } else {
      auto [lo, hi] = covering_bytes<M>(capacity, s, s + b);
      bytes = hi - lo;
    }
    p.stage_bytes = std::max(p.stage_bytes, bytes);
  }
  return p;
}

}  // namespace detail
}  // namespace strata::io
