// SPDX-License-Identifier: Apache-2.0
// Cell lists: the particles of a columnar container (SoA, AoSoA) binned into a uniform grid of
// cells at least a cutoff wide, the container reordered once by cell (strata::sort_by_key: a radix
// sort of 32-bit cell keys over only the bits the cell count needs, then one permute of every
// leaf), and each cell's range of records found by a vectorized binary search of the sorted keys
// (thrust::lower_bound). A particle's neighbours within the cutoff then lie in the 27 cells around
// its own (fewer distinct ones on a periodic axis of one or two cells), as contiguous runs of
// records. The build reads only the position leaves, checks every position before it changes
// anything and waits for the stream once (to count what it refused); it reports what it did.
// A container may end in ghosts (copies of other ranks' particles near this rank's part, as
// distributed halo_exchange appends them): they stay after the particles of its own, each part
// sorted by cell, and loops visit them as neighbours of the container's own particles only.
#pragma once

#include <strata/algorithm/sort.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/basic_vector.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>
#include <strata/neighbor/box.hpp>

#include <thrust/binary_search.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::neighbor {

/// A particle outside an open axis: refused (the build throws std::out_of_range naming how many
/// and the first), or binned in the edge cell of that axis (exact: neighbours are still found,
/// at the cost of a crowded edge cell when many lie outside).
enum class open_outside { error, clamp };
/// A particle outside a periodic axis: its position is wrapped into [lo, hi) in the container
/// (the same point of the periodic system), or the build refuses it.
enum class periodic_outside { wrap, error };
/// More cells than build_options::max_cells at the cutoff: cells grow (fewer, wider cells, still
/// exact) or the build throws std::length_error naming the grid. Apart from that cap, a grid has at
/// most max(2^15, 2 n) cells for the n particles of the first build (more cells than that are
/// nearly all empty and cost offsets and a search each): wider cells there are no error.
enum class too_many_cells { coarsen, error };

struct build_options {
  open_outside outside_open = open_outside::error;
  periodic_outside outside_periodic = periodic_outside::wrap;
  too_many_cells over_cap = too_many_cells::coarsen;
  /// The most cells a grid may have (each costs 4 bytes of offsets); at most 2^31 - 2.
  index_t max_cells = index_t(1) << 26;
  stream_t stream = {};
};

/// How a build reordered the container: nothing to order (0 or 1 particles), the records were
/// already in cell order (sort skipped), or they were sorted and permuted.
enum class build_path { trivial, in_order, sorted };

/// What a build did and cost.
struct build_report {
  index_t particles = 0;
  index_t cells = 0;
  std::array<int, 3> dims{1, 1, 1};
  std::array<double, 3> cell_size{0, 0, 0};
  bool coarsened = false;   // cells wider than the cutoff needs (see too_many_cells)
  index_t clamped = 0;      // particles outside an open axis binned in its edge cell
  index_t wrapped = 0;      // particles moved into the box on a periodic axis
  int key_bits = 0;         // bits the radix sort compared
  index_t max_in_cell = 0;  // the fullest cell's particles
  build_path path = build_path::trivial;
  double seconds = 0;       // wall time of the whole build, stream included
};

inline const char* to_string(build_path p) {
  return p == build_path::trivial ? "trivial" : p == build_path::in_order ? "in_order" : "sorted";
}

/// A cell list as kernels read it (trivially copyable): the grid, the first record of every cell
/// (cells + 1 entries, or 2 cells + 1 with ghosts: the ghosts' cells follow) and the sorted key of
/// every record (its cell, plus cells() for a ghost).
template <class F>
struct cell_view {
  grid<F> g;
  const std::int32_t* start;
  const std::uint32_t* key;
  index_t n;
  /// Records [owned, n) are ghosts (owned == n without them).
  index_t owned;

