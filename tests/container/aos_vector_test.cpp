// SPDX-License-Identifier: Apache-2.0
#include <strata/container/aos_vector.hpp>
#include <strata/iterator/packet.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

using namespace strata_test;
using strata::aos_vector;

static_assert(std::is_trivially_copyable_v<strata::aos_view<particle>>);
static_assert(!std::is_convertible_v<strata::aos_view<const particle>, strata::aos_view<particle>>);
static_assert(std::is_convertible_v<strata::aos_view<particle>, strata::aos_view<const particle>>);

template <class T>
class AosVector : public ::testing::Test {};
using Records = ::testing::Types<particle, mixed, three_bytes, floats_then_vec4, nested_particle, big_record>;
TYPED_TEST_SUITE(AosVector, Records);

template <class T, strata::memory_space S>
void expect_equal(const aos_vector<T, S>& v, const std::vector<T>& ref) {
  auto out = poisoned<T>(v.size());
  v.copy_to_host(std::span<T>(out));
  EXPECT_EQ(first_difference<T>(out, ref), -1);
}

TYPED_TEST(AosVector, RoundTripEverySizeAndAlignedStorage) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : sizes_for<T>()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<T>(n);
    aos_vector<T> v(ref);
    EXPECT_EQ(v.size(), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % alignof(strata::layout::aligned_record<T>), 0u);
    expect_equal(v, ref);
  }
}

TYPED_TEST(AosVector, ContainerOperations) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  auto ref = random_records<T>(777);
  aos_vector<T> v(ref);
  T value = random_records<T>(1, 5)[0];
  v.resize(5000, value);
  ref.resize(5000, value);
  expect_equal(v, ref);
  v.resize(3);
  ref.resize(3);
  T zero;
  std::memset(&zero, 0, sizeof zero);
  v.resize(10);
  ref.resize(10, zero);
  expect_equal(v, ref);
  aos_vector<T> copy = v;
  copy[2] = value;
  EXPECT_TRUE(same_bits(T(copy[2]), value));
  expect_equal(v, ref);
  strata::host_aos_vector<T> host(v);
  expect_equal(host, ref);
  aos_vector<T> moved = std::move(copy);
  EXPECT_EQ(copy.size(), 0u);
  v.reserve(100000);
  expect_equal(v, ref);
  v.clear();
  EXPECT_TRUE(v.empty());
  aos_vector<T> n(4, value);
  expect_equal(n, std::vector<T>(4, value));
  EXPECT_THROW(n.get(4), std::out_of_range);
}

// aos_vector is the generic container over the padded AoS mapping: what every strata container
// does (push_back through reallocations, appends of host ranges and of other containers, copies
// between memory spaces, host element access), checked against a std::vector of the same records.
TYPED_TEST(AosVector, GenericContainerOperations) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  const auto ref = random_records<T>(3000, 11);
  aos_vector<T> v;
  for (std::size_t i = 0; i < 37; ++i) v.push_back(ref[i]);  // several reallocations
  EXPECT_EQ(v.size(), 37u);
  EXPECT_GE(v.capacity(), 37u);
  EXPECT_EQ(v.allocated_bytes(), v.capacity() * sizeof(strata::layout::aligned_record<T>));
  v.append(std::span<const T>(ref.data() + 37, 1000));
  const aos_vector<T> tail(std::vector<T>(ref.begin() + 1037, ref.end()));
  v.append(tail, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(v, ref);
  strata::host_aos_vector<T> host(v.size());
  v.copy_to_async(host, strata::stream_t{});
  strata::synchronize(strata::stream_t{});
  expect_equal(host, ref);
  EXPECT_TRUE(same_bits(T(v[2999]), ref[2999]));
  EXPECT_THROW((void)v.get(3000), std::out_of_range);
  strata::host_aos_vector<T> wrong(5);
  EXPECT_THROW(v.copy_to_async(wrong, strata::stream_t{}), strata::size_error);
}

TEST(AosView, ProxyAndForeignChecks) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(8);
  strata::host_aos_vector<particle> v(ref);
  auto view = v.view();
  strata::get<&particle::y>(view[2]) = 9.0f;
  view[3] = view[1];
  ref[2].y = 9.0f;
  ref[3] = ref[1];
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);
  using rec = strata::layout::aligned_record<particle>;
  // The count first, as make_soa_view takes it.
  auto ok = strata::make_aos_view<particle>(8, cuda::std::span<rec>(v.data(), 8));
  EXPECT_EQ(ok.size(), 8);
  EXPECT_EQ(ok.data(), v.data());
  EXPECT_THROW((void)strata::make_aos_view<particle>(8, cuda::std::span<rec>(v.data(), 4)), strata::size_error);
  rec* shifted = reinterpret_cast<rec*>(reinterpret_cast<char*>(v.data()) + 4);
  EXPECT_THROW((void)strata::make_aos_view<particle>(4, cuda::std::span<rec>(shifted, 4)), strata::misaligned_pointer);
  auto read_only = strata::make_aos_view<const particle>(5, cuda::std::span<const rec>(v.data(), 8));
  EXPECT_EQ(read_only.size(), 5);
  EXPECT_TRUE(same_bits(particle(read_only[4]), ref[4]));
  // The old order still compiles (deprecated: tests/compile_fail/make_aos_view_old_order.cpp shows the warning).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  auto old_order = strata::make_aos_view<particle>(cuda::std::span<rec>(v.data(), 8), 6);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  EXPECT_EQ(old_order.size(), 6);
  EXPECT_EQ(old_order.data(), v.data());
}

