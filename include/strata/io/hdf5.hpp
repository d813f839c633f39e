// SPDX-License-Identifier: Apache-2.0
// HDF5 files whose schema is the record's reflection: a container is written as a group holding one
// dataset per leaf, named by the leaf's path (`pos.x` -> `pos/x`, `w[2]`), typed as HDF5 knows the
// leaf's type, and read back into any layout and memory space. The files are plain HDF5: h5py,
// HDFView, h5dump and every other HDF5 reader open them without strata.
//
// A group strata writes holds
//   - per leaf: a 1-D dataset of `records` values, chunked, Fletcher32-checksummed (a damaged chunk
//     fails its read instead of returning wrong values), optionally shuffled and deflated; attribute
//     `strata.type` names the leaf's type (`float32`, `bfloat16`, `bool`, `opaque12`, ...);
//   - attributes `strata.records` (uint64), `strata.record` (the C++ record type), `strata.layout`
//     (the layout it was written from, informative only), `strata.version`, `strata.leaves` (the
//     leaf names in reflection order, one per line) and `strata.schema` (JSON: name, type, byte size
//     and offset of every leaf).
// Types: integers and bool (an HDF5 enum FALSE / TRUE, as h5py writes NumPy's bool) as themselves,
// float / double as IEEE binary32 / binary64, strata::half as IEEE binary16 (h5py reads it as
// float16), strata::bfloat16 as an HDF5 float of 1 sign, 8 exponent and 7 mantissa bits (h5py reads
// it converted to float16, where values past 65504 become inf: read it as float32 there), and any
// other leaf (an opaque struct, __half2) as an HDF5 opaque type of its size tagged with its C++ name.
//
// Reading matches the destination record's leaves to the file's by name, so a record type that has
// changed since the file was written still reads (schema evolution): leaves the file has and the
// record lacks are skipped; a leaf renamed since is mapped by read_options::renames; a leaf the file
// lacks is an error naming it, or zero where read_options::missing asks; a leaf stored narrower
// (int16 -> int32, float16 -> float, float -> double) is widened by HDF5's conversion, and one stored
// wider or of another kind is an error naming it unless read_options::narrowing allows the
// conversion. Reads fill a new container and replace the destination only when every leaf has been
// read: a truncated, damaged or mismatched file leaves it as it was.
//
// Device containers move through two pinned staging blocks: the copy of one block between the GPU
// and pinned memory runs while HDF5 writes (or reads) the other. A block crosses as columns: SoA
// columns as they are, AoS blocks transposed on the GPU into a device SoA block first (one block of
// scratch, staging_records records); AoSoA blocks cross as stored and are gathered on the host.
// Host containers are written from and read into their own memory where a leaf's values are one
// array there (SoA), and gathered leaf by leaf otherwise.
#pragma once

#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/convert/convert.hpp>
#include <strata/io/schema.hpp>
#include <strata/memory/checked.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::io {

/// A file that cannot be created, opened, read or written, or whose contents are damaged (a
/// truncated file, a failed checksum, datasets of the wrong length). HDF5's own message follows.
class file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

static_assert(H5T_OPAQUE_TAG_MAX - 1 == max_tag_bytes, "strata::io: HDF5's opaque tag limit changed; max_tag_bytes must follow it");

namespace h5 {

/// Owns one HDF5 identifier (file, group, dataset, dataspace, type, attribute, property list).
class id {
 public:
  id() = default;
  id(hid_t h, herr_t (*close)(hid_t)) : h_(h), close_(close) {}
  id(id&& o) noexcept : h_(std::exchange(o.h_, H5I_INVALID_HID)), close_(o.close_) {}
  id& operator=(id&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H5I_INVALID_HID);
      close_ = o.close_;
    }
    return *this;
  }
  ~id() { reset(); }
  hid_t get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ >= 0; }
  void reset() noexcept {
    if (h_ >= 0 && close_) (void)close_(h_);
    h_ = H5I_INVALID_HID;
  }

 private:
  hid_t h_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

/// HDF5's error stack, innermost message last, as one line.
inline std::string error_stack() {
  std::string out;
  auto walk = [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
    auto& s = *static_cast<std::string*>(data);
    if (e->desc && *e->desc) s += std::string(s.empty() ? "" : "; ") + e->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk, &out);
  H5Eclear2(H5E_DEFAULT);
  return out.empty() ? std::string("no message from HDF5") : out;
}

