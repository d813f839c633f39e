// SPDX-License-Identifier: Apache-2.0
// Lennard-Jones molecular dynamics on strata's neighbour lists, set up as LAMMPS's bench/in.lj:
// an fcc lattice at reduced density 0.8442 (20 x 20 x 20 unit cells, 32 000 atoms, by default) in
// a periodic box, LJ units (epsilon = sigma = mass = 1), the potential cut at 2.5 without a shift,
// a neighbour skin of 0.3, velocity-Verlet NVE with dt = 0.005 from T = 1.44 (random velocities,
// zero total momentum, scaled to 1.44 exactly). Forces come from a full Verlet list through
// accumulate_neighbors (per-atom sums in registers, no atomics); the list is rebuilt, with the
// cell list that reorders the atoms, once some atom has moved more than half the skin.
//
// What it checks (exit 1 otherwise): the potential energy per atom at step 0, which depends on the
// lattice alone, equals LAMMPS's published -6.7733681 (bench/log.15Jul25.lj.fixed.g++.1 in the
// LAMMPS repository, 32 000 atoms; any box at least two cutoffs wide gives the same figure) to the 8
// digits LAMMPS prints in fp64 (1e-5 relative in fp32); so does the pressure at step 0,
// -5.0197073 (lattice and T = 1.44 alone, its kinetic part moved to this N); and the total energy
// drifts by at most --max-drift per atom over the run (default 1.5 x LAMMPS's: its log goes from
// -4.6134356 at step 0 to -4.6223613 at step 100; most of the drift comes in the first 50 steps, as
// pairs cross the unshifted cutoff while the lattice melts).
#include <strata/strata.hpp>
#include <strata/neighbor/neighbor.hpp>

#include <thrust/device_vector.h>
#include <thrust/reduce.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = strata::neighbor;
using strata::index_t;

template <class F>
struct atom;
#define LJ_ATOM(F)                                                                                                                        \
  template <>                                                                                                                            \
  struct atom<F> {                                                                                                                       \
    BOOST_HANA_DEFINE_STRUCT(atom, (F, x), (F, y), (F, z), (F, vx), (F, vy), (F, vz), (F, fx), (F, fy), (F, fz));                        \
  };
LJ_ATOM(float)
LJ_ATOM(double)
#undef LJ_ATOM

// LAMMPS's published step-0 thermo of bench/in.lj (log.15Jul25.lj.fixed.g++.1).
constexpr double lammps_e_pair0 = -6.7733681;
constexpr double lammps_press0 = -5.0197073;
constexpr double density = 0.8442, cutoff = 2.5, skin = 0.3, dt = 0.005, t_start = 1.44;

struct options {
  int cells = 20, steps = 100, thermo = 50;
  std::string precision = "fp64", layout = "soa", lammps_data;
  std::uint64_t seed = 87287;
  double max_drift = 0.0134;  // 1.5 x LAMMPS's |TotEng(100) - TotEng(0)| in the log above
};

