// Probe: where the writing pass of strata's erase_if (7 fp32 columns, 2^26 records, about half
// removed, in place) spends its time, and what shortens it. The kernels mirror compact.hpp's
// (warp rounds of 32 adjacent records, ballot placement, kept records staged in shared memory and
// written with 16-byte stores) with switches:
//   ticket : tiles taken from an atomic counter (compact.hpp) or tile = blockIdx.x
//   early  : the tile's prefix (ends[t], counts[t]) and the flags of the tiles under its output are
//            read before its records arrive, the "loaded" flag is published while the others stage
//   R      : records a thread holds (4: compact.hpp; 8: twice the bytes in flight)
//   inplace: false writes into a second set of columns with no flags at all (the ceiling)
// Each row: restore (untimed), 256 MiB memset (L2 emptied), events around count + scan + write (or
// the write alone). Median of 15 after 3 warm-ups. Every variant's output is checked against the
// host's std::remove_if on every column. Also strata::erase_if itself (the library of the build;
// LIBRARY_ONLY=1: only that, 45 timed runs, mean and max too; BENCH_DATA=1: bench/lifecycle.cpp's records).
// Build (repository root): nvcc -I include -I . -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr
//   --extended-lambda --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu compact_probe.cu -lcuda
// probe-h100.txt / probe-h200.txt: its first version (no S switch); probe2-h200.txt: this one, 4824da8's library.
#include <cub/device/device_scan.cuh>
#include <strata/algorithm/compact.hpp>
#include <strata/container/soa_vector.hpp>
#include <chrono>
#include "fixtures/records.hpp"
#include "fixtures/random.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e = (x);                                                   \
    if (e != cudaSuccess) {                                                \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e));                  \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

constexpr int L = 7, T = 128, MASS = 6;
using ull = unsigned long long;
struct cols {
  float* c[L];
};

template <int R>
__global__ void __launch_bounds__(T) count_kernel(const float* mass, long n, ull* counts) {
  const long base = long(blockIdx.x) * T * R + threadIdx.x;
  unsigned c = 0;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const long i = base + long(k) * T;
    if (i < n && mass[i] >= 0.f) ++c;
  }
  c = __reduce_add_sync(0xffffffffu, c);
  __shared__ unsigned ws[T / 32];
  if (threadIdx.x % 32 == 0) ws[threadIdx.x / 32] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    ull s = 0;
    for (int w = 0; w < T / 32; ++w) s += ws[w];
    counts[blockIdx.x] = s;
  }
}

struct state {
  const ull* counts;
  const ull* ends;
  unsigned* loaded;
  ull* ticket;
  unsigned* mismatch;
};

template <int R>
struct smem {
  long tile_shared;
  int warp_kept[T / 32];
  int early_ok;
  __align__(16) float stage[L][T * R + 4];  // a column's kept floats (+ the 16-byte shift)
};

