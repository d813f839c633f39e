// Record types shared by the tests, benchmarks and SASS probes: the seed cases of the design card.
#pragma once

#include <strata/reflect/reflect.hpp>

#include <array>
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

// A 12-byte struct shaped like float3 but not reflected: strata opens it into leaves x, y, z as it
// does CUDA's vector types.
struct float3_like {
  float x, y, z;
};
// A 12-byte struct strata cannot open (neither reflected nor shaped like a vector type): one opaque
// leaf whose column cannot take 16-byte vectors.
struct opaque12 {
  float v[3];
};
struct with_opaque {
  BOOST_HANA_DEFINE_STRUCT(with_opaque, (opaque12, pos), (int, id));
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
struct vec3_t {  // float3's size, alignment and members, for the host backend
  float x, y, z;
};
struct alignas(4) half2_t {  // __half2's bits: one opaque 4-byte leaf, as __half2 is
  std::uint16_t bits[2];
};
#endif

// The conversion issue's mixed record: a 12-byte vector (three float leaves), an int, a pair of
// halves (one 4-byte leaf) and a byte: 21 bytes of data in a 24-byte struct.
struct mixed_convert {
  BOOST_HANA_DEFINE_STRUCT(mixed_convert, (vec3_t, pos), (int, id), (half2_t, q), (std::uint8_t, flags));
};

// ---- records as simulation codes write them: nested structs, arrays, vector types ----------------
struct vec3 {
  BOOST_HANA_DEFINE_STRUCT(vec3, (float, x), (float, y), (float, z));
};
// The particle: 7 float leaves (pos.x .. vel.z, mass), as the flat particle.
struct nested_particle {
  BOOST_HANA_DEFINE_STRUCT(nested_particle, (vec3, pos), (vec3, vel), (float, mass));
};

#if defined(__CUDACC__)
using dvec2_t = double2;
#else
struct alignas(16) dvec2_t {  // double2's size, alignment and members, for the host backend
  double x, y;
};
#endif

// Leaves of four sizes: a std::array of doubles, a vector type of floats (float3), 16- and 8-bit
// integers and an array of bytes. The narrowest leaf (1 byte) makes packets of 16 records.
struct cell_record {
  BOOST_HANA_DEFINE_STRUCT(cell_record, (std::array<double, 3>, w), (vec3_t, v), (std::int16_t, k), (std::uint8_t, flags),
                           (std::array<std::uint8_t, 2>, tag));
};

// Deeper nesting, a vector type of doubles and a record over 64 bytes (104 bytes, 19 leaves).
struct inner_block {
  BOOST_HANA_DEFINE_STRUCT(inner_block, (double, e), (std::array<float, 4>, f));
};
struct big_record {
  BOOST_HANA_DEFINE_STRUCT(big_record, (inner_block, a), (dvec2_t, d), (inner_block, b), (std::array<std::int16_t, 5>, s),
                           (std::uint8_t, u), (std::int32_t, id));
};

// 64 leaves (the number strata promises at least): arrays of floats, doubles, int32 and int16, an
// array of six small structs of mixed leaves, and a byte.
struct quad {
  BOOST_HANA_DEFINE_STRUCT(quad, (float, a), (float, b), (std::int16_t, c), (std::uint8_t, d));
};
struct wide64 {
  BOOST_HANA_DEFINE_STRUCT(wide64, (std::array<float, 16>, f), (std::array<double, 8>, g), (std::array<quad, 6>, q),
                           (std::array<std::int32_t, 8>, i), (std::uint8_t, tag), (std::array<std::int16_t, 7>, s));
};

// The same three members adapted in each of their six orders: strata must place every field
// where the compiler put it, whatever order Hana lists it in.
#define STRATA_TEST_ORDERED(name) \
  struct name {                    \
    double a;                      \
    float b;                       \
    std::uint16_t c;               \
  };
STRATA_TEST_ORDERED(order_abc)
STRATA_TEST_ORDERED(order_acb)
STRATA_TEST_ORDERED(order_bac)
STRATA_TEST_ORDERED(order_bca)
STRATA_TEST_ORDERED(order_cab)
STRATA_TEST_ORDERED(order_cba)
#undef STRATA_TEST_ORDERED

// The reproduction: a float and an int adapted in reverse order.
struct pair_ab {
  float a;
  int b;
};

}  // namespace strata_test

BOOST_HANA_ADAPT_STRUCT(strata_test::legacy, id, w);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_abc, a, b, c);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_acb, a, c, b);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_bac, b, a, c);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_bca, b, c, a);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_cab, c, a, b);
BOOST_HANA_ADAPT_STRUCT(strata_test::order_cba, c, b, a);
BOOST_HANA_ADAPT_STRUCT(strata_test::pair_ab, b, a);
