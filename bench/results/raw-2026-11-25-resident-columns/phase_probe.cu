// Probe: erase_if's phases for records of narrow columns (three_bytes, mixed) against the particle:
// the counting kernel, the scan, the writing kernel in place and out of place (no flags), each timed
// alone (median of 9 after 2 warm-ups, 256 MiB memset before each, events), and the library call.
// With narrow columns kept in shared memory through the writing pass (compact.hpp of this
// directory's commit); three_bytes R32 and mixed R8 are the same records with 32 and 8 records a
// thread (compact_records specialized here) to see what other tile sizes give now that narrow
// columns take no registers. Output of every writing variant checked against std::remove_if.
// Build (repository root): nvcc -I include -I . -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr
//   --extended-lambda --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu phase_probe.cu -lcuda
#include <boost/hana.hpp>
#include <cstdint>
namespace probe {
struct three_bytes_r32 {
  BOOST_HANA_DEFINE_STRUCT(three_bytes_r32, (std::int8_t, r), (std::int8_t, g), (std::int8_t, b));
};
struct mixed_r8 {
  BOOST_HANA_DEFINE_STRUCT(mixed_r8, (double, energy), (float, x), (std::uint16_t, cell), (std::uint8_t, flags));
};
}  // namespace probe
#include <strata/algorithm/compact.hpp>
#include <strata/container/soa_vector.hpp>
template <>
inline constexpr int strata::detail::compact_records<probe::three_bytes_r32> = 32;
template <>
inline constexpr int strata::detail::compact_records<probe::mixed_r8> = 8;

#include "fixtures/random.hpp"
#include "fixtures/records.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#define CK(x)                                                          \
  do {                                                                 \
    cudaError_t e = (x);                                               \
    if (e != cudaSuccess) {                                            \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e));              \
      std::exit(1);                                                    \
    }                                                                  \
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

static void* flush() {
  static void* p = [] {
    void* q;
    CK(cudaMalloc(&q, size_t(256) << 20));
    return q;
  }();
  return p;
}

