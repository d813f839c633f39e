// SPDX-License-Identifier: Apache-2.0
// Must not compile: a block of 2^62 + 1 seven-float records wraps size_t (its offsets would overlap).
#include <strata/container/aosoa_vector.hpp>
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, m));
};
int main() { return int(strata::aosoa_mapping<rec, (std::size_t(1) << 62) + 1>::block_bytes); }
