// Record types shared by the tests, benchmarks and SASS probes: the seed cases of the design card.
#pragma once

#include <strata/reflect/reflect.hpp>

#include <cstdint>
#include <cuda/std/cstdint>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

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

#if defined(__CUDACC__)
using vec3_t = float3;
using half2_t = __half2;
#else
struct vec3_t {  // float3's size and alignment, for the host backend
  float x, y, z;
};
struct alignas(4) half2_t {  // __half2's bits
  std::uint16_t x, y;
};
#endif

// The conversion issue's mixed record: a 12-byte vector (not vectorizable as a column), an int, a
// pair of halves and a byte: 21 bytes of data in a 24-byte struct.
struct mixed_convert {
  BOOST_HANA_DEFINE_STRUCT(mixed_convert, (vec3_t, pos), (int, id), (half2_t, q), (std::uint8_t, flags));
};

}  // namespace strata_test

BOOST_HANA_ADAPT_STRUCT(strata_test::legacy, id, w);