/// Per-atom sums of one force evaluation: force, energy and virial (each pair counted from both
/// sides in a full list: half of its energy and virial go to each atom).
template <class F>
struct lj_sum {
  F fx, fy, fz, e, w;
};
template <class F>
struct lj_pair {
  STRATA_HD void operator()(lj_sum<F>& s, index_t, index_t, const nb::vec3<F>& d, F r2) const {
    const F r2inv = F(1) / r2, r6inv = r2inv * r2inv * r2inv;
    const F fpair = r6inv * (F(48) * r6inv - F(24)) * r2inv;
    s.fx += d.x * fpair, s.fy += d.y * fpair, s.fz += d.z * fpair;
    s.e += F(2) * r6inv * (r6inv - F(1));  // half of 4 (r^-12 - r^-6)
    s.w += F(0.5) * r2 * fpair;
  }
};
/// Writes the forces into the atoms' force leaves (thread i writes atom i only) and the energy and
/// virial into per-atom arrays.
template <class View, class F>
struct lj_store {
  View v;
  F* e;
  F* w;
  STRATA_HD void operator()(index_t i, const lj_sum<F>& s) const {
    *v.template leaf_ptr<6>(i) = s.fx, *v.template leaf_ptr<7>(i) = s.fy, *v.template leaf_ptr<8>(i) = s.fz;
    e[i] = s.e, w[i] = s.w;
  }
};
/// Velocity Verlet: half a kick, then the drift (first half of a step), or the second half kick.
template <class F>
struct kick_drift {
  F half_dt, dt;
  STRATA_HD void operator()(atom<F>& a) const {
    a.vx += half_dt * a.fx, a.vy += half_dt * a.fy, a.vz += half_dt * a.fz;
    a.x += dt * a.vx, a.y += dt * a.vy, a.z += dt * a.vz;
  }
};
template <class F>
struct kick {
  F half_dt;
  STRATA_HD void operator()(atom<F>& a) const { a.vx += half_dt * a.fx, a.vy += half_dt * a.fy, a.vz += half_dt * a.fz; }
};
template <class F>
struct v2_of {
  STRATA_HD double operator()(const atom<F>& a) const { return double(a.vx) * a.vx + double(a.vy) * a.vy + double(a.vz) * a.vz; }
};
struct plus_d {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

/// A uniform value in [-0.5, 0.5) from a seed and an atom's lattice site (splitmix64): the
/// velocities depend on where an atom sits, not on the order atoms are made in.
inline double uniform_at(std::uint64_t seed, std::uint64_t site, int k) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + site * 0xBF58476D1CE4E5B9ull + std::uint64_t(k) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53 - 0.5;
}

/// The fcc lattice with random velocities of zero total momentum scaled to T = t_start.
template <class F>
std::vector<atom<F>> fcc(int cells, double a, std::uint64_t seed) {
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  std::vector<double> pos, vel;
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j)
      for (int k = 0; k < cells; ++k)
        for (int b = 0; b < 4; ++b) {
          const std::uint64_t site = ((std::uint64_t(i) * cells + j) * cells + k) * 4 + b;
          pos.insert(pos.end(), {(i + basis[b][0]) * a, (j + basis[b][1]) * a, (k + basis[b][2]) * a});
          for (int c = 0; c < 3; ++c) vel.push_back(uniform_at(seed, site, c));
        }
  const std::size_t n = pos.size() / 3;
  double mean[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) mean[c] += vel[3 * i + c] / double(n);
  double v2 = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) vel[3 * i + c] -= mean[c], v2 += vel[3 * i + c] * vel[3 * i + c];
  const double scale = std::sqrt(t_start * double(3 * n - 3) / v2);  // T = sum v^2 / (3N - 3), as LAMMPS counts
  std::vector<atom<F>> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = {F(pos[3 * i]), F(pos[3 * i + 1]), F(pos[3 * i + 2]), F(vel[3 * i] * scale), F(vel[3 * i + 1] * scale), F(vel[3 * i + 2] * scale),
              F(0), F(0), F(0)};
  return out;
}

struct thermo {
  double temp, e_pair, tot_eng, press;
};

/// The initial state as a LAMMPS data file (atom_style atomic: positions and velocities to every
/// bit of F), so LAMMPS can run the same trajectory: `read_data` in place of in.lj's lattice and
/// `velocity` commands.
template <class F>
void write_lammps_data(const std::string& path, const std::vector<atom<F>>& atoms, double length) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  std::fprintf(out, "LAMMPS data file of strata's lennard_jones example (bench/in.lj's lattice and T = 1.44)\n\n");
  std::fprintf(out, "%zu atoms\n1 atom types\n\n", atoms.size());
  for (const char* axis : {"x", "y", "z"}) std::fprintf(out, "0 %.17g %slo %shi\n", length, axis, axis);
  std::fprintf(out, "\nMasses\n\n1 1.0\n\nAtoms # atomic\n\n");
  for (std::size_t i = 0; i < atoms.size(); ++i)
    std::fprintf(out, "%zu 1 %.17g %.17g %.17g\n", i + 1, double(atoms[i].x), double(atoms[i].y), double(atoms[i].z));
  std::fprintf(out, "\nVelocities\n\n");
  for (std::size_t i = 0; i < atoms.size(); ++i)
    std::fprintf(out, "%zu %.17g %.17g %.17g\n", i + 1, double(atoms[i].vx), double(atoms[i].vy), double(atoms[i].vz));
  if (std::fclose(out) != 0) throw std::runtime_error("cannot write '" + path + "'");
}

