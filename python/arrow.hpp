// SPDX-License-Identifier: Apache-2.0
// strata.to_arrow's C++ half: SoA columns (NumPy arrays in host memory) and the field tree that
// python/strata/__init__.py builds from their dtype become the ArrowSchema / ArrowArray pair of
// strata/io/arrow_c.hpp, handed to Python as the PyCapsules of the Arrow PyCapsule interface
// ("arrow_schema", "arrow_array"). Leaves of one column point into the NumPy arrays, which the
// arrays keep alive until the consumer releases the last of them (from any thread: the release
// takes the GIL to drop them).
#pragma once

#include "arrays.hpp"

#include <strata/io/arrow_c.hpp>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace strata_python {

namespace arrow = strata::io::arrow;

/// The bytes per value a leaf format holds in memory; 0 for a format strata does not export.
inline std::size_t leaf_format_bytes(const std::string& f) {
  if (f == "b" || f == "c" || f == "C") return 1;
  if (f == "s" || f == "S" || f == "e") return 2;
  if (f == "i" || f == "I" || f == "f") return 4;
  if (f == "l" || f == "L" || f == "g") return 8;
  if (f.size() > 2 && f.rfind("w:", 0) == 0 && f.find_first_not_of("0123456789", 2) == std::string::npos && f.size() < 8) return std::stoul(f.substr(2));
  return 0;
}

/// One node of the tree: (name, format, list_size, metadata [(key, value)], children, columns).
using node = nb::tuple;

inline arrow::field field_of(nb::handle h, std::size_t n_columns, const std::string& path, int depth) {
  if (depth > 64) value_error("strata: the dtype nests deeper than 64 levels");
  auto [name, format, list_size, metadata, children, columns] =
      nb::cast<std::tuple<std::string, std::string, std::size_t, std::vector<std::pair<std::string, std::string>>, nb::list, std::vector<std::size_t>>>(h);
  arrow::field f;
  f.name = name, f.format = format, f.list_size = list_size, f.metadata = metadata;
  const std::string here = path.empty() ? name : path + "." + name;
  if (f.is_struct() || f.is_list()) {
    for (nb::handle c : children) f.children.push_back(field_of(c, n_columns, here, depth + 1));
    if (f.is_list() && (f.children.size() != 1 || f.list_size == 0 || format != "+w:" + std::to_string(list_size)))
      value_error("strata: field '" + here + "' is a fixed-size list of " + std::to_string(list_size) + " with " + std::to_string(f.children.size()) + " children");
    return f;
  }
  f.bytes = leaf_format_bytes(format);
  if (f.bytes == 0) type_error("strata: field '" + here + "' has Arrow format '" + format + "', which strata does not export");
  f.boolean = format == "b";
  f.columns = columns;
  if (f.columns.empty()) value_error("strata: field '" + here + "' reads no column");
  for (std::size_t c : f.columns)
    if (c >= n_columns) value_error("strata: field '" + here + "' reads column " + std::to_string(c) + " of " + std::to_string(n_columns));
  return f;
}

/// Holds Python objects for C++ owners that may let go of them on any thread.
inline std::shared_ptr<const void> hold(nb::object o) {
  auto* p = new nb::object(std::move(o));
  return std::shared_ptr<const void>(p, [](const void* q) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone, and with it what q held
    nb::gil_scoped_acquire gil;
    delete static_cast<const nb::object*>(q);
  });
}

/// The PyCapsules of the interface: each owns a heap struct, released (where the consumer has not
/// moved it out) and freed with the capsule.
inline std::pair<nb::capsule, ArrowSchema*> schema_capsule() {
  auto* p = new ArrowSchema{};
  return {nb::capsule(p, "arrow_schema", [](void* q) noexcept {
            auto* x = static_cast<ArrowSchema*>(q);
            if (x->release) x->release(x);
            delete x;
          }),
          p};
}
inline std::pair<nb::capsule, ArrowArray*> array_capsule() {
  auto* p = new ArrowArray{};
  return {nb::capsule(p, "arrow_array", [](void* q) noexcept {
            auto* x = static_cast<ArrowArray*>(q);
            if (x->release) x->release(x);
            delete x;
          }),
          p};
}

/// (schema capsule, array capsule, path): n records of the struct `tree` over `columns` (one dense
/// host array of n values per leaf column, each of its leaf's bytes).
inline std::tuple<nb::capsule, nb::capsule, std::string> to_arrow(nb::handle tree, const nb::list& columns, std::size_t n,
                                                                  const std::vector<std::pair<std::string, std::string>>& metadata) {
  const arrow::field root = field_of(tree, nb::len(columns), "", 0);
  if (!root.is_struct()) value_error("strata: a record batch is a struct; the tree's root is '" + root.format + "'");
  std::vector<arrow::column> cols(nb::len(columns));
  std::vector<std::size_t> width(cols.size(), 0);
  auto widths = [&](auto&& self, const arrow::field& f) -> void {
    for (std::size_t c : f.columns) {
      if (width[c] && width[c] != f.bytes) value_error("strata: column " + std::to_string(c) + " is read as values of two sizes");
      width[c] = f.bytes;
    }
    for (const auto& g : f.children) self(self, g);
  };
  widths(widths, root);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::string name = "column " + std::to_string(c);
    const input a = array_of<input>(columns[c], name);
    if (a.device_type() != nb::device::cpu::value) value_error("strata: " + name + " is not in CPU memory; Arrow's C Data Interface takes host memory (copy it with .cpu())");
    const std::size_t bytes = dense_bytes(a, name), need = checked_mul(n, width[c], name);
    if (bytes != need)
      value_error("strata: " + name + " holds " + std::to_string(bytes) + " bytes; " + std::to_string(n) + " values of " + std::to_string(width[c]) +
                  " bytes need " + std::to_string(need));
    cols[c].data = n ? data_of(a) : nullptr;
  }
  arrow::exported x = arrow::export_columns(root, cols, n, hold(nb::borrow(columns)), true, metadata);
  auto [sc, s] = schema_capsule();
  auto [ac, a] = array_capsule();
  x.release_into(s, a);
  return {sc, ac, arrow::to_string(x.path)};
}

inline void def_arrow(nb::module_& m) {
  m.def("to_arrow", &to_arrow, nb::arg("tree"), nb::arg("columns"), nb::arg("n"), nb::arg("metadata"),
        "The Arrow C Data Interface's (schema, array) PyCapsules of n records: `tree` is the struct field (name, format, list_size, "
        "metadata, children, columns), `columns` one dense host array of n values per leaf column. Leaves of one column point into "
        "it (the capsules keep the arrays alive); bools are bit-packed and list elements interleaved. Returns (schema, array, path).");
}

}  // namespace strata_python
