// SPDX-License-Identifier: Apache-2.0
// aos_vector<T, Space>: the owning container (basic_vector.hpp) over the padded AoS mapping: an
// array of padded, aligned records (layout::aligned_record<T>) with the API every strata container
// has (views from lvalues only, operations on the container's own GPU), viewed as aos_view<T>
// (whole records; a reference to any member is a reference into one object). data() gives the
// padded records.
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/container/basic_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/layout/aos_mapping.hpp>

namespace strata {

template <class T, memory_space Space = memory_space::device>
using aos_vector = basic_vector<T, aos_mapping<T>, Space>;

template <class T>
using host_aos_vector = aos_vector<T, memory_space::host>;

}  // namespace strata
