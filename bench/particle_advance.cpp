// SPDX-License-Identifier: Apache-2.0
// Particle advance on 2^26 particles (7 float leaves): read x, y, z, vx, vy, vz, write x, y, z.
// Variants: strata record iterators and packet iterators inside thrust::transform, the peer
// (thrust::transform over a zip_iterator of raw columns), a hand-written float4 SoA kernel, a plain
// AoS kernel, and strata's padded AoS records inside thrust::transform. The same step on the
// nested particle (pos and vel as vec3 members; record `nested`): packets, strata::transform and
// the zip peer over the same leaf columns. strata::transform on an AoSoA container (blocks of 32
// particles, each block SoA) with the same projections. The in-place calls over the whole record
// (transform(v, v, f), for_each) against the same step storing every leaf.
#include "common.hpp"

#include <strata/algorithm/transform.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/iterator/packet.hpp>

#include "../fixtures/records.hpp"

#include <thrust/device_ptr.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>

namespace {

using strata_fixtures::particle;
constexpr float dt = 0.01f;

struct advance {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
    return p;
  }
};
struct advance_tuple {
  STRATA_HD thrust::tuple<float, float, float> operator()(const thrust::tuple<float, float, float, float, float, float>& t) const {
    return {thrust::get<0>(t) + thrust::get<3>(t) * dt, thrust::get<1>(t) + thrust::get<4>(t) * dt,
            thrust::get<2>(t) + thrust::get<5>(t) * dt};
  }
};

struct advance_nested {
  STRATA_HD strata_fixtures::nested_particle operator()(strata_fixtures::nested_particle p) const {
    p.pos.x += p.vel.x * dt;
    p.pos.y += p.vel.y * dt;
    p.pos.z += p.vel.z * dt;
    return p;
  }
};

std::int64_t particles() { return strata_bench::scaled(std::int64_t(1) << 26); }
double bytes() { return double(particles()) * 9 * sizeof(float); }  // 6 columns read, 3 written

strata::soa_vector<particle>& soa() {
  static strata::soa_vector<particle> v(strata_bench::records<particle>(std::size_t(particles())));
  return v;
}

void strata_iterators(benchmark::State& state) {
  auto& v = soa();
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v.view());
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v.view());
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] {
    thrust::transform(strata::records_begin(in), strata::records_end(in), strata::records_begin(out), advance{});
  });
}

void strata_packets(benchmark::State& state) {
  auto& v = soa();
  auto in = strata::packets(
      strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v.view()));
  auto out = strata::packets(strata::project<&particle::x, &particle::y, &particle::z>(v.view()));
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] {
    thrust::transform(strata::packets_begin(in), strata::packets_end(in), strata::packets_begin(out),
                      strata::per_record(advance{}));
  });
}

void strata_transform(benchmark::State& state) {
  auto& v = soa();
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v);
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v);
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] { strata::transform(in, out, advance{}); });
}

// The natural in-place calls over the whole record (7 leaves): each stores the 3 leaves advance
// changes, so they move what the hand kernel moves; packets_every_leaf is the same step storing
// every leaf back (thrust::transform over packets of the whole record, 7 columns read, 7 written).
struct advance_in_place {
  STRATA_HD void operator()(particle& p) const { p = advance{}(p); }
};
void strata_in_place(benchmark::State& state) {
  auto& v = soa();
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] { strata::transform(v, v, advance{}); });
}
void for_each_in_place(benchmark::State& state) {
  auto& v = soa();
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] { strata::for_each(v, advance_in_place{}); });
}
void packets_every_leaf(benchmark::State& state) {
  auto& v = soa();
  auto p = strata::packets(v.view());
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] {
    thrust::transform(strata::packets_begin(p), strata::packets_end(p), strata::packets_begin(p), strata::per_record(advance{}));
  });
}

