// AoS <-> SoA conversion on the device at copy speed (shared-memory transpose, 16-byte accesses on
// both sides), between device arrays of T, aos_vector / aos_view and soa_vector / soa_view.
// Stream ordered: returns before the device finishes. The host backend runs the same contract
// with loops over records.
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/error.hpp>

#include <algorithm>
#include <string>

namespace strata {


/// n records of T in device memory (natural layout, aligned to alignof(T)) -> SoA view of size n.
template <class T>
void aos_to_soa(const T* src, index_t n, const soa_view<T>& dst, stream_t stream = {}) {
  detail::check_aos_pointer<T>("aos_to_soa", src, n, alignof(T));
  detail::check_soa_destination("aos_to_soa", dst, n);
  detail::launch_scope scope("strata::aos_to_soa", stream, {detail::pointer_operand(src, n, "AoS input"), detail::described(dst, "SoA output")});
  detail::aos_bytes_to_soa<T, sizeof(T)>(reinterpret_cast<const std::byte*>(src), n, dst, 0, stream);
}

/// SoA view -> n = src.size() records of T in device memory.
template <class T>
void soa_to_aos(const soa_view<const T>& src, T* dst, stream_t stream = {}) {
  detail::check_aos_pointer<T>("soa_to_aos", dst, src.size(), alignof(T));
  detail::check_soa_destination("soa_to_aos", src, src.size());
  detail::launch_scope scope("strata::soa_to_aos", stream, {detail::described(src, "SoA input"), detail::pointer_operand(dst, src.size(), "AoS output")});
  detail::soa_to_aos_bytes<T, sizeof(T)>(src, 0, reinterpret_cast<std::byte*>(dst), src.size(), stream);
}

/// Padded AoS (aos_vector's storage) <-> SoA.
template <class T>
void aos_to_soa(const aos_view<const T>& src, const soa_view<T>& dst, stream_t stream = {}) {
  using rec = layout::aligned_record<T>;
  detail::check_aos_pointer<T>("aos_to_soa", src.data(), src.size(), alignof(rec));
  detail::check_soa_destination("aos_to_soa", dst, src.size());
  detail::launch_scope scope("strata::aos_to_soa", stream, {detail::described(src, "AoS input"), detail::described(dst, "SoA output")});
  detail::aos_bytes_to_soa<T, sizeof(rec)>(reinterpret_cast<const std::byte*>(src.data()), src.size(), dst, 0, stream);
}
template <class T>
void soa_to_aos(const soa_view<const T>& src, const aos_view<T>& dst, stream_t stream = {}) {
  using rec = layout::aligned_record<T>;
  if (dst.size() != src.size()) detail::throw_size_error("soa_to_aos: AoS records", dst.size(), src.size());
  detail::check_aos_pointer<T>("soa_to_aos", dst.data(), dst.size(), alignof(rec));
  detail::check_soa_destination("soa_to_aos", src, src.size());
  detail::launch_scope scope("strata::soa_to_aos", stream, {detail::described(src, "SoA input"), detail::described(dst, "AoS output")});
  detail::soa_to_aos_bytes<T, sizeof(rec)>(src, 0, reinterpret_cast<std::byte*>(dst.data()), src.size(), stream);
}

/// Container conversions (synchronous, like the containers' other operations); the result lives
/// on the source's device.
template <class T>
soa_vector<T> to_soa(const aos_vector<T>& a) {
  detail::device_guard on(a.device());
  soa_vector<T> s(a.size());
  aos_to_soa(a.const_view(), s.view());
  synchronize(stream_t{});
  return s;
}
template <class T>
aos_vector<T> to_aos(const soa_vector<T>& s) {
  detail::device_guard on(s.device());
  aos_vector<T> a(s.size());
  soa_to_aos(s.const_view(), a.view());
  synchronize(stream_t{});
  return a;
}

}  // namespace strata