  /// Whether the cell at offset o (-1, 0, 1) from coordinate c along an axis is one to visit:
  /// inside an open axis; on a periodic axis distinct from the others (one cell: only o = 0; two:
  /// o = 0 and 1, which is also c - 1).
  STRATA_HD bool visits(int c, int o, int a) const {
    const int d = g.dims[a];
    if (!g.periodic[a]) return c + o >= 0 && c + o < d;
    return d >= 3 || (d == 2 && o >= 0) || o == 0;
  }
  STRATA_HD int step(int c, int o, int a) const {
    const int d = g.dims[a], t = c + o;
    return t < 0 ? t + d : t >= d ? t - d : t;
  }
  /// fn(j) for every record j of the cells around record i's cell (an owned record), ghosts
  /// included; with `half`, only j > i. The offsets are walked without arrays, so the walk stays in
  /// registers on the GPU.
  template <class Fn>
  STRATA_HD void for_each_candidate(index_t i, bool half, Fn&& fn) const {
    const std::uint32_t cells = std::uint32_t(g.cells()), ghost_cells = owned < n ? cells : 0u;
    const std::uint32_t k = key[i], dx = std::uint32_t(g.dims[0]), dy = std::uint32_t(g.dims[1]);
    const int cx = int(k % dx), cy = int(k / dx % dy), cz = int(k / (dx * dy));
    for (int oz = -1; oz <= 1; ++oz) {
      if (!visits(cz, oz, 2)) continue;
      const int z = step(cz, oz, 2);
      for (int oy = -1; oy <= 1; ++oy) {
        if (!visits(cy, oy, 1)) continue;
        const int y = step(cy, oy, 1);
        for (int ox = -1; ox <= 1; ++ox) {
          if (!visits(cx, ox, 0)) continue;
          const std::uint32_t cell = g.key(step(cx, ox, 0), y, z);
          index_t j = start[cell];
          const index_t end = start[cell + 1];
          if (half && j <= i) j = i + 1;
          for (; j < end; ++j)
            if (j != i) fn(j);
          if (ghost_cells)
            for (index_t gj = start[ghost_cells + cell], ge = start[ghost_cells + cell + 1]; gj < ge; ++gj) fn(gj);
        }
      }
    }
  }
};

namespace detail {

/// What the first pass finds: non-finite positions, positions outside an open or a periodic axis
/// (count and the lowest record of each).
struct census {
  index_t bad = 0, bad_first = std::numeric_limits<index_t>::max();
  index_t open = 0, open_first = std::numeric_limits<index_t>::max();
  index_t periodic = 0, periodic_first = std::numeric_limits<index_t>::max();
};
struct census_sum {
  STRATA_HD census operator()(const census& a, const census& b) const {
    census c;
    c.bad = a.bad + b.bad, c.open = a.open + b.open, c.periodic = a.periodic + b.periodic;
    c.bad_first = a.bad_first < b.bad_first ? a.bad_first : b.bad_first;
    c.open_first = a.open_first < b.open_first ? a.open_first : b.open_first;
    c.periodic_first = a.periodic_first < b.periodic_first ? a.periodic_first : b.periodic_first;
    return c;
  }
};
template <class Pos, class V, class F>
struct census_of {
  V view;
  grid<F> g;
  STRATA_HD census operator()(index_t i) const {
    const vec3<F> r = position_of<Pos>(view, i);
    const F x[3] = {r.x, r.y, r.z};
    census c;
    bool bad = false, open = false, periodic = false;
    for (int a = 0; a < 3; ++a) {
      const double v = double(x[a]);
      // An open axis holds [lo, hi] (a particle on hi is in the last cell), a periodic one [lo, hi).
      if (!(v - v == 0)) bad = true;  // NaN or infinity
      else if (v < g.lo[a] || (g.periodic[a] ? v >= g.hi[a] : v > g.hi[a]))
        (g.periodic[a] ? periodic : open) = true;
    }
    if (bad) c.bad = 1, c.bad_first = i;
    else {
      if (open) c.open = 1, c.open_first = i;
      if (periodic) c.periodic = 1, c.periodic_first = i;
    }
    return c;
  }
};
template <class Pos, class V, class F>
struct wrap_positions {
  V view;
  grid<F> g;
  STRATA_HD void operator()(index_t i) const {
    F* p[3] = {view.template leaf_ptr<Pos::leaf[0]>(i), view.template leaf_ptr<Pos::leaf[1]>(i), view.template leaf_ptr<Pos::leaf[2]>(i)};
    for (int a = 0; a < 3; ++a) *p[a] = g.wrap(*p[a], a);
  }
};
template <class Pos, class V, class F>
struct cell_keys {
  V view;
  grid<F> g;
  std::uint32_t* out;
  index_t owned;  // records from here on are ghosts: their keys follow every owned cell's
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> r = position_of<Pos>(view, i);
    const std::uint32_t cell = g.key(g.coordinate(double(r.x), 0), g.coordinate(double(r.y), 1), g.coordinate(double(r.z), 2));
    out[i] = i < owned ? cell : cell + std::uint32_t(g.cells());
  }
};
/// 1 where key i - 1 is above key i (the keys are out of order there).
struct descent {
  const std::uint32_t* key;
  STRATA_HD index_t operator()(index_t i) const { return key[i - 1] > key[i] ? 1 : 0; }
};
struct cell_occupancy {
  const std::int32_t* start;
  STRATA_HD index_t operator()(index_t c) const { return index_t(start[c + 1] - start[c]); }
};
struct max_of {
  STRATA_HD index_t operator()(index_t a, index_t b) const { return a < b ? b : a; }
};

