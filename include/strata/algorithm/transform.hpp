// SPDX-License-Identifier: Apache-2.0
// strata::transform and strata::for_each over columnar views (SoA, AoSoA), projections, AoS views and
// containers: whole packets with 16-byte accesses per column when both sides allow it, record by
// record otherwise (an AoS record moves whole, as one or two 16-byte accesses), through
// Thrust (CUB's tuned kernels on the CUDA backend, OpenMP threads on the host backend: the same
// dispatch and the same packet code on both). The path taken is returned, so a caller (and the
// tests) can see a fallback instead of guessing.
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/transform.h>
#if defined(STRATA_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>
#endif

#include <string>
#include <type_traits>

namespace strata {

enum class path { vectorized, scalar };

/// What an update stored: every leaf of every output record, or (in place) a record's leaves only
/// where the functor changed their bits.
enum class stores { every_leaf, changed_leaves };
/// The path transform and for_each took (it converts to `path`) and which leaves they stored.
struct update_path {
  path access;
  stores written;
  constexpr operator path() const { return access; }
  friend constexpr bool operator==(const update_path&, const update_path&) = default;
};

namespace detail {
template <class V>
auto as_view(V& v) {
  if constexpr (requires { v.view(); }) return v.view();
  else return v;
}
/// What an operation reads: a container's const view, a view made const (a mutable view converts
/// to const, never the reverse), or anything else as it is (projections).
template <class T, class M>
basic_view<const std::remove_const_t<T>, M> as_const_view(const basic_view<T, M>& v) {
  return v;
}
template <class T>
aos_view<const std::remove_const_t<T>> as_const_view(const aos_view<T>& v) {
  return v;
}
template <class V>
auto as_const_view(const V& v) {
  if constexpr (requires { v.const_view(); }) return v.const_view();
  else return v;
}

/// Operands packets can run over: columnar views and projections. AoS views are read and written
/// record by record, each record whole (layout::load_record / store_record).
template <class V>
concept packet_operand = requires(const V& v) {
  { v.vector_aligned() } -> std::convertible_to<bool>;
  { v.packets_fit() } -> std::convertible_to<bool>;
};
/// An AoS view whose records move as whole 16-byte accesses (padded records of 16 bytes or more).
template <class V>
inline constexpr bool whole_record_vectors = false;
template <class T>
inline constexpr bool whole_record_vectors<aos_view<T>> = layout::record_descriptor<std::remove_const_t<T>>::access_bytes == vector_bytes;
/// Packets can run over all of these operands of Record.
template <class Record, class... V>
inline constexpr bool packets_apply =
    layout::record_descriptor<Record>::all_leaves_vectorizable && ((packet_operand<V> && layout::packet_blocks_of<V>()) && ...);

/// The path an operation took: packets over its body, or every operand an AoS view moved in whole
/// 16-byte accesses; otherwise record by record.
template <class... V>
path path_taken(index_t body) {
  return body >= 0 || (whole_record_vectors<V> && ...) ? path::vectorized : path::scalar;
}

/// The Thrust execution policy for device work on a stream: CUDA without a synchronization at the
/// end, or the host backend's OpenMP system.
inline auto policy(stream_t stream) {
#if defined(STRATA_BACKEND_CUDA)
  return thrust::cuda::par_nosync.on(stream);
#else
  (void)stream;
  return thrust::device;
#endif
}
inline void after_launch(const char* what) {
#if defined(STRATA_BACKEND_CUDA)
  check_launch(what);
#else
  (void)what;
#endif
}

/// How many leading records of views of n records run as packets: all n when every view is
/// 16-byte aligned and owns the padding of its last packet; the whole packets only (the rest record
/// by record) when some view ends where its memory does; -1 when some view cannot take 16-byte
/// access at all.
template <class Record, class... V>
index_t packet_body(index_t n, const V&... views) {
  if constexpr (!packets_apply<Record, V...>) {
    return -1;
  } else {
    if (!(views.vector_aligned() && ...)) return -1;
    if ((views.packets_fit() && ...)) return n;
    constexpr index_t w = index_t(layout::record_descriptor<Record>::packet_width);
    return n / w * w;
  }
}
/// Records [from, size) of a view, indexed from 0 (the proxies a thread reads and writes).
template <class V>
struct records_from_t {
  V view;
  index_t from;
  STRATA_HD auto operator[](index_t i) const { return view[from + i]; }
};
template <class V>
records_from_t<V> records_from(const V& v, index_t from) {
  return {v, from};
}

/// The first n records of a view, keeping its own padding when n is all of it.
template <class V>
V leading(const V& v, index_t n) {
  return n == v.size() ? v : v.first(n);
}

/// Up to this many records, transform and for_each launch strata's own kernel (one packet or record
/// per thread, a grid of all of them): a time-stepping loop of small steps then pays one launch per
/// call and no library setup. Above it they go through Thrust to CUB's tuned transform kernels.
/// Benchmarks set it to time both sides.
inline index_t direct_launch_limit = index_t(1) << 24;

/// out[i] = fn(in[i]) for i in [0, n), one element (packet or record) per thread; update_each calls
/// fn(v[i]) for for_each.
template <class In, class Out, class Fn>
struct apply_each {
  In in;
  Out out;
  Fn fn;
  STRATA_HD void operator()(index_t i) const { out[i] = fn(in[i]); }
};
template <class View, class Fn>
struct update_each {
  View v;
  Fn fn;
  STRATA_HD void operator()(index_t i) const { fn(v[i]); }
};
#if defined(STRATA_BACKEND_CUDA)
inline constexpr int direct_threads = 256;
template <int Threads, class Body>
__global__ void __launch_bounds__(Threads) direct_kernel(Body body, index_t n) {
  const index_t i = index_t(blockIdx.x) * Threads + threadIdx.x;
  if (i < n) body(i);
}
#endif
/// Runs body(i) for i in [0, n): strata's kernel on the GPU (blocks of Threads threads), OpenMP
/// threads on the host backend.
template <int Threads = 256, class Body>
void run_each(const Body& body, index_t n, stream_t stream, const char* what) {
  if (n <= 0) return;
#if defined(STRATA_BACKEND_CUDA)
  // The launch returns its own error: no second runtime call per launch.
  const index_t blocks = (n + Threads - 1) / Threads;
  launch<&direct_kernel<Threads, Body>>(dim3(unsigned(blocks)), dim3(Threads), 0, stream, what, body, n);
#else
  (void)stream, (void)what;
  STRATA_PARALLEL_FOR_IF(n > 1024)
  for (index_t i = 0; i < n; ++i) body(i);
#endif
}

/// Hands f the record, not the proxy Thrust passes, so generic (templated) functors see the record.
template <class F>
struct on_record {
  F f;
  template <class X>
  STRATA_HD auto operator()(const X& x) const {
    if constexpr (requires { x.get(); }) return f(x.get());
    else return f(x);
  }
};

/// Lifts f(record&) to a packet reference: load the packet, update every lane, store back the
/// columns whose leaves the update changed in some lane (reflect/changes.hpp).
template <class F>
struct per_record_update {
  F f;
  template <class Ref>
  STRATA_HD void operator()(Ref ref) const {
    auto pk = ref.get();
    leaf_changes<typename Ref::record> changed;
    STRATA_UNROLL
    for (int k = 0; k < decltype(pk)::width; ++k) {
      const auto before = pk.lane[k];
      f(pk.lane[k]);
      changed.note(before, pk.lane[k]);
    }
    ref.store_changed(pk, changed);
  }
};
template <class F>
struct per_record_update_scalar {
  F f;
  template <class Ref>
  STRATA_HD void operator()(Ref ref) const {
    const auto before = ref.get();
    auto r = before;
    f(r);
    ref.store_changed(r, before);
  }
};
/// transform's functor run in place: r = f(r).
template <class F>
struct assign_result {
  F f;
  template <class R>
  STRATA_HD void operator()(R& r) const {
    r = f(static_cast<const R&>(r));
  }
};

/// True when two operands are the same records of the same memory (a view and its const view, a
/// container and its view, one projection twice): transform then updates in place.
template <class A, class B>
bool same_records(const A& a, const B& b) {
  if constexpr (requires { a.same_records(b); }) return a.same_records(b);
  else return false;
}

/// for_each's body, shared with in-place transform: packets over the whole packets (or all of the
/// view), records one by one after them; each stores back only the leaves the update changed.
template <class V, class F>
path update_in_place(const V& v, F f, stream_t stream, const char* packets_what, const char* records_what) {
  using record = typename V::value_type;
  const index_t n = v.size();
  const index_t body = packet_body<record>(n, v);
  const path taken = path_taken<V>(body);
  if (n == 0) return taken;
  const bool direct = n <= direct_launch_limit;
  const auto pol = policy(stream);
  if constexpr (packets_apply<record, V>) {
    if (body > 0) {
      auto pv = packets(leading(v, body));
      if (direct) {
        run_each(update_each<decltype(pv), per_record_update<F>>{pv, {f}}, pv.size(), stream, packets_what);
      } else {
        thrust::for_each(pol, packets_begin(pv), packets_end(pv), per_record_update<F>{f});
        after_launch(packets_what);
      }
    }
  }
  const index_t from = body >= 0 ? body : 0;
  if (from < n) {
    if (direct || n - from < n / 2) {
      auto tail = records_from(v, from);
      run_each(update_each<decltype(tail), per_record_update_scalar<F>>{tail, {f}}, n - from, stream, records_what);
    } else {
      thrust::for_each(pol, records_begin(v) + from, records_end(v), per_record_update_scalar<F>{f});
      after_launch(records_what);
    }
  }
  return taken;
}
}  // namespace detail

/// out[i] = f(in[i]) for every record; in and out are views (SoA, AoSoA, AoS), projections or
/// containers of the same size (in place is fine). Vectorized when both sides are columnar, 16-byte
/// aligned and every leaf is 1, 2, 4, 8 or 16 bytes (packets), or both are AoS with records of 16
/// bytes or more (each moved whole); otherwise record by record (the returned path says which).
/// Records past size() are never written unless they are the view's own padding. In place (out the
/// same records as in), a record's leaves are stored only where f changed their bits, so a step
/// that changes 3 of 7 leaves writes 3 columns (update_path::written says which rule ran).
template <class In, class Out, class F>
update_path transform(const In& in_arg, Out&& out_arg, F f, stream_t stream = {}) {
  auto in = detail::as_const_view(in_arg);
  auto out = detail::as_view(out_arg);
  if (in.size() != out.size()) detail::throw_size_error("strata::transform: output records", out.size(), in.size());
  detail::launch_scope scope("strata::transform", stream, {detail::described(in, "input"), detail::described(out, "output")});
  detail::note_stream(in_arg, stream), detail::note_stream(out_arg, stream);
  if (detail::same_records(out, in))
    return {detail::update_in_place(out, detail::assign_result<F>{f}, stream, "strata::transform (packets, in place)",
                                    "strata::transform (records, in place)"),
            stores::changed_leaves};
  using record = typename decltype(in)::value_type;
  const index_t n = in.size();
  const index_t body = detail::packet_body<record>(n, in, out);
  const update_path taken{detail::path_taken<decltype(in), decltype(out)>(body), stores::every_leaf};
  if (n == 0) return taken;
  const bool direct = n <= detail::direct_launch_limit;
  const auto policy = detail::policy(stream);
  if constexpr (detail::packets_apply<record, decltype(in), decltype(out)>) {
    if (body > 0) {
      auto pin = packets(detail::leading(in, body));
      auto pout = packets(detail::leading(out, body));
      if (direct) {
        detail::run_each(detail::apply_each<decltype(pin), decltype(pout), per_record_fn<F>>{pin, pout, {f}}, pin.size(), stream,
                         "strata::transform (packets)");
      } else {
        thrust::transform(policy, packets_begin(pin), packets_end(pin), packets_begin(pout), per_record_fn<F>{f});
        detail::after_launch("strata::transform (packets)");
      }
    }
  }
  const index_t from = body >= 0 ? body : 0;
  if (from < n) {
    if (direct || n - from < n / 2) {
      auto tail_in = detail::records_from(in, from);
      auto tail_out = detail::records_from(out, from);
      detail::run_each(detail::apply_each<decltype(tail_in), decltype(tail_out), detail::on_record<F>>{tail_in, tail_out, {f}}, n - from,
                       stream, "strata::transform (records)");
    } else {
      thrust::transform(policy, records_begin(in) + from, records_end(in), records_begin(out) + from, detail::on_record<F>{f});
      detail::after_launch("strata::transform (records)");
    }
  }
  return taken;
}

/// f(record&) for every record, in place: each record's leaves are written back to the view's (or
/// projection's) columns, or to the AoS view's records, where f changed their bits, and nowhere
/// else (update_path::written says so).
template <class V, class F>
update_path for_each(V&& v_arg, F f, stream_t stream = {}) {
  auto v = detail::as_view(v_arg);
  detail::launch_scope scope("strata::for_each", stream, {detail::described(v, "view")});
  detail::note_stream(v_arg, stream);
  return {detail::update_in_place(v, f, stream, "strata::for_each (packets)", "strata::for_each (records)"), stores::changed_leaves};
}

}  // namespace strata
