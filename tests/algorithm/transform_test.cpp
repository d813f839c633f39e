// SPDX-License-Identifier: Apache-2.0
// strata::transform / for_each: the vectorized path on containers and projections, the scalar
// path on views that cannot take vector access, each against a plain loop, every size.
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/foreign.hpp"
#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

using namespace strata_test;

template <class T, class C>
std::vector<T> host_of(const C& v) {
  auto out = poisoned<T>(v.size());
  v.copy_to_host(std::span<T>(out));
  return out;
}

template <class T, class F>
void check_transform(F f, strata::path want) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    strata::soa_vector<T> in(ref), out(poisoned<T>(n));
    EXPECT_EQ(strata::transform(in, out, f), want);
    strata::synchronize(strata::stream_t{});
    std::vector<T> expect(n);
    std::transform(ref.begin(), ref.end(), expect.begin(), f);
    auto got_out = host_of<T>(out), got_in = host_of<T>(in);
    ASSERT_EQ(first_difference<T>(got_in, ref), -1) << "input changed: " << describe_difference<T>(got_in, ref);
    ASSERT_EQ(first_difference<T>(got_out, expect), -1) << describe_difference<T>(got_out, expect);
  }
}

TEST(Transform, VectorizedOnContainers) {
  check_transform<particle>(drift{}, strata::path::vectorized);
  check_transform<mixed>(bump_mixed{}, strata::path::vectorized);
}

TEST(Transform, VectorTypeMembersOpenIntoVectorizedLeaves) {
  check_transform<mixed_convert>(move_convert{}, strata::path::vectorized);
}

struct scale_vel {
  STRATA_HD void operator()(nested_particle& p) const {
    p.vel.x = 99.0f;
    p.vel.y *= 2.0f;
  }
};

TEST(Transform, NestedRecordsRunAsPackets) {
  check_transform<nested_particle>(drift_nested{}, strata::path::vectorized);
  check_transform<cell_record>(bump_cell{}, strata::path::vectorized);
}

// Projections name a whole sub-struct (all its leaves) or one leaf below the record's fields.
TEST(Transform, NestedProjectionsTouchOnlyTheirLeaves) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<nested_particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<nested_particle>(n);
    strata::soa_vector<nested_particle> v(ref);
    // pos += 0.5 vel through the sub-structs, written back to pos only (vel projected in, not out).
    EXPECT_EQ(strata::transform(strata::project<&nested_particle::pos, &nested_particle::vel>(v), strata::project<&nested_particle::pos>(v),
                                drift_nested{}),
              strata::path::vectorized);
    // vel.y alone, through a member path (the functor also writes vel.x, which is not projected).
    EXPECT_EQ(strata::for_each(strata::project<strata::member<&nested_particle::vel, &vec3::y>>(v), scale_vel{}),
              strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    for (auto& p : ref) {
      p = drift_nested{}(p);
      p.vel.y *= 2.0f;
    }
    ASSERT_EQ(first_difference<nested_particle>(host_of<nested_particle>(v), ref), -1)
        << describe_difference<nested_particle>(host_of<nested_particle>(v), ref);
    if (n == 0) continue;
    // Proxies: one leaf by member path, a whole sub-struct by value.
    strata::host_soa_vector<nested_particle> h(ref);
    auto r = h.view()[n - 1];
    EXPECT_EQ((strata::get<strata::member<&nested_particle::vel, &vec3::z>>(r)), ref[n - 1].vel.z);
    const vec3 pos = strata::get<&nested_particle::pos>(r);
    EXPECT_EQ(pos.x, ref[n - 1].pos.x);
    EXPECT_EQ(pos.z, ref[n - 1].pos.z);
    strata::get<strata::member<&nested_particle::pos, &vec3::y>>(r) = 42.0f;
    EXPECT_EQ(h.to_host()[n - 1].pos.y, 42.0f);
  }
}

TEST(Transform, ScalarForRecordsWithUnvectorizableLeaves) {
  check_transform<with_opaque>(bump_opaque{}, strata::path::scalar);
}

