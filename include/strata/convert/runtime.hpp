// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA for records described at run time: the byte offset and size of each field are
// arguments (what a NumPy structured dtype or a file format's header gives), not a C++ type.
//
// Each block takes a tile of whole records. To SoA: the tile's bytes are staged in shared memory
// by asynchronous copies of the widest words the AoS pointer allows, then the block's threads write
// the columns in units of 16 bytes (16 / size consecutive elements of one field, one vector store
// where the column is 16-byte aligned), consecutive threads taking consecutive units. To AoS: the
// reverse (16-byte column loads, the fields placed in the staged tile); when some bytes of a
// record belong to no field, the tile is zeroed first with 16-byte stores, so they are written as
// zero. In the tile, each field is read or placed in the widest pieces its offset allows, the
// lanes of a warp rotating the order of a unit's elements so that they touch different banks. The
// host backend runs the same two phases per tile, unit by unit, with the tile's shared memory in a
// buffer of its own.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/checked.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <cuda/std/span>
#if defined(STRATA_BACKEND_CUDA)
#include <cuda_pipeline.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace strata {

/// One field of a runtime-described record: `size` bytes (1, 2, 4, 8 or 16) at byte `offset`.
struct runtime_field {
  std::size_t offset = 0;
  std::size_t size = 0;
};
inline constexpr std::size_t max_runtime_fields = 64;
/// Records up to this many bytes: a tile of 32 of them fits the 48 KiB of shared memory every
/// CUDA device gives a block without opting in.
inline constexpr std::size_t max_runtime_stride = 1536;