// An aos_view over shared memory (a block's staging tile): its records move whole through 16-byte
// accesses of the right address space, and so do packets of an SoA view there. The global-memory
// views on either side keep their global accesses. On the host backend the tile is an ordinary
// array and the same code runs block by block.
namespace {
constexpr int tile_records = 64;
template <class T>
STRATA_HD void reverse_through_tile(strata::aos_view<const T> in, strata::layout::aligned_record<T>* tile, int i) {
  strata::aos_view<T> staged(tile, tile_records);
  staged[i] = in[i];
}
template <class T>
STRATA_HD void read_back(strata::aos_view<T> out, strata::layout::aligned_record<T>* tile, int i) {
  strata::aos_view<const T> staged(tile, tile_records);
  out[i] = staged[tile_records - 1 - i];
}
/// Packet p of an SoA view (all leaves).
template <class T, std::size_t... L>
STRATA_HD auto packet_ref(strata::soa_view<T> view, int p, std::index_sequence<L...>) {
  return strata::packet_reference<T, strata::soa_mapping<T>, L...>(view, p);
}
template <class T>
constexpr int tile_packets = tile_records / strata::packet<T>::width;
template <class T>
using all_leaves = std::make_index_sequence<strata::reflect::leaf_count<T>>;
#if defined(STRATA_BACKEND_CUDA)
template <class T>
__global__ void shared_tile_kernel(strata::aos_view<const T> in, strata::aos_view<T> out) {
  __shared__ strata::layout::aligned_record<T> tile[tile_records];
  reverse_through_tile<T>(in, tile, int(threadIdx.x));
  __syncthreads();
  read_back<T>(out, tile, int(threadIdx.x));
}
/// The records staged in a shared SoA tile, each packet moved one packet on (a rotation by the
/// packet width), and copied out.
template <class T>
__global__ void shared_packets_kernel(strata::soa_view<const T> in, strata::soa_view<T> out) {
  constexpr std::size_t leaves = strata::reflect::leaf_count<T>;
  constexpr std::size_t bytes = std::size_t(tile_records) * strata::layout::record_descriptor<T>::widest_leaf;
  __shared__ alignas(16) std::byte cols[leaves][bytes];
  cuda::std::array<std::byte*, leaves> c{};
  for (std::size_t l = 0; l < leaves; ++l) c[l] = cols[l];
  strata::soa_view<T> tile(c, tile_records, tile_records);
  const int i = int(threadIdx.x);
  tile[i] = in[i];
  __syncthreads();
  strata::packet<T> pk{};
  if (i < tile_packets<T>) pk = packet_ref(tile, i, all_leaves<T>{}).get();
  __syncthreads();
  if (i < tile_packets<T>) packet_ref(tile, (i + 1) % tile_packets<T>, all_leaves<T>{}) = pk;
  __syncthreads();
  out[i] = tile[i];
}
#endif

template <class T>
void expect_shared_tiles() {
  SCOPED_TRACE(strata::detail::type_name<T>());
  auto ref = random_records<T>(tile_records);
  strata::aos_vector<T> in(ref), out(poisoned<T>(tile_records));
  strata::soa_vector<T> sin(ref), sout(poisoned<T>(tile_records));
#if defined(STRATA_BACKEND_CUDA)
  shared_tile_kernel<T><<<1, tile_records>>>(in.const_view(), out.view());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  shared_packets_kernel<T><<<1, tile_records>>>(sin.const_view(), sout.view());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
#else
  std::vector<strata::layout::aligned_record<T>> tile(tile_records);
  for (int i = 0; i < tile_records; ++i) reverse_through_tile<T>(in.const_view(), tile.data(), i);
  for (int i = 0; i < tile_records; ++i) read_back<T>(out.view(), tile.data(), i);
  // Every packet is read before any is written, as the device's threads do between barriers.
  auto v = sout.view();
  for (int i = 0; i < tile_records; ++i) v[i] = sin.const_view()[i];
  std::vector<strata::packet<T>> held(tile_packets<T>);
  for (int p = 0; p < tile_packets<T>; ++p) held[p] = packet_ref(v, p, all_leaves<T>{}).get();
  for (int p = 0; p < tile_packets<T>; ++p) packet_ref(v, (p + 1) % tile_packets<T>, all_leaves<T>{}) = held[p];
#endif
  std::vector<T> reversed(ref.rbegin(), ref.rend()), rotated(ref.size());
  for (int i = 0; i < tile_records; ++i) rotated[(i + strata::packet<T>::width) % tile_records] = ref[i];
  EXPECT_EQ(first_difference<T>(out.to_host(), reversed), -1) << "aos_view: " << describe_difference<T>(out.to_host(), reversed);
  EXPECT_EQ(first_difference<T>(sout.to_host(), rotated), -1) << "packets: " << describe_difference<T>(sout.to_host(), rotated);
}
}  // namespace

TEST(AosView, WorksInSharedMemory) {
  expect_shared_tiles<particle>();
  expect_shared_tiles<big_record>();
  expect_shared_tiles<three_bytes>();
}
