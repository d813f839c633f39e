// SPDX-License-Identifier: Apache-2.0
// Lennard-Jones force evaluation (LAMMPS's bench/in.lj: fcc at density 0.8442, cut at 2.5, skin
// 0.3; positions displaced a little from the lattice so pairs are not all alike) for 32 000 atoms
// (20^3 fcc cells), 2^20 (64^3) and 2^23 (128^3), fp32 and fp64. Variants: strata's
// accumulate_neighbors over a cell list (cells >= 2.5) and over a full Verlet list (2.8), and the
// floor, a hand-written CUDA kernel over the same sorted SoA columns and cell starts (one thread per
// atom, the 27 cells walked inline). The neighbour build (cell list + Verlet list, container
// already in cell order) is timed as lennard_jones_build. Bytes are the least a force pass moves:
// three position leaves read and three force leaves plus an energy written per atom; the counter
// atom_steps_per_s is atoms over the pass's time.
#include "common.hpp"

#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/neighbor/neighbor.hpp>

#include <thrust/device_vector.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

namespace nb = strata::neighbor;
using strata::index_t;

template <class F>
struct atom;
#define LJ_BENCH_ATOM(F)                                                                                          \
  template <>                                                                                                    \
  struct atom<F> {                                                                                               \
    BOOST_HANA_DEFINE_STRUCT(atom, (F, x), (F, y), (F, z), (F, fx), (F, fy), (F, fz));                           \
  };
LJ_BENCH_ATOM(float)
LJ_BENCH_ATOM(double)
#undef LJ_BENCH_ATOM

constexpr double density = 0.8442, cutoff = 2.5, skin = 0.3;

template <class F>
struct lj_sum {
  F fx, fy, fz, e;
};
template <class F>
struct lj_pair {
  STRATA_HD void operator()(lj_sum<F>& s, index_t, index_t, const nb::vec3<F>& d, F r2) const {
    const F r2inv = F(1) / r2, r6inv = r2inv * r2inv * r2inv;
    const F fpair = r6inv * (F(48) * r6inv - F(24)) * r2inv;
    s.fx += d.x * fpair, s.fy += d.y * fpair, s.fz += d.z * fpair;
    s.e += F(2) * r6inv * (r6inv - F(1));
  }
};
template <class View, class F>
struct lj_store {
  View v;
  F* e;
  STRATA_HD void operator()(index_t i, const lj_sum<F>& s) const {
    *v.template leaf_ptr<3>(i) = s.fx, *v.template leaf_ptr<4>(i) = s.fy, *v.template leaf_ptr<5>(i) = s.fz;
    e[i] = s.e;
  }
};

/// The fcc lattice of `cells`^3 unit cells, each position moved by up to 0.05 per axis.
template <class F>
std::vector<atom<F>> lattice(int cells, double a) {
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  std::mt19937_64 rng(0x5eed);
  std::uniform_real_distribution<double> jitter(-0.05, 0.05);
  std::vector<atom<F>> v;
  v.reserve(std::size_t(cells) * cells * cells * 4);
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j)
      for (int k = 0; k < cells; ++k)
        for (const auto& b : basis) {
          auto at = [&](int c, double f) { return F((c + f) * a + jitter(rng)); };
          v.push_back({at(i, b[0]), at(j, b[1]), at(k, b[2]), F(0), F(0), F(0)});
        }
  for (auto& r : v) {  // jitter may step over the faces at 0: back into [0, L)
    const F L = F(a * cells);
    for (F* c : {&r.x, &r.y, &r.z}) *c = *c < 0 ? *c + L : *c >= L ? *c - L : *c;
  }
  return v;
}

/// One system twice: atoms in the order of a cell list at the cutoff (the cells variants), and in
/// the order of one at cutoff + skin with its Verlet list (each build reorders its container).
template <class F>
struct system {
  using container = strata::soa_vector<atom<F>>;
  using cells_t = nb::cell_list<atom<F>, strata::soa_mapping<atom<F>>, &atom<F>::x, &atom<F>::y, &atom<F>::z>;
  using verlet_t = nb::verlet_list<atom<F>, strata::soa_mapping<atom<F>>, &atom<F>::x, &atom<F>::y, &atom<F>::z>;
  nb::box box;
  container by_cells, by_list;
  cells_t cells, wide;
  verlet_t list;
  thrust::device_vector<F> e;
  explicit system(int n_cells)
      : box(nb::box::cube(std::cbrt(4 / density) * n_cells)),
        by_cells(lattice<F>(n_cells, std::cbrt(4 / density))),
        by_list(by_cells),
        cells(by_cells, box, cutoff),
        wide(by_list, box, cutoff + skin),
        list(by_list, wide, cutoff, skin),
        e(by_cells.size()) {}
  index_t n() const { return index_t(by_cells.size()); }
  double bytes() const { return double(n()) * 7 * sizeof(F); }
};
template <class F>
system<F>& system_of(int n_cells) {
  static std::map<int, std::unique_ptr<system<F>>> all;
  auto& s = all[n_cells];
  if (!s) s = std::make_unique<system<F>>(n_cells);
  return *s;
}

template <class F, class List>
void strata_forces(benchmark::State& state, system<F>& s, typename system<F>::container& ps, const List& list) {
  auto v = ps.view();
  strata_bench::run_timed(state, s.bytes(), double(s.n()), [&] {
    nb::accumulate_neighbors(ps, list, cutoff, lj_sum<F>{0, 0, 0, 0}, lj_pair<F>{},
                             lj_store<decltype(v), F>{v, thrust::raw_pointer_cast(s.e.data())});
  });
  state.counters["atom_steps_per_s"] = benchmark::Counter(double(s.n()), benchmark::Counter::kIsIterationInvariantRate);
}

