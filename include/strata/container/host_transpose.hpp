// AoS <-> SoA between a host array of records and a container's columns, through the host. Used by
// soa_vector's constructors and to_host(); the device-side conversion lives in strata/convert.
#pragma once

#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/memory/resource.hpp>

#include <cuda/std/array>

#include <vector>

namespace strata::detail {

template <class T>
void transpose_to_columns(const T* in, index_t n, const soa_view<T>& out) {
STRATA_PARALLEL_FOR_IF(n > (1 << 16))
  for (index_t i = 0; i < n; ++i) out.store(i, in[i]);
}

template <class T>
void transpose_to_records(const soa_view<const T>& in, T* out, index_t n) {
STRATA_PARALLEL_FOR_IF(n > (1 << 16))
  for (index_t i = 0; i < n; ++i) out[i] = in.load(i);
}

/// Host-memory image of n records' columns, packed one after another (no padding needed: host only).
template <class T>
struct host_columns {
  using layout_type = soa_layout<T>;
  explicit host_columns(index_t n) : n_(n) {
    std::size_t total = 0;
    for (std::size_t s : layout_type::field_sizes) total += s * std::size_t(n);
    bytes_.resize(total);
  }
  template <class P>
  cuda::std::array<P, layout_type::fields> columns() {
    cuda::std::array<P, layout_type::fields> c{};
    std::size_t off = 0;
    for (std::size_t i = 0; i < layout_type::fields; ++i) c[i] = bytes_.data() + off, off += layout_type::field_sizes[i] * std::size_t(n_);
    return c;
  }
  soa_view<T> view() { return soa_view<T>(columns<std::byte*>(), n_, n_); }
  index_t n_;
  std::vector<std::byte> bytes_;
};

template <class T>
void aos_to_soa_from_host(const T* in, std::size_t n, const soa_view<T>& out, memory_space space) {
  if (space != memory_space::device || !STRATA_DEVICE_IS_SEPARATE) {
    transpose_to_columns(in, index_t(n), out);
    return;
  }
  host_columns<T> staged{index_t(n)};
  transpose_to_columns(in, index_t(n), staged.view());
  auto src = staged.template columns<std::byte*>();
  for (std::size_t i = 0; i < soa_layout<T>::fields; ++i)
    copy_bytes_async(out.column_bytes(i), src[i], n * soa_layout<T>::field_sizes[i], stream_t{});
  synchronize(stream_t{});
}

template <class T>
void soa_to_aos_to_host(const soa_view<const T>& in, T* out, memory_space space) {
  index_t n = in.size();
  if (space != memory_space::device || !STRATA_DEVICE_IS_SEPARATE) {
    transpose_to_records(in, out, n);
    return;
  }
  host_columns<T> staged{n};
  auto dst = staged.template columns<std::byte*>();
  for (std::size_t i = 0; i < soa_layout<T>::fields; ++i)
    copy_bytes_async(dst[i], in.column_bytes(i), std::size_t(n) * soa_layout<T>::field_sizes[i], stream_t{});
  synchronize(stream_t{});
  transpose_to_records(soa_view<const T>(staged.view()), out, n);
}

}  // namespace strata::detail
