// SPDX-License-Identifier: Apache-2.0
// The pieces migrate() and halo_exchange() are built from: device functors over a shard's view
// (destinations, picks, gathers, moves) and the host threads that run every local rank's work at
// once.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/host_transfer.hpp>  // spin_until
#include <strata/memory/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::distributed {

namespace detail {
/// Destination rank of each record of [first, first + count).
template <class View, class DestFn>
struct destinations {
  std::int32_t* out;
  View view;
  DestFn dest;
  index_t first = 0;
  STRATA_HD void operator()(index_t i) const { out[first + i] = std::int32_t(dest(view.load(first + i))); }
};
/// offsets[p] = the number of (sorted) keys below p, for p in [0, ranks]: records for rank p are
/// [offsets[p], offsets[p + 1]).
struct rank_offsets {
  const std::int32_t* keys;
  index_t n;
  std::int64_t* offsets;
  STRATA_HD void operator()(index_t p) const {
    index_t lo = 0, hi = n;
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < std::int32_t(p)) lo = mid + 1;
      else hi = mid;
    }
    offsets[p] = lo;
  }
};
/// Whether record first + i goes to rank `me` (stays = true) or elsewhere (stays = false).
template <class View, class DestFn>
struct goes_to {
  View v;
  DestFn dest;
  int me;
  index_t first;
  bool stays;
  STRATA_HD bool operator()(index_t i) const { return (int(dest(v.load(first + i))) == me) == stays; }
};
/// A keyed pick (strata::detail::keyed_pick, split_by_key.hpp): record i's key is its destination
/// rank, and it is picked (it leaves) when that is not `keep`, the rank it is on.
template <class View, class DestFn>
struct leaving_for {
  View v;
  DestFn dest;
  std::int32_t keep;
  STRATA_HD std::int32_t key(index_t i) const { return std::int32_t(dest(v.load(i))); }
};
/// to[to_at + i] = from[idx[i]].
template <class From, class To = From>
struct gather_records {
  From from;
  To to;
  const std::int64_t* idx;
  index_t to_at = 0;
  STRATA_HD void operator()(index_t i) const { to.store(to_at + i, from.load(index_t(idx[i]))); }
};
/// v[to[j]] = v[from[j]] for j < *count (the two index sets are disjoint; count is in device
/// memory, written by the selection queued before on the same stream).
template <class View>
struct move_records {
  View v;
  const std::int64_t* to;
  const std::int64_t* from;
  const std::int64_t* count;
  STRATA_HD void operator()(index_t j) const {
    if (j < *count) v.store(index_t(to[j]), v.load(index_t(from[j])));
  }
};
/// to[to_at + i] = from[from_at + i]: packing a run of records into a wire block and back.
template <class From, class To>
struct copy_run {
  From from;
  To to;
  index_t from_at, to_at;
  STRATA_HD void operator()(index_t i) const { to.store(to_at + i, from.load(from_at + i)); }
};
/// copy_run out of a wire block that NCCL filled: a type of its own, so that a sanitizer run can
/// name its kernel (compute-sanitizer's initcheck does not see the writes a peer GPU's NCCL kernel
/// makes, and reports every read of a received block as uninitialized).
template <class From, class To>
struct unpack_run : copy_run<From, To> {};
/// Whether a record's destination is rank `me` (it stays).
template <class DestFn>
struct stays_on {
  DestFn dest;
  int me;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    return int(dest(r)) == me;
  }
};
/// The smallest and largest destination among some records, in one reduction.
struct key_range {
  std::int32_t lo, hi;
  STRATA_HD key_range() : lo(0), hi(0) {}
  STRATA_HD key_range(std::int32_t k) : lo(k), hi(k) {}
  STRATA_HD key_range(std::int32_t l, std::int32_t h) : lo(l), hi(h) {}
};
struct widen_range {
  STRATA_HD key_range operator()(const key_range& a, const key_range& b) const {
    return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};
/// A keyed pick for halo_exchange(): record i is picked (copied as a ghost) when fn(record, k)
/// names a rank other than `keep`, the rank it is on; -1 (no ghost) keys it as `keep`.
template <class View, class GhostFn>
struct ghost_for {
  View v;
  GhostFn fn;
  int k;
  std::int32_t keep;
  STRATA_HD std::int32_t key(index_t i) const {
    const int to = fn(v.load(i), k);
    return to < 0 ? keep : std::int32_t(to);
  }
};
template <class GhostFn>
struct ghost_destination {
  GhostFn fn;
  int k;
  template <class R>
  STRATA_HD int operator()(const R& r) const {
    return fn(r, k);
  }
};
struct plus {
  template <class A>
  STRATA_HD A operator()(const A& a, const A& b) const {
    return a + b;
  }
};

/// A meeting point for the local ranks of one rank_threads::run: arrive(ok) returns once every
/// rank has arrived, true when all arrived with ok. A rank whose work failed still arrives (with
/// false), so that the others learn of it and stop instead of waiting for ever. One use.
class rank_barrier {
 public:
  explicit rank_barrier(int ranks) : left_(ranks) {}
  bool arrive(bool ok) {
    if (!ok) failed_.store(true);
    if (left_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> g(m_);
      met_ = true;
      cv_.notify_all();
    } else if (!strata::detail::spin_until([&] { return left_.load() == 0; })) {
      std::unique_lock<std::mutex> g(m_);
      cv_.wait(g, [&] { return met_; });
    }
    return !failed_.load();
  }
  /// f(), then arrive: f's exception is rethrown once this rank has arrived (so that no rank waits
  /// for ever); otherwise, whether every rank's work succeeded.
  template <class F>
  bool after(F&& f) {
    std::exception_ptr failure;
    try {
      f();
    } catch (...) {
      failure = std::current_exception();
    }
    const bool all = arrive(!failure);
    if (failure) std::rethrow_exception(failure);
    return all;
  }

