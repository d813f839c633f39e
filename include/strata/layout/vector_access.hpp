// SPDX-License-Identifier: Apache-2.0
// Loads and stores of 1 to 16 bytes as one instruction (LDG.E.128 / STG.E.128 for 16 bytes of
// global memory, a generic 16-byte access elsewhere), and whole padded records moved as one or two
// such accesses.
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/reflect/changes.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace strata::vec {

#if defined(__CUDACC__)
// CUDA's own vector types: the compiler maps them to ld/st.global.v4/.v2.
using word16 = uint4;
using word8 = uint2;
#else
// Zeroed on construction: the host backend's emulated warp tiles load and use a lane's registers
// under conditions the compiler cannot match up.
struct alignas(16) word16 {
  std::uint32_t x = 0, y = 0, z = 0, w = 0;
};
struct alignas(8) word8 {
  std::uint32_t x = 0, y = 0;
};
#endif

template <std::size_t Bytes>
using word_t = std::conditional_t<
    Bytes == 16, word16,
    std::conditional_t<Bytes == 8, word8,
                       std::conditional_t<Bytes == 4, std::uint32_t,
                                          std::conditional_t<Bytes == 2, std::uint16_t, std::uint8_t>>>>;

/// One access of Bytes bytes to memory of any space (global, shared, local, host); p must be
/// aligned to Bytes. On the device, 16-byte accesses to global memory are written as
/// ld/st.global.v4 in PTX: a plain uint4 assignment may be split into four 32-bit stores by the
/// compiler (seen in the SASS check), and the __ldca / __stwb intrinsics come out as
/// LDG/STG.E.128.STRONG.SM (ordered accesses) in SASS. A global instruction given a shared-memory
/// address reads the wrong memory, so the address space is tested first (__isGlobal, one predicate
/// where the compiler cannot prove it) and any other address takes a generic ld/st.v4.
template <std::size_t Bytes>
STRATA_HD inline word_t<Bytes> load(const void* p) {
  static_assert(layout::vector_size_ok(Bytes), "strata: vector accesses are 1, 2, 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__)
  if constexpr (Bytes == 16) {
    uint4 r;
    if (__isGlobal(p))
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                   : "l"(p)
                   : "memory");
    else
      asm volatile("ld.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p) : "memory");
    return r;
  } else {
    return *static_cast<const word_t<Bytes>*>(p);
  }
#else
  word_t<Bytes> w;  // memcpy keeps host code free of aliasing assumptions
  std::memcpy(&w, p, Bytes);
  return w;
#endif
}

template <std::size_t Bytes>
STRATA_HD inline void store(void* p, const word_t<Bytes>& w) {
#if defined(__CUDA_ARCH__)
  if constexpr (Bytes == 16) {
    if (__isGlobal(p))
      asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w) : "memory");
    else
      asm volatile("st.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w) : "memory");
  } else {
    *static_cast<word_t<Bytes>*>(p) = w;
  }
#else
  std::memcpy(p, &w, Bytes);
#endif
}

/// 16-byte access to shared memory (or any non-global address) on the device.
STRATA_HD inline word16 load_local(const void* p) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const word16*>(p);
#else
  return load<16>(p);
#endif
}
STRATA_HD inline void store_local(void* p, const word16& w) {
#if defined(__CUDA_ARCH__)
  *static_cast<word16*>(p) = w;
#else
  store<16>(p, w);
#endif
}

}  // namespace strata::vec

namespace strata::layout {

/// Reads a padded record with accesses_per_record accesses of access_bytes each (two LDG.E.128 for
/// a 28-byte particle padded to 32); copying the record type directly lets nvcc split it per field.
template <class T>
STRATA_HD inline T load_record(const aligned_record<T>* p) {
  using d = record_descriptor<T>;
  aligned_record<T> r;
  STRATA_UNROLL
  for (std::size_t k = 0; k < d::accesses_per_record; ++k) {
    auto w = vec::load<d::access_bytes>(reinterpret_cast<const char*>(p) + k * d::access_bytes);
    std::memcpy(reinterpret_cast<char*>(&r) + k * d::access_bytes, &w, d::access_bytes);
  }
  return r.value;
}

/// Writes a record and its zeroed padding with whole-vector stores.
template <class T>
STRATA_HD inline void store_record(aligned_record<T>* p, const T& v) {
  using d = record_descriptor<T>;
  aligned_record<T> r(v);
  STRATA_UNROLL
  for (std::size_t k = 0; k < d::accesses_per_record; ++k) {
    vec::word_t<d::access_bytes> w;
    std::memcpy(&w, reinterpret_cast<const char*>(&r) + k * d::access_bytes, d::access_bytes);
    vec::store<d::access_bytes>(reinterpret_cast<char*>(p) + k * d::access_bytes, w);
  }
}

/// Writes the accesses of a record holding a leaf whose bits differ from before (the record as
/// read): an in-place update's store, each access whole as store_record writes it.
template <class T>
STRATA_HD inline void store_record_changed(aligned_record<T>* p, const T& v, const T& before) {
  using d = record_descriptor<T>;
  bool dirty[d::accesses_per_record] = {};
  reflect::for_each_leaf<T>([&](auto f) {
    constexpr std::size_t L = decltype(f)::value;
    constexpr std::size_t first = reflect::leaf_offset<T, L>() / d::access_bytes;
    constexpr std::size_t last = (reflect::leaf_offset<T, L>() + sizeof(reflect::leaf_type_t<T, L>) - 1) / d::access_bytes;
    if (strata::detail::bits_differ(reflect::leaf<L>(v), reflect::leaf<L>(before)))
      for (std::size_t k = first; k <= last; ++k) dirty[k] = true;
  });
  aligned_record<T> r(v);
  STRATA_UNROLL
  for (std::size_t k = 0; k < d::accesses_per_record; ++k) {
    if (!dirty[k]) continue;
    vec::word_t<d::access_bytes> w;
    std::memcpy(&w, reinterpret_cast<const char*>(&r) + k * d::access_bytes, d::access_bytes);
    vec::store<d::access_bytes>(reinterpret_cast<char*>(p) + k * d::access_bytes, w);
  }
}

}  // namespace strata::layout
