// AoS <-> SoA transposition of one run of records, and the argument checks its callers share.
// On the device: each warp moves tiles of records between the AoS bytes and its own slice of shared
// memory with coalesced 16-byte accesses, and between shared memory and each column with 16-byte
// stores or loads. AoS pointers need only the record's natural alignment: 16-byte chunks that
// reach past the array's ends move byte by byte, as do chunks a tile shares with its neighbour on
// the output side (so no warp writes another warp's bytes).
#pragma once

#include <strata/config.hpp>

#include <strata/container/soa_view.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>

#include <string>

namespace strata::detail {

#if defined(STRATA_BACKEND_CUDA)
/// Every warp transposes its own tile: the tile's AoS bytes go through a slice of shared memory that
/// only that warp touches, so warps never wait for each other (__syncwarp, no __syncthreads). One
/// tile per warp and a grid of all tiles: small blocks and a register bound that keeps six of them
/// per SM let the GPU hold many tiles' loads in flight. On the H200 that reached 0.98-0.99 of a
/// copy where warps looping over tiles with the next tile's loads in registers reached 0.92-0.95
/// (bench/results/nvidia-h200-2026-11-22-experiments.md, run 9).
template <std::size_t Stride>
struct warp_tile {
  static constexpr std::size_t stride = Stride;
  /// Records per tile: a multiple of 128 (one 16-byte vector of a 4-byte column per lane) near
  /// 4 KiB of records; fewer for records over 32 bytes (at most 8 KiB). Always a multiple of 16, so
  /// every column's part of a tile starts on a 16-byte boundary.
  static constexpr index_t records =
      Stride <= 32 ? index_t(4096 / Stride) / 128 * 128 : std::clamp<index_t>(index_t(8192 / Stride) / 16 * 16, 16, 128);
  /// 16-byte chunks a tile can touch: one more than its bytes need when the AoS side is not
  /// 16-byte aligned.
  static constexpr std::size_t chunks = (std::size_t(records) * Stride + 15) / 16 + 1;
  static constexpr int chunks_per_lane = int((chunks + 31) / 32);
  static constexpr int warps = 4;
  static constexpr int threads = 32 * warps;
  /// Blocks per SM the register allocation must allow (__launch_bounds__): six (80 registers) for
  /// records up to 32 bytes, measured with 24- and 28-byte records; two for larger records, whose
  /// tiles take more registers per lane.
  static constexpr int min_blocks = Stride <= 32 ? 6 : 2;
};

/// Column I of a tile of R records moves in units of whole 16-byte vectors: u records, v vectors.
template <class T, std::size_t I, index_t R>
struct column_unit {
  using field = reflect::field_type_t<T, I>;
  static constexpr std::size_t u = 16 / std::gcd(sizeof(field), std::size_t(16));
  static constexpr std::size_t v = u * sizeof(field) / 16;
  static constexpr int per_lane = int((std::size_t(R) / u + 31) / 32);
  static constexpr std::size_t words = std::size_t(per_lane) * v;  // registers (x4) per lane
};
/// Lane k handles records k*u .. k*u+u-1 of a column, so at a given step the lanes of a warp touch
/// shared memory u*Stride bytes apart and lanes `period` apart hit the same bank. Where that
/// repeats within a warp (period < 32), each group of `period` lanes starts at a different record
/// of its unit, which spreads the accesses over more banks. 32: no rotation.
constexpr int rotation_period(std::size_t u, std::size_t stride) {
  if (u > 4 || (u * stride) % 4 != 0) return 32;
  return 32 / int(std::gcd(u * stride / 4, std::size_t(32)));
}
/// Which record of its unit lane `lane` handles at step j.
__device__ inline int rotated(int j, int lane, int period, int u) { return period >= 32 ? j : (j + lane / period) & (u - 1); }

template <class T, index_t R, std::size_t I>
constexpr std::size_t column_word_offset() {
  std::size_t off = 0;
  [&]<std::size_t... J>(std::index_sequence<J...>) { ((off += J < I ? column_unit<T, J, R>::words : 0), ...); }(
      std::make_index_sequence<reflect::field_count<T>>{});
  return off;
}
template <class T, index_t R>
inline constexpr std::size_t column_words = column_word_offset<T, R, reflect::field_count<T>>();

/// padding_byte<T, Stride>[b]: byte b of a Stride-byte record holds no field of T.
template <class T, std::size_t Stride>
inline constexpr auto padding_byte = [] {
  std::array<bool, Stride> pad{};
  for (auto& p : pad) p = true;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((std::fill_n(pad.begin() + reflect::field_offset<T, I>(), sizeof(reflect::field_type_t<T, I>), false)), ...);
  }(std::make_index_sequence<reflect::field_count<T>>{});
  return pad;
}();

