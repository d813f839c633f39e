// SPDX-License-Identifier: Apache-2.0
// AoSoA of any block size N >= 1: the layout facts, every container operation, the conversions to
// and from every other layout, the algorithms and the reordering calls, for blocks whose runs are
// not whole 16-byte vectors (N = 1, 3, 5, 7, ...) and blocks that hold whole packets without
// being a multiple of 16 (particle N = 8, 24), against host references.
#include <strata/container/aosoa_vector.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/convert/convert.hpp>
#include <strata/iterator/packet.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <thrust/transform.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

using namespace strata_test;
using strata::aosoa_vector;
using strata::memory_space;

// Runs follow one another at their leaves' alignment: no padding beyond what alignment needs.
static_assert(strata::aosoa_mapping<particle, 1>::block_bytes == 28, "one particle a block: 28 bytes, as packed AoS");
static_assert(strata::aosoa_mapping<particle, 3>::block_bytes == 84);
static_assert(strata::aosoa_mapping<particle, 8>::block_bytes == 7 * 32 && strata::aosoa_mapping<particle, 8>::block_alignment == 16);
static_assert(strata::aosoa_mapping<mixed, 1>::column_offset(0, 1) == 8 && strata::aosoa_mapping<mixed, 1>::column_offset(0, 3) == 14 &&
              strata::aosoa_mapping<mixed, 1>::block_bytes == 16);
static_assert(strata::aosoa_mapping<mixed, 3>::column_offset(0, 2) == 36 && strata::aosoa_mapping<mixed, 3>::block_bytes == 48);
// Blocks of a multiple of 16 keep the layout they always had: every run on a 16-byte boundary.
static_assert(strata::aosoa_mapping<mixed, 16>::column_offset(0, 3) == 16 * 14 && strata::aosoa_mapping<mixed, 16>::block_bytes == 240);
// Which paths a block size allows.
static_assert(!strata::layout::whole_vector_blocks<strata::aosoa_mapping<particle, 3>>() &&
              !strata::layout::packet_aligned_blocks<strata::aosoa_mapping<particle, 3>>());
static_assert(strata::layout::whole_vector_blocks<strata::aosoa_mapping<particle, 8>>() &&
              strata::layout::packet_aligned_blocks<strata::aosoa_mapping<particle, 8>>());
static_assert(!strata::layout::packet_aligned_blocks<strata::aosoa_mapping<mixed, 8>>(), "a 1-byte leaf needs 16 records a packet");

template <class T, std::size_t N>
struct block_case {
  using record = T;
  static constexpr std::size_t block = N;
};

template <class C>
class AosoaBlocks : public ::testing::Test {};
using Cases = ::testing::Types<block_case<particle, 1>, block_case<particle, 3>, block_case<particle, 8>, block_case<particle, 24>,
                               block_case<mixed, 1>, block_case<mixed, 5>, block_case<mixed, 8>, block_case<three_bytes, 7>,
                               block_case<with_opaque, 2>, block_case<nested_particle, 3>, block_case<cell_record, 3>,
                               block_case<big_record, 1>>;
TYPED_TEST_SUITE(AosoaBlocks, Cases);

template <class C>
using vec_t = aosoa_vector<typename C::record, C::block>;

template <class T, std::size_t N, memory_space S>
void expect_equal(const aosoa_vector<T, N, S>& v, const std::vector<T>& ref) {
  ASSERT_EQ(v.size(), ref.size());
  const auto got = v.to_host();
  ASSERT_EQ(first_difference<T>(got, ref), -1) << describe_difference<T>(got, ref);
}