// S: how "loaded" flags are published and read. 0: __threadfence around volatile accesses
// (compact.hpp); 1: st.release.gpu / ld.acquire.gpu; 2: relaxed store (the tile's loads returned
// before the block barrier that precedes it) / ld.acquire.gpu.
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) { asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_relaxed(unsigned* p, unsigned v) { asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
template <int S>
__device__ __forceinline__ unsigned flag_of(const unsigned* p) {
  if constexpr (S == 0) return *reinterpret_cast<const volatile unsigned*>(p);
  else return ld_acquire(p);
}

template <int R, bool early, bool inplace, int S>
__device__ __forceinline__ void tile_body(const cols& in, const cols& out, long n, long t, const state& st, smem<R>& sm) {
  constexpr int warps = T / 32;
  constexpr long tile_records = long(T) * R;
  auto& warp_kept = sm.warp_kept;
  auto& early_ok = sm.early_ok;
  auto& stage = sm.stage;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long first = t * tile_records + long(warp * R) * 32 + lane;
  ull end_t = 0, count_t = 0;
  if constexpr (early) end_t = st.ends[t], count_t = st.counts[t];
  float r[R][L];
#pragma unroll
  for (int k = 0; k < R; ++k)
    if (first + long(k) * 32 < n)
#pragma unroll
      for (int l = 0; l < L; ++l) r[k][l] = in.c[l][first + long(k) * 32];
  if constexpr (early && inplace) {
    if (threadIdx.x == 0) {
      // Optimistic look at the tiles under this tile's output, while the records are on their way.
      const long total = long(count_t), prefix = long(end_t) - total;
      int ok = 1;
      if (total > 0) {
        const long e = (prefix + total - 1) / tile_records, last = e < t ? e : t - 1;
        for (long q = prefix / tile_records; q <= last; ++q)
          if (flag_of<S>(st.loaded + q) == 0u) ok = 0;
      }
      early_ok = ok;
    }
  }
  unsigned f = 0;
  int pos[R];
  int kept = 0;
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const bool kk = first + long(k) * 32 < n && r[k][MASS] >= 0.f;
    const unsigned b = __ballot_sync(0xffffffffu, kk);
    pos[k] = kept + __popc(b & below);
    kept += __popc(b);
    f |= unsigned(kk) << k;
  }
  if (lane == 0) warp_kept[warp] = kept;
  __syncthreads();
  int before = 0, total = 0;
#pragma unroll
  for (int w = 0; w < warps; ++w) {
    before += w < warp ? warp_kept[w] : 0;
    total += warp_kept[w];
  }
  if constexpr (!early) end_t = st.ends[t], count_t = st.counts[t];
  const long prefix = long(end_t) - total;
  if (threadIdx.x == 0) {
    if (ull(total) != count_t) atomicOr(st.mismatch, 1u);
    if constexpr (inplace) {
      if constexpr (S == 0) {
        __threadfence();
        *reinterpret_cast<volatile unsigned*>(st.loaded + t) = 1u;
      } else if constexpr (S == 1) {
        st_release(st.loaded + t, 1u);
      } else {
        st_relaxed(st.loaded + t, 1u);
      }
      bool wait = total > 0;
      if constexpr (early) wait = wait && !early_ok;
      if (wait) {
        const long e = (prefix + total - 1) / tile_records, last = e < t ? e : t - 1;
        for (long q = prefix / tile_records; q <= last; ++q)
          while (flag_of<S>(st.loaded + q) == 0u) __nanosleep(64);
      }
      if constexpr (S == 0) __threadfence();
    }
  }
  if constexpr (inplace && !early) __syncthreads();
  const int shift = int(prefix % 4);
#pragma unroll
  for (int k = 0; k < R; ++k)
    if (f & (1u << k))
#pragma unroll
      for (int l = 0; l < L; ++l) stage[l][shift + before + pos[k]] = r[k][l];
  __syncthreads();
  const int endp = shift + total;
#pragma unroll
  for (int l = 0; l < L; ++l) {
    float* col = out.c[l] + (prefix - shift);
    for (int c = threadIdx.x; c * 4 < endp; c += T) {
      const int lo = c * 4, hi = lo + 4;
      if (lo >= shift && hi <= endp) {
        *reinterpret_cast<float4*>(col + lo) = *reinterpret_cast<const float4*>(&stage[l][lo]);
      } else {
        for (int e = lo < shift ? shift : lo; e < (hi < endp ? hi : endp); ++e) col[e] = stage[l][e];
      }
    }
  }
}

// persistent: a grid of resident blocks, block b taking tiles b, b + grid, ... in increasing order
// (every tile a tile waits for belongs to a resident block that only waits for earlier tiles).
template <int R, bool ticket, bool early, bool inplace, bool persistent = false, int S = 0>
__global__ void __launch_bounds__(T) write_kernel(cols in, cols out, long n, long tiles, state st) {
  __shared__ smem<R> sm;
  if constexpr (persistent) {
    for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
      tile_body<R, early, inplace, S>(in, out, n, t, st, sm);
      __syncthreads();
    }
  } else if constexpr (ticket) {
    if (threadIdx.x == 0) sm.tile_shared = long(atomicAdd(st.ticket, 1ull));
    __syncthreads();
    const long t = sm.tile_shared;
    if (t >= tiles) return;
    tile_body<R, early, inplace, S>(in, out, n, t, st, sm);
  } else {
    tile_body<R, early, inplace, S>(in, out, n, long(blockIdx.x), st, sm);
  }
}

