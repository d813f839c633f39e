// SPDX-License-Identifier: Apache-2.0
// Particle lifecycle on 2^26 particles (7 fp32 leaves), each timed run starting from the same state
// (restored untimed before it, then L2 emptied):
// - sort_by_key: uniformly random 18-bit cell keys; strata::sort_by_key against thrust::sort_by_key
//   of the same keys with a zip of the 7 columns as values. Bytes: records and keys, read once and
//   written once.
// - erase_if: about half removed; strata::erase_if against thrust::remove_if over the zip. Bytes:
//   every record read once, the kept ones written once.
// - permute: the permutation that re-sorting the demo's particles by cell after 50 steps gives
//   (record `resort`), and a uniformly random one (`random`); strata::permute in place and through
//   a spare container (`strata_spare`) against seven thrust::gather calls, one per column, into a
//   second set of columns. Bytes: records read once and written once.
#include "common.hpp"

#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/container/soa_vector.hpp>

#include "../fixtures/records.hpp"

#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/transform.h>
#include <thrust/gather.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/remove.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/tuple.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <numeric>
#include <random>

namespace {

using strata_fixtures::particle;
using u32 = std::uint32_t;

std::int64_t count() { return strata_bench::scaled(std::int64_t(1) << 26); }

/// Runs setup() untimed before each timed body(), as run_timed does otherwise.
template <class Setup, class Body>
void timed_from(benchmark::State& state, double bytes, double n, Setup&& setup, Body&& body) {
  for (int i = 0; i < 2; ++i) setup(), body();
  strata_bench::sync();
  strata_bench::timer t;
  for (auto _ : state) {
    setup();
    strata_bench::flush_l2();
    t.start();
    body();
    state.SetIterationTime(t.stop());
  }
  state.counters["bytes"] = bytes;
  state.counters["n"] = n;
}

struct state_t {
  std::vector<particle> host = strata_bench::records<particle>(std::size_t(count()), 99);
  strata::soa_vector<particle> pristine{host}, work{host};
  strata::buffer keys0{std::size_t(count()) * 4, strata::memory_space::device}, keys{std::size_t(count()) * 4, strata::memory_space::device};
  state_t() {
    std::mt19937 g(5);
    std::vector<u32> k(static_cast<std::size_t>(count()));
    for (auto& x : k) x = g() & ((1u << 18) - 1);
    strata::copy_bytes(keys0.data(), k.data(), keys0.bytes());
  }
  /// Back to the pristine records, all count() of them. The size comes first: growing a container
  /// zeroes the records past its old size, which would overwrite what the copies restored.
  void restore() {
    work.resize(std::size_t(count()));
    for (std::size_t i = 0; i < 7; ++i)
      strata::copy_bytes_async(work.view().column_bytes(i), pristine.view().column_bytes(i), pristine.size() * 4, strata::stream_t{});
    strata::copy_bytes_async(keys.data(), keys0.data(), keys.bytes(), strata::stream_t{});
  }
  u32* k() { return reinterpret_cast<u32*>(keys.data()); }
  auto zip() {
    auto c = [&](std::size_t i) { return thrust::device_pointer_cast(reinterpret_cast<float*>(work.view().column_bytes(i))); };
    return thrust::make_zip_iterator(c(0), c(1), c(2), c(3), c(4), c(5), c(6));
  }
};
state_t& st() {
  static state_t s;
  return s;
}

void strata_sort(benchmark::State& state) {
  auto& s = st();
  const double n = double(count());
  timed_from(state, n * 2 * (28 + 4), n, [&] { s.restore(); },
             [&] { strata::sort_by_key(s.work, cuda::std::span<u32>(s.k(), std::size_t(count())), strata::stream_t{}, 0, 18); });
}
void zip_sort(benchmark::State& state) {
  auto& s = st();
  const double n = double(count());
  timed_from(state, n * 2 * (28 + 4), n, [&] { s.restore(); },
             [&] { thrust::sort_by_key(thrust::device, thrust::device_pointer_cast(s.k()), thrust::device_pointer_cast(s.k()) + count(), s.zip()); });
}

struct negative_mass {  // random fp32 in [-1, 1]: about half
  STRATA_HD bool operator()(const particle& p) const { return p.mass < 0; }
};
struct negative_mass_tuple {
  template <class Tuple>
  STRATA_HD bool operator()(const Tuple& t) const {
    return thrust::get<6>(t) < 0;
  }
};
double kept_fraction() {
  auto& h = st().host;
  return double(std::count_if(h.begin(), h.end(), [](const particle& p) { return p.mass >= 0; })) / double(h.size());
}
void strata_erase(benchmark::State& state) {
  auto& s = st();
  const double n = double(count());
  timed_from(state, n * 28 * (1 + kept_fraction()), n, [&] { s.restore(); },
             [&] { (void)strata::erase_if(s.work, negative_mass{}); });
}
/// The same compaction writing every kept record with one store per leaf (no shared-memory staging).
void strata_erase_scalar_stores(benchmark::State& state) {
  strata::detail::compact_staged = false;
  strata_erase(state);
  strata::detail::compact_staged = true;
}
void zip_erase(benchmark::State& state) {
  auto& s = st();
  const double n = double(count());
  timed_from(state, n * 28 * (1 + kept_fraction()), n, [&] { s.restore(); },
             [&] { thrust::remove_if(thrust::device, s.zip(), s.zip() + count(), negative_mass_tuple{}); });
}

/// The demo's cell (64^3 grid over [-2, 2)^3) and kick-drift step.
struct cell_of {
  STRATA_HD int operator()(const particle& q) const {
    auto c = [](float v) { int i = int((v + 2.0f) * 16.0f); return i < 0 ? 0 : i > 63 ? 63 : i; };
    return (c(q.z) * 64 + c(q.y)) * 64 + c(q.x);
  }
};
struct slow_down {
  STRATA_HD void operator()(particle& q) const { q.vx *= 0.1f, q.vy *= 0.1f, q.vz *= 0.1f; }
};
struct kick_drift {
  STRATA_HD void operator()(particle& q) const {
    q.vx -= q.x * 1e-3f, q.vy -= q.y * 1e-3f, q.vz -= q.z * 1e-3f;
    q.x += q.vx * 1e-3f, q.y += q.vy * 1e-3f, q.z += q.vz * 1e-3f;
  }
};
template <class V>
struct cell_at {
  V view;
  STRATA_HD int operator()(std::int32_t i) const { return cell_of{}(view.load(i)); }
};

/// The permutation that sorting by cell gives after 50 kick-drift steps of the demo's particles,
/// starting from particles sorted by cell (mostly short moves, some far), or a random one.
std::vector<std::int32_t> make_permutation(bool random) {
  const std::size_t n = std::size_t(count());
  std::vector<std::int32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  if (random) {
    std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
    return perm;
  }
  strata::soa_vector<particle> v(st().host);
  strata::for_each(v, slow_down{});
  strata::sort_by(v, cell_of{});
  for (int s = 0; s < 50; ++s) strata::for_each(v, kick_drift{});
  thrust::device_vector<std::int32_t> idx(n);
  thrust::device_vector<int> keys(n);
  thrust::sequence(idx.begin(), idx.end());
  thrust::transform(idx.begin(), idx.end(), keys.begin(), cell_at<strata::soa_view<const particle>>{v.const_view()});
  thrust::stable_sort_by_key(keys.begin(), keys.end(), idx.begin());
  thrust::copy(idx.begin(), idx.end(), perm.begin());
  return perm;
}
strata::buffer& permutation(bool random) {
  static strata::buffer b[2];
  auto& r = b[random];
  if (!r.data()) {
    auto p = make_permutation(random);
    r = strata::buffer(p.size() * 4, strata::memory_space::device);
    strata::copy_bytes(r.data(), p.data(), r.bytes());
  }
  return r;
}
void strata_permute(benchmark::State& state, bool random) {
  auto& s = st();
  auto* perm = reinterpret_cast<const std::int32_t*>(permutation(random).data());
  const double n = double(count());
  s.work.resize(std::size_t(count()));
  strata_bench::run_timed(state, n * 2 * 28, n, [&] { strata::permute(s.work, cuda::std::span<const std::int32_t>(perm, std::size_t(count()))); });
}
/// strata::permute through a spare container: one gather into the spare's storage, then the two
/// trade places. As in place, each run permutes the records the run before left.
void strata_permute_spare(benchmark::State& state, bool random) {
  auto& s = st();
  auto* perm = reinterpret_cast<const std::int32_t*>(permutation(random).data());
  static strata::soa_vector<particle> spare;
  const double n = double(count());
  s.work.resize(std::size_t(count()));
  strata_bench::run_timed(state, n * 2 * 28, n,
                          [&] { strata::permute(s.work, cuda::std::span<const std::int32_t>(perm, std::size_t(count())), spare); });
}
/// Fraction of the permutation's indices that jump more than 8 records from the one before (the
/// fraction strata::gather estimates from a sample to choose its way, for 4-byte leaves).
double far_fraction(bool random) {
  static double f[2] = {-1, -1};
  if (f[random] < 0) {
    const std::size_t n = std::size_t(count());
    std::vector<std::int32_t> p(n);
    strata::copy_bytes(p.data(), permutation(random).data(), n * 4);
    std::size_t far = 1;
    for (std::size_t i = 1; i < n; ++i) far += std::abs(std::int64_t(p[i]) - std::int64_t(p[i - 1])) > 8;
    f[random] = double(far) / double(n);
  }
  return f[random];
}
strata::buffer& identity_permutation() {
  static strata::buffer b;
  if (!b.data()) {
    std::vector<std::int32_t> p(static_cast<std::size_t>(count()));
    std::iota(p.begin(), p.end(), 0);
    b = strata::buffer(p.size() * 4, strata::memory_space::device);
    strata::copy_bytes(b.data(), p.data(), b.bytes());
  }
  return b;
}
/// strata::gather of the pristine particles into a second container (the double-buffered form of
/// a permutation), by the way its count picks or by one way forced.
void strata_gather(benchmark::State& state, int kind, strata::detail::gather_way way) {  // kind 0 resort, 1 random, 2 identity
  auto& s = st();
  const bool random = kind == 1;
  auto* perm = reinterpret_cast<const std::int32_t*>((kind == 2 ? identity_permutation() : permutation(random)).data());
  static strata::soa_vector<particle> out(static_cast<std::size_t>(count()));
  const double n = double(count());
  strata::detail::gather_forced = way;
  strata_bench::run_timed(state, n * 2 * 28, n, [&] {
    strata::gather(s.pristine, cuda::std::span<const std::int32_t>(perm, std::size_t(count())), out);
  });
  strata::detail::gather_forced = strata::detail::gather_way::count;
  state.counters["far_fraction"] = kind == 2 ? 1.0 / double(count()) : far_fraction(random);
}
void gather_permute(benchmark::State& state, bool random) {
  auto& s = st();
  auto perm = thrust::device_pointer_cast(reinterpret_cast<const std::int32_t*>(permutation(random).data()));
  static strata::soa_vector<particle> out(static_cast<std::size_t>(count()));
  const double n = double(count());
  strata_bench::run_timed(state, n * 2 * 28, n, [&] {
    for (std::size_t i = 0; i < 7; ++i) {
      auto src = thrust::device_pointer_cast(reinterpret_cast<const float*>(s.pristine.view().column_bytes(i)));
      auto dst = thrust::device_pointer_cast(reinterpret_cast<float*>(out.view().column_bytes(i)));
      thrust::gather(thrust::device, perm, perm + count(), src, dst);
    }
  });
}

const bool registered = [] {
  const std::string n = std::string("/").append(std::to_string(count())).append("/particle");
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("sort_by_key/strata").append(n).c_str(), strata_sort))->Iterations(5);
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("sort_by_key/thrust_zip").append(n).c_str(), zip_sort))->Iterations(5);
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("erase_if/strata").append(n).c_str(), strata_erase))->Iterations(10);
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("erase_if/thrust_zip").append(n).c_str(), zip_erase))->Iterations(10);
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("erase_if/strata_scalar_stores").append(n).c_str(), strata_erase_scalar_stores))
      ->Iterations(10);
  for (bool random : {false, true}) {
    const std::string r = std::string("/").append(std::to_string(count())).append(random ? "/random" : "/resort");
    strata_bench::configure(benchmark::RegisterBenchmark(std::string("permute/strata").append(r).c_str(),
                                                         [=](benchmark::State& s) { strata_permute(s, random); }))->Iterations(10);
    strata_bench::configure(benchmark::RegisterBenchmark(std::string("permute/strata_spare").append(r).c_str(),
                                                         [=](benchmark::State& s) { strata_permute_spare(s, random); }))->Iterations(10);
    strata_bench::configure(benchmark::RegisterBenchmark(std::string("permute/column_gather").append(r).c_str(),
                                                         [=](benchmark::State& s) { gather_permute(s, random); }))->Iterations(10);
    using way = strata::detail::gather_way;
    for (auto [name, w] : {std::pair{"gather/strata", way::count}, std::pair{"gather/strata_columns", way::columns},
                           std::pair{"gather/strata_records", way::records}})
      strata_bench::configure(benchmark::RegisterBenchmark(std::string(name).append(r).c_str(),
                                                           [=](benchmark::State& s) { strata_gather(s, random ? 1 : 0, w); }))->Iterations(10);
  }
  using way = strata::detail::gather_way;
  const std::string id = std::string("/").append(std::to_string(count())).append("/identity");
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("gather/strata").append(id).c_str(),
                                                       [](benchmark::State& s) { strata_gather(s, 2, way::count); }))->Iterations(10);
  strata_bench::configure(benchmark::RegisterBenchmark(std::string("gather/strata_records").append(id).c_str(),
                                                       [](benchmark::State& s) { strata_gather(s, 2, way::records); }))->Iterations(10);
  return true;
}();

}  // namespace
