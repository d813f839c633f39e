// SPDX-License-Identifier: Apache-2.0
// The geometry every neighbour structure shares: the simulation box (lo, hi and open or periodic
// per axis), which leaves of a record hold the position (a projection of three leaves of one
// floating-point type), and the grid of cells over the box that a cutoff gives, with the cell of a
// position and the minimum image of a separation as the kernels compute them.
#pragma once

#include <strata/config.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/reflect/leaves.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace strata::neighbor {

enum class boundary { open, periodic };

/// The box particles live in: [lo, hi) per axis. A periodic axis repeats with period hi - lo; an
/// open axis ends there (what lies outside is handled as build_options says).
struct box {
  std::array<double, 3> lo{0, 0, 0}, hi{1, 1, 1};
  std::array<boundary, 3> bc{boundary::periodic, boundary::periodic, boundary::periodic};

  static box cube(double length, boundary b = boundary::periodic) { return {{0, 0, 0}, {length, length, length}, {b, b, b}}; }
  double length(int axis) const { return hi[std::size_t(axis)] - lo[std::size_t(axis)]; }
  bool periodic(int axis) const { return bc[std::size_t(axis)] == boundary::periodic; }
};

/// A displacement r_i - r_j (minimum image on periodic axes).
template <class F>
struct vec3 {
  F x, y, z;
};

/// The three leaves of T that hold x, y and z, from selectors as strata::project takes them: one
/// sub-struct of three leaves (&particle::pos) or three leaves (&particle::x, &particle::y, ...).
template <class T, auto... Sel>
struct position_leaves {
  using sequence = decltype(strata::detail::projected_leaves<T, Sel...>());
  static_assert(sequence::size() == 3, "strata::neighbor: the position selectors must name exactly three leaves (x, y, z), "
                                       "e.g. &particle::pos of a struct {x, y, z} or &particle::x, &particle::y, &particle::z");
  static constexpr std::array<std::size_t, 3> leaf = []<std::size_t... L>(std::index_sequence<L...>) {
    return std::array<std::size_t, 3>{L...};
  }(sequence{});
  using coordinate = reflect::leaf_type_t<T, leaf[0]>;
  static_assert(std::is_floating_point_v<coordinate>, "strata::neighbor: position leaves must be float or double");
  static_assert(std::is_same_v<coordinate, reflect::leaf_type_t<T, leaf[1]>> && std::is_same_v<coordinate, reflect::leaf_type_t<T, leaf[2]>>,
                "strata::neighbor: the x, y and z leaves must have one type (all float or all double)");
};

/// Position of record i of a columnar view, read from the three position leaves only.
template <class Pos, class V>
STRATA_HD vec3<typename Pos::coordinate> position_of(const V& v, index_t i) {
  return {*v.template leaf_ptr<Pos::leaf[0]>(i), *v.template leaf_ptr<Pos::leaf[1]>(i), *v.template leaf_ptr<Pos::leaf[2]>(i)};
}

/// Cells are at least this much wider than the cutoff (relative, and by a few ulps of the box's
/// longest axis in the position type besides), so that a pair the kernels find inside the cutoff
/// in F arithmetic is never two cells apart through rounding.
inline constexpr double cell_margin = 1e-5;

/// The grid over a box as kernels use it (trivially copyable): cell keys are computed in double,
/// separations in F.
template <class F>
struct grid {
  double lo[3], hi[3], inv_cell[3], len[3];
  F flen[3], fhalf[3], flo[3];
  int dims[3];
  bool periodic[3];

  STRATA_HD index_t cells() const { return index_t(dims[0]) * dims[1] * dims[2]; }
  /// Cell coordinate along an axis of a position already inside the box on periodic axes; outside
  /// an open axis it is clamped to the edge cell (which keeps every pair within the cutoff in
  /// adjacent cells: clamping is monotone and never widens a gap).
  STRATA_HD int coordinate(double x, int a) const {
    const double t = (x - lo[a]) * inv_cell[a];
    if (!(t >= 0)) return 0;
    if (t >= double(dims[a])) return dims[a] - 1;
    return int(t);
  }
  STRATA_HD std::uint32_t key(int cx, int cy, int cz) const {
    return std::uint32_t((std::uint32_t(cz) * std::uint32_t(dims[1]) + std::uint32_t(cy)) * std::uint32_t(dims[0]) + std::uint32_t(cx));
  }
  /// Position wrapped into [lo, hi) on periodic axes, as stored back into the container.
  STRATA_HD F wrap(F x, int a) const {
    if (!periodic[a]) return x;
    if (double(x) >= lo[a] && double(x) < hi[a]) return x;
    F w = F(double(x) - len[a] * floor((double(x) - lo[a]) / len[a]));
    // Rounding onto hi (the same point as lo) or below lo: the least F inside the box.
    if (double(w) >= hi[a] || double(w) < lo[a]) w = flo[a];
    return w;
  }
  /// Minimum image of one component of a separation (positions within a period of each other).
  STRATA_HD F image(F d, int a) const {
    if (!periodic[a]) return d;
    if (d > fhalf[a]) return d - flen[a];
    if (d < -fhalf[a]) return d + flen[a];
    return d;
  }
  STRATA_HD vec3<F> separation(const vec3<F>& ri, const vec3<F>& rj) const {
    return {image(ri.x - rj.x, 0), image(ri.y - rj.y, 1), image(ri.z - rj.z, 2)};
  }
};

/// A separation's square, in the order every kernel (and the tests' reference) computes it: one
/// rounded product and two fused multiply-adds, fma(z, z, fma(y, y, x * x)), written out on the GPU
/// (nvcc would otherwise contract as it chooses) and as std::fma on the host, so a pair at the
/// cutoff's edge classifies the same on both.
template <class F>
STRATA_HD F norm2(const vec3<F>& d) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<F, float>)
    return __fmaf_rn(d.z, d.z, __fmaf_rn(d.y, d.y, __fmul_rn(d.x, d.x)));
  else
    return __fma_rn(d.z, d.z, __fma_rn(d.y, d.y, __dmul_rn(d.x, d.x)));
#else
  return std::fma(d.z, d.z, std::fma(d.y, d.y, d.x * d.x));
#endif
}

namespace detail {
inline const char* axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }
inline std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
/// Refuses a box or cutoff no grid can be made of, naming the value: lo >= hi or not finite, a
/// cutoff that is not a positive finite number, or one above half a periodic length (the minimum
/// image would then miss the second image inside the cutoff).
inline void check_geometry(const char* op, const box& b, double cutoff) {
  if (!(cutoff > 0) || !std::isfinite(cutoff))
    throw std::invalid_argument(std::string(op) + ": the cutoff must be a positive finite number, not " + num(cutoff));
  for (int a = 0; a < 3; ++a) {
    const double lo = b.lo[std::size_t(a)], hi = b.hi[std::size_t(a)];
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo))
      throw std::invalid_argument(std::string(op) + ": the box's " + axis_name(a) + " axis [" + num(lo) + ", " + num(hi) +
                                  ") is empty or not finite (lo must be below hi)");
    if (b.periodic(a) && cutoff > 0.5 * b.length(a))
      throw std::invalid_argument(std::string(op) + ": the cutoff " + num(cutoff) + " is more than half the periodic " + axis_name(a) +
                                  " length " + num(b.length(a)) + "; the minimum image would miss pairs (enlarge the box or make the axis open)");
  }
}
}  // namespace detail

}  // namespace strata::neighbor