/// Where a warp's tile lies: records [t * R, t * R + count), AoS bytes [gbegin, gend), and the
/// 16-byte chunks from w0 that cover them (chunk c holds bytes w0 + 16c .. w0 + 16c + 15).
struct tile_span {
  index_t count;
  std::uintptr_t gbegin, gend, w0;
  std::size_t chunks;
  template <std::size_t Stride, index_t R>
  __device__ static tile_span of(std::uintptr_t abegin, index_t n, index_t t) {
    tile_span s;
    s.count = n - t * R < R ? n - t * R : R;
    s.gbegin = abegin + std::uintptr_t(t * R) * Stride;
    s.gend = s.gbegin + std::uintptr_t(s.count) * Stride;
    s.w0 = s.gbegin & ~std::uintptr_t(15);
    s.chunks = (s.gend - s.w0 + 15) / 16;
    return s;
  }
};

/// AoS (records of Stride bytes; Stride = sizeof(T) or the padded size) -> SoA columns, from dst
/// record `first` on. One tile per warp, no loop over tiles: a loop kept its loop-carried state in
/// registers (the mixed record's SoA -> AoS kernel: 80 registers with it, 56 without; 0.91 against
/// 0.99 of a copy, run 10 of the experiments file).
template <class T, class Tile>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    aos_to_soa_kernel(const std::byte* src, index_t n, soa_view<T> dst, index_t first) {
  using tile = Tile;
  constexpr std::size_t Stride = Tile::stride;
  constexpr index_t R = tile::records;
  constexpr int C = tile::chunks_per_lane;
  __shared__ __align__(16) std::byte smem[tile::warps][tile::chunks * 16];
  const int lane = int(threadIdx.x % 32);
  std::byte* sm = smem[threadIdx.x / 32];
  const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(src), aend = abegin + std::uintptr_t(n) * Stride;
  const index_t tiles = (n + R - 1) / R, t = index_t(blockIdx.x) * tile::warps + index_t(threadIdx.x / 32);
  if (t >= tiles) return;  // whole warps: no __syncwarp is skipped
  // A chunk is loaded whole when it lies inside the array; the array's first and last chunks
  // (reaching past its ends) move byte by byte.
  auto whole = [&](std::uintptr_t a) { return a >= abegin && a + 16 <= aend; };
  const tile_span s = tile_span::of<Stride, R>(abegin, n, t);
  vec::word16 w[C];  // every load of the tile issued before the first shared-memory store
  STRATA_UNROLL
  for (int j = 0; j < C; ++j) {
    const std::size_t c = std::size_t(lane + 32 * j);
    const std::uintptr_t a = s.w0 + c * 16;
    if (c < s.chunks && whole(a)) w[j] = vec::load<16>(src + (a - abegin));
  }
  STRATA_UNROLL
  for (int j = 0; j < C; ++j) {
    const std::size_t c = std::size_t(lane + 32 * j);
    const std::uintptr_t a = s.w0 + c * 16;
    if (c >= s.chunks) break;
    if (whole(a)) {
      vec::store_local(sm + c * 16, w[j]);
    } else {
      const std::uintptr_t lo = std::max(a, s.gbegin), hi = std::min(a + 16, s.gend);
      for (std::uintptr_t b = lo; b < hi; ++b) sm[c * 16 + (b - a)] = src[b - abegin];
    }
  }
  __syncwarp();
  const std::byte* rec = sm + (s.gbegin - s.w0);
  reflect::for_each_field<T>([&](auto f) {
    constexpr std::size_t I = decltype(f)::value;
    using cu = column_unit<T, I, R>;
    using F = typename cu::field;
    constexpr std::size_t off = reflect::field_offset<T, I>();
    STRATA_UNROLL
    for (int q = 0; q < cu::per_lane; ++q) {
      const index_t r0 = index_t(lane + 32 * q) * index_t(cu::u);
      const index_t row = first + t * R + r0;
      if (r0 >= s.count || row + index_t(cu::u) > dst.capacity()) break;  // capacity: whole units in containers
      constexpr int period = rotation_period(cu::u, Stride);
      F lanes[cu::u];
      STRATA_UNROLL
      for (int j = 0; j < int(cu::u); ++j) {
        const int jj = rotated(j, lane, period, int(cu::u));
        F value;
        if (r0 + jj < s.count) value = *reinterpret_cast<const F*>(rec + (r0 + jj) * Stride + off);
        else std::memset(static_cast<void*>(&value), 0, sizeof(F));  // padding lanes past the last record stay zero
        if constexpr (period >= 32) {
          lanes[j] = value;
        } else {
          STRATA_UNROLL
          for (int q2 = 0; q2 < int(cu::u); ++q2)
            if (q2 == jj) lanes[q2] = value;  // selects: the array stays in registers
        }
      }
      vec::word16 words[cu::v];
      std::memcpy(words, lanes, sizeof lanes);
      auto* col = reinterpret_cast<std::byte*>(dst.template column_data<I>() + row);
      STRATA_UNROLL
      for (std::size_t j = 0; j < cu::v; ++j) vec::store<16>(col + j * 16, words[j]);
    }
  });
}

