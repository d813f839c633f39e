// SPDX-License-Identifier: Apache-2.0
// Arrow C Data Interface structs (ArrowSchema / ArrowArray, from Arrow's own arrow/c/abi.h) built
// from columns described at run time: a tree of fields (structs, fixed-size lists, leaves) whose
// leaves each read one column of n values per element of their enclosing lists. strata/io/arrow.hpp
// builds the tree from a record's reflection, the Python module from a NumPy dtype; both export and
// import through this header.
//
// Ownership follows the C Data Interface's release rules: every ArrowSchema and ArrowArray struct,
// children included, has its own release callback and private data, so a consumer may move any of
// them out (a bitwise copy, the source's release then set to NULL) and release it on its own; a
// parent releases only the children whose release is still set. Buffers stay alive until the last
// array struct that points into them is released: the arrays share one state holding the copies
// strata made and the owner of the memory it did not copy.
#pragma once

#include <strata/memory/resource.hpp>

#include <arrow/c/abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::io {

/// What the Arrow C Data Interface cannot hold, or a table that does not fit the record it is read
/// into (a field missing, of another type or shape, nulls, too few values). The message names the field.
class arrow_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace arrow {

/// One field of an exported struct: a struct ("+s": `children`), a fixed-size list ("+w:N": one
/// child, `list_size` = N) or a leaf (any other format). A leaf's values come from `columns`: one
/// column per element of its enclosing lists, in row-major order, so that value k of record i in
/// Arrow's child array (index i * columns.size() + k) is record i of column columns[k].
struct field {
  std::string name;
  std::string format;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<field> children;
  std::size_t list_size = 0;
  std::size_t bytes = 0;       ///< a leaf: bytes per value in memory (1 for a bool)
  bool boolean = false;        ///< a leaf of 1-byte bools in memory, bit-packed in Arrow
  std::vector<std::size_t> columns;
  bool is_struct() const noexcept { return format == "+s"; }
  bool is_list() const noexcept { return format.rfind("+w:", 0) == 0; }
  bool is_leaf() const noexcept { return !is_struct() && !is_list(); }
};

/// A leaf's metadata value for `key`, or empty.
inline std::string_view metadata_value(const field& f, std::string_view key) {
  for (const auto& [k, v] : f.metadata)
    if (k == key) return v;
  return {};
}

/// Arrow's metadata encoding: int32 pair count, then per pair int32 length + key bytes, int32
/// length + value bytes (native byte order). Empty for no pairs (the C interface's NULL).
inline std::string encode_metadata(const std::vector<std::pair<std::string, std::string>>& pairs) {
  if (pairs.empty()) return {};
  std::string out;
  auto put = [&](std::int32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(std::int32_t(pairs.size()));
  for (const auto& [k, v] : pairs) {
    put(std::int32_t(k.size())), out += k;
    put(std::int32_t(v.size())), out += v;
  }
  return out;
}

/// The pairs of Arrow-encoded metadata (NULL: none); a truncated encoding is an arrow_error.
inline std::vector<std::pair<std::string, std::string>> decode_metadata(const char* m, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!m) return out;
  std::size_t at = 0;
  auto get = [&]() {
    std::int32_t v;
    std::memcpy(&v, m + at, sizeof v);
    at += sizeof v;
    if (v < 0) throw arrow_error("strata::io::from_arrow: the metadata of " + where + " is damaged (a negative length)");
    return std::size_t(v);
  };
  const std::size_t pairs = get();
  if (pairs > 4096) throw arrow_error("strata::io::from_arrow: the metadata of " + where + " claims " + std::to_string(pairs) + " pairs");
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::size_t kn = get();
    std::string k(m + at, kn);
    at += kn;
    const std::size_t vn = get();
    out.emplace_back(std::move(k), std::string(m + at, vn));
    at += vn;
  }
  return out;
}

/// One column of n values, each `field::bytes` wide, back to back (host memory).
struct column {
  const void* data = nullptr;
};