namespace detail {

struct runtime_layout {
  std::uint32_t offset[max_runtime_fields];
  std::uint32_t size[max_runtime_fields];
  bool vector[max_runtime_fields];   // the column is 16-byte aligned: whole units move as one vector
  std::uint8_t unit_shift[max_runtime_fields];  // log2 of the elements in a 16-byte unit (16 / size)
  std::uint8_t rotation[max_runtime_fields];  // log2 of the lanes a unit's element order rotates over (5: none)
  std::uint8_t piece[max_runtime_fields];     // bytes per shared-memory access to the field (1 to 16)
  std::byte* column[max_runtime_fields];
  std::uint32_t count;
  std::uint32_t stride;
  std::uint32_t tile;  // records per tile
  bool gaps;           // some byte of a record belongs to no field (written as zero to AoS)
};

/// A tile holds at most `runtime_tile_cap` records (0: 4096) and about `runtime_tile_budget` bytes
/// (0: 24 KiB). A block has its tile's loads in flight at once and several blocks share an SM, so
/// larger tiles keep more bytes in flight per SM; bench/convert.cpp's runtime_tile rows time other
/// limits (nonzero values here). Records of 4 to 8 bytes run 1.04-1.3x faster with tiles of 4096
/// than of 1024 records (a block of 1024 such records stages only 4-8 KiB, and its fixed costs
/// weigh more); larger records are held by the budget.
inline std::uint32_t runtime_tile_cap = 0;
inline std::uint32_t runtime_tile_budget = 0;
/// Records per tile: whole records filling the budget up to the cap, a multiple of the block's 256
/// threads where at least 256 fit, so that every thread handles as many; otherwise a multiple of
/// 32, at least 32 (a 16-byte multiple of bytes for any record: tiles stage in 16-byte words).
inline std::uint32_t runtime_tile_records(std::size_t stride) {
  const std::size_t cap = runtime_tile_cap ? runtime_tile_cap : 4096;
  const std::size_t budget = runtime_tile_budget ? runtime_tile_budget : std::size_t(24) << 10;
  const std::size_t fit = std::min<std::size_t>(budget / stride, cap);
  return std::uint32_t(fit >= 256 ? fit / 256 * 256 : std::max<std::size_t>(fit / 32 * 32, 32));
}

struct alignas(16) word16 {
  std::uint64_t lo, hi;
};

/// Lanes of a warp take consecutive units of a field, so at one step they touch shared memory
/// u * stride bytes apart (u = 16 / size elements per unit) and lanes `period` apart hit the same
/// bank, period = 32 / gcd(u * stride / 4, 32), a power of two. Where that repeats within a warp,
/// each group of `period` lanes starts at a different element of its unit (runtime_rotated), so
/// that at strides of an odd number of words every lane has a bank of its own, for every field
/// size. Returns log2(period); 5: no rotation. Units of every size rotate: without it, elements of
/// 1 and 2 bytes made 16- to 32-way conflicts (a 16-byte record of f64, f32, u16 and u8 converted
/// to AoS at 0.58 of a copy). Records that are not whole words spread over the banks already and
/// are not rotated (the rotation's run-time element selection cost packed records 13-19%).
inline std::uint8_t runtime_rotation(std::size_t size, std::size_t stride) {
  const std::size_t u = 16 / size;
  if (u == 1 || stride % 4 != 0) return 5;
  std::size_t g = u * stride / 4, m = 32;
  while (m) std::swap(g %= m, m);  // gcd(u * stride / 4, 32)
  std::uint8_t r = 0;
  while ((std::size_t(1) << r) < 32 / g) ++r;
  return r;
}
/// Which element of its unit `lane` handles at step j.
STRATA_HD inline std::uint32_t runtime_rotated(std::uint32_t j, std::uint32_t lane, std::uint32_t rotation, std::uint32_t u) {
  return rotation >= 5 ? j : (j + (lane >> rotation)) & (u - 1);
}

/// A unit (16 bytes of a column) is held as four words; element j of S bytes covers its bytes
/// j * S .. j * S + S - 1. Words are picked and set at run-time indices by selects, so the unit
/// stays in registers.
STRATA_HD inline std::uint32_t runtime_word(const std::uint32_t (&x)[4], std::uint32_t i) {
  return i == 0 ? x[0] : i == 1 ? x[1] : i == 2 ? x[2] : x[3];
}
STRATA_HD inline void runtime_or_word(std::uint32_t (&x)[4], std::uint32_t i, std::uint32_t v) {
  STRATA_UNROLL
  for (std::uint32_t q = 0; q < 4; ++q) x[q] |= q == i ? v : 0u;
}
/// Element j of x stored at dst (aligned to P) in pieces of P bytes (P divides S).
template <std::uint32_t S, std::uint32_t P>
STRATA_HD inline void runtime_place(std::byte* dst, const std::uint32_t (&x)[4], std::uint32_t j) {
  if constexpr (P == 16) {
    *reinterpret_cast<word16*>(dst) = word16{x[0] | std::uint64_t(x[1]) << 32, x[2] | std::uint64_t(x[3]) << 32};
  } else if constexpr (P == 8) {
    STRATA_UNROLL
    for (std::uint32_t b = 0; b < S; b += 8) {
      const std::uint32_t at = (j * S + b) >> 2;
      *reinterpret_cast<std::uint64_t*>(dst + b) = runtime_word(x, at) | std::uint64_t(runtime_word(x, at + 1)) << 32;
    }
  } else {
    STRATA_UNROLL
    for (std::uint32_t b = 0; b < S; b += P) {
      const std::uint32_t at = j * S + b;
      const std::uint32_t v = runtime_word(x, at >> 2) >> ((at & 3) * 8);
      if constexpr (P == 4) *reinterpret_cast<std::uint32_t*>(dst + b) = v;
      else if constexpr (P == 2) *reinterpret_cast<std::uint16_t*>(dst + b) = std::uint16_t(v);
      else *reinterpret_cast<std::uint8_t*>(dst + b) = std::uint8_t(v);
    }
  }
}
/// The reverse: element j of x (zero there before) read from src (aligned to P) in pieces of P bytes.
template <std::uint32_t S, std::uint32_t P>
STRATA_HD inline void runtime_take(const std::byte* src, std::uint32_t (&x)[4], std::uint32_t j) {
  if constexpr (P == 16) {
    const word16 w = *reinterpret_cast<const word16*>(src);
    x[0] = std::uint32_t(w.lo), x[1] = std::uint32_t(w.lo >> 32), x[2] = std::uint32_t(w.hi), x[3] = std::uint32_t(w.hi >> 32);
  } else if constexpr (P == 8) {
    STRATA_UNROLL
    for (std::uint32_t b = 0; b < S; b += 8) {
      const std::uint64_t v = *reinterpret_cast<const std::uint64_t*>(src + b);
      const std::uint32_t at = (j * S + b) >> 2;
      runtime_or_word(x, at, std::uint32_t(v));
      runtime_or_word(x, at + 1, std::uint32_t(v >> 32));
    }
  } else {
    STRATA_UNROLL
    for (std::uint32_t b = 0; b < S; b += P) {
      std::uint32_t v;
      if constexpr (P == 4) v = *reinterpret_cast<const std::uint32_t*>(src + b);
      else if constexpr (P == 2) v = *reinterpret_cast<const std::uint16_t*>(src + b);
      else v = *reinterpret_cast<const std::uint8_t*>(src + b);
      const std::uint32_t at = j * S + b;
      runtime_or_word(x, at >> 2, v << ((at & 3) * 8));
    }
  }
}
/// Column elements of S bytes, for the element-by-element path.
template <std::uint32_t S>
using runtime_element = std::conditional_t<
    S == 1, std::uint8_t, std::conditional_t<S == 2, std::uint16_t, std::conditional_t<S == 4, std::uint32_t, std::conditional_t<S == 8, std::uint64_t, word16>>>>;

/// Unit q of field k (S-byte elements) of a staged tile of m records (record `first` overall on),
/// the field accessed in the tile in pieces of P bytes. ToSoa: the unit's elements read from the
/// tile, then one 16-byte store to the column; to AoS: one 16-byte load from the column, then its
/// elements placed in the tile. Lanes rotate the order of the elements (runtime_rotation). Where the
/// column is not 16-byte aligned, or for a tile's last unit, element by element (nothing past
/// record first + m - 1 is touched).
template <bool ToSoa, std::uint32_t S, std::uint32_t P>
STRATA_HD inline void runtime_unit(const runtime_layout& L, std::byte* sm, index_t first, std::uint32_t m, std::uint32_t k, std::uint32_t q,
                                   std::uint32_t lane) {
  constexpr std::uint32_t u = 16 / S;
  using E = runtime_element<S>;
  const std::uint32_t r0 = q * u;
  E* col = reinterpret_cast<E*>(L.column[k]) + (first + index_t(r0));
  std::byte* at = sm + std::size_t(r0) * L.stride + L.offset[k];
  std::uint32_t x[4] = {};
  if (!L.vector[k] || r0 + u > m) {
    for (std::uint32_t j = 0; j < u && r0 + j < m; ++j) {
      E e;
      if constexpr (ToSoa) {
        std::uint32_t y[4] = {};
        runtime_take<S, P>(at + std::size_t(j) * L.stride, y, 0);
        std::memcpy(&e, y, S);
        col[j] = e;
      } else {
        e = col[j];
        std::memcpy(x, &e, S);
        runtime_place<S, P>(at + std::size_t(j) * L.stride, x, 0);
      }
    }
    return;
  }
  auto each = [&](auto element) {
    const std::uint32_t rotation = L.rotation[k];
    if (rotation >= 5) {  // in order: every byte's place in x is known at compile time
      STRATA_UNROLL
      for (std::uint32_t j = 0; j < u; ++j) element(j);
    } else {
      STRATA_UNROLL
      for (std::uint32_t j = 0; j < u; ++j) element(runtime_rotated(j, lane, rotation, u));
    }
  };
  if constexpr (ToSoa) {
    each([&](std::uint32_t j) { runtime_take<S, P>(at + std::size_t(j) * L.stride, x, j); });
    word16 w;
    std::memcpy(&w, x, sizeof w);
    *reinterpret_cast<word16*>(col) = w;
  } else {
    const word16 w = *reinterpret_cast<const word16*>(col);
    std::memcpy(x, &w, sizeof w);
    each([&](std::uint32_t j) { runtime_place<S, P>(at + std::size_t(j) * L.stride, x, j); });
  }
}

/// Units of field k in a tile of m records.
STRATA_HD inline std::uint32_t runtime_units(const runtime_layout& L, std::uint32_t k, std::uint32_t m) {
  return (m + (1u << L.unit_shift[k]) - 1) >> L.unit_shift[k];
}
/// Units q0, q0 + step, ... of field k in the direction ToSoa. `base`: the units of the fields
/// before k, so that unit q is the tile's unit base + q and lane (base + q) % 32 of a block whose
/// threads take consecutive units. The switches on the field's size and piece run once per field,
/// not per unit.
template <bool ToSoa>
STRATA_HD inline void runtime_field_units(const runtime_layout& L, std::byte* sm, index_t first, std::uint32_t m, std::uint32_t k,
                                          std::uint32_t base, std::uint32_t q0, std::uint32_t step) {
  auto run = [&](auto size, auto piece) {
    constexpr std::uint32_t S = decltype(size)::value, P = decltype(piece)::value;
    if constexpr (P <= S) {
      constexpr std::uint32_t u = 16 / S;
      const std::uint32_t units = (m + u - 1) / u;
      for (std::uint32_t q = q0; q < units; q += step) runtime_unit<ToSoa, S, P>(L, sm, first, m, k, q, (base + q) & 31);
    }
  };
  auto sized = [&](auto size) {
    switch (L.piece[k]) {
      case 16: run(size, std::integral_constant<std::uint32_t, 16>{}); break;
      case 8: run(size, std::integral_constant<std::uint32_t, 8>{}); break;
      case 4: run(size, std::integral_constant<std::uint32_t, 4>{}); break;
      case 2: run(size, std::integral_constant<std::uint32_t, 2>{}); break;
      default: run(size, std::integral_constant<std::uint32_t, 1>{}); break;
    }
  };
  switch (L.size[k]) {
    case 1: sized(std::integral_constant<std::uint32_t, 1>{}); break;
    case 2: sized(std::integral_constant<std::uint32_t, 2>{}); break;
    case 4: sized(std::integral_constant<std::uint32_t, 4>{}); break;
    case 8: sized(std::integral_constant<std::uint32_t, 8>{}); break;
    default: sized(std::integral_constant<std::uint32_t, 16>{}); break;
  }
}

/// Checks shared by both directions; fills the layout and returns the widest access (16, 8, 4, 2
/// or 1 bytes) that every tile's start on the AoS side allows.
inline std::size_t runtime_prepare(const char* op, runtime_layout& L, const void* aos, std::size_t stride, index_t n,
                                   cuda::std::span<const runtime_field> fields, const void* const* columns) {
  const std::string where = std::string("strata: ") + op + ": ";
  if (n < 0) throw size_error(where + "negative record count " + std::to_string(n));
  if (fields.empty() || fields.size() > max_runtime_fields)
    throw size_error(where + std::to_string(fields.size()) + " fields; between 1 and " + std::to_string(max_runtime_fields) + " are supported");
  if (stride == 0 || stride > max_runtime_stride)
    throw size_error(where + "records of " + std::to_string(stride) + " bytes; 1 to " + std::to_string(max_runtime_stride) + " are supported");
  if (n > 0 && aos == nullptr) throw size_error(where + "null AoS pointer with " + std::to_string(n) + " records");
  if (n > 0 && columns == nullptr) throw size_error(where + "null column array with " + std::to_string(n) + " records");
  // Tiles and kernels form aos + i * stride and column + i * size for every i < n: none may wrap.
  (void)checked_extent(aos, std::size_t(n), stride, (std::string(op) + ": the AoS records").c_str());
  L.count = std::uint32_t(fields.size());
  std::vector<bool> covered(stride, false);
  L.stride = std::uint32_t(stride);
  L.tile = runtime_tile_records(stride);
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const auto& f = fields[k];
    const std::string name = "field " + std::to_string(k) + " (offset " + std::to_string(f.offset) + ", " + std::to_string(f.size) + " bytes)";
    if (f.size != 1 && f.size != 2 && f.size != 4 && f.size != 8 && f.size != 16)
      throw size_error(where + name + ": fields of 1, 2, 4, 8 or 16 bytes are supported");
    if (!range_within(f.offset, f.size, stride)) throw size_error(where + name + " ends past the " + std::to_string(stride) + "-byte record");
    if (n > 0 && columns[k] == nullptr) throw size_error(where + "null column for " + name);
    if (n > 0) (void)checked_extent(columns[k], std::size_t(n), f.size, (std::string(op) + ": the column of " + name).c_str());
    if (reinterpret_cast<std::uintptr_t>(columns[k]) % f.size != 0)
      throw misaligned_pointer(std::string(op) + ": column of " + name, columns[k], f.size);
    L.offset[k] = std::uint32_t(f.offset);
    L.size[k] = std::uint32_t(f.size);
    L.vector[k] = reinterpret_cast<std::uintptr_t>(columns[k]) % 16 == 0;  // tiles start at multiples of 16 records
    // Pieces: the widest of the field's size, 8, 4, 2 and 1 bytes that its offset and the stride keep
    // aligned in every staged record (tiles start 16-byte aligned).
    std::size_t piece = f.size;
    while (piece > 1 && (f.offset % piece != 0 || stride % piece != 0)) piece /= 2;
    L.piece[k] = std::uint8_t(piece);
    L.rotation[k] = runtime_rotation(f.size, stride);
    L.unit_shift[k] = std::uint8_t(f.size == 1 ? 4 : f.size == 2 ? 3 : f.size == 4 ? 2 : f.size == 8 ? 1 : 0);
    L.column[k] = static_cast<std::byte*>(const_cast<void*>(columns[k]));
    for (std::size_t b = f.offset; b < f.offset + f.size; ++b) covered[b] = true;
  }
  L.gaps = std::find(covered.begin(), covered.end(), false) != covered.end();
  std::size_t word = 16;
  while (word > 1 && (reinterpret_cast<std::uintptr_t>(aos) % word != 0 || (std::size_t(L.tile) * stride) % word != 0)) word /= 2;
  return word;
}
#if defined(STRATA_BACKEND_CUDA)
/// Global -> shared: the tile's words as asynchronous copies (cp.async where the GPU has it), all
/// issued before the block waits for any, and without passing through registers. A load followed
/// by the shared-memory store that needs its value would leave one load per thread in flight, and
/// the tile would arrive in as many round trips as a thread has words. Widths below 4 bytes (AoS
/// pointers aligned only to 1 or 2) copy through registers; the tail byte by byte.
template <class W>
__device__ inline void runtime_stage_in(std::byte* sm, const std::byte* src, std::uint32_t bytes) {
  constexpr std::uint32_t threads = 256;
  const std::uint32_t words = bytes / sizeof(W);
  if constexpr (sizeof(W) >= 4) {
    for (std::uint32_t i = threadIdx.x; i < words; i += threads) __pipeline_memcpy_async(sm + i * sizeof(W), src + i * sizeof(W), sizeof(W));
    __pipeline_commit();
  } else {
    for (std::uint32_t i = threadIdx.x; i < words; i += threads) reinterpret_cast<W*>(sm)[i] = reinterpret_cast<const W*>(src)[i];
  }
  for (std::uint32_t i = words * sizeof(W) + threadIdx.x; i < bytes; i += threads) sm[i] = src[i];
  if constexpr (sizeof(W) >= 4) __pipeline_wait_prior(0);
}
/// Shared -> global with W-wide accesses, the tail byte by byte.
template <class W>
__device__ inline void runtime_stage_out(std::byte* dst, const std::byte* sm, std::uint32_t bytes) {
  constexpr std::uint32_t threads = 256;
  const std::uint32_t words = bytes / sizeof(W);
  for (std::uint32_t i = threadIdx.x; i < words; i += threads) reinterpret_cast<W*>(dst)[i] = reinterpret_cast<const W*>(sm)[i];
  for (std::uint32_t i = words * sizeof(W) + threadIdx.x; i < bytes; i += threads) dst[i] = sm[i];
}