// The allocation's bytes: leaf L of record i where the mapping says.
template <class T, std::size_t N, memory_space S>
void expect_mapped(const aosoa_vector<T, N, S>& v, const std::vector<T>& ref) {
  using M = strata::aosoa_mapping<T, N>;
  ASSERT_EQ(v.allocated_bytes(), M::bytes(v.capacity()));
  if (v.capacity() == 0) return;
  auto bytes = fetch(v.view().column_bytes(0), v.allocated_bytes());
  for (std::size_t i = 0; i < ref.size(); ++i)
    strata::reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      ASSERT_EQ(std::memcmp(bytes.data() + M::leaf_offset(v.capacity(), i, L), &strata::reflect::leaf<L>(ref[i]), M::leaf_sizes[L]), 0)
          << "leaf " << strata::reflect::leaf_name<T, L>() << " record " << i;
    });
}

TYPED_TEST(AosoaBlocks, LayoutFactsHold) {
  using T = typename TypeParam::record;
  constexpr std::size_t N = TypeParam::block;
  using M = strata::aosoa_mapping<T, N>;
  static_assert(M::proven() && strata::layout::columnar_mapping<M>);
  // Every byte of three blocks belongs to at most one leaf of one record, at that leaf's alignment,
  // inside the allocation.
  constexpr std::size_t cap = 3 * N;
  std::vector<int> owner(M::bytes(cap), -1);
  for (std::size_t i = 0; i < cap; ++i)
    for (std::size_t l = 0; l < M::leaves; ++l) {
      const std::size_t off = M::leaf_offset(cap, i, l);
      ASSERT_EQ(off % strata::reflect::leaf_alignments<T>[l], 0u) << "record " << i << " leaf " << l;
      ASSERT_LE(off + M::leaf_sizes[l], owner.size());
      for (std::size_t b = off; b < off + M::leaf_sizes[l]; ++b) {
        ASSERT_EQ(owner[b], -1) << "byte " << b << " of record " << i << " leaf " << l;
        owner[b] = int(i * M::leaves + l);
      }
    }
  // Padding: under one alignment unit a run, so a block is never much larger than its data.
  std::size_t slack = M::block_alignment;
  for (std::size_t l = 0; l < M::leaves; ++l) slack += strata::reflect::leaf_alignments<T>[l];
  EXPECT_LT(M::block_bytes, N * strata::layout::record_descriptor<T>::packed_size + slack);
}

TYPED_TEST(AosoaBlocks, RoundTripAndPlacementForEverySize) {
  using T = typename TypeParam::record;
  constexpr std::size_t N = TypeParam::block;
  STRATA_SEED_TRACE();
  std::vector<std::size_t> sizes{0, 1, N - 1, N, N + 1, 3 * N + 2, 99991};
  if (!under_sanitizer()) sizes.push_back(1000000);
  for (std::size_t n : sizes) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    vec_t<TypeParam> v(ref);  // device memory: staged through the transposes' host pipeline
    EXPECT_EQ(v.capacity() % N, 0u);
    expect_equal(v, ref);
    if (n <= 100000) expect_mapped(v, ref);
    aosoa_vector<T, N, memory_space::host> h(ref);
    expect_equal(h, ref);
    aosoa_vector<T, N> d(n);
    h.copy_to_async(d, strata::stream_t{});
    strata::synchronize(strata::stream_t{});
    expect_equal(d, ref);
  }
}

