// SPDX-License-Identifier: Apache-2.0
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <type_traits>

using namespace strata_test;
using strata::soa_view;

// Views are trivially copyable into kernels; a const view never becomes a mutable one.
static_assert(std::is_trivially_copyable_v<soa_view<particle>> && std::is_trivially_copyable_v<soa_view<const particle>>);
static_assert(std::is_convertible_v<soa_view<particle>, soa_view<const particle>>);
static_assert(!std::is_convertible_v<soa_view<const particle>, soa_view<particle>>);
static_assert(!std::is_constructible_v<soa_view<particle>, soa_view<const particle>>);
static_assert(!std::is_assignable_v<strata::soa_reference<const particle>, particle>);
static_assert(std::is_same_v<decltype(std::declval<soa_view<const particle>>().column<&particle::x>()),
                             cuda::std::span<const float>>);
// Compile-time layout proofs for every record the tests use.
static_assert(strata::soa_layout<particle>::proven() && strata::soa_layout<mixed>::proven() &&
              strata::soa_layout<three_bytes>::proven());
static_assert(!strata::soa_layout<particle>::check(5), "capacity must be whole packets");

TEST(SoaView, ProxyReadsAndWritesFieldsOnHostMemory) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(9);
  strata::host_soa_vector<particle> v(ref);
  auto view = v.view();
  particle p = view[4];
  EXPECT_TRUE(same_bits(p, ref[4]));
  strata::get<&particle::vx>(view[4]) = 42.0f;
  view[5].get<&particle::mass>() *= 2;
  view[6] = ref[0];
  view[7] = view[8];
  ref[4].vx = 42.0f;
  ref[5].mass *= 2;
  ref[6] = ref[0];
  ref[7] = ref[8];
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  soa_view<const particle> cv = view;
  EXPECT_EQ(cv[3].get<&particle::z>(), ref[3].z);
  EXPECT_EQ(cv.size(), 9);
  EXPECT_TRUE(view.vector_ready());
}

TEST(SoaView, ForeignColumnsAreChecked) {
  constexpr std::size_t n = 100;
  strata::host_soa_vector<particle> v(128);  // capacity 128: whole packets
  auto c = [&](auto col) { return cuda::std::span<float>(col.data(), 128); };
  auto x = c(v.column<0>()), y = c(v.column<1>()), z = c(v.column<2>()), vx = c(v.column<3>()), vy = c(v.column<4>()),
       vz = c(v.column<5>()), m = c(v.column<6>());
  auto view = strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, vy, vz, m);
  EXPECT_EQ(view.size(), 100);
  EXPECT_EQ(view.capacity(), 100);  // elements past n are the caller's: the view never reaches them
  EXPECT_TRUE(view.vector_ready());

  // Misaligned for vector access: the message names the column, the pointer and the alignment.
  cuda::std::span<float> shifted(x.data() + 1, 127);
  try {
    (void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, vy, vz, shifted);
    FAIL() << "expected misaligned_pointer";
  } catch (const strata::misaligned_pointer& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("'mass'"), std::string::npos) << w;
    EXPECT_NE(w.find("16 bytes"), std::string::npos) << w;
    EXPECT_EQ(e.pointer(), shifted.data());
  }
  // The same pointer is fine for element-aligned access (record iterators only).
  auto loose = strata::make_soa_view<particle>(n, strata::alignment::element, x, y, z, vx, vy, vz, shifted);
  EXPECT_FALSE(loose.vector_ready());
  // Too short, and null with records.
  EXPECT_THROW((void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z.first(50), vx, vy, vz, m),
               strata::size_error);
  cuda::std::span<float> null_col;
  EXPECT_THROW((void)strata::make_soa_view<particle>(n, strata::alignment::vector, x, y, z, vx, null_col, vz, m),
               strata::size_error);
  EXPECT_NO_THROW((void)strata::make_soa_view<particle>(0, strata::alignment::vector, null_col, null_col, null_col,
                                                        null_col, null_col, null_col, null_col));
}

