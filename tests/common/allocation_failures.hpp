// SPDX-License-Identifier: Apache-2.0
// The allocation-failure sweep shared by the fault-injection tests: an operation runs once per
// allocation it makes, with that allocation failing (k = 0, 1, ... until the call goes through).
#pragma once

#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <gtest/gtest.h>

#include <string>

namespace strata_test {

inline long sweep_fail_at = -1;
inline bool sweep_fail_kth(long ordinal, std::size_t, strata::memory_space) { return ordinal == sweep_fail_at; }

/// Runs op on a fresh state from make() with its k-th allocation failing, for k = 0, 1, ...; after
/// each failure unchanged(state) must hold and nothing may leak. With retry, op then runs again on
/// the same state and must succeed with done(state) holding; done(state) is also checked once op
/// runs through without failing. Returns how many allocations op made (-1 after a failed check
/// with retry, or when op still fails after 64 allocations).
template <class Make, class Op, class Unchanged, class Done>
int sweep_allocation_failures(const std::string& name, Make make, Op op, Unchanged unchanged, Done done, bool retry) {
  for (long k = 0; k < 64; ++k) {
    SCOPED_TRACE(name + ": allocation " + std::to_string(k) + " fails");
    auto state = make();
    const long live = strata::testing::live_allocations.load();
    sweep_fail_at = strata::testing::allocation_ordinal.load() + k;
    strata::testing::fail_allocation_if = sweep_fail_kth;
    bool threw = false;
    try {
      op(state);
    } catch (const strata::out_of_memory& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
    }
    strata::testing::fail_allocation_if = nullptr;
    if (!threw) {
      done(state);
      return int(k);
    }
    unchanged(state);
    EXPECT_EQ(strata::testing::live_allocations.load(), live) << "allocations leaked";
    if (retry) {
      op(state);  // the next call works
      done(state);
      if (::testing::Test::HasFailure()) return -1;
    }
  }
  ADD_FAILURE() << name << ": still failing after 64 allocations";
  return -1;
}

}  // namespace strata_test