namespace detail {

struct shared_state {
  std::shared_ptr<const void> owner;  // the memory leaves point into without a copy
  std::vector<buffer> copies;         // what strata copied (bit-packed bools, interleaved lists)
};
struct array_private {
  std::shared_ptr<shared_state> state;
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
};
struct schema_private {
  std::string format, name, metadata;
  std::vector<ArrowSchema*> children;
};

inline void release_array(ArrowArray* a) {
  auto* p = static_cast<array_private*>(a->private_data);
  for (ArrowArray* c : p->children) {
    if (c->release) c->release(c);
    delete c;
  }
  delete p;
  a->release = nullptr;
  a->private_data = nullptr;
}
inline void release_schema(ArrowSchema* s) {
  auto* p = static_cast<schema_private*>(s->private_data);
  for (ArrowSchema* c : p->children) {
    if (c->release) c->release(c);
    delete c;
  }
  delete p;
  s->release = nullptr;
  s->private_data = nullptr;
}

/// Fills `s` for field f. `s` owns what it holds from its first line on: when a later step throws,
/// releasing it frees what was built.
inline void build_schema(ArrowSchema* s, const field& f, const std::string& metadata) {
  *s = ArrowSchema{};
  auto* p = new schema_private{f.format, f.name, metadata, {}};
  s->private_data = p;
  s->release = &release_schema;
  s->format = p->format.c_str();
  s->name = p->name.c_str();
  s->metadata = p->metadata.empty() ? nullptr : p->metadata.data();
  s->flags = 0;  // not nullable: strata's records have no nulls
  p->children.reserve(f.children.size());
  for (const field& c : f.children) {
    auto* child = new ArrowSchema{};
    p->children.push_back(child);  // reserved: cannot throw
    build_schema(child, c, encode_metadata(c.metadata));
  }
  s->n_children = std::int64_t(p->children.size());
  s->children = p->children.empty() ? nullptr : p->children.data();
}

struct build_context {
  const std::vector<column>& columns;
  std::size_t records;
  bool share;  // leaves of one column point into it
  std::size_t shared = 0, copied = 0;
};

/// Fills `a` for field f over `length` values (records times the sizes of the enclosing lists).
inline void build_array(ArrowArray* a, const field& f, std::size_t length, const std::shared_ptr<shared_state>& state, build_context& cx) {
  *a = ArrowArray{};
  auto* p = new array_private{state, {}, {}};
  a->private_data = p;
  a->release = &release_array;
  a->length = std::int64_t(length);
  a->null_count = 0;
  a->offset = 0;
  if (f.is_leaf()) {
    const std::size_t k = f.columns.size(), n = cx.records;
    const void* data = nullptr;
    if (k == 1 && !f.boolean && cx.share) {
      data = n ? cx.columns[f.columns[0]].data : nullptr;
      ++cx.shared;
    } else {
      const std::size_t bytes = f.boolean ? (length + 7) / 8 : length * f.bytes;
      buffer out(bytes, memory_space::host);
      std::byte* o = out.data();
      if (f.boolean) {
        if (bytes) std::memset(o, 0, bytes);
        for (std::size_t e = 0; e < k; ++e) {
          const auto* src = static_cast<const unsigned char*>(cx.columns[f.columns[e]].data);
          for (std::size_t i = 0; i < n; ++i)
            if (src[i]) o[(i * k + e) / 8] |= std::byte(1u << ((i * k + e) % 8));
        }
      } else {
        for (std::size_t e = 0; e < k; ++e) {
          const auto* src = static_cast<const std::byte*>(cx.columns[f.columns[e]].data);
          for (std::size_t i = 0; i < n; ++i) std::memcpy(o + (i * k + e) * f.bytes, src + i * f.bytes, f.bytes);
        }
      }
      data = o;
      state->copies.push_back(std::move(out));
      ++cx.copied;
    }
    p->buffers = {nullptr, data};
  } else {
    p->buffers = {nullptr};
    p->children.reserve(f.children.size());
    const std::size_t child_length = f.is_list() ? length * f.list_size : length;
    for (const field& c : f.children) {
      auto* child = new ArrowArray{};
      p->children.push_back(child);
      build_array(child, c, child_length, state, cx);
    }
  }
  a->n_buffers = std::int64_t(p->buffers.size());
  a->buffers = p->buffers.data();
  a->n_children = std::int64_t(p->children.size());
  a->children = p->children.empty() ? nullptr : p->children.data();
}

}  // namespace detail

