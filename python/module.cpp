// strata's Python module (_strata, wrapped by python/strata/__init__.py): layer and RMS
// normalization over 2-D arrays, and AoS <-> SoA conversion for records described at run time.
// Arrays arrive through nanobind's ndarray (DLPack or the buffer protocol: NumPy on the host
// backend; PyTorch, CuPy or any DLPack producer on the CUDA backend) and their memory is used in
// place. The Python side allocates every output, so results come back in the caller's framework.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>
#include <strata/convert/runtime.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

using array = nb::ndarray<>;          // written: outputs
using input = nb::ndarray<nb::ro>;    // only read: read-only arrays (np.frombuffer, memory maps) too

/// An array's data pointer, writable or not (strata's entry points take const where they read).
template <class A>
void* data_of(const A& a) {
  return const_cast<void*>(static_cast<const void*>(a.data()));
}

#if defined(STRATA_BACKEND_CUDA)
constexpr int memory_device = nb::device::cuda::value;
constexpr const char* memory_name = "CUDA";
#else
constexpr int memory_device = nb::device::cpu::value;
constexpr const char* memory_name = "CPU";
#endif

std::string dtype_name(nb::dlpack::dtype t) {
  const char* base = t.code == uint8_t(nb::dlpack::dtype_code::Float)    ? "float"
                     : t.code == uint8_t(nb::dlpack::dtype_code::Bfloat) ? "bfloat"
                     : t.code == uint8_t(nb::dlpack::dtype_code::Int)    ? "int"
                     : t.code == uint8_t(nb::dlpack::dtype_code::UInt)   ? "uint"
                                                                         : "other";
  return base + std::to_string(int(t.bits));
}

template <class A>
void check_memory(const A& a, const char* what) {
  if (a.device_type() != memory_device)
    throw strata::memory_space_error(std::string("strata: ") + what + " is not in " + memory_name +
                                     " memory; this module was built for strata's " +
#if defined(STRATA_BACKEND_CUDA)
                                     "CUDA backend");
#else
                                     "host backend (NumPy arrays, CPU tensors)");
#endif
}

/// A 2-D array with unit column stride as a matrix_view of rows someone else owns.
template <class T, class A>
strata::matrix_view<T> rows_of(const A& a, const char* what) {
  check_memory(a, what);
  if (a.ndim() != 2) throw strata::size_error(std::string("strata: ") + what + " has " + std::to_string(a.ndim()) + " dimensions; rows need 2");
  const auto rows = strata::index_t(a.shape(0)), cols = strata::index_t(a.shape(1));
  if (cols > 1 && a.stride(1) != 1)
    throw strata::size_error(std::string("strata: ") + what + " has column stride " + std::to_string(a.stride(1)) +
                             "; rows must be contiguous");
  const strata::index_t pitch = rows > 1 ? strata::index_t(a.stride(0)) : cols;
  return strata::make_matrix_view<T>(static_cast<T*>(data_of(a)), rows, cols, pitch);
}

template <class T>
cuda::std::span<const T> vector_of(const std::optional<input>& a, const char* what) {
  if (!a) return {};
  check_memory(*a, what);
  if (a->ndim() != 1 || (a->shape(0) > 1 && a->stride(0) != 1))
    throw strata::size_error(std::string("strata: ") + what + " must be a contiguous 1-D array");
  return {static_cast<const T*>(data_of(*a)), std::size_t(a->shape(0))};
}

template <class T>
std::string normalize_as(bool rms, const input& x, const array& y, const std::optional<input>& gamma,
                         const std::optional<input>& beta, float eps, std::uintptr_t stream) {
  const auto xv = rows_of<const T>(x, "x");
  const auto yv = rows_of<T>(y, "out");
  const auto g = vector_of<T>(gamma, "weight");
  const auto s = reinterpret_cast<strata::stream_t>(stream);
  const strata::path p = rms ? strata::rms_norm<T>(xv, yv, g, eps, s) : strata::layer_norm<T>(xv, yv, g, vector_of<T>(beta, "bias"), eps, s);
  return p == strata::path::vectorized ? "vectorized" : "scalar";
}

std::string normalize(bool rms, const input& x, const array& y, const std::optional<input>& gamma,
                      const std::optional<input>& beta, float eps, std::uintptr_t stream) {
  const auto t = x.dtype();
  std::vector<nb::dlpack::dtype> others{y.dtype()};
  if (gamma) others.push_back(gamma->dtype());
  if (beta) others.push_back(beta->dtype());
  for (const auto& o : others)
    if (o != t)
      throw strata::type_error("strata: normalization operands differ in dtype: x is " + dtype_name(t) + ", another is " + dtype_name(o));
  if (t == nb::dtype<float>()) return normalize_as<float>(rms, x, y, gamma, beta, eps, stream);
  if (t.code == uint8_t(nb::dlpack::dtype_code::Float) && t.bits == 16) return normalize_as<strata::half>(rms, x, y, gamma, beta, eps, stream);
  if (t.code == uint8_t(nb::dlpack::dtype_code::Bfloat) && t.bits == 16)
    return normalize_as<strata::bfloat16>(rms, x, y, gamma, beta, eps, stream);
  throw strata::type_error("strata: normalization stores float32, float16 or bfloat16; x is " + dtype_name(t));
}

