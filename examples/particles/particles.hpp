// SPDX-License-Identifier: Apache-2.0
// The particle demo: AoS particles in, SoA on the device, N steps of a kick-drift update in a
// harmonic field, total energy by reduction every K steps; every M steps the particles that left
// the box are removed, as many new ones injected, and all re-sorted by cell; AoS out. The same
// steps run in four layouts: plain AoS, padded AoS (strata::aos_vector), SoA through Thrust record
// iterators, SoA through strata's packet path and lifecycle calls (erase_if, append, sort_by).
// Runs on both backends.
#pragma once

#include <strata/strata.hpp>

#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/remove.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace strata_examples {

/// 7 floats, 28 bytes: position, velocity, mass.
struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz),
                           (float, mass));
};

/// Sorting by cell twice a run by default, every 50 steps of the GPU's 100: simulation codes sort far
/// less often than they step (LAMMPS's default is every 1000 steps), and the steps right after a
/// radix sort run slower in every layout (a state of the GPU, not of the data; the README's
/// Examples section gives the measured figure), so frequent sorting would dominate the timed steps.
/// What options.hpp reads from the command line; 0 picks the backend's default.
struct demo_options {
  std::size_t n = 0;
  int steps = 0, energy_every = 10, sort_every = 0;  // sort_every 0: steps / 2
  int gpus = 0;  // several ranks (distributed.hpp) when > 0
  std::string checkpoint;  // an HDF5 file: checkpoints of the ranks' particles and a restart (distributed.hpp)
  int checkpoint_every = 0;  // 0: steps / 2
};

/// Symplectic Euler in the field a = -k x: v += -k x dt, then x += v dt.
struct kick_drift {
  float k_dt, dt;
  STRATA_HD particle operator()(particle p) const {
    p.vx -= p.x * k_dt, p.vy -= p.y * k_dt, p.vz -= p.z * k_dt;
    p.x += p.vx * dt, p.y += p.vy * dt, p.z += p.vz * dt;
    return p;
  }
};
struct total_energy {
  float k;
  STRATA_HD double operator()(const particle& p) const {
    double v2 = double(p.vx) * p.vx + double(p.vy) * p.vy + double(p.vz) * p.vz;
    double x2 = double(p.x) * p.x + double(p.y) * p.y + double(p.z) * p.z;
    return 0.5 * double(p.mass) * (v2 + double(k) * x2);
  }
};
struct add_d {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};
/// Particles past the box [-box, box]^3 leave the domain.
struct outside_box {
  float box;
  STRATA_HD bool operator()(const particle& p) const {
    return p.x < -box || p.x > box || p.y < -box || p.y > box || p.z < -box || p.z > box;
  }
};
inline constexpr float demo_box = 0.99f;
/// Cell of a 64^3 grid over [-2, 2)^3, the sort key.
struct cell_of {
  STRATA_HD int operator()(const particle& p) const {
    auto c = [](float v) { int i = int((v + 2.0f) * 16.0f); return i < 0 ? 0 : i > 63 ? 63 : i; };
    return (c(p.z) * 64 + c(p.y)) * 64 + c(p.x);
  }
};

inline std::vector<particle> make_particles(std::size_t n, std::uint64_t salt = 2026) {
  // The same particles for a given n and salt on every run and machine: layouts and backends can be
  // compared run to run. Positions in [-1, 1], velocities in [-0.1, 0.1], masses in [0.5, 1].
  std::mt19937_64 g(salt * 0x9E3779B97F4A7C15ull ^ n);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<particle> p(n);
  for (auto& q : p) {
    q.x = u(g), q.y = u(g), q.z = u(g);
    q.vx = 0.1f * u(g), q.vy = 0.1f * u(g), q.vz = 0.1f * u(g);
    q.mass = 0.5f + 0.5f * std::abs(u(g));
  }
  return p;
}
/// New particles injected at step s to replace `count` that left: near the centre, the same for
/// every layout.
inline std::vector<particle> injected(std::size_t count, int step) {
  auto p = make_particles(count, 7000 + std::uint64_t(step));
  for (auto& q : p) q.x *= 0.5f, q.y *= 0.5f, q.z *= 0.5f;
  return p;
}

struct variant_result {
  std::string name;
  double seconds_per_step = 0, energy_change = 0;
  std::size_t removed = 0;
  std::vector<particle> final_state;
};

inline double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
inline void device_sync() { strata::synchronize(strata::stream_t{}); }

