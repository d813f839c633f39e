// strata::transform and strata::for_each over SoA views, projections and containers: whole packets
// with 16-byte accesses per column when both sides allow it, record by record otherwise, through
// Thrust (CUB's tuned kernels) on the CUDA backend. The path taken is returned, so a caller (and
// the tests) can see a fallback instead of guessing.
#pragma once

#include <strata/memory/device.hpp>
#include <strata/config.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/memory/resource.hpp>

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
/// same size (in place is fine). Vectorized when both sides are vector_ready() and every field
/// is 1, 2, 4, 8 or 16 bytes; otherwise record by record (the returned path says which).
template <class In, class Out, class F>
path transform(const In& in_arg, Out&& out_arg, F f, stream_t stream = {}) {
  auto in = detail::as_const_view(in_arg);
  auto out = detail::as_view(out_arg);
  if (in.size() != out.size()) detail::throw_size_error("strata::transform: output records", out.size(), in.size());
  detail::check_stream(stream, "strata::transform");
  using record = typename decltype(in)::value_type;
  constexpr bool vectorizable = layout::record_descriptor<record>::all_fields_vectorizable;
  const bool vector = vectorizable && in.vector_ready() && out.vector_ready();
  const index_t n = in.size();
#if defined(STRATA_BACKEND_CUDA)
  // The kernels are CUB's (thrust::transform -> cub::DeviceTransform, tuned per architecture); strata
  // supplies the 16-byte packet accesses and the lifted functor.
  if (n == 0) return vector ? path::vectorized : path::scalar;
  const auto policy = thrust::cuda::par_nosync.on(stream);
  if constexpr (vectorizable) {
    if (vector) {
      auto pin = packets(in);
      auto pout = packets(out);
      thrust::transform(policy, packets_begin(pin), packets_end(pin), packets_begin(pout), per_record_fn<F>{f});
      detail::check_launch("strata::transform (packets)");
      return path::vectorized;
    }
  }
  thrust::transform(policy, records_begin(in), records_end(in), records_begin(out), detail::on_record<F>{f});
  detail::check_launch("strata::transform (records)");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(n > 4096)
  for (index_t i = 0; i < n; ++i) out.store(i, f(in.load(i)));
#endif
  return vector ? path::vectorized : path::scalar;
}

/// f(record&) for every record, written back to the view's (or projection's) columns.
template <class V, class F>
path for_each(V&& v_arg, F f, stream_t stream = {}) {
  auto v = detail::as_view(v_arg);
  detail::check_stream(stream, "strata::for_each");
  using record = typename decltype(v)::value_type;
  constexpr bool vectorizable = layout::record_descriptor<record>::all_fields_vectorizable;
  const bool vector = vectorizable && v.vector_ready();
  const index_t n = v.size();
#if defined(STRATA_BACKEND_CUDA)
  if (n == 0) return vector ? path::vectorized : path::scalar;
  const auto policy = thrust::cuda::par_nosync.on(stream);
  if constexpr (vectorizable) {
    if (vector) {
      auto pv = packets(v);
      thrust::for_each(policy, packets_begin(pv), packets_end(pv), detail::per_record_update<F>{f});
      detail::check_launch("strata::for_each (packets)");
      return path::vectorized;
    }
  }
  thrust::for_each(policy, records_begin(v), records_end(v), detail::per_record_update_scalar<F>{f});
  detail::check_launch("strata::for_each (records)");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(n > 4096)
  for (index_t i = 0; i < n; ++i) {
    auto r = v.load(i);
    f(r);
    v.store(i, r);
  }
#endif
  return vector ? path::vectorized : path::scalar;
}

}  // namespace strata
