// Record types shared by the tests, benchmarks and SASS probes: the seed cases of the design card.
#pragma once

#include <strata/reflect/reflect.hpp>

#include <cstdint>
#include <cuda/std/cstdint>

namespace strata_test {

// 7 floats = 28 bytes: the particle of the design card.
struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz),
                           (float, mass));
};

// {float a, b}: two 32-bit loads as declared; one 64-bit load once padded/aligned to 8.
struct two_floats {
  BOOST_HANA_DEFINE_STRUCT(two_floats, (float, a), (float, b));
};

// 3 x int8 -> __align__(4) record.
struct three_bytes {
  BOOST_HANA_DEFINE_STRUCT(three_bytes, (std::int8_t, r), (std::int8_t, g), (std::int8_t, b));
};

// float3-like 12-byte vector field -> 16-byte aligned record.
struct float3_like {
  float x, y, z;
};
struct with_float3 {
  BOOST_HANA_DEFINE_STRUCT(with_float3, (float, x), (float, y), (float, z));
};

// A 16-byte aligned vector after two floats: alignment propagates, 8 bytes of padding inserted.
struct alignas(16) vec4 {
  float x, y, z, w;
};
struct floats_then_vec4 {
  BOOST_HANA_DEFINE_STRUCT(floats_then_vec4, (float, a), (float, b), (vec4, v));
};

// 32 bytes: two 128-bit loads.
struct eight_floats {
  BOOST_HANA_DEFINE_STRUCT(eight_floats, (float, a), (float, b), (float, c), (float, d), (float, e), (float, f),
                           (float, g), (float, h));
};

// Mixed widths: the narrowest field (1 byte) decides the packet width.
struct mixed {
  BOOST_HANA_DEFINE_STRUCT(mixed, (double, energy), (float, x), (std::uint16_t, cell), (std::uint8_t, flags));
};

// An existing struct adapted rather than declared.
struct legacy {
  int id;
  float w;
};

}  // namespace strata_test

BOOST_HANA_ADAPT_STRUCT(strata_test::legacy, id, w);