/// The block's threads over every unit of every field of the tile: consecutive threads take
/// consecutive units, field after field (thread t: the tile's units t, t + 256, ...). A thread
/// passes over the fields it has no unit of with a compare, so a tile costs each thread about
/// its own units, not a step per field.
template <bool ToSoa>
__device__ inline void runtime_block_units(const runtime_layout& L, std::byte* sm, index_t first, std::uint32_t m) {
  constexpr std::uint32_t threads = 256;
  std::uint32_t base = 0;
  for (std::uint32_t k = 0; k < L.count; ++k) {
    const std::uint32_t units = runtime_units(L, k, m);
    const std::uint32_t q0 = (threadIdx.x - base) & (threads - 1);  // the first unit w = base + q0 with w = threadIdx.x mod 256
    if (q0 < units) runtime_field_units<ToSoa>(L, sm, first, m, k, base, q0, threads);
    base += units;
  }
}

template <class W>
__global__ void __launch_bounds__(256) runtime_to_soa_kernel(const std::byte* aos, index_t n, runtime_layout L) {
  extern __shared__ uint4 runtime_shared[];
  std::byte* sm = reinterpret_cast<std::byte*>(runtime_shared);
  const index_t first = index_t(blockIdx.x) * L.tile;
  const std::uint32_t m = std::uint32_t(n - first < index_t(L.tile) ? n - first : index_t(L.tile));
  runtime_stage_in<W>(sm, aos + std::size_t(first) * L.stride, m * L.stride);
  __syncthreads();
  runtime_block_units<true>(L, sm, first, m);
}