template <class F, class Before>
float time_it(F f, Before before) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < 11; ++i) {
    before();
    CK(cudaMemsetAsync(flush(), 0, size_t(256) << 20));
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m;
    CK(cudaEventElapsedTime(&m, a, b));
    if (i >= 2) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

float memcpy_ms(double bytes) {
  void *s, *d;
  const size_t h = size_t(bytes / 2);
  CK(cudaMalloc(&s, h));
  CK(cudaMalloc(&d, h));
  float m = time_it([&] { CK(cudaMemcpyAsync(d, s, h, cudaMemcpyDeviceToDevice)); }, [] {});
  CK(cudaFree(s));
  CK(cudaFree(d));
  return m;
}

template <class T, class U>
void probe_record(const char* name) {
  namespace d = strata::detail;
  std::size_t bytes_per = 0;
  for (std::size_t s : strata::soa_layout<T>::leaf_sizes) bytes_per += s;
  const std::size_t n = (std::size_t(1) << 30) / bytes_per;
  auto host0 = strata_fixtures::seeded_records<U>(n, 0x5eedu, 7);
  std::vector<T> host(n);
  std::memcpy(host.data(), host0.data(), n * sizeof(T));
  static_assert(sizeof(T) == sizeof(U));
  const first_byte_below pred{128};
  auto want = host;
  want.erase(std::remove_if(want.begin(), want.end(), pred), want.end());
  const double moved = double(n + want.size()) * double(bytes_per);
  const float ref = memcpy_ms(moved);
  const strata::soa_vector<T> pristine(host);
  strata::soa_vector<T> work(host), other(host);
  auto restore = [&] {
    for (std::size_t l = 0; l < strata::soa_layout<T>::leaves; ++l)
      CK(cudaMemcpyAsync(work.view().column_bytes(l), pristine.view().column_bytes(l), n * strata::soa_layout<T>::leaf_sizes[l],
                         cudaMemcpyDeviceToDevice));
  };
  constexpr int R = d::compact_records<T>;
  const strata::index_t tiles = strata::index_t((n + 128 * R - 1) / (128 * R));
  unsigned long long *counts, *ends, *ticket;
  unsigned *loaded, *mismatch;
  CK(cudaMalloc(&counts, tiles * 8));
  CK(cudaMalloc(&ends, tiles * 8));
  CK(cudaMalloc(&loaded, tiles * 4));
  CK(cudaMalloc(&ticket, 16));
  CK(cudaMalloc(&mismatch, 16));
  const d::unless<first_byte_below> keep{pred};
  auto v = work.view();
  auto o = other.view();
  const float t_count = time_it([&] { d::compact_count_kernel<<<unsigned(tiles), 128>>>(v, keep, counts); }, [] {});
  std::size_t temp = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, temp, counts, ends, tiles));
  void* tmp;
  CK(cudaMalloc(&tmp, temp));
  const float t_scan = time_it([&] { CK(cub::DeviceScan::InclusiveSum(tmp, temp, counts, ends, tiles)); }, [] {});
  auto reset = [&] {
    CK(cudaMemsetAsync(loaded, 0, tiles * 4));
    CK(cudaMemsetAsync(ticket, 0, 16));
    CK(cudaMemsetAsync(mismatch, 0, 16));
  };
  const d::compact_state in_place{counts, ends, loaded, ticket, mismatch, true}, out_place{counts, ends, loaded, ticket, mismatch, false};
  const float t_write_in = time_it([&] { d::compact_kernel<<<unsigned(tiles), 128>>>(v, v, d::discard{}, keep, tiles, in_place, true); },
                                   [&] { restore(), reset(); });
  auto check = [&](const strata::soa_vector<T>& c) {
    std::vector<T> got(want.size());
    for (std::size_t l = 0; l < strata::soa_layout<T>::leaves; ++l) {
      std::vector<char> col(n * strata::soa_layout<T>::leaf_sizes[l]);
      CK(cudaMemcpy(col.data(), c.view().column_bytes(l), col.size(), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < want.size(); ++i) {
        bool same = true;
        strata::reflect::for_each_leaf<T>([&](auto lf) {
          constexpr std::size_t L = decltype(lf)::value;
          using E = strata::reflect::leaf_type_t<T, L>;
          if (L == l) same = std::memcmp(col.data() + i * sizeof(E), &strata::reflect::leaf<L>(want[i]), sizeof(E)) == 0;
        });
        if (!same) return false;
      }
    }
    return true;
  };
  const bool ok_in = check(work);
  const float t_write_out = time_it([&] { d::compact_kernel<<<unsigned(tiles), 128>>>(v, o, d::discard{}, keep, tiles, out_place, true); },
                                    [&] { restore(), reset(); });
  const bool ok_out = check(other);
  const float t_lib = time_it([&] { strata::erase_if(work, pred); }, [&] { work.resize(n), restore(); });
  const bool ok_lib = work.size() == want.size() && check(work);
  std::printf("%-16s R %2d tiles %8ld  count %.3f  scan %.3f  write(in) %.3f  write(out) %.3f  library %.3f ms  memcpy %.3f  "
              "x memcpy: library %.3f, count+scan+write(in) %.3f, write(out) alone %.3f  %s\n",
              name, R, long(tiles), t_count, t_scan, t_write_in, t_write_out, t_lib, ref, ref / t_lib, ref / (t_count + t_scan + t_write_in),
              ref / t_write_out, ok_in && ok_out && ok_lib ? "ok" : "WRONG");
  CK(cudaFree(counts));
  CK(cudaFree(ends));
  CK(cudaFree(loaded));
  CK(cudaFree(ticket));
  CK(cudaFree(mismatch));
  CK(cudaFree(tmp));
}

int main() {
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s\n", p.name);
  using namespace strata_fixtures;
  probe_record<particle, particle>("particle");
  probe_record<three_bytes, three_bytes>("three_bytes");
  probe_record<probe::three_bytes_r32, three_bytes>("three_bytes R32");
  probe_record<mixed, mixed>("mixed");
  probe_record<probe::mixed_r8, mixed>("mixed R8");
  probe_record<two_floats, two_floats>("two_floats");
  probe_record<big_record, big_record>("big_record");
  return 0;
}
