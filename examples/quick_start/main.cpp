// SPDX-License-Identifier: Apache-2.0
// Quick start: a struct of the user's, reflected with Boost.Hana, stored as SoA on the device,
// stepped with strata::transform, reduced with strata::transform_reduce, and copied back as AoS.
#include <strata/strata.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, vx), (float, vy), (float, mass));
};

// Functors run on the device: STRATA_HD is __host__ __device__ on the CUDA backend.
struct drift {
  float dt;
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * dt, p.y += p.vy * dt;
    return p;
  }
};
struct kinetic {
  STRATA_HD double operator()(const particle& p) const { return 0.5 * p.mass * (double(p.vx) * p.vx + double(p.vy) * p.vy); }
};
struct plus {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

int main() {
  std::vector<particle> input(1000);  // AoS, as files and old code give it
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = {float(i), 0.0f, 1.0f, -2.0f, 0.5f};

  strata::soa_vector<particle> ps(input);  // SoA on the device: one allocation, a column per field
  strata::transform(ps, ps, drift{0.1f});  // 16-byte loads and stores per column
  const double energy = strata::transform_reduce(ps, kinetic{}, 0.0, plus{});
  const std::vector<particle> out = ps.to_host();  // SoA -> AoS

  // Each particle moved by (0.1, -0.2); each holds 0.5 * 0.5 * (1 + 4) of kinetic energy.
  bool ok = std::abs(energy - 1000 * 1.25) < 1e-9;
  for (std::size_t i = 0; i < out.size(); ++i) ok = ok && out[i].x == float(i) + 0.1f && out[i].y == -0.2f;
  std::printf("%zu particles, kinetic energy %.2f: %s\n", out.size(), energy, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