/// HDF5 prints its error stack to stderr by default; while strata calls it, errors become
/// exceptions instead, and the caller's setting is restored afterwards.
class quiet {
 public:
  quiet() {
    H5Eget_auto2(H5E_DEFAULT, &fn_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~quiet() { H5Eset_auto2(H5E_DEFAULT, fn_, data_); }
  quiet(const quiet&) = delete;
  quiet& operator=(const quiet&) = delete;

 private:
  H5E_auto2_t fn_ = nullptr;
  void* data_ = nullptr;
};

[[noreturn]] inline void fail(const std::string& what) { throw file_error("strata::io: " + what + " (HDF5: " + error_stack() + ")"); }
inline id check(hid_t h, herr_t (*close)(hid_t), const std::string& what) {
  if (h < 0) fail(what);
  return id(h, close);
}
inline void check(herr_t r, const std::string& what) {
  if (r < 0) fail(what);
}

/// `path` without its leading '/' (paths are relative to the file's root either way); a path with
/// an empty part ("a//b", "a/") is refused.
inline std::string relative(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return {};
  if (path.back() == '/' || path.find("//") != std::string_view::npos)
    throw std::invalid_argument("strata::io: the path '" + std::string(path) + "' has an empty part");
  return std::string(path);
}

/// Whether an object exists at `path` (a/b/c) below loc, every part before the last a group.
inline bool exists(hid_t loc, std::string_view path_in) {
  const std::string path = relative(path_in);
  if (path.empty()) return true;
  for (std::size_t at = 0;;) {
    const std::size_t slash = path.find('/', at);
    const std::string prefix = path.substr(0, slash);
    const htri_t e = H5Lexists(loc, prefix.c_str(), H5P_DEFAULT);
    if (e < 0) fail("cannot look up '" + prefix + "'");
    if (e == 0) return false;
    if (slash == std::string::npos) return true;
    const hid_t obj = H5Oopen(loc, prefix.c_str(), H5P_DEFAULT);
    if (obj < 0) fail("cannot open '" + prefix + "'");
    const bool group = H5Iget_type(obj) == H5I_GROUP;
    H5Oclose(obj);
    if (!group) return false;  // a dataset where a group would be: nothing below it
    at = slash + 1;
  }
}
/// The groups above `path` (its proper prefixes) that do not exist yet, outermost first: what a
/// write creating `path` with intermediate groups creates, to remove again if it fails.
inline std::vector<std::string> missing_parents(hid_t loc, const std::string& path) {
  std::vector<std::string> missing;
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
    if (!exists(loc, path.substr(0, slash))) missing.push_back(path.substr(0, slash));
  return missing;
}
/// Removes groups listed outermost first, innermost first (a failed write's cleanup: errors ignored).
inline void remove_groups(hid_t loc, const std::vector<std::string>& outermost_first) noexcept {
  for (auto it = outermost_first.rbegin(); it != outermost_first.rend(); ++it) (void)H5Ldelete(loc, it->c_str(), H5P_DEFAULT);
}

/// The attribute `name` of obj holds exactly one value (a scalar, or one element).
inline void expect_one_value(hid_t attr, const char* name) {
  id space = check(H5Aget_space(attr), H5Sclose, std::string("attribute ") + name);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw file_error(std::string("strata::io: attribute ") + name + " holds " + std::to_string(H5Sget_simple_extent_npoints(space.get())) +
                     " values where one belongs (a damaged or foreign file)");
}

/// A variable-length UTF-8 string attribute (what h5py writes for a str, and reads back as one).
inline void write_string_attribute(hid_t obj, const char* name, const std::string& value) {
  id type = check(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "string type size");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type charset");
  id space = check(H5Screate(H5S_SCALAR), H5Sclose, "scalar dataspace");
  id attr = check(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), std::string("attribute ") + name);
}

inline bool has_attribute(hid_t obj, const char* name) {
  const htri_t e = H5Aexists(obj, name);
  if (e < 0) fail(std::string("cannot look up attribute ") + name);
  return e > 0;
}

/// A string attribute (fixed or variable length), or `fallback` where there is none.
inline std::string read_string_attribute(hid_t obj, const char* name, std::string fallback = {}) {
  if (!has_attribute(obj, name)) return fallback;
  id attr = check(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  expect_one_value(attr.get(), name);
  id type = check(H5Aget_type(attr.get()), H5Tclose, std::string("attribute ") + name);
  if (H5Tget_class(type.get()) != H5T_STRING) throw file_error(std::string("strata::io: attribute ") + name + " is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {
    id mem = check(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
    check(H5Tset_size(mem.get(), H5T_VARIABLE), "string type");
    check(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), "string type");
    char* s = nullptr;
    check(H5Aread(attr.get(), mem.get(), &s), std::string("attribute ") + name);
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  const std::size_t n = H5Tget_size(type.get());
  std::string out(n, '\0');
  check(H5Aread(attr.get(), type.get(), out.data()), std::string("attribute ") + name);
  out.resize(std::strlen(out.c_str()));
  return out;
}

inline void write_u64_attribute(hid_t obj, const char* name, std::uint64_t value) {
  id space = check(H5Screate(H5S_SCALAR), H5Sclose, "scalar dataspace");
  id attr = check(H5Acreate2(obj, name, H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  check(H5Awrite(attr.get(), H5T_NATIVE_UINT64, &value), std::string("attribute ") + name);
}

inline std::uint64_t read_u64_attribute(hid_t obj, const char* name) {
  id attr = check(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  expect_one_value(attr.get(), name);
  id type = check(H5Aget_type(attr.get()), H5Tclose, std::string("attribute ") + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER) throw file_error(std::string("strata::io: attribute ") + name + " is not an integer");
  std::uint64_t v = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_UINT64, &v), std::string("attribute ") + name);
  return v;
}

/// IEEE-style float types HDF5 has no predefined name for, built from their bit fields.
inline id float_type(std::size_t sign_pos, std::size_t exp_pos, std::size_t exp_bits, std::size_t mant_bits, std::size_t bias) {
  id t = check(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "float type");
  check(H5Tset_fields(t.get(), sign_pos, exp_pos, exp_bits, 0, mant_bits), "float type fields");
  check(H5Tset_size(t.get(), 2), "float type size");
  check(H5Tset_ebias(t.get(), bias), "float type bias");
  return t;
}

}  // namespace h5

namespace detail {


/// The HDF5 type a leaf of type L is stored as (and read from memory as).
template <class L>
h5::id hdf5_type_of() {
  using namespace h5;
  const leaf_kind k = kind_of<L>();
  switch (k.what) {
    case leaf_kind::category::boolean: {
      id t = check(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "bool type");
      const std::int8_t f = 0, tr = 1;
      check(H5Tenum_insert(t.get(), "FALSE", &f), "bool type");
      check(H5Tenum_insert(t.get(), "TRUE", &tr), "bool type");
      return t;
    }
    case leaf_kind::category::signed_integer: {
      const hid_t base[] = {H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE};
      return check(H5Tcopy(base[k.bytes == 1 ? 0 : k.bytes == 2 ? 1 : k.bytes == 4 ? 2 : 3]), H5Tclose, "integer type");
    }
    case leaf_kind::category::unsigned_integer: {
      const hid_t base[] = {H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE};
      return check(H5Tcopy(base[k.bytes == 1 ? 0 : k.bytes == 2 ? 1 : k.bytes == 4 ? 2 : 3]), H5Tclose, "integer type");
    }
    case leaf_kind::category::floating:
      if (k.bytes == 4) return check(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "float type");
      if (k.bytes == 8) return check(H5Tcopy(H5T_IEEE_F64LE), H5Tclose, "float type");
      if (k.exponent_bits == 5) return float_type(15, 10, 5, 10, 15);  // IEEE binary16
      return float_type(15, 7, 8, 7, 127);                               // bfloat16
    case leaf_kind::category::opaque: {
      id t = check(H5Tcreate(H5T_OPAQUE, k.bytes), H5Tclose, "opaque type");
      check(H5Tset_tag(t.get(), k.tag.substr(0, H5T_OPAQUE_TAG_MAX - 1).c_str()), "opaque type tag");
      return t;
    }
  }
  h5::fail("unknown leaf type");
}

/// The kind of an HDF5 type as a file stores it.
inline leaf_kind kind_of_hdf5(hid_t t) {
  using category = leaf_kind::category;
  const std::size_t bytes = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_INTEGER: return {H5Tget_sign(t) == H5T_SGN_2 ? category::signed_integer : category::unsigned_integer, bytes, 0, 0, {}};
    case H5T_FLOAT: {
      std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
      H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
      return {category::floating, bytes, msize, esize, {}};
    }
    case H5T_ENUM: {
      const hid_t base = H5Tget_super(t);
      const bool is_signed = base >= 0 && H5Tget_sign(base) == H5T_SGN_2;
      if (base >= 0) H5Tclose(base);
      leaf_kind k{is_signed ? category::signed_integer : category::unsigned_integer, bytes, 0, 0, {}};
      if (H5Tget_nmembers(t) == 2) {
        char* a = H5Tget_member_name(t, 0);
        char* b = H5Tget_member_name(t, 1);
        if (a && b && std::string_view(a) == "FALSE" && std::string_view(b) == "TRUE") k.what = category::boolean;
        H5free_memory(a), H5free_memory(b);
      }
      return k;
    }
    case H5T_OPAQUE: {
      leaf_kind k{category::opaque, bytes, 0, 0, {}};
      if (char* tag = H5Tget_tag(t)) k.tag = tag, H5free_memory(tag);
      return k;
    }
    default: return {category::opaque, bytes, 0, 0, "an HDF5 type strata does not read"};
  }
}


/// A leaf's dataset path below its group: `pos.x` -> `pos/x`; `w[2]` stays.
inline std::string dataset_path(std::string_view leaf) {
  std::string p(leaf);
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}


/// `records` rounded down to whole chunks of `chunk` records; `records` itself where one chunk is
/// larger (the staging bound holds, and such a chunk is read in parts).
inline std::size_t whole_chunks(std::size_t records, std::size_t chunk) {
  chunk = std::max<std::size_t>(chunk, 1);
  return chunk > records ? records : records / chunk * chunk;
}
/// Records per chunk of a dataset (1 where it is not chunked: contiguous data reads in any parts).
inline std::size_t chunk_records(hid_t dset) {
  h5::id plist = h5::check(H5Dget_create_plist(dset), H5Pclose, "dataset property list");
  hsize_t dim = 1;
  if (H5Pget_layout(plist.get()) == H5D_CHUNKED && H5Pget_chunk(plist.get(), 1, &dim) == 1 && dim > 0) return std::size_t(dim);
  return 1;
}

inline h5::id dataspace(hsize_t n, bool unlimited) {
  const hsize_t maxdims = unlimited ? H5S_UNLIMITED : n;
  return h5::check(H5Screate_simple(1, &n, &maxdims), H5Sclose, "dataspace");
}
inline h5::id file_selection(hid_t dset, hsize_t first, hsize_t count, const std::string& what) {
  h5::id space = h5::check(H5Dget_space(dset), H5Sclose, what);
  h5::check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr), what);
  return space;
}

}  // namespace detail

