// SPDX-License-Identifier: Apache-2.0
// DLPack in and out: a column of an SoA view or container, or a matrix, exported as a
// DLManagedTensor (what PyTorch, CuPy and JAX import without a copy), and DLPack tensors imported
// as soa_view columns or a matrix_view with the checks make_soa_view / make_matrix_view apply.
//
// The definitions come from <dlpack/dlpack.h> (Debian's libdlpack-dev, or any DLPack >= 0.6 on the
// include path); strata does not carry its own copy.
//
// Ownership. An export from a view borrows: the view's memory must outlive the tensor, whose
// deleter frees only the DLPack bookkeeping. An export from a std::shared_ptr to a container keeps
// the container's storage alive until the consumer calls the deleter (a growth does not free it).
// An import never owns: the returned view is valid while the producer's tensor is, and the caller
// still calls its deleter when done.
#pragma once

#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/memory/checked.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

namespace strata {

namespace detail {

template <class U>
inline constexpr bool dl_representable = std::is_arithmetic_v<U> || std::is_same_v<U, half> || std::is_same_v<U, bfloat16>;

}  // namespace detail

/// The DLPack data type of a leaf type: IEEE floats (16, 32, 64 bits), bfloat16, signed and
/// unsigned integers, bool. Other leaf types stop compilation here.
template <class U>
constexpr DLDataType dlpack_dtype() {
  using V = std::remove_cv_t<U>;
  static_assert(detail::dl_representable<V>,
                "strata: DLPack describes arithmetic leaves, strata::half and strata::bfloat16 only; export another "
                "leaf type's bytes as a column of std::uint8_t of your own");
  if constexpr (std::is_same_v<V, bool>) {
#if DLPACK_VERSION >= 80
    return {kDLBool, 8, 1};
#else
    return {kDLUInt, 8, 1};  // DLPack before 0.8 has no bool code; 8-bit unsigned is what producers used
#endif
  } else if constexpr (std::is_same_v<V, half>) {
    return {kDLFloat, 16, 1};
  } else if constexpr (std::is_same_v<V, bfloat16>) {
    return {kDLBfloat, 16, 1};
  } else if constexpr (std::is_floating_point_v<V>) {
    return {kDLFloat, std::uint8_t(8 * sizeof(V)), 1};
  } else if constexpr (std::is_signed_v<V>) {
    return {kDLInt, std::uint8_t(8 * sizeof(V)), 1};
  } else {
    return {kDLUInt, std::uint8_t(8 * sizeof(V)), 1};
  }
}

/// "float32", "bfloat16", "uint8x2" ...: a DLPack dtype as error messages name it.
inline std::string to_string(DLDataType t) {
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLOpaqueHandle: base = "opaque"; break;
    default: base = "code" + std::to_string(int(t.code)) + "_"; break;
  }
  base += std::to_string(int(t.bits));
  if (t.lanes != 1) base += "x", base += std::to_string(int(t.lanes));  // two appends: GCC 12 warns (-Wrestrict) on one
  return base;
}

namespace detail {

/// The DLManagedTensor and what it points to (shape, strides, the owner kept alive), freed together
/// by the deleter.
struct dl_holder {
  DLManagedTensor managed{};
  std::int64_t shape[2]{};
  std::int64_t strides[2]{};
  std::shared_ptr<const void> owner;