/// Seconds a piece of device work takes: CUDA events on the GPU (no host round trip in the
/// figure), a steady clock on the host backend.
template <class Work>
double time_on_device(Work&& work) {
#if defined(STRATA_BACKEND_CUDA)
  cudaEvent_t a, b;
  strata::detail::cuda_check(cudaEventCreate(&a), "cudaEventCreate");
  strata::detail::cuda_check(cudaEventCreate(&b), "cudaEventCreate");
  strata::detail::cuda_check(cudaEventRecord(a), "cudaEventRecord");
  work();
  strata::detail::cuda_check(cudaEventRecord(b), "cudaEventRecord");
  strata::detail::cuda_check(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  strata::detail::cuda_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1e-3;
#else
  double t = now();
  work();
  return now() - t;
#endif
}

/// Runs the steps on one layout. Ops supplies step(), energy() and sort() for it.
template <class Ops>
variant_result run_variant(const char* name, Ops& ops, const demo_options& o) {
  variant_result r;
  r.name = name;
  const double e0 = ops.energy();
  double stepping = 0;
  for (int s = 1; s <= o.steps; ++s) {
    const double t = time_on_device([&] { ops.step(); });
    // Step 1 also loads the step's kernels (CUDA loads modules lazily, milliseconds on the H200):
    // left out of the per-step time when there are more steps.
    if (s > 1 || o.steps == 1) stepping += t;
    if (o.energy_every > 0 && s % o.energy_every == 0) (void)ops.energy();
    if (o.sort_every > 0 && s % o.sort_every == 0) ops.refresh(s);
    if (o.steps >= 200 && s % (o.steps / 4) == 0) std::fprintf(stderr, "  %s: step %d of %d\n", name, s, o.steps);
  }
  r.seconds_per_step = stepping / std::max(1, o.steps - 1);
  r.energy_change = (ops.energy() - e0) / e0;
  r.removed = ops.removed;
  r.final_state = ops.to_host();
  return r;
}

inline std::vector<particle> host_copy(const thrust::device_vector<particle>& p) {
  std::vector<particle> h(p.size());
  thrust::copy(p.begin(), p.end(), h.begin());
  return h;
}
template <class C>
std::vector<particle> host_copy(const C& p) {
  return p.to_host();
}

/// The steps through Thrust on any container of particles: plain AoS (thrust::device_vector),
/// padded AoS (strata::aos_vector) or SoA through record iterators (strata::soa_vector).
template <class Container>
struct thrust_ops {
  Container p;
  thrust::device_vector<int> keys;
  kick_drift f;
  float k;
  std::size_t removed = 0;
  void step() { thrust::transform(p.begin(), p.end(), p.begin(), f); }
  double energy() { return thrust::transform_reduce(p.begin(), p.end(), total_energy{k}, 0.0, add_d{}); }
  /// Remove the particles outside the box (stable), inject as many, sort by cell (stable).
  void refresh(int s) {
    const auto kept = thrust::remove_if(p.begin(), p.end(), outside_box{demo_box}) - p.begin();
    const std::size_t gone = p.size() - std::size_t(kept);
    removed += gone;
    const auto fresh = injected(gone, s);
    if constexpr (std::is_same_v<Container, thrust::device_vector<particle>>) {
      p.erase(p.begin() + kept, p.end());
      p.insert(p.end(), fresh.begin(), fresh.end());
    } else {
      p.resize(std::size_t(kept));
      p.append(std::span<const particle>(fresh));
    }
    keys.resize(p.size());
    thrust::transform(p.begin(), p.end(), keys.begin(), cell_of{});
    thrust::stable_sort_by_key(keys.begin(), keys.end(), p.begin());
  }
  std::vector<particle> to_host() { return host_copy(p); }
};
using soa_thrust_ops = thrust_ops<strata::soa_vector<particle>>;

struct soa_packet_ops : soa_thrust_ops {
  void step() {
    auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(p);
    strata::transform(in, in, f);
  }
  double energy() { return strata::transform_reduce(p, total_energy{k}, 0.0, add_d{}); }
  void refresh(int s) {
    const std::size_t gone = strata::erase_if(p, outside_box{demo_box});
    removed += gone;
    p.append(injected(gone, s));
    // Cells of a 64^3 grid: 18 bits. Through a spare container that lives across steps: one gather
    // into its storage, then the two trade places, where sorting in place moves the records twice.
    strata::sort_by(p, cell_of{}, spare, strata::stream_t{}, 0, 18);
  }
  strata::soa_vector<particle> spare;
};

/// Runs every variant and prints the table; returns 0 when all variants agree with each other.
inline int run_distributed_demo(demo_options o);  // distributed.hpp, where the build has a transport

inline int run_demo(demo_options o) {
  if (!o.checkpoint.empty() && o.gpus == 0) o.gpus = 1;  // checkpoints are written by the ranks' run
  if (o.gpus > 0) {
#if defined(STRATA_DEMO_DISTRIBUTED)
    return run_distributed_demo(o);
#else
    std::fprintf(stderr, "--gpus needs the distributed layer: this CUDA build found no NCCL (pip install nvidia-nccl-cu13)\n");
    return 2;
#endif
  }
#if defined(STRATA_BACKEND_CUDA)
  const char* backend = "CUDA";
  if (!o.n) o.n = std::size_t(1) << 26;
  if (!o.steps) o.steps = 100;
#else
  const char* backend = "host (Thrust OpenMP system, no GPU)";
  if (!o.n) o.n = std::size_t(1) << 20;
  if (!o.steps) o.steps = 20;
#endif
  if (!o.sort_every) o.sort_every = std::max(1, o.steps / 2);
  const float dt = 1e-3f, k = 1.0f;
  const kick_drift f{k * dt, dt};
  std::printf("strata particle demo: %zu particles, %d steps, energy every %d, sort by cell every %d, backend %s\n", o.n,
              o.steps, o.energy_every, o.sort_every, backend);
  const auto input = make_particles(o.n);  // AoS, as files and old code give it

  // Yardstick: a device copy of the bytes one step must move (6 of 7 columns read and written).
  const std::size_t step_bytes = o.n * 6 * sizeof(float) * 2;
  strata::buffer a(step_bytes / 2, strata::memory_space::device), b(step_bytes / 2, strata::memory_space::device);
  strata::fill_bytes_async(a.data(), 0, a.bytes(), strata::stream_t{}, strata::memory_space::device);
  double copy_s = 0;
  for (int i = 0; i < 12; ++i) {  // the mean of 10 copies after 2 warm-ups, timed like the steps
    double t = time_on_device([&] { strata::copy_bytes_async(b.data(), a.data(), a.bytes(), strata::stream_t{}); });
    if (i >= 2) copy_s += t / 10;
  }
  const double memcpy_gbps = double(step_bytes) / copy_s / 1e9;

  std::vector<variant_result> results;
  {
    thrust_ops<thrust::device_vector<particle>> ops{{input.begin(), input.end()}, thrust::device_vector<int>(o.n), f, k};
    results.push_back(run_variant("AoS plain", ops, o));
  }
  {
    thrust_ops<strata::aos_vector<particle>> ops{strata::aos_vector<particle>(input), thrust::device_vector<int>(o.n), f, k};
    results.push_back(run_variant("AoS padded", ops, o));
  }
  {
    soa_thrust_ops ops{strata::soa_vector<particle>(input), thrust::device_vector<int>(o.n), f, k};
    results.push_back(run_variant("SoA Thrust iterators", ops, o));
  }
  {
    soa_packet_ops ops{{strata::soa_vector<particle>(input), thrust::device_vector<int>(o.n), f, k}, {}};
    results.push_back(run_variant("SoA packets", ops, o));
  }

  std::printf("\n| variant | ms/step | GB/s | x memcpy | relative energy change | left the box (re-injected) |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (auto& r : results)
    std::printf("| %s | %.3f | %.0f | %.2f | %+.2e | %zu |\n", r.name.c_str(), r.seconds_per_step * 1e3,
                double(step_bytes) / r.seconds_per_step / 1e9, double(step_bytes) / r.seconds_per_step / 1e9 / memcpy_gbps,
                r.energy_change, r.removed);
  std::printf("device copy of the same bytes: %.0f GB/s; ms/step: mean of steps 2..%d (step 1 also pays one-time costs, such as CUDA loading the kernels)\n",
              memcpy_gbps, std::max(2, o.steps));

  // The four layouts compute the same physics: their final states agree.
  int mismatches = 0;
  for (std::size_t v = 1; v < results.size(); ++v) {
    if (results[v].final_state.size() != results[0].final_state.size() || results[v].removed != results[0].removed) {
      ++mismatches;
      continue;
    }
    for (std::size_t i = 0; i < results[0].final_state.size(); i += 997) {
      const particle &p = results[0].final_state[i], &q = results[v].final_state[i];
      if (std::abs(p.x - q.x) > 1e-4f || std::abs(p.vz - q.vz) > 1e-4f) ++mismatches;
    }
  }
  std::printf("final states of the four layouts %s\n", mismatches ? "DIFFER" : "agree (sampled every 997th particle)");
  return mismatches ? 1 : 0;
}

}  // namespace strata_examples