template <class W>
__global__ void __launch_bounds__(256) runtime_to_aos_kernel(std::byte* aos, index_t n, runtime_layout L) {
  extern __shared__ uint4 runtime_shared[];
  std::byte* sm = reinterpret_cast<std::byte*>(runtime_shared);
  const index_t first = index_t(blockIdx.x) * L.tile;
  const std::uint32_t m = std::uint32_t(n - first < index_t(L.tile) ? n - first : index_t(L.tile));
  if (L.gaps) {
    // The tile is a multiple of 16 bytes (32 records at least): zeroed with 16-byte stores.
    const std::uint32_t words = std::uint32_t(std::size_t(L.tile) * L.stride / 16);
    for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) runtime_shared[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
  }
  runtime_block_units<false>(L, sm, first, m);
  __syncthreads();
  runtime_stage_out<W>(aos + std::size_t(first) * L.stride, sm, m * L.stride);
}

template <template <class> class Kernel, class P>
void runtime_launch(std::size_t word, P aos, index_t n, const runtime_layout& L, stream_t stream, const char* op) {
  const index_t blocks = (n + L.tile - 1) / L.tile;
  if (blocks > index_t(0x7fffffff)) throw size_error(std::string("strata: ") + op + ": too many records for one grid");
  const std::size_t smem = std::size_t(L.tile) * L.stride;
  const dim3 grid{static_cast<unsigned>(blocks)}, block{256u};
  switch (word) {
    case 16: Kernel<uint4>::launch(grid, block, smem, stream, aos, n, L); break;
    case 8: Kernel<uint2>::launch(grid, block, smem, stream, aos, n, L); break;
    case 4: Kernel<unsigned>::launch(grid, block, smem, stream, aos, n, L); break;
    case 2: Kernel<unsigned short>::launch(grid, block, smem, stream, aos, n, L); break;
    default: Kernel<unsigned char>::launch(grid, block, smem, stream, aos, n, L); break;
  }
  check_launch(op);
}
template <class W>
struct to_soa_launcher {
  static void launch(dim3 g, dim3 b, std::size_t smem, stream_t s, const std::byte* aos, index_t n, const runtime_layout& L) {
    runtime_to_soa_kernel<W><<<g, b, smem, s>>>(aos, n, L);
  }
};
template <class W>
struct to_aos_launcher {
  static void launch(dim3 g, dim3 b, std::size_t smem, stream_t s, std::byte* aos, index_t n, const runtime_layout& L) {
    runtime_to_aos_kernel<W><<<g, b, smem, s>>>(aos, n, L);
  }
};

