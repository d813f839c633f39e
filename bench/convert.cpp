// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA conversion on 2^26 records (the 28-byte particle, the 24-byte mixed record and the
// nested particle, whose vec3 members open into leaves) and 2^24 records of a 104-byte record of
// 19 leaves of four sizes: strata's tiled transpose against the one-thread-per-record peer; and a
// 1 GiB host std::vector landing as device SoA against a pinned cudaMemcpy of the same bytes. The
// "runtime" variants run the conversion for records described at run time (convert/runtime.hpp).
// AoSoA rows (default blocks, each SoA: 32 particles, 128 mixed records): natural AoS <-> AoSoA
// through the same transposes, SoA <-> AoSoA as packets (strata::convert).
#include "common.hpp"

#include <strata/container/aosoa_vector.hpp>
#include <strata/convert/convert.hpp>
#include <strata/convert/runtime.hpp>

#include "../fixtures/records.hpp"

#include <utility>

namespace {

using namespace strata_fixtures;

template <class T>
std::int64_t records() {
  return strata_bench::scaled(std::int64_t(1) << (sizeof(T) > 64 ? 24 : 26));
}
template <class T>
double convert_bytes(std::int64_t n) {  // AoS bytes once, SoA bytes once
  return double(n) * double(sizeof(T) + strata::layout::record_descriptor<T>::packed_size);
}

template <class T>
struct fixture {
  std::int64_t n = records<T>();
  strata::buffer aos{std::size_t(n) * sizeof(T), strata::memory_space::device};
  strata::soa_vector<T> soa{std::size_t(n)};
  fixture() {
    auto host = strata_bench::records<T>(std::size_t(n));
    strata::copy_bytes(aos.data(), host.data(), aos.bytes());
  }
  T* data() { return reinterpret_cast<T*>(aos.data()); }
};
template <class T>
fixture<T>& data() {
  static fixture<T> f;
  return f;
}

#if defined(STRATA_BACKEND_CUDA)
template <class T>
__global__ void naive_aos_to_soa(const T* in, strata::soa_view<T> out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    out.store(i, in[i]);
}
template <class T>
__global__ void naive_soa_to_aos(strata::soa_view<const T> in, T* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = in.load(i);
}
#endif

template <class T>
void strata_aos_to_soa(benchmark::State& state) {
  auto& f = data<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] { strata::aos_to_soa(f.data(), f.n, f.soa.view()); });
}
template <class T>
void strata_soa_to_aos(benchmark::State& state) {
  auto& f = data<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] { strata::soa_to_aos(f.soa.const_view(), f.data()); });
}
template <class T>
strata::aosoa_vector<T>& aosoa_of() {
  static strata::aosoa_vector<T> v(std::size_t(data<T>().n));
  return v;
}
template <class T>
void strata_aos_to_aosoa(benchmark::State& state) {
  auto& f = data<T>();
  auto& a = aosoa_of<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] { strata::aos_to_soa(f.data(), f.n, a.view()); });
}
template <class T>
void strata_aosoa_to_aos(benchmark::State& state) {
  auto& f = data<T>();
  auto& a = aosoa_of<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] { strata::soa_to_aos(a.const_view(), f.data()); });
}
template <class T>
void strata_soa_to_aosoa(benchmark::State& state) {
  auto& f = data<T>();
  auto& a = aosoa_of<T>();
  const double bytes = 2.0 * double(f.n) * double(strata::layout::record_descriptor<T>::packed_size);
  strata_bench::run_timed(state, bytes, double(f.n), [&] { strata::convert(f.soa, a); });
}
template <class T>
void strata_aosoa_to_soa(benchmark::State& state) {
  auto& f = data<T>();
  auto& a = aosoa_of<T>();
  const double bytes = 2.0 * double(f.n) * double(strata::layout::record_descriptor<T>::packed_size);
  strata_bench::run_timed(state, bytes, double(f.n), [&] { strata::convert(a, f.soa); });
}
template <class T>
void naive_to_soa(benchmark::State& state) {
  auto& f = data<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    naive_aos_to_soa<<<int((f.n + 255) / 256), 256>>>(f.data(), f.soa.view(), f.n);
#else
    strata::detail::transpose_to_columns(f.data(), f.n, f.soa.view());
#endif
  });
}
template <class T>
void naive_to_aos(benchmark::State& state) {
  auto& f = data<T>();
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    naive_soa_to_aos<<<int((f.n + 255) / 256), 256>>>(f.soa.const_view(), f.data(), f.n);
#else
    strata::detail::transpose_to_records(f.soa.const_view(), f.data(), f.n);
#endif
  });
}