TEST(Transform, ScalarFallbackOnElementAlignedViewsGivesTheSameResult) {
  STRATA_SEED_TRACE();
  const std::size_t n = 99991;
  auto ref = random_records<particle>(n);
  strata::soa_vector<particle> v(ref);
  // A view whose mass column starts one element late: legal for records, not for 16-byte vectors.
  strata::soa_vector<particle> shifted_mass(n + 1);
  auto c = [&](auto col) { return cuda::std::span<float>(col.data(), n); };
  auto view = strata::make_soa_view<particle>(strata::index_t(n), strata::alignment::element, c(v.column<0>()), c(v.column<1>()),
                                              c(v.column<2>()), c(v.column<3>()), c(v.column<4>()), c(v.column<5>()),
                                              cuda::std::span<float>(shifted_mass.column<6>().data() + 1, n));
  EXPECT_EQ(strata::transform(v, view, drift{}), strata::path::scalar);
  strata::synchronize(strata::stream_t{});
  auto x = fetch(v.column<0>().data(), n);
  auto m = fetch(shifted_mass.column<6>().data() + 1, n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(x[i], drift{}(ref[i]).x) << i;
    ASSERT_EQ(m[i], ref[i].mass) << i;
  }
}

TEST(Transform, ProjectionsReadAndWriteOnlyTheirColumns) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> v(ref);
    auto in = strata::project<&particle::x, &particle::vx>(v);
    auto out = strata::project<&particle::x>(v);
    EXPECT_EQ(strata::transform(in, out, add_vx_to_x{}), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    for (auto& p : ref) p.x += p.vx;  // y is written by the functor but not projected
    ASSERT_EQ(first_difference<particle>(host_of<particle>(v), ref), -1);
  }
}

TEST(Transform, SizeMismatchThrows) {
  strata::soa_vector<particle> a(10), b(11);
  EXPECT_THROW(strata::transform(a, b, drift{}), strata::size_error);
}

TEST(ForEach, KickEveryRecordBothPaths) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> v(ref);
    EXPECT_EQ(strata::for_each(v, kick{}), strata::path::vectorized);
    EXPECT_EQ(strata::for_each(strata::project<&particle::x, &particle::vx>(v), kick{}), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    for (auto& p : ref) {
      kick{}(p);
      p.vx -= p.x * 0.125f;  // the projection kicked vx once more (y, z not projected)
    }
    ASSERT_EQ(first_difference<particle>(host_of<particle>(v), ref), -1);
  }
}

// Views over a caller's columns (a tensor from a caching allocator, say): every writing path leaves
// every byte past size() as it was, whatever the size, the caller's slack past it, or the
// alignment; results equal a plain loop.
TEST(Transform, ForeignViewsNeverTouchMemoryPastTheirSize) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>())
    for (std::size_t slack : {0, 14})
      for (std::size_t shift : {0, 1}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " slack=" + std::to_string(slack) + " shift=" + std::to_string(shift));
        const auto a = shift ? strata::alignment::element : strata::alignment::vector;
        const auto want_path = shift ? strata::path::scalar : strata::path::vectorized;
        auto ref = random_records<particle>(n);
        foreign_columns<particle> in(n, slack, shift), out(n, slack, shift);
        in.upload(ref);
        EXPECT_EQ(strata::transform(in.view(a), out.view(a), drift{}), want_path);
        strata::synchronize(strata::stream_t{});
        std::vector<particle> want(n);
        std::transform(ref.begin(), ref.end(), want.begin(), drift{});
        ASSERT_EQ(first_difference<particle>(out.download(), want), -1) << describe_difference<particle>(out.download(), want);
        EXPECT_EQ(in.damage(), "");
        EXPECT_EQ(out.damage(), "");

        // In place, for_each, and projections of the caller's columns.
        auto v = in.view(a);
        EXPECT_EQ(strata::transform(v, v, drift{}), want_path);
        EXPECT_EQ(strata::for_each(v, kick{}), want_path);
        EXPECT_EQ(strata::transform(strata::project<&particle::x, &particle::vx>(v), strata::project<&particle::x>(v), add_vx_to_x{}),
                  want_path);
        EXPECT_EQ(strata::for_each(strata::project<&particle::y, &particle::vy>(v), kick{}), want_path);
        strata::synchronize(strata::stream_t{});
        for (auto& p : ref) {
          p = drift{}(p);
          kick{}(p);
          p.x += p.vx;
          p.vy -= p.y * 0.125f;
        }
        ASSERT_EQ(first_difference<particle>(in.download(), ref), -1) << describe_difference<particle>(in.download(), ref);
        EXPECT_EQ(in.damage(), "");
      }
}