/// A device array that grows and never shrinks (a rebuild of the same size allocates nothing).
template <class U>
class device_array {
 public:
  U* data() const { return reinterpret_cast<U*>(buf_.data()); }
  void reserve(std::size_t n) {
    if (n * sizeof(U) > buf_.bytes()) buf_ = buffer(std::max<std::size_t>(n * sizeof(U), 1), memory_space::device);
  }
  std::vector<U> to_host(std::size_t n) const {
    std::vector<U> v(n);
    if (n) copy_bytes(v.data(), data(), n * sizeof(U));
    return v;
  }

 private:
  buffer buf_;
};

/// The grid a cutoff gives over a box: per axis the most cells of at least cutoff * (1 +
/// cell_margin) that tile it, fewer and wider where their product passes max_cells and the
/// options allow it.
inline constexpr index_t sparse_cells = index_t(1) << 15;
template <class F>
grid<F> make_grid(const box& b, double cutoff, const build_options& o, index_t n, bool& coarsened) {
  const char* op = "strata::neighbor::cell_list";
  check_geometry(op, b, cutoff);
  if (o.max_cells < 1 || o.max_cells > index_t(0x7ffffffe))
    throw std::invalid_argument(std::string(op) + ": max_cells must be in [1, 2^31 - 2], not " + std::to_string(o.max_cells));
  grid<F> g{};
  // Separations are computed in F: a difference of two coordinates rounds by up to half an ulp
  // of itself (at most a box length) and its periodic image by the error of F(length), so cells
  // are wider than the cutoff by cell_margin and by a few ulps of the longest axis in F (the
  // latter matters in fp32 once a box is a few hundred cutoffs long).
  double extent = 0;
  for (int a = 0; a < 3; ++a) extent = std::max(extent, b.length(a));
  double width = cutoff * (1 + cell_margin) + 4 * double(std::numeric_limits<F>::epsilon()) * extent;
  auto dims_at = [&](double w, std::array<double, 3>& d) {
    for (int a = 0; a < 3; ++a) d[std::size_t(a)] = std::max(1.0, std::min(std::floor(b.length(a) / w), 2147483647.0));
    return d[0] * d[1] * d[2];
  };
  std::array<double, 3> d{};
  double total = dims_at(width, d);
  coarsened = false;
  const double limit = double(std::min(o.max_cells, std::max(sparse_cells, 2 * n)));
  if (total > limit) {
    if (total > double(o.max_cells) && o.over_cap == too_many_cells::error)
      throw std::length_error(std::string(op) + ": the cutoff " + num(cutoff) + " makes a grid of " + num(d[0]) + " x " + num(d[1]) +
                              " x " + num(d[2]) + " cells, more than max_cells = " + std::to_string(o.max_cells) +
                              " (raise it, or let cells coarsen: build_options::over_cap = too_many_cells::coarsen)");
    while (total > limit) {
      width *= std::max(1.0001, std::cbrt(total / limit));
      total = dims_at(width, d);
    }
    coarsened = true;
  }
  for (int a = 0; a < 3; ++a) {
    g.lo[a] = b.lo[std::size_t(a)];
    g.hi[a] = b.hi[std::size_t(a)];
    g.len[a] = b.length(a);
    g.dims[a] = int(d[std::size_t(a)]);
    g.inv_cell[a] = d[std::size_t(a)] / g.len[a];
    g.periodic[a] = b.periodic(a);
    g.flen[a] = F(g.len[a]);
    g.fhalf[a] = F(0.5 * g.len[a]);
    // The least F at or above lo: where a wrapped position lands that would round below lo.
    g.flo[a] = F(g.lo[a]);
    if (double(g.flo[a]) < g.lo[a]) g.flo[a] = std::nextafter(g.flo[a], std::numeric_limits<F>::infinity());
    if (g.periodic[a] && !(double(g.flo[a]) < g.hi[a]))
      throw std::invalid_argument(std::string(op) + ": the periodic " + axis_name(a) + " axis [" + num(g.lo[a]) + ", " + num(g.hi[a]) +
                                  ") holds no value of the position type");
  }
  return g;
}
}  // namespace detail