// The same conversions with the record described at run time (offsets and sizes as arguments, as
// the Python module's to_soa / to_aos pass them from a NumPy dtype).
template <class T>
std::vector<strata::runtime_field> runtime_fields() {
  std::vector<strata::runtime_field> f;
  strata::reflect::for_each_leaf<T>([&](auto l) {
    constexpr std::size_t L = decltype(l)::value;
    f.push_back({strata::layout::leaf_descriptor<T, L>::offset, sizeof(strata::reflect::leaf_type_t<T, L>)});
  });
  return f;
}
template <class T>
std::vector<void*> runtime_columns(const strata::soa_view<T>& v) {
  std::vector<void*> c;
  for (std::size_t i = 0; i < strata::soa_view<T>::leaves; ++i) c.push_back(v.column_bytes(i));
  return c;
}
template <class T>
void runtime_aos_to_soa(benchmark::State& state) {
  auto& f = data<T>();
  const auto fields = runtime_fields<T>();
  const auto cols = runtime_columns(f.soa.view());
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n),
                          [&] { strata::aos_to_soa(f.aos.data(), sizeof(T), f.n, fields, cols.data()); });
}
template <class T>
void runtime_soa_to_aos(benchmark::State& state) {
  auto& f = data<T>();
  const auto fields = runtime_fields<T>();
  const auto cols = runtime_columns(f.soa.view());
  const std::vector<const void*> c(cols.begin(), cols.end());
  strata_bench::run_timed(state, convert_bytes<T>(f.n), double(f.n),
                          [&] { strata::soa_to_aos(c.data(), fields, f.n, f.aos.data(), sizeof(T)); });
}

// Host -> device: 1 GiB of particles in a pageable std::vector.
std::int64_t host_records() { return strata_bench::scaled(std::int64_t(1) << 30) / std::int64_t(sizeof(particle)); }
std::vector<particle>& host_particles() {
  static auto v = strata_bench::records<particle>(std::size_t(host_records()));
  return v;
}
void strata_host_to_soa(benchmark::State& state) {
  auto& h = host_particles();
  strata::soa_vector<particle> dst(h.size());
  strata_bench::run_timed(state, double(h.size() * sizeof(particle)), double(h.size()), [&] {
    strata::detail::host_aos_to_soa(h.data(), strata::index_t(h.size()), dst.view(), strata::stream_t{});
  }, strata_bench::timing::from_idle);
}
void pinned_memcpy(benchmark::State& state) {
  auto& h = host_particles();
  std::size_t bytes = h.size() * sizeof(particle);
  strata::buffer pinned(bytes, strata::memory_space::pinned), dev(bytes, strata::memory_space::device);
  std::memcpy(pinned.data(), h.data(), bytes);
  strata_bench::run_timed(state, double(bytes), double(h.size()), [&] {
    strata::copy_bytes_async(dev.data(), pinned.data(), bytes, strata::stream_t{});
  }, strata_bench::timing::from_idle);
}
void pageable_memcpy(benchmark::State& state) {
  auto& h = host_particles();
  std::size_t bytes = h.size() * sizeof(particle);
  strata::buffer dev(bytes, strata::memory_space::device);
  strata_bench::run_timed(state, double(bytes), double(h.size()), [&] { strata::copy_bytes(dev.data(), h.data(), bytes); },
                          strata_bench::timing::from_idle);
}

