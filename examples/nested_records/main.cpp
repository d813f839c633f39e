// SPDX-License-Identifier: Apache-2.0
// Nested records with float3 members: CUDA's vector types (and reflected structs, and arrays)
// inside a record are opened into leaf columns named by their paths (pos.x, pos.y, ...), every
// column 16-byte ready; functors still see the user's struct, float3 members and all. A projection
// (project<&body::pos, &body::vel>) lets a step read and write only the columns it needs.
#include <strata/strata.hpp>

#include <vector_types.h>  // float3: CUDA's own, on both backends

#include <cmath>
#include <cstdio>
#include <vector>

struct body {
  BOOST_HANA_DEFINE_STRUCT(body, (float3, pos), (float3, vel), (float, mass), (int, id));
};

// The step needs pos and vel only. On a projection of those six columns it gets a body whose other
// fields are zero, and only pos and vel are stored back.
struct drift {
  float dt;
  STRATA_HD body operator()(body r) const {
    r.pos.x += r.vel.x * dt, r.pos.y += r.vel.y * dt, r.pos.z += r.vel.z * dt;
    return r;
  }
};
struct momentum_z {
  STRATA_HD double operator()(const body& b) const { return double(b.mass) * b.vel.z; }
};
struct plus {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

int main() {
  using d = strata::layout::record_descriptor<body>;
  std::printf("body: %zu leaves:", d::leaves);
  strata::reflect::for_each_leaf<body>([](auto l) {
    constexpr auto name = strata::reflect::leaf_name<body, decltype(l)::value>();
    std::printf(" %.*s", int(name.size()), name.data());
  });
  std::printf("\n");

  const int n = 777;
  std::vector<body> input(n);
  for (int i = 0; i < n; ++i) input[std::size_t(i)] = {{float(i), 0, 0}, {0, 1, float(i % 3)}, 2.0f, i};
  strata::soa_vector<body> bodies(input);

  auto motion = strata::project<&body::pos, &body::vel>(bodies);  // 6 of the 8 columns
  for (int s = 0; s < 10; ++s) strata::transform(motion, motion, drift{0.5f});
  const double pz = strata::transform_reduce(bodies, momentum_z{}, 0.0, plus{});
  // One leaf of a nested member as a column: strata::member names the path.
  const strata::column_stats y = strata::statistics(bodies.column<strata::member<&body::pos, &float3::y>>());

  const std::vector<body> out = bodies.to_host();
  bool ok = out.size() == std::size_t(n) && y.min == 5.0 && y.max == 5.0;
  double want_pz = 0;
  for (int i = 0; ok && i < n; ++i) {
    const body& b = out[std::size_t(i)];
    ok = b.pos.x == float(i) && b.pos.y == 5.0f && b.pos.z == 5.0f * float(i % 3) && b.vel.z == float(i % 3) && b.mass == 2.0f && b.id == i;
    want_pz += 2.0 * (i % 3);
  }
  ok = ok && pz == want_pz;
  std::printf("%d bodies after 10 steps: pos.y %.1f for all, total z momentum %.0f: %s\n", n, y.mean, pz, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
