// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the distributed layer, one process driving every GPU of the machine (NCCL):
//   migrate      N particles per GPU, about 10% (and 2%) of every rank's records leaving for the next
//                rank per call (ranks are intervals of a key shifted a little each call), against NCCL
//                moving the same bytes between raw buffers (one grouped send and receive of one
//                contiguous buffer per rank pair) in the same run; and migrate with nothing to move.
//   weak scaling the particle demo's step (kick-drift every particle, migrate across slab faces,
//                energy all-reduced every 10th step) with N particles per GPU on 1, 2, ... GPUs:
//                efficiency = time on 1 GPU / time on G, the median over repetitions that
//                interleave the configurations, the particles running on from one to the next
//                (the steady state of a long run: shards' memory already grown).
//   exchange ops NCCL alone: the same bytes to the ring neighbours as 7 column sends or one send.
//   passes       migrate's counting, listing and split passes alone on one GPU, with a device copy
//                of the same records for scale.
//   halo         halo_exchange of the particles within a cutoff of each slab face (both directions)
//                and drop_ghosts, against NCCL moving the same bytes between raw buffers.
// --parts picks some of migrate,scaling,ops,passes,halo (all by default); --help lists the options.
// Prints a markdown table and writes JSON (--out). The host backend runs the same code on its
// stand-in transport (small N) so that CI compiles and exercises it.
#include <strata/distributed/distributed_vector.hpp>

#include "particles/distributed.hpp"  // the demo's particle, step and slabs

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using strata_examples::particle;
namespace dist = strata::distributed;

double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// n particles, positions in [-1, 1)^3, velocities in [-0.1, 0.1), masses in [0.5, 1), from a hash of
/// the index (threads fill slices; the same particles on every run).
std::vector<particle> make(std::size_t n) {
  std::vector<particle> p(n);
  auto unit = [](std::uint64_t& s) {
    s += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return float((z ^ (z >> 31)) >> 40) * 0x1p-24f;
  };
  const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
        std::uint64_t s = i * 7919;
        particle& q = p[i];
        q.x = 2 * unit(s) - 1, q.y = 2 * unit(s) - 1, q.z = 2 * unit(s) - 1;
        q.vx = 0.2f * unit(s) - 0.1f, q.vy = 0.2f * unit(s) - 0.1f, q.vz = 0.2f * unit(s) - 0.1f;
        q.mass = 0.5f + 0.5f * unit(s);
      }
    });
  for (auto& th : pool) th.join();
  return p;
}