  static void destroy(DLManagedTensor* t) noexcept { delete static_cast<dl_holder*>(t->manager_ctx); }
};

inline DLDevice dl_device(memory_location where) {
#if defined(STRATA_BACKEND_CUDA)
  switch (where.space) {
    case memory_space::device: return {kDLCUDA, where.device >= 0 ? where.device : current_device()};
    case memory_space::pinned: return {kDLCUDAHost, 0};
    case memory_space::host: return {kDLCPU, 0};
  }
#endif
  (void)where;
  return {kDLCPU, 0};  // the host backend's memory is the host's, whatever space it was asked for
}

inline DLManagedTensor* make_dl_tensor(const void* data, memory_location where, DLDataType dtype, int ndim,
                                       const std::int64_t* shape, const std::int64_t* strides,
                                       std::shared_ptr<const void> owner) {
  auto h = std::make_unique<dl_holder>();
  for (int d = 0; d < ndim; ++d) h->shape[d] = shape[d], h->strides[d] = strides[d];
  h->owner = std::move(owner);
  DLTensor& t = h->managed.dl_tensor;
  t.data = const_cast<void*>(data);
  t.device = dl_device(where);
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = h->shape;
  t.strides = h->strides;
  t.byte_offset = 0;
  h->managed.manager_ctx = h.get();
  h->managed.deleter = &dl_holder::destroy;
  return &h.release()->managed;
}

inline const char* dl_device_name(int type) {
  switch (type) {
    case kDLCPU: return "CPU";
    case kDLCUDA: return "CUDA";
    case kDLCUDAHost: return "CUDA pinned host";
    case kDLCUDAManaged: return "CUDA managed";
    case kDLROCM: return "ROCm";
    case kDLOpenCL: return "OpenCL";
    default: return "another device type";
  }
}

/// The device type as the integer the producer stored. A C producer may store a value no enumerator
/// of this build's dlpack.h names; reading it through the enum type would be undefined behaviour, so
/// the bytes are copied into the enum's underlying integer instead.
inline int dl_device_type(const DLDevice& d) noexcept {
  std::underlying_type_t<DLDeviceType> raw{};
  static_assert(sizeof(raw) == sizeof(d.device_type));
  std::memcpy(&raw, &d.device_type, sizeof(raw));
  return static_cast<int>(raw);
}

/// The tensor's memory is where its device field says and this build can reach it: CPU memory
/// anywhere, CUDA memory only on the CUDA backend and only on the GPU the tensor names.
inline void check_dl_device(const DLTensor& t, const void* data, const std::string& what) {
  const int type = dl_device_type(t.device);
  const bool cuda_memory = type == kDLCUDA || type == kDLCUDAManaged;
  if (!cuda_memory && type != kDLCPU && type != kDLCUDAHost)
    throw memory_space_error("strata: " + what + " lives on " + dl_device_name(type) + " (DLPack device type " +
                             std::to_string(type) + "); strata reads CPU and CUDA memory only");
#if defined(STRATA_BACKEND_CUDA)
  if (type == kDLCUDA) {  // the device named exists, whether or not there is memory to locate
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) (void)cudaGetLastError(), count = 0;
    if (t.device.device_id < 0 || t.device.device_id >= count)
      throw device_error("strata: " + what + " says CUDA device " + std::to_string(t.device.device_id) + " but this machine has " +
                         std::to_string(count) + (count == 1 ? " GPU" : " GPUs"));
  }
  if (data == nullptr) return;
  const memory_location m = locate(data);
  if (!cuda_memory) {
    if (m.space == memory_space::device)
      throw memory_space_error("strata: " + what + " says " + dl_device_name(type) + " memory but its pointer is device memory of GPU " +
                               std::to_string(m.device));
    return;
  }
  if (m.space != memory_space::device)
    throw memory_space_error("strata: " + what + " says CUDA device " + std::to_string(t.device.device_id) +
                             " but its pointer is " + to_string(m.space) + " memory");
  if (type == kDLCUDA && m.device != t.device.device_id)
    throw device_error("strata: " + what + " says CUDA device " + std::to_string(t.device.device_id) +
                       " but its memory belongs to device " + std::to_string(m.device));
#else
  (void)data;
  if (cuda_memory)
    throw device_error("strata: " + what + " is in CUDA memory (device " + std::to_string(t.device.device_id) +
                       "); this is strata's host backend, which cannot read GPU memory");
#endif
}

template <class U>
void check_dl_dtype(const DLTensor& t, const std::string& what) {
  const DLDataType want = dlpack_dtype<U>();
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != want.lanes)
    throw type_error("strata: " + what + " holds " + to_string(t.dtype) + " elements; the column needs " + to_string(want) +
                     " (" + type_name<std::remove_cv_t<U>>() + ")");
}