void aosoa_transform(benchmark::State& state) {
  static strata::aosoa_vector<particle> v(strata_bench::records<particle>(std::size_t(particles())));
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v);
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v);
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] { strata::transform(in, out, advance{}); });
}

void thrust_zip(benchmark::State& state) {
  auto& v = soa();
  auto c = [&](auto col) { return thrust::device_pointer_cast(col.data()); };
  auto x = c(v.column<&particle::x>()), y = c(v.column<&particle::y>()), z = c(v.column<&particle::z>());
  auto in = thrust::make_zip_iterator(x, y, z, c(v.column<&particle::vx>()), c(v.column<&particle::vy>()),
                                      c(v.column<&particle::vz>()));
  auto out = thrust::make_zip_iterator(x, y, z);
  strata_bench::run_timed(state, bytes(), double(v.size()),
                          [&] { thrust::transform(in, in + std::ptrdiff_t(v.size()), out, advance_tuple{}); });
}

#if defined(STRATA_BACKEND_CUDA)
__global__ void hand_float4_kernel(float4* x, float4* y, float4* z, const float4* vx, const float4* vy, const float4* vz,
                                   std::int64_t n4) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n4; i += std::int64_t(gridDim.x) * blockDim.x) {
    float4 a = x[i], b = y[i], c = z[i], u = vx[i], v = vy[i], w = vz[i];
    a.x += u.x * dt, a.y += u.y * dt, a.z += u.z * dt, a.w += u.w * dt;
    b.x += v.x * dt, b.y += v.y * dt, b.z += v.z * dt, b.w += v.w * dt;
    c.x += w.x * dt, c.y += w.y * dt, c.z += w.z * dt, c.w += w.w * dt;
    x[i] = a, y[i] = b, z[i] = c;
  }
}
__global__ void aos_plain_kernel(particle* p, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = advance{}(p[i]);
}
inline int grid_for(std::int64_t work) {
  return int(std::min<std::int64_t>((work + 255) / 256, 132 * 16));
}
#endif

void hand_float4(benchmark::State& state) {
  auto& v = soa();
  std::int64_t n4 = std::int64_t(v.capacity() / 4);  // capacity is whole packets: no tail
  auto f4 = [&](auto col) { return reinterpret_cast<float4*>(col.data()); };
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] {
#if defined(STRATA_BACKEND_CUDA)
    hand_float4_kernel<<<grid_for(n4), 256>>>(f4(v.column<&particle::x>()), f4(v.column<&particle::y>()),
                                              f4(v.column<&particle::z>()), f4(v.column<&particle::vx>()),
                                              f4(v.column<&particle::vy>()), f4(v.column<&particle::vz>()), n4);
#else
    (void)f4, (void)n4;
    auto x = v.column<0>().data(), y = v.column<1>().data(), z = v.column<2>().data();
    auto vx = v.column<3>().data(), vy = v.column<4>().data(), vz = v.column<5>().data();
    STRATA_PARALLEL_FOR_IF(true)
    for (std::int64_t i = 0; i < std::int64_t(v.size()); ++i) x[i] += vx[i] * dt, y[i] += vy[i] * dt, z[i] += vz[i] * dt;
#endif
  });
}

void aos_plain(benchmark::State& state) {
  auto host = strata_bench::records<particle>(std::size_t(particles()));
  strata::buffer b(host.size() * sizeof(particle), strata::memory_space::device);
  strata::copy_bytes(b.data(), host.data(), b.bytes());
  auto* p = reinterpret_cast<particle*>(b.data());
  std::int64_t n = std::int64_t(host.size());
  strata_bench::run_timed(state, bytes(), double(n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    aos_plain_kernel<<<grid_for(n), 256>>>(p, n);
#else
    STRATA_PARALLEL_FOR_IF(true)
    for (std::int64_t i = 0; i < n; ++i) p[i] = advance{}(p[i]);
#endif
  });
}