/// Rank of a particle: intervals of the fraction of x * 1000 (uniform, unrelated to the slab) shifted
/// by phase; raising phase by d moves a fraction d * ranks of each rank's records to the next rank.
struct ring_of {
  int ranks;
  float phase;
  STRATA_HD int operator()(const particle& p) const {
    float w = p.x * 1000.0f;
    w = w - floorf(w) + phase;
    w -= floorf(w);
    const int r = int(w * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
/// f() once to warm up, then the median of iters timed calls, in ms.
template <class F>
double median_ms(F f, int iters) {
  f();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    const double t0 = wall();
    f();
    t.push_back(wall() - t0);
  }
  return median(t) * 1e3;
}

struct migrate_row {
  int gpus;
  double moved_per_rank, migrate_ms, raw_ms, idle_ms;
};
struct scaling_row {
  int gpus;
  double step_ms, drift_only_ms, moved_per_step, efficiency;
};

migrate_row bench_migrate(int gpus, std::size_t n, int iters, float fraction) {
  auto comm = dist::communicator::local(gpus);
  dist::distributed_soa_vector<particle> d(comm);
  d.scatter(make(n * std::size_t(gpus)));
  const float step = fraction / float(gpus);
  float phase = 0;
  d.migrate(ring_of{gpus, phase});  // every record to its rank
  d.migrate(ring_of{gpus, phase += step});  // warm: buffers and pools reach their size
  std::vector<double> t_migrate, t_idle;
  double moved = 0;
  for (int i = 0; i < iters; ++i) {
    const double t0 = wall();
    const auto m = d.migrate(ring_of{gpus, phase += step});
    t_migrate.push_back(wall() - t0);
    moved += double(m.sent) / gpus;
  }
  for (int i = 0; i < iters; ++i) {
    const double t0 = wall();
    d.migrate(ring_of{gpus, phase});  // nothing moves
    t_idle.push_back(wall() - t0);
  }
  moved /= iters;
  // NCCL on raw buffers: each rank sends the same bytes to the next rank and receives from the one
  // before, one contiguous buffer each way.
  const std::size_t bytes = std::size_t(moved) * sizeof(particle);
  std::vector<strata::buffer> out, in;
  for (int l = 0; l < comm.local_ranks(); ++l) {
    strata::detail::device_guard g(comm.device(l));
    out.emplace_back(bytes, strata::memory_space::device);
    in.emplace_back(bytes, strata::memory_space::device);
  }
  auto raw = [&] {
    comm.group([&] {
      for (int l = 0; l < comm.local_ranks(); ++l) {
        const int r = comm.rank(l);
        comm.send(l, out[std::size_t(l)].data(), bytes, (r + 1) % gpus);
        comm.recv(l, in[std::size_t(l)].data(), bytes, (r + gpus - 1) % gpus);
      }
    });
    comm.synchronize_all();
  };
  const double raw_ms = median_ms(raw, iters);
  return {gpus, moved, median(t_migrate) * 1e3, raw_ms, median(t_idle) * 1e3};
}

/// Dest for the passes table: rank 1 for a fraction f of the particles (by the fraction of x * 1000,
/// unrelated to x's slab), rank 0 for the others.
struct share_of {
  float f;
  STRATA_HD int operator()(const particle& p) const {
    const float w = p.x * 1000.0f;
    return w - floorf(w) < f ? 1 : 0;
  }
};
struct passes_row {
  double fraction, count_ms, list_ms, split_ms, copy_ms;
};
/// migrate's passes alone on one GPU, n records of which a fraction leave: the counting pass (with
/// the wait for its head), the listing pass (the few-leaving path: indices in order), the split
/// (the many-leaving path: every record streamed to the staying or the leaving container), and a
/// device copy of the records for scale (the split reads and writes each record once, as it does).
/// Median of iters, each timed to the end of its work.
passes_row bench_passes(std::size_t n, float fraction, int iters) {
  strata::soa_vector<particle> a(make(n)), kept, left;
  const strata::stream_t st{};
  auto v = a.view();
  const dist::detail::leaving_for<decltype(v), share_of> pick{v, share_of{fraction}, 0};
  strata::detail::scratch_block head(sizeof(std::int64_t) * strata::detail::split_head_words(0), st);
  std::vector<std::int64_t> h(strata::detail::split_head_words(0));
  auto counted = [&] {
    auto c = std::make_unique<strata::detail::keyed_split>(pick, strata::index_t(n), 0, head.as<std::int64_t>(), st, "bench passes");
    strata::copy_bytes_async(h.data(), head.data(), sizeof(std::int64_t) * h.size(), st);
    strata::synchronize(st);
    return c;
  };
  const std::int64_t out = strata::detail::decode_split_head((counted(), h.data()), 0).picked;
  kept.resize_for_overwrite(n - std::size_t(out)), left.resize_for_overwrite(std::size_t(out));
  strata::soa_vector<particle> copy(n);
  strata::detail::scratch_block idx(sizeof(std::int64_t) * std::size_t(std::max<std::int64_t>(out, 1)), st);
  std::vector<double> tc, tl, ts, tcopy;
  for (int i = -1; i < iters; ++i) {
    double t0 = wall();
    auto c = counted();
    const double t1 = wall();
    c->list(pick, 0, idx.as<std::int64_t>(), nullptr);
    strata::synchronize(st);
    const double t2 = wall();
    auto c2 = counted();
    const double t3 = wall();
    c2->split(pick, v, kept.view(), left.view(), -1);
    strata::synchronize(st);
    const double t4 = wall();
    for (std::size_t col = 0; col < strata::soa_vector<particle>::leaves; ++col)
      strata::copy_bytes_async(copy.view().column_bytes(col), a.view().column_bytes(col), n * strata::soa_vector<particle>::layout_type::leaf_sizes[col], st);
    strata::synchronize(st);
    const double t5 = wall();
    if (i < 0) continue;
    tc.push_back(t1 - t0), tl.push_back(t2 - t1), ts.push_back(t4 - t3), tcopy.push_back(t5 - t4);
  }
  return {double(out) / double(n), median(tc) * 1e3, median(tl) * 1e3, median(ts) * 1e3, median(tcopy) * 1e3};
}

/// Ghosts of the demo's slabs: direction 0 sends the particles within `cut` of the slab's lower
/// face to the rank below, direction 1 those near the upper face to the rank above.
struct near_slab_face {
  int ranks;
  float cut;
  STRATA_HD int operator()(const particle& p, int k) const {
    const int me = strata_examples::slab_of_x{ranks}(p);
    const float width = 2.0f / float(ranks), lo = -1.0f + width * float(me);
    if (k == 0) return me > 0 && p.x < lo + cut ? me - 1 : -1;
    return me + 1 < ranks && p.x >= lo + width - cut ? me + 1 : -1;
  }
};
struct halo_row {
  int gpus;
  float cut;
  double ghosts_per_rank, halo_ms, raw_ms;
};
/// halo_exchange(near_slab_face, 2) and drop_ghosts on shards of n particles (each rank its slab),
/// timed to the end of the exchange, against NCCL moving the same bytes between raw buffers: every
/// rank sends the ghosts it sends in both directions, as one buffer per neighbour, one group.
halo_row bench_halo(int gpus, std::size_t n, int iters, float cut) {
  auto comm = dist::communicator::local(gpus);
  dist::distributed_soa_vector<particle> d(comm);
  d.reserve(n + n / 4);
  d.scatter(make(n * std::size_t(gpus)));
  d.migrate(strata_examples::slab_of_x{gpus});
  const near_slab_face fn{gpus, cut};
  std::vector<double> t_halo;
  double ghosts = 0, sent = 0;
  for (int i = -1; i < iters; ++i) {
    const double t0 = wall();
    const auto m = d.halo_exchange(fn, 2);
    comm.synchronize_all();
    const double t1 = wall();
    if (i < 0) continue;
    t_halo.push_back(t1 - t0);
    ghosts = double(m.received) / gpus, sent = double(m.sent);
    d.drop_ghosts();
  }
  // What each rank sends to each neighbour, on average over the 2 (G - 1) sides of the G - 1 faces.
  const std::size_t side_bytes = std::size_t(sent / (2.0 * (gpus - 1))) * sizeof(particle);
  std::vector<strata::buffer> out, in;
  for (int l = 0; l < comm.local_ranks(); ++l) {
    strata::detail::device_guard g(comm.device(l));
    out.emplace_back(2 * side_bytes + 16, strata::memory_space::device);
    in.emplace_back(2 * side_bytes + 16, strata::memory_space::device);
  }
  auto raw = [&] {
    comm.group([&] {
      for (int l = 0; l < comm.local_ranks(); ++l) {
        const int r = comm.rank(l);
        for (int side = 0; side < 2; ++side) {
          const int peer = side == 0 ? r - 1 : r + 1;
          if (peer < 0 || peer >= gpus) continue;
          comm.send(l, out[std::size_t(l)].data() + std::size_t(side) * side_bytes, side_bytes, peer);
          comm.recv(l, in[std::size_t(l)].data() + std::size_t(side) * side_bytes, side_bytes, peer);
        }
      }
    });
    comm.synchronize_all();
  };
  const double raw_ms = median_ms(raw, iters);
  return {gpus, cut, ghosts, median(t_halo) * 1e3, raw_ms};
}

struct ops_row {
  int gpus;
  std::size_t records;
  double per_column_ms, packed_ms;
};
/// What NCCL charges per operation: every rank exchanges `records` 28-byte records with each of its
/// two ring neighbours, as 7 sends of 4-byte columns per neighbour (migrate's wire format) and as
/// one send of the same bytes per neighbour, one group each time, median of iters.
ops_row bench_exchange_ops(int gpus, std::size_t records, int iters) {
  auto comm = dist::communicator::local(gpus);
  constexpr int columns = 7;
  const std::size_t col = records * sizeof(float), bytes = col * columns;
  std::vector<strata::buffer> out, in;
  for (int l = 0; l < comm.local_ranks(); ++l) {
    strata::detail::device_guard g(comm.device(l));
    out.emplace_back(2 * bytes, strata::memory_space::device);
    in.emplace_back(2 * bytes, strata::memory_space::device);
  }
  auto once = [&](int pieces) {
    const std::size_t piece = bytes / std::size_t(pieces);
    comm.group([&] {
      for (int l = 0; l < comm.local_ranks(); ++l) {
        const int r = comm.rank(l);
        const int peers[2] = {(r + 1) % gpus, (r + gpus - 1) % gpus};
        for (int side = 0; side < (gpus > 2 ? 2 : 1); ++side)
          for (int c = 0; c < pieces; ++c) {
            const std::size_t at = std::size_t(side) * bytes + std::size_t(c) * piece;
            comm.send(l, out[std::size_t(l)].data() + at, piece, peers[side]);
            comm.recv(l, in[std::size_t(l)].data() + at, piece, peers[1 - side]);
          }
      }
    });
    comm.synchronize_all();
  };
  std::vector<double> t1, t7;
  once(1), once(columns);
  for (int i = 0; i < iters; ++i) {
    double t0 = wall();
    once(columns);
    t7.push_back(wall() - t0);
    t0 = wall();
    once(1);
    t1.push_back(wall() - t0);
  }
  return {gpus, records, median(t7) * 1e3, median(t1) * 1e3};
}

/// The demo's step on 1, 2, ..., G GPUs, each configuration in its own communicator and container,
/// all held at once so that their timings interleave: repetition r times `steps` steps of every
/// configuration in turn, then the same number of steps without migrate. The particles run on from
/// one repetition to the next, as in a long run: the warm-up repetition grows every shard's memory
/// to what its arrivals need, and the timed steps are the steady state (a growth synchronizes the
/// rank and copies its records into memory 1.5x larger: a few ms, a few times in a run). An untimed
/// migrate before each repetition brings back to their slabs the particles that crossed during the
/// steps without migrate. Per configuration: median step times, and the median over repetitions of
/// (1-GPU step / this step) as the efficiency, so that a slow spell of the machine lands in one
/// repetition of every configuration rather than in one configuration.
std::vector<scaling_row> bench_scaling(int max_gpus, std::size_t n, int steps, int reps) {
  struct config {
    int gpus;
    std::unique_ptr<dist::communicator> comm;
    std::unique_ptr<dist::distributed_soa_vector<particle>> d;
    std::vector<double> with, without, efficiency;
    double moved = 0;
  };
  std::vector<config> cs;
  for (int g = 1; g <= max_gpus; ++g) {
    config c{g, std::make_unique<dist::communicator>(dist::communicator::local(g)), nullptr, {}, {}, {}, 0};
    c.d = std::make_unique<dist::distributed_soa_vector<particle>>(*c.comm);
    // Room for an eighth more than a rank's share: a slab's population drifts by a few percent,
    // and no step pays a shard growth (a wait and a copy of the shard).
    c.d->reserve(n + n / 8);
    c.d->scatter(make(n * std::size_t(g)));
    c.d->migrate(strata_examples::slab_of_x{g});  // every particle to its slab's rank
    cs.push_back(std::move(c));
  }
  const strata_examples::kick_drift f{1e-3f, 1e-3f};
  const strata_examples::total_energy energy{1.0f};
  auto run = [&](config& c, bool migrate) {
    double moved = 0;
    const double t0 = wall();
    for (int s = 0; s < steps; ++s) {
      c.d->transform(f);
      if (migrate) moved += double(c.d->migrate(strata_examples::slab_of_x{c.gpus}).sent);
      if ((s + 1) % 10 == 0) (void)c.d->transform_reduce_sum<double>(energy);
    }
    c.comm->synchronize_all();
    return std::pair{(wall() - t0) / steps, moved / steps};
  };
  for (int r = -1; r < reps; ++r) {  // r = -1 warms every configuration up
    for (std::size_t k = 0; k < cs.size(); ++k) {
      config& c = cs[k];
      c.d->migrate(strata_examples::slab_of_x{c.gpus});  // the last repetition's steps without migrate
      c.comm->synchronize_all();
      const auto [with, moved] = run(c, true);
      const auto [without, unused] = run(c, false);
      (void)unused;
      if (r < 0) continue;
      c.with.push_back(with), c.without.push_back(without), c.moved = moved;
      c.efficiency.push_back(cs[0].with.back() / with);
    }
  }
  std::vector<scaling_row> rows;
  for (const config& c : cs) rows.push_back({c.gpus, median(c.with) * 1e3, median(c.without) * 1e3, c.moved, median(c.efficiency)});
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(STRATA_BACKEND_CUDA)
  std::size_t n = std::size_t(1) << 26;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::fprintf(stderr, "no GPU\n");
    return 1;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const std::string gpu = prop.name;
#else
  std::size_t n = std::size_t(1) << 16;
  int gpus = 3;
  const std::string gpu = "host stand-in";
#endif
  int iters = 20, steps = 30, reps = 5;
  std::string out;
  std::vector<std::string> parts = {"migrate", "scaling", "ops", "passes", "halo"};
  const int available = gpus;
  CLI::App app{"Benchmarks of the distributed layer: migrate, weak scaling, NCCL exchange ops, migrate's passes, halo exchange."};
  app.add_option("--n", n, "records per GPU")->capture_default_str()->check(CLI::Range(std::size_t(1), std::size_t(1) << 40));
  app.add_option("--gpus", gpus, "GPUs (ranks) at most")->capture_default_str()->check(CLI::Range(1, available));
  app.add_option("--iters", iters, "timed calls per measurement")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--steps", steps, "demo steps per weak-scaling timing")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--reps", reps, "weak-scaling repetitions (the median is reported)")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--parts", parts, "the parts to run (comma separated)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"migrate", "scaling", "ops", "passes", "halo"}));
  app.add_option("--out", out, "the JSON file to write (none by default)");
  CLI11_PARSE(app, argc, argv);
  std::vector<migrate_row> mig;
  std::vector<scaling_row> scale;
  auto part = [&](const char* name) { return std::find(parts.begin(), parts.end(), name) != parts.end(); };
  // 10% leaving takes migrate's streaming split, 2% its gather-and-fill path.
  if (part("migrate"))
    for (int g = 2; g <= gpus; ++g)
      for (float fraction : {0.1f, 0.02f}) mig.push_back(bench_migrate(g, n, iters, fraction));
  if (part("scaling")) scale = bench_scaling(gpus, n, steps, reps);
  std::vector<passes_row> passes;
  if (part("passes"))
    for (float fraction : {0.1f, 0.02f}) passes.push_back(bench_passes(n, fraction, iters));
  std::vector<ops_row> ops;
  if (part("ops"))
    for (int g = 2; g <= gpus; ++g)
      for (std::size_t k : {std::size_t(5000), n / 64, n / 10}) ops.push_back(bench_exchange_ops(g, k, iters));
  // Cutoffs of 1% and 5% of the box's width: cut * G / 2 of a slab's records lie near each face.
  std::vector<halo_row> halos;
  if (part("halo"))
    for (int g = 2; g <= gpus; ++g)
      for (float cut : {0.02f, 0.1f}) halos.push_back(bench_halo(g, n, iters, cut));

  const double rec = double(sizeof(particle));
  std::printf("%s, %zu particles (%zu bytes each) per GPU\n\n", gpu.c_str(), n, sizeof(particle));
  std::printf("| GPUs | records moved per rank | migrate ms | NCCL raw buffers ms | migrate speed vs raw (raw ms / migrate ms) | migrate GB/s per rank | nothing moving ms |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& m : mig)
    std::printf("| %d | %.0f (%.1f%%) | %.3f | %.3f | %.2fx | %.1f | %.3f |\n", m.gpus, m.moved_per_rank, 100.0 * m.moved_per_rank / double(n),
                m.migrate_ms, m.raw_ms, m.raw_ms / m.migrate_ms, m.moved_per_rank * rec / (m.migrate_ms * 1e-3) / 1e9, m.idle_ms);
  std::printf("\n%d steps a timing, median of %d repetitions:\n\n", steps, reps);
  std::printf("| GPUs | step ms (kick-drift + migrate) | particles migrated per step | kick-drift only ms | weak-scaling efficiency |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& s : scale)
    std::printf("| %d | %.3f | %.0f | %.3f | %.3f |\n", s.gpus, s.step_ms, s.moved_per_step, s.drift_only_ms, s.efficiency);

  std::printf("\nNCCL exchange with the ring neighbours (both when there are more than 2 ranks), 7 columns of 4 bytes per record:\n\n");
  std::printf("| GPUs | records per neighbour | 7 sends per neighbour ms | 1 packed send per neighbour ms |\n| ---: | ---: | ---: | ---: |\n");
  for (const auto& o : ops) std::printf("| %d | %zu | %.3f | %.3f |\n", o.gpus, o.records, o.per_column_ms, o.packed_ms);

  std::printf("\nmigrate's passes alone, one GPU, %zu records (wait included; copy: every column copied once, the bytes a split reads and writes):\n\n", n);
  std::printf("| leaving | counting pass ms | listing pass ms | split pass ms | device copy ms | split / copy time |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& q : passes)
    std::printf("| %.1f%% | %.3f | %.3f | %.3f | %.3f | %.2f |\n", 100.0 * q.fraction, q.count_ms, q.list_ms, q.split_ms, q.copy_ms, q.split_ms / q.copy_ms);

  std::printf("\nhalo_exchange (2 directions) and drop_ghosts, each rank its slab of %zu particles; raw: NCCL moving the same bytes between raw buffers, one group:\n\n", n);
  std::printf("| GPUs | cutoff | ghosts received per rank | halo_exchange ms | NCCL raw buffers ms | raw ms / halo ms |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& h : halos)
    std::printf("| %d | %.2f | %.0f | %.3f | %.3f | %.2fx |\n", h.gpus, double(h.cut), h.ghosts_per_rank, h.halo_ms, h.raw_ms, h.raw_ms / h.halo_ms);

  if (!out.empty()) {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    // Fractions and cutoffs are floats: written as the decimals they were given as, not as their
    // doubles' 17 digits.
    auto decimal = [](float v) { return std::round(double(v) * 1e6) / 1e6; };
    auto rows = [](const auto& all, auto to_json) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : all) a.push_back(to_json(r));
      return a;
    };
    const nlohmann::ordered_json j = {
        {"gpu", gpu}, {"date", date}, {"records_per_gpu", n}, {"record_bytes", sizeof(particle)},
        {"iters", iters}, {"steps", steps}, {"reps", reps},
        {"migrate", rows(mig, [](const migrate_row& m) {
           return nlohmann::ordered_json{{"gpus", m.gpus}, {"moved_per_rank", m.moved_per_rank}, {"migrate_ms", m.migrate_ms}, {"nccl_raw_ms", m.raw_ms},
                                 {"raw_over_migrate", m.raw_ms / m.migrate_ms}, {"nothing_moving_ms", m.idle_ms}};
         })},
        {"weak_scaling", rows(scale, [](const scaling_row& r) {
           return nlohmann::ordered_json{{"gpus", r.gpus}, {"step_ms", r.step_ms}, {"moved_per_step", r.moved_per_step},
                                 {"drift_only_ms", r.drift_only_ms}, {"efficiency", r.efficiency}};
         })},
        {"exchange_ops", rows(ops, [](const ops_row& o) {
           return nlohmann::ordered_json{{"gpus", o.gpus}, {"records_per_neighbour", o.records}, {"per_column_ms", o.per_column_ms}, {"packed_ms", o.packed_ms}};
         })},
        {"passes", rows(passes, [&](const passes_row& q) {
           return nlohmann::ordered_json{{"fraction", decimal(float(q.fraction))}, {"count_ms", q.count_ms}, {"list_ms", q.list_ms}, {"split_ms", q.split_ms}, {"copy_ms", q.copy_ms}};
         })},
        {"halo", rows(halos, [&](const halo_row& h) {
           return nlohmann::ordered_json{{"gpus", h.gpus}, {"cutoff", decimal(h.cut)}, {"ghosts_per_rank", h.ghosts_per_rank}, {"halo_ms", h.halo_ms}, {"nccl_raw_ms", h.raw_ms}};
         })}};
    std::ofstream(out) << j.dump(2) << "\n";
  }
  return 0;
}
