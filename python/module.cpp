// SPDX-License-Identifier: Apache-2.0
// strata's Python module (_strata, wrapped by python/strata/__init__.py): layer and RMS
// normalization over 2-D arrays, and AoS <-> SoA conversion for records described at run time.
// Arrays arrive through nanobind's ndarray (DLPack or the buffer protocol: NumPy on the host
// backend; PyTorch, CuPy or any DLPack producer on the CUDA backend) and their memory is used in
// place, after arrays.hpp's checks. The Python side allocates every output, so results come back
// in the caller's framework.
#include "arrays.hpp"
#if __has_include(<arrow/c/abi.h>)
#include "arrow.hpp"
#define STRATA_PYTHON_ARROW 1
#endif

#include <strata/algorithm/norm_backward.hpp>
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>
#include <strata/convert/runtime.hpp>
#include <strata/memory/resource.hpp>
#if __has_include(<strata/version.hpp>)
#include <strata/version.hpp>
#endif

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace strata_python;

namespace {

// ---- normalization ------------------------------------------------------------------------------

/// A 2-D array whose rows are contiguous (any row stride at least a row) as a matrix_view of rows
/// someone else owns, and the bytes it spans.
template <class T, class A>
strata::matrix_view<T> rows_of(const A& a, const std::string& name, std::vector<extent>& operands, bool written) {
  const auto rows = strata::index_t(a.shape(0)), cols = strata::index_t(a.shape(1));
  if (rows == 0 || cols == 0) return strata::make_matrix_view<T>(nullptr, rows, cols, cols);
  T* p = static_cast<T*>(data_of(a));
  if (!aligned(p, sizeof(T)))
    value_error("strata: " + name + " at " + address(p) + " is not aligned to its " + std::to_string(sizeof(T)) + "-byte elements");
  const std::int64_t size = sizeof(T);
  if (cols > 1 && a.stride(1) != 1)
    value_error("strata: " + name + "'s elements within a row are " + std::to_string(a.stride(1) * size) + " bytes apart where " +
                std::to_string(size) + " are needed; rows must be contiguous (pass a contiguous copy)");
  const strata::index_t pitch = rows > 1 ? strata::index_t(a.stride(0)) : cols;
  if (pitch < cols)
    value_error("strata: " + name + "'s rows are " + std::to_string(pitch * size) + " bytes apart, less than a row of " +
                std::to_string(cols * size) + (pitch < 0 ? " (a negative stride)" : pitch == 0 ? " (broadcast: stride 0)" : " (rows overlap)") +
                "; pass a contiguous copy");
  const std::size_t span = checked_mul(std::size_t(rows - 1), std::size_t(pitch), name) + std::size_t(cols);
  operands.push_back({p, checked_mul(span, sizeof(T), name), name, written});
  return strata::make_matrix_view<T>(p, rows, cols, pitch);
}

/// weight or bias: none, or a contiguous 1-D array of one element per column.
template <class T>
cuda::std::span<const T> vector_of(const input* a, const char* name, strata::index_t cols,
                                   std::vector<extent>& operands) {
  if (!a) return {};
  if (a->ndim() != 1 || strata::index_t(a->shape(0)) != cols)
    value_error(std::string("strata: ") + name + " has shape " + shape_of(*a) + "; x's rows have " + std::to_string(cols) +
                " elements, so " + name + " must have shape (" + std::to_string(cols) + ",)");
  if (cols == 0) return {};
  const std::size_t bytes = dense_bytes(*a, name);
  const T* p = static_cast<const T*>(data_of(*a));
  if (!aligned(p, sizeof(T)))
    value_error(std::string("strata: ") + name + " at " + address(p) + " is not aligned to its " + std::to_string(sizeof(T)) + "-byte elements");
  operands.push_back({p, bytes, name, false});
  return {p, std::size_t(cols)};
}

struct norm_args {
  input x;
  output out;
  std::optional<input> weight, bias;
};

template <class T>
std::string normalize_as(bool rms, const norm_args& a, float eps, std::uintptr_t stream) {
  std::vector<extent> operands;
  const auto xv = rows_of<const T>(a.x, "x", operands, false);
  const auto yv = rows_of<T>(a.out, "out", operands, true);
  const auto g = vector_of<T>(a.weight ? &*a.weight : nullptr, "weight", xv.cols, operands);
  const auto b = vector_of<T>(a.bias ? &*a.bias : nullptr, "bias", xv.cols, operands);
  check_disjoint(operands);
  const auto s = reinterpret_cast<strata::stream_t>(stream);
  nb::gil_scoped_release release;
  const strata::path p = rms ? strata::rms_norm<T>(xv, yv, g, eps, s) : strata::layer_norm<T>(xv, yv, g, b, eps, s);
  return p == strata::path::vectorized ? "vectorized" : "scalar";
}

/// An array as the normalization checks see it: its dtype and shape, or absent.
struct norm_array {
  const char* name;
  bool present = false;
  nb::dlpack::dtype dtype{};
  std::size_t ndim = 0;
  std::int64_t rows = 0, cols = 0;
  std::string shape;
};
template <class A>
norm_array described_array(const A* a, const char* name) {
  if (!a) return {name};
  return {name, true, a->dtype(), a->ndim(), a->ndim() > 0 ? std::int64_t(a->shape(0)) : 0, a->ndim() > 1 ? std::int64_t(a->shape(1)) : 0,
          shape_of(*a)};
}

/// The checks every normalization entry point makes of its arrays: x's dtype is one strata
/// normalizes (returned: 0 float32, 1 float16, 2 bfloat16), every other array present has x's
/// dtype, x is 2-D, every array in `shaped` has x's shape, eps is finite and >= 0.
int check_norm_arrays(const norm_array& x, std::initializer_list<norm_array> others, std::initializer_list<norm_array> shaped, double eps) {
  const auto t = x.dtype;
  using code = nb::dlpack::dtype_code;
  const bool f32 = t == nb::dtype<float>(), f16 = t.code == uint8_t(code::Float) && t.bits == 16 && t.lanes == 1,
             bf16 = t.code == uint8_t(code::Bfloat) && t.bits == 16 && t.lanes == 1;
  if (!f32 && !f16 && !bf16) type_error("strata: x has dtype " + dtype_name(t) + "; strata normalizes float32, float16 or bfloat16");
  for (const norm_array& o : others)
    if (o.present && o.dtype != t)
      type_error(std::string("strata: ") + o.name + " has dtype " + dtype_name(o.dtype) + " and x " + dtype_name(t) + "; they must match");
  if (x.ndim != 2) value_error("strata: x has shape " + x.shape + " (" + std::to_string(x.ndim) + " dimensions); normalization takes 2-D rows");
  for (const norm_array& o : shaped)
    if (o.ndim != 2 || o.rows != x.rows || o.cols != x.cols)
      value_error(std::string("strata: ") + o.name + " has shape " + o.shape + " and x " + x.shape + "; they must match");
  if (!std::isfinite(eps) || eps < 0) value_error("strata: eps is " + std::to_string(eps) + "; it must be a finite number >= 0");
  return f32 ? 0 : f16 ? 1 : 2;
}

/// An optional array argument (None: absent), converted and checked for its memory as a required one is.
template <class A>
std::optional<A> optional_array(nb::handle obj, const char* name) {
  if (obj.is_none()) return std::nullopt;
  A a = array_of<A>(obj, name);
  check_memory(a, name);
  return a;
}

std::string normalize(bool rms, nb::handle x_obj, nb::handle out_obj, nb::handle weight_obj, nb::handle bias_obj, double eps,
                      std::uintptr_t stream) {
  if (rms && !bias_obj.is_none()) type_error("strata: rms_norm takes no bias");
  norm_args a{array_of<input>(x_obj, "x"), array_of<output>(out_obj, "out"), optional_array<input>(weight_obj, "weight"),
              optional_array<input>(bias_obj, "bias")};
  check_memory(a.x, "x");
  check_memory(a.out, "out");
  const norm_array out = described_array(&a.out, "out");
  const int dtype = check_norm_arrays(described_array(&a.x, "x"),
                                      {out, described_array(a.weight ? &*a.weight : nullptr, "weight"), described_array(a.bias ? &*a.bias : nullptr, "bias")},
                                      {out}, eps);
  if (dtype == 0) return normalize_as<float>(rms, a, float(eps), stream);
  if (dtype == 1) return normalize_as<strata::half>(rms, a, float(eps), stream);
  return normalize_as<strata::bfloat16>(rms, a, float(eps), stream);
}

/// dweight or dbias: none, or a writable contiguous 1-D array of one element per column.
template <class T>
cuda::std::span<T> grad_vector_of(const output* a, const char* name, strata::index_t cols, std::vector<extent>& operands) {
  if (!a) return {};
  if (a->ndim() != 1 || strata::index_t(a->shape(0)) != cols)
    value_error(std::string("strata: ") + name + " has shape " + shape_of(*a) + "; x's rows have " + std::to_string(cols) +
                " elements, so " + name + " must have shape (" + std::to_string(cols) + ",)");
  if (cols == 0) return {};
  const std::size_t bytes = dense_bytes(*a, name);
  T* p = static_cast<T*>(data_of(*a));
  if (!aligned(p, sizeof(T)))
    value_error(std::string("strata: ") + name + " at " + address(p) + " is not aligned to its " + std::to_string(sizeof(T)) + "-byte elements");
  operands.push_back({p, bytes, name, true});
  return {p, std::size_t(cols)};
}

struct norm_backward_args {
  input x, dy;
  output dx;
  std::optional<input> weight;
  std::optional<output> dweight, dbias;
};

template <class T>
std::string normalize_backward_as(bool rms, const norm_backward_args& a, float eps, std::uintptr_t stream) {
  std::vector<extent> operands;
  const auto xv = rows_of<const T>(a.x, "x", operands, false);
  const auto dyv = rows_of<const T>(a.dy, "dy", operands, false);
  const auto dxv = rows_of<T>(a.dx, "dx", operands, true);
  const auto g = vector_of<T>(a.weight ? &*a.weight : nullptr, "weight", xv.cols, operands);
  const auto dg = grad_vector_of<T>(a.dweight ? &*a.dweight : nullptr, "dweight", xv.cols, operands);
  const auto db = grad_vector_of<T>(a.dbias ? &*a.dbias : nullptr, "dbias", xv.cols, operands);
  check_disjoint(operands);
  const auto s = reinterpret_cast<strata::stream_t>(stream);
  nb::gil_scoped_release release;
  const strata::norm_backward_path p =
      rms ? strata::rms_norm_backward<T>(xv, dyv, g, dxv, dg, eps, s) : strata::layer_norm_backward<T>(xv, dyv, g, dxv, dg, db, eps, s);
  return std::string(p.access == strata::path::vectorized ? "vectorized" : "scalar") +
         (p.shape == strata::norm_backward_shape::two_pass ? ", two passes" : "");
}

std::string normalize_backward(bool rms, nb::handle x_obj, nb::handle dy_obj, nb::handle weight_obj, nb::handle dx_obj, nb::handle dweight_obj,
                               nb::handle dbias_obj, double eps, std::uintptr_t stream) {
  if (rms && !dbias_obj.is_none()) type_error("strata: rms_norm has no bias to take a gradient of");
  norm_backward_args a{array_of<input>(x_obj, "x"), array_of<input>(dy_obj, "dy"), array_of<output>(dx_obj, "dx"),
                       optional_array<input>(weight_obj, "weight"), optional_array<output>(dweight_obj, "dweight"),
                       optional_array<output>(dbias_obj, "dbias")};
  check_memory(a.x, "x");
  check_memory(a.dy, "dy");
  check_memory(a.dx, "dx");
  const norm_array dy = described_array(&a.dy, "dy"), dx = described_array(&a.dx, "dx");
  const int dtype = check_norm_arrays(described_array(&a.x, "x"),
                                      {dy, dx, described_array(a.weight ? &*a.weight : nullptr, "weight"),
                                       described_array(a.dweight ? &*a.dweight : nullptr, "dweight"), described_array(a.dbias ? &*a.dbias : nullptr, "dbias")},
                                      {dy, dx}, eps);
  if (dtype == 0) return normalize_backward_as<float>(rms, a, float(eps), stream);
  if (dtype == 1) return normalize_backward_as<strata::half>(rms, a, float(eps), stream);
  return normalize_backward_as<strata::bfloat16>(rms, a, float(eps), stream);
}

// ---- conversion ---------------------------------------------------------------------------------

using field_list = std::vector<std::tuple<std::string, std::size_t, std::size_t>>;  // (name, offset, size) per leaf

struct record_fields {
  std::vector<strata::runtime_field> fields;
  std::vector<std::string> names;
};

/// The leaves of a record of `stride` bytes, each inside it and of a size strata moves.
record_fields fields_of(const field_list& list, std::size_t stride) {
  if (stride == 0 || stride > strata::max_runtime_stride)
    value_error("strata: records of " + std::to_string(stride) + " bytes (the dtype's itemsize); strata converts records of 1 to " +
                std::to_string(strata::max_runtime_stride) + " bytes");
  if (list.empty() || list.size() > strata::max_runtime_fields)
    value_error("strata: the dtype has " + std::to_string(list.size()) + " leaf fields; strata converts records of 1 to " +
                std::to_string(strata::max_runtime_fields));
  record_fields r;
  for (const auto& [name, offset, size] : list) {
    if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16)
      type_error("strata: field '" + name + "' is " + std::to_string(size) + " bytes; fields of 1, 2, 4, 8 or 16 bytes are supported");
    if (offset > stride || size > stride - offset)
      value_error("strata: field '" + name + "' (offset " + std::to_string(offset) + ", " + std::to_string(size) + " bytes) ends past the " +
                  std::to_string(stride) + "-byte record");
    r.fields.push_back({offset, size});
    r.names.push_back(name);
  }
  return r;
}

