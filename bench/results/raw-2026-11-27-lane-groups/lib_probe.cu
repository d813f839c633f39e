// Probe: strata's own AoS <-> SoA transposes (detail::aos_bytes_to_soa / soa_to_aos_bytes, the
// library's tile choice) for records over 32 bytes, built twice: against the code before this
// change and after it (-I of either include tree), run one after the other in one call.
#include <strata/container/soa_vector.hpp>
#include <strata/convert/transpose.hpp>

#include "fixtures/records.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace sd = strata::detail;
using strata::index_t;

struct f12 { BOOST_HANA_DEFINE_STRUCT(f12, (std::array<float, 12>, f)); };
struct f16r { BOOST_HANA_DEFINE_STRUCT(f16r, (std::array<float, 16>, f)); };
struct f24 { BOOST_HANA_DEFINE_STRUCT(f24, (std::array<float, 24>, f)); };
struct f32r { BOOST_HANA_DEFINE_STRUCT(f32r, (std::array<float, 32>, f)); };
struct f48 { BOOST_HANA_DEFINE_STRUCT(f48, (std::array<float, 48>, f)); };
struct d16 { BOOST_HANA_DEFINE_STRUCT(d16, (std::array<double, 16>, f)); };
struct f20 { BOOST_HANA_DEFINE_STRUCT(f20, (std::array<float, 20>, f)); };
struct f28 { BOOST_HANA_DEFINE_STRUCT(f28, (std::array<float, 28>, f)); };
struct f40 { BOOST_HANA_DEFINE_STRUCT(f40, (std::array<float, 40>, f)); };
struct f64 { BOOST_HANA_DEFINE_STRUCT(f64, (std::array<float, 64>, f)); };
struct f9 { BOOST_HANA_DEFINE_STRUCT(f9, (std::array<float, 9>, f)); };
struct mix72 { BOOST_HANA_DEFINE_STRUCT(mix72, (std::array<double, 3>, a), (std::array<float, 9>, b), (std::int32_t, id), (std::array<std::int16_t, 2>, c), (std::array<std::uint8_t, 4>, d), (float, e)); };
struct mix40 { BOOST_HANA_DEFINE_STRUCT(mix40, (double, a), (double, b), (std::array<float, 4>, c), (std::array<std::int16_t, 3>, d), (std::uint8_t, e)); };
struct p128 {  // the fixtures' padded128
  BOOST_HANA_DEFINE_STRUCT(p128, (double2, v), (std::array<double, 6>, d), (std::array<float, 14>, f), (std::int16_t, k), (std::uint8_t, flag));
};

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
static float time_ms(F&& f, int reps = 21) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
template <std::size_t S> struct pad_mask { bool pad[S]; };
template <std::size_t S>
__global__ void fill_records(std::byte* p, std::size_t bytes, pad_mask<S> m) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < bytes; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long h = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p[i] = m.pad[i % S] ? std::byte{0} : std::byte(h >> 17);
  }
}
static double memcpy_gbps;
// Every leaf of every record: the SoA column against the AoS bytes it came from.
template <class T, std::size_t S, class V>
__global__ void check_columns(const std::byte* aos, index_t n, V v, unsigned long long* bad) {
  unsigned long long c = 0;
  for (index_t i = blockIdx.x * index_t(blockDim.x) + threadIdx.x; i < n; i += index_t(gridDim.x) * blockDim.x)
    strata::reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      using F = strata::reflect::leaf_type_t<T, L>;
      const auto* col = reinterpret_cast<const unsigned char*>(v.template leaf_ptr<L>(i));
      const auto* rec = reinterpret_cast<const unsigned char*>(aos + std::size_t(i) * S + strata::reflect::leaf_offset<T, L>());
      for (std::size_t b = 0; b < sizeof(F); ++b) c += col[b] != rec[b];
    });
  if (c) atomicAdd(bad, c);
}

template <class T>
static void record(const char* rec, const char* build) {
  constexpr std::size_t S = sizeof(T);
  const index_t n = index_t(1) << (S > 64 ? 24 : 26);
  std::byte *aos, *aos2;
  CK(cudaMalloc(&aos, std::size_t(n) * S)); CK(cudaMalloc(&aos2, std::size_t(n) * S));
  pad_mask<S> m;
  for (std::size_t b = 0; b < S; ++b) m.pad[b] = sd::padding_byte<T, S>[b];
  fill_records<S><<<4096, 256>>>(aos, std::size_t(n) * S, m);
  strata::soa_vector<T> soa{std::size_t(n)};
  auto v = soa.view();
  const double bytes = double(n) * double(S + strata::layout::record_descriptor<T>::packed_size);
  CK(cudaMemset(aos2, 0xff, std::size_t(n) * S));
  sd::aos_bytes_to_soa<T, S>(aos, n, v, 0, 0);
  sd::soa_to_aos_bytes<T, S>(soa.const_view(), 0, aos2, n, 0);
  CK(cudaDeviceSynchronize());
  const auto bad = diff(aos, aos2, std::size_t(n) * S);
  unsigned long long* dbad; CK(cudaMalloc(&dbad, 8)); CK(cudaMemset(dbad, 0, 8));
  check_columns<T, S><<<2048, 256>>>(aos, n, v, dbad);
  unsigned long long colbad; CK(cudaMemcpy(&colbad, dbad, 8, cudaMemcpyDeviceToHost)); CK(cudaFree(dbad));
  const float t1 = time_ms([&] { sd::aos_bytes_to_soa<T, S>(aos, n, v, 0, 0); });
  const float t2 = time_ms([&] { sd::soa_to_aos_bytes<T, S>(soa.const_view(), 0, aos2, n, 0); });
  std::printf("%-6s %-7s %3zu B n=%lld | aos_to_soa %.4f ms %.3f x memcpy | soa_to_aos %.4f ms %.3f x memcpy | round trip words differing %llu, column bytes differing %llu\n", build, rec, S,
              (long long)n, t1, bytes / t1 / 1e6 / memcpy_gbps, t2, bytes / t2 / 1e6 / memcpy_gbps, bad, colbad);
  std::fflush(stdout);
  CK(cudaFree(aos)); CK(cudaFree(aos2));
}

int main(int argc, char** argv) {
  const char* build = argc > 1 ? argv[1] : "?";
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  {
    const std::size_t b = std::size_t(1) << 30;
    void *x, *y; CK(cudaMalloc(&x, b)); CK(cudaMalloc(&y, b));
    CK(cudaMemset(x, 1, b));
    const float t = time_ms([&] { CK(cudaMemcpyAsync(y, x, b, cudaMemcpyDeviceToDevice)); });
    memcpy_gbps = 2.0 * double(b) / t / 1e6;
    std::printf("%s %s: cudaMemcpy D2D 1 GiB %.4f ms, %.1f GB/s (read + write)\n", build, p.name, t, memcpy_gbps);
    CK(cudaFree(x)); CK(cudaFree(y));
  }
  record<mix40>("mix40", build);
  record<f12>("f12", build);
  record<f16r>("f16", build);
  record<f24>("f24", build);
  record<strata_fixtures::big_record>("big96", build);
  record<f32r>("f32", build);
  record<p128>("p128", build);
  record<f20>("f20", build);
  record<f48>("f48", build);
  record<d16>("d16", build);
  record<strata_fixtures::cell_record>("cell48", build);
  record<f9>("f9", build);
  record<f28>("f28", build);
  record<f40>("f40", build);
  record<f64>("f64", build);
  record<mix72>("mix72", build);
}