struct bufs {
  long n;
  cols pristine, work, out;
  ull *counts, *ends;
  unsigned* loaded;
  ull* ticket;
  unsigned* mismatch;
  void* scan_tmp;
  size_t scan_bytes;
  void* flush;
  cudaEvent_t a, b;
};

template <int R>
long tiles_of(long n) {
  return (n + T * R - 1) / (T * R);
}

// Runs the whole compaction (count, scan, write) or, with write_only, only the writing pass (the
// counts and ends of an earlier untimed count + scan). Returns milliseconds.
template <int R, bool ticket, bool early, bool inplace, bool persistent = false, int S = 0>
float run(bufs& B, bool write_only) {
  const long tiles = tiles_of<R>(B.n);
  for (int l = 0; l < L; ++l) CK(cudaMemcpyAsync(B.work.c[l], B.pristine.c[l], B.n * 4, cudaMemcpyDeviceToDevice));
  auto count_scan = [&] {
    count_kernel<R><<<unsigned(tiles), T>>>(B.work.c[MASS], B.n, B.counts);
    size_t bytes = B.scan_bytes;
    CK(cub::DeviceScan::InclusiveSum(B.scan_tmp, bytes, B.counts, B.ends, tiles));
  };
  if (write_only) count_scan();
  CK(cudaMemsetAsync(B.loaded, 0, tiles * 4));
  CK(cudaMemsetAsync(B.ticket, 0, 16));
  CK(cudaMemsetAsync(B.flush, 0, size_t(256) << 20));
  CK(cudaEventRecord(B.a));
  if (!write_only) {
    CK(cudaMemsetAsync(B.loaded, 0, tiles * 4));
    count_scan();
  }
  unsigned grid = unsigned(tiles);
  if (persistent) {
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, write_kernel<R, ticket, early, inplace, persistent, S>, T, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    grid = unsigned(std::min<long>(tiles, long(per_sm) * sms));
  }
  write_kernel<R, ticket, early, inplace, persistent, S><<<grid, T>>>(B.work, inplace ? B.work : B.out, B.n, tiles,
                                                                   state{B.counts, B.ends, B.loaded, B.ticket, B.mismatch});
  CK(cudaEventRecord(B.b));
  CK(cudaEventSynchronize(B.b));
  CK(cudaGetLastError());
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, B.a, B.b));
  return ms;
}

template <int R, bool ticket, bool early, bool inplace, bool persistent = false, int S = 0>
void row(bufs& B, const std::vector<std::vector<float>>& expect, const char* name, double bytes, double memcpy_ms) {
  for (int wo = 0; wo < 2; ++wo) {
    std::vector<float> ms;
    for (int i = 0; i < 18; ++i) ms.push_back(run<R, ticket, early, inplace, persistent, S>(B, wo == 1));
    ms.erase(ms.begin(), ms.begin() + 3);
    std::sort(ms.begin(), ms.end());
    const float med = ms[ms.size() / 2];
    // check the last run
    unsigned mm = 0;
    CK(cudaMemcpy(&mm, B.mismatch, 4, cudaMemcpyDeviceToHost));
    const cols& o = inplace ? B.work : B.out;
    bool ok = mm == 0;
    std::vector<float> got(expect[0].size());
    for (int l = 0; l < L && ok; ++l) {
      CK(cudaMemcpy(got.data(), o.c[l], got.size() * 4, cudaMemcpyDeviceToHost));
      ok = std::memcmp(got.data(), expect[l].data(), got.size() * 4) == 0;
    }
    std::printf("%-34s %-10s %8.3f ms  min %8.3f  x memcpy %.3f  %s\n", name, wo ? "write" : "all", med, ms.front(),
                wo ? 0.0 : memcpy_ms / med, ok ? "ok" : "WRONG");
  }
}