// Device algorithms given records in pageable host memory refuse before launching anything, with
// an error that names the operand and its space; the process's later CUDA work is unaffected. On
// the host backend, host memory is the "device" memory and the same calls run.
TEST(Transform, HostMemoryReachesNoDeviceKernel) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(1000);
  strata::host_soa_vector<particle> h(ref);
  strata::soa_vector<particle> d(ref);
#if defined(STRATA_BACKEND_CUDA)
  // The message names the operand: its records' type, or a column's element type.
  auto expect_refused = [](auto&& call, const char* what, const char* named) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const strata::memory_space_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("host memory"), std::string::npos) << m;
      EXPECT_NE(m.find(named), std::string::npos) << m;
    }
  };
  expect_refused([&] { strata::transform(h, h, drift{}); }, "transform", "1000 records of strata_fixtures::particle");
  expect_refused([&] { strata::transform(d, h, drift{}); }, "transform to host", "the output");
  expect_refused([&] { strata::transform(h, d, drift{}); }, "transform from host", "the input");
  expect_refused([&] { strata::for_each(h, kick{}); }, "for_each", "particle");
  expect_refused([&] { (void)strata::transform_reduce(h, kinetic_energy{}, 0.0, plus_d{}); }, "transform_reduce", "particle");
  expect_refused([&] { (void)strata::reduce(h.column<&particle::mass>(), 0.0f, plus_f{}); }, "reduce", "1000 elements of float");
  expect_refused([&] { (void)strata::statistics(h.column<&particle::mass>()); }, "statistics", "1000 elements of float");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(strata::transform(d, d, drift{}), strata::path::vectorized);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<particle> want(ref.size());
  std::transform(ref.begin(), ref.end(), want.begin(), drift{});
  EXPECT_EQ(first_difference<particle>(d.to_host(), want), -1);
  EXPECT_EQ(first_difference<particle>(h.to_host(), ref), -1) << "the host container was written";
#else
  EXPECT_EQ(strata::transform(h, d, drift{}), strata::path::vectorized);
  std::vector<particle> want(ref.size());
  std::transform(ref.begin(), ref.end(), want.begin(), drift{});
  EXPECT_EQ(first_difference<particle>(d.to_host(), want), -1);
#endif
}

// Below detail::direct_launch_limit strata launches its own kernel, above it Thrust/CUB's: both
// give the plain loop's result, on containers and on foreign views with a partial last packet.
TEST(Transform, DirectAndThrustLaunchesAgree) {
  STRATA_SEED_TRACE();
  const strata::index_t saved = strata::detail::direct_launch_limit;
  for (strata::index_t limit : {strata::index_t(0), saved}) {
    strata::detail::direct_launch_limit = limit;
    for (std::size_t n : {std::size_t(1), std::size_t(4097), std::size_t(99991)}) {
      SCOPED_TRACE("limit=" + std::to_string(limit) + " n=" + std::to_string(n));
      auto ref = random_records<particle>(n);
      strata::soa_vector<particle> v(ref);
      foreign_columns<particle> f(n, 3);
      f.upload(ref);
      EXPECT_EQ(strata::transform(v, v, drift{}), strata::path::vectorized);
      EXPECT_EQ(strata::for_each(v, kick{}), strata::path::vectorized);
      EXPECT_EQ(strata::transform(f.view(), f.view(), drift{}), strata::path::vectorized);
      EXPECT_EQ(strata::for_each(f.view(), kick{}), strata::path::vectorized);
      strata::synchronize(strata::stream_t{});
      for (auto& p : ref) p = drift{}(p), kick{}(p);
      EXPECT_EQ(first_difference<particle>(host_of<particle>(v), ref), -1);
      EXPECT_EQ(first_difference<particle>(f.download(), ref), -1);
      EXPECT_EQ(f.damage(), "");
    }
  }
  strata::detail::direct_launch_limit = saved;
}