template <class F, class Container>
int run(const options& o) {
  const double a = std::cbrt(4 / density), length = a * o.cells;
  const std::vector<atom<F>> initial = fcc<F>(o.cells, a, o.seed);
  if (!o.lammps_data.empty()) write_lammps_data(o.lammps_data, initial, length);
  Container ps(initial);
  const index_t n = index_t(ps.size());
  const double volume = length * length * length;
  const nb::box box = nb::box::cube(length);
  std::printf("Lennard-Jones, %s, %s: %lld atoms (fcc %d^3, lattice constant %.7f), box %.6f, cutoff %.1f, skin %.1f, dt %.3f\n",
              o.precision.c_str(), o.layout.c_str(), static_cast<long long>(n), o.cells, a, length, cutoff, skin, dt);

  double build_seconds = 0;
  const auto b0 = std::chrono::steady_clock::now();
  auto cells = nb::make_cell_list<&atom<F>::x, &atom<F>::y, &atom<F>::z>(ps, box, cutoff + skin);
  auto list = nb::make_verlet_list(ps, cells, cutoff, skin);
  build_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
  std::printf("cells %d^3 (%.4f wide), path %s, %.3f ms; Verlet list %lld pairs (full)\n", cells.report().dims[0], cells.report().cell_size[0],
              nb::to_string(cells.report().path), cells.report().seconds * 1e3, static_cast<long long>(list.stored()));

  thrust::device_vector<F> e(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n));
  auto forces = [&] {
    auto v = ps.view();
    nb::accumulate_neighbors(ps, list, cutoff, lj_sum<F>{0, 0, 0, 0, 0}, lj_pair<F>{},
                             lj_store<decltype(v), F>{v, thrust::raw_pointer_cast(e.data()), thrust::raw_pointer_cast(w.data())});
  };
  auto measure = [&] {
    const double v2 = strata::transform_reduce(ps, v2_of<F>{}, 0.0, plus_d{});
    const double epot = thrust::reduce(e.begin(), e.end(), 0.0), vir = thrust::reduce(w.begin(), w.end(), 0.0);
    const double dof = double(3 * n - 3);
    const double temp = v2 / dof;
    return thermo{temp, epot / double(n), (epot + 0.5 * v2) / double(n), (dof * temp + vir) / (3 * volume)};
  };
  auto print = [](int step, const thermo& t) {
    std::printf("%8d %14.8g %14.8g %14.8g %14.8g %14.8g\n", step, t.temp, t.e_pair, 0.0, t.tot_eng, t.press);
  };

  forces();
  const thermo t0 = measure();
  std::printf("%8s %14s %14s %14s %14s %14s\n", "Step", "Temp", "E_pair", "E_mol", "TotEng", "Press");
  print(0, t0);
  thermo last = t0;
  int rebuilds = 0;
  const auto s0 = std::chrono::steady_clock::now();
  for (int step = 1; step <= o.steps; ++step) {
    strata::for_each(ps, kick_drift<F>{F(0.5 * dt), F(dt)});
    if (list.needs_rebuild(ps)) {
      const auto r0 = std::chrono::steady_clock::now();
      cells.rebuild(ps);
      list.rebuild(ps, cells);
      build_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
      ++rebuilds;
    }
    forces();
    strata::for_each(ps, kick<F>{F(0.5 * dt)});
    if (step == o.steps || (o.thermo > 0 && step % o.thermo == 0)) print(step, last = measure());
  }
  strata::synchronize(strata::stream_t{});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  std::printf("%d steps in %.3f s: %.4g atom-steps/s; %d neighbour rebuilds (cell list + Verlet list), %.3f s building in all\n", o.steps, seconds,
              double(n) * o.steps / seconds, rebuilds, build_seconds);

  // LAMMPS prints 8 significant digits: fp64 must round to them (half a unit of the last digit).
  const bool fp64 = std::is_same_v<F, double>;
  // The pressure's kinetic part counts 3N - 3 degrees of freedom, (N - 1) T / V: LAMMPS's figure
  // for 32 000 atoms moved to this N (the virial part, per volume, is the lattice's alone).
  const double press0 = lammps_press0 + t_start * density * (1.0 / 32000 - 1.0 / double(n));
  const double tol_e = fp64 ? 0.5e-7 : 1e-5 * std::fabs(lammps_e_pair0), tol_p = fp64 ? 0.5e-7 : 1e-4 * std::fabs(press0);
  const double drift = last.tot_eng - t0.tot_eng;
  bool ok = true;
  if (std::fabs(t0.e_pair - lammps_e_pair0) > tol_e) {
    std::printf("FAIL: E_pair at step 0 is %.10f, LAMMPS's is %.7f (tolerance %.1e)\n", t0.e_pair, lammps_e_pair0, tol_e);
    ok = false;
  }
  if (std::fabs(t0.press - press0) > tol_p) {
    std::printf("FAIL: Press at step 0 is %.10f, LAMMPS's is %.7f at this N (tolerance %.1e)\n", t0.press, press0, tol_p);
    ok = false;
  }
  if (std::fabs(drift) > o.max_drift) {
    std::printf("FAIL: the total energy per atom drifted by %.3g over %d steps (bound %.3g)\n", drift, o.steps, o.max_drift);
    ok = false;
  }
  std::printf("%s: E_pair(0) = %.10f (LAMMPS -6.7733681), Press(0) = %.10f (LAMMPS -5.0197073 at 32 000 atoms, %.7f at this N), TotEng drift "
              "%.3g per atom over %d steps (LAMMPS: -0.0089257 over 100)\n",
              ok ? "OK" : "FAILED", t0.e_pair, t0.press, press0, drift, o.steps);
  return ok ? 0 : 1;
}