/// The floor: one thread per atom over the 27 cells around its own, positions from the SoA
/// columns, the minimum image by compare-and-shift (the box is at least three cells wide).
template <class F>
struct hand_args {
  const F *x, *y, *z;
  F *fx, *fy, *fz, *e;
  const std::int32_t* start;
  int dims;
  F len, half, inv_cell, rc2;
  index_t n;
};
template <class F>
STRATA_HD void hand_atom(const hand_args<F>& a, index_t i) {
  const F xi = a.x[i], yi = a.y[i], zi = a.z[i];
  auto cell_of = [&](F p) {
    int c = int(p * a.inv_cell);
    return c < 0 ? 0 : c >= a.dims ? a.dims - 1 : c;
  };
  const int cx = cell_of(xi), cy = cell_of(yi), cz = cell_of(zi);
  F fx = 0, fy = 0, fz = 0, en = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int X = (cx + dx + a.dims) % a.dims, Y = (cy + dy + a.dims) % a.dims, Z = (cz + dz + a.dims) % a.dims;
        const int cell = (Z * a.dims + Y) * a.dims + X;
        for (std::int32_t j = a.start[cell], end = a.start[cell + 1]; j < end; ++j) {
          if (j == i) continue;
          F ddx = xi - a.x[j], ddy = yi - a.y[j], ddz = zi - a.z[j];
          ddx = ddx > a.half ? ddx - a.len : ddx < -a.half ? ddx + a.len : ddx;
          ddy = ddy > a.half ? ddy - a.len : ddy < -a.half ? ddy + a.len : ddy;
          ddz = ddz > a.half ? ddz - a.len : ddz < -a.half ? ddz + a.len : ddz;
          const F r2 = ddx * ddx + ddy * ddy + ddz * ddz;
          if (r2 < a.rc2) {
            const F r2inv = F(1) / r2, r6inv = r2inv * r2inv * r2inv, fpair = r6inv * (F(48) * r6inv - F(24)) * r2inv;
            fx += ddx * fpair, fy += ddy * fpair, fz += ddz * fpair, en += F(2) * r6inv * (r6inv - F(1));
          }
        }
      }
  a.fx[i] = fx, a.fy[i] = fy, a.fz[i] = fz, a.e[i] = en;
}
#if defined(STRATA_BACKEND_CUDA)
template <class F>
__global__ void __launch_bounds__(128) hand_cells_kernel(hand_args<F> a) {
  const index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < a.n) hand_atom(a, i);
}
#endif

template <class F>
void hand_cells(benchmark::State& state, system<F>& s) {
  const auto& g = s.cells.geometry();
  auto& ps = s.by_cells;
  hand_args<F> a{ps.template column<0>().data(), ps.template column<1>().data(), ps.template column<2>().data(),
                 ps.template column<3>().data(), ps.template column<4>().data(), ps.template column<5>().data(),
                 thrust::raw_pointer_cast(s.e.data()), s.cells.view().start, g.dims[0], F(g.len[0]), F(0.5 * g.len[0]),
                 F(g.inv_cell[0]), F(cutoff * cutoff), s.n()};
  strata_bench::run_timed(state, s.bytes(), double(s.n()), [&] {
#if defined(STRATA_BACKEND_CUDA)
    hand_cells_kernel<F><<<unsigned((a.n + 127) / 128), 128>>>(a);
#else
    STRATA_PARALLEL_FOR_IF(true)
    for (index_t i = 0; i < a.n; ++i) hand_atom(a, i);
#endif
  });
  state.counters["atom_steps_per_s"] = benchmark::Counter(double(s.n()), benchmark::Counter::kIsIterationInvariantRate);
}

template <class F>
void build(benchmark::State& state, system<F>& s) {
  strata_bench::run_timed(state, double(s.n()) * 3 * sizeof(F), double(s.n()), [&] {
    s.wide.rebuild(s.by_list);
    s.list.rebuild(s.by_list, s.wide);
  }, strata_bench::timing::from_idle);
}

const bool registered = [] {
#if defined(STRATA_BACKEND_CUDA)
  const std::vector<int> sizes = {20, 64, 128};
#else
  const std::vector<int> sizes = {10, 20};
#endif
  auto add = [](const std::string& name, auto fn) { strata_bench::configure(benchmark::RegisterBenchmark(name.c_str(), fn))->Iterations(10); };
  for (int c : sizes) {
    const std::string n = std::string("/").append(std::to_string(4 * c * c * c));
    auto per = [&]<class F>(const char* dtype) {
      const std::string d = std::string("/").append(dtype);
      add(std::string("lennard_jones/strata_cells").append(n).append(d), [c](benchmark::State& st) { auto& s = system_of<F>(c); strata_forces(st, s, s.by_cells, s.cells); });
      add(std::string("lennard_jones/strata_verlet").append(n).append(d), [c](benchmark::State& st) { auto& s = system_of<F>(c); strata_forces(st, s, s.by_list, s.list); });
      add(std::string("lennard_jones/hand_cells").append(n).append(d), [c](benchmark::State& st) { hand_cells(st, system_of<F>(c)); });
      add(std::string("lennard_jones_build/strata").append(n).append(d), [c](benchmark::State& st) { build(st, system_of<F>(c)); });
    };
    per.template operator()<float>("fp32");
    per.template operator()<double>("fp64");
  }
  return true;
}();

}  // namespace
