// SPDX-License-Identifier: Apache-2.0
// Must not compile: a record with a pointer member two levels down; the diagnostic names its path.
#include <strata/layout/descriptor.hpp>
struct node {
  BOOST_HANA_DEFINE_STRUCT(node, (float, w), (const char*, label));
};
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (int, id), (node, head));
};
int main() { return static_cast<int>(strata::layout::record_descriptor<rec>::packed_size); }