/// An HDF5 file, open for reading or for reading and writing; closed when the last copy of it goes.
class file {
 public:
  enum class mode { read, read_write };
  /// A new file at `path`, replacing any file there.
  static file create(const std::string& path) {
    h5::quiet q;
    return file(h5::check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "cannot create '" + path + "'"), path);
  }
  /// An existing file; a missing, truncated or non-HDF5 file is a file_error.
  static file open(const std::string& path, mode m = mode::read) {
    h5::quiet q;
    const unsigned flags = m == mode::read ? H5F_ACC_RDONLY : H5F_ACC_RDWR;
    return file(h5::check(H5Fopen(path.c_str(), flags, H5P_DEFAULT), H5Fclose, "cannot open '" + path + "' as an HDF5 file (missing, truncated or not HDF5?)"), path);
  }
  hid_t id() const noexcept { return id_ ? id_->get() : H5I_INVALID_HID; }
  const std::string& path() const noexcept { return path_; }
  /// Writes what HDF5 buffers to the disk.
  void flush() const {
    h5::quiet q;
    h5::check(H5Fflush(id(), H5F_SCOPE_LOCAL), "cannot flush '" + path_ + "'");
  }

 private:
  file(h5::id f, std::string path) : id_(std::make_shared<h5::id>(std::move(f))), path_(std::move(path)) {}
  std::shared_ptr<h5::id> id_;  // shared: copies of a file name one open file
  std::string path_;
};

