// SPDX-License-Identifier: Apache-2.0
// Reductions: columns (aligned and unaligned spans), records through packets and records one by
// one, column statistics; against double-precision host references, every size.
#include <strata/algorithm/reduce.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/foreign.hpp"
#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

using namespace strata_test;

TEST(Reduce, ColumnSumMinAndByteMaxEverySizeAndOffset) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<mixed>()) {
    auto ref = random_records<mixed>(n);
    strata::soa_vector<mixed> v(ref);
    for (std::size_t skip : {0, 1, 2, 3}) {  // subspans that start off a 16-byte boundary
      if (skip > n) continue;
      SCOPED_TRACE("n=" + std::to_string(n) + " skip=" + std::to_string(skip));
      auto x = v.column<&mixed::x>().subspan(skip);
      float sum = strata::reduce(x, 0.5f, plus_f{});
      float mn = strata::reduce(x, std::numeric_limits<float>::infinity(), min_f{});
      auto flags = v.column<&mixed::flags>().subspan(skip);
      std::uint8_t mx = strata::reduce(flags, std::uint8_t(0), max_u8{});
      double want = 0.5;
      float want_min = std::numeric_limits<float>::infinity();
      std::uint8_t want_max = 0;
      for (std::size_t i = skip; i < n; ++i) {
        want += ref[i].x;
        want_min = std::min(want_min, ref[i].x);
        want_max = std::max(want_max, ref[i].flags);
      }
      EXPECT_NEAR(sum, want, 1e-5 * (1 + std::sqrt(double(n))) + 1e-6 * std::abs(want));
      EXPECT_EQ(mn, want_min);
      EXPECT_EQ(mx, want_max);
    }
  }
}

TEST(Reduce, KineticEnergyThroughPacketsProjectionsAndRecords) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    // Padding lanes hold large values: a reduction that counted them would be far off.
    strata::soa_vector<particle> v(std::vector<particle>(n + 3, particle{1e3f, 1e3f, 1e3f, 1e3f, 1e3f, 1e3f, 1e3f}));
    v.resize(n);
    strata::transform(strata::soa_vector<particle>(ref), v, identity_particle{});
    double want = 0;
    for (auto& p : ref) want += kinetic_energy{}(p);
    double tol = 1e-9 * (1 + std::abs(want));
    EXPECT_NEAR(strata::transform_reduce(v, kinetic_energy{}, 0.0, plus_d{}), want, tol);
    auto proj = strata::project<&particle::vx, &particle::vy, &particle::vz, &particle::mass>(v);
    EXPECT_NEAR(strata::transform_reduce(proj, kinetic_energy{}, 0.0, plus_d{}), want, tol);
    auto c = [&](auto col) { return cuda::std::span<const float>(col.data(), n); };
    auto element = strata::make_soa_view<particle>(strata::index_t(n), strata::alignment::element, c(v.column<0>()),
                                                   c(v.column<1>()), c(v.column<2>()), c(v.column<3>()),
                                                   c(v.column<4>()), c(v.column<5>()), c(v.column<6>()));
    EXPECT_NEAR(strata::transform_reduce(element, kinetic_energy{}, 0.0, plus_d{}), want, tol);
  }
}

namespace {
struct mixed_terms {
  STRATA_HD double operator()(const mixed& m) const { return m.energy + m.x + double(m.cell) + double(m.flags); }
};
struct byte_terms {
  STRATA_HD long long operator()(const three_bytes& t) const { return (long long)t.r + t.g + t.b; }
};
struct plus_ll {
  STRATA_HD long long operator()(long long a, long long b) const { return a + b; }
};
struct same {
  template <class R>
  STRATA_HD R operator()(const R& r) const {
    return r;
  }
};
}  // namespace