struct add_b_to_a {
  STRATA_HD void operator()(two_floats& r) const { r.a += r.b; }
};

// aos_vector / aos_view operands: records one by one, each AoS record moved whole (two 16-byte
// accesses for a particle padded to 32 bytes, so the path is vectorized); AoS beside SoA runs
// record by record (scalar). transform_reduce reads AoS records whole too.
TEST(Transform, AosContainersAndViewsRunRecordByRecord) {
  STRATA_SEED_TRACE();
  static_assert(strata::layout::record_descriptor<particle>::access_bytes == 16);
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::aos_vector<particle> a(ref), b(poisoned<particle>(n));
    strata::soa_vector<particle> s(poisoned<particle>(n));
    EXPECT_EQ(strata::transform(a, b, drift{}), strata::path::vectorized);
    EXPECT_EQ(strata::transform(a.view(), s, drift{}), strata::path::scalar);
    strata::synchronize(strata::stream_t{});
    std::vector<particle> want(n);
    std::transform(ref.begin(), ref.end(), want.begin(), drift{});
    ASSERT_EQ(first_difference<particle>(b.to_host(), want), -1) << describe_difference<particle>(b.to_host(), want);
    ASSERT_EQ(first_difference<particle>(s.to_host(), want), -1) << describe_difference<particle>(s.to_host(), want);
    ASSERT_EQ(first_difference<particle>(a.to_host(), ref), -1) << "input changed";

    EXPECT_EQ(strata::transform(s, a, drift{}), strata::path::scalar);  // SoA in, AoS out
    EXPECT_EQ(strata::for_each(b, kick{}), strata::path::vectorized);
    EXPECT_EQ(strata::for_each(b.view(), kick{}), strata::path::vectorized);
    strata::synchronize(strata::stream_t{});
    std::vector<particle> twice(n), kicked(want);
    std::transform(want.begin(), want.end(), twice.begin(), drift{});
    for (auto& p : kicked) kick{}(p), kick{}(p);
    ASSERT_EQ(first_difference<particle>(a.to_host(), twice), -1) << describe_difference<particle>(a.to_host(), twice);
    ASSERT_EQ(first_difference<particle>(b.to_host(), kicked), -1) << describe_difference<particle>(b.to_host(), kicked);

    double energy = 0;
    for (const auto& p : kicked) energy += kinetic_energy{}(p);
    EXPECT_NEAR(strata::transform_reduce(b, kinetic_energy{}, 0.0, plus_d{}), energy, 1e-9 * (1 + std::abs(energy)));
  }
  // Through Thrust (above the direct-launch limit) as through strata's own kernel.
  const strata::index_t saved = strata::detail::direct_launch_limit;
  strata::detail::direct_launch_limit = 0;
  auto ref = random_records<particle>(4099);
  strata::aos_vector<particle> a(ref), b(poisoned<particle>(ref.size()));
  EXPECT_EQ(strata::transform(a, b, drift{}), strata::path::vectorized);
  EXPECT_EQ(strata::for_each(b, kick{}), strata::path::vectorized);
  strata::detail::direct_launch_limit = saved;
  strata::synchronize(strata::stream_t{});
  for (auto& r : ref) r = drift{}(r), kick{}(r);
  EXPECT_EQ(first_difference<particle>(b.to_host(), ref), -1) << describe_difference<particle>(b.to_host(), ref);

  // Records under 16 bytes move as one narrower access each: the record path.
  auto pairs = random_records<two_floats>(37);
  strata::aos_vector<two_floats> p(pairs);
  EXPECT_EQ(strata::for_each(p, add_b_to_a{}), strata::path::scalar);
  for (auto& r : pairs) r.a += r.b;
  EXPECT_EQ(first_difference<two_floats>(p.to_host(), pairs), -1);
}

