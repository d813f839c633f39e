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
#include <strata/algorithm/norm_fused.hpp>
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

// ---- fused and per-head normalization -----------------------------------------------------------

/// The dtype code check_norm_arrays returns (0 float32, 1 float16, 2 bfloat16), or -1.
int dtype_code(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  if (t == nb::dtype<float>()) return 0;
  if (t.code == uint8_t(code::Float) && t.bits == 16 && t.lanes == 1) return 1;
  if (t.code == uint8_t(code::Bfloat) && t.bits == 16 && t.lanes == 1) return 2;
  return -1;
}

/// out's dtype: x's, or float16 / bfloat16 for float32 rows (returned as dtype_code gives it).
int check_out_dtype(int x_dtype, nb::dlpack::dtype out, nb::dlpack::dtype x) {
  const int o = dtype_code(out);
  if (o != x_dtype && !(x_dtype == 0 && o > 0))
    type_error("strata: out has dtype " + dtype_name(out) + " and x " + dtype_name(x) + "; out takes x's dtype, or float16 / bfloat16 for float32 x");
  return o;
}

/// Calls f<T, O>() for x's dtype and out's.
template <class F>
std::string dispatch_types(int x_dtype, int out_dtype, F&& f) {
  if (x_dtype == 1) return f.template operator()<strata::half, strata::half>();
  if (x_dtype == 2) return f.template operator()<strata::bfloat16, strata::bfloat16>();
  if (out_dtype == 1) return f.template operator()<float, strata::half>();
  if (out_dtype == 2) return f.template operator()<float, strata::bfloat16>();
  return f.template operator()<float, float>();
}

std::string fused_path(const strata::norm_fused_path& p) {
  std::string s = p.access == strata::path::vectorized ? "vectorized" : "scalar";
  if (p.shape == strata::norm_fused_shape::two_pass) s += ", two passes";
  if (p.shape == strata::norm_fused_shape::matrix_rows) s += ", rows of one pitch";
  return s;
}

