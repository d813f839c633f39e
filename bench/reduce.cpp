// SPDX-License-Identifier: Apache-2.0
// Reductions: the sum of 2^28 floats (strata vs cub::DeviceReduce::Sum vs thrust::reduce, each
// writing its result to device memory where it can), the kinetic energy of 2^26 particles,
// reading vx, vy, vz and mass only (strata packets over a projection vs Thrust over a zip), the
// statistics of 2^28 floats (strata::statistics vs thrust::transform_reduce with the same merge),
// and a sum over 2^26 records of 1-, 2-, 4- and 8-byte leaves (packets of 16 records vs a zip).
#include "common.hpp"

#include <strata/algorithm/reduce.hpp>
#include <strata/container/soa_vector.hpp>

#include "../fixtures/functors.hpp"
#include "../fixtures/records.hpp"

#include <thrust/device_ptr.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/reduce.h>
#include <thrust/transform_reduce.h>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_reduce.cuh>
#endif

namespace {

using strata_fixtures::particle;

std::int64_t floats() { return strata_bench::scaled(std::int64_t(1) << 28); }
strata::buffer& values() {
  static strata::buffer b = [] {
    std::vector<float> h(static_cast<std::size_t>(floats()));
    std::mt19937_64 g(0x5eedu);
    for (auto& x : h) x = std::uniform_real_distribution<float>(-1, 1)(g);
    strata::buffer d(h.size() * sizeof(float), strata::memory_space::device);
    strata::copy_bytes(d.data(), h.data(), d.bytes());
    return d;
  }();
  return b;
}
const float* data() { return reinterpret_cast<const float*>(values().data()); }
strata::buffer result(256, strata::memory_space::device);

void strata_sum(benchmark::State& state) {
  cuda::std::span<const float> col(data(), std::size_t(floats()));
  strata_bench::run_timed(state, double(floats()) * 4, double(floats()), [&] {
#if defined(STRATA_BACKEND_CUDA)
    strata::reduce_async(col, 0.0f, strata_fixtures::plus_f{}, reinterpret_cast<float*>(result.data()));
#else
    benchmark::DoNotOptimize(strata::reduce(col, 0.0f, strata_fixtures::plus_f{}));
#endif
  });
}

[[maybe_unused]] void cub_sum(benchmark::State& state) {  // registered on the CUDA backend only
#if defined(STRATA_BACKEND_CUDA)
  std::size_t temp_bytes = 0;
  auto* out = reinterpret_cast<float*>(result.data());
  cub::DeviceReduce::Sum(nullptr, temp_bytes, data(), out, floats());
  strata::buffer temp(std::max<std::size_t>(temp_bytes, 1), strata::memory_space::device);
  strata_bench::run_timed(state, double(floats()) * 4, double(floats()),
                          [&] { cub::DeviceReduce::Sum(temp.data(), temp_bytes, data(), out, floats()); });
#else
  (void)state;
#endif
}

void thrust_sum(benchmark::State& state) {
  auto p = thrust::device_pointer_cast(data());
  strata_bench::run_timed(state, double(floats()) * 4, double(floats()),
                          [&] { benchmark::DoNotOptimize(thrust::reduce(p, p + floats(), 0.0f)); });
}

// Kinetic energy: 16 bytes read per particle (vx, vy, vz, mass).
std::int64_t particles() { return strata_bench::scaled(std::int64_t(1) << 26); }
strata::soa_vector<particle>& soa() {
  static strata::soa_vector<particle> v(strata_bench::records<particle>(std::size_t(particles())));
  return v;
}
struct energy_tuple {
  STRATA_HD double operator()(const thrust::tuple<float, float, float, float>& t) const {
    return strata_fixtures::kinetic_energy{}(particle{0, 0, 0, thrust::get<0>(t), thrust::get<1>(t), thrust::get<2>(t), thrust::get<3>(t)});
  }
};

void strata_energy(benchmark::State& state) {
  auto proj = strata::project<&particle::vx, &particle::vy, &particle::vz, &particle::mass>(soa());
  strata_bench::run_timed(state, double(particles()) * 16, double(particles()), [&] {
#if defined(STRATA_BACKEND_CUDA)
    strata::transform_reduce_async(proj, strata_fixtures::kinetic_energy{}, 0.0, strata_fixtures::plus_d{},
                                   reinterpret_cast<double*>(result.data()));
#else
    benchmark::DoNotOptimize(strata::transform_reduce(proj, strata_fixtures::kinetic_energy{}, 0.0, strata_fixtures::plus_d{}));
#endif
  });
}

void thrust_zip_energy(benchmark::State& state) {
  auto& v = soa();
  auto c = [&](auto col) { return thrust::device_pointer_cast(col.data()); };
  auto in = thrust::make_zip_iterator(c(v.column<&particle::vx>()), c(v.column<&particle::vy>()),
                                      c(v.column<&particle::vz>()), c(v.column<&particle::mass>()));
  strata_bench::run_timed(state, double(particles()) * 16, double(particles()), [&] {
    benchmark::DoNotOptimize(
        thrust::transform_reduce(in, in + particles(), energy_tuple{}, 0.0, strata_fixtures::plus_d{}));
  });
}

// Statistics of a column: count, mean, M2, min, max; both return to the host.
void strata_stats(benchmark::State& state) {
  cuda::std::span<const float> col(data(), std::size_t(floats()));
  strata_bench::run_timed(state, double(floats()) * 4, double(floats()),
                          [&] { benchmark::DoNotOptimize(strata::statistics(col)); });
}
void thrust_stats(benchmark::State& state) {
  auto p = thrust::device_pointer_cast(data());
  strata_bench::run_timed(state, double(floats()) * 4, double(floats()), [&] {
    benchmark::DoNotOptimize(thrust::transform_reduce(p, p + floats(), strata::detail::stats_of{}, strata::column_stats{},
                                                      strata::detail::merge_stats{}));
  });
}

// Records of mixed widths (double, float, uint16, uint8: 15 bytes): packets of 16 records.
using strata_fixtures::mixed;
strata::soa_vector<mixed>& mixed_records() {
  static strata::soa_vector<mixed> v(strata_bench::records<mixed>(std::size_t(particles())));
  return v;
}
struct mixed_terms {
  STRATA_HD double operator()(const mixed& m) const { return m.energy + m.x + double(m.cell) + double(m.flags); }
};
struct mixed_tuple_terms {
  STRATA_HD double operator()(const thrust::tuple<double, float, std::uint16_t, std::uint8_t>& t) const {
    return thrust::get<0>(t) + thrust::get<1>(t) + double(thrust::get<2>(t)) + double(thrust::get<3>(t));
  }
};
void strata_mixed_sum(benchmark::State& state) {
  auto& v = mixed_records();
  strata_bench::run_timed(state, double(particles()) * 15, double(particles()), [&] {
#if defined(STRATA_BACKEND_CUDA)
    strata::transform_reduce_async(v, mixed_terms{}, 0.0, strata_fixtures::plus_d{}, reinterpret_cast<double*>(result.data()));
#else
    benchmark::DoNotOptimize(strata::transform_reduce(v, mixed_terms{}, 0.0, strata_fixtures::plus_d{}));
#endif
  });
}
void thrust_zip_mixed_sum(benchmark::State& state) {
  auto& v = mixed_records();
  auto c = [&](auto col) { return thrust::device_pointer_cast(col.data()); };
  auto in = thrust::make_zip_iterator(c(v.column<&mixed::energy>()), c(v.column<&mixed::x>()), c(v.column<&mixed::cell>()),
                                      c(v.column<&mixed::flags>()));
  strata_bench::run_timed(state, double(particles()) * 15, double(particles()), [&] {
    benchmark::DoNotOptimize(thrust::transform_reduce(in, in + particles(), mixed_tuple_terms{}, 0.0, strata_fixtures::plus_d{}));
  });
}

const std::string nf = "/" + std::to_string(floats());
STRATA_BENCHMARK(strata_sum, "reduce_sum/strata" + nf);
#if defined(STRATA_BACKEND_CUDA)
STRATA_BENCHMARK(cub_sum, "reduce_sum/cub" + nf);
#endif
STRATA_BENCHMARK(thrust_sum, "reduce_sum/thrust" + nf);
const std::string np = "/" + std::to_string(particles());
STRATA_BENCHMARK(strata_energy, "kinetic_energy/strata_packets" + np);
STRATA_BENCHMARK(thrust_zip_energy, "kinetic_energy/thrust_zip" + np);
STRATA_BENCHMARK(strata_stats, "statistics/strata" + nf);
STRATA_BENCHMARK(thrust_stats, "statistics/thrust" + nf);
STRATA_BENCHMARK(strata_mixed_sum, "mixed_sum/strata_packets" + np);
STRATA_BENCHMARK(thrust_zip_mixed_sum, "mixed_sum/thrust_zip" + np);

}  // namespace
