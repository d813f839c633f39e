// SPDX-License-Identifier: Apache-2.0
// Neighbour loops over a cell list or a Verlet list: one thread per particle i (strata's kernel on
// the GPU, OpenMP threads on the host backend) walks its candidates j, reads their positions (the
// three position leaves only), and calls the functor for each j within the cutoff with the
// minimum-image separation dr = r_i - r_j and r2 = |dr|^2. Whatever else the functor needs it
// reads itself, through a projection or view it holds, so a loop moves only the leaves it uses.
// - for_each_neighbor(ps, list, cutoff, f, options): f(i, j, dr, r2). Full pairs (each ordered
//   pair, from i's thread: writes to i's own slot race with nothing) or half pairs (each unordered
//   pair once, from the thread of the lower index: writes to j race with other threads and go
//   through atomic_add).
// - accumulate_neighbors(ps, list, cutoff, init, pair, store): per i, acc = init, pair(acc, i, j,
//   dr, r2) for every neighbour, then store(i, acc): the sum stays in registers and is written
//   once, with no atomics (full pairs).
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/neighbor/box.hpp>
#include <strata/neighbor/cell_list.hpp>
#include <strata/neighbor/verlet_list.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

namespace strata::neighbor {

struct loop_options {
  /// A cell list serves either; a Verlet list serves the pairs it was built with.
  pairs mode = pairs::full;
  stream_t stream = {};
};

/// *p += v, safe against other threads adding to *p at the same time (half-pair loops); returns
/// the value before. U: int, unsigned, unsigned long long, float or double.
template <class U>
STRATA_HD U atomic_add(U* p, U v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return std::atomic_ref<U>(*p).fetch_add(v, std::memory_order_relaxed);
#endif
}

namespace detail {
/// Threads a block of a neighbour loop: 128 runs the Lennard-Jones force pass 2-4% faster than 256
/// in fp32 on the H200 from 32 000 to 2^23 atoms (docs/performance.md, "Neighbours").
inline constexpr int loop_threads = 128;
template <class Pos, class V, class List, class F, class Fn>
struct pair_loop {
  V view;
  List list;
  F rc2;
  bool half;
  Fn f;
  STRATA_EXEC_CHECK_DISABLE
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> ri = position_of<Pos>(view, i);
    list.for_each_candidate(i, half, [&](index_t j) {
      const vec3<F> d = list.g.separation(ri, position_of<Pos>(view, j));
      const F r2 = norm2(d);
      if (r2 < rc2) f(i, j, d, r2);
    });
  }
};
template <class Pos, class V, class List, class F, class Acc, class Pair, class Store>
struct accumulate_loop {
  V view;
  List list;
  F rc2;
  Acc init;
  Pair pair;
  Store store;
  STRATA_EXEC_CHECK_DISABLE
  STRATA_HD void operator()(index_t i) const {
    const vec3<F> ri = position_of<Pos>(view, i);
    Acc acc = init;
    list.for_each_candidate(i, false, [&](index_t j) {
      const vec3<F> d = list.g.separation(ri, position_of<Pos>(view, j));
      const F r2 = norm2(d);
      if (r2 < rc2) pair(acc, i, j, d, r2);
    });
    store(i, acc);
  }
};

inline void check_loop(const char* op, index_t n, index_t list_n, double cutoff, double reach, const char* list) {
  if (n != list_n)
    throw std::invalid_argument(std::string(op) + ": the container holds " + std::to_string(n) + " records, the " + list + " was built over " +
                                std::to_string(list_n) + "; rebuild it");
  if (!(cutoff > 0) || !std::isfinite(cutoff))
    throw std::invalid_argument(std::string(op) + ": the cutoff must be a positive finite number, not " + num(cutoff));
  if (cutoff > reach)
    throw std::invalid_argument(std::string(op) + ": the cutoff " + num(cutoff) + " is more than the " + list + " reaches (" + num(reach) + ")");
}

/// The list's view.
template <class T, class M, auto... Sel>
auto list_of(const cell_list<T, M, Sel...>& c, pairs) {
  return c.view();
}
template <class T, class M, auto... Sel>
auto list_of(const verlet_list<T, M, Sel...>& l, pairs mode) {
  if (mode != l.mode())
    throw std::invalid_argument(std::string("strata::neighbor: the loop asks for ") + (mode == pairs::full ? "full" : "half") +
                                " pairs of a Verlet list built with " + (l.mode() == pairs::full ? "full" : "half") + " pairs");
  return l.view();
}
/// The records a loop runs for: a cell list's own records (not its ghosts), a Verlet list's rows.
template <class T, class M, auto... Sel>
index_t rows_of(const cell_list<T, M, Sel...>& c, pairs mode) {
  if (mode == pairs::half && c.owned() < c.size())
    throw std::invalid_argument("strata::neighbor: half pairs over a cell list with ghosts would count each pair between two ranks on both; "
                                "loop over full pairs");
  return c.owned();
}
template <class T, class M, auto... Sel>
index_t rows_of(const verlet_list<T, M, Sel...>& l, pairs) {
  return l.size();
}
template <class T, class M, auto... Sel>
double reach_of(const cell_list<T, M, Sel...>& c) {
  return c.cutoff();
}
/// A Verlet list holds every pair within cutoff + skin at its build, but only those within its
/// cutoff while no particle has moved more than skin / 2 since: a loop reaches that cutoff.
template <class T, class M, auto... Sel>
double reach_of(const verlet_list<T, M, Sel...>& l) {
  return l.cutoff();
}
template <class L>
inline constexpr const char* list_name = "cell list";
template <class T, class M, auto... Sel>
inline constexpr const char* list_name<verlet_list<T, M, Sel...>> = "Verlet list";
}  // namespace detail