/// normalize with a residual added first: sum = x + residual (stored into `sum` unless it is
/// None; `sum` may be the residual itself or x itself), out = norm(sum); out may be x or the
/// residual itself.
std::string normalize_add(bool rms, nb::handle x_obj, nb::handle residual_obj, nb::handle sum_obj, nb::handle out_obj, nb::handle weight_obj,
                          nb::handle bias_obj, double eps, std::uintptr_t stream) {
  if (rms && !bias_obj.is_none()) type_error("strata: rms_norm takes no bias");
  const bool sum_is_residual = sum_obj.is(residual_obj), sum_is_x = sum_obj.is(x_obj), keep = !sum_obj.is_none();
  const bool out_is_x = out_obj.is(x_obj), out_is_residual = out_obj.is(residual_obj);
  if (keep && (sum_obj.is(out_obj))) value_error("strata: sum and out are the same array");
  // Arrays written over are taken as writable (output); the others read only.
  const bool x_written = sum_is_x || out_is_x, r_written = sum_is_residual || out_is_residual;
  auto in_or_out = [&](nb::handle h, bool written, const char* name) -> std::pair<std::optional<input>, std::optional<output>> {
    if (written) {
      output o = array_of<output>(h, name);
      check_memory(o, name);
      return {std::nullopt, std::move(o)};
    }
    input i = array_of<input>(h, name);
    check_memory(i, name);
    return {std::move(i), std::nullopt};
  };
  auto xp = in_or_out(x_obj, x_written, "x");
  auto rp = in_or_out(residual_obj, r_written, "residual");
  const std::optional<input>&xi = xp.first, &ri = rp.first;
  const std::optional<output>&xo = xp.second, &ro = rp.second;
  std::optional<output> so = keep && !sum_is_x && !sum_is_residual ? optional_array<output>(sum_obj, "sum") : std::nullopt;
  std::optional<output> oo;
  if (!out_is_x && !out_is_residual) {
    oo = array_of<output>(out_obj, "out");
    check_memory(*oo, "out");
  }
  const std::optional<input> weight = optional_array<input>(weight_obj, "weight"), bias = optional_array<input>(bias_obj, "bias");
  const norm_array x = xi ? described_array(&*xi, "x") : described_array(&*xo, "x");
  const norm_array r = ri ? described_array(&*ri, "residual") : described_array(&*ro, "residual");
  const norm_array sum = so ? described_array(&*so, "sum") : norm_array{"sum"};
  const norm_array out = oo ? described_array(&*oo, "out") : out_is_x ? x : r;
  const int t = check_norm_arrays(x, {r, sum, described_array(weight ? &*weight : nullptr, "weight"), described_array(bias ? &*bias : nullptr, "bias")},
                                  {r}, eps);
  if (so && (sum.ndim != 2 || sum.rows != x.rows || sum.cols != x.cols))
    value_error("strata: sum has shape " + sum.shape + " and x " + x.shape + "; they must match");
  if (out.ndim != 2 || out.rows != x.rows || out.cols != x.cols) value_error("strata: out has shape " + out.shape + " and x " + x.shape + "; they must match");
  const int o = check_out_dtype(t, out.dtype, x.dtype);
  if (o != t && (out_is_x || out_is_residual)) type_error("strata: out is written over x or the residual, so it takes their dtype");
  return dispatch_types(t, o, [&]<class T, class O>() -> std::string {
    std::vector<extent> operands;
    const auto xv = xi ? rows_of<const T>(*xi, "x", operands, false) : rows_of<T>(*xo, "x", operands, true);
    const auto rv = ri ? rows_of<const T>(*ri, "residual", operands, false) : rows_of<T>(*ro, "residual", operands, true);
    if (x_obj.is(residual_obj)) operands.pop_back();  // one array as both: one extent (the C++ call takes the same rows)
    const strata::matrix_view<T> sv = so ? rows_of<T>(*so, "sum", operands, true)
                                         : sum_is_x ? strata::matrix_view<T>{const_cast<T*>(xv.data), xv.rows, xv.cols, xv.pitch, false, xv.where}
                                         : sum_is_residual ? strata::matrix_view<T>{const_cast<T*>(rv.data), rv.rows, rv.cols, rv.pitch, false, rv.where}
                                                           : strata::matrix_view<T>{};
    strata::matrix_view<O> yv;
    if (oo) yv = rows_of<O>(*oo, "out", operands, true);
    else if constexpr (std::is_same_v<T, O>) {
      const auto& src = out_is_x ? xv : rv;
      yv = {const_cast<T*>(src.data), src.rows, src.cols, src.pitch, false, src.where};
    }
    const auto g = vector_of<T>(weight ? &*weight : nullptr, "weight", xv.cols, operands);
    const auto b = vector_of<T>(bias ? &*bias : nullptr, "bias", xv.cols, operands);
    check_disjoint(operands);
    const auto s = reinterpret_cast<strata::stream_t>(stream);
    nb::gil_scoped_release release;
    const strata::matrix_view<const T> xc = xv, rc = rv;
    return fused_path(rms ? strata::add_rms_norm<T, O>(xc, rc, sv, yv, g, float(eps), s)
                          : strata::add_layer_norm<T, O>(xc, rc, sv, yv, g, b, float(eps), s));
  });
}

/// A 3-D array [tokens, heads, head_dim] whose rows (the last dimension) are contiguous, as a
/// heads_view (any token and head strides whose rows lie apart).
template <class T, class A>
strata::heads_view<T> heads_of(const A& a, const std::string& name, std::vector<extent>& operands, bool written) {
  if (a.ndim() != 3) value_error("strata: " + name + " has shape " + shape_of(a) + "; per-head normalization takes [tokens, heads, head_dim]");
  const auto tokens = strata::index_t(a.shape(0)), heads = strata::index_t(a.shape(1)), dim = strata::index_t(a.shape(2));
  if (tokens == 0 || heads == 0 || dim == 0) return strata::make_heads_view<T>(nullptr, tokens, heads, dim, heads * dim, dim);
  T* p = static_cast<T*>(data_of(a));
  if (!aligned(p, sizeof(T)))
    value_error("strata: " + name + " at " + address(p) + " is not aligned to its " + std::to_string(sizeof(T)) + "-byte elements");
  if (dim > 1 && a.stride(2) != 1)
    value_error("strata: " + name + "'s elements within a row are " + std::to_string(a.stride(2) * std::int64_t(sizeof(T))) +
                " bytes apart; rows (the last dimension) must be contiguous (pass a contiguous copy)");
  const std::int64_t tp = tokens > 1 ? a.stride(0) : heads * dim, hp = heads > 1 ? a.stride(1) : dim;
  if (tp < 0 || hp < 0) value_error("strata: " + name + " has a negative stride; pass a contiguous copy");
  if (!strata::detail::norm_fused::rows_apart(tokens, heads, dim, tp, hp))
    value_error("strata: " + name + " of shape " + shape_of(a) + " has rows that overlap (strides " + std::to_string(tp) + ", " + std::to_string(hp) +
                " elements); pass a contiguous copy");
  const std::size_t span = strata::detail::norm_fused::heads_span(tokens, heads, dim, tp, hp, name.c_str());
  operands.push_back({p, checked_mul(span, sizeof(T), name), name, written});
  return strata::make_heads_view<T>(p, tokens, heads, dim, tp, hp);
}