struct write_options {
  /// Records per HDF5 chunk (the unit a reader decompresses and checksums); clamped to
  /// [1, min(size, staging_records)] and to 1 GiB of the widest leaf.
  std::size_t chunk_records = std::size_t(1) << 20;
  /// gzip level 0 (none) .. 9; with compression the byte-shuffle filter runs first.
  int deflate = 0;
  /// A Fletcher32 checksum per chunk: a damaged chunk fails its read.
  bool checksum = true;
  /// Replace a group already at the path (otherwise that is an error).
  bool overwrite = false;
  /// Records per HDF5 write call; for device containers also the records of each of the two
  /// pinned staging blocks (and of the device scratch block an AoS container is transposed into).
  std::size_t staging_records = std::size_t(1) << 21;
};

struct read_options {
  /// Records [first, first + count) of the file (count: all from first by default).
  std::uint64_t first = 0;
  std::uint64_t count = ~std::uint64_t(0);
  /// The record's leaf name -> the name the file stores it under (leaves renamed since writing).
  std::map<std::string, std::string, std::less<>> renames;
  /// What a leaf the file lacks reads as: an error (the default) or zero.
  enum class missing_leaves { error, zero } missing = missing_leaves::error;
  /// Allow conversions that may lose values (float64 -> float32, int32 -> int16; HDF5 rounds and
  /// clamps). Without it they are schema_errors naming the leaf.
  bool narrowing = false;
  /// Records per HDF5 read call (rounded down to whole chunks of the file); for device containers
  /// also the records of each of the two pinned staging blocks (and of the device scratch block an
  /// AoS container is transposed from). A file whose chunks hold more records is read in parts of a
  /// chunk, each part checksummed and decompressed with its whole chunk: slower, never more memory.
  std::size_t staging_records = std::size_t(1) << 21;
};

/// One leaf of a group in a file.
struct leaf_info {
  std::string name;  ///< strata's leaf name (`pos.x`)
  leaf_kind kind;
  std::uint64_t records;
};

/// What a group strata wrote holds: its record count, record type and leaves.
struct group_info {
  std::uint64_t records = 0;
  std::string record;  ///< the C++ record type it was written from
  std::string layout;  ///< the layout it was written from
  std::vector<leaf_info> leaves;
};

