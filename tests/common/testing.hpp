// SPDX-License-Identifier: Apache-2.0
// Test helpers: fresh random records (seed printed on failure), the size list of the design card,
// field-wise bitwise comparison and poisoning.
#pragma once

#include <strata/layout/descriptor.hpp>
#include <strata/reflect/leaves.hpp>
#include <strata/memory/resource.hpp>

#include <gtest/gtest.h>

#include "../../fixtures/random.hpp"
#include "records.hpp"

#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

namespace strata_test {

/// A fresh seed per run unless STRATA_TEST_SEED pins one; tests print it with SCOPED_TRACE.
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("STRATA_TEST_SEED")) return std::stoull(s);
    return std::uint64_t(std::random_device{}()) << 32 | std::random_device{}();
  }();
  return seed;
}
#define STRATA_SEED_TRACE() SCOPED_TRACE("STRATA_TEST_SEED=" + std::to_string(::strata_test::test_seed()))

/// Set by scripts/gpu-check.sh for compute-sanitizer runs, which are 10-100x slower: the largest
/// sizes are left out there (they run in the plain GPU pass).
inline bool under_sanitizer() { return std::getenv("STRATA_TEST_SANITIZER") != nullptr; }

template <class T>
std::vector<std::size_t> sizes_for() {
  constexpr std::size_t w = strata::layout::record_descriptor<T>::packet_width;
  if (under_sanitizer()) return {0, 1, 3, w - 1, w, w + 1, 99991};
  return {0, 1, 3, w - 1, w, w + 1, 99991, 1000000};
}

/// Fresh random records for a test: the run's seed (printed by STRATA_SEED_TRACE), mixed with n and salt.
template <class T>
std::vector<T> random_records(std::size_t n, std::uint64_t salt = 0) {
  return strata_fixtures::seeded_records<T>(n, test_seed(), salt);
}

/// Records filled with 0xA5 bytes: any element an operation fails to write shows up. A bool holds
/// 0 or 1 only (any other byte is not a bool, and reading it is undefined): bool leaves are true.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  if (n) std::memset(static_cast<void*>(v.data()), 0xA5, n * sizeof(T));
  strata::reflect::for_each_leaf<T>([&](auto i) {
    constexpr std::size_t L = decltype(i)::value;
    if constexpr (std::is_same_v<strata::reflect::leaf_type_t<T, L>, bool>) {
      const unsigned char yes = 1;
      for (auto& r : v) std::memcpy(&strata::reflect::leaf<L>(r), &yes, 1);
    }
  });
  return v;
}

/// Leaf by leaf, bit for bit (padding bytes inside T are not data and are not compared).
template <class T>
bool same_bits(const T& a, const T& b) {
  bool eq = true;
  strata::reflect::for_each_leaf<T>([&](auto i) {
    constexpr std::size_t L = decltype(i)::value;
    eq = eq && std::memcmp(&strata::reflect::leaf<L>(a), &strata::reflect::leaf<L>(b), sizeof(strata::reflect::leaf<L>(a))) == 0;
  });
  return eq;
}

/// Index of the first record that differs, or -1.
template <class T>
long first_difference(std::span<const T> got, std::span<const T> want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i])) return long(i);
  return -1;
}

/// Names the first leaf that differs at the first differing record, with both values' bytes.
template <class T>
std::string describe_difference(std::span<const T> got, std::span<const T> want) {
  long i = first_difference(got, want);
  if (i < 0) return "equal";
  if (got.size() != want.size()) return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  std::string out = "record " + std::to_string(i) + ":";
  strata::reflect::for_each_leaf<T>([&](auto f) {
    constexpr std::size_t L = decltype(f)::value;
    constexpr std::size_t bytes = sizeof(strata::reflect::leaf_type_t<T, L>);
    const auto* a = reinterpret_cast<const unsigned char*>(&strata::reflect::leaf<L>(got[i]));
    const auto* b = reinterpret_cast<const unsigned char*>(&strata::reflect::leaf<L>(want[i]));
    if (std::memcmp(a, b, bytes) == 0) return;
    char hex[8];
    out += " leaf '" + std::string(strata::reflect::leaf_name<T, L>()) + "' got";
    for (std::size_t k = 0; k < bytes; ++k) std::snprintf(hex, sizeof hex, " %02x", a[k]), out += hex;
    out += " want";
    for (std::size_t k = 0; k < bytes; ++k) std::snprintf(hex, sizeof hex, " %02x", b[k]), out += hex;
  });
  return out;
}

/// The message of the exception f throws, or "(nothing thrown)".
template <class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

/// Copies n elements from any memory space to a host vector (bools as bytes of 0 or 1:
/// std::vector<bool> holds bits).
template <class F>
auto fetch(const F* p, std::size_t n) {
  using E = std::conditional_t<std::is_same_v<std::remove_const_t<F>, bool>, unsigned char, std::remove_const_t<F>>;
  std::vector<E> out(n);
  strata::copy_bytes(out.data(), p, n * sizeof(F));
  return out;
}

}  // namespace strata_test