void aos_padded(benchmark::State& state) {
  strata::aos_vector<particle> v(strata_bench::records<particle>(std::size_t(particles())));
  strata_bench::run_timed(state, bytes(), double(v.size()),
                          [&] { thrust::transform(v.begin(), v.end(), v.begin(), advance{}); });
}

using strata_fixtures::nested_particle;
strata::soa_vector<nested_particle>& nested() {
  static strata::soa_vector<nested_particle> v(strata_bench::records<nested_particle>(std::size_t(particles())));
  return v;
}
void nested_packets(benchmark::State& state) {
  auto& v = nested();
  auto in = strata::packets(strata::project<&nested_particle::pos, &nested_particle::vel>(v.view()));
  auto out = strata::packets(strata::project<&nested_particle::pos>(v.view()));
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] {
    thrust::transform(strata::packets_begin(in), strata::packets_end(in), strata::packets_begin(out),
                      strata::per_record(advance_nested{}));
  });
}
void nested_transform(benchmark::State& state) {
  auto& v = nested();
  auto in = strata::project<&nested_particle::pos, &nested_particle::vel>(v);
  auto out = strata::project<&nested_particle::pos>(v);
  strata_bench::run_timed(state, bytes(), double(v.size()), [&] { strata::transform(in, out, advance_nested{}); });
}
void nested_thrust_zip(benchmark::State& state) {
  auto& v = nested();
  auto c = [&](auto col) { return thrust::device_pointer_cast(col.data()); };
  using strata::member;
  auto x = c(v.column<member<&nested_particle::pos, &strata_fixtures::vec3::x>>());
  auto y = c(v.column<member<&nested_particle::pos, &strata_fixtures::vec3::y>>());
  auto z = c(v.column<member<&nested_particle::pos, &strata_fixtures::vec3::z>>());
  auto in = thrust::make_zip_iterator(x, y, z, c(v.column<member<&nested_particle::vel, &strata_fixtures::vec3::x>>()),
                                      c(v.column<member<&nested_particle::vel, &strata_fixtures::vec3::y>>()),
                                      c(v.column<member<&nested_particle::vel, &strata_fixtures::vec3::z>>()));
  auto out = thrust::make_zip_iterator(x, y, z);
  strata_bench::run_timed(state, bytes(), double(v.size()),
                          [&] { thrust::transform(in, in + std::ptrdiff_t(v.size()), out, advance_tuple{}); });
}

const std::string suffix = "/" + std::to_string(particles());
STRATA_BENCHMARK(strata_iterators, "particle_advance/strata_iterators" + suffix);
STRATA_BENCHMARK(strata_packets, "particle_advance/strata_packets" + suffix);
STRATA_BENCHMARK(strata_transform, "particle_advance/strata" + suffix);
STRATA_BENCHMARK(strata_in_place, "particle_advance/strata_in_place" + suffix);
STRATA_BENCHMARK(for_each_in_place, "particle_advance/for_each_in_place" + suffix);
STRATA_BENCHMARK(packets_every_leaf, "particle_advance/packets_every_leaf" + suffix);
STRATA_BENCHMARK(aosoa_transform, "particle_advance/strata_aosoa" + suffix);
STRATA_BENCHMARK(thrust_zip, "particle_advance/thrust_zip" + suffix);
STRATA_BENCHMARK(hand_float4, "particle_advance/hand_float4" + suffix);
STRATA_BENCHMARK(aos_plain, "particle_advance/aos_plain" + suffix);
STRATA_BENCHMARK(aos_padded, "particle_advance/aos_padded" + suffix);
STRATA_BENCHMARK(nested_packets, "particle_advance/strata_packets" + suffix + "/nested");
STRATA_BENCHMARK(nested_transform, "particle_advance/strata" + suffix + "/nested");
STRATA_BENCHMARK(nested_thrust_zip, "particle_advance/thrust_zip" + suffix + "/nested");

}  // namespace