struct rec7 {
  BOOST_HANA_DEFINE_STRUCT(rec7, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, mass));
};
struct negative_mass {
  STRATA_HD bool operator()(const rec7& p) const { return p.mass < 0; }
};

// strata::erase_if itself, same method; also the host's wall time of the call.
void library_row(bufs& B, const std::vector<std::vector<float>>& expect, double memcpy_ms) {
  strata::soa_vector<rec7> work;
  work.resize_for_overwrite(std::size_t(B.n));
  std::vector<float> ms, wall;
  for (int i = 0; i < 48; ++i) {
    work.resize(std::size_t(B.n));
    for (int l = 0; l < L; ++l) CK(cudaMemcpyAsync(work.view().column_bytes(l), B.pristine.c[l], B.n * 4, cudaMemcpyDeviceToDevice));
    CK(cudaMemsetAsync(B.flush, 0, size_t(256) << 20));
    CK(cudaEventRecord(B.a));
    const auto h0 = std::chrono::steady_clock::now();
    (void)strata::erase_if(work, negative_mass{});
    const auto h1 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(B.b));
    CK(cudaEventSynchronize(B.b));
    float m;
    CK(cudaEventElapsedTime(&m, B.a, B.b));
    if (i >= 3) ms.push_back(m), wall.push_back(std::chrono::duration<float, std::milli>(h1 - h0).count());
  }
  double mean = 0;
  for (float m : ms) mean += m / ms.size();
  std::sort(ms.begin(), ms.end());
  std::sort(wall.begin(), wall.end());
  std::printf("strata::erase_if runs: mean %.3f ms, max %.3f ms\n", mean, ms.back());
  bool ok = work.size() == expect[0].size();
  std::vector<float> got(expect[0].size());
  for (int l = 0; l < L && ok; ++l) {
    CK(cudaMemcpy(got.data(), work.view().column_bytes(l), got.size() * 4, cudaMemcpyDeviceToHost));
    ok = std::memcmp(got.data(), expect[l].data(), got.size() * 4) == 0;
  }
  std::printf("%-34s %-10s %8.3f ms  min %8.3f  x memcpy %.3f  %s  (host wall in the call %.3f ms)\n", "strata::erase_if (library)", "all",
              ms[ms.size() / 2], ms.front(), memcpy_ms / ms[ms.size() / 2], ok ? "ok" : "WRONG", wall[wall.size() / 2]);
}