template <class F>
int run_layout(const options& o) {
  if (o.layout == "aosoa") return run<F, strata::aosoa_vector<atom<F>>>(o);
  return run<F, strata::soa_vector<atom<F>>>(o);
}

int main(int argc, char** argv) {
  CLI::App app("strata Lennard-Jones: LAMMPS's bench/in.lj on strata's cell and Verlet lists, checked against LAMMPS's published thermo");
  options o;
  app.add_option("--cells", o.cells, "fcc unit cells per side (4 atoms each; 20: LAMMPS's 32 000 atoms; at least 4 so the box is two cutoffs wide)")
      ->check(CLI::Range(4, 1000))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "time steps")->check(CLI::Range(1, 100000000))->capture_default_str();
  app.add_option("--thermo", o.thermo, "print thermo every K steps (0: first and last only)")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--precision", o.precision, "fp64, fp32 or both")->check(CLI::IsMember({"fp64", "fp32", "both"}))->capture_default_str();
  app.add_option("--layout", o.layout, "soa or aosoa")->check(CLI::IsMember({"soa", "aosoa"}))->capture_default_str();
  app.add_option("--seed", o.seed, "velocity seed")->capture_default_str();
  app.add_option("--lammps-data", o.lammps_data, "write the initial atoms as a LAMMPS data file (one precision only)");
  app.add_option("--max-drift", o.max_drift, "largest change of the total energy per atom over the run")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!o.lammps_data.empty() && o.precision == "both") {
    std::fprintf(stderr, "--lammps-data writes the atoms of one precision: give --precision fp64 or fp32\n");
    return 2;
  }
  int rc = 0;
  if (o.precision == "fp64" || o.precision == "both") {
    options d = o;
    d.precision = "fp64";
    rc |= run_layout<double>(d);
  }
  if (o.precision == "fp32" || o.precision == "both") {
    options f = o;
    f.precision = "fp32";
    rc |= run_layout<float>(f);
  }
  return rc;
}
