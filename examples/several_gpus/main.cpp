// SPDX-License-Identifier: Apache-2.0
// Several GPUs: a distributed_soa_vector holds one soa_vector shard per rank. Here the ranks own
// slabs of the unit interval along x; every step drifts every shard on its own GPU and stream, then
// migrate() sends each particle that crossed a slab face to its new owner (NCCL on the CUDA
// backend, one rank per GPU; the host backend's stand-in transport runs 3 ranks in this process).
// Reductions add the ranks' partial sums. The particles must end where one soa_vector puts them.
#include <strata/strata.hpp>
#include <strata/distributed/distributed_vector.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, vx), (float, mass), (int, id));
};

struct drift {  // x wraps around [0, 1); dt and velocities are powers of two apart: exact steps
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * (1.0f / 32);
    p.x = p.x < 0 ? p.x + 1 : p.x >= 1 ? p.x - 1 : p.x;
    return p;
  }
};
struct slab_of {  // the rank that owns a particle
  int ranks;
  STRATA_HD int operator()(const particle& p) const {
    const int r = int(p.x * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};
struct mass_of {
  STRATA_HD double operator()(const particle& p) const { return p.mass; }
};
struct plus {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

int main() {
  namespace dist = strata::distributed;
#if defined(STRATA_BACKEND_CUDA)
  int ranks = 0;
  strata::detail::cuda_check(cudaGetDeviceCount(&ranks), "cudaGetDeviceCount");
#else
  int ranks = 3;
#endif
  const int n = 30000, steps = 8;
  std::vector<particle> input(n);
  for (int i = 0; i < n; ++i) input[std::size_t(i)] = {float(i % 1024) / 1024, float((i * 7) % 64 - 32) / 64, 1.0f + float(i % 4), i};

  try {
    auto comm = dist::communicator::local(ranks);
    dist::distributed_soa_vector<particle> ps(comm);
    ps.scatter(input);  // an even split, whatever the positions
    std::int64_t moved = ps.migrate(slab_of{ranks}).sent;  // then each rank takes its own slab
    for (int s = 0; s < steps; ++s) {
      ps.transform(drift{});
      moved += ps.migrate(slab_of{ranks}).sent;
    }
    const double mass = ps.transform_reduce_sum<double>(mass_of{});

    // The reference: one container, the same steps.
    strata::soa_vector<particle> one(input);
    for (int s = 0; s < steps; ++s) strata::transform(one, one, drift{});
    bool ok = mass == strata::transform_reduce(one, mass_of{}, 0.0, plus{});
    for (int l = 0; l < comm.local_ranks(); ++l)  // every rank holds only its slab
      for (const particle& p : ps.shard(l).to_host()) ok = ok && slab_of{ranks}(p) == comm.rank(l);
    auto a = one.to_host(), b = ps.gather();
    auto by_id = [](const particle& p, const particle& q) { return p.id < q.id; };
    std::sort(a.begin(), a.end(), by_id), std::sort(b.begin(), b.end(), by_id);
    ok = ok && a.size() == b.size();
    for (std::size_t i = 0; ok && i < a.size(); ++i) ok = a[i].x == b[i].x && a[i].vx == b[i].vx && a[i].id == b[i].id;
    std::printf("%d particles on %d ranks, %d steps, %lld migrated; per rank:", n, ranks, steps, (long long)moved);
    for (int l = 0; l < comm.local_ranks(); ++l) std::printf(" %zu", ps.shard(l).size());
    std::printf("; total mass %.0f: %s\n", mass, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "several_gpus: %s\n", e.what());
    return 1;
  }
}