TYPED_TEST(AosoaBlocks, GrowAppendResizeAndHostAccessKeepEveryRecord) {
  using T = typename TypeParam::record;
  constexpr std::size_t N = TypeParam::block;
  STRATA_SEED_TRACE();
  const std::size_t m = 3 * N + 5;
  auto ref = random_records<T>(m);
  vec_t<TypeParam> v;
  for (std::size_t i = 0; i < N + 3; ++i) v.push_back(ref[i]);
  expect_equal(v, std::vector<T>(ref.begin(), ref.begin() + std::ptrdiff_t(N + 3)));
  // Appending at N + 3 (inside a block unless N divides 3): the record-by-record copy.
  const vec_t<TypeParam> more(std::vector<T>(ref.begin() + std::ptrdiff_t(N + 3), ref.end()));
  v.append(more, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(v, ref);
  expect_mapped(v, ref);
  // Host records appended at a position inside a block, and a host span appended.
  vec_t<TypeParam> e(std::vector<T>(ref.begin(), ref.begin() + 2));
  const aosoa_vector<T, N, memory_space::host> rest(std::vector<T>(ref.begin() + 2, ref.end()));
  e.append(rest, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(e, ref);
  vec_t<TypeParam> w(std::vector<T>(ref.begin(), ref.begin() + std::ptrdiff_t(2 * N)));
  w.append(std::span<const T>(ref.data() + 2 * N, m - 2 * N));
  expect_equal(w, ref);
  // set / get, copies, reserve, shrinking, growing with a value and with zeros.
  w.set(m - 1, ref[0]);
  EXPECT_TRUE(same_bits(w.get(m - 1), ref[0]));
  auto ref2 = ref;
  ref2[m - 1] = ref[0];
  vec_t<TypeParam> copy(w);
  copy.reserve(10 * N + 1);
  EXPECT_GE(copy.capacity(), 10 * N + 1);
  expect_equal(copy, ref2);
  copy.resize(N + 1);
  expect_equal(copy, std::vector<T>(ref2.begin(), ref2.begin() + std::ptrdiff_t(N + 1)));
  copy.resize(3 * N + 2, ref[1]);
  std::vector<T> grown(ref2.begin(), ref2.begin() + std::ptrdiff_t(N + 1));
  grown.resize(3 * N + 2, ref[1]);
  expect_equal(copy, grown);
  copy.resize(1);
  copy.resize(2 * N + 7);
  std::vector<T> zeroed(grown.begin(), grown.begin() + 1);
  T zero;
  std::memset(static_cast<void*>(&zero), 0, sizeof zero);
  zeroed.resize(2 * N + 7, zero);
  expect_equal(copy, zeroed);
  EXPECT_THROW(copy.get(copy.size()), std::out_of_range);
}

// Into a destination filled with poison, so a record the conversion skips shows.
template <class T, class Dst, class Src>
void convert_into(const Src& src, const std::vector<T>& ref, strata::path want) {
  Dst dst(poisoned<T>(ref.size()));
  EXPECT_EQ(strata::convert(src, dst), want);
  strata::synchronize(strata::stream_t{});
  const auto got = dst.to_host();
  ASSERT_EQ(first_difference<T>(got, ref), -1) << describe_difference<T>(got, ref);
}

TYPED_TEST(AosoaBlocks, ConvertsToAndFromEveryLayout) {
  using T = typename TypeParam::record;
  constexpr std::size_t N = TypeParam::block;
  using M = strata::aosoa_mapping<T, N>;
  STRATA_SEED_TRACE();
  // AoS sides take the transposes where every run is whole 16-byte vectors, records otherwise.
  const auto aos_path = strata::layout::whole_vector_blocks<M>() ? strata::path::vectorized : strata::path::scalar;
  // Columnar pairs take groups where both sides hold whole packets and every leaf is vectorizable.
  constexpr bool columnar = strata::layout::record_descriptor<T>::all_leaves_vectorizable && strata::layout::packet_aligned_blocks<M>();
  const auto col_path = columnar ? strata::path::vectorized : strata::path::scalar;
  for (std::size_t n : {std::size_t(1), N + 1, std::size_t(1000), std::size_t(99991)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    const vec_t<TypeParam> a(ref);
    convert_into<T, strata::aos_vector<T>>(a, ref, aos_path);
    convert_into<T, vec_t<TypeParam>>(strata::aos_vector<T>(ref), ref, aos_path);
    convert_into<T, strata::soa_vector<T>>(a, ref, col_path);
    convert_into<T, vec_t<TypeParam>>(strata::soa_vector<T>(ref), ref, col_path);
    convert_into<T, aosoa_vector<T, 32>>(a, ref, col_path);
    convert_into<T, vec_t<TypeParam>>(aosoa_vector<T, 32>(ref), ref, col_path);
    convert_into<T, vec_t<TypeParam>>(a, ref, col_path);  // same layout
    convert_into<T, aosoa_vector<T, N + 2>>(a, ref, strata::path::scalar);
    EXPECT_EQ(first_difference<T>(strata::convert_to<strata::soa_vector<T>>(a).to_host(), ref), -1);
    // Sizes must agree; a refused call writes nothing.
    vec_t<TypeParam> wrong(poisoned<T>(n + 1));
    EXPECT_THROW(strata::convert(strata::aos_vector<T>(ref), wrong), strata::size_error);
    EXPECT_THROW(strata::convert(strata::soa_vector<T>(ref), wrong), strata::size_error);
    EXPECT_EQ(first_difference<T>(wrong.to_host(), poisoned<T>(n + 1)), -1);
  }
}

// Particles in blocks of 3 (records only) and 8 (packets): transform, for_each, reduce and
// projections give the SoA results and report their path; Thrust runs over the record iterators.
template <std::size_t N>
void particle_algorithms() {
  SCOPED_TRACE("N=" + std::to_string(N));
  constexpr bool packets = strata::layout::packet_aligned_blocks<strata::aosoa_mapping<particle, N>>();
  const auto want_path = packets ? strata::path::vectorized : strata::path::scalar;
  for (std::size_t n : sizes_for<particle>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<particle>(n);
    aosoa_vector<particle, N> a(ref), b(poisoned<particle>(n));
    EXPECT_EQ(strata::transform(a, b, drift{}), want_path);
    EXPECT_EQ(strata::for_each(b, kick{}).access, want_path);
    std::vector<particle> want = ref;
    for (auto& p : want) p = drift{}(p), kick{}(p);
    strata::synchronize(strata::stream_t{});
    expect_equal(b, want);
    double e = 0, ex = 0;
    for (auto& p : want) e += kinetic_energy{}(p), ex += 0.5 * double(p.mass) * double(p.vx) * p.vx;
    EXPECT_NEAR(strata::transform_reduce(b, kinetic_energy{}, 0.0, plus_d{}), e, 1e-9 * (1 + std::abs(e)));
    auto proj = strata::project<&particle::vx, &particle::mass>(b);
    EXPECT_NEAR(strata::transform_reduce(proj, kinetic_energy{}, 0.0, plus_d{}), ex, 1e-9 * (1 + std::abs(ex)));
    // In place through a projection: only x changes.
    auto px = strata::project<&particle::x, &particle::vx>(b);
    EXPECT_EQ(strata::transform(px, px, add_vx_to_x{}), want_path);
    for (auto& p : want) p.x += p.vx;
    strata::synchronize(strata::stream_t{});
    expect_equal(b, want);
  }
  auto ref = random_records<particle>(777);
  aosoa_vector<particle, N> a(ref), b(ref.size());
  thrust::transform(a.begin(), a.end(), b.begin(), drift{});
  std::vector<particle> want = ref;
  for (auto& p : want) p = drift{}(p);
  expect_equal(b, want);
  if constexpr (packets) {
    auto pk = strata::packets(a.view());
    aosoa_vector<particle, N> c(poisoned<particle>(ref.size()));
    auto pc = strata::packets(c.view());
    thrust::transform(strata::packets_begin(pk), strata::packets_end(pk), strata::packets_begin(pc), strata::per_record(drift{}));
    expect_equal(c, want);
  }
}
TEST(AosoaBlocksAlgorithms, TransformForEachReduceAndThrust) {
  STRATA_SEED_TRACE();
  particle_algorithms<3>();
  particle_algorithms<8>();
  particle_algorithms<1>();
}

TEST(AosoaBlocksAlgorithms, UpdatesOfMixedLeafWidths) {
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<mixed>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n);
    aosoa_vector<mixed, 5> a(ref);
    EXPECT_EQ(strata::transform(a, a, bump_mixed{}), strata::path::scalar);
    for (auto& r : ref) r = bump_mixed{}(r);
    strata::synchronize(strata::stream_t{});
    expect_equal(a, ref);
  }
}

// permute (in place and through a spare), gather, sort_by_key, with a bad index refused.
template <class T, std::size_t N>
void reorder() {
  SCOPED_TRACE("N=" + std::to_string(N));
  using blocked = aosoa_vector<T, N>;
  for (std::size_t n : {std::size_t(0), std::size_t(1), N + 1, std::size_t(1000), std::size_t(99991)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n, 71);
    std::mt19937_64 g(test_seed() ^ n ^ 71);
    std::vector<std::int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    strata::buffer pb(n * sizeof(std::int32_t), memory_space::device);
    strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
    const cuda::std::span<const std::int32_t> idx(reinterpret_cast<const std::int32_t*>(pb.data()), n);
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(perm[i])];
    blocked c(ref), spare, dst;
    strata::permute(c, idx);
    expect_equal(c, want);
    blocked d(ref);
    strata::permute(d, idx, spare);
    expect_equal(d, want);
    const blocked src(ref);
    strata::gather(src, idx, dst);
    expect_equal(dst, want);
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = std::uint32_t(g() % 50);
    strata::buffer kb(n * sizeof(std::uint32_t), memory_space::device);
    strata::copy_bytes(kb.data(), keys.data(), kb.bytes());
    blocked k(ref);
    strata::sort_by_key(k, cuda::std::span<std::uint32_t>(reinterpret_cast<std::uint32_t*>(kb.data()), n));
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return keys[x] < keys[y]; });
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[order[i]];
    expect_equal(k, want);
    if (n == 0) continue;
    std::vector<std::int32_t> bad = perm;
    bad[n / 2] = -1;
    strata::copy_bytes(pb.data(), bad.data(), pb.bytes());
    blocked e(ref);
    EXPECT_THROW(strata::permute(e, idx), std::out_of_range);
    expect_equal(e, ref);
  }
}
TEST(AosoaBlocksAlgorithms, Reordering) {
  STRATA_SEED_TRACE();
  reorder<mixed, 3>();
  reorder<particle, 8>();
  reorder<big_record, 1>();
}