/// n records of `stride` bytes: a dense array of exactly n * stride bytes (any dtype: a uint8 view
/// of a structured NumPy array, a uint8 tensor).
template <class A>
void* records_of(const A& a, std::size_t n, std::size_t stride, const std::string& name, std::vector<extent>& operands, bool written) {
  check_memory(a, name);
  const std::size_t bytes = dense_bytes(a, name), need = checked_mul(n, stride, name);
  if (n > std::size_t(INT64_MAX)) value_error("strata: " + std::to_string(n) + " records are more than strata indexes");
  if (bytes != need)
    value_error("strata: " + name + " holds " + std::to_string(bytes) + " bytes; " + std::to_string(n) + " records of " + std::to_string(stride) +
                " bytes need " + std::to_string(need));
  if (n == 0) return nullptr;
  operands.push_back({data_of(a), bytes, name, written});
  return data_of(a);
}

/// One column per field, each a dense array of n elements of its field's size, aligned to it.
template <class A>
std::vector<void*> columns_of(const std::vector<A>& cols, const record_fields& f, std::size_t n, std::vector<extent>& operands, bool written) {
  if (cols.size() != f.fields.size())
    value_error("strata: " + std::to_string(cols.size()) + " columns for " + std::to_string(f.fields.size()) + " fields");
  std::vector<void*> p;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const std::string name = "column '" + f.names[k] + "'";
    const std::size_t size = f.fields[k].size;
    check_memory(cols[k], name);
    const std::size_t bytes = dense_bytes(cols[k], name), need = checked_mul(n, size, name);
    if (bytes != need)
      value_error("strata: " + name + " holds " + std::to_string(bytes) + " bytes; " + std::to_string(n) + " elements of " + std::to_string(size) +
                  " bytes need " + std::to_string(need));
    void* d = n ? data_of(cols[k]) : nullptr;
    if (d && !aligned(d, size))
      value_error("strata: " + name + " at " + address(d) + " is not aligned to its " + std::to_string(size) + "-byte elements");
    if (d) operands.push_back({d, bytes, name, written});
    p.push_back(d);
  }
  return p;
}

