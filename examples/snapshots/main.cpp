// SPDX-License-Identifier: Apache-2.0
// Snapshots and checkpoint / restart through HDF5: particles drift for a number of steps, a
// checkpoint is written every K steps (a group per step, one dataset per leaf: pos/x, vel/z, mass,
// id, alive), and a second run restarts from the middle checkpoint, read back into another layout,
// and must end with the same bits as the run that never stopped. Every checkpoint is also an openPMD
// iteration (species `tracers`: position, velocity, mass, id), so openPMD readers open the same
// file. It opens in h5py, HDFView or h5dump as it is; python/tests/test_io.py reads it with h5py
// and checks it with the openPMD validator.
#include <strata/strata.hpp>
#include <strata/io/hdf5.hpp>
#include <strata/io/openpmd.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

struct vec3 {
  BOOST_HANA_DEFINE_STRUCT(vec3, (float, x), (float, y), (float, z));
};
struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (vec3, pos), (vec3, vel), (float, mass), (std::int64_t, id), (bool, alive));
};

// Velocities and dt are multiples of powers of two, so every step is exact: host, GPU and NumPy
// compute the same bits.
constexpr float dt = 1.0f / 16;
struct drift {
  STRATA_HD particle operator()(particle p) const {
    p.pos.x += p.vel.x * dt, p.pos.y += p.vel.y * dt, p.pos.z += p.vel.z * dt;
    p.alive = p.pos.x >= -4 && p.pos.x < 4;
    return p;
  }
};

std::vector<particle> initial(std::size_t n) {
  std::vector<particle> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned h = unsigned(i) * 2654435761u;
    auto unit = [&](int shift) { return float(int((h >> shift) % 1024) - 512) / 1024; };
    v[i] = particle{{unit(0), unit(5), unit(10)}, {unit(15), unit(20), unit(3)}, 1.0f + float(i % 7) / 8, std::int64_t(i) << 20, true};
  }
  return v;
}

std::string step_group(int step) { return "steps/" + std::to_string(step); }

int main(int argc, char** argv) {
  CLI::App app("strata snapshots: HDF5 checkpoints of a particle run, and a restart that must match it bit for bit");
  std::string out = "snapshots.h5";
  std::size_t n = 100000;
  int steps = 40, every = 10;
  app.add_option("--out", out, "the HDF5 file to write")->capture_default_str();
  app.add_option("--n", n, "particles")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--steps", steps, "time steps")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--every", every, "steps between checkpoints")->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  namespace io = strata::io;
  {
    io::file f = io::file::create(out);
    // The openPMD view of the same particles: which leaves are which record, in which units.
    const std::vector<io::openpmd_record> records = {
        {"position", {{"x", "pos.x"}, {"y", "pos.y"}, {"z", "pos.z"}}, {1, 0, 0, 0, 0, 0, 0}, 1e-6},   // micrometres
        {"velocity", {{"x", "vel.x"}, {"y", "vel.y"}, {"z", "vel.z"}}, {1, 0, -1, 0, 0, 0, 0}, 1.0},  // m/s
        {"mass", {{"", "mass"}}, {0, 1, 0, 0, 0, 0, 0}, 1e-27},
        {"id", {{"", "id"}}, {}, 1.0}};
    auto checkpoint = [&](const strata::soa_vector<particle>& ps, int s) {
      io::write(f, step_group(s), ps);
      io::write_openpmd(f, {std::uint64_t(s), s * double(dt), double(dt), 1e-15}, "tracers", ps, records);
    };
    strata::soa_vector<particle> ps(initial(n));
    checkpoint(ps, 0);
    for (int s = 1; s <= steps; ++s) {
      strata::transform(ps, ps, drift{});
      if (s % every == 0 || s == steps) checkpoint(ps, s);
    }
    io::write_options compressed;
    compressed.deflate = 4;
    io::write(f, "final", ps, compressed);
  }

  // The restart: the last checkpoint at or before the middle, into AoS, then on to the end.
  const int from = steps / 2 / every * every;
  io::file f = io::file::open(out);
  auto restarted = io::read<strata::aos_vector<particle>>(f, step_group(from));
  for (int s = from + 1; s <= steps; ++s) strata::transform(restarted, restarted, drift{});
  const auto want = io::read<strata::soa_vector<particle>>(f, "final").to_host();
  const auto got = restarted.to_host();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool same = std::memcmp(&got[i].pos, &want[i].pos, sizeof(vec3)) == 0 && std::memcmp(&got[i].vel, &want[i].vel, sizeof(vec3)) == 0 &&
                      got[i].mass == want[i].mass && got[i].id == want[i].id && got[i].alive == want[i].alive;
    differ += !same;
  }
  const io::group_info info = io::describe(f, "final");
  std::printf("wrote %s: %llu particles, %zu leaves (", out.c_str(), static_cast<unsigned long long>(info.records), info.leaves.size());
  for (std::size_t l = 0; l < info.leaves.size(); ++l) std::printf("%s%s %s", l ? ", " : "", info.leaves[l].name.c_str(), info.leaves[l].kind.name().c_str());
  std::printf("), checkpoints every %d steps\n", every);
  std::printf("restart from step %d to %d: %zu of %zu particles differ from the uninterrupted run\n", from, steps, differ, n);
  return differ == 0 ? 0 : 1;
}