/// Every buffer in device memory of one GPU; runs there.
inline int runtime_device(const char* op, const void* aos, const runtime_layout& L) {
  auto check = [&](const void* p, const std::string& what, int device) {
    const memory_location m = locate(p);
    if (m.space == memory_space::host)
      throw memory_space_error(std::string("strata: ") + op + ": " + what + " is in pageable host memory, which GPU kernels cannot read");
    if (m.space == memory_space::device && device >= 0 && m.device != device)
      throw device_error(std::string("strata: ") + op + ": " + what + " is on device " + std::to_string(m.device) +
                         " but the buffers before it are on device " + std::to_string(device));
    return m.space == memory_space::device ? m.device : device;
  };
  // The first buffer in device memory names the GPU; pinned AoS records leave it to the columns.
  int device = check(aos, "the AoS records", -1);
  for (std::uint32_t k = 0; k < L.count; ++k) device = check(L.column[k], "column " + std::to_string(k), device);
  return device;
}
#else
/// The host's turn at a tile's units: every unit of every field, lane numbers as a block's threads
/// would have them.
template <bool ToSoa>
void runtime_tile_units(const runtime_layout& L, std::byte* sm, index_t first, std::uint32_t m) {
  for (std::uint32_t k = 0, base = 0; k < L.count; base += runtime_units(L, k, m), ++k) runtime_field_units<ToSoa>(L, sm, first, m, k, base, 0, 1);
}

