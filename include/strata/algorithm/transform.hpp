// strata::transform and strata::for_each over SoA views, projections and containers: whole packets
// with 16-byte accesses per column when both sides allow it, record by record otherwise, through
// Thrust (CUB's tuned kernels on the CUDA backend, OpenMP threads on the host backend: the same
// dispatch and the same packet code on both). The path taken is returned, so a caller (and the
// tests) can see a fallback instead of guessing.
#pragma once

#include <strata/config.hpp>
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

namespace detail {
template <class V>
auto as_view(V& v) {
  if constexpr (requires { v.view(); }) return v.view();
  else return v;
}
template <class V>
auto as_const_view(const V& v) {
  if constexpr (requires { v.const_view(); }) return v.const_view();
  else return v;
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
  if constexpr (!layout::record_descriptor<Record>::all_leaves_vectorizable) {
    return -1;
  } else {
    if (!(views.vector_aligned() && ...)) return -1;
    if ((views.whole_packets() && ...)) return n;
    constexpr index_t w = index_t(layout::record_descriptor<Record>::packet_width);
    return n / w * w;
  }
}
/// The first n records of a view, keeping its own padding when n is all of it.
template <class V>
V leading(const V& v, index_t n) {
  return n == v.size() ? v : v.first(n);
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

/// Lifts f(record&) to a packet reference: load the packet, update every lane, store it back.
template <class F>
struct per_record_update {
  F f;
  template <class Ref>
  STRATA_HD void operator()(Ref ref) const {
    auto pk = ref.get();
    STRATA_UNROLL
    for (int k = 0; k < decltype(pk)::width; ++k) f(pk.lane[k]);
    ref = pk;
  }
};
template <class F>
struct per_record_update_scalar {
  F f;
  template <class Ref>
  STRATA_HD void operator()(Ref ref) const {
    auto r = ref.get();
    f(r);
    ref = r;
  }
};
}  // namespace detail

/// out[i] = f(in[i]) for every record; in and out are SoA views, projections or containers of the
/// same size (in place is fine). Vectorized when both sides are 16-byte aligned and every leaf is
/// 1, 2, 4, 8 or 16 bytes; otherwise record by record (the returned path says which). Records past
/// size() are never written unless they are the view's own padding.
template <class In, class Out, class F>
path transform(const In& in_arg, Out&& out_arg, F f, stream_t stream = {}) {
  auto in = detail::as_const_view(in_arg);
  auto out = detail::as_view(out_arg);
  if (in.size() != out.size()) detail::throw_size_error("strata::transform: output records", out.size(), in.size());
  detail::launch_scope scope("strata::transform", stream, {detail::described(in, "input"), detail::described(out, "output")});
  using record = typename decltype(in)::value_type;
  const index_t n = in.size();
  const index_t body = detail::packet_body<record>(n, in, out);
  if (n == 0) return body >= 0 ? path::vectorized : path::scalar;
  const auto policy = detail::policy(stream);
  if constexpr (layout::record_descriptor<record>::all_leaves_vectorizable) {
    if (body > 0) {
      auto pin = packets(detail::leading(in, body));
      auto pout = packets(detail::leading(out, body));
      thrust::transform(policy, packets_begin(pin), packets_end(pin), packets_begin(pout), per_record_fn<F>{f});
      detail::after_launch("strata::transform (packets)");
    }
  }
  const index_t from = body >= 0 ? body : 0;
  if (from < n) {
    thrust::transform(policy, records_begin(in) + from, records_end(in), records_begin(out) + from, detail::on_record<F>{f});
    detail::after_launch("strata::transform (records)");
  }
  return body >= 0 ? path::vectorized : path::scalar;
}

/// f(record&) for every record, written back to the view's (or projection's) columns.
template <class V, class F>
path for_each(V&& v_arg, F f, stream_t stream = {}) {
  auto v = detail::as_view(v_arg);
  detail::launch_scope scope("strata::for_each", stream, {detail::described(v, "view")});
  using record = typename decltype(v)::value_type;
  const index_t n = v.size();
  const index_t body = detail::packet_body<record>(n, v);
  if (n == 0) return body >= 0 ? path::vectorized : path::scalar;
  const auto policy = detail::policy(stream);
  if constexpr (layout::record_descriptor<record>::all_leaves_vectorizable) {
    if (body > 0) {
      auto pv = packets(detail::leading(v, body));
      thrust::for_each(policy, packets_begin(pv), packets_end(pv), detail::per_record_update<F>{f});
      detail::after_launch("strata::for_each (packets)");
    }
  }
  const index_t from = body >= 0 ? body : 0;
  if (from < n) {
    thrust::for_each(policy, records_begin(v) + from, records_end(v), detail::per_record_update_scalar<F>{f});
    detail::after_launch("strata::for_each (records)");
  }
  return body >= 0 ? path::vectorized : path::scalar;
}

}  // namespace strata