/// How an export reached its buffers.
enum class export_path {
  shared,         ///< every leaf points into the source's memory: nothing was copied
  partly_shared,  ///< some leaves point into it; bools (bit-packed) and list elements (interleaved) were copied
  copied,         ///< every leaf was copied (a layout other than SoA, device memory, or a copy asked for)
};
inline const char* to_string(export_path p) {
  return p == export_path::shared ? "shared" : p == export_path::partly_shared ? "partly shared" : "copied";
}

/// A record batch in the Arrow C Data Interface: a struct array and its schema, owned until
/// release_into() hands both to a consumer (or until this object goes).
class exported {
 public:
  exported() = default;
  exported(exported&& o) noexcept : schema(o.schema), array(o.array), path(o.path), shared_leaves(o.shared_leaves), copied_leaves(o.copied_leaves) {
    o.schema.release = nullptr;
    o.array.release = nullptr;
  }
  exported& operator=(exported&& o) noexcept {
    if (this != &o) {
      reset();
      schema = o.schema, array = o.array, path = o.path, shared_leaves = o.shared_leaves, copied_leaves = o.copied_leaves;
      o.schema.release = nullptr;
      o.array.release = nullptr;
    }
    return *this;
  }
  ~exported() { reset(); }

  /// Moves the schema and the array into the consumer's structs (which must be released or
  /// empty); this object then holds neither.
  void release_into(ArrowSchema* out_schema, ArrowArray* out_array) noexcept {
    if (out_schema) *out_schema = schema, schema.release = nullptr;
    if (out_array) *out_array = array, array.release = nullptr;
  }
  void reset() noexcept {
    if (schema.release) schema.release(&schema);
    if (array.release) array.release(&array);
  }

  ArrowSchema schema{};
  ArrowArray array{};
  export_path path = export_path::shared;
  std::size_t shared_leaves = 0, copied_leaves = 0;
};

/// Exports n records whose leaf columns are `columns` as a struct array of `root`'s children.
/// Leaves of one column point into it where `share` is set (`owner` keeps that memory alive until
/// the last array is released); bools and list elements are always copied.
inline exported export_columns(const field& root, const std::vector<column>& columns, std::size_t n, std::shared_ptr<const void> owner, bool share,
                               const std::vector<std::pair<std::string, std::string>>& schema_metadata = {}) {
  if (!root.is_struct()) throw arrow_error("strata::io::to_arrow: a record batch is a struct; the root field is '" + root.format + "'");
  if (n > std::size_t(INT64_MAX)) throw arrow_error("strata::io::to_arrow: " + std::to_string(n) + " records exceed Arrow's int64 lengths");
  exported out;
  detail::build_schema(&out.schema, root, encode_metadata(schema_metadata));
  auto state = std::make_shared<detail::shared_state>();
  if (share) state->owner = std::move(owner);
  detail::build_context cx{columns, n, share};
  detail::build_array(&out.array, root, n, state, cx);
  out.shared_leaves = cx.shared, out.copied_leaves = cx.copied;
  out.path = cx.copied == 0 ? export_path::shared : cx.shared == 0 ? export_path::copied : export_path::partly_shared;
  return out;
}

/// The value type a format string names, for messages ("f" -> "float32").
inline std::string format_name(std::string_view f) {
  static constexpr std::pair<std::string_view, std::string_view> names[] = {
      {"b", "boolean"}, {"c", "int8"},   {"C", "uint8"},   {"s", "int16"},   {"S", "uint16"}, {"i", "int32"}, {"I", "uint32"},
      {"l", "int64"},   {"L", "uint64"}, {"e", "float16"}, {"f", "float32"}, {"g", "float64"}, {"+s", "struct"}, {"n", "null"},
      {"u", "utf8"},    {"z", "binary"}, {"+l", "list"},   {"+L", "large list"}};
  for (const auto& [k, v] : names)
    if (k == f) return std::string(v) + " ('" + std::string(f) + "')";
  if (f.rfind("+w:", 0) == 0) return "fixed-size list of " + std::string(f.substr(3)) + " ('" + std::string(f) + "')";
  if (f.rfind("w:", 0) == 0) return "fixed-size binary of " + std::string(f.substr(2)) + " bytes ('" + std::string(f) + "')";
  return "'" + std::string(f) + "'";
}