// Records with 1-byte leaves travel in packets of 16: whole packets fold every lane, the last partial
// one only its records, whose padding lanes hold values that would show in the sum.
TEST(Reduce, WidePacketsOfNarrowLeavesEverySize) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<mixed>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n);
    strata::soa_vector<mixed> v(std::vector<mixed>(n + 15, mixed{1e9, 1e9f, 60000, 200}));
    v.resize(n);
    strata::transform(strata::soa_vector<mixed>(ref), v, same{});
    double want = 0.25;
    for (const auto& m : ref) want += mixed_terms{}(m);
    EXPECT_NEAR(strata::transform_reduce(v, mixed_terms{}, 0.25, plus_d{}), want, 1e-9 * (1 + std::abs(want)));

    auto bytes = random_records<three_bytes>(n);
    strata::soa_vector<three_bytes> b(std::vector<three_bytes>(n + 15, three_bytes{100, 100, 100}));
    b.resize(n);
    strata::transform(strata::soa_vector<three_bytes>(bytes), b, same{});
    long long exact = 7;
    for (const auto& t : bytes) exact += byte_terms{}(t);
    EXPECT_EQ(strata::transform_reduce(b, byte_terms{}, 7LL, plus_ll{}), exact);
  }
}

TEST(Statistics, MatchesTwoPassReferenceAndStaysStable) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    for (auto& p : ref) p.mass = 1.0e4f + p.mass;  // a large offset: sum-of-squares would lose it
    strata::soa_vector<particle> v(ref);
    auto s = strata::statistics(v.column<&particle::mass>());
    double mean = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
    for (auto& p : ref) mean += p.mass, mn = std::min(mn, double(p.mass)), mx = std::max(mx, double(p.mass));
    mean = n ? mean / double(n) : 0;
    for (auto& p : ref) m2 += (p.mass - mean) * (p.mass - mean);
    EXPECT_EQ(s.count, double(n));
    if (n == 0) continue;
    EXPECT_NEAR(s.mean, mean, 1e-9 * std::abs(mean));
    EXPECT_NEAR(s.variance(), m2 / double(n), 1e-9 + 1e-6 * m2 / double(n));
    EXPECT_EQ(s.min, mn);
    EXPECT_EQ(s.max, mx);
    EXPECT_NEAR(s.sum(), mean * double(n), 1e-9 * std::abs(mean * double(n)));
  }
}

// A foreign view's reduction reads its n records only: the caller's elements past them hold huge
// values that would dominate any sum that counted them.
TEST(Reduce, ForeignViewsReadOnlyTheirRecords) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>())
    for (std::size_t shift : {0, 1}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " shift=" + std::to_string(shift));
      auto ref = random_records<particle>(n);
      foreign_columns<particle> cols(n, 9, shift);
      cols.upload(ref);
      cols.fill_slack(1e30f);
      double want = 0;
      for (auto& p : ref) want += kinetic_energy{}(p);
      const auto a = shift ? strata::alignment::element : strata::alignment::vector;
      EXPECT_NEAR(strata::transform_reduce(cols.view(a), kinetic_energy{}, 0.0, plus_d{}), want, 1e-9 * (1 + std::abs(want)));
      EXPECT_EQ(cols.damage(), "");
    }
}

// Reductions on different streams share no scratch memory: two threads, each with two streams,
// reduce different data at the same time, many rounds, and every result is exact (small integers
// in doubles).
TEST(Reduce, ConcurrentStreamsAndThreadsGetTheirOwnResults) {
#if defined(STRATA_BACKEND_CUDA)
  constexpr int threads = 2, streams = 2;
  const int rounds = under_sanitizer() ? 5 : 100;
  const std::size_t n = under_sanitizer() ? 20000 : 1 << 20;
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<strata::soa_vector<particle>> data;
      std::vector<double> want;
      for (int s = 0; s < streams; ++s) {
        const float m = float(1 + t * streams + s);
        data.emplace_back(n, particle{0, 0, 0, 1, 0, 0, m});  // kinetic energy 0.5 * m each
        want.push_back(0.5 * m * double(n));
      }
      cudaStream_t st[streams];
      for (auto& x : st) ASSERT_EQ(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), cudaSuccess);
      strata::buffer out(streams * sizeof(double), strata::memory_space::device);
      auto* res = reinterpret_cast<double*>(out.data());
      for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < streams; ++s) strata::transform_reduce_async(data[s], kinetic_energy{}, 0.0, plus_d{}, res + s, st[s]);
        double got[streams];
        for (auto& x : st) ASSERT_EQ(cudaStreamSynchronize(x), cudaSuccess);
        strata::copy_bytes(got, res, sizeof got);
        for (int s = 0; s < streams; ++s) wrong += got[s] != want[s];
        // The synchronous form on the same streams, from both threads at once.
        for (int s = 0; s < streams; ++s) wrong += strata::transform_reduce(data[s], kinetic_energy{}, 0.0, plus_d{}, st[s]) != want[s];
      }
      for (auto& x : st) ASSERT_EQ(cudaStreamDestroy(x), cudaSuccess);
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0);
#else
  GTEST_SKIP() << "the host backend has no streams (operations complete before returning)";
