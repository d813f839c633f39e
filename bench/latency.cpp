// SPDX-License-Identifier: Apache-2.0
// Small steps back to back, as a time-stepping loop issues them: 200 calls queued without a
// synchronization in between, timed with CUDA events around the batch (per-call device time; no
// L2 flush, as a loop over a small state keeps it in L2), and the host's time to issue one call
// (counter enqueue_us). Workload transform_latency: the particle advance (read 6 leaves, write 3)
// and GELU on one fp32 column, n = 4096, 65536, 2^20, 2^24; strata::transform against a
// hand-written float4 kernel and thrust::transform over a zip of the raw columns; the particle
// advance also on a stream the caller made (strata_stream / hand_float4_stream).
#include "common.hpp"

#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>

#include "../fixtures/records.hpp"

#include <thrust/device_ptr.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>

#include <chrono>
#include <cmath>
#include <map>

namespace {

using strata_fixtures::particle;
constexpr int batch = 200;
constexpr float dt = 0.01f;

struct scalar {
  BOOST_HANA_DEFINE_STRUCT(scalar, (float, v));
};
STRATA_HD inline float gelu(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }
struct gelu_record {
  STRATA_HD scalar operator()(scalar s) const { return {gelu(s.v)}; }
};
struct gelu_float {
  STRATA_HD float operator()(float x) const { return gelu(x); }
};
struct advance {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * dt, p.y += p.vy * dt, p.z += p.vz * dt;
    return p;
  }
};
struct advance_tuple {
  STRATA_HD thrust::tuple<float, float, float> operator()(const thrust::tuple<float, float, float, float, float, float>& t) const {
    return {thrust::get<0>(t) + thrust::get<3>(t) * dt, thrust::get<1>(t) + thrust::get<4>(t) * dt, thrust::get<2>(t) + thrust::get<5>(t) * dt};
  }
};

#if defined(STRATA_BACKEND_CUDA)
__global__ void hand_advance(float4* x, float4* y, float4* z, const float4* vx, const float4* vy, const float4* vz, std::int64_t n4) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 a = x[i], b = y[i], c = z[i], u = vx[i], v = vy[i], w = vz[i];
  a.x += u.x * dt, a.y += u.y * dt, a.z += u.z * dt, a.w += u.w * dt;
  b.x += v.x * dt, b.y += v.y * dt, b.z += v.z * dt, b.w += v.w * dt;
  c.x += w.x * dt, c.y += w.y * dt, c.z += w.z * dt, c.w += w.w * dt;
  x[i] = a, y[i] = b, z[i] = c;
}
__global__ void hand_gelu(float4* p, std::int64_t n4) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 a = p[i];
  a.x = gelu(a.x), a.y = gelu(a.y), a.z = gelu(a.z), a.w = gelu(a.w);
  p[i] = a;
}
#endif

/// Issues `batch` calls back to back: per-call device time (events around the batch) as the
/// iteration time, and per-call host issue time as the enqueue_us counter.
template <class Call>
void back_to_back(benchmark::State& state, double bytes, double n, Call&& call) {
  for (int i = 0; i < 20; ++i) call();
  strata_bench::sync();
  strata_bench::timer t;
  double enqueue = 0;
  for (auto _ : state) {
    t.start();
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) call();
    enqueue += std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / batch;
    state.SetIterationTime(t.stop() / batch);
  }
  state.counters["bytes"] = bytes;
  state.counters["n"] = n;
  state.counters["enqueue_us"] = enqueue / double(state.iterations()) * 1e6;
}

strata::soa_vector<particle>& particles(std::int64_t n) {
  static std::map<std::int64_t, strata::soa_vector<particle>> cache;
  auto [it, fresh] = cache.try_emplace(n);
  if (fresh) it->second = strata::soa_vector<particle>(strata_bench::records<particle>(std::size_t(n)));
  return it->second;
}
strata::soa_vector<scalar>& column(std::int64_t n) {
  static std::map<std::int64_t, strata::soa_vector<scalar>> cache;
  auto [it, fresh] = cache.try_emplace(n);
  if (fresh) it->second = strata::soa_vector<scalar>(strata_bench::records<scalar>(std::size_t(n)));
  return it->second;
}

