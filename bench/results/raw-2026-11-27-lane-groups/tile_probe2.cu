// Probe: AoS <-> SoA transposes of records over 32 bytes with tile shapes other than the library's
// warp tile (a tile shared by a whole block, more blocks per SM). Standalone; build line in run.sh.
#include <strata/container/soa_vector.hpp>
#include <strata/convert/transpose.hpp>


#include "fixtures/records.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sd = strata::detail;
using strata::index_t;

struct f12 { BOOST_HANA_DEFINE_STRUCT(f12, (std::array<float, 12>, f)); };
struct f16r { BOOST_HANA_DEFINE_STRUCT(f16r, (std::array<float, 16>, f)); };
struct f24 { BOOST_HANA_DEFINE_STRUCT(f24, (std::array<float, 24>, f)); };
struct f32r { BOOST_HANA_DEFINE_STRUCT(f32r, (std::array<float, 32>, f)); };
struct f48 { BOOST_HANA_DEFINE_STRUCT(f48, (std::array<float, 48>, f)); };
struct mix40 { BOOST_HANA_DEFINE_STRUCT(mix40, (double, a), (double, b), (std::array<float, 4>, c), (std::array<std::int16_t, 3>, d), (std::uint8_t, e)); };

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)

__global__ void count_diff(const unsigned* a, const unsigned* b, std::size_t words, unsigned long long* bad) {
  unsigned long long c = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += std::size_t(gridDim.x) * blockDim.x) c += a[i] != b[i];
  if (c) atomicAdd(bad, c);
}
static unsigned long long diff(const void* a, const void* b, std::size_t bytes) {
  unsigned long long* d; CK(cudaMalloc(&d, 8)); CK(cudaMemset(d, 0, 8));
  count_diff<<<1024, 256>>>(static_cast<const unsigned*>(a), static_cast<const unsigned*>(b), bytes / 4, d);
  unsigned long long h; CK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost)); CK(cudaFree(d)); return h;
}

template <class F>
static float time_ms(F&& f, int reps = 15) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

static double memcpy_gbps;

template <std::size_t S>
struct pad_mask { bool pad[S]; };
/// Random bytes (a hash of the position), padding bytes zero: what a round trip gives back.
template <std::size_t S>
__global__ void fill_records(std::byte* p, std::size_t bytes, pad_mask<S> m) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < bytes; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long h = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p[i] = m.pad[i % S] ? std::byte{0} : std::byte(h >> 17);
  }
}

template <class T, class Tile>
static void run(const char* rec, const char* name, index_t n, const std::byte* aos, std::byte* aos2, strata::soa_vector<T>& soa, double& best) {
  constexpr std::size_t S = sizeof(T);
  const double bytes = double(n) * double(S + strata::layout::record_descriptor<T>::packed_size);
  soa.resize_for_overwrite(std::size_t(n));
  auto v = soa.view();
  CK(cudaMemset(aos2, 0xff, std::size_t(n) * S));
  // to SoA with this tile, back with the library's, compare; then to AoS with this tile, compare
  sd::aos_bytes_to_soa<T, S, typename decltype(v)::mapping_type, Tile>(aos, n, v, 0, 0);
  sd::soa_to_aos_bytes<T, S>(soa.const_view(), 0, aos2, n, 0);
  CK(cudaDeviceSynchronize());
  const auto bad1 = diff(aos, aos2, std::size_t(n) * S);
  CK(cudaMemset(aos2, 0xff, std::size_t(n) * S));
  sd::soa_to_aos_bytes<T, S, typename decltype(v)::mapping_type, Tile>(soa.const_view(), 0, aos2, n, 0);
  CK(cudaDeviceSynchronize());
  const auto bad2 = diff(aos, aos2, std::size_t(n) * S);
  const float t1 = time_ms([&] { sd::aos_bytes_to_soa<T, S, typename decltype(v)::mapping_type, Tile>(aos, n, v, 0, 0); });
  const float t2 = time_ms([&] { sd::soa_to_aos_bytes<T, S, typename decltype(v)::mapping_type, Tile>(soa.const_view(), 0, aos2, n, 0); });
  int occ1 = 0, occ2 = 0;
  using M = typename decltype(v)::mapping_type;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ1, sd::aos_to_soa_kernel<T, Tile, false, M>, Tile::threads, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ2, sd::soa_to_aos_kernel<T, Tile, false, M>, Tile::threads, 0));
  cudaFuncAttributes fa1, fa2;
  CK(cudaFuncGetAttributes(&fa1, sd::aos_to_soa_kernel<T, Tile, false, M>));
  CK(cudaFuncGetAttributes(&fa2, sd::soa_to_aos_kernel<T, Tile, false, M>));
  std::printf("%-8s %-26s R=%4lld lanes=%3d thr=%3d | to_soa %.4f ms %.3f x memcpy (%3d regs, %d blk/SM) | to_aos %.4f ms %.3f (%3d regs, %d blk/SM) | bad %llu %llu\n",
              rec, name, (long long)Tile::records, Tile::lanes, Tile::threads, t1, bytes / t1 / 1e6 / memcpy_gbps, fa1.numRegs, occ1, t2,
              bytes / t2 / 1e6 / memcpy_gbps, fa2.numRegs, occ2, bad1, bad2);
  std::fflush(stdout);
}

