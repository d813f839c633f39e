// SPDX-License-Identifier: Apache-2.0
// Containers as Arrow record batches through the Arrow C Data Interface, and back: pyarrow, pandas,
// polars, DuckDB and every other Arrow consumer read what to_arrow exports without strata.
//
// The batch is a struct array of one child per member of the record, named as the member is; the
// record's tree is kept: a reflected struct member is a struct, a vector type (float3, double2) a
// struct of x, y, z, w, and an array (std::array, C array) a fixed-size list of its elements (or,
// with arrow_options::arrays = struct_of_elements, a struct of fields "0" .. "N-1"). Leaves:
//   integers, float, double   -> int8 .. uint64, float32, float64 (c C s S i I l L f g)
//   strata::half               -> float16 (e)
//   bool                       -> boolean (b): bit-packed by Arrow, so copied
//   strata::bfloat16           -> uint16 (S) with field metadata strata.type = bfloat16 (Arrow has no bfloat16)
//   any other leaf (__half2, an opaque struct, 128-bit integers) -> fixed-size binary (w:bytes) with
//                                 strata.type = its kind ("opaque12 (opaque12)")
// No field is nullable. The schema's metadata carries strata.record, strata.version and
// strata.schema (the JSON of HDF5's groups: every leaf's name, type, size and offset).
//
// Zero-copy: a host (or pinned) SoA container's leaf columns are exported in place, the arrays
// sharing the container's allocation (container::storage()), which stays alive until the consumer
// releases the last of them. Writes to the container after the export show in Arrow, so leave it
// unchanged while Arrow holds it (or set arrow_options::copy). Bool leaves and the elements of
// fixed-size lists are copied (Arrow's layout differs from strata's); struct_of_elements keeps
// array elements in place. Other layouts (AoS, AoSoA) are gathered per leaf and device containers
// copied to the host first. exported::path says which happened.
//
// from_arrow reads a record batch (a struct array) into any container: fields are matched by name,
// types must be exactly those to_arrow writes for the record, and nulls, missing fields, other
// types or shapes and short children are arrow_errors naming the field; the destination changes
// only when everything was read.
#pragma once

