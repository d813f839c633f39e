// SPDX-License-Identifier: Apache-2.0
// The particle demo over several ranks (--gpus N): the box split into N slabs along x, one rank per
// slab (one GPU each on the CUDA backend, NCCL between them; ranks in one process on the host
// backend). Every step kicks and drifts every shard, then migrates the particles that crossed a
// slab face; the energy is all-reduced. The same steps run on one rank, and the final particles of
// both runs must be the same bits (compared after sorting both by their bytes: migration changes
// the order, not the physics).
#pragma once

#include "particles.hpp"

#include <strata/distributed/distributed_vector.hpp>
#if defined(STRATA_DEMO_HDF5)
#include <strata/io/distributed.hpp>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace strata_examples {

/// The slab of [-1, 1) along x a particle belongs to (particles past the box stay in the outer slabs).
struct slab_of_x {
  int ranks;
  STRATA_HD int operator()(const particle& p) const {
    const int r = int((p.x + 1.0f) * 0.5f * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

inline bool bytes_less(const particle& a, const particle& b) { return std::memcmp(&a, &b, sizeof(particle)) < 0; }

inline int run_distributed_demo(demo_options o) {  // declared in particles.hpp
#if defined(STRATA_BACKEND_CUDA)
  if (!o.n) o.n = std::size_t(1) << 24;
  if (!o.steps) o.steps = 100;
#else
  if (!o.n) o.n = std::size_t(1) << 18;
  if (!o.steps) o.steps = 20;
#endif
  const float dt = 1e-3f, k = 1.0f;
  const kick_drift f{k * dt, dt};
  const auto input = make_particles(o.n);
  std::printf("strata particle demo on %d ranks: %zu particles, %d steps, migration after every drift, energy every %d\n",
              o.gpus, o.n, o.steps, o.energy_every);

  // One rank: the reference.
  strata::soa_vector<particle> one(input);
  double e0 = strata::transform_reduce(one, total_energy{k}, 0.0, add_d{});
  double t = now();
  for (int s = 0; s < o.steps; ++s) strata::transform(one, one, f);
  device_sync();
  const double one_s = (now() - t) / o.steps;
  const double e1 = strata::transform_reduce(one, total_energy{k}, 0.0, add_d{});

  // N ranks.
  auto comm = strata::distributed::communicator::local(o.gpus);
  strata::distributed::distributed_soa_vector<particle> ps(comm);
  // Room for an eighth more than a slab's share of the particles: the slabs' populations drift,
  // and a shard that must grow waits for its stream and copies itself.
  const std::size_t share = input.size() / std::size_t(o.gpus);
  ps.reserve(share + share / 8);
  ps.scatter(input);
  ps.migrate(slab_of_x{o.gpus});  // each rank starts with its own slab
  const double d0 = ps.transform_reduce_sum<double>(total_energy{k});
  std::int64_t moved = 0;
  auto step = [&](strata::distributed::distributed_soa_vector<particle>& v, int s) {
    v.transform(f);
    const std::int64_t sent = v.migrate(slab_of_x{o.gpus}).sent;
    if (o.energy_every > 0 && (s + 1) % o.energy_every == 0) (void)v.transform_reduce_sum<double>(total_energy{k});
    return sent;
  };
#if defined(STRATA_DEMO_HDF5)
  // Checkpoints: every `every` steps the ranks' particles go to the file, one group per step.
  const int every = o.checkpoint_every > 0 ? o.checkpoint_every : std::max(1, o.steps / 2);
  std::unique_ptr<strata::io::file> file;
  if (!o.checkpoint.empty()) file = std::make_unique<strata::io::file>(strata::io::file::create(o.checkpoint));
  double checkpoint_s = 0;
  int checkpoints = 0, first_checkpoint = 0;
#endif
  t = now();
  for (int s = 0; s < o.steps; ++s) {
    moved += step(ps, s);
#if defined(STRATA_DEMO_HDF5)
    if (file && (s + 1) % every == 0 && s + 1 < o.steps) {
      const double c0 = now();
      strata::io::write(*file, "steps/" + std::to_string(s + 1), ps);
      checkpoint_s += now() - c0;
      if (checkpoints++ == 0) first_checkpoint = s + 1;
    }
#endif
  }
  comm.synchronize_all();
#if defined(STRATA_DEMO_HDF5)
  const double many_s = (now() - t - checkpoint_s) / o.steps;
#else
  const double many_s = (now() - t) / o.steps;
#endif
  const double d1 = ps.transform_reduce_sum<double>(total_energy{k});

  auto a = one.to_host(), b = ps.gather();
  std::sort(a.begin(), a.end(), bytes_less);
  std::sort(b.begin(), b.end(), bytes_less);
  const bool same = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(particle)) == 0;
  std::printf("| run | ms/step | relative energy change |\n| --- | ---: | ---: |\n");
  std::printf("| 1 rank | %.3f | %+.2e |\n| %d ranks (migrate every step) | %.3f | %+.2e |\n", one_s * 1e3, (e1 - e0) / e0, o.gpus,
              many_s * 1e3, (d1 - d0) / d0);
  std::printf("particles migrated: %lld in %d steps; per rank now:", (long long)moved, o.steps);
  for (int r = 0; r < comm.local_ranks(); ++r) std::printf(" %zu", ps.shard(r).size());
  std::printf("\nfinal particles %s the one-rank run's\n", same ? "are bit for bit" : "DIFFER from");
#if defined(STRATA_DEMO_HDF5)
  if (file) {
    if (checkpoints == 0) {
      std::printf("no checkpoint written: --checkpoint-every %d is not below --steps %d\n", every, o.steps);
      return 1;
    }
    const double bytes = double(ps.size()) * double(sizeof(particle)) * checkpoints;
    std::printf("checkpoints: %d to %s, %.1f ms each (%.2f GB/s)\n", checkpoints, o.checkpoint.c_str(), checkpoint_s / checkpoints * 1e3,
                bytes / checkpoint_s * 1e-9);
    // A restart: the first checkpoint read back onto the ranks, the remaining steps run again.
    strata::distributed::distributed_soa_vector<particle> again(comm);
    again.reserve(share + share / 8);
    strata::io::read(*file, "steps/" + std::to_string(first_checkpoint), again);
    for (int s = first_checkpoint; s < o.steps; ++s) (void)step(again, s);
    bool restarted = true;
    for (int r = 0; r < comm.local_ranks(); ++r) {
      const auto x = ps.shard(r).to_host(), y = again.shard(r).to_host();
      restarted = restarted && x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(particle)) == 0;
    }
    std::printf("restart from step %d: every rank's particles %s the uninterrupted run's\n", first_checkpoint,
                restarted ? "are bit for bit" : "DIFFER from");
    return same && restarted ? 0 : 1;
  }
#endif
  return same ? 0 : 1;
}

}  // namespace strata_examples
