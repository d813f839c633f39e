// SPDX-License-Identifier: Apache-2.0
// Must not compile: a view of a temporary container would dangle as soon as the statement ends.
#include <strata/container/soa_vector.hpp>
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (float, x), (int, id));
};
int main() {
  strata::soa_view<rec> v = strata::soa_vector<rec>(8);
  return int(v.size());
}
