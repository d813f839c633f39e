// SPDX-License-Identifier: Apache-2.0
// Verlet lists: for every particle the indices of the particles within cutoff + skin, found
// through a cell list and stored compactly (CSR: 64-bit offsets, n + 1 of them, and 32-bit
// neighbour indices). Two passes over the cells: one counts each particle's neighbours, a scan
// makes the offsets, the second writes them; each thread writes only its own particle's row, so no
// atomics. The positions at build time are kept, so needs_rebuild(ps) can tell when some particle
// has moved more than skin / 2 (then a pair may have come within the cutoff unseen).
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/neighbor/box.hpp>
#include <strata/neighbor/cell_list.hpp>

#include <thrust/scan.h>
#include <thrust/transform_reduce.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::neighbor {

/// Which pairs a loop or a list holds: full (i sees j and j sees i: per-i results need no atomics)
/// or half (each pair once, from the lower index i < j).
enum class pairs { full, half };

/// A Verlet list as kernels read it (trivially copyable).
template <class F>
struct verlet_view {
  grid<F> g;
  const std::int64_t* offset;
  const std::int32_t* index;
  index_t n;
  /// fn(j) for every j on record i's row (the list's pairs; `half` is the list's, not asked again).
  template <class Fn>
  STRATA_HD void for_each_candidate(index_t i, bool /*half*/, Fn&& fn) const {
    for (std::int64_t k = offset[i], e = offset[i + 1]; k < e; ++k) fn(index_t(index[k]));
  }
};

namespace detail {
template <class Pos, class V, class F>
struct count_within {
  V view;
  cell_view<F> cells;
  F r2max;
  bool half;
  std::int64_t* count;
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> ri = position_of<Pos>(view, i);
    std::int64_t k = 0;
    cells.for_each_candidate(i, half, [&](index_t j) {
      if (norm2(cells.g.separation(ri, position_of<Pos>(view, j))) < r2max) ++k;
    });
    count[i] = k;
  }
};
template <class Pos, class V, class F>
struct fill_within {
  V view;
  cell_view<F> cells;
  F r2max;
  bool half;
  const std::int64_t* offset;
  std::int32_t* index;
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> ri = position_of<Pos>(view, i);
    std::int64_t k = offset[i];
    cells.for_each_candidate(i, half, [&](index_t j) {
      if (norm2(cells.g.separation(ri, position_of<Pos>(view, j))) < r2max) index[k++] = std::int32_t(j);
    });
  }
};
template <class Pos, class V, class F>
struct keep_positions {
  V view;
  F* x;
  F* y;
  F* z;
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> r = position_of<Pos>(view, i);
    x[i] = r.x, y[i] = r.y, z[i] = r.z;
  }
};
template <class Pos, class V, class F>
struct displacement2 {
  V view;
  grid<F> g;
  const F* x;
  const F* y;
  const F* z;
  STRATA_HD double operator()(index_t i) const {
    const vec3<F> d = g.separation(position_of<Pos>(view, i), vec3<F>{x[i], y[i], z[i]});
    return double(d.x) * d.x + double(d.y) * d.y + double(d.z) * d.z;
  }
};
struct max_double {
  STRATA_HD double operator()(double a, double b) const { return a < b ? b : a; }
};
}  // namespace detail

/// The Verlet list of a container (the same T, M and position leaves as its cell list). The
/// indices refer to the records in the order the cell list left them: reordering the container
/// (a cell list rebuild) needs a Verlet list rebuild too.
template <class T, class M, auto... Sel>
class verlet_list {
 public:
  using cells_type = cell_list<T, M, Sel...>;
  using pos = typename cells_type::pos;
  using coordinate = typename cells_type::coordinate;
  using container = typename cells_type::container;

  /// Pairs within cutoff + skin; the cell list's cells must be at least that wide (a cell list
  /// built with cutoff + skin), and on periodic axes cutoff + skin at most half the length.
  verlet_list(const container& ps, const cells_type& cells, double cutoff, double skin, pairs mode = pairs::full, stream_t stream = {})
      : cutoff_(cutoff), skin_(skin), mode_(mode), stream_(stream) {
    const char* op = "strata::neighbor::verlet_list";
    if (!(cutoff > 0) || !std::isfinite(cutoff))
      throw std::invalid_argument(std::string(op) + ": the cutoff must be a positive finite number, not " + detail::num(cutoff));
    if (!(skin >= 0) || !std::isfinite(skin)) throw std::invalid_argument(std::string(op) + ": the skin must be >= 0 and finite, not " + detail::num(skin));
    rebuild(ps, cells);
  }

