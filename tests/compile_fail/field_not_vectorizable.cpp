// SPDX-License-Identifier: Apache-2.0
// Must not compile: vector access demanded for a record with a 12-byte leaf strata cannot open
// (an unreflected struct that is not shaped like a vector type).
#include <strata/layout/descriptor.hpp>
struct f3 { float v[3]; };
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (f3, pos), (int, id));
};
int main() { return static_cast<int>(strata::layout::require_vectorizable_leaves<rec>()); }
