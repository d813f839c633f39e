// SPDX-License-Identifier: Apache-2.0
// Layout conversion on the device at copy speed, stream ordered (returns before the device
// finishes): AoS <-> any columnar view (SoA, AoSoA) through the shared-memory transposes (16-byte
// accesses on both sides), columnar <-> columnar as packets (16-byte loads of one layout, 16-byte
// stores of the other). Between device arrays of T, aos_vector / aos_view and the columnar
// containers and views. The host backend runs the same kernels' phases on the CPU.
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/convert/columnar.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/error.hpp>

#include <algorithm>
#include <string>

namespace strata {


/// n records of T in device memory (natural layout, aligned to alignof(T)) -> a columnar view of size n.
template <class T, class M>
void aos_to_soa(const T* src, index_t n, const basic_view<T, M>& dst, stream_t stream = {}) {
  detail::check_aos_pointer<T>("aos_to_soa", src, n, alignof(T));
  detail::check_soa_destination("aos_to_soa", dst, n);
  detail::launch_scope scope("strata::aos_to_soa", stream, {detail::pointer_operand(src, n, "AoS input"), detail::described(dst, "SoA output")});
  detail::aos_bytes_to_soa<T, sizeof(T)>(reinterpret_cast<const std::byte*>(src), n, dst, 0, stream);
}

/// Columnar view -> n = src.size() records of T in device memory.
template <class T, class M>
void soa_to_aos(const basic_view<const T, M>& src, T* dst, stream_t stream = {}) {
  detail::check_aos_pointer<T>("soa_to_aos", dst, src.size(), alignof(T));
  detail::check_soa_destination("soa_to_aos", src, src.size());
  detail::launch_scope scope("strata::soa_to_aos", stream, {detail::described(src, "SoA input"), detail::pointer_operand(dst, src.size(), "AoS output")});
  detail::soa_to_aos_bytes<T, sizeof(T)>(src, 0, reinterpret_cast<std::byte*>(dst), src.size(), stream);
}

/// Padded AoS (aos_vector's storage) <-> a columnar view.
template <class T, class M>
void aos_to_soa(const aos_view<const T>& src, const basic_view<T, M>& dst, stream_t stream = {}) {
  using rec = layout::aligned_record<T>;
  detail::check_aos_pointer<T>("aos_to_soa", src.data(), src.size(), alignof(rec));
  detail::check_soa_destination("aos_to_soa", dst, src.size());
  detail::launch_scope scope("strata::aos_to_soa", stream, {detail::described(src, "AoS input"), detail::described(dst, "SoA output")});
  detail::aos_bytes_to_soa<T, sizeof(rec)>(reinterpret_cast<const std::byte*>(src.data()), src.size(), dst, 0, stream);
}
template <class T, class M>
void soa_to_aos(const basic_view<const T, M>& src, const aos_view<T>& dst, stream_t stream = {}) {
  using rec = layout::aligned_record<T>;
  if (dst.size() != src.size()) detail::throw_size_error("soa_to_aos: AoS records", dst.size(), src.size());
  detail::check_aos_pointer<T>("soa_to_aos", dst.data(), dst.size(), alignof(rec));
  detail::check_soa_destination("soa_to_aos", src, src.size());
  detail::launch_scope scope("strata::soa_to_aos", stream, {detail::described(src, "SoA input"), detail::described(dst, "AoS output")});
  detail::soa_to_aos_bytes<T, sizeof(rec)>(src, 0, reinterpret_cast<std::byte*>(dst.data()), src.size(), stream);
}

namespace detail {
struct same_record {
  template <class R>
  STRATA_HD R operator()(const R& r) const {
    return r;
  }
};
template <class V>
inline constexpr bool is_aos_view = false;
template <class T>
inline constexpr bool is_aos_view<aos_view<T>> = true;
}  // namespace detail

/// src -> dst, any two layouts of the same record and size: views or containers (aos_*, soa_*,
/// aosoa_*, basic_*). AoS on either side runs the transposes (a record a thread for AoSoA blocks
/// whose runs are not whole 16-byte vectors). Two columnar layouts move groups of records leaf by
/// leaf, one access per leaf (columnar.hpp); there, leaves that are not 1, 2, 4, 8 or 16 bytes,
/// blocks without whole packets, or sides that are not 16-byte aligned go record by record (the
/// returned path says which). With an AoS side, a columnar side's runs must be 16-byte aligned
/// where the transposes run: a foreign view aligned for its elements only is refused, naming it.
template <class Src, class Dst>
path convert(const Src& src_arg, Dst&& dst_arg, stream_t stream = {}) {
  auto src = detail::as_const_view(src_arg);
  auto dst = detail::as_view(dst_arg);
  detail::note_stream(src_arg, stream), detail::note_stream(dst_arg, stream);
  constexpr bool aos_in = detail::is_aos_view<decltype(src)>, aos_out = detail::is_aos_view<decltype(dst)>;
  static_assert(!(aos_in && aos_out), "strata::convert: both sides are AoS; copy the records instead");
  if constexpr (aos_in) {
    aos_to_soa(src, dst, stream);
    return layout::whole_vector_blocks<typename decltype(dst)::mapping_type>() ? path::vectorized : path::scalar;
  } else if constexpr (aos_out) {
    soa_to_aos(src, dst, stream);
    return layout::whole_vector_blocks<typename decltype(src)::mapping_type>() ? path::vectorized : path::scalar;
  } else {
    using record = typename decltype(dst)::value_type;
    if (src.size() != dst.size()) detail::throw_size_error("strata::convert: output records", dst.size(), src.size());
    using d = layout::record_descriptor<record>;
    if constexpr (d::all_leaves_vectorizable) {
      if (detail::columnar_copy_applies(src, dst)) {
        detail::launch_scope scope("strata::convert", stream, {detail::described(src, "input"), detail::described(dst, "output")});
        detail::columnar_copy(src, dst, stream);
        return path::vectorized;
      }
    }
    return transform(src, dst, detail::same_record{}, stream);  // checks the operands for its own launch
  }
}

namespace detail {
/// The GPU a container or a view's memory is on (-1: none, the current one serves).
template <class Src>
int device_of(const Src& src) {
  if constexpr (requires { src.device(); }) return src.device();
  else return src.location().space == memory_space::device ? src.location().device : -1;
}
}  // namespace detail

/// A new container of type Dst holding src's records (a container or a view) in Dst's layout, on
/// src's device (synchronous).
template <class Dst, class Src>
Dst convert_to(const Src& src) {
  if constexpr (requires { src.wait(); }) src.wait();  // a container: work queued on it elsewhere first
  detail::device_guard on(detail::device_of(src));
  Dst out(src.size());
  convert(src, out);
  synchronize(stream_t{});
  return out;
}

/// Container conversions (synchronous, like the containers' other operations); the result lives
/// on the source's device.
template <class T>
soa_vector<T> to_soa(const aos_vector<T>& a) {
  a.wait();
  detail::device_guard on(a.device());
  soa_vector<T> s(a.size());
  aos_to_soa(a.const_view(), s.view());
  synchronize(stream_t{});
  return s;
}
template <class T>
aos_vector<T> to_aos(const soa_vector<T>& s) {
  s.wait();
  detail::device_guard on(s.device());
  aos_vector<T> a(s.size());
  soa_to_aos(s.const_view(), a.view());
  synchronize(stream_t{});
  return a;
}

}  // namespace strata