template <class Array>
std::vector<Array> arrays_of(const nb::sequence& objects, const record_fields& f) {
  if (nb::len(objects) != f.fields.size())
    value_error("strata: " + std::to_string(nb::len(objects)) + " columns for " + std::to_string(f.fields.size()) + " fields");
  std::vector<Array> out;
  for (nb::handle h : objects) out.push_back(array_of<Array>(h, "column '" + f.names[out.size()] + "'"));
  return out;
}

void aos_to_soa(nb::handle records, std::size_t n, std::size_t stride, const field_list& list, const nb::sequence& columns,
                std::uintptr_t stream) {
  const record_fields f = fields_of(list, stride);
  const auto src_array = array_of<input>(records, "records");
  const auto col_arrays = arrays_of<output>(columns, f);
  std::vector<extent> operands;
  const void* src = records_of(src_array, n, stride, "records", operands, false);
  auto cols = columns_of(col_arrays, f, n, operands, true);
  check_disjoint(operands);
  nb::gil_scoped_release release;
  strata::aos_to_soa(src, stride, strata::index_t(n), f.fields, cols.data(), reinterpret_cast<strata::stream_t>(stream));
}

void soa_to_aos(const nb::sequence& columns, const field_list& list, std::size_t n, nb::handle out, std::size_t stride, std::uintptr_t stream) {
  const record_fields f = fields_of(list, stride);
  const auto col_arrays = arrays_of<input>(columns, f);
  const auto dst_array = array_of<output>(out, "out");
  std::vector<extent> operands;
  void* dst = records_of(dst_array, n, stride, "out", operands, true);
  auto cols = columns_of(col_arrays, f, n, operands, false);
  check_disjoint(operands);
  std::vector<const void*> c(cols.begin(), cols.end());
  nb::gil_scoped_release release;
  strata::soa_to_aos(c.data(), f.fields, strata::index_t(n), dst, stride, reinterpret_cast<strata::stream_t>(stream));
}