int main(int argc, char** argv) {
  bufs B{};
  B.n = argc > 1 ? std::atol(argv[1]) : (1l << 26);
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::vector<float>> host(L, std::vector<float>(B.n));
  if (std::getenv("BENCH_DATA")) {  // bench/lifecycle.cpp's particles: strata_bench::records<particle>(n, 99)
    const auto ps = strata_fixtures::seeded_records<strata_fixtures::particle>(std::size_t(B.n), 0x5eedu, 99);
    for (long i = 0; i < B.n; ++i) {
      const float* f = &ps[i].x;
      for (int l = 0; l < L; ++l) host[l][i] = f[l];
    }
  } else {
    for (auto& c : host)
      for (auto& x : c) x = u(g);
  }
  std::vector<std::vector<float>> expect(L);
  for (long i = 0; i < B.n; ++i)
    if (host[MASS][i] >= 0.f)
      for (int l = 0; l < L; ++l) expect[l].push_back(host[l][i]);
  const long kept = long(expect[0].size());

  for (int l = 0; l < L; ++l) {
    CK(cudaMalloc(&B.pristine.c[l], B.n * 4));
    CK(cudaMalloc(&B.work.c[l], B.n * 4));
    CK(cudaMalloc(&B.out.c[l], B.n * 4));
    CK(cudaMemcpy(B.pristine.c[l], host[l].data(), B.n * 4, cudaMemcpyHostToDevice));
  }
  const long tiles_max = tiles_of<4>(B.n);
  CK(cudaMalloc(&B.counts, tiles_max * 8));
  CK(cudaMalloc(&B.ends, tiles_max * 8));
  CK(cudaMalloc(&B.loaded, tiles_max * 4));
  CK(cudaMalloc(&B.ticket, 16));
  CK(cudaMalloc(&B.mismatch, 4));
  CK(cudaMemset(B.mismatch, 0, 4));
  CK(cub::DeviceScan::InclusiveSum(nullptr, B.scan_bytes, B.counts, B.ends, tiles_max));
  CK(cudaMalloc(&B.scan_tmp, B.scan_bytes));
  CK(cudaMalloc(&B.flush, size_t(256) << 20));
  CK(cudaEventCreate(&B.a));
  CK(cudaEventCreate(&B.b));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  // cudaMemcpy reference: one d2d copy of as many bytes as the compaction must move
  const double bytes = double(B.n) * 28 + double(kept) * 28;
  void *s = nullptr, *d = nullptr;
  const size_t mb = size_t(bytes / 2);
  CK(cudaMalloc(&s, mb));
  CK(cudaMalloc(&d, mb));
  std::vector<float> cm;
  for (int i = 0; i < 18; ++i) {
    CK(cudaMemsetAsync(B.flush, 0, size_t(256) << 20));
    CK(cudaEventRecord(B.a));
    CK(cudaMemcpyAsync(d, s, mb, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(B.b));
    CK(cudaEventSynchronize(B.b));
    float ms;
    CK(cudaEventElapsedTime(&ms, B.a, B.b));
    if (i >= 3) cm.push_back(ms);
  }
  std::sort(cm.begin(), cm.end());
  const double memcpy_ms = cm[cm.size() / 2];
  std::printf("%s, n %ld, kept %ld, bytes %.3f GB, memcpy of them %.3f ms (%.0f GB/s)\n", p.name, B.n, kept, bytes / 1e9, memcpy_ms,
              bytes / memcpy_ms / 1e6);
  library_row(B, expect, memcpy_ms);
  if (std::getenv("LIBRARY_ONLY")) return 0;  // the library call alone (48 runs)
  row<4, true, false, true>(B, expect, "R4 ticket late fence (compact.hpp)", bytes, memcpy_ms);
  row<4, true, true, true>(B, expect, "R4 ticket early fence", bytes, memcpy_ms);
  row<4, true, true, true, false, 1>(B, expect, "R4 ticket early release/acquire", bytes, memcpy_ms);
  row<4, true, true, true, false, 2>(B, expect, "R4 ticket early relaxed/acquire", bytes, memcpy_ms);
  row<8, true, true, true>(B, expect, "R8 ticket early fence", bytes, memcpy_ms);
  row<8, true, true, true, false, 1>(B, expect, "R8 ticket early release/acquire", bytes, memcpy_ms);
  row<8, true, true, true, false, 2>(B, expect, "R8 ticket early relaxed/acquire", bytes, memcpy_ms);
  row<8, false, true, true, false, 1>(B, expect, "R8 blockIdx early release/acquire", bytes, memcpy_ms);
  row<4, false, true, false>(B, expect, "R4 out of place (no flags)", bytes, memcpy_ms);
  row<8, false, true, false>(B, expect, "R8 out of place (no flags)", bytes, memcpy_ms);
  library_row(B, expect, memcpy_ms);
  return 0;
}
