// SPDX-License-Identifier: Apache-2.0
// The padded AoS mapping: records one after another, each padded and aligned as
// layout::aligned_record<T> so a whole record moves as one or two 16-byte accesses. A record
// mapping: aos_vector is the generic owning container over it, and its view (aos_view) is written
// over whole records rather than leaves (a reference to any member, struct members included, is a
// reference into one object).
#pragma once

#include <strata/config.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/reflect/leaves.hpp>

#include <array>
#include <cstddef>
#include <limits>

namespace strata {

template <class T>
struct aos_mapping {
  using record = T;
  using stored = layout::aligned_record<T>;
  using descriptor = layout::record_descriptor<T>;
  static constexpr const char* container_name = "aos_vector";
  static constexpr std::size_t leaves = descriptor::leaves;
  static constexpr std::size_t stride = sizeof(stored);
  static constexpr std::size_t capacity_quantum = 1;
  static constexpr std::size_t max_capacity = (std::numeric_limits<std::size_t>::max() / 2) / stride;
  static constexpr std::array<std::size_t, leaves> offsets = [] {
    std::array<std::size_t, leaves> o{};
    reflect::for_each_leaf<T>([&](auto i) { o[i] = reflect::leaf_offset<T, decltype(i)::value>(); });
    return o;
  }();
  static constexpr std::size_t round_capacity(std::size_t n) { return n; }
  static constexpr std::size_t bytes(std::size_t capacity) { return capacity * stride; }
  static constexpr std::size_t leaf_offset(std::size_t /*capacity*/, std::size_t i, std::size_t leaf) {
    return i * stride + layout::table_at<offsets>(leaf);
  }
};

}  // namespace strata
