// SPDX-License-Identifier: Apache-2.0
// The 16-bit floating-point storage types strata's row algorithms accept, with float conversion.
// CUDA's own __half / __nv_bfloat16 on the CUDA backend; bit-compatible stand-ins on the host.
#pragma once

#include <strata/config.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace strata {

#if defined(STRATA_BACKEND_CUDA)
using half = __half;
using bfloat16 = __nv_bfloat16;
STRATA_HD inline float to_float(half h) { return __half2float(h); }
STRATA_HD inline float to_float(bfloat16 b) { return __bfloat162float(b); }
template <class T>
STRATA_HD inline T from_float(float f) {
  if constexpr (std::is_same_v<T, half>) return __float2half_rn(f);
  else if constexpr (std::is_same_v<T, bfloat16>) return __float2bfloat16_rn(f);
  else return T(f);
}
#else
/// IEEE binary16, stored as bits; converted through the compiler's _Float16.
struct half {
  _Float16 value;
};
/// bfloat16: the upper 16 bits of a float, rounded to nearest even.
struct bfloat16 {
  std::uint16_t bits;
};
inline float to_float(half h) { return float(h.value); }
inline float to_float(bfloat16 b) {
  std::uint32_t u = std::uint32_t(b.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
template <class T>
inline T from_float(float f) {
  if constexpr (std::is_same_v<T, half>) {
    return half{static_cast<_Float16>(f)};
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{std::uint16_t((u >> 16) | 0x40)};  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return bfloat16{std::uint16_t(u >> 16)};
  } else {
    return T(f);
  }
}
#endif
STRATA_HD inline float to_float(float f) { return f; }

}  // namespace strata