using field_list = std::vector<std::pair<std::size_t, std::size_t>>;  // (offset, size) per field

std::vector<strata::runtime_field> fields_of(const field_list& f) {
  std::vector<strata::runtime_field> out;
  for (auto [offset, size] : f) out.push_back({offset, size});
  return out;
}

/// The records' bytes: a contiguous array of n * stride bytes (any dtype; a structured NumPy array
/// or a uint8 tensor).
template <class A>
void* record_bytes(const A& a, std::size_t n, std::size_t stride, const char* what) {
  check_memory(a, what);
  std::size_t items = 1;
  for (std::size_t d = 0; d < a.ndim(); ++d) items *= a.shape(d);
  const std::size_t bytes = items * a.itemsize();
  if (bytes != n * stride)
    throw strata::size_error(std::string("strata: ") + what + " holds " + std::to_string(bytes) + " bytes; " + std::to_string(n) +
                             " records of " + std::to_string(stride) + " bytes need " + std::to_string(n * stride));
  return data_of(a);
}

template <class A>
std::vector<void*> column_pointers(const std::vector<A>& cols, const field_list& f, std::size_t n) {
  if (cols.size() != f.size())
    throw strata::size_error("strata: " + std::to_string(cols.size()) + " columns for " + std::to_string(f.size()) + " fields");
  std::vector<void*> p;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    check_memory(cols[k], "a column");
    if (cols[k].ndim() != 1 || cols[k].shape(0) != n || cols[k].itemsize() != f[k].second || (n > 1 && cols[k].stride(0) != 1))
      throw strata::size_error("strata: column " + std::to_string(k) + " must be contiguous, 1-D, " + std::to_string(n) +
                               " elements of " + std::to_string(f[k].second) + " bytes");
    p.push_back(data_of(cols[k]));
  }
  return p;
}

}  // namespace

NB_MODULE(_strata, m) {
  m.doc() = "strata's C++ entry points; use the strata package";
#if defined(STRATA_BACKEND_CUDA)
  m.attr("backend") = "cuda";
#else
  m.attr("backend") = "host";
#endif
  m.def(
      "normalize",
      [](bool rms, const input& x, const array& y, std::optional<input> weight, std::optional<input> bias, float eps,
         std::uintptr_t stream) {
        nb::gil_scoped_release release;
        return normalize(rms, x, y, weight, bias, eps, stream);
      },
      nb::arg("rms"), nb::arg("x"), nb::arg("out"), nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("eps"),
      nb::arg("stream") = 0, "Layer (rms=False) or RMS normalization of x's rows into out; returns the path taken.");
  m.def(
      "aos_to_soa",
      [](const input& records, std::size_t n, std::size_t stride, const field_list& fields, const std::vector<array>& columns,
         std::uintptr_t stream) {
        const void* src = record_bytes(records, n, stride, "the records");
        auto cols = column_pointers(columns, fields, n);
        const auto f = fields_of(fields);
        nb::gil_scoped_release release;
        strata::aos_to_soa(src, stride, strata::index_t(n), f, cols.data(), reinterpret_cast<strata::stream_t>(stream));
      },
      nb::arg("records"), nb::arg("n"), nb::arg("stride"), nb::arg("fields"), nb::arg("columns"), nb::arg("stream") = 0);
  m.def(
      "soa_to_aos",
      [](const std::vector<input>& columns, const field_list& fields, std::size_t n, const array& records, std::size_t stride,
         std::uintptr_t stream) {
        void* dst = record_bytes(records, n, stride, "the records");
        auto cols = column_pointers(columns, fields, n);
        std::vector<const void*> c(cols.begin(), cols.end());
        const auto f = fields_of(fields);
        nb::gil_scoped_release release;
        strata::soa_to_aos(c.data(), f, strata::index_t(n), dst, stride, reinterpret_cast<strata::stream_t>(stream));
      },
      nb::arg("columns"), nb::arg("fields"), nb::arg("n"), nb::arg("records"), nb::arg("stride"), nb::arg("stream") = 0);
  m.def("synchronize", [](std::uintptr_t stream) { strata::synchronize(reinterpret_cast<strata::stream_t>(stream)); },
        nb::arg("stream") = 0);
}