template <class U>
U* dl_data(const DLTensor& t) {
  // The offset is added as an integer: a hostile one must not form an out-of-bounds pointer.
  // A tensor without memory (data null, only valid when empty) has no address to offset from.
  if (t.data == nullptr && t.byte_offset != 0)
    throw size_error("strata: DLPack tensor has no memory (data is null) but byte_offset " + std::to_string(t.byte_offset) +
                     "; an empty tensor without memory has byte_offset 0");
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(t.data);
  if (t.byte_offset > std::numeric_limits<std::uintptr_t>::max() - at)
    throw size_error("strata: DLPack tensor's byte_offset " + std::to_string(t.byte_offset) + " runs past the end of the address space");
  return reinterpret_cast<U*>(at + std::uintptr_t(t.byte_offset));
}
/// The shape (and strides, where given) of a tensor of `ndim` dimensions are readable.
inline void check_dl_arrays(const DLTensor& t, int ndim, const std::string& what) {
  if (t.ndim == ndim && !t.shape) throw size_error("strata: " + what + " has " + std::to_string(ndim) + " dimensions but no shape");
}

}  // namespace detail

// ---- export ------------------------------------------------------------------------------------

/// A column of the view as a 1-D tensor of size() elements; Sel is a leaf index or a selector naming
/// one leaf (&particle::mass, strata::member<&particle::pos, &vec3::x>). Borrows the view's memory
/// unless `owner` is given, which the tensor then holds until its deleter runs.
template <auto Sel, class T>
  requires(std::is_integral_v<decltype(Sel)> || selector<Sel>)
DLManagedTensor* to_dlpack(const soa_view<T>& v, std::shared_ptr<const void> owner = {}) {
  constexpr std::size_t L = reflect::leaf_of<std::remove_const_t<T>, Sel>;
  using leaf = std::remove_const_t<typename soa_view<T>::template leaf_type<L>>;
  const std::int64_t shape[1] = {v.size()}, strides[1] = {1};
  return detail::make_dl_tensor(v.template column_data<L>(), v.location(), dlpack_dtype<leaf>(), 1, shape, strides,
                                std::move(owner));
}
namespace detail {
/// One owner holding both the container and the storage its view points into.
template <class C>
std::shared_ptr<const void> holding(const std::shared_ptr<C>& c, std::shared_ptr<const void> storage) {
  struct both {
    std::shared_ptr<C> c;
    std::shared_ptr<const void> storage;
  };
  return std::make_shared<const both>(both{c, std::move(storage)});
}
}  // namespace detail

/// A column of a shared container: the tensor holds the container and the storage the column lies
/// in until its deleter runs, so it stays valid when the container grows or trades storage (a
/// permute through a spare); it then shows the records as they were at the export.
template <auto Sel, class C>
  requires requires(C& c) { c.view(); }
DLManagedTensor* to_dlpack(const std::shared_ptr<C>& container) {
  if (!container) throw size_error("strata: to_dlpack: null container");
  return to_dlpack<Sel>(container->view(), detail::holding(container, container->storage()));
}

/// rows x cols, row stride = pitch (elements). Borrows the matrix's memory.
template <class T>
DLManagedTensor* to_dlpack(const matrix_view<T>& m, std::shared_ptr<const void> owner = {}) {
  const std::int64_t shape[2] = {m.rows, m.cols}, strides[2] = {m.pitch, 1};
  return detail::make_dl_tensor(m.data, m.location(), dlpack_dtype<std::remove_const_t<T>>(), 2, shape, strides, std::move(owner));
}
/// A shared matrix: the tensor holds its storage until its deleter runs.
template <class T, memory_space S>
DLManagedTensor* to_dlpack(const std::shared_ptr<matrix<T, S>>& m) {
  if (!m) throw size_error("strata: to_dlpack: null matrix");
  return to_dlpack(m->view(), detail::holding(m, m->storage()));
}

// ---- import ------------------------------------------------------------------------------------