#endif
}

// After warm-up, reductions take their scratch from the pool without growing it (no cudaMalloc on
// the hot path), and results that need more than 256 bytes of accumulator are right.
struct wide_sum {
  double v[40];
};
struct wide_of {
  STRATA_HD wide_sum operator()(const particle& p) const {
    wide_sum w{};
    for (int k = 0; k < 40; ++k) w.v[k] = double(p.mass) * (k + 1);
    return w;
  }
};
struct wide_plus {
  STRATA_HD wide_sum operator()(const wide_sum& a, const wide_sum& b) const {
    wide_sum w;
    for (int k = 0; k < 40; ++k) w.v[k] = a.v[k] + b.v[k];
    return w;
  }
};
TEST(Reduce, ScratchComesFromThePoolAndFitsAnyAccumulator) {
  STRATA_SEED_TRACE();
  strata::soa_vector<particle> v(100000, particle{0, 0, 0, 0, 0, 0, 0.5f});
  const wide_sum w = strata::transform_reduce(v, wide_of{}, wide_sum{}, wide_plus{});
  for (int k = 0; k < 40; ++k) EXPECT_EQ(w.v[k], 0.5 * (k + 1) * 100000.0) << k;
  const long grown = strata::testing::scratch_pool_growths.load(), allocated = strata::testing::allocation_ordinal.load();
  for (int i = 0; i < 50; ++i) (void)strata::transform_reduce(v, kinetic_energy{}, 0.0, plus_d{});
  EXPECT_EQ(strata::testing::scratch_pool_growths.load(), grown);
#if defined(STRATA_BACKEND_CUDA)
  EXPECT_EQ(strata::testing::allocation_ordinal.load() - allocated, 100) << "two scratch blocks per call, no other allocation";
#else
  EXPECT_EQ(strata::testing::allocation_ordinal.load() - allocated, 0) << "the host backend reduces without scratch";
#endif
}

// The accumulator is the initial value's type, as in CUB: a float column summed from 0.0 adds in
// double (a float accumulator drifts by ~1e-7 of the total per addition), through the column path
// (aligned body, unaligned head and tail) and the record paths alike.
struct plus_any {
  template <class A>
  STRATA_HD A operator()(A a, A b) const {
    return a + b;
  }
};
struct mass_of {
  STRATA_HD float operator()(const particle& p) const { return p.mass; }
};
TEST(Reduce, FloatColumnsSumInTheInitialValuesType) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(99991), std::size_t(1000000)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    for (std::size_t i = 0; i < n; ++i) ref[i].mass = 1.0f + float(i % 1000) / 1024.0f + 1e3f * float(i % 3 == 0);
    strata::soa_vector<particle> v(ref);
    for (std::size_t skip : {0, 1}) {
      if (skip > n) continue;
      long double want = 0.25L;
      for (std::size_t i = skip; i < n; ++i) want += ref[i].mass;
      auto col = v.column<&particle::mass>().subspan(skip);
      const auto sum = strata::reduce(col, 0.25, plus_any{});
      static_assert(std::is_same_v<decltype(sum), const double>);
      EXPECT_LE(std::abs((long double)sum - want), 1e-12L * want) << "column, skip " << skip;
    }
    long double want = 0.25L;
    for (const auto& p : ref) want += p.mass;
    const auto records = strata::transform_reduce(v, mass_of{}, 0.25, plus_any{});
    static_assert(std::is_same_v<decltype(records), const double>);
    EXPECT_LE(std::abs((long double)records - want), 1e-12L * want) << "records";
    // A float accumulator is what the caller asks for with a float initial value.
    const auto f = strata::reduce(v.column<&particle::mass>(), 0.25f, plus_any{});
    static_assert(std::is_same_v<decltype(f), const float>);
    EXPECT_LE(std::abs((long double)f - want), 1e-4L * want + 1) << "float";
  }
}