namespace detail {

inline h5::id open_group(const file& f, const std::string& path_in) {
  const std::string path = h5::relative(path_in);
  if (path.empty()) return h5::check(H5Gopen2(f.id(), "/", H5P_DEFAULT), H5Gclose, "cannot open the root group of '" + f.path() + "'");
  if (!h5::exists(f.id(), path)) throw file_error("strata::io: '" + f.path() + "' has no group '" + path + "'");
  return h5::check(H5Gopen2(f.id(), path.c_str(), H5P_DEFAULT), H5Gclose, "cannot open group '" + path + "' of '" + f.path() + "'");
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t nl = s.find('\n', at);
    if (nl == std::string::npos) nl = s.size();
    if (nl > at) out.emplace_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

inline std::uint64_t dataset_length(hid_t dset, const std::string& what) {
  h5::id space = h5::check(H5Dget_space(dset), H5Sclose, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1) throw file_error("strata::io: " + what + " has " + std::to_string(rank) + " dimensions; a leaf has 1");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  return n;
}

}  // namespace detail

/// What group `path` of `f` holds (written by strata: it lists its leaves).
inline group_info describe(const file& f, const std::string& path) {
  h5::quiet q;
  h5::id g = detail::open_group(f, path);
  if (!h5::has_attribute(g.get(), "strata.leaves"))
    throw file_error("strata::io: group '" + path + "' of '" + f.path() + "' was not written by strata (no strata.leaves attribute)");
  group_info info;
  info.records = h5::has_attribute(g.get(), "strata.records") ? h5::read_u64_attribute(g.get(), "strata.records") : 0;
  info.record = h5::read_string_attribute(g.get(), "strata.record");
  info.layout = h5::read_string_attribute(g.get(), "strata.layout");
  for (const std::string& name : detail::split_lines(h5::read_string_attribute(g.get(), "strata.leaves"))) {
    const std::string ds = detail::dataset_path(name);
    if (!h5::exists(g.get(), ds)) throw file_error("strata::io: group '" + path + "' of '" + f.path() + "' lists leaf '" + name + "' but has no dataset '" + ds + "' (damaged file)");
    h5::id d = h5::check(H5Dopen2(g.get(), ds.c_str(), H5P_DEFAULT), H5Dclose, "cannot open leaf '" + name + "'");
    h5::id t = h5::check(H5Dget_type(d.get()), H5Tclose, "leaf '" + name + "'");
    info.leaves.push_back({name, detail::kind_of_hdf5(t.get()), detail::dataset_length(d.get(), "leaf '" + name + "'")});
  }
  return info;
}

namespace detail {
/// The writer behind write() and write_openpmd(): leaf L goes to dataset `names[L]` below the new
/// group (none where it is empty); `finish(group, datasets)` adds the attributes before the group is
/// renamed into place.
template <class T, class M, memory_space S, class Finish>
void write_group(const file& f, const std::string& path_in, const basic_vector<T, M, S>& c, const write_options& o,
                 const std::array<std::string, reflect::leaf_count<T>>& dataset_names, Finish&& finish) {
  h5::quiet q;
  const std::string path = h5::relative(path_in);
  if (path.empty()) throw std::invalid_argument("strata::io::write: name a group below the file's root");
  if (o.deflate < 0 || o.deflate > 9) throw std::invalid_argument("strata::io::write: deflate level " + std::to_string(o.deflate) + " is not 0..9");
  if (o.staging_records == 0) throw std::invalid_argument("strata::io::write: staging_records is 0");
  // HDF5 limits a chunk to 4 GiB; strata keeps chunks of every leaf under 1 GiB.
  std::size_t widest = 1;
  for (std::size_t l = 0; l < reflect::leaf_count<T>; ++l) widest = std::max(widest, reflect::leaf_sizes<T>[l]);
  const std::size_t chunk_cap = std::max<std::size_t>(1, (std::size_t(1) << 30) / widest);
  // A write call writes whole chunks, so a chunk holds at most staging_records records.
  const hsize_t chunk = std::max<hsize_t>(
      1, std::min<hsize_t>(std::min<hsize_t>(c.size(), o.staging_records), std::min(chunk_cap, std::max<std::size_t>(o.chunk_records, 1))));
  const bool existed = h5::exists(f.id(), path);
  if (existed && !o.overwrite) throw file_error("strata::io::write: '" + f.path() + "' already has '" + path + "' (write_options::overwrite replaces it)");
  if (o.deflate > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) throw file_error("strata::io::write: this HDF5 library has no deflate (gzip) filter");

  const std::string partial = path + ".strata-partial", old = path + ".strata-old";
  if (h5::exists(f.id(), partial)) h5::check(H5Ldelete(f.id(), partial.c_str(), H5P_DEFAULT), "cannot remove an earlier partial write");
  // The parent groups this call creates, removed again if the write fails.
  const std::vector<std::string> created = h5::missing_parents(f.id(), path);
  h5::id lcpl = h5::check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "link property list");
  h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "link property list");
  h5::id g = h5::check(H5Gcreate2(f.id(), partial.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "cannot create group '" + path + "' in '" + f.path() + "'");
  bool old_moved = false;
  try {
    c.wait();  // work queued on the container elsewhere lands first
    const std::size_t n = c.size();
    h5::id dcpl = h5::check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset property list");
    h5::check(H5Pset_chunk(dcpl.get(), 1, &chunk), "chunked layout");
    if (o.checksum) h5::check(H5Pset_fletcher32(dcpl.get()), "checksum filter");
    if (o.deflate > 0) h5::check(H5Pset_shuffle(dcpl.get()), "shuffle filter"), h5::check(H5Pset_deflate(dcpl.get(), unsigned(o.deflate)), "deflate filter");
    // Records per write call: whole chunks (a partial chunk would be filtered and written again
    // by the next call).
    const std::size_t block = detail::whole_chunks(o.staging_records, chunk);

    std::array<h5::id, reflect::leaf_count<T>> dsets, types;
    reflect::for_each_leaf<T>([&](auto leaf) {
      constexpr std::size_t L = decltype(leaf)::value;
      using V = reflect::leaf_type_t<T, L>;
      const std::string name(reflect::leaf_name<T, L>());
      if (dataset_names[L].empty()) return;
      types[L] = detail::hdf5_type_of<V>();
      h5::id space = detail::dataspace(n, true);
      dsets[L] = h5::check(H5Dcreate2(g.get(), dataset_names[L].c_str(), types[L].get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
                           H5Dclose, "cannot create leaf '" + name + "' as '" + dataset_names[L] + "'");
      h5::write_string_attribute(dsets[L].get(), "strata.type", detail::kind_of<V>().name());
    });

    // Records [s, s + b) of leaf l from host-readable memory at `base` (the allocation's layout).
    std::vector<std::byte> column;
    auto write_block = [&](const std::byte* at, std::size_t origin, std::size_t cap, std::size_t s, std::size_t b) {
      reflect::for_each_leaf<T>([&](auto leaf) {
        constexpr std::size_t L = decltype(leaf)::value;
        [[maybe_unused]] constexpr std::size_t bytes = sizeof(reflect::leaf_type_t<T, L>);
        if (!dsets[L]) return;
        const std::byte* values = at + (M::leaf_offset(cap, s, L) - origin);
        if constexpr (!detail::whole_columns<M>) {
          column.resize(b * bytes);
          detail::gather_leaf<M>(at, origin, cap, s, b, L, bytes, column.data());
          values = column.data();
        }
        h5::id mem = detail::dataspace(b, false);
        h5::id sel = detail::file_selection(dsets[L].get(), s, b, "leaf '" + std::string(reflect::leaf_name<T, L>()) + "'");
        h5::check(H5Dwrite(dsets[L].get(), types[L].get(), mem.get(), sel.get(), H5P_DEFAULT, values),
                  "cannot write leaf '" + std::string(reflect::leaf_name<T, L>()) + "' to '" + f.path() + "'");
      });
    };

    const std::size_t cap = c.capacity();
    if (n > 0) {
      const std::byte* base = detail::storage_base(c);
      if constexpr (S != memory_space::device) {
        for (std::size_t s = 0; s < n; s += block) write_block(base, 0, cap, s, std::min(block, n - s));
      } else {
        // Two pinned blocks: block k + 1 crosses from the GPU while HDF5 writes block k. Each holds
        // the block's columns (staged_as_columns) or the allocation's bytes covering the block,
        // laid out as in the allocation with block k's first byte at the stage's start.
        const detail::staging_plan plan = detail::plan_staging<M>(n, cap, block, chunk);
        const std::size_t step = plan.step;
        buffer stage[2] = {buffer(plan.stage_bytes, memory_space::pinned), buffer(plan.stage_bytes, memory_space::pinned)};
        strata::detail::device_guard on(c.device());
        // AoS: the GPU transposes each block into this SoA block before it crosses (stream order
        // keeps a block's transpose after the previous block's copy out of it).
        std::conditional_t<layout::record_mapping<M>, soa_vector<T, memory_space::device>, int> scratch{};
        if constexpr (layout::record_mapping<M>) scratch = soa_vector<T, memory_space::device>(step);
        // Per leaf, where its values of the block sit in the stage.
        std::array<std::size_t, M::leaves> at{};
        auto fetch = [&](std::size_t s, std::size_t b, std::byte* into) {
          if constexpr (detail::staged_as_columns<M>) {
            const std::byte* from = base;
            std::size_t from_cap = cap, from_first = s;
            if constexpr (layout::record_mapping<M>) {
              const auto all = c.const_view();
              convert(aos_view<const T>(all.data() + s, index_t(b), all.location()), scratch.view().first(index_t(b)), stream_t{});
              from = detail::storage_base(std::as_const(scratch)), from_cap = scratch.capacity(), from_first = 0;
            }
            std::size_t off = 0;
            for (std::size_t l = 0; l < M::leaves; ++l) {
              at[l] = off;
              using columns = std::conditional_t<layout::record_mapping<M>, soa_mapping<T>, M>;
              copy_bytes_async(into + off, from + columns::leaf_offset(from_cap, from_first, l), b * reflect::leaf_sizes<T>[l], stream_t{});
              off += b * reflect::leaf_sizes<T>[l];
            }
          } else {
            auto [lo, hi] = detail::covering_bytes<M>(cap, s, s + b);
            copy_bytes_async(into, base + lo, hi - lo, stream_t{});
          }
        };
        fetch(0, std::min(step, n), stage[0].data());
        for (std::size_t s = 0, k = 0; s < n; s += step, ++k) {
          const std::size_t b = std::min(step, n - s);
          synchronize(stream_t{});
          std::array<std::size_t, M::leaves> mine = at;
          if (s + step < n) fetch(s + step, std::min(step, n - s - step), stage[(k + 1) % 2].data());
          const std::byte* here = stage[k % 2].data();
          if constexpr (detail::staged_as_columns<M>) {
            // A stage holds each leaf's b values back to back: write them as columns of a
            // b-record allocation (leaf_offset(cap, 0, l) = mine[l] there).
            reflect::for_each_leaf<T>([&](auto leaf) {
              constexpr std::size_t L = decltype(leaf)::value;
              if (!dsets[L]) return;
              h5::id mem = detail::dataspace(b, false);
              h5::id sel = detail::file_selection(dsets[L].get(), s, b, "leaf '" + std::string(reflect::leaf_name<T, L>()) + "'");
              h5::check(H5Dwrite(dsets[L].get(), types[L].get(), mem.get(), sel.get(), H5P_DEFAULT, here + mine[L]),
                        "cannot write leaf '" + std::string(reflect::leaf_name<T, L>()) + "' to '" + f.path() + "'");
            });
          } else {
            const std::size_t lo = detail::covering_bytes<M>(cap, s, s + b).first;
            write_block(here, lo, cap, s, b);  // the stage holds the allocation from its byte lo
          }
        }
      }
    }

    finish(g.get(), dsets);
    for (auto& d : dsets) d.reset();
    g.reset();
    // An old group steps aside first and is deleted only once the new one has its name.
    if (existed) {
      if (h5::exists(f.id(), old)) h5::check(H5Ldelete(f.id(), old.c_str(), H5P_DEFAULT), "cannot remove an earlier replaced group");
      h5::check(H5Lmove(f.id(), path.c_str(), f.id(), old.c_str(), H5P_DEFAULT, H5P_DEFAULT), "cannot replace '" + path + "'");
      old_moved = true;
    }
    h5::check(H5Lmove(f.id(), partial.c_str(), f.id(), path.c_str(), lcpl.get(), H5P_DEFAULT), "cannot name the written group '" + path + "'");
    if (old_moved) (void)H5Ldelete(f.id(), old.c_str(), H5P_DEFAULT);  // the new group is in place: a failure here loses nothing
    H5Eclear2(H5E_DEFAULT);
  } catch (...) {
    g.reset();
    (void)H5Ldelete(f.id(), partial.c_str(), H5P_DEFAULT);
    if (old_moved) (void)H5Lmove(f.id(), old.c_str(), f.id(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    h5::remove_groups(f.id(), created);
    H5Eclear2(H5E_DEFAULT);
    throw;
  }
}
}  // namespace detail

/// Writes the records of `c` (any layout, any memory space) as group `path` of `f`: one dataset per
/// leaf and the schema attributes (see the top of this header). The group appears only when every
/// leaf has been written: it is built under a temporary name and renamed at the end, so a failed
/// write leaves no partial group at `path` (and, with overwrite, the old group until the rename).
template <class T, class M, memory_space S>
void write(const file& f, const std::string& path, const basic_vector<T, M, S>& c, const write_options& o = {}) {
  std::array<std::string, reflect::leaf_count<T>> names;
  std::string listed;
  reflect::for_each_leaf<T>([&](auto leaf) {
    constexpr std::size_t L = decltype(leaf)::value;
    names[L] = detail::dataset_path(reflect::leaf_name<T, L>());
    listed += std::string(reflect::leaf_name<T, L>()) + "\n";
  });
  detail::write_group(f, path, c, o, names, [&](hid_t g, auto&) {
    h5::write_u64_attribute(g, "strata.records", c.size());
    h5::write_string_attribute(g, "strata.record", strata::detail::type_name<T>());
    h5::write_string_attribute(g, "strata.layout", detail::layout_name<M>());
    h5::write_string_attribute(g, "strata.version", STRATA_VERSION_STRING);
    h5::write_string_attribute(g, "strata.leaves", listed);
    h5::write_string_attribute(g, "strata.schema", detail::schema_json<T>());
  });
}

/// Reads group `path` of `f` into `dst` (any layout, any memory space; its record type may differ
/// from the one written, see read_options). `dst` is replaced only when every leaf has been read.
template <class T, class M, memory_space S>
void read(const file& f, const std::string& path, basic_vector<T, M, S>& dst, const read_options& o = {}) {
  using basic = basic_vector<T, M, S>;
  h5::quiet q;
  if (o.staging_records == 0) throw std::invalid_argument("strata::io::read: staging_records is 0");
  h5::id g = detail::open_group(f, path);
  const std::string where = "'" + path + "' of '" + f.path() + "'";
  const std::vector<std::string> file_leaves = detail::split_lines(h5::read_string_attribute(g.get(), "strata.leaves"));
  if (!h5::has_attribute(g.get(), "strata.records")) throw file_error("strata::io::read: " + where + " was not written by strata (no strata.records attribute)");
  const std::uint64_t records = h5::read_u64_attribute(g.get(), "strata.records");
  if (o.first > records) throw std::out_of_range("strata::io::read: first record " + std::to_string(o.first) + " is past the " + std::to_string(records) + " records of " + where);
  const std::uint64_t count = std::min<std::uint64_t>(o.count, records - o.first);
  if (count > basic::max_size()) throw size_error("strata::io::read: " + std::to_string(count) + " records exceed the container's max_size()");
  const std::size_t n = std::size_t(count);

  // Match the record's leaves to the file's, and check every one before anything is read.
  for (const auto& [leaf, stored] : o.renames) {
    bool known = false;
    for (std::string_view n : reflect::leaf_names<T>) known = known || n == leaf;
    if (!known) throw std::invalid_argument("strata::io::read: read_options::renames maps '" + leaf + "', which is no leaf of " + strata::detail::type_name<T>());
  }
  std::array<h5::id, reflect::leaf_count<T>> dsets, types;
  auto listing = [&] {
    std::string s;
    for (const auto& l : file_leaves) s += (s.empty() ? "" : ", ") + l;
    return s.empty() ? std::string("none listed") : s;
  };
  reflect::for_each_leaf<T>([&](auto leaf) {
    constexpr std::size_t L = decltype(leaf)::value;
    using V = reflect::leaf_type_t<T, L>;
    const std::string name(reflect::leaf_name<T, L>());
    const auto renamed = o.renames.find(name);
    const std::string stored = renamed == o.renames.end() ? name : renamed->second;
    const std::string ds = detail::dataset_path(stored);
    const std::string called = stored == name ? "leaf '" + name + "'" : "leaf '" + name + "' (stored as '" + stored + "')";
    if (!h5::exists(g.get(), ds)) {
      if (o.missing == read_options::missing_leaves::zero) return;
      throw schema_error("strata::io::read: " + where + " has no " + called + " of " + strata::detail::type_name<T>() + "; the file's leaves: " + listing() +
                         " (read_options::renames maps a renamed leaf, read_options::missing = zero reads a new one as zero)");
    }
    h5::id d = h5::check(H5Dopen2(g.get(), ds.c_str(), H5P_DEFAULT), H5Dclose, "cannot open " + called + " of " + where);
    const std::uint64_t len = detail::dataset_length(d.get(), called + " of " + where);
    if (len != records)
      throw file_error("strata::io::read: " + called + " of " + where + " holds " + std::to_string(len) + " records, the group says " +
                       std::to_string(records) + " (a truncated or damaged file)");
    h5::id ft = h5::check(H5Dget_type(d.get()), H5Tclose, called);
    const leaf_kind from = detail::kind_of_hdf5(ft.get()), to = detail::kind_of<V>();
    if (!detail::widens(from, to)) {
      if (!detail::convertible(from, to))
        throw schema_error("strata::io::read: " + called + " is " + from.name() + " in " + where + " and " + to.name() + " in " + strata::detail::type_name<T>() +
                           ": no conversion between them");
      if (!o.narrowing)
        throw schema_error("strata::io::read: " + called + " is " + from.name() + " in " + where + " and " + to.name() + " in " + strata::detail::type_name<T>() +
                           ": reading it may lose values (read_options::narrowing allows it)");
    }
    types[L] = detail::hdf5_type_of<V>();
    dsets[L] = std::move(d);
  });

  // The new container is value-initialised: leaves the file lacks and padding read as zero.
  basic out;
  out.resize(n);
  if (n > 0) {
    const std::size_t cap = out.capacity();
    std::vector<std::byte> column;
    // Records [s, s + b) of the file's range into host-writable memory at `base` (laid out as the
    // allocation, record s's bytes where they belong for an allocation of capacity cap).
    auto read_leaf = [&](auto leaf, std::size_t s, std::size_t b, std::byte* values) {
      constexpr std::size_t L = decltype(leaf)::value;
      h5::id mem = detail::dataspace(b, false);
      h5::id sel = detail::file_selection(dsets[L].get(), o.first + s, b, "leaf");
      h5::check(H5Dread(dsets[L].get(), types[L].get(), mem.get(), sel.get(), H5P_DEFAULT, values),
                "cannot read leaf '" + std::string(reflect::leaf_name<T, L>()) + "' of " + where + " (a truncated or damaged file?)");
      if constexpr (std::is_same_v<reflect::leaf_type_t<T, L>, bool>) {  // a bool may hold 0 or 1 only
        for (std::size_t i = 0; i < b; ++i)
          if (static_cast<unsigned char>(values[i]) > 1)
            throw file_error("strata::io::read: leaf '" + std::string(reflect::leaf_name<T, L>()) + "' of " + where + " holds byte " +
                             std::to_string(static_cast<unsigned char>(values[i])) + " at record " + std::to_string(o.first + s + i) + ", which is no bool");
      }
    };
    auto read_block = [&](std::byte* at, std::size_t origin, std::size_t s, std::size_t b) {
      reflect::for_each_leaf<T>([&](auto leaf) {
        constexpr std::size_t L = decltype(leaf)::value;
        [[maybe_unused]] constexpr std::size_t bytes = sizeof(reflect::leaf_type_t<T, L>);
        if (!dsets[L]) return;
        if constexpr (detail::whole_columns<M>) {
          read_leaf(leaf, s, b, at + (M::leaf_offset(cap, s, L) - origin));
        } else {
          column.resize(b * bytes);
          read_leaf(leaf, s, b, column.data());
          detail::scatter_leaf<M>(at, origin, cap, s, b, L, bytes, column.data());
        }
      });
    };
    // Records per read call: whole chunks of the file's first leaf (a chunk read in parts would be
    // checked and decompressed once per part).
    std::size_t chunk = 1;
    for (const auto& d : dsets)
      if (d) {
        chunk = detail::chunk_records(d.get());
        break;
      }
    const std::size_t block = detail::whole_chunks(o.staging_records, chunk);
    std::byte* base = detail::storage_base(out);
    if constexpr (S != memory_space::device) {
      for (std::size_t s = 0; s < n; s += block) read_block(base, 0, s, std::min(block, n - s));
    } else {
      const detail::staging_plan plan = detail::plan_staging<M>(n, cap, block, chunk);
      const std::size_t step = plan.step;
      buffer stage[2] = {buffer(plan.stage_bytes, memory_space::pinned), buffer(plan.stage_bytes, memory_space::pinned)};
      strata::detail::device_guard on(out.device());
      // AoS: each block's columns cross into this SoA block (zero where the file lacks a leaf) and
      // the GPU transposes them into place.
      std::conditional_t<layout::record_mapping<M>, soa_vector<T, memory_space::device>, int> scratch{};
      if constexpr (layout::record_mapping<M>) scratch = soa_vector<T, memory_space::device>(step);
      // HDF5 fills block k's stage while block k - 1 crosses to the GPU.
      for (std::size_t s = 0, k = 0; s < n; s += step, ++k) {
        const std::size_t b = std::min(step, n - s);
        std::byte* here = stage[k % 2].data();
        if constexpr (detail::staged_as_columns<M>) {
          std::size_t off = 0;
          std::array<std::size_t, M::leaves> at{};
          reflect::for_each_leaf<T>([&](auto leaf) {
            constexpr std::size_t L = decltype(leaf)::value;
            at[L] = off;
            if (dsets[L]) read_leaf(leaf, s, b, here + off);
            off += b * reflect::leaf_sizes<T>[L];
          });
          synchronize(stream_t{});
          if constexpr (layout::record_mapping<M>) {
            std::byte* into = detail::storage_base(scratch);
            for (std::size_t l = 0; l < M::leaves; ++l)
              if (dsets[l]) copy_bytes_async(into + soa_mapping<T>::leaf_offset(scratch.capacity(), 0, l), here + at[l], b * reflect::leaf_sizes<T>[l], stream_t{});
            const auto all = out.view();
            convert(std::as_const(scratch).const_view().first(index_t(b)), aos_view<T>(all.data() + s, index_t(b), all.location()), stream_t{});
          } else {
            for (std::size_t l = 0; l < M::leaves; ++l)
              if (dsets[l]) copy_bytes_async(base + M::leaf_offset(cap, s, l), here + at[l], b * reflect::leaf_sizes<T>[l], stream_t{});
          }
        } else {
          auto [lo, hi] = detail::covering_bytes<M>(cap, s, s + b);
          std::memset(here, 0, hi - lo);  // padding and leaves the file lacks: zero, as out holds them
          read_block(here, lo, s, b);
          synchronize(stream_t{});
          copy_bytes_async(base + lo, here, hi - lo, stream_t{});
        }
      }
      synchronize(stream_t{});
    }
  }
  dst.swap(out);
}

/// Group `path` of `f` as a new container C (a basic_vector of any layout, record and memory space).
template <class C>
C read(const file& f, const std::string& path, const read_options& o = {}) {
  C out;
  read(f, path, out, o);
  return out;
}

}  // namespace strata::io