/// f(i, j, dr, r2) for every pair within `cutoff` (at most the list's reach), full or half as
/// options.mode says; i runs over the container's own records (a cell list's ghosts are only ever
/// j). f runs on the device (mark it STRATA_HD); stream ordered.
template <class Container, class List, class Fn>
void for_each_neighbor(const Container& ps, const List& list, double cutoff, Fn f, loop_options o = {}) {
  using pos = typename List::pos;
  using F = typename List::coordinate;
  const char* op = "strata::neighbor::for_each_neighbor";
  detail::check_loop(op, index_t(ps.size()), list.size(), cutoff, detail::reach_of(list), detail::list_name<List>);
  strata::detail::launch_scope scope(op, o.stream, {strata::detail::described(ps.const_view(), "particles")});
  auto v = ps.const_view();
  auto lv = detail::list_of(list, o.mode);
  strata::detail::run_each<detail::loop_threads>(detail::pair_loop<pos, decltype(v), decltype(lv), F, Fn>{v, lv, F(cutoff * cutoff), o.mode == pairs::half, f},
                           detail::rows_of(list, o.mode), o.stream, op);
}

/// Per particle i: acc = init, pair(acc, i, j, dr, r2) for every j within `cutoff`, store(i, acc).
/// Full pairs only (a half list would give i only the pairs where it is the lower index).
template <class Container, class List, class Acc, class Pair, class Store>
void accumulate_neighbors(const Container& ps, const List& list, double cutoff, Acc init, Pair pair, Store store, stream_t stream = {}) {
  using pos = typename List::pos;
  using F = typename List::coordinate;
  const char* op = "strata::neighbor::accumulate_neighbors";
  detail::check_loop(op, index_t(ps.size()), list.size(), cutoff, detail::reach_of(list), detail::list_name<List>);
  strata::detail::launch_scope scope(op, stream, {strata::detail::described(ps.const_view(), "particles")});
  auto v = ps.const_view();
  auto lv = detail::list_of(list, pairs::full);
  strata::detail::run_each<detail::loop_threads>(detail::accumulate_loop<pos, decltype(v), decltype(lv), F, Acc, Pair, Store>{v, lv, F(cutoff * cutoff), init, pair, store},
                           detail::rows_of(list, pairs::full), stream, op);
}

}  // namespace strata::neighbor
