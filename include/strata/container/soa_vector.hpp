// SPDX-License-Identifier: Apache-2.0
// soa_vector<T, Space>: the owning container (basic_vector.hpp) over the SoA mapping: one padded
// allocation, one column per leaf of T, every column on a 256-byte boundary.
#pragma once

#include <strata/config.hpp>
#include <strata/container/basic_vector.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/layout/soa_mapping.hpp>

namespace strata {

template <class T, memory_space Space = memory_space::device>
using soa_vector = basic_vector<T, soa_mapping<T>, Space>;
template <class T>
using host_soa_vector = soa_vector<T, memory_space::host>;
template <class T>
using pinned_soa_vector = soa_vector<T, memory_space::pinned>;

}  // namespace strata