// get<> of a struct, array or vector member: reading gives the member, assigning writes every leaf
// of it, on each layout (SoA and AoSoA through member_reference, AoS through a plain reference).
template <class C>
void members_read_and_write_whole() {
  STRATA_SEED_TRACE();
  auto ref = random_records<nested_particle>(40);
  C v(ref);
  auto view = v.view();
  const vec3 vel{1.5f, -2.5f, 3.25f};
  strata::get<&nested_particle::vel>(view[2]) = vel;
  ref[2].vel = vel;
  strata::get<&nested_particle::pos>(view[37]) = strata::get<&nested_particle::vel>(view[5]);  // proxy to proxy
  ref[37].pos = ref[5].vel;
  view[33].template get<&nested_particle::pos>() = view[34].template get<&nested_particle::pos>();
  ref[33].pos = ref[34].pos;
  const vec3 pos = strata::get<&nested_particle::pos>(view[9]);
  EXPECT_TRUE(same_bits(pos, ref[9].pos));
  EXPECT_EQ(first_difference<nested_particle>(v.to_host(), ref), -1) << describe_difference<nested_particle>(v.to_host(), ref);

  // Arrays, vector types and members below the record's own fields.
  auto cells = random_records<cell_record>(20);
  typename C::template rebind<cell_record> cv(cells);
  const std::array<double, 3> w{0.5, 1.5, -7.0};
  const vec3_t vv{4.0f, 5.0f, 6.0f};
  strata::get<&cell_record::w>(cv.view()[17]) = w;
  strata::get<&cell_record::v>(cv.view()[17]) = vv;
  strata::get<&cell_record::tag>(cv.view()[3]) = std::array<std::uint8_t, 2>{7, 9};
  cells[17].w = w, cells[17].v = vv, cells[3].tag = {7, 9};
  EXPECT_EQ(first_difference<cell_record>(cv.to_host(), cells), -1) << describe_difference<cell_record>(cv.to_host(), cells);

  auto bigs = random_records<big_record>(18);
  typename C::template rebind<big_record> bv(bigs);
  const std::array<float, 4> f{1, 2, 3, 4};
  strata::get<strata::member<&big_record::b, &inner_block::f>>(bv.view()[16]) = f;
  strata::get<&big_record::a>(bv.view()[1]) = strata::get<&big_record::b>(bv.view()[0]);
  bigs[16].b.f = f, bigs[1].a = bigs[0].b;
  EXPECT_EQ(first_difference<big_record>(bv.to_host(), bigs), -1) << describe_difference<big_record>(bv.to_host(), bigs);
}

template <class T>
struct host_soa_c : strata::host_soa_vector<T> {
  using strata::host_soa_vector<T>::host_soa_vector;
  template <class U>
  using rebind = host_soa_c<U>;
};
template <class T>
struct host_aosoa_c : strata::aosoa_vector<T, 16, strata::memory_space::host> {
  using strata::aosoa_vector<T, 16, strata::memory_space::host>::aosoa_vector;
  template <class U>
  using rebind = host_aosoa_c<U>;
};
template <class T>
struct host_aos_c : strata::host_aos_vector<T> {
  using strata::host_aos_vector<T>::host_aos_vector;
  template <class U>
  using rebind = host_aos_c<U>;
};

TEST(SoaView, GetOfAStructMemberWritesEveryLeaf) { members_read_and_write_whole<host_soa_c<nested_particle>>(); }
TEST(AosoaView, GetOfAStructMemberWritesEveryLeaf) { members_read_and_write_whole<host_aosoa_c<nested_particle>>(); }
TEST(AosView, GetOfAStructMemberWritesEveryLeaf) { members_read_and_write_whole<host_aos_c<nested_particle>>(); }

// Reading a field or an element through a member_reference: ref->x and ref[k] give the member's
// field and element, and writing through them does not compile (the proxy's arrow is read-only).
template <class C>
void member_reference_reads_parts() {
  STRATA_SEED_TRACE();
  const auto ref = random_records<nested_particle>(12);
  C v(ref);
  const auto view = v.view();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const auto vel = strata::get<&nested_particle::vel>(view[strata::index_t(i)]);
    EXPECT_TRUE(same_bits(vel->x, ref[i].vel.x));
    EXPECT_TRUE(same_bits(vel->z, ref[i].vel.z));
  }
  const auto cells = random_records<cell_record>(9);
  typename C::template rebind<cell_record> cv(cells);
  for (std::size_t i = 0; i < cells.size(); ++i)
    for (std::size_t k = 0; k < cells[i].w.size(); ++k)
      EXPECT_TRUE(same_bits(strata::get<&cell_record::w>(cv.view()[strata::index_t(i)])[k], cells[i].w[k]));
  using member_ref = decltype(strata::get<&nested_particle::vel>(view[0]));
  static_assert(!requires(member_ref m) { m->x = 1.0f; }, "the arrow of a member_reference reads a copy: writing through it must not compile");
}
TEST(SoaView, MemberReferenceReadsFieldsAndElements) { member_reference_reads_parts<host_soa_c<nested_particle>>(); }
TEST(AosoaView, MemberReferenceReadsFieldsAndElements) { member_reference_reads_parts<host_aosoa_c<nested_particle>>(); }

// Const views read only: leaves and whole members alike (tests/compile_fail/write_through_const_view.cpp
// shows the message a write gets).
static_assert(!std::is_assignable_v<decltype(strata::get<&particle::x>(std::declval<strata::soa_reference<const particle>>())), float>);
static_assert(!std::is_assignable_v<decltype(strata::get<&nested_particle::pos>(std::declval<strata::aos_reference<const nested_particle>>())),
                                    vec3>);
static_assert(std::is_same_v<decltype(strata::get<&nested_particle::pos>(std::declval<strata::soa_reference<nested_particle>>()))::value_type,
                             vec3>);