struct drift_x_only {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * 0.5f;
    return p;
  }
};
struct halve_y_below_half {
  template <class P>
  STRATA_HD void operator()(P& p) const {
    if (p.y < 0.5f) p.y *= 0.5f;
  }
};

// In place, updates store a leaf only where the functor changed it. Two leaves of one view share
// memory here (x with mass, y with vz), the changed one first in leaf order: storing the unchanged
// leaf's loaded value after it, as a store of every leaf does, would put the old value back. Every
// path: packets, the records after a foreign view's last whole packet, strata's kernel and
// Thrust's, for_each, transform of a view or its const view onto itself, projections.
TEST(ForEach, InPlaceUpdatesStoreOnlyTheLeavesTheyChange) {
  STRATA_SEED_TRACE();
  const strata::index_t saved = strata::detail::direct_launch_limit;
  constexpr std::size_t w = strata::layout::record_descriptor<particle>::packet_width;
  for (strata::index_t limit : {saved, strata::index_t(0)})
    for (std::size_t n : {std::size_t(1), w - 1, w + 1, std::size_t(4097), std::size_t(99991)})
      for (int call = 0; call < 6; ++call) {
        SCOPED_TRACE("limit=" + std::to_string(limit) + " n=" + std::to_string(n) + " call=" + std::to_string(call));
        strata::detail::direct_launch_limit = limit;
        auto ref = random_records<particle>(n);
        foreign_columns<particle> f(n);
        f.upload(ref);
        using cspan = cuda::std::span<float>;
        auto v = strata::make_soa_view<particle>(strata::index_t(n), strata::alignment::vector, cspan(f.column<0>(), n),
                                                 cspan(f.column<1>(), n), cspan(f.column<2>(), n), cspan(f.column<3>(), n),
                                                 cspan(f.column<4>(), n), cspan(f.column<1>(), n), cspan(f.column<0>(), n));
        const strata::soa_view<const particle> cv = v;
        strata::update_path p{};
        if (call == 0) p = strata::for_each(v, halve_y_below_half{});
        if (call == 1) p = strata::transform(v, v, drift_x_only{});
        if (call == 2) p = strata::transform(cv, v, drift_x_only{});
        if (call == 3) p = strata::for_each(strata::project<&particle::x, &particle::y, &particle::vz, &particle::mass>(v), halve_y_below_half{});
        if (call == 4) {
          auto pr = strata::project<&particle::x, &particle::vx, &particle::mass>(v);
          p = strata::transform(pr, pr, drift_x_only{});
        }
        if (call == 5) p = strata::transform(v, strata::project<&particle::x>(v), drift_x_only{});  // not in place: x only
        strata::synchronize(strata::stream_t{});
        strata::detail::direct_launch_limit = saved;
        EXPECT_EQ(p, (strata::update_path{strata::path::vectorized, call == 5 ? strata::stores::every_leaf : strata::stores::changed_leaves}));
        const auto got = f.download();
        for (std::size_t i = 0; i < n; ++i) {
          particle r = ref[i];
          r.mass = r.x, r.vz = r.y;  // what the aliased view reads
          if (call == 0 || call == 3) halve_y_below_half{}(r);
          else r = drift_x_only{}(r);
          ASSERT_EQ(got[i].x, r.x) << "record " << i;
          ASSERT_EQ(got[i].y, r.y) << "record " << i;
          ASSERT_EQ(got[i].vx, ref[i].vx) << "record " << i;
        }
        EXPECT_EQ(f.damage(), "");
      }
  // AoS records: the accesses holding a changed leaf are stored, the others kept.
  auto recs = random_records<particle>(1001);
  strata::aos_vector<particle> a(recs);
  EXPECT_EQ(strata::for_each(a, halve_y_below_half{}), strata::path::vectorized);
  EXPECT_EQ(strata::transform(a, a, drift_x_only{}), (strata::update_path{strata::path::vectorized, strata::stores::changed_leaves}));
  for (auto& r : recs) halve_y_below_half{}(r), r = drift_x_only{}(r);
  EXPECT_EQ(first_difference<particle>(a.to_host(), recs), -1) << describe_difference<particle>(a.to_host(), recs);
}
