#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/layout/aos_mapping.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/layout/soa_mapping.hpp>

#include "common/records.hpp"

#include <gtest/gtest.h>

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