// ---- fault injection (strata._testing) ----------------------------------------------------------

std::atomic<long> fail_at{-1};   // the allocation to fail, counted from `armed_at`; -1: none
std::atomic<long> armed_at{0};

bool fail_hook(long ordinal, std::size_t, strata::memory_space) { return ordinal - armed_at.load() == fail_at.load(); }

void fail_allocation(long k) {
  armed_at = strata::testing::allocation_ordinal.load();
  fail_at = k < 0 ? -1 : k;
  strata::testing::fail_allocation_if = k < 0 ? nullptr : &fail_hook;
}

const char* version() {
#if defined(STRATA_VERSION_MAJOR) && defined(STRATA_VERSION_MINOR) && defined(STRATA_VERSION_PATCH)
#define STRATA_PY_STR2(x) #x
#define STRATA_PY_STR(x) STRATA_PY_STR2(x)
  return STRATA_PY_STR(STRATA_VERSION_MAJOR) "." STRATA_PY_STR(STRATA_VERSION_MINOR) "." STRATA_PY_STR(STRATA_VERSION_PATCH);
#else
  return "0+unknown";
#endif
}

}  // namespace

NB_MODULE(_strata, m) {
  m.doc() = "strata's C++ entry points, behind the strata package (use strata.layer_norm, strata.to_soa, ...).";
#if defined(STRATA_BACKEND_CUDA)
  m.attr("backend") = "cuda";
#else
  m.attr("backend") = "host";
#endif
  m.attr("__version__") = version();
  // strata's own exceptions as Python's: out of memory is MemoryError, a wrong element type TypeError
  // (its other std::invalid_argument errors are ValueError, nanobind's default).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const strata::out_of_memory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const strata::type_error& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });

  m.def("normalize", &normalize, nb::arg("rms"), nb::arg("x"), nb::arg("out"), nb::arg("weight").none(), nb::arg("bias").none(),
        nb::arg("eps"), nb::arg("stream") = 0,
        "Layer (rms=False) or RMS (rms=True) normalization of each row of the 2-D array x into out (same shape and dtype: "
        "float32, float16 or bfloat16). weight and bias are None or 1-D arrays of one element per column. Rows must be "
        "contiguous (any row stride of at least a row); out must not overlap the inputs. Returns the path taken: "
        "'vectorized' or 'scalar'. stream: a CUDA stream handle (0: the default stream), ignored on the host backend.");
  m.def("normalize_backward", &normalize_backward, nb::arg("rms"), nb::arg("x"), nb::arg("dy"), nb::arg("weight").none(), nb::arg("dx"),
        nb::arg("dweight").none(), nb::arg("dbias").none(), nb::arg("eps"), nb::arg("stream") = 0,
        "The backward of normalize: from x, the output's gradient dy and weight (or None), writes dx and, where given, dweight and "
        "dbias (1-D, one element per column; deterministic). Arrays as normalize takes them; outputs must not overlap the inputs "
        "or each other. Returns the path taken ('vectorized' or 'scalar', ', two passes' for rows too long to hold).");
  m.def("aos_to_soa", &aos_to_soa, nb::arg("records"), nb::arg("n"), nb::arg("stride"), nb::arg("fields"), nb::arg("columns"),
        nb::arg("stream") = 0,
        "Scatters n records of `stride` bytes (records: a dense array of exactly n * stride bytes) into one column per field. "
        "fields: (name, offset, size) per leaf, sizes 1, 2, 4, 8 or 16 bytes; columns: one dense, writable array of n * size "
        "bytes per field, aligned to its size. Names in errors are the fields' names.");
  m.def("soa_to_aos", &soa_to_aos, nb::arg("columns"), nb::arg("fields"), nb::arg("n"), nb::arg("out"), nb::arg("stride"),
        nb::arg("stream") = 0,
        "Gathers one column per field (as aos_to_soa takes them) into n records of `stride` bytes in out (a dense, writable "
        "array of exactly n * stride bytes); bytes of a record that no field covers are written as zero.");
  m.def("dense_bytes", [](nb::handle a, const std::string& name) { return dense_bytes(array_of<input>(a, name), name); },
        nb::arg("array"), nb::arg("name"),
        "The bytes of an array (in any memory) that lies in one dense C-ordered block; ValueError naming `name` otherwise.");
#if defined(STRATA_PYTHON_ARROW)
  def_arrow(m);
  m.attr("has_arrow") = true;
#else
  m.attr("has_arrow") = false;  // built without Arrow's C Data Interface header (pyarrow was missing at build time)
#endif
  m.def("synchronize", [](std::uintptr_t stream) { strata::synchronize(reinterpret_cast<strata::stream_t>(stream)); },
        nb::arg("stream") = 0, "Waits for the work strata queued on `stream` (a CUDA stream handle; 0: the default stream).");

  nb::module_ t = m.def_submodule("_testing", "Testing only, not part of strata's API: fault injection into strata's allocations.");
  t.def("fail_allocation", &fail_allocation, nb::arg("k"),
        "Makes the k-th allocation strata makes from now on (0: the next) fail with out of memory (MemoryError); k < 0 turns "
        "the injection off. Either way, allocations() counts from this call.");
  t.def("allocations", [] { return strata::testing::allocation_ordinal.load() - armed_at.load(); },
        "How many allocations strata made since the last fail_allocation() call.");
  t.def("live_allocations", [] { return strata::testing::live_allocations.load(); },
        "Allocations strata made and has not freed (a leak check).");
  t.def("set_affine_copy_bytes", [](std::size_t bytes) { strata::detail::norm::affine_copy_bytes = bytes; }, nb::arg("bytes"),
        "The input size from which normalization copies weight and bias per row offset into scratch (default 32 MiB); "
        "tests lower it to make small inputs allocate.");
}