/// normalize over the last dimension of a 3-D [tokens, heads, head_dim] array of any token and
/// head strides, into out (x's shape; x's dtype or, for float32 x, float16 / bfloat16); one
/// weight and bias of head_dim elements. out may be x itself.
std::string normalize_heads(bool rms, nb::handle x_obj, nb::handle out_obj, nb::handle weight_obj, nb::handle bias_obj, double eps,
                            std::uintptr_t stream) {
  if (rms && !bias_obj.is_none()) type_error("strata: rms_norm takes no bias");
  const bool in_place = out_obj.is(x_obj);
  std::optional<input> xi;
  std::optional<output> xo, oo;
  if (in_place) xo = array_of<output>(x_obj, "x"), check_memory(*xo, "x");
  else xi = array_of<input>(x_obj, "x"), check_memory(*xi, "x"), oo = array_of<output>(out_obj, "out"), check_memory(*oo, "out");
  const std::optional<input> weight = optional_array<input>(weight_obj, "weight"), bias = optional_array<input>(bias_obj, "bias");
  const norm_array x = xi ? described_array(&*xi, "x") : described_array(&*xo, "x");
  const norm_array out = oo ? described_array(&*oo, "out") : x;
  const int t = dtype_code(x.dtype);
  if (t < 0) type_error("strata: x has dtype " + dtype_name(x.dtype) + "; strata normalizes float32, float16 or bfloat16");
  for (const norm_array& o : {described_array(weight ? &*weight : nullptr, "weight"), described_array(bias ? &*bias : nullptr, "bias")})
    if (o.present && o.dtype != x.dtype)
      type_error(std::string("strata: ") + o.name + " has dtype " + dtype_name(o.dtype) + " and x " + dtype_name(x.dtype) + "; they must match");
  if (out.shape != x.shape) value_error("strata: out has shape " + out.shape + " and x " + x.shape + "; they must match");
  if (!std::isfinite(eps) || eps < 0) value_error("strata: eps is " + std::to_string(eps) + "; it must be a finite number >= 0");
  const int o = check_out_dtype(t, out.dtype, x.dtype);
  return dispatch_types(t, o, [&]<class T, class O>() -> std::string {
    std::vector<extent> operands;
    strata::heads_view<const T> xv;
    strata::heads_view<O> yv;
    if (xi) xv = heads_of<const T>(*xi, "x", operands, false), yv = heads_of<O>(*oo, "out", operands, true);
    else if constexpr (std::is_same_v<T, O>) yv = heads_of<T>(*xo, "x", operands, true), xv = yv;
    const auto g = vector_of<T>(weight ? &*weight : nullptr, "weight", xv.dim, operands);
    const auto b = vector_of<T>(bias ? &*bias : nullptr, "bias", xv.dim, operands);
    check_disjoint(operands);
    const auto s = reinterpret_cast<strata::stream_t>(stream);
    nb::gil_scoped_release release;
    return fused_path(rms ? strata::rms_norm<T, O>(xv, yv, g, float(eps), s) : strata::layer_norm<T, O>(xv, yv, g, b, float(eps), s));
  });
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
  m.def("normalize_add", &normalize_add, nb::arg("rms"), nb::arg("x"), nb::arg("residual"), nb::arg("sum").none(), nb::arg("out"),
        nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("eps"), nb::arg("stream") = 0,
        "normalize with a residual added first: sum = x + residual (rounded to x's dtype), written to `sum` unless it is None "
        "(`sum` may be the residual itself: updated in place, or x itself), out = norm(sum). out may be x or the residual itself, "
        "or a separate array of x's dtype or, for float32 x, float16 / bfloat16. Returns the path taken.");
  m.def("normalize_heads", &normalize_heads, nb::arg("rms"), nb::arg("x"), nb::arg("out"), nb::arg("weight").none(), nb::arg("bias").none(),
        nb::arg("eps"), nb::arg("stream") = 0,
        "normalize over head_dim of a 3-D [tokens, heads, head_dim] array of any token and head strides (rows contiguous and "
        "apart), into out (x's shape; x's dtype or, for float32 x, float16 / bfloat16; out may be x itself). One weight and "
        "bias of head_dim elements. Returns the path taken (', rows of one pitch' where heads lie back to back).");
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
