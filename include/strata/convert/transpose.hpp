// AoS <-> SoA transposition of one run of records, and the argument checks its callers share.
// On the device: a tile of records moves between the AoS bytes and shared memory with coalesced
// 16-byte accesses, and between shared memory and each column with 16-byte stores or loads. AoS
// pointers need only the record's natural alignment: 16-byte chunks that reach past the array's
// ends move byte by byte, as do chunks a tile shares with its neighbour on the output side (so no
// block writes another block's bytes).
#pragma once

#include <strata/config.hpp>

#include <strata/container/soa_view.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

#include <string>

namespace strata::detail {

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int transpose_threads = 256;

/// Records per tile: about 24 KiB of AoS bytes, a multiple of 16 so every column's part of a tile
/// starts on a 16-byte boundary.
template <std::size_t Stride>
inline constexpr index_t tile_records = index_t(align_up(std::max<std::size_t>(16, 24576 / Stride), 16));

/// Records of column I per group of whole 16-byte vectors (4 for fp32, 4 for a 12-byte float3).
template <class T, std::size_t I>
inline constexpr std::size_t unit_records = 16 / std::gcd(sizeof(reflect::field_type_t<T, I>), std::size_t(16));

// Moves AoS bytes [gbegin, gend) of the array [abegin, aend) to or from shared memory `tile`
// (which holds the bytes from align_down(gbegin, 16)); ToShared selects the direction. Loads are
// issued in batches of four per thread so several 16-byte requests are in flight at once.
template <bool ToShared>
__device__ inline void move_aos_bytes(std::byte* tile, std::byte* gptr_base, std::uintptr_t gbegin, std::uintptr_t gend,
                                      std::uintptr_t abegin, std::uintptr_t aend) {
  constexpr int batch = 4;
  const std::uintptr_t w0 = gbegin & ~std::uintptr_t(15);
  const std::uintptr_t chunks = (gend - w0 + 15) / 16;
  for (std::uintptr_t c0 = threadIdx.x; c0 < chunks; c0 += batch * blockDim.x) {
    vec::word16 w[batch];
    bool whole[batch];
    STRATA_UNROLL
    for (int j = 0; j < batch; ++j) {
      const std::uintptr_t c = c0 + j * blockDim.x, a = w0 + c * 16;
      // Whole chunk: inside the array when reading; inside this tile when writing.
      whole[j] = c < chunks && (ToShared ? (a >= abegin && a + 16 <= aend) : (a >= gbegin && a + 16 <= gend));
      if (whole[j]) w[j] = ToShared ? vec::load<16>(gptr_base + (a - abegin)) : vec::load_local(tile + c * 16);
    }
    STRATA_UNROLL
    for (int j = 0; j < batch; ++j) {
      const std::uintptr_t c = c0 + j * blockDim.x, a = w0 + c * 16;
      if (c >= chunks) break;
      std::byte* sh = tile + c * 16;
      std::byte* g = gptr_base + (a - abegin);
      if (whole[j]) {
        if constexpr (ToShared) vec::store_local(sh, w[j]);
        else vec::store<16>(g, w[j]);
      } else {
        const std::uintptr_t lo = a < gbegin ? gbegin : a, hi = a + 16 > gend ? gend : a + 16;
        for (std::uintptr_t b = lo; b < hi; ++b) {
          if constexpr (ToShared) sh[b - a] = g[b - a];
          else g[b - a] = sh[b - a];
        }
      }
    }
  }
}

// Column I of records [0, count) of a tile <-> 16-byte vectors of the column starting at record first.
template <bool ToColumns, class T, std::size_t I, std::size_t Stride, class View>
__device__ inline void move_column(const std::byte* smem_const, std::byte* smem, const View& soa, index_t first,
                                   index_t count, index_t capacity) {
  using F = reflect::field_type_t<T, I>;
  constexpr std::size_t s = sizeof(F), u = unit_records<T, I>, v = u * s / 16;
  constexpr std::size_t offset = reflect::field_offset<T, I>();
  const index_t units = (count + index_t(u) - 1) / index_t(u);
  for (index_t k = threadIdx.x; k < units; k += blockDim.x) {
    const index_t r0 = k * index_t(u);
    if (first + r0 + index_t(u) > capacity) break;  // never reached for containers (capacity is whole units)
    auto* col = reinterpret_cast<std::conditional_t<ToColumns, std::byte*, const std::byte*>>(
                    soa.template column_data<I>() + first + r0);
    // Field values are read and written in shared memory as F (aligned: Stride and the field's
    // offset are multiples of alignof(F)), then regrouped into 16-byte words in registers.
    vec::word16 words[v];
    F lanes[u];
    if constexpr (ToColumns) {
      STRATA_UNROLL
      for (std::size_t j = 0; j < u; ++j) {
        if (r0 + index_t(j) < count) lanes[j] = *reinterpret_cast<const F*>(smem_const + (r0 + j) * Stride + offset);
        else std::memset(static_cast<void*>(&lanes[j]), 0, s);  // padding lanes past the last record stay zero
      }
      std::memcpy(words, lanes, sizeof lanes);
      STRATA_UNROLL
      for (std::size_t j = 0; j < v; ++j) vec::store<16>(const_cast<std::byte*>(col) + j * 16, words[j]);
    } else {
      STRATA_UNROLL
      for (std::size_t j = 0; j < v; ++j) words[j] = vec::load<16>(col + j * 16);
      std::memcpy(static_cast<void*>(lanes), words, sizeof lanes);
      STRATA_UNROLL
      for (std::size_t j = 0; j < u; ++j)
        if (r0 + index_t(j) < count) *reinterpret_cast<F*>(smem + (r0 + j) * Stride + offset) = lanes[j];
    }
  }
}

/// AoS (records of Stride bytes; Stride = sizeof(T) or the padded size) -> SoA columns, from dst
/// record `first` on. One block per tile.
template <class T, std::size_t Stride>
__global__ void __launch_bounds__(transpose_threads) aos_to_soa_kernel(const std::byte* src, index_t n, soa_view<T> dst,
                                                                       index_t first) {
  constexpr index_t r = tile_records<Stride>;
  __shared__ __align__(16) std::byte tile[r * Stride + 32];
  const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(src), aend = abegin + std::uintptr_t(n) * Stride;
  for (index_t t = blockIdx.x; t * r < n; t += gridDim.x) {
    const index_t count = n - t * r < r ? n - t * r : r;
    const std::uintptr_t gbegin = abegin + std::uintptr_t(t * r) * Stride, gend = gbegin + std::uintptr_t(count) * Stride;
    const std::uintptr_t w0 = gbegin & ~std::uintptr_t(15);
    move_aos_bytes<true>(tile, const_cast<std::byte*>(src), gbegin, gend, abegin, aend);
    __syncthreads();
    const std::byte* rec = tile + (gbegin - w0);
    reflect::for_each_field<T>([&](auto f) {
      move_column<true, T, decltype(f)::value, Stride>(rec, nullptr, dst, first + t * r, count, dst.capacity());
    });
    __syncthreads();
  }
}

// Four blocks per SM (at most 64 registers): measured 0.76 of a device copy on the H200 against 0.62
// at the compiler's 78 registers; the same bound slowed aos_to_soa_kernel (0.81 -> 0.76), so that
// one keeps the compiler's choice.
template <class T, std::size_t Stride>
__global__ void __launch_bounds__(transpose_threads, 4) soa_to_aos_kernel(soa_view<const T> src, index_t first, std::byte* dst,
                                                                       index_t n) {
  constexpr index_t r = tile_records<Stride>;
  __shared__ __align__(16) std::byte tile[r * Stride + 32];
  const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(dst), aend = abegin + std::uintptr_t(n) * Stride;
  for (index_t t = blockIdx.x; t * r < n; t += gridDim.x) {
    const index_t count = n - t * r < r ? n - t * r : r;
    const std::uintptr_t gbegin = abegin + std::uintptr_t(t * r) * Stride, gend = gbegin + std::uintptr_t(count) * Stride;
    const std::uintptr_t w0 = gbegin & ~std::uintptr_t(15);
    std::byte* rec = tile + (gbegin - w0);
    if constexpr (Stride > sizeof(T)) {  // padded records: zero the padding bytes of each record
      for (index_t i = threadIdx.x; i < count; i += blockDim.x)
        for (std::size_t b = sizeof(T); b < Stride; ++b) rec[i * Stride + b] = std::byte{0};
    } else if constexpr (layout::record_descriptor<T>::packed_size < sizeof(T)) {
      for (index_t i = threadIdx.x; i < count; i += blockDim.x)  // interior padding: defined bytes, not garbage
        for (std::size_t b = 0; b < Stride; ++b) rec[i * Stride + b] = std::byte{0};
      __syncthreads();
    }
    reflect::for_each_field<T>([&](auto f) {
      move_column<false, T, decltype(f)::value, Stride>(nullptr, rec, src, first + t * r, count, src.capacity());
    });
    __syncthreads();
    move_aos_bytes<false>(tile, dst, gbegin, gend, abegin, aend);
    __syncthreads();
  }
}

#endif  // STRATA_BACKEND_CUDA


template <class T>
void check_soa_destination(const char* op, const soa_view<T>& v, index_t n) {
  if (v.size() != n) throw_size_error(std::string(op) + ": SoA records", v.size(), n);
  using L = soa_layout<std::remove_const_t<T>>;
  for (std::size_t i = 0; i < L::fields; ++i)
    if (reinterpret_cast<std::uintptr_t>(v.column_bytes(i)) % vector_bytes != 0)
      throw misaligned_pointer(std::string(op) + ": SoA column " + std::to_string(i), v.column_bytes(i), vector_bytes);
  if (v.capacity() % index_t(L::capacity_quantum) != 0)
    throw size_error(std::string("strata: ") + op + ": SoA capacity " + std::to_string(v.capacity()) +
                     " is not a multiple of " + std::to_string(L::capacity_quantum) + " records (16-byte column vectors)");
}

template <class T>
void check_aos_pointer(const char* op, const void* p, index_t n, std::size_t align) {
  if (n < 0) throw size_error(std::string("strata: ") + op + ": negative record count");
  if (n > 0 && p == nullptr) throw size_error(std::string("strata: ") + op + ": null AoS pointer with " + std::to_string(n) + " records");
  if (reinterpret_cast<std::uintptr_t>(p) % align != 0) throw misaligned_pointer(std::string(op) + ": AoS records", p, align);
}

#if defined(STRATA_BACKEND_CUDA)
inline int transpose_grid(index_t tiles) {
  return int(std::max<index_t>(1, std::min<index_t>(tiles, index_t(current_device_shape().sms) * 8)));
}
#endif

/// Stride-byte records at src -> dst records [first, first + n).
template <class T, std::size_t Stride>
void aos_bytes_to_soa(const std::byte* src, index_t n, const soa_view<T>& dst, index_t first, stream_t stream) {
  check_stream(stream, "aos_to_soa");
  if (n == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  constexpr index_t r = tile_records<Stride>;
  aos_to_soa_kernel<T, Stride><<<transpose_grid((n + r - 1) / r), transpose_threads, 0, stream>>>(src, n, dst, first);
  check_launch("aos_to_soa kernel launch");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(n > (1 << 14))
  for (index_t i = 0; i < n; ++i) {
    T r;
    std::memcpy(&r, src + std::size_t(i) * Stride, sizeof(T));
    dst.store(first + i, r);
  }
#endif
}

template <class T, std::size_t Stride>
void soa_to_aos_bytes(const soa_view<const T>& src, index_t first, std::byte* dst, index_t n, stream_t stream) {
  check_stream(stream, "soa_to_aos");
  if (n == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  constexpr index_t r = tile_records<Stride>;
  soa_to_aos_kernel<T, Stride><<<transpose_grid((n + r - 1) / r), transpose_threads, 0, stream>>>(src, first, dst, n);
  check_launch("soa_to_aos kernel launch");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(n > (1 << 14))
  for (index_t i = 0; i < n; ++i) {
    unsigned char rec[Stride] = {};  // padding bytes are written as zeros
    T r = src.load(first + i);
    std::memcpy(rec, &r, sizeof(T));
    std::memcpy(dst + std::size_t(i) * Stride, rec, Stride);
  }
#endif
}

}  // namespace strata::detail