 private:
  std::atomic<int> left_;
  std::atomic<bool> failed_{false};
  std::mutex m_;
  std::condition_variable cv_;
  bool met_ = false;
};

/// One host thread per local rank past the first, kept for the container's life: starting threads
/// per call costs more than a small migration's GPU work (about 0.1 ms per thread on the 2 x H200
/// machine). run(f) calls f(l) for every local rank l, rank 0 on the caller's thread, each worker
/// on its own, and returns when all are done, rethrowing the first exception any of them threw.
/// Workers spin for the next job for up to `idle_spin`, then sleep: a time-stepping loop calls
/// migrate every millisecond or so, and a sleeping thread's wake-up would come on top of each.
class rank_threads {
 public:
  explicit rank_threads(int ranks) : errors_(std::size_t(std::max(ranks, 1))) {
    for (int l = 1; l < ranks; ++l) workers_.emplace_back([this, l] { serve(l); });
  }
  rank_threads(const rank_threads&) = delete;
  rank_threads& operator=(const rank_threads&) = delete;
  ~rank_threads() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  template <class F>
  void run(F& f) {
    if (workers_.empty()) return f(0);
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = [&f](int l) { f(l); };
      for (auto& e : errors_) e = nullptr;
      pending_.store(int(workers_.size()));
      generation_.store(generation_.load() + 1);
    }
    wake_.notify_all();
    try {
      f(0);
    } catch (...) {
      errors_[0] = std::current_exception();
    }
    if (!strata::detail::spin_until([&] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> g(m_);
      done_.wait(g, [&] { return pending_.load() == 0; });
    }
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void serve(int l) {
    unsigned long seen = 0;
    for (;;) {
      auto woken = [&] { return stop_.load() || generation_.load() != seen; };
      if (!strata::detail::spin_until(woken, idle_spin)) {
        std::unique_lock<std::mutex> g(m_);
        wake_.wait(g, woken);
      }
      std::function<void(int)> job;
      {
        std::lock_guard<std::mutex> g(m_);
        if (stop_.load()) return;
        seen = generation_.load();
        job = job_;
      }
      try {
        job(l);
      } catch (...) {
        errors_[std::size_t(l)] = std::current_exception();
      }
      std::lock_guard<std::mutex> g(m_);
      if (pending_.fetch_sub(1) == 1) done_.notify_all();
    }
  }
  static constexpr std::chrono::microseconds idle_spin{5000};
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::function<void(int)> job_;
  std::vector<std::exception_ptr> errors_;
  std::atomic<int> pending_{0};
  std::atomic<unsigned long> generation_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};
}  // namespace detail

}  // namespace strata::distributed
