// SPDX-License-Identifier: Apache-2.0
// Must not compile: a record with a user-defined copy constructor.
#include <strata/layout/descriptor.hpp>
struct owning {
  BOOST_HANA_DEFINE_STRUCT(owning, (float, x));
  owning() = default;
  owning(const owning& o) : x(o.x) {}
};
int main() { return static_cast<int>(strata::layout::record_descriptor<owning>::packed_size); }