void strata_advance(benchmark::State& s, std::int64_t n) {
  auto& v = particles(n);
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v);
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v);
  back_to_back(s, double(n) * 9 * 4, double(n), [&] { strata::transform(in, out, advance{}); });
}
#if defined(STRATA_BACKEND_CUDA)
/// A stream the caller made (blocking, so the legacy-stream events around the batch order with
/// it): strata then also checks the stream's device and capture state on every call.
cudaStream_t user_stream() {
  static cudaStream_t s = [] {
    cudaStream_t made;
    STRATA_BENCH_CHECK(cudaStreamCreate(&made));
    return made;
  }();
  return s;
}
#else
strata::stream_t user_stream() { return {}; }
#endif
void strata_advance_stream(benchmark::State& s, std::int64_t n) {
  auto& v = particles(n);
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v);
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v);
  const auto stream = user_stream();
  back_to_back(s, double(n) * 9 * 4, double(n), [&] { strata::transform(in, out, advance{}, stream); });
}
void hand_advance_stream(benchmark::State& s, std::int64_t n) {
  auto& v = particles(n);
  auto f4 = [&](auto col) { return reinterpret_cast<float4*>(col.data()); };
  const std::int64_t n4 = (n + 3) / 4;
  const auto stream = user_stream();
  back_to_back(s, double(n) * 9 * 4, double(n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    hand_advance<<<unsigned((n4 + 255) / 256), 256, 0, stream>>>(f4(v.column<&particle::x>()), f4(v.column<&particle::y>()),
                                                                 f4(v.column<&particle::z>()), f4(v.column<&particle::vx>()),
                                                                 f4(v.column<&particle::vy>()), f4(v.column<&particle::vz>()), n4);
#else
    (void)f4, (void)n4, (void)stream;
    strata::transform(v, v, advance{});
#endif
  });
}
void zip_advance(benchmark::State& s, std::int64_t n) {
  auto& v = particles(n);
  auto c = [&](auto col) { return thrust::device_pointer_cast(col.data()); };
  auto x = c(v.column<&particle::x>()), y = c(v.column<&particle::y>()), z = c(v.column<&particle::z>());
  auto in = thrust::make_zip_iterator(x, y, z, c(v.column<&particle::vx>()), c(v.column<&particle::vy>()), c(v.column<&particle::vz>()));
  auto out = thrust::make_zip_iterator(x, y, z);
  back_to_back(s, double(n) * 9 * 4, double(n), [&] { thrust::transform(in, in + std::ptrdiff_t(n), out, advance_tuple{}); });
}
void hand_advance_bench(benchmark::State& s, std::int64_t n) {
  auto& v = particles(n);
  auto f4 = [&](auto col) { return reinterpret_cast<float4*>(col.data()); };
  const std::int64_t n4 = (n + 3) / 4;
  back_to_back(s, double(n) * 9 * 4, double(n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    hand_advance<<<unsigned((n4 + 255) / 256), 256>>>(f4(v.column<&particle::x>()), f4(v.column<&particle::y>()), f4(v.column<&particle::z>()),
                                                      f4(v.column<&particle::vx>()), f4(v.column<&particle::vy>()), f4(v.column<&particle::vz>()), n4);
#else
    (void)f4, (void)n4;
    strata::transform(v, v, advance{});
#endif
  });
}
void strata_gelu(benchmark::State& s, std::int64_t n) {
  auto& v = column(n);
  back_to_back(s, double(n) * 8, double(n), [&] { strata::transform(v, v, gelu_record{}); });
}
void thrust_gelu(benchmark::State& s, std::int64_t n) {
  auto& v = column(n);
  auto p = thrust::device_pointer_cast(v.column<&scalar::v>().data());
  back_to_back(s, double(n) * 8, double(n), [&] { thrust::transform(p, p + std::ptrdiff_t(n), p, gelu_float{}); });
}
void hand_gelu_bench(benchmark::State& s, std::int64_t n) {
  auto& v = column(n);
  const std::int64_t n4 = (n + 3) / 4;
  back_to_back(s, double(n) * 8, double(n), [&] {
#if defined(STRATA_BACKEND_CUDA)
    hand_gelu<<<unsigned((n4 + 255) / 256), 256>>>(reinterpret_cast<float4*>(v.column<&scalar::v>().data()), n4);
#else
    (void)n4;
    strata::transform(v, v, gelu_record{});
#endif
  });
}

const bool registered = [] {
  for (std::int64_t n : {std::int64_t(4096), std::int64_t(65536), std::int64_t(1) << 20, std::int64_t(1) << 24}) {
    n = std::max<std::int64_t>(64, strata_bench::scaled(n));
    auto reg = [&](std::string variant, std::string record, void (*fn)(benchmark::State&, std::int64_t)) {
      const std::string name = std::string("transform_latency/").append(variant).append("/").append(std::to_string(n)).append("/").append(record);
      strata_bench::configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { fn(s, n); }));
    };
    reg("strata", "particle", strata_advance);
    reg("hand_float4", "particle", hand_advance_bench);
    reg("thrust_zip", "particle", zip_advance);
    reg("strata_stream", "particle", strata_advance_stream);
    reg("hand_float4_stream", "particle", hand_advance_stream);
    reg("strata", "gelu", strata_gelu);
    reg("hand_float4", "gelu", hand_gelu_bench);
    reg("thrust_zip", "gelu", thrust_gelu);
  }
  return true;
}();

}  // namespace
