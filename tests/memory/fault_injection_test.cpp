// SPDX-License-Identifier: Apache-2.0
// Fault injection: every operation that allocates is run once per allocation it makes, with that
// allocation failing; after each failure the container holds what it held and nothing leaked.
#include <strata/strata.hpp>

#include "common/allocation_failures.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <functional>

using namespace strata_test;
using strata::memory_space;

namespace {

/// The sweep of common/allocation_failures.hpp: check(state) must hold after every failure.
template <class Make, class Op, class Check>
int fail_each_allocation(const char* name, Make make, Op op, Check check) {
  return sweep_allocation_failures(name, make, op, check, [](auto&) {}, false);
}

template <class C, class T>
void expect_holds(const C& c, const std::vector<T>& ref) {
  ASSERT_EQ(c.size(), ref.size());
  EXPECT_EQ(first_difference<T>(c.to_host(), ref), -1);
}

}  // namespace

template <class C>
class FaultInjection : public ::testing::Test {};
using Containers = ::testing::Types<strata::soa_vector<particle>, strata::aos_vector<particle>,
                                    strata::soa_vector<mixed, memory_space::pinned>, strata::aos_vector<mixed, memory_space::host>>;
TYPED_TEST_SUITE(FaultInjection, Containers);

TYPED_TEST(FaultInjection, EveryContainerOperation) {
  using C = TypeParam;
  using T = typename C::value_type;
  STRATA_SEED_TRACE();
  const auto ref = random_records<T>(5000), other = random_records<T>(3000, 1);
  auto make = [&] { return C(ref); };
  auto holds = [&](const C& c) { expect_holds(c, ref); };
  const T value = other[0];
  std::vector<std::pair<const char*, std::function<void(C&)>>> ops = {
      {"reserve", [](C& c) { c.reserve(100000); }},
      {"resize", [](C& c) { c.resize(200000); }},
      {"resize with value", [&](C& c) { c.resize(70000, value); }},
      {"assign", [&](C& c) { c.assign(other); }},
      {"copy assign", [&](C& c) { C src(other); c = src; }},
      {"copy construct and swap", [](C& c) { C copy(c); copy.resize(9000); c.swap(copy); }},
  };
  int allocations = 0;
  for (auto& [name, op] : ops) allocations += fail_each_allocation(name, make, op, holds);
  EXPECT_GT(allocations, 0) << "no operation allocated: the harness tested nothing";
}

TEST(FaultInjectionConvert, ConversionsLeaveSourcesIntact) {
  STRATA_SEED_TRACE();
  const auto ref = random_records<particle>(4097);
  auto make = [&] { return std::pair{strata::aos_vector<particle>(ref), strata::soa_vector<particle>(ref)}; };
  auto holds = [&](const auto& s) {
    expect_holds(s.first, ref);
    expect_holds(s.second, ref);
  };
  fail_each_allocation("to_soa", make, [](auto& s) { (void)strata::to_soa(s.first); }, holds);
  fail_each_allocation("to_aos", make, [](auto& s) { (void)strata::to_aos(s.second); }, holds);
  fail_each_allocation("host round trip", make, [&](auto& s) { s.second.assign(strata::soa_vector<particle>(ref).to_host()); }, holds);
}
