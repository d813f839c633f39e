// SPDX-License-Identifier: Apache-2.0
// Neighbour loops over records sharded over ranks: each local rank's shard (its own records, then
// the ghosts halo_exchange() appended) gets a cell list over the whole box, its own records and its
// ghosts each sorted by cell, and the loop runs on every rank for its own records, with ghosts as
// neighbours. A halo of at least the cutoff (cutoff + skin for lists kept between exchanges) makes
// every pair within the cutoff visible to the rank of each of its records: the loop's results for
// a rank's records are those of one container holding every record.
//
//   d.halo_exchange(ghosts_within(cutoff), 2);
//   auto lists = distributed::make_cell_lists<&atom::x, &atom::y, &atom::z>(d, box, cutoff);
//   distributed::accumulate_neighbors(d, lists, cutoff, init, pair, [&](int l) { return store_for(d.shard(l)); });
//
// Half pairs are refused (a pair between two ranks would count on both); Verlet lists are built
// per container without ghosts. The lists keep the container's generation() of their build: a
// loop after a scatter, migrate, halo exchange or drop_ghosts without a rebuild is refused. What
// a caller does to a shard itself (moving particles, sorting it, rebuilding another cell_lists
// over the same container) is not seen, beyond the record counts each loop checks. The cell
// lists cover the whole box (each costs 4 bytes per cell of the box, twice with ghosts), so a
// rank's lists are right whatever part of the box it holds.
#pragma once

#include <strata/distributed/distributed_vector.hpp>
#include <strata/neighbor/neighbor.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::distributed {

/// One neighbor::cell_list per local rank of a distributed_soa_vector<T>.
template <class T, auto... Sel>
class cell_lists {
 public:
  using list_type = neighbor::cell_list<T, soa_mapping<T>, Sel...>;

  cell_lists(distributed_soa_vector<T>& d, const neighbor::box& b, double cutoff, neighbor::build_options o) : comm_(&d.comm()) {
    for (int l = 0; l < comm_->local_ranks(); ++l) {
      strata::detail::device_guard on(comm_->device(l));
      lists_.emplace_back(d.shard(l), b, cutoff, o, d.ghosts(l));
    }
    generation_ = d.generation();
  }

  /// Bins every rank's shard again (after its records moved or a new halo exchange): each rank's
  /// own records and its ghosts reordered by cell. A refused input on any rank throws (ranks
  /// before it are rebuilt already; their lists are valid for their shards).
  void rebuild(distributed_soa_vector<T>& d) {
    if (&d.comm() != comm_)
      throw std::invalid_argument("strata::distributed::rebuild: the cell lists belong to a container of another communicator");
    generation_ = failed;  // valid again only once every rank's list is
    for (int l = 0; l < comm_->local_ranks(); ++l) {
      strata::detail::device_guard on(comm_->device(l));
      lists_[std::size_t(l)].rebuild(d.shard(l), d.ghosts(l));
    }
    generation_ = d.generation();
  }

  list_type& operator[](int l) { return lists_.at(std::size_t(l)); }
  const list_type& operator[](int l) const { return lists_.at(std::size_t(l)); }
  int local_ranks() const { return int(lists_.size()); }

  void check(const distributed_soa_vector<T>& d, const char* op) const {
    if (&d.comm() != comm_)
      throw std::invalid_argument(std::string("strata::distributed::") + op + ": the cell lists belong to a container of another communicator");
    if (d.generation() != generation_)
      throw std::invalid_argument(std::string("strata::distributed::") + op +
                                  ": the container's shards changed (scatter, migrate, halo_exchange or drop_ghosts) since the cell lists were "
                                  "built, or their last rebuild failed; rebuild the lists");
    for (int l = 0; l < comm_->local_ranks(); ++l) {
      const auto& c = lists_[std::size_t(l)];
      if (index_t(d.shard(l).size()) != c.size() || index_t(d.ghosts(l)) != c.size() - c.owned())
        throw std::invalid_argument(std::string("strata::distributed::") + op + ": rank " + std::to_string(comm_->rank(l)) + " holds " +
                                    std::to_string(d.shard(l).size()) + " records (" + std::to_string(d.ghosts(l)) +
                                    " ghosts), its cell list was built over " + std::to_string(c.size()) + " (" +
                                    std::to_string(c.size() - c.owned()) + " ghosts); rebuild the lists");
    }
  }

 private:
  communicator* comm_;
  std::vector<list_type> lists_;
  static constexpr std::uint64_t failed = ~std::uint64_t(0);  // no container's generation
  std::uint64_t generation_ = failed;  // the container's generation() the lists were built at
};

/// Cell lists of every local rank's shard of d (its ghosts from the last halo_exchange included)
/// over the whole box b, cells at least `cutoff` wide: make_cell_lists<&atom::pos>(d, box, 2.8).
template <auto... Sel, class T>
cell_lists<T, Sel...> make_cell_lists(distributed_soa_vector<T>& d, const neighbor::box& b, double cutoff, neighbor::build_options o = {}) {
  return cell_lists<T, Sel...>(d, b, cutoff, o);
}

/// neighbor::for_each_neighbor on every local rank: f_of(l) gives rank l's functor f(i, j, dr,
/// r2), called for each of the rank's own records i and every j (own or ghost) within `cutoff`;
/// full pairs only. Ranks run one after another (each on its device's default stream, waited for
/// before the next rank starts, so the ranks' later work sees the results).
template <class T, class L, class FnOf>
void for_each_neighbor(distributed_soa_vector<T>& d, const L& lists, double cutoff, FnOf f_of) {
  lists.check(d, "for_each_neighbor");
  for (int l = 0; l < d.comm().local_ranks(); ++l) {
    strata::detail::device_guard on(d.comm().device(l));
    neighbor::for_each_neighbor(d.shard(l), lists[l], cutoff, f_of(l));
    // The loop ran on the device's default stream, which the rank's own (non-blocking) stream does
    // not wait for: it finishes before the rank's next work (transform, migrate) can start.
    synchronize(stream_t{});
  }
}

/// neighbor::accumulate_neighbors on every local rank: per own record i of rank l, acc = init,
/// pair(acc, i, j, dr, r2) for every j (own or ghost) within `cutoff`, then store_of(l)(i, acc).
template <class T, class L, class Acc, class Pair, class StoreOf>
void accumulate_neighbors(distributed_soa_vector<T>& d, const L& lists, double cutoff, Acc init, Pair pair, StoreOf store_of) {
  lists.check(d, "accumulate_neighbors");
  for (int l = 0; l < d.comm().local_ranks(); ++l) {
    strata::detail::device_guard on(d.comm().device(l));
    neighbor::accumulate_neighbors(d.shard(l), lists[l], cutoff, init, pair, store_of(l));
    // The loop ran on the device's default stream, which the rank's own (non-blocking) stream does
    // not wait for: it finishes before the rank's next work (transform, migrate) can start.
    synchronize(stream_t{});
  }
}

}  // namespace strata::distributed
