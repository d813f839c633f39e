// SPDX-License-Identifier: Apache-2.0
// Packet iterators and field projections inside Thrust, against scalar references, every size.
#include <strata/container/soa_vector.hpp>
#include <strata/iterator/packet.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace strata_test;

static_assert(strata::packet<particle>::width == 4 && strata::packet<mixed>::width == 16);
static_assert(std::is_trivially_copyable_v<strata::packet_view<particle, 0, 1>>);

template <class C>
void expect_records(const C& v, const std::vector<particle>& ref) {
  auto out = poisoned<particle>(v.size());
  v.copy_to_host(std::span<particle>(out));
  EXPECT_EQ(first_difference<particle>(out, ref), -1);
}

TEST(Packets, TransformEqualsScalarReferenceForEverySize) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> in(ref), out(std::vector<particle>(n, particle{9, 9, 9, 9, 9, 9, 9}));
    auto pin = strata::packets(in.const_view());
    auto pout = strata::packets(out.view());
    EXPECT_EQ(std::size_t(pin.size()), (n + 3) / 4);
    thrust::transform(strata::packets_begin(pin), strata::packets_end(pin), strata::packets_begin(pout),
                      strata::per_record(drift{}));
    std::vector<particle> want(n);
    std::transform(ref.begin(), ref.end(), want.begin(), drift{});
    expect_records(out, want);
  }
}

TEST(Packets, ReductionsNeverCountPaddingLanes) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    // Fill the padding lanes with large values first: shrinking keeps them in the allocation.
    auto big = std::vector<particle>(n + 3, particle{1e6f, 1e6f, 1e6f, 1e6f, 1e6f, 1e6f, 1e6f});
    strata::soa_vector<particle> v(big);
    auto ref = random_records<particle>(n);
    v.assign(ref);
    v.reserve(n + 3);
    strata::soa_vector<particle> w(big);
    w.resize(n);
    thrust::transform(v.begin(), v.end(), w.begin(), identity_particle{});
    auto pk = strata::packets(w.const_view());
    double e = thrust::transform_reduce(strata::packets_begin(pk), strata::packets_end(pk),
                                        strata::per_record_reduce(kinetic_energy{}, plus_d{}, 0.0), 0.0, plus_d{});
    double want = 0;
    for (auto& p : ref) want += kinetic_energy{}(p);
    EXPECT_NEAR(e, want, 1e-9 * (1 + std::abs(want)));
  }
}

TEST(Projections, ReadTwoColumnsWriteOne) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    strata::soa_vector<particle> v(ref);
    auto in = strata::project<&particle::x, &particle::vx>(v.view());
    auto out = strata::project<&particle::x>(v.view());
    // Record iterators over projections: x += vx.
    thrust::transform(strata::records_begin(in), strata::records_end(in), strata::records_begin(out),
                      add_vx_to_x{});  // also sets y, which is not projected and must not be written
    for (auto& p : ref) p.x += p.vx;
    expect_records(v, ref);
    // Packets over projections: the same through 128-bit accesses of two and one column.
    auto pin = strata::packets(in);
    auto pout = strata::packets(out);
    thrust::transform(strata::packets_begin(pin), strata::packets_end(pin), strata::packets_begin(pout),
                      strata::per_record(sub_vx_from_x{}));
    for (auto& p : ref) p.x -= p.vx;
    expect_records(v, ref);
  }
}

TEST(Packets, RefuseViewsThatCannotTakeVectorAccess) {
  strata::host_soa_vector<particle> v(64);
  auto c = [&](auto col) { return cuda::std::span<float>(col.data(), 64); };
  auto x = c(v.column<0>()), y = c(v.column<1>()), z = c(v.column<2>()), vx = c(v.column<3>()), vy = c(v.column<4>()),
       vz = c(v.column<5>()), m = c(v.column<6>());
  cuda::std::span<float> shifted(m.data() + 1, 60);
  auto loose = strata::make_soa_view<particle>(50, strata::alignment::element, x, y, z, vx, vy, vz, shifted);
  EXPECT_THROW((void)strata::packets(loose), strata::misaligned_pointer);
  // Aligned columns whose length does not cover whole packets: capacity 50 is not a multiple of 4.
  auto short_cols = strata::make_soa_view<particle>(50, strata::alignment::vector, x.first(50), y.first(50), z.first(50),
                                                    vx.first(50), vy.first(50), vz.first(50), m.first(50));
  EXPECT_THROW((void)strata::packets(short_cols), strata::size_error);
}