template <class Phase>
void runtime_emulate_tiles(index_t n, const runtime_layout& L, Phase&& phase) {
  const index_t tiles = (n + L.tile - 1) / L.tile;
  STRATA_PARALLEL_FOR_IF(tiles > 4)
  for (index_t b = 0; b < tiles; ++b) {
    thread_local std::vector<word16> shared;
    shared.resize((std::size_t(L.tile) * L.stride + 15) / 16);
    const index_t first = b * L.tile;
    phase(reinterpret_cast<std::byte*>(shared.data()), first, std::uint32_t(std::min<index_t>(L.tile, n - first)));
  }
}
#endif

}  // namespace detail

/// AoS records (`stride` bytes apart, n of them) to one column per field. Columns hold n elements
/// of their field's size, aligned to it. Asynchronous on `stream` on the CUDA backend.
inline void aos_to_soa(const void* aos, std::size_t stride, index_t n, cuda::std::span<const runtime_field> fields,
                       void* const* columns, stream_t stream = {}) {
  detail::runtime_layout L{};
  const std::size_t word = detail::runtime_prepare("aos_to_soa (runtime fields)", L, aos, stride, n, fields, columns);
  if (n == 0) return;
  const auto* src = static_cast<const std::byte*>(aos);
#if defined(STRATA_BACKEND_CUDA)
  detail::device_guard guard(detail::runtime_device("aos_to_soa (runtime fields)", aos, L));
  detail::runtime_launch<detail::to_soa_launcher>(word, src, n, L, stream, "aos_to_soa (runtime fields) kernel launch");
#else
  (void)word, (void)stream;
  detail::runtime_emulate_tiles(n, L, [&](std::byte* sm, index_t first, std::uint32_t m) {
    std::memcpy(sm, src + std::size_t(first) * L.stride, std::size_t(m) * L.stride);
    detail::runtime_tile_units<true>(L, sm, first, m);
  });
#endif
}

