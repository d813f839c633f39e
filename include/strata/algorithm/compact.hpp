// Stable compaction of whole records: erase_if removes the records a predicate picks, in place, and
// copy_if copies the others' complement into another container. One pass over the records (CUB's
// DeviceSelect: each record read once, each kept record written once, order kept), through strata's
// record iterators, so every column moves together. Scratch from strata::scratch(). The host
// backend runs Thrust's stable remove_if / copy_if on OpenMP threads.
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <cstdint>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_select.cuh>
#else
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/remove.h>
#endif

namespace strata {

namespace detail {
template <class Pred>
struct unless {
  Pred pred;
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    return !pred(r);
  }
};
/// Runs CUB's selection (in place when out is in) and returns how many records it kept.
template <class In, class Out, class Keep>
std::int64_t select(In in, Out out, index_t n, Keep keep, stream_t stream, const char* what) {
#if defined(STRATA_BACKEND_CUDA)
  scratch_block count(sizeof(std::int64_t), stream);
  std::size_t temp = 0;
  cudaError_t e;
  if constexpr (std::is_same_v<In, Out>) e = in == out ? cub::DeviceSelect::If(nullptr, temp, in, count.as<std::int64_t>(), n, keep, stream)
                                                       : cub::DeviceSelect::If(nullptr, temp, in, out, count.as<std::int64_t>(), n, keep, stream);
  else e = cub::DeviceSelect::If(nullptr, temp, in, out, count.as<std::int64_t>(), n, keep, stream);
  cuda_check(e, what);
  scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
  if constexpr (std::is_same_v<In, Out>) e = in == out ? cub::DeviceSelect::If(tmp.data(), temp, in, count.as<std::int64_t>(), n, keep, stream)
                                                       : cub::DeviceSelect::If(tmp.data(), temp, in, out, count.as<std::int64_t>(), n, keep, stream);
  else e = cub::DeviceSelect::If(tmp.data(), temp, in, out, count.as<std::int64_t>(), n, keep, stream);
  cuda_check(e, what);
  std::int64_t kept = 0;
  copy_bytes_async(&kept, count.data(), sizeof kept, stream);
  synchronize(stream);
  return kept;
#else
  (void)stream, (void)what;
  if constexpr (std::is_same_v<In, Out>)
    if (in == out) return thrust::remove_if(thrust::device, in, in + n, unless<Keep>{keep}) - in;
  return thrust::copy_if(thrust::device, in, in + n, out, keep) - out;
#endif
}
}  // namespace detail

/// Removes every record of c for which pred(record) is true; the others keep their order. Returns
/// how many were removed (c.size() shrinks by that; capacity stays). Waits for the count.
template <class T, class Pred>
std::size_t erase_if(soa_vector<T>& c, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(c.size());
  auto v = c.view();
  detail::launch_scope scope("strata::erase_if", stream, {detail::described(v, "container")});
  if (n == 0) return 0;
  auto it = records_begin(v);
  const std::int64_t kept = detail::select(it, it, n, detail::unless<Pred>{pred}, stream, "strata::erase_if (cub::DeviceSelect::If)");
  c.resize(std::size_t(kept));
  return std::size_t(n - kept);
}

/// Copies the records of in for which pred(record) is true into out (replacing its contents), in
/// order; returns how many. Waits for the count.
template <class T, class Pred>
std::size_t copy_if(const soa_vector<T>& in, soa_vector<T>& out, Pred pred, stream_t stream = {}) {
  const index_t n = index_t(in.size());
  if (&in == &out) throw std::invalid_argument("strata::copy_if: in and out are the same container (use erase_if)");
  out.clear();
  out.resize_for_overwrite(std::size_t(n));
  auto iv = in.const_view();
  auto ov = out.view();
  detail::launch_scope scope("strata::copy_if", stream, {detail::described(iv, "input"), detail::described(ov, "output")});
  const std::int64_t kept = n == 0 ? 0 : detail::select(records_begin(iv), records_begin(ov), n, pred, stream, "strata::copy_if (cub::DeviceSelect::If)");
  out.resize(std::size_t(kept));
  return std::size_t(kept);
}

}  // namespace strata
