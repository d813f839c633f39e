// Gather into SoA: dst record i = padded AoS record src[idx[i]]. A random gather of each 4-byte
// column costs a 32-byte memory sector per element; gathering whole padded records (one or two
// 16-byte loads each) costs one or two sectors per record. Each warp gathers a tile of records
// into its own slice of shared memory and writes them out column by column with 16-byte stores
// (the transposes' store phase), so a permutation of every column costs about two copies of the
// records instead of one sector per leaf per record. The host backend runs the same phases lane
// by lane.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/transpose.hpp>

#include <algorithm>
#include <string>

namespace strata::detail {

template <class T, class Tile, bool Masked, class I>
struct gather_tile {
  static constexpr std::size_t Stride = Tile::stride;
  static constexpr index_t R = Tile::records;
  static constexpr std::size_t access = Stride < 16 ? Stride : 16;  // padded records: a power of two up to 32, then 16-byte multiples
  static constexpr int accesses = int(Stride / access);
  static constexpr int per_lane = int((R + 31) / 32);

  /// Lane `lane`'s records of tile t, src[idx[t * R + r]] for r = lane, lane + 32, ..., into the
  /// warp's shared memory at r * Stride; every load is issued before the first store.
  STRATA_HD static void load(int lane, std::byte* sm, const std::byte* src, const I* idx, index_t n, index_t t) {
    vec::word_t<access> w[per_lane][accesses];
    STRATA_UNROLL
    for (int k = 0; k < per_lane; ++k) {
      const index_t r = index_t(lane) + 32 * k, i = t * R + r;
      if (r < R && i < n) {
        const std::byte* rec = src + std::size_t(idx[i]) * Stride;
        STRATA_UNROLL
        for (int a = 0; a < accesses; ++a) w[k][a] = vec::load<access>(rec + a * access);
      }
    }
    STRATA_UNROLL
    for (int k = 0; k < per_lane; ++k) {
      const index_t r = index_t(lane) + 32 * k, i = t * R + r;
      if (r < R && i < n) {
        STRATA_UNROLL
        for (int a = 0; a < accesses; ++a) std::memcpy(sm + r * Stride + a * access, &w[k][a], access);
      }
    }
  }
  /// The tile's records, now contiguous in shared memory, to the columns (records [t * R, ...)).
  template <class M>
  STRATA_HD static void store(int lane, const std::byte* sm, index_t n, const basic_view<T, M>& dst, index_t t) {
    aos_to_soa_tile<T, Tile, Masked>::store(lane, sm, nullptr, n, dst, 0, t);
  }
};

#if defined(STRATA_BACKEND_CUDA)
template <class T, class Tile, bool Masked, class I, class M>
__global__ void __launch_bounds__(Tile::threads, Tile::min_blocks)
    gather_kernel(const std::byte* src, const I* idx, index_t n, basic_view<T, M> dst) {
  __shared__ __align__(16) std::byte smem[Tile::warps][Tile::chunks * 16];
  const int lane = int(threadIdx.x % 32);
  std::byte* sm = smem[threadIdx.x / 32];
  const index_t tiles = (n + Tile::records - 1) / Tile::records, t = index_t(blockIdx.x) * Tile::warps + index_t(threadIdx.x / 32);
  if (t >= tiles) return;  // whole warps: no __syncwarp is skipped
  using tile = gather_tile<T, Tile, Masked, I>;
  tile::load(lane, sm, src, idx, n, t);
  __syncwarp();
  tile::store(lane, sm, n, dst, t);
}
#endif

/// dst records [0, n) = records src[idx[i]] of a padded AoS array (Stride bytes each).
template <class T, std::size_t Stride, class I, class M>
void gather_aos_to_soa(const std::byte* src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream) {
  if (n == 0) return;
  using tile = warp_tile<Stride>;
  auto run = [&]<bool Masked>() {
#if defined(STRATA_BACKEND_CUDA)
    gather_kernel<T, tile, Masked, I, M><<<transpose_grid<tile>(n), tile::threads, 0, stream>>>(src, idx, n, dst);
    check_launch("gather kernel launch");
#else
    (void)stream;
    using phases = gather_tile<T, tile, Masked, I>;
    emulate_warp_tiles<tile>(n, [&](int lane, std::byte* sm, index_t t) { phases::load(lane, sm, src, idx, n, t); },
                             [&](int lane, std::byte* sm, index_t t) { phases::store(lane, sm, n, dst, t); });
#endif
  };
  if (needs_mask(dst, 0, n)) run.template operator()<true>();
  else run.template operator()<false>();
}

}  // namespace strata::detail
