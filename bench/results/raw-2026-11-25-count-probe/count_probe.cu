// Probe: erase_if's counting pass (strata::detail::compact_count_kernel, one tile of
// compact_threads * compact_records records a block, a grid of all tiles) against the same tile body
// in a loop over tiles (block b takes tiles b, b + grid, ...) with a grid of `waves` times the blocks
// an SM holds at once (occupancy API) times the SMs. Records and predicate as erase_sweep.cu of
// raw-2026-11-25-erase_if-pass (first byte of leaf 0 below 128: half removed), 1 GiB of columns.
// Per kernel: 256 MiB memset, events, median of 9 after 2 warm-ups; counts compared with the
// library kernel's. GB/s counts the bytes of leaf 0 (what the predicate reads).
// Build (repository root): nvcc -I include -I . -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr
//   --extended-lambda --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu count_probe.cu -lcuda
#include <strata/algorithm/compact.hpp>
#include <strata/container/soa_vector.hpp>

#include "fixtures/random.hpp"
#include "fixtures/records.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace sd = strata::detail;

struct first_byte_below {
  unsigned threshold;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    unsigned char b;
    memcpy(&b, &strata::reflect::leaf<0>(r), 1);
    return b < threshold;
  }
};

// The library's tile body in a loop over tiles; consecutive tiles use alternate warp-sum slots.
template <class InView, class Keep>
__global__ void __launch_bounds__(sd::compact_threads) looped_count(InView in, Keep keep, unsigned long long* counts, long long tiles) {
  using record = typename InView::value_type;
  constexpr int W = sd::compact_records<record>;
  __shared__ unsigned warp_sums[2][sd::compact_threads / 32];
  int parity = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x, parity ^= 1) {
    const strata::index_t base = strata::index_t(t) * sd::compact_threads * W + threadIdx.x;
    unsigned c = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const strata::index_t i = base + strata::index_t(k) * sd::compact_threads;
      if (i < in.size() && keep(in.load(i))) ++c;
    }
    c = __reduce_add_sync(0xffffffffu, c);
    if (threadIdx.x % 32 == 0) warp_sums[parity][threadIdx.x / 32] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long sum = 0;
      for (int w = 0; w < sd::compact_threads / 32; ++w) sum += warp_sums[parity][w];
      counts[t] = sum;
    }
  }
}

void* flush() {
  static void* p = [] { void* q; cudaMalloc(&q, size_t(256) << 20); return q; }();
  return p;
}

template <class F>
float median_ms(F&& launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < 11; ++i) {
    cudaMemsetAsync(flush(), 0, size_t(256) << 20);
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float m;
    cudaEventElapsedTime(&m, a, b);
    if (i >= 2) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <class T>
void probe(const char* name) {
  std::size_t bytes_per = 0;
  for (std::size_t s : strata::soa_layout<T>::leaf_sizes) bytes_per += s;
  const std::size_t n = (std::size_t(1) << 30) / bytes_per;
  const strata::soa_vector<T> v(strata_fixtures::seeded_records<T>(n, 0x5eedu, 7));
  const auto view = v.view();
  const first_byte_below keep{128};
  constexpr int W = sd::compact_records<T>;
  const long long tiles = (static_cast<long long>(n) + sd::compact_threads * W - 1) / (sd::compact_threads * W);
  unsigned long long *ref, *got;
  cudaMalloc(&ref, tiles * 8), cudaMalloc(&got, tiles * 8);
  const double leaf0 = double(n) * double(strata::soa_layout<T>::leaf_sizes[0]);
  const float lib = median_ms([&] { sd::compact_count_kernel<<<unsigned(tiles), sd::compact_threads>>>(view, keep, ref); });
  std::vector<unsigned long long> want(tiles), have(tiles);
  cudaMemcpy(want.data(), ref, tiles * 8, cudaMemcpyDeviceToHost);
  std::printf("%-16s W %2d tiles %8lld  library (grid of all tiles) %.4f ms %7.1f GB/s of leaf 0\n", name, W, tiles, lib, leaf0 / lib / 1e6);
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, looped_count<decltype(view), first_byte_below>, sd::compact_threads, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int waves : {1, 2, 4, 8}) {
    const long long grid = std::min<long long>(tiles, (long long)waves * per_sm * sms);
    cudaMemset(got, 0xff, tiles * 8);
    const float t = median_ms([&] { looped_count<<<unsigned(grid), sd::compact_threads>>>(view, keep, got, tiles); });
    cudaMemcpy(have.data(), got, tiles * 8, cudaMemcpyDeviceToHost);
    std::printf("%-16s looped, %d x %d blocks/SM x %d SMs = %lld blocks: %.4f ms %7.1f GB/s  %.2fx library  %s\n", name, waves, per_sm, sms, grid, t,
                leaf0 / t / 1e6, lib / t, have == want ? "counts equal" : "COUNTS DIFFER");
  }
  cudaFree(ref), cudaFree(got);
}

int main() {
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s\n", p.name);
  probe<strata_fixtures::particle>("particle");
  probe<strata_fixtures::two_floats>("two_floats");
  probe<strata_fixtures::three_bytes>("three_bytes");
  probe<strata_fixtures::mixed>("mixed (nested)");
  probe<strata_fixtures::big_record>("big_record");
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
