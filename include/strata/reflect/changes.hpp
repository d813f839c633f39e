// SPDX-License-Identifier: Apache-2.0
// What an in-place update changed: leaf values compared bit for bit with the values it loaded, so
// for_each and in-place transform store back only the leaves a functor changed (a drift writes its
// 3 positions, not the 4 velocities and the mass it read or passed through). Where the functor
// passes a leaf through, the comparison is between one value and itself: the compiler folds it
// and removes the store, and the load too where nothing else reads it.
#pragma once

#include <strata/config.hpp>
#include <strata/reflect/leaves.hpp>

#include <cstdint>
#include <cstring>
#include <utility>

namespace strata::detail {

/// True when a and b differ in any bit (-0.0 and 0.0 differ; a NaN equals itself).
template <class F>
STRATA_HD inline bool bits_differ(const F& a, const F& b) {
  if constexpr (sizeof(F) % 4 == 0) {
    constexpr std::size_t n = sizeof(F) / 4;
    std::uint32_t x[n], y[n];
    std::memcpy(x, &a, sizeof(F));
    std::memcpy(y, &b, sizeof(F));
    std::uint32_t d = 0;
    STRATA_UNROLL
    for (std::size_t k = 0; k < n; ++k) d |= x[k] ^ y[k];
    return d != 0;
  } else {
    unsigned char x[sizeof(F)], y[sizeof(F)];
    std::memcpy(x, &a, sizeof(F));
    std::memcpy(y, &b, sizeof(F));
    unsigned d = 0;
    STRATA_UNROLL
    for (std::size_t k = 0; k < sizeof(F); ++k) d |= unsigned(x[k] ^ y[k]);
    return d != 0;
  }
}

/// One flag per leaf of T: set where some record's value of that leaf changed.
template <class T>
struct leaf_changes {
  static constexpr std::size_t count = reflect::leaf_count<T>;
  bool leaf[count > 0 ? count : 1] = {};

  /// Flags the leaves whose bits differ between a record before and after an update.
  STRATA_HD void note(const T& before, const T& after) {
    [&]<std::size_t... L>(std::index_sequence<L...>) {
      ((leaf[L] = leaf[L] || bits_differ(reflect::leaf<L>(before), reflect::leaf<L>(after))), ...);
    }(std::make_index_sequence<count>{});
  }
};

}  // namespace strata::detail
