// SPDX-License-Identifier: Apache-2.0
// A downstream project: includes the installed headers and describes a record.
#include <strata/layout/descriptor.hpp>
#include <strata/version.hpp>
#include <cstdio>
struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz),
                           (float, mass));
};
int main() {
  using d = strata::layout::record_descriptor<particle>;
  std::printf("strata %s\n", strata::version::string);
  std::printf("particle: %zu leaves, %zu B packed, %zu B padded\n", d::leaves, d::packed_size, d::padded_size);
  return d::padded_size == 32 ? 0 : 1;
}
