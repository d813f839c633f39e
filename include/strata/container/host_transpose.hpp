// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA between a host array of records and a container's columns: loops over records for
// host and pinned memory, the pinned, chunked device pipeline of strata/convert for device memory
// (on the host backend that pipeline runs the device's tile logic on the CPU).
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/convert/host_transfer.hpp>
#include <strata/memory/resource.hpp>


namespace strata::detail {

template <class T, class M>
void transpose_to_columns(const T* in, index_t n, const basic_view<T, M>& out) {
STRATA_PARALLEL_FOR_IF(n > (1 << 16))
  for (index_t i = 0; i < n; ++i) out.store(i, in[i]);
}

template <class T, class M>
void transpose_to_records(const basic_view<const T, M>& in, T* out, index_t n) {
STRATA_PARALLEL_FOR_IF(n > (1 << 16))
  for (index_t i = 0; i < n; ++i) out[i] = in.load(i);
}

template <class T, class M>
void aos_to_soa_from_host(const T* in, std::size_t n, const basic_view<T, M>& out, memory_space space) {
  if (space == memory_space::device) {
    host_aos_to_soa(in, index_t(n), out, stream_t{});  // pinned staging + device transpose
    return;
  }
  transpose_to_columns(in, index_t(n), out);
}

template <class T, class M>
void soa_to_aos_to_host(const basic_view<const T, M>& in, T* out, memory_space space) {
  if (space == memory_space::device) {
    soa_to_host_aos(in, out, stream_t{});
    return;
  }
  transpose_to_records(in, out, in.size());
}

}  // namespace strata::detail
