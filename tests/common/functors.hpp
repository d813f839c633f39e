// Functors shared by tests, benchmarks and examples (plain structs: they run on host and device).
#pragma once

#include <strata/config.hpp>

#include "records.hpp"

namespace strata_test {

/// Drift with dt = 0.5: the product is exact, so host, device and FMA agree bit for bit.
struct drift {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * 0.5f;
    p.y += p.vy * 0.5f;
    p.z += p.vz * 0.5f;
    return p;
  }
};

struct double_mass {
  template <class Ref>
  STRATA_HD void operator()(Ref r) const {
    strata::get<&particle::mass>(r) *= 2.0f;
  }
};

struct add_particles {
  STRATA_HD particle operator()(const particle& a, const particle& b) const {
    return {a.x + b.x, a.y + b.y, a.z + b.z, a.vx + b.vx, a.vy + b.vy, a.vz + b.vz, a.mass + b.mass};
  }
};

struct kinetic_energy {
  STRATA_HD double operator()(const particle& p) const {
    return 0.5 * double(p.mass) * (double(p.vx) * p.vx + double(p.vy) * p.vy + double(p.vz) * p.vz);
  }
};

struct plus_d {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

struct plus_f {
  STRATA_HD float operator()(float a, float b) const { return a + b; }
};
struct min_f {
  STRATA_HD float operator()(float a, float b) const { return a < b ? a : b; }
};
struct max_u8 {
  STRATA_HD std::uint8_t operator()(std::uint8_t a, std::uint8_t b) const { return a > b ? a : b; }
};

/// Kick in a harmonic field: v -= k x dt (k = 0.25, dt = 0.5: exact products).
struct kick {
  template <class P>
  STRATA_HD void operator()(P& p) const {
    p.vx -= p.x * 0.125f;
    p.vy -= p.y * 0.125f;
    p.vz -= p.z * 0.125f;
  }
};

struct bump_mixed {
  STRATA_HD mixed operator()(mixed m) const {
    m.energy *= 2.0;
    m.cell = static_cast<std::uint16_t>(m.cell + 1);
    m.flags ^= 0x5A;
    return m;
  }
};

/// Bit-exact on any input: its fields hold random bytes (NaNs included, whose payloads float
/// arithmetic on the GPU would not keep), so it only moves and flips bits.
struct move_convert {
  STRATA_HD mixed_convert operator()(mixed_convert m) const {
    float t = m.pos.x;
    m.pos.x = m.pos.z;
    m.pos.z = t;
    m.id = int(unsigned(m.id) + 3u);
    m.flags = std::uint8_t(~m.flags);
    return m;
  }
};

/// Moves bits only (random bytes, NaNs included, stay as they are).
struct bump_opaque {
  STRATA_HD with_opaque operator()(with_opaque m) const {
    float t = m.pos.v[0];
    m.pos.v[0] = m.pos.v[2];
    m.pos.v[2] = t;
    m.id = int(unsigned(m.id) ^ 0x5A5A5A5Au);
    return m;
  }
};

/// The drift and kick on the nested particle (pos, vel as vec3): the functor sees the user's struct.
struct drift_nested {
  STRATA_HD nested_particle operator()(nested_particle p) const {
    p.pos.x += p.vel.x * 0.5f;
    p.pos.y += p.vel.y * 0.5f;
    p.pos.z += p.vel.z * 0.5f;
    return p;
  }
};
struct kick_nested {
  STRATA_HD void operator()(nested_particle& p) const {
    p.vel.x -= p.pos.x * 0.125f;
    p.vel.y -= p.pos.y * 0.125f;
    p.vel.z -= p.pos.z * 0.125f;
  }
};
struct kinetic_nested {
  STRATA_HD double operator()(const nested_particle& p) const {
    return 0.5 * double(p.mass) * (double(p.vel.x) * p.vel.x + double(p.vel.y) * p.vel.y + double(p.vel.z) * p.vel.z);
  }
};
/// Touches leaves of every size of the cell record; bit-exact on random bytes.
struct bump_cell {
  STRATA_HD cell_record operator()(cell_record c) const {
    double t = c.w[0];
    c.w[0] = c.w[2];
    c.w[2] = t;
    float u = c.v.x;
    c.v.x = c.v.z;
    c.v.z = u;
    c.k = static_cast<std::int16_t>(c.k + 3);
    c.flags ^= 0x3C;
    c.tag[1] = static_cast<std::uint8_t>(c.tag[0] + c.tag[1]);
    return c;
  }
};

struct heavy {
  STRATA_HD bool operator()(const particle& p) const { return p.mass > 0.25f; }
};

struct identity_particle {
  STRATA_HD particle operator()(const particle& p) const { return p; }
};

/// x += vx; also writes y, which an output projection without y must drop.
struct add_vx_to_x {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx;
    p.y = 1234.0f;
    return p;
  }
};
struct sub_vx_from_x {
  STRATA_HD particle operator()(particle p) const {
    p.x -= p.vx;
    p.mass = -1.0f;
    return p;
  }
};

struct by_x {
  STRATA_HD bool operator()(const particle& a, const particle& b) const { return a.x < b.x; }
};

}  // namespace strata_test
