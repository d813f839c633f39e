// SPDX-License-Identifier: Apache-2.0
// Checked arithmetic for sizes, offsets, strides and counts that come from a caller or a file:
// every product and sum that sizes memory or forms an address is tested for overflow, and a
// failure throws size_error naming the quantity instead of wrapping into a small, wrong value.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace strata::detail {

/// a * b, or size_error naming `what`.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw size_error(std::string("strata: ") + what + ": " + std::to_string(a) + " x " + std::to_string(b) + " overflows " +
                     std::to_string(std::numeric_limits<std::size_t>::digits) + " bits");
  return r;
}
/// a + b, or size_error naming `what`.
inline std::size_t checked_add(std::size_t a, std::size_t b, const char* what) {
  std::size_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw size_error(std::string("strata: ") + what + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows " +
                     std::to_string(std::numeric_limits<std::size_t>::digits) + " bits");
  return r;
}
/// A count from input as an unsigned size: negative counts are refused.
inline std::size_t checked_count(std::int64_t n, const char* what) {
  if (n < 0) throw size_error(std::string("strata: ") + what + ": negative count " + std::to_string(n));
  return std::size_t(n);
}
/// Whether [offset, offset + size) lies inside [0, limit), without forming offset + size.
constexpr bool range_within(std::size_t offset, std::size_t size, std::size_t limit) noexcept {
  return offset <= limit && size <= limit - offset;
}
/// n elements of `bytes` each from p end inside the address space (p + n * bytes does not wrap);
/// returns n * bytes.
inline std::size_t checked_extent(const void* p, std::size_t n, std::size_t bytes, const char* what) {
  const std::size_t total = checked_mul(n, bytes, what);
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
  if (total > std::numeric_limits<std::uintptr_t>::max() - at)
    throw size_error(std::string("strata: ") + what + ": " + std::to_string(total) + " bytes from address " + std::to_string(at) +
                     " run past the end of the address space");
  return total;
}

}  // namespace strata::detail