/// The fixed-size list f as a struct of its elements, named "0" .. "N-1": each element a field of
/// its own, whose leaves each read one column per element of the lists above (`outer` of them), so
/// that they point into it (see export_columns). Lists below f stay lists.
inline field list_as_struct(const field& f, std::size_t outer) {
  const std::size_t n = f.list_size;
  // Element j keeps, of every leaf below, the columns of index (a * n + j) * inner + b.
  auto element = [&](auto&& self, const field& g, std::size_t j) -> field {
    field e = g;
    if (g.is_leaf()) {
      const std::size_t inner = g.columns.size() / (outer * n);
      e.columns.clear();
      for (std::size_t a = 0; a < outer; ++a)
        for (std::size_t b = 0; b < inner; ++b) e.columns.push_back(g.columns[(a * n + j) * inner + b]);
      return e;
    }
    e.children.clear();
    for (const field& c : g.children) e.children.push_back(self(self, c, j));
    return e;
  };
  field out;
  out.name = f.name, out.format = "+s", out.metadata = f.metadata;
  for (std::size_t j = 0; j < n; ++j) {
    out.children.push_back(element(element, f.children.at(0), j));
    out.children.back().name = std::to_string(j);
  }
  return out;
}

/// f with every fixed-size list turned into a struct of its elements (list_as_struct).
inline field lists_as_structs(const field& f, std::size_t outer = 1) {
  if (f.is_leaf()) return f;
  field g = f.is_list() ? list_as_struct(f, outer) : f;
  for (field& c : g.children) c = lists_as_structs(c, outer);
  return g;
}

namespace detail {

struct import_context {
  const std::vector<void*>& out;  // one column of n values per leaf column
  std::size_t records;
  std::string table;  // names the table in messages
};

inline bool bit(const void* bits, std::size_t i) { return (static_cast<const unsigned char*>(bits)[i / 8] >> (i % 8)) & 1u; }

/// Reads values [first, first + count) of array a (its own offset not yet applied) for field e.
inline void import_node(const field& e, const ArrowSchema& s, const ArrowArray& a, std::size_t first, std::size_t count, const std::string& path,
                        import_context& cx) {
  const std::string called = "field '" + path + "' of " + cx.table;
  if (!s.format) throw arrow_error("strata::io::from_arrow: " + called + " has no format");
  if (e.format != s.format)
    throw arrow_error("strata::io::from_arrow: " + called + " is " + format_name(s.format) + " where the record has " + format_name(e.format));
  if (!e.is_struct() && !e.is_list()) {
    const std::string_view want = metadata_value(e, "strata.type");
    if (!want.empty()) {
      const auto meta = decode_metadata(s.metadata, called);
      std::string_view got;
      for (const auto& [k, v] : meta)
        if (k == "strata.type") got = v;
      if (got != want)
        throw arrow_error("strata::io::from_arrow: " + called + " is " + format_name(s.format) + (got.empty() ? std::string(" without strata.type") : " of strata.type '" + std::string(got) + "'") +
                          "; the record's leaf is strata.type '" + std::string(want) + "'");
    }
  }
  if (a.length < 0 || a.offset < 0 || a.n_buffers < 0 || a.n_children < 0) throw arrow_error("strata::io::from_arrow: " + called + " has a negative length, offset or count");
  if (std::size_t(a.length) < first || std::size_t(a.length) - first < count)
    throw arrow_error("strata::io::from_arrow: " + called + " holds " + std::to_string(a.length) + " values where " + std::to_string(first + count) +
                      " are needed (its parent is longer than it)");
  const std::size_t start = std::size_t(a.offset) + first;
  if (a.null_count > 0) throw arrow_error("strata::io::from_arrow: " + called + " holds " + std::to_string(a.null_count) + " nulls; strata's records have no nulls");
  if (a.null_count < 0 && a.n_buffers > 0 && a.buffers[0]) {
    for (std::size_t i = 0; i < count; ++i)
      if (!bit(a.buffers[0], start + i))
        throw arrow_error("strata::io::from_arrow: " + called + " holds a null at value " + std::to_string(first + i) + "; strata's records have no nulls");
  }
  if (e.is_struct() || e.is_list()) {
    if (a.n_children != s.n_children || (s.n_children > 0 && (!a.children || !s.children)))
      throw arrow_error("strata::io::from_arrow: " + called + " has " + std::to_string(a.n_children) + " child arrays and its schema " + std::to_string(s.n_children));
    if (e.is_list()) {
      if (s.n_children != 1) throw arrow_error("strata::io::from_arrow: " + called + " is a list of " + std::to_string(s.n_children) + " children");
      import_node(e.children[0], *s.children[0], *a.children[0], start * e.list_size, count * e.list_size, path + "[]", cx);
      return;
    }
    for (const field& c : e.children) {
      std::int64_t at = -1;
      std::string names;
      for (std::int64_t k = 0; k < s.n_children; ++k) {
        const char* nm = s.children[k]->name ? s.children[k]->name : "";
        if (at < 0 && c.name == nm) at = k;
        names += (names.empty() ? "" : ", ") + std::string(nm);
      }
      const std::string sub = path.empty() ? c.name : path + "." + c.name;
      if (at < 0)
        throw arrow_error("strata::io::from_arrow: " + cx.table + " has no field '" + sub + "' (" + (path.empty() ? std::string("its") : "'" + path + "' has") +
                          " fields: " + (names.empty() ? std::string("none") : names) + ")");
      import_node(c, *s.children[at], *a.children[at], start, count, sub, cx);
    }
    return;
  }
  const std::size_t k = e.columns.size(), n = cx.records;
  if (count != n * k) throw arrow_error("strata::io::from_arrow: " + called + " is read as " + std::to_string(count) + " values, not " + std::to_string(n * k));
  if (a.n_buffers != 2) throw arrow_error("strata::io::from_arrow: " + called + " has " + std::to_string(a.n_buffers) + " buffers; a " + format_name(e.format) + " has 2");
  if (count == 0) return;
  const void* data = a.buffers[1];
  if (!data) throw arrow_error("strata::io::from_arrow: " + called + " has no data buffer");
  for (std::size_t c = 0; c < k; ++c) {
    auto* dst = static_cast<std::byte*>(cx.out[e.columns[c]]);
    if (e.boolean) {
      for (std::size_t i = 0; i < n; ++i) dst[i] = std::byte(bit(data, start + i * k + c) ? 1 : 0);
    } else {
      const auto* src = static_cast<const std::byte*>(data) + start * e.bytes;
      for (std::size_t i = 0; i < n; ++i) std::memcpy(dst + i * e.bytes, src + (i * k + c) * e.bytes, e.bytes);
    }
  }
}

}  // namespace detail