template <class T>
static void record(const char* rec, int rounds) {
  constexpr std::size_t S = sizeof(T);
  const index_t n = index_t(1) << (S > 64 ? 24 : 26);
  std::byte *aos, *aos2;
  CK(cudaMalloc(&aos, std::size_t(n) * S)); CK(cudaMalloc(&aos2, std::size_t(n) * S));
  pad_mask<S> m;
  for (std::size_t b = 0; b < S; ++b) m.pad[b] = sd::padding_byte<T, S>[b];
  fill_records<S><<<4096, 256>>>(aos, std::size_t(n) * S, m);
  CK(cudaDeviceSynchronize());
  strata::soa_vector<T> soa{std::size_t(n)};
  constexpr index_t WR = sd::warp_tile_records<S>;
  constexpr int WW = sd::warp_tile_warps<S>;
  // the same tile with R2 records (a multiple of 16 and of 4 x 32 / ... : every lane busy)
  constexpr index_t R2 = std::min<index_t>(128, index_t(40000 / S) / 16 * 16);
  constexpr int W2 = int(std::clamp<std::size_t>(45000 / (((std::size_t(R2) * S + 15) / 16 + 1) * 16 + 128), 1, 4));
  double best = 0;
  for (int round = 0; round < rounds; ++round) {
    const std::string tag = std::string(rec);
    run<T, sd::warp_tile<T, S>>(tag.c_str(), "library (word swizzle)", n, aos, aos2, soa, best);
    run<T, sd::tile_shape<S, WR, 32, WW, 2>>(tag.c_str(), "R lib, none, 2 blk", n, aos, aos2, soa, best);
    run<T, sd::tile_shape<S, WR, 32, WW, 3>>(tag.c_str(), "R lib, none, 3 blk", n, aos, aos2, soa, best);
    if constexpr (S % 16 == 0) run<T, sd::tile_shape<S, WR, 32, WW, 3, 16, 0>>(tag.c_str(), "R lib, chunk swz, 3 blk", n, aos, aos2, soa, best);
    if constexpr (R2 != WR) {
      run<T, sd::tile_shape<S, R2, 32, W2, 2>>(tag.c_str(), "R2, none, 2 blk", n, aos, aos2, soa, best);
      run<T, sd::tile_shape<S, R2, 32, W2, 3>>(tag.c_str(), "R2, none, 3 blk", n, aos, aos2, soa, best);
      constexpr auto c = sd::tile_swizzle_choice<T, S, R2>;
      if constexpr (c.first != 0) {
        run<T, sd::tile_shape<S, R2, 32, W2, 2, c.first, c.second>>(tag.c_str(), "R2, chosen swz, 2 blk", n, aos, aos2, soa, best);
        run<T, sd::tile_shape<S, R2, 32, W2, 3, c.first, c.second>>(tag.c_str(), "R2, chosen swz, 3 blk", n, aos, aos2, soa, best);
      }
      if constexpr (S % 16 == 0) run<T, sd::tile_shape<S, R2, 32, W2, 3, 16, 0>>(tag.c_str(), "R2, chunk swz, 3 blk", n, aos, aos2, soa, best);
    }
  }
  CK(cudaFree(aos)); CK(cudaFree(aos2));
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s\n", p.name);
  {
    const std::size_t b = std::size_t(1) << 30;
    void *x, *y; CK(cudaMalloc(&x, b)); CK(cudaMalloc(&y, b));
    CK(cudaMemset(x, 1, b));
    const float t = time_ms([&] { CK(cudaMemcpyAsync(y, x, b, cudaMemcpyDeviceToDevice)); });
    memcpy_gbps = 2.0 * double(b) / t / 1e6;
    std::printf("cudaMemcpy D2D 1 GiB: %.4f ms, %.1f GB/s (read + write)\n", t, memcpy_gbps);
    CK(cudaFree(x)); CK(cudaFree(y));
  }
  record<f24>("f24", rounds);
  record<f32r>("f32", rounds);
  record<f48>("f48", rounds);
  record<strata_fixtures::big_record>("big96", rounds);
  record<strata_fixtures::padded128>("p128", rounds);
  record<f16r>("f16", rounds);
  record<mix40>("mix40", rounds);
  record<f12>("f12", rounds);
}
