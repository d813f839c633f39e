// SPDX-License-Identifier: Apache-2.0
// Must not compile: a const view reads only, and a whole struct member reached through get<> is no
// exception (the member reference names the const view and how to get a mutable one).
#include <strata/container/soa_vector.hpp>
struct vec3 {
  BOOST_HANA_DEFINE_STRUCT(vec3, (float, x), (float, y), (float, z));
};
struct body {
  BOOST_HANA_DEFINE_STRUCT(body, (vec3, pos), (vec3, vel), (float, mass));
};
int main() {
  strata::host_soa_vector<body> bodies(4);
  strata::soa_view<const body> v = bodies.const_view();
  strata::get<&body::vel>(v[0]) = vec3{1, 2, 3};
  return 0;
}