const std::string n26 = "/" + std::to_string(strata_bench::scaled(std::int64_t(1) << 26));
STRATA_BENCHMARK(strata_aos_to_soa<particle>, "aos_to_soa/strata" + n26 + "/particle");
STRATA_BENCHMARK(naive_to_soa<particle>, "aos_to_soa/naive" + n26 + "/particle");
STRATA_BENCHMARK(strata_soa_to_aos<particle>, "soa_to_aos/strata" + n26 + "/particle");
STRATA_BENCHMARK(naive_to_aos<particle>, "soa_to_aos/naive" + n26 + "/particle");
STRATA_BENCHMARK(strata_aos_to_soa<mixed_convert>, "aos_to_soa/strata" + n26 + "/mixed");
STRATA_BENCHMARK(naive_to_soa<mixed_convert>, "aos_to_soa/naive" + n26 + "/mixed");
STRATA_BENCHMARK(strata_soa_to_aos<mixed_convert>, "soa_to_aos/strata" + n26 + "/mixed");
STRATA_BENCHMARK(naive_to_aos<mixed_convert>, "soa_to_aos/naive" + n26 + "/mixed");
STRATA_BENCHMARK(strata_aos_to_soa<nested_particle>, "aos_to_soa/strata" + n26 + "/nested");
STRATA_BENCHMARK(naive_to_soa<nested_particle>, "aos_to_soa/naive" + n26 + "/nested");
STRATA_BENCHMARK(strata_soa_to_aos<nested_particle>, "soa_to_aos/strata" + n26 + "/nested");
STRATA_BENCHMARK(naive_to_aos<nested_particle>, "soa_to_aos/naive" + n26 + "/nested");
STRATA_BENCHMARK(strata_aos_to_aosoa<particle>, "aos_to_aosoa/strata" + n26 + "/particle");
STRATA_BENCHMARK(strata_aosoa_to_aos<particle>, "aosoa_to_aos/strata" + n26 + "/particle");
STRATA_BENCHMARK(strata_soa_to_aosoa<particle>, "soa_to_aosoa/strata" + n26 + "/particle");
STRATA_BENCHMARK(strata_aosoa_to_soa<particle>, "aosoa_to_soa/strata" + n26 + "/particle");
STRATA_BENCHMARK(strata_aos_to_aosoa<mixed_convert>, "aos_to_aosoa/strata" + n26 + "/mixed");
STRATA_BENCHMARK(strata_aosoa_to_aos<mixed_convert>, "aosoa_to_aos/strata" + n26 + "/mixed");
STRATA_BENCHMARK(strata_soa_to_aosoa<mixed_convert>, "soa_to_aosoa/strata" + n26 + "/mixed");
STRATA_BENCHMARK(strata_aosoa_to_soa<mixed_convert>, "aosoa_to_soa/strata" + n26 + "/mixed");
// The runtime kernels with other tile limits (records cap, bytes budget; the default is 4096
// records within 24 KiB): runtime_tile<cap> and runtime_tile<cap>_<KiB>k.
template <class T, bool ToSoa>
void runtime_with_cap(benchmark::State& state, std::uint32_t cap, std::uint32_t budget) {
  strata::detail::runtime_tile_cap = cap;
  strata::detail::runtime_tile_budget = budget;
  if constexpr (ToSoa) runtime_aos_to_soa<T>(state);
  else runtime_soa_to_aos<T>(state);
  strata::detail::runtime_tile_cap = 0;
  strata::detail::runtime_tile_budget = 0;
}
template <class T, bool ToSoa>
void register_tile_caps(const char* direction, const char* record) {
  const std::pair<std::uint32_t, std::uint32_t> limits[] = {{256, 0}, {512, 0}, {1024, 0}, {2048, 16 << 10}, {2048, 32 << 10}, {2048, 40 << 10}};
  for (auto [cap, budget] : limits) {
    std::string name = std::string(direction) + "/runtime_tile" + std::to_string(cap);
    if (budget) name.append(1, '_').append(std::to_string(budget >> 10)).append(1, 'k');
    name += n26 + "/" + record;
    strata_bench::configure(
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { runtime_with_cap<T, ToSoa>(st, cap, budget); }));
  }
}
const bool tile_caps_registered = [] {
  register_tile_caps<particle, true>("aos_to_soa", "particle");
  register_tile_caps<particle, false>("soa_to_aos", "particle");
  register_tile_caps<mixed_convert, true>("aos_to_soa", "mixed");
  register_tile_caps<mixed_convert, false>("soa_to_aos", "mixed");
  return true;
}();
STRATA_BENCHMARK(runtime_aos_to_soa<particle>, "aos_to_soa/runtime" + n26 + "/particle");
STRATA_BENCHMARK(runtime_soa_to_aos<particle>, "soa_to_aos/runtime" + n26 + "/particle");
STRATA_BENCHMARK(runtime_aos_to_soa<mixed_convert>, "aos_to_soa/runtime" + n26 + "/mixed");
STRATA_BENCHMARK(runtime_soa_to_aos<mixed_convert>, "soa_to_aos/runtime" + n26 + "/mixed");
// strata's and the naive kernels' conversions both ways for records over 32 bytes: a 96-byte
// record of 19 leaves, power-of-two sizes (64 and 128 bytes), whose transpose tiles swizzle, 192
// bytes of floats and 80 bytes of mixed leaves, whose leaves of one type share a tile's lanes.
template <class T>
void register_conversions(const char* record) {
  const std::string tail = "/" + std::to_string(records<T>()) + "/" + record;
  strata_bench::configure(benchmark::RegisterBenchmark(("aos_to_soa/strata" + tail).c_str(), strata_aos_to_soa<T>));
  strata_bench::configure(benchmark::RegisterBenchmark(("aos_to_soa/naive" + tail).c_str(), naive_to_soa<T>));
  strata_bench::configure(benchmark::RegisterBenchmark(("soa_to_aos/strata" + tail).c_str(), strata_soa_to_aos<T>));
  strata_bench::configure(benchmark::RegisterBenchmark(("soa_to_aos/naive" + tail).c_str(), naive_to_aos<T>));
}
const bool large_records_registered = [] {
  register_conversions<big_record>("big");
  register_conversions<sixteen_floats>("sixteen_floats");
  register_conversions<padded128>("padded128");
  register_conversions<floats48>("floats48");
  register_conversions<mixed80>("mixed80");
  return true;
}();
const std::string nh = "/" + std::to_string(host_records());
STRATA_BENCHMARK(strata_host_to_soa, "host_aos_to_device_soa/strata" + nh);
STRATA_BENCHMARK(pinned_memcpy, "host_aos_to_device_soa/pinned_memcpy" + nh);
STRATA_BENCHMARK(pageable_memcpy, "host_aos_to_device_soa/pageable_memcpy" + nh);

}  // namespace
