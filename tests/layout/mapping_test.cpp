// SPDX-License-Identifier: Apache-2.0
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/layout/aos_mapping.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/layout/soa_mapping.hpp>

#include "common/records.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace strata_test;

static_assert(strata::layout::columnar_mapping<strata::soa_mapping<particle>>);
static_assert(strata::layout::mapping<strata::aos_mapping<particle>> && !strata::layout::columnar_mapping<strata::aos_mapping<particle>>);
static_assert(strata::layout::packet_aligned_blocks<strata::soa_mapping<mixed>>());
static_assert(std::is_same_v<strata::soa_view<const particle>, strata::basic_view<const particle, strata::soa_mapping<particle>>>);

// Where a container's view puts leaf L of record i is where its mapping says, for every leaf.
template <class T>
void expect_view_matches_mapping(std::size_t n) {
  strata::soa_vector<T, strata::memory_space::host> v(n);
  using M = strata::soa_mapping<T>;
  const std::byte* base = v.view().column_bytes(0);
  for (std::size_t i = 0; i < n; i += 7)
    strata::reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      EXPECT_EQ(reinterpret_cast<const std::byte*>(v.view().template leaf_ptr<L>(strata::index_t(i))) - base,
                std::ptrdiff_t(M::leaf_offset(v.capacity(), i, L)));
    });
  strata::aos_vector<T, strata::memory_space::host> a(n);
  using A = strata::aos_mapping<T>;
  EXPECT_EQ(a.capacity() * A::stride, A::bytes(a.capacity()));
  for (std::size_t i = 0; i < n; i += 7)
    strata::reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      EXPECT_EQ(reinterpret_cast<const std::byte*>(&strata::reflect::leaf<L>(a.data()[i].value)) - reinterpret_cast<const std::byte*>(a.data()),
                std::ptrdiff_t(A::leaf_offset(a.capacity(), i, L)));
    });
}

TEST(Mapping, SoaAndAosOffsetsAreTheContainersAddresses) {
  expect_view_matches_mapping<particle>(1000);
  expect_view_matches_mapping<mixed>(333);
  expect_view_matches_mapping<big_record>(50);
}

// A mapping's offsets called at run time in device code (capacity, record and leaf read from
// memory, so nothing folds at compile time): the same answers as on the host. The tables they read
// are device-reachable; reading a host-only array would compile to a trap in the kernel.
struct offset_query {
  std::size_t capacity, record, leaf;
};
template <class M>
STRATA_HD void answer(const offset_query* q, std::size_t* out, int k) {
  out[2 * k] = M::leaf_offset(q[k].capacity, q[k].record, q[k].leaf);
  if constexpr (strata::layout::columnar_mapping<M>) out[2 * k + 1] = M::column_offset(q[k].capacity, q[k].leaf);
  else out[2 * k + 1] = 0;
}
#if defined(STRATA_BACKEND_CUDA)
template <class M>
__global__ void offsets_kernel(const offset_query* q, std::size_t* out, int count) {
  const int k = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < count) answer<M>(q, out, k);
}
#endif

template <class M>
void expect_device_offsets() {
  SCOPED_TRACE(strata::detail::type_name<M>());
  std::vector<offset_query> q;
  for (std::size_t capacity : {M::round_capacity(0), M::round_capacity(1000), M::round_capacity(99991)})
    for (std::size_t record : {std::size_t(0), std::size_t(1), std::size_t(37), std::size_t(999)})
      for (std::size_t leaf = 0; leaf < M::leaves; ++leaf) q.push_back({capacity, record, leaf});
  const int count = int(q.size());
  strata::buffer dq(q.size() * sizeof(offset_query), strata::memory_space::device);
  strata::buffer dout(q.size() * 2 * sizeof(std::size_t), strata::memory_space::device);
  strata::copy_bytes(dq.data(), q.data(), dq.bytes());
  auto* qp = reinterpret_cast<const offset_query*>(dq.data());
  auto* op = reinterpret_cast<std::size_t*>(dout.data());
#if defined(STRATA_BACKEND_CUDA)
  offsets_kernel<M><<<(count + 127) / 128, 128>>>(qp, op, count);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "the kernel trapped";
#else
  for (int k = 0; k < count; ++k) answer<M>(qp, op, k);
#endif
  std::vector<std::size_t> got(q.size() * 2), want(q.size() * 2);
  strata::copy_bytes(got.data(), dout.data(), dout.bytes());
  for (int k = 0; k < count; ++k) answer<M>(q.data(), want.data(), k);
  for (int k = 0; k < count; ++k) {
    ASSERT_EQ(got[2 * k], want[2 * k]) << "leaf_offset(" << q[k].capacity << ", " << q[k].record << ", " << q[k].leaf << ")";
    ASSERT_EQ(got[2 * k + 1], want[2 * k + 1]) << "column_offset(" << q[k].capacity << ", " << q[k].leaf << ")";
  }
}

TEST(Mapping, OffsetsAtRunTimeInDeviceCode) {
  expect_device_offsets<strata::soa_mapping<mixed>>();
  expect_device_offsets<strata::soa_mapping<big_record>>();
  expect_device_offsets<strata::aos_mapping<mixed>>();
  expect_device_offsets<strata::aos_mapping<big_record>>();
  expect_device_offsets<strata::aosoa_mapping<mixed>>();
  expect_device_offsets<strata::aosoa_mapping<big_record, 64>>();
}
