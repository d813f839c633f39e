// SPDX-License-Identifier: Apache-2.0
// Random-access record iterators over SoA / AoS views and projections, tagged with the Thrust system
// of the memory they walk, so Thrust and CUB algorithms dispatch to the backend in use.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>

#include <thrust/iterator/iterator_facade.h>
#include <thrust/iterator/iterator_categories.h>

#include <cstddef>

namespace strata {

/// The Thrust system for a memory space: device memory runs on the device system (CUDA or, in the
/// host backend, OpenMP), host and pinned memory on the host system.
template <memory_space Space>
using thrust_system_t = std::conditional_t<Space == memory_space::device, thrust::device_system_tag, thrust::host_system_tag>;

/// Iterator over anything with size(), operator[](index_t) returning a proxy, and value_type.
template <class View, class System = thrust::device_system_tag>
class record_iterator
    : public thrust::iterator_facade<record_iterator<View, System>, typename View::value_type, System,
                                     thrust::random_access_traversal_tag, typename View::reference, std::ptrdiff_t> {
 public:
  using view_type = View;
  record_iterator() = default;
  STRATA_HD record_iterator(const View& v, index_t i) : view_(v), i_(i) {}

  STRATA_HD const View& view() const { return view_; }
  STRATA_HD index_t index() const { return i_; }

 private:
  friend class thrust::iterator_core_access;
  STRATA_HD typename View::reference dereference() const { return view_[i_]; }
  STRATA_HD bool equal(const record_iterator& o) const { return i_ == o.i_; }
  STRATA_HD void increment() { ++i_; }
  STRATA_HD void decrement() { --i_; }
  STRATA_HD void advance(std::ptrdiff_t n) { i_ += n; }
  STRATA_HD std::ptrdiff_t distance_to(const record_iterator& o) const { return o.i_ - i_; }

  View view_{};
  index_t i_ = 0;
};

template <class System = thrust::device_system_tag, class View>
STRATA_HD record_iterator<View, System> records_begin(const View& v) {
  return {v, 0};
}
template <class System = thrust::device_system_tag, class View>
STRATA_HD record_iterator<View, System> records_end(const View& v) {
  return {v, v.size()};
}

}  // namespace strata
