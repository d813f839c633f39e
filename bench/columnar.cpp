// SPDX-License-Identifier: Apache-2.0
// Conversion between SoA, AoSoA of 1 (packed AoS), 8, 16, 32 and 64 records and padded AoS, of records with leaves of
// mixed widths: the first 20 fields of LLAMA's viewcopy event record (78 bytes: i32, i32, i64,
// two f32, seven i32, two u8, six f32), the {float, int, short, char} record of NVIDIA's 2007
// AoS/SoA sample, a 32-field record of f32 / f64 / i32 / u8 and {double, int8}. strata::convert against the naive
// kernel over the same views (`dst[i] = src[i]`, one record a thread), in the same run; GB/s count
// each record's packed bytes read once and written once.
#include "common.hpp"

#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/convert/convert.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace {

struct event20 {
  BOOST_HANA_DEFINE_STRUCT(event20, (std::int32_t, run), (std::int32_t, luminosity_block), (std::int64_t, event),
                           (float, higgs_pt), (float, higgs_y), (std::int32_t, cat25), (std::int32_t, cat30),
                           (std::int32_t, fine25), (std::int32_t, fine30), (std::int32_t, stage0), (std::int32_t, stage1_25),
                           (std::int32_t, stage1_30), (std::uint8_t, njets25), (std::uint8_t, njets30), (float, csvv2),
                           (float, deep_csvb), (float, calo_phi), (float, calo_pt), (float, calo_sum_et), (float, chs_phi));
};
struct sample2007 {
  BOOST_HANA_DEFINE_STRUCT(sample2007, (float, f), (std::int32_t, i), (std::int16_t, s), (std::int8_t, c));
};
struct f64_i8 {
  BOOST_HANA_DEFINE_STRUCT(f64_i8, (double, value), (std::int8_t, flag));
};
struct mixed32 {
  BOOST_HANA_DEFINE_STRUCT(mixed32, (float, a0), (double, a1), (std::int32_t, a2), (std::uint8_t, a3), (float, a4), (double, a5),
                           (std::int32_t, a6), (std::uint8_t, a7), (float, a8), (double, a9), (std::int32_t, a10),
                           (std::uint8_t, a11), (float, a12), (double, a13), (std::int32_t, a14), (std::uint8_t, a15),
                           (float, a16), (double, a17), (std::int32_t, a18), (std::uint8_t, a19), (float, a20), (double, a21),
                           (std::int32_t, a22), (std::uint8_t, a23), (float, a24), (double, a25), (std::int32_t, a26),
                           (std::uint8_t, a27), (float, a28), (double, a29), (std::int32_t, a30), (std::uint8_t, a31));
};

/// N == 0: SoA; N == aos: padded AoS; otherwise AoSoA of N records a block.
constexpr std::size_t aos = ~std::size_t(0);
template <class T, std::size_t N>
struct container_of {
  using type = strata::aosoa_vector<T, N>;
};
template <class T>
struct container_of<T, 0> {
  using type = strata::soa_vector<T>;
};
template <class T>
struct container_of<T, aos> {
  using type = strata::aos_vector<T>;
};
template <class T, std::size_t N>
using container_t = typename container_of<T, N>::type;

template <class T>
std::int64_t records() {
  return strata_bench::scaled(std::int64_t(1) << 25);
}
template <class T>
double bytes() {
  return 2.0 * double(records<T>()) * double(strata::layout::record_descriptor<T>::packed_size);
}
template <class T, std::size_t N>
container_t<T, N>& filled() {
  static container_t<T, N> v(strata_bench::records<T>(std::size_t(records<T>())));
  return v;
}
template <class T, std::size_t N>
container_t<T, N>& empty_of() {
  static container_t<T, N> v{std::size_t(records<T>())};
  return v;
}

#if defined(STRATA_BACKEND_CUDA)
template <class S, class D>
__global__ void naive_kernel(S src, D dst, std::int64_t n) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
#endif

template <class T, std::size_t From, std::size_t To>
void strata_convert(benchmark::State& state) {
  auto& src = filled<T, From>();
  auto& dst = empty_of<T, To>();
  strata_bench::run_timed(state, bytes<T>(), double(src.size()), [&] { strata::convert(src, dst); });
}
template <class T, std::size_t From, std::size_t To>
void naive(benchmark::State& state) {
  auto& src = filled<T, From>();
  auto& dst = empty_of<T, To>();
  const auto s = src.const_view();
  const auto d = dst.view();
  const std::int64_t n = std::int64_t(src.size());
  strata_bench::run_timed(state, bytes<T>(), double(n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    naive_kernel<<<unsigned((n + 255) / 256), 256>>>(s, d, n);
#else
    STRATA_PARALLEL_FOR_IF(true)
    for (std::int64_t i = 0; i < n; ++i) d[i] = s[i];
#endif
  });
}

std::string layout_name(std::size_t n) {
  if (n == aos) return "aos";
  std::string s = n == 0 ? "soa" : "aosoa";
  if (n != 0) s += std::to_string(n);
  return s;
}
template <class T, std::size_t From, std::size_t To>
void register_pair(const char* record) {
  std::string tail = "/";
  tail += std::to_string(records<T>());
  tail += "/";
  tail += record;
  tail += "-";
  tail += layout_name(From);
  tail += "-";
  tail += layout_name(To);
  const std::pair<const char*, void (*)(benchmark::State&)> variants[] = {{"strata", &strata_convert<T, From, To>},
                                                                         {"naive", &naive<T, From, To>}};
  for (const auto& [variant, fn] : variants) {
    std::string name = "columnar_convert/";
    name += variant;
    name += tail;
    strata_bench::configure(benchmark::RegisterBenchmark(name.c_str(), fn));
  }
}
template <class T>
void register_record(const char* record) {
  register_pair<T, 0, 32>(record);
  register_pair<T, 32, 0>(record);
  register_pair<T, 0, 16>(record);
  register_pair<T, 16, 0>(record);
  register_pair<T, 16, 32>(record);
  register_pair<T, 32, 16>(record);
  register_pair<T, 16, 64>(record);
  register_pair<T, 64, 16>(record);
  // Blocks of 8: whole packets of the particle, records one by one where a leaf's run in a block
  // is not whole 16-byte vectors (1- and 2-byte leaves); AoS on the other side.
  register_pair<T, 0, 8>(record);
  register_pair<T, 8, 0>(record);
  register_pair<T, 8, 32>(record);
  register_pair<T, 32, 8>(record);
  register_pair<T, aos, 8>(record);
  register_pair<T, 8, aos>(record);
  register_pair<T, aos, 32>(record);
  register_pair<T, 32, aos>(record);
  // Blocks of 1: the packed AoS (records at their leaves' alignment, no padding to 16 bytes).
  register_pair<T, aos, 1>(record);
  register_pair<T, 1, aos>(record);
  register_pair<T, 0, 1>(record);
  register_pair<T, 1, 0>(record);
}
struct particle7 {
  BOOST_HANA_DEFINE_STRUCT(particle7, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, mass));
};
const bool registered = [] {
  register_record<particle7>("particle");
#if defined(STRATA_BACKEND_CUDA)
  // The host backend (CI's build) compiles and runs one record: its figures back nothing.
  register_record<event20>("event20");
  register_record<sample2007>("sample2007");
  register_record<mixed32>("mixed32");
  register_record<f64_i8>("f64-i8");
#endif
  return true;
}();

}  // namespace