  /// Builds the list again from cells (rebuilt over ps since ps last moved; the same or another
  /// cell list, checked as the constructor checks it). A refused input throws with the list as it
  /// was; a build that fails after that (out of memory, a CUDA error) leaves the list empty
  /// (size() == 0), so a loop over it is refused until a rebuild succeeds.
  void rebuild(const container& ps, const cells_type& cells) {
    const char* op = "strata::neighbor::verlet_list";
    const index_t n = index_t(ps.size());
    detail::check_geometry(op, cells.box(), cutoff_ + skin_);
    if (cells.owned() < cells.size())
      throw std::invalid_argument(std::string(op) + ": the cell list holds ghosts; a Verlet list is built over a container's own records only "
                                                    "(loop over the cell list, rebuilt after each halo exchange)");
    if (cutoff_ + skin_ > cells.cutoff())
      throw std::invalid_argument(std::string(op) + ": cutoff + skin = " + detail::num(cutoff_ + skin_) + " is more than the cell list's cutoff " +
                                  detail::num(cells.cutoff()) + "; build the cell list with cutoff + skin");
    if (n != cells.size())
      throw std::invalid_argument(std::string(op) + ": the container holds " + std::to_string(n) + " records, the cell list was built over " +
                                  std::to_string(cells.size()) + "; rebuild the cell list first");
    strata::detail::launch_scope scope(op, stream_, {strata::detail::described(ps.const_view(), "particles")});
    n_ = 0, pairs_ = 0;  // arrays are replaced and rewritten from here on: empty until the build completes
    grid_ = cells.geometry();
    auto v = ps.const_view();
    const auto cv = cells.view();
    const double reach = cutoff_ + skin_;
    const coordinate r2max = coordinate(reach * reach);
    const bool half = mode_ == pairs::half;
    offset_.reserve(std::size_t(n) + 1);
    x_.reserve(std::size_t(n)), y_.reserve(std::size_t(n)), z_.reserve(std::size_t(n));
    const auto policy = strata::detail::policy(stream_);
    strata::detail::run_each(detail::count_within<pos, decltype(v), coordinate>{v, cv, r2max, half, offset_.data()}, n, stream_,
                             "strata::neighbor::verlet_list (count)");
    std::int64_t zero = 0;
    copy_bytes_async(offset_.data() + n, &zero, sizeof zero, stream_);
    thrust::exclusive_scan(policy, offset_.data(), offset_.data() + n + 1, offset_.data());
    std::int64_t total = 0;
    copy_bytes_async(&total, offset_.data() + n, sizeof total, stream_);
    synchronize(stream_);
    index_.reserve(std::size_t(total));
    strata::detail::run_each(detail::fill_within<pos, decltype(v), coordinate>{v, cv, r2max, half, offset_.data(), index_.data()}, n, stream_,
                             "strata::neighbor::verlet_list (fill)");
    strata::detail::run_each(detail::keep_positions<pos, decltype(v), coordinate>{v, x_.data(), y_.data(), z_.data()}, n, stream_,
                             "strata::neighbor::verlet_list (positions)");
    synchronize(stream_);
    n_ = n;
    pairs_ = total;
    ++builds_;
  }

  /// The largest distance a particle has moved since the build (minimum image).
  double max_displacement(const container& ps) const {
    if (index_t(ps.size()) != n_)
      throw std::invalid_argument("strata::neighbor::verlet_list: the container holds " + std::to_string(ps.size()) +
                                  " records, the list " + std::to_string(n_) + " (rebuild it)");
    if (n_ == 0) return 0;
    strata::detail::launch_scope scope("strata::neighbor::verlet_list", stream_, {strata::detail::described(ps.const_view(), "particles")});
    auto v = ps.const_view();
    const double m2 = thrust::transform_reduce(strata::detail::policy(stream_), thrust::counting_iterator<index_t>(0), thrust::counting_iterator<index_t>(n_),
                                               detail::displacement2<pos, decltype(v), coordinate>{v, grid_, x_.data(), y_.data(), z_.data()}, 0.0,
                                               detail::max_double{});
    return std::sqrt(m2);
  }
  /// True once some particle has moved more than skin / 2 since the build: two particles may then
  /// have closed in by more than the skin, so a pair within the cutoff can be missing.
  bool needs_rebuild(const container& ps) const { return max_displacement(ps) > 0.5 * skin_; }

  double cutoff() const { return cutoff_; }
  double skin() const { return skin_; }
  pairs mode() const { return mode_; }
  index_t size() const { return n_; }
  /// Pairs stored (each pair twice in a full list, once in a half list).
  std::int64_t stored() const { return pairs_; }
  long builds() const { return builds_; }
  verlet_view<coordinate> view() const { return {grid_, offset_.data(), index_.data(), n_}; }
  std::vector<std::int64_t> offsets_to_host() const { return offset_.to_host(std::size_t(n_) + 1); }
  std::vector<std::int32_t> indices_to_host() const { return index_.to_host(std::size_t(pairs_)); }

 private:
  double cutoff_, skin_;
  pairs mode_;
  stream_t stream_;
  grid<coordinate> grid_{};
  detail::device_array<std::int64_t> offset_;
  detail::device_array<std::int32_t> index_;
  detail::device_array<coordinate> x_, y_, z_;
  index_t n_ = 0;
  std::int64_t pairs_ = 0;
  long builds_ = 0;
};

/// The Verlet list of ps over cells: make_verlet_list(ps, cells, 2.5, 0.3).
template <class T, class M, auto... Sel>
verlet_list<T, M, Sel...> make_verlet_list(const basic_vector<T, M, memory_space::device>& ps, const cell_list<T, M, Sel...>& cells, double cutoff,
                                           double skin, pairs mode = pairs::full, stream_t stream = {}) {
  return verlet_list<T, M, Sel...>(ps, cells, cutoff, skin, mode, stream);
}

}  // namespace strata::neighbor