// Packed AoS is AoSoA of one record a block: a record of scalar leaves keeps its plain struct's
// layout, so a std::vector<T>'s bytes copied into the allocation read back as the same records.
template <class T>
void expect_struct_layout() {
  using M = strata::aosoa_mapping<T, 1>;
  static_assert(std::is_same_v<strata::packed_aos_vector<T>, aosoa_vector<T, 1>>);
  static_assert(std::is_same_v<strata::host_packed_aos_vector<T>, aosoa_vector<T, 1, memory_space::host>>);
  static_assert(M::block_bytes == sizeof(T), "a block of one record is the struct's size");
  strata::reflect::for_each_leaf<T>([&](auto f) {
    constexpr std::size_t L = decltype(f)::value;
    static_assert(M::leaf_offset(0, 0, L) == strata::reflect::leaf_offset<T, L>());
    static_assert(M::leaf_offset(0, 5, L) == 5 * sizeof(T) + strata::reflect::leaf_offset<T, L>());
  });
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(777)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto ref = random_records<T>(n);
    strata::packed_aos_vector<T> v(n);
    ASSERT_EQ(v.size(), n);
    if (n > 0) strata::copy_bytes(v.view().column_bytes(0), ref.data(), n * sizeof(T));
    expect_equal(v, ref);
    std::vector<T> back(n);
    const strata::packed_aos_vector<T> filled(ref);
    if (n > 0) strata::copy_bytes(back.data(), filled.const_view().column_bytes(0), n * sizeof(T));
    ASSERT_EQ(first_difference<T>(back, ref), -1) << describe_difference<T>(back, ref);
  }
}
TEST(PackedAos, FlatRecordsKeepTheirStructLayout) {
  STRATA_SEED_TRACE();
  expect_struct_layout<particle>();
  expect_struct_layout<mixed>();
  expect_struct_layout<three_bytes>();
  expect_struct_layout<eight_floats>();
}
