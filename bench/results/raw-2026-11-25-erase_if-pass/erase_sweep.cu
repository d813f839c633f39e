// Sweep: strata::erase_if over record types and removed fractions the benchmark does not use, each
// against cudaMemcpy of the bytes it must move (every record read once, the kept ones written once).
// Records of fixtures/records.hpp with about 1 GiB of columns each; the predicate removes a record when
// the first byte of its first leaf is below a threshold (random bytes: the fraction asked). Per case:
// columns restored from a pristine copy (untimed), 256 MiB memset, events around erase_if; median of
// 9 after 2 warm-ups; the result compared with std::remove_if on the host (every leaf of every record).
// Build (repository root): nvcc -I include -I . -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr
//   --extended-lambda --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu erase_sweep.cu -lcuda
#include <strata/algorithm/compact.hpp>
#include <strata/container/soa_vector.hpp>

#include "fixtures/random.hpp"
#include "fixtures/records.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                                                     \
  do {                                                                                                                            \
    cudaError_t e = (x);                                                                                                          \
    if (e != cudaSuccess) {                                                                                                       \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e));                                                                        \
      std::exit(1);                                                                                                               \
    }                                                                                                                             \
  } while (0)

struct first_byte_below {
  unsigned threshold;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    unsigned char b;
    memcpy(&b, &strata::reflect::leaf<0>(r), 1);
    return b < threshold;
  }
};

void* flush_buffer() {
  static void* p = [] {
    void* q = nullptr;
    CK(cudaMalloc(&q, size_t(256) << 20));
    return q;
  }();
  return p;
}

float memcpy_ms(double bytes) {
  const size_t half = size_t(bytes / 2);
  void *s = nullptr, *d = nullptr;
  CK(cudaMalloc(&s, half));
  CK(cudaMalloc(&d, half));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < 11; ++i) {
    CK(cudaMemsetAsync(flush_buffer(), 0, size_t(256) << 20));
    CK(cudaEventRecord(a));
    CK(cudaMemcpyAsync(d, s, half, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m;
    CK(cudaEventElapsedTime(&m, a, b));
    if (i >= 2) ms.push_back(m);
  }
  CK(cudaFree(s));
  CK(cudaFree(d));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <class T>
void sweep(const char* name) {
  using strata_fixtures::seeded_records;
  constexpr std::size_t bytes_per = strata::soa_layout<T>::leaves ? [] {
    std::size_t b = 0;
    for (std::size_t s : strata::soa_layout<T>::leaf_sizes) b += s;
    return b;
  }() : 0;
  const std::size_t n = (std::size_t(1) << 30) / bytes_per;
  const auto host = seeded_records<T>(n, 0x5eedu, 7);
  const strata::soa_vector<T> pristine(host);
  strata::soa_vector<T> work(host);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (unsigned removed_percent : {10u, 50u, 90u}) {
    const first_byte_below pred{removed_percent * 256 / 100};
    auto want = host;
    want.erase(std::remove_if(want.begin(), want.end(), pred), want.end());
    const double bytes = double(n + want.size()) * double(bytes_per);
    std::vector<float> ms;
    for (int i = 0; i < 11; ++i) {
      work.resize(n);
      for (std::size_t l = 0; l < strata::soa_layout<T>::leaves; ++l)
        CK(cudaMemcpyAsync(work.view().column_bytes(l), pristine.view().column_bytes(l), n * strata::soa_layout<T>::leaf_sizes[l],
                           cudaMemcpyDeviceToDevice));
      CK(cudaMemsetAsync(flush_buffer(), 0, size_t(256) << 20));
      CK(cudaEventRecord(a));
      const std::size_t gone = strata::erase_if(work, pred);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float m;
      CK(cudaEventElapsedTime(&m, a, b));
      if (i >= 2) ms.push_back(m);
      if (gone != n - want.size()) std::printf("WRONG COUNT\n");
    }
    const auto got = work.to_host();
    bool ok = got.size() == want.size();
    for (std::size_t i = 0; ok && i < want.size(); ++i)
      strata::reflect::for_each_leaf<T>([&](auto lf) {
        constexpr std::size_t L = decltype(lf)::value;
        using E = strata::reflect::leaf_type_t<T, L>;
        ok = ok && std::memcmp(&strata::reflect::leaf<L>(got[i]), &strata::reflect::leaf<L>(want[i]), sizeof(E)) == 0;
      });
    std::sort(ms.begin(), ms.end());
    const float med = ms[ms.size() / 2], ref = memcpy_ms(bytes);
    std::printf("%-18s %3zu B/record %2zu leaves  n %10zu  removed %2u%%  %8.3f ms  memcpy %8.3f ms  x memcpy %.3f  %s\n", name, bytes_per,
                strata::soa_layout<T>::leaves, n, removed_percent, med, ref, ref / med, ok ? "ok" : "WRONG");
  }
}

int main() {
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s\n", p.name);
  sweep<strata_fixtures::particle>("particle");
  sweep<strata_fixtures::two_floats>("two_floats");
  sweep<strata_fixtures::three_bytes>("three_bytes");
  sweep<strata_fixtures::eight_floats>("eight_floats");
  sweep<strata_fixtures::mixed>("mixed (nested)");
  sweep<strata_fixtures::floats_then_vec4>("floats_then_vec4");
  sweep<strata_fixtures::cell_record>("cell_record");
  sweep<strata_fixtures::big_record>("big_record");
  return 0;
}