/// SoA columns from src record `first` on -> AoS records of Stride bytes (padding bytes zero). One
/// tile per warp, as aos_to_soa_kernel.
template <class T, class Tile>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    soa_to_aos_kernel(soa_view<const T> src, index_t first, std::byte* dst, index_t n) {
  using tile = Tile;
  constexpr std::size_t Stride = Tile::stride;
  constexpr index_t R = tile::records;
  __shared__ __align__(16) std::byte smem[tile::warps][tile::chunks * 16];
  const int lane = int(threadIdx.x % 32);
  std::byte* sm = smem[threadIdx.x / 32];
  const std::uintptr_t abegin = reinterpret_cast<std::uintptr_t>(dst);
  const index_t tiles = (n + R - 1) / R, t = index_t(blockIdx.x) * tile::warps + index_t(threadIdx.x / 32);
  if (t >= tiles) return;  // whole warps: no __syncwarp is skipped
  // Every column's vectors of the tile, loaded into registers before any is used.
  vec::word16 w[column_words<T, R>];
  const index_t count = n - t * R < R ? n - t * R : R;
  reflect::for_each_field<T>([&](auto f) {
    constexpr std::size_t I = decltype(f)::value;
    using cu = column_unit<T, I, R>;
    constexpr std::size_t base = column_word_offset<T, R, I>();
    STRATA_UNROLL
    for (int q = 0; q < cu::per_lane; ++q) {
      const index_t r0 = index_t(lane + 32 * q) * index_t(cu::u);
      const index_t row = first + t * R + r0;
      if (r0 >= count || row + index_t(cu::u) > src.capacity()) break;
      auto* col = reinterpret_cast<const std::byte*>(src.template column_data<I>() + row);
      STRATA_UNROLL
      for (std::size_t j = 0; j < cu::v; ++j) w[base + q * cu::v + j] = vec::load<16>(col + j * 16);
    }
  });
  const tile_span s = tile_span::of<Stride, R>(abegin, n, t);
  std::byte* rec = sm + (s.gbegin - s.w0);
  if constexpr (layout::record_descriptor<T>::packed_size < Stride) {
    // Padding bytes (between fields, after the last, and up to Stride) are written as zeros;
    // only those bytes, so no field byte is written twice.
    for (index_t i = lane; i < s.count; i += 32)
      [&]<std::size_t... B>(std::index_sequence<B...>) {
        ((padding_byte<T, Stride>[B] ? void(rec[i * Stride + B] = std::byte{0}) : void()), ...);
      }(std::make_index_sequence<Stride>{});
  }
  reflect::for_each_field<T>([&](auto f) {
    constexpr std::size_t I = decltype(f)::value;
    using cu = column_unit<T, I, R>;
    using F = typename cu::field;
    constexpr std::size_t base = column_word_offset<T, R, I>(), off = reflect::field_offset<T, I>();
    STRATA_UNROLL
    for (int q = 0; q < cu::per_lane; ++q) {
      const index_t r0 = index_t(lane + 32 * q) * index_t(cu::u);
      if (r0 >= s.count || first + t * R + r0 + index_t(cu::u) > src.capacity()) break;
      constexpr int period = rotation_period(cu::u, Stride);
      F lanes[cu::u];
      std::memcpy(static_cast<void*>(lanes), &w[base + q * cu::v], sizeof lanes);
      STRATA_UNROLL
      for (int j = 0; j < int(cu::u); ++j) {
        const int jj = rotated(j, lane, period, int(cu::u));
        F value = lanes[j];
        if constexpr (period < 32) {
          STRATA_UNROLL
          for (int q2 = 0; q2 < int(cu::u); ++q2)
            if (q2 == jj) value = lanes[q2];  // selects: the array stays in registers
        }
        if (r0 + jj < s.count) *reinterpret_cast<F*>(rec + (r0 + jj) * Stride + off) = value;
      }
    }
  });
  __syncwarp();
  // Whole chunks of this tile go out as 16-byte stores; a chunk shared with the neighbouring
  // tile (or reaching past the array) is written byte by byte, only this tile's bytes.
  for (std::size_t c = std::size_t(lane); c < s.chunks; c += 32) {
    const std::uintptr_t a = s.w0 + c * 16;
    if (a >= s.gbegin && a + 16 <= s.gend) {
      vec::store<16>(dst + (a - abegin), vec::load_local(sm + c * 16));
    } else {
      const std::uintptr_t lo = std::max(a, s.gbegin), hi = std::min(a + 16, s.gend);
      for (std::uintptr_t b = lo; b < hi; ++b) dst[b - abegin] = sm[c * 16 + (b - a)];
    }
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
/// Blocks for a warp-tiled transpose: one tile per warp.
template <class Tile>
int transpose_grid(index_t n) {
  using tile = Tile;
  const index_t tiles = (n + tile::records - 1) / tile::records, blocks = (tiles + tile::warps - 1) / tile::warps;
  if (blocks > index_t(0x7fffffff))
    throw size_error("strata: " + std::to_string(n) + " records need more than 2^31 - 1 blocks of " +
                     std::to_string(tile::warps * tile::records) + " records each");
  return int(std::max<index_t>(blocks, 1));
}
#endif

/// Stride-byte records at src -> dst records [first, first + n).
template <class T, std::size_t Stride>
void aos_bytes_to_soa(const std::byte* src, index_t n, const soa_view<T>& dst, index_t first, stream_t stream) {
  check_stream(stream, "aos_to_soa");
  if (n == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  using tile = warp_tile<Stride>;
  aos_to_soa_kernel<T, tile><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, n, dst, first);
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
  using tile = warp_tile<Stride>;
  soa_to_aos_kernel<T, tile><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, first, dst, n);
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