/// Columns (one per field, n elements each) to AoS records `stride` bytes apart; bytes of a record
/// that no field covers are written as zero.
inline void soa_to_aos(const void* const* columns, cuda::std::span<const runtime_field> fields, index_t n, void* aos,
                       std::size_t stride, stream_t stream = {}) {
  detail::runtime_layout L{};
  const std::size_t word = detail::runtime_prepare("soa_to_aos (runtime fields)", L, aos, stride, n, fields, columns);
  if (n == 0) return;
  auto* dst = static_cast<std::byte*>(aos);
#if defined(STRATA_BACKEND_CUDA)
  detail::device_guard guard(detail::runtime_device("soa_to_aos (runtime fields)", aos, L));
  detail::runtime_launch<detail::to_aos_launcher>(word, dst, n, L, stream, "soa_to_aos (runtime fields) kernel launch");
#else
  (void)word, (void)stream;
  detail::runtime_emulate_tiles(n, L, [&](std::byte* sm, index_t first, std::uint32_t m) {
    if (L.gaps) std::memset(sm, 0, std::size_t(L.tile) * L.stride);
    detail::runtime_tile_units<false>(L, sm, first, m);
    std::memcpy(dst + std::size_t(first) * L.stride, sm, std::size_t(m) * L.stride);
  });
#endif
}

}  // namespace strata
