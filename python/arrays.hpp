// SPDX-License-Identifier: Apache-2.0
// The arrays strata's Python module takes, checked before strata touches their memory. Each one
// arrives without a copy (DLPack or the buffer protocol) and its memory space, dimensions, shape,
// strides, dtype and alignment are tested against what the call reads or writes, so that nothing
// is read or written outside it. A failure is a TypeError (not an array, a wrong dtype) or a
// ValueError (shape, strides, alignment, memory) naming the Python argument or record field.
#pragma once

#include <strata/memory/error.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace strata_python {

namespace nb = nanobind;

using input = nb::ndarray<nb::ro>;  // only read: read-only arrays (np.frombuffer, memory maps) too
using output = nb::ndarray<>;       // written

[[noreturn]] inline void value_error(const std::string& message) { throw nb::value_error(message.c_str()); }
[[noreturn]] inline void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int memory_device = nb::device::cuda::value;
inline constexpr const char* memory_name = "CUDA memory; this module was built for strata's CUDA backend";
#else
inline constexpr int memory_device = nb::device::cpu::value;
inline constexpr const char* memory_name = "CPU memory; this module was built for strata's host backend (NumPy arrays, CPU tensors)";
#endif

inline std::string dtype_name(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  const char* base = t.code == uint8_t(code::Float)    ? "float"
                     : t.code == uint8_t(code::Bfloat) ? "bfloat"
                     : t.code == uint8_t(code::Int)    ? "int"
                     : t.code == uint8_t(code::UInt)   ? "uint"
                     : t.code == uint8_t(code::Bool)   ? "bool"
                     : t.code == uint8_t(code::Complex) ? "complex"
                                                       : nullptr;
  if (!base) return "dtype(code=" + std::to_string(int(t.code)) + ", bits=" + std::to_string(int(t.bits)) + ")";
  std::string s = base + std::to_string(int(t.bits));
  return t.lanes > 1 ? s + "x" + std::to_string(int(t.lanes)) : s;
}

/// a * b, or a ValueError naming `what` where the product does not fit in size_t.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const std::string& what) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) value_error("strata: " + what + " is too large: its size in bytes overflows");
  return r;
}

/// The Python object `h` as an array, without a copy; a TypeError naming `name` when it is none
/// (a ValueError when it is one whose strides are not whole elements, which DLPack cannot hold).
template <class Array>
Array array_of(nb::handle h, const std::string& name) {
  Array a;
  if (nb::try_cast(h, a, /*convert=*/false)) return a;
  if constexpr (!std::is_same_v<Array, input>) {
    input ro;
    if (nb::try_cast(h, ro, false)) value_error("strata: " + name + " is read-only; strata writes it");
  }
  if (nb::hasattr(h, "strides") && nb::hasattr(h, "itemsize")) {
    nb::object strides = h.attr("strides");
    std::int64_t size = 0;
    if (nb::isinstance<nb::tuple>(strides) && nb::try_cast(h.attr("itemsize"), size) && size > 0)
      for (nb::handle s : strides) {
        std::int64_t bytes = 0;
        if (nb::try_cast(s, bytes) && bytes % size != 0)
          value_error("strata: " + name + " has strides " + nb::repr(strides).c_str() + " bytes, not whole " + std::to_string(size) +
                      "-byte elements; pass a contiguous copy");
      }
  }
  const std::string type = nb::repr(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr())))).c_str();
  if (nb::hasattr(h, "dtype"))
    type_error("strata: " + name + " has dtype " + nb::str(nb::handle(h.attr("dtype"))).c_str() + " (a " + type +
               "), which strata cannot take; it takes arrays of numbers (NumPy, DLPack or the buffer protocol)");
  type_error("strata: " + name + " is a " + type + "; strata takes arrays of numbers (NumPy, DLPack or the buffer protocol)");
}

template <class A>
void check_memory(const A& a, const std::string& name) {
  if (a.device_type() != memory_device) value_error("strata: " + name + " is not in " + memory_name);
}

template <class A>
std::string shape_of(const A& a) {
  std::string s = "(";
  for (std::size_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

template <class A>
bool is_empty(const A& a) {
  for (std::size_t d = 0; d < a.ndim(); ++d)
    if (a.shape(d) == 0) return true;
  return false;
}

/// The bytes of an array that lies in one dense, C-ordered block (any dtype and dimensions); a
/// ValueError naming `name` for a negative, zero (broadcast) or gapped stride. Strides are stated
/// in bytes, as NumPy states them.
template <class A>
std::size_t dense_bytes(const A& a, const std::string& name) {
  std::size_t items = 1;
  for (std::size_t d = 0; d < a.ndim(); ++d) items = checked_mul(items, std::size_t(a.shape(d)), name);
  const std::size_t bytes = checked_mul(items, a.itemsize(), name);
  if (items == 0) return 0;
  const auto size = std::int64_t(a.itemsize());
  std::int64_t expected = 1;
  for (std::size_t d = a.ndim(); d-- > 0;) {
    const std::int64_t stride = a.stride(d);
    if (a.shape(d) != 1 && stride != expected) {
      const char* why = stride < 0 ? " (a negative stride)" : stride == 0 ? " (broadcast: stride 0)" : "";
      value_error("strata: " + name + " is not contiguous: along dimension " + std::to_string(d) + " (shape " + shape_of(a) +
                  ") its elements are " + std::to_string(stride * size) + " bytes apart where " + std::to_string(expected * size) +
                  " are needed" + why + "; pass a contiguous copy (np.ascontiguousarray, .contiguous())");
    }
    expected *= a.shape(d);
  }
  return bytes;
}

/// Whether data lies on a multiple of `bytes`.
inline bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

inline std::string address(const void* p) {
  char s[32];
  std::snprintf(s, sizeof s, "%p", p);
  return s;
}

template <class A>
void* data_of(const A& a) {
  return const_cast<void*>(static_cast<const void*>(a.data()));
}

/// One byte range an operation reads or writes, for the overlap test.
struct extent {
  const void* begin;
  std::size_t bytes;
  std::string name;
  bool written;
};

/// A ValueError when an output's bytes overlap another operand's: strata's kernels read and write
/// them in any order.
inline void check_disjoint(const std::vector<extent>& operands) {
  for (std::size_t i = 0; i < operands.size(); ++i)
    for (std::size_t j = i + 1; j < operands.size(); ++j) {
      const extent &a = operands[i], &b = operands[j];
      if (!(a.written || b.written) || !a.begin || !b.begin || !a.bytes || !b.bytes) continue;
      const auto *p = static_cast<const char*>(a.begin), *q = static_cast<const char*>(b.begin);
      if (p < q + b.bytes && q < p + a.bytes)
        value_error("strata: " + (a.written ? a.name : b.name) + " overlaps " + (a.written ? b.name : a.name) +
                    " in memory; strata writes the one while it reads the other");
    }
}

}  // namespace strata_python