/// The records of a struct array (schema s, array a): its length less nothing (offset applied).
inline std::size_t batch_length(const ArrowSchema& s, const ArrowArray& a) {
  if (!s.release || !a.release) throw arrow_error("strata::io::from_arrow: the schema or the array was already released");
  if (!s.format || std::string_view(s.format) != "+s")
    throw arrow_error("strata::io::from_arrow: a record batch is a struct array ('+s'); this one is " + format_name(s.format ? s.format : "?"));
  if (a.length < 0) throw arrow_error("strata::io::from_arrow: the array's length is negative");
  return std::size_t(a.length);
}

/// Reads the struct array (s, a) into leaf columns: `out[c]` receives the n values of column c
/// (root's leaves name them). Fields are matched by name (extra fields in the table are skipped);
/// a fixed-size list of the record may arrive as a list or as a struct of its elements "0" ..
/// "N-1". Nothing is released: the caller still owns s and a.
inline void import_columns(const field& root, const ArrowSchema& s, const ArrowArray& a, const std::vector<void*>& out, const std::string& table) {
  const std::size_t n = batch_length(s, a);
  // Lists of the record that the table holds as structs of their elements are matched in that form.
  auto adapt = [&](auto&& self, const field& e, const ArrowSchema& t, std::size_t outer) -> field {
    if (e.is_leaf() || !t.format) return e;
    field o = e.is_list() && std::string_view(t.format) == "+s" ? list_as_struct(e, outer) : e;
    if (o.format != t.format || !t.children) return o;
    const std::size_t inner = o.is_list() ? outer * o.list_size : outer;
    for (field& c : o.children)
      for (std::int64_t k = 0; k < t.n_children; ++k)
        if (o.is_list() || (t.children[k]->name && c.name == t.children[k]->name)) {
          c = self(self, c, *t.children[k], inner);
          break;
        }
    return o;
  };
  const field matched = adapt(adapt, root, s, 1);
  detail::import_context cx{out, n, table};
  detail::import_node(matched, s, a, 0, n, "", cx);
}

}  // namespace arrow
}  // namespace strata::io