/// The cell list of a container of T laid out by M whose positions are the leaves Sel... name.
/// Building or rebuilding reorders the container by cell; loops over it (for_each_neighbor.hpp)
/// read the positions as they were binned, so a container whose particles moved is rebuilt first.
template <class T, class M, auto... Sel>
class cell_list {
 public:
  using pos = position_leaves<T, Sel...>;
  using coordinate = typename pos::coordinate;
  using container = basic_vector<T, M, memory_space::device>;
  static_assert(layout::columnar_mapping<M>, "strata::neighbor::cell_list needs a columnar container (soa_vector, aosoa_vector)");

  /// The cell list of ps; with `ghosts`, ps's last `ghosts` records are ghosts (see the top).
  cell_list(container& ps, const neighbor::box& b, double cutoff, build_options o = {}, std::size_t ghosts = 0)
      : box_(b), cutoff_(cutoff), options_(o), grid_(detail::make_grid<coordinate>(b, cutoff, o, index_t(ps.size()), coarsened_)) {
    rebuild(ps, ghosts);
  }

  /// Bins ps again (same box and cutoff) and reorders it by cell, its own records first and then
  /// its last `ghosts` records. A refused input (a non-finite position, one outside the box that
  /// the options refuse, a container of 2^31 or more records, more ghosts than records) throws
  /// before anything changes; positions wrapped into a periodic box stay wrapped if a later step
  /// fails (the same points of the periodic system). A build that fails after that (out of
  /// memory, a CUDA error) leaves the list empty (size() == 0): rebuild it before a loop.
  const build_report& rebuild(container& ps, std::size_t ghosts = 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const char* op = "strata::neighbor::cell_list";
    const stream_t stream = options_.stream;
    const index_t n = index_t(ps.size());
    if (n > index_t(0x7ffffffe))
      throw std::length_error(std::string(op) + ": " + std::to_string(n) + " particles; cell offsets are 32-bit (at most 2^31 - 2)");
    if (ghosts > ps.size())
      throw std::invalid_argument(std::string(op) + ": " + std::to_string(ghosts) + " ghosts in a container of " + std::to_string(n) + " records");
    const index_t owned = n - index_t(ghosts);
    const index_t segments = ghosts > 0 ? 2 : 1;
    if (segments * grid_.cells() > index_t(0x7ffffffe))
      throw std::length_error(std::string(op) + ": " + std::to_string(grid_.cells()) + " cells are too many for the ghosts' keys (32-bit)");
    strata::detail::launch_scope scope(op, stream, {strata::detail::described(ps.const_view(), "particles")});
    build_report r;
    r.particles = n;
    r.cells = grid_.cells();
    r.coarsened = coarsened_;
    for (int a = 0; a < 3; ++a) r.dims[std::size_t(a)] = grid_.dims[a], r.cell_size[std::size_t(a)] = grid_.len[a] / grid_.dims[a];
    while ((index_t(1) << r.key_bits) < segments * r.cells) ++r.key_bits;
    r.key_bits = std::max(r.key_bits, 1);

    auto v = ps.view();
    auto cv = ps.const_view();
    const auto policy = strata::detail::policy(stream);
    const detail::census c = n == 0 ? detail::census{} : thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(0),
                                                                                   thrust::counting_iterator<index_t>(n),
                                                                                   detail::census_of<pos, decltype(cv), coordinate>{cv, grid_},
                                                                                   detail::census{}, detail::census_sum{});
    if (c.bad > 0)
      throw std::invalid_argument(std::string(op) + ": " + std::to_string(c.bad) + " of " + std::to_string(n) +
                                  " particles have a non-finite position (NaN or infinity), the first at record " +
                                  std::to_string(c.bad_first) + "; the container is left as it was");
    if (c.open > 0 && options_.outside_open == open_outside::error)
      throw std::out_of_range(std::string(op) + ": " + std::to_string(c.open) + " of " + std::to_string(n) +
                              " particles lie outside the box on an open axis, the first at record " + std::to_string(c.open_first) +
                              " (build_options::outside_open = open_outside::clamp bins them in the edge cells); the container is left as it was");
    if (c.periodic > 0 && options_.outside_periodic == periodic_outside::error)
      throw std::out_of_range(std::string(op) + ": " + std::to_string(c.periodic) + " of " + std::to_string(n) +
                              " particles lie outside the box on a periodic axis, the first at record " + std::to_string(c.periodic_first) +
                              " (build_options::outside_periodic = periodic_outside::wrap moves them in); the container is left as it was");
    r.clamped = c.open;
    r.wrapped = c.periodic;
    // From here on keys and starts are replaced (a growing array is a fresh allocation) and
    // rewritten: until the build completes the list holds no records, so a loop after a failed
    // build is refused (size mismatch) instead of reading keys and starts of two different builds.
    n_ = 0, owned_ = 0;
    keys_.reserve(std::size_t(n));
    start_.reserve(std::size_t(segments * r.cells) + 1);
    if (c.periodic > 0) {
      ps.note_stream(stream);
      strata::detail::run_each(detail::wrap_positions<pos, decltype(v), coordinate>{v, grid_}, n, stream, "strata::neighbor (wrap)");
    }
    strata::detail::run_each(detail::cell_keys<pos, decltype(cv), coordinate>{cv, grid_, keys_.data(), owned}, n, stream,
                             "strata::neighbor (cell keys)");
    if (n <= 1) {
      r.path = build_path::trivial;
    } else if (thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(1), thrust::counting_iterator<index_t>(n),
                                        detail::descent{keys_.data()}, index_t(0), thrust::plus<index_t>()) == 0) {
      r.path = build_path::in_order;
    } else {
      r.path = build_path::sorted;
      strata::sort_by_key(ps, cuda::std::span<std::uint32_t>(keys_.data(), std::size_t(n)), stream, 0, r.key_bits);
    }
    thrust::lower_bound(policy, keys_.data(), keys_.data() + n, thrust::counting_iterator<std::uint32_t>(0),
                        thrust::counting_iterator<std::uint32_t>(std::uint32_t(segments * r.cells + 1)), start_.data());
    r.max_in_cell = thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(0), thrust::counting_iterator<index_t>(segments * r.cells),
                                             detail::cell_occupancy{start_.data()}, index_t(0), detail::max_of{});
    synchronize(stream);
    n_ = n;
    owned_ = owned;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report_ = r;
    return report_;
  }

  const build_report& report() const { return report_; }
  const neighbor::box& box() const { return box_; }
  double cutoff() const { return cutoff_; }
  const build_options& options() const { return options_; }
  index_t size() const { return n_; }
  /// Records of the container's own (the first ones); size() - owned() ghosts follow.
  index_t owned() const { return owned_; }
  index_t cells() const { return grid_.cells(); }
  const grid<coordinate>& geometry() const { return grid_; }
  cell_view<coordinate> view() const { return {grid_, start_.data(), keys_.data(), n_, owned_}; }
  /// Host copies of the cell starts (cells() + 1, or 2 cells() + 1 with ghosts: theirs follow) and
  /// the records' sorted keys (size(); a ghost's is its cell plus cells()).
  std::vector<std::int32_t> starts_to_host() const { return start_.to_host(std::size_t((owned_ < n_ ? 2 : 1) * cells()) + 1); }
  std::vector<std::uint32_t> keys_to_host() const { return keys_.to_host(std::size_t(n_)); }

 private:
  neighbor::box box_;
  double cutoff_;
  build_options options_;
  bool coarsened_ = false;
  grid<coordinate> grid_;
  detail::device_array<std::uint32_t> keys_;
  detail::device_array<std::int32_t> start_;
  index_t n_ = 0, owned_ = 0;
  build_report report_;
};

/// Bins ps (a device soa_vector or aosoa_vector) into cells at least `cutoff` wide over box b and
/// reorders it by cell: make_cell_list<&particle::pos>(ps, box::cube(10), 2.5). With `ghosts`,
/// ps's last `ghosts` records are ghosts (see the top).
template <auto... Sel, class T, class M>
cell_list<T, M, Sel...> make_cell_list(basic_vector<T, M, memory_space::device>& ps, const box& b, double cutoff, build_options o = {},
                                       std::size_t ghosts = 0) {
  return cell_list<T, M, Sel...>(ps, b, cutoff, o, ghosts);
}

}  // namespace strata::neighbor