/// A 1-D tensor of U as a span, after checking its dtype, shape, strides, alignment for U and that
/// its memory is where the tensor says and reachable from this build. `what` names it in errors.
template <class U>
cuda::std::span<U> span_from_dlpack(const DLTensor& t, const std::string& what = "DLPack tensor") {
  detail::check_dl_dtype<U>(t, what);
  if (t.ndim != 1) throw size_error("strata: " + what + " has " + std::to_string(t.ndim) + " dimensions; a column needs 1");
  detail::check_dl_arrays(t, 1, what);
  const std::int64_t n = t.shape[0];
  if (n < 0) throw size_error("strata: " + what + " has negative length " + std::to_string(n));
  if (t.strides && n > 1 && t.strides[0] != 1)
    throw size_error("strata: " + what + " has stride " + std::to_string(t.strides[0]) +
                     " elements; a column must be contiguous (copy it, e.g. .contiguous() in PyTorch)");
  U* data = detail::dl_data<U>(t);
  if (!t.data && n > 0) throw size_error("strata: " + what + " is a null pointer with " + std::to_string(n) + " elements");
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(U) != 0) throw misaligned_pointer(what, data, alignof(U));
  (void)detail::checked_extent(data, std::size_t(n), sizeof(U), what.c_str());
  detail::check_dl_device(t, data, what);
  return {data, static_cast<std::size_t>(n)};
}

/// One 1-D tensor per leaf of T, in leaf order, all of one length, as a view (make_soa_view's checks:
/// alignment as `a` asks, one memory space and device for all). The view's capacity is its size:
/// nothing past the tensors' ends is touched.
template <class T, class... Tensors>
  requires(std::is_same_v<Tensors, DLTensor> && ...)
soa_view<T> soa_view_from_dlpack(alignment a, const Tensors&... tensors) {
  static_assert(sizeof...(Tensors) == reflect::leaf_count<T>, "strata: soa_view_from_dlpack needs one tensor per leaf (column) of the record");
  const DLTensor* all[] = {&tensors...};
  const std::int64_t n = all[0]->ndim == 1 && all[0]->shape ? all[0]->shape[0] : 0;
  return [&]<std::size_t... L>(std::index_sequence<L...>) {
    auto span_of = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      const std::string what = "DLPack tensor for column '" + std::string(reflect::leaf_name<T, I>()) + "'";
      auto s = span_from_dlpack<reflect::leaf_type_t<T, I>>(*all[I], what);
      if (std::int64_t(s.size()) != n)
        throw size_error("strata: soa_view_from_dlpack: " + what + " has " + std::to_string(s.size()) + " elements, column '" +
                         std::string(reflect::leaf_name<T, 0>()) + "' has " + std::to_string(n));
      return s;
    };
    return make_soa_view<T>(index_t(n), a, span_of(std::integral_constant<std::size_t, L>{})...);
  }(std::make_index_sequence<sizeof...(Tensors)>{});
}

/// A 2-D tensor of U (rows x cols, unit column stride, any row stride >= cols) as a matrix_view of
/// rows someone else owns.
template <class U>
matrix_view<U> matrix_view_from_dlpack(const DLTensor& t, const std::string& what = "DLPack tensor") {
  detail::check_dl_dtype<U>(t, what);
  if (t.ndim != 2) throw size_error("strata: " + what + " has " + std::to_string(t.ndim) + " dimensions; rows need 2");
  detail::check_dl_arrays(t, 2, what);
  const std::int64_t rows = t.shape[0], cols = t.shape[1];
  if (rows < 0 || cols < 0) throw size_error("strata: " + what + " has a negative extent");
  std::int64_t pitch = cols;
  if (t.strides) {
    if (cols > 1 && t.strides[1] != 1)
      throw size_error("strata: " + what + " has column stride " + std::to_string(t.strides[1]) +
                       "; rows must be contiguous (transpose or copy it first)");
    if (rows > 1) pitch = t.strides[0];
  }
  if (pitch < cols)
    throw size_error("strata: " + what + " has row stride " + std::to_string(pitch) + " below its " + std::to_string(cols) +
                     " columns (overlapping rows)");
  if (!t.data && rows > 0 && cols > 0) throw size_error("strata: " + what + " is a null pointer with " + std::to_string(rows) + " rows");
  U* data = detail::dl_data<U>(t);
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(U) != 0) throw misaligned_pointer(what, data, alignof(U));
  detail::check_dl_device(t, data, what);
  return make_matrix_view<U>(data, index_t(rows), index_t(cols), index_t(pitch));
}

}  // namespace strata