#include <strata/io/arrow_c.hpp>
#include <strata/io/schema.hpp>
#include <strata/memory/resource.hpp>

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace strata::io {

struct arrow_options {
  /// How arrays (std::array and C-array members) appear: as fixed-size lists (what pandas and
  /// polars show as arrays; their elements are copied into one child array) or as structs of one
  /// field per element ("0" .. "N-1", each in place for an SoA container).
  enum class array_form { fixed_size_list, struct_of_elements } arrays = array_form::fixed_size_list;
  /// Copy every leaf, never share the container's memory (the export then outlives any change to it).
  bool copy = false;
};

using arrow::export_path;

namespace detail {

/// The Arrow field of a value of type F named `name`, whose leaves start at leaf `bases[k]` of the
/// record for element k of the lists above it.
template <class F>
arrow::field arrow_field_of(std::string name, const std::vector<std::size_t>& bases) {
  arrow::field f;
  f.name = std::move(name);
  if constexpr (reflect::reflected<F>) {
    f.format = "+s";
    std::size_t first = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto add = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
        using G = reflect::field_type_t<F, J>;
        std::vector<std::size_t> b = bases;
        for (auto& x : b) x += first;
        f.children.push_back(arrow_field_of<G>(std::string(reflect::field_name<F, J>()), b));
        first += reflect::leaf_count<G>;
      };
      (add(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<reflect::field_count<F>>{});
  } else if constexpr (reflect::array_traits<F>::is_array) {
    using E = typename reflect::array_traits<F>::element;
    constexpr std::size_t n = reflect::array_traits<F>::extent;
    static_assert(n > 0, "strata::io::to_arrow: an array member of 0 elements has no leaves to export");
    f.format = "+w:" + std::to_string(n);
    f.list_size = n;
    std::vector<std::size_t> b;
    for (std::size_t base : bases)
      for (std::size_t k = 0; k < n; ++k) b.push_back(base + k * reflect::leaf_count<E>);
    f.children.push_back(arrow_field_of<E>("item", b));  // "item": the element's name as Arrow C++ and pyarrow spell it
  } else if constexpr (reflect::vector_traits<F>::count > 0) {
    f.format = "+s";
    for (std::size_t k = 0; k < reflect::vector_traits<F>::count; ++k) {
      std::vector<std::size_t> b = bases;
      for (auto& x : b) x += k;
      arrow::field c = arrow_field_of<typename reflect::vector_traits<F>::component>(std::string(1, "xyzw"[k]), b);
      f.children.push_back(std::move(c));
    }
  } else {
    const leaf_kind k = kind_of<F>();
    f.bytes = sizeof(F);
    f.columns = bases;
    using category = leaf_kind::category;
    switch (k.what) {
      case category::boolean: f.format = "b", f.boolean = true; break;
      case category::signed_integer: f.format = k.bytes == 1 ? "c" : k.bytes == 2 ? "s" : k.bytes == 4 ? "i" : "l"; break;
      case category::unsigned_integer: f.format = k.bytes == 1 ? "C" : k.bytes == 2 ? "S" : k.bytes == 4 ? "I" : "L"; break;
      case category::floating:
        if (k.bytes == 2 && k.exponent_bits == 8) f.format = "S", f.metadata.emplace_back("strata.type", k.name());
        else f.format = k.bytes == 2 ? "e" : k.bytes == 4 ? "f" : "g";
        break;
      case category::opaque:
        f.format = "w:" + std::to_string(sizeof(F));
        f.metadata.emplace_back("strata.type", k.name());
        break;
    }
  }
  return f;
}

/// Every leaf's byte offset in T, in leaf order.
template <class T>
inline const std::array<std::size_t, reflect::leaf_count<T>> leaf_offsets = []<std::size_t... L>(std::index_sequence<L...>) {
  return std::array<std::size_t, reflect::leaf_count<T>>{reflect::leaf_offset<T, L>()...};
}(std::make_index_sequence<reflect::leaf_count<T>>{});

}  // namespace detail

/// The Arrow struct field of record T (what to_arrow exports and from_arrow expects); its leaves'
/// columns are T's leaf indices.
template <class T>
arrow::field arrow_schema_of(const arrow_options& o = {}) {
  static_assert(reflect::check_record<T>());
  arrow::field f = detail::arrow_field_of<T>("", {0});
  return o.arrays == arrow_options::array_form::struct_of_elements ? arrow::lists_as_structs(f) : f;
}

/// `c` (any layout, any memory space) as an Arrow record batch: release_into() hands the schema and
/// the array to a consumer; exported::path says whether its buffers are the container's (see the
/// top of this header).
template <class T, class M, memory_space S>
arrow::exported to_arrow(const basic_vector<T, M, S>& c, const arrow_options& o = {}) {
  const arrow::field root = arrow_schema_of<T>(o);
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"strata.record", strata::detail::type_name<T>()}, {"strata.version", STRATA_VERSION_STRING}, {"strata.schema", detail::schema_json<T>()}};
  c.wait();
  const std::size_t n = c.size();
  std::vector<arrow::column> cols(reflect::leaf_count<T>);
  if constexpr (S != memory_space::device && detail::whole_columns<M>) {
    if (!o.copy) {
      if (n > 0) {
        const std::size_t cap = c.capacity();
        const std::byte* base = detail::storage_base(c);
        for (std::size_t l = 0; l < cols.size(); ++l) cols[l].data = base + M::leaf_offset(cap, 0, l);
      }
      return arrow::export_columns(root, cols, n, c.storage(), true, meta);
    }
  }
  // Every other case reads from host memory laid out as the container's allocation, gathers each
  // leaf into a column of its own and exports those columns in place (they are the copy).
  struct gathered {
    std::vector<buffer> columns;
  };
  auto keep = std::make_shared<gathered>();
  if (n > 0) {
    auto gather = [&](const auto& host) {
      const std::size_t cap = host.capacity();
      const std::byte* base = detail::storage_base(host);
      for (std::size_t l = 0; l < cols.size(); ++l) {
        const std::size_t bytes = reflect::leaf_sizes<T>[l];
        keep->columns.emplace_back(n * bytes, memory_space::host);
        detail::gather_leaf<M>(base, 0, cap, 0, n, l, bytes, keep->columns.back().data());
        cols[l].data = keep->columns.back().data();
      }
    };
    if constexpr (S == memory_space::device) gather(basic_vector<T, M, memory_space::host>(c));
    else gather(c);
  }
  arrow::exported out = arrow::export_columns(root, cols, n, keep, true, meta);
  out.copied_leaves += out.shared_leaves, out.shared_leaves = 0, out.path = export_path::copied;
  return out;
}

/// Reads the record batch (schema, array) into `dst` (any layout and memory space), replacing its
/// records only when every field was read. The caller keeps ownership of both structs.
template <class T, class M, memory_space S>
void from_arrow(const ArrowSchema& schema, const ArrowArray& array, basic_vector<T, M, S>& dst) {
  static_assert(reflect::check_record<T>());
  const arrow::field root = arrow_schema_of<T>();
  const std::size_t n = arrow::batch_length(schema, array);
  if (n > basic_vector<T, M, S>::max_size())
    throw size_error("strata::io::from_arrow: " + std::to_string(n) + " records exceed the container's max_size()");
  const std::string table = "the record batch read into " + strata::detail::type_name<T>();
  std::vector<buffer> columns;
  std::vector<void*> out;
  for (std::size_t l = 0; l < reflect::leaf_count<T>; ++l) {
    columns.emplace_back(n * reflect::leaf_sizes<T>[l], memory_space::host);
    out.push_back(columns.back().data());
  }
  arrow::import_columns(root, schema, array, out, table);
  std::vector<T> records(n);  // value-initialised: padding bytes are zero
  auto* bytes = reinterpret_cast<std::byte*>(records.data());
  for (std::size_t l = 0; l < out.size(); ++l) {
    const std::size_t size = reflect::leaf_sizes<T>[l], at = detail::leaf_offsets<T>[l];
    const auto* src = static_cast<const std::byte*>(out[l]);
    for (std::size_t i = 0; i < n; ++i) std::memcpy(bytes + i * sizeof(T) + at, src + i * size, size);
  }
  basic_vector<T, M, S> result(records);
  dst.swap(result);
}

/// The record batch (schema, array) as a new container C.
template <class C>
C from_arrow(const ArrowSchema& schema, const ArrowArray& array) {
  C out;
  from_arrow(schema, array, out);
  return out;
}

}  // namespace strata::io
