// SPDX-License-Identifier: Apache-2.0
// Reductions: over one column (a span; 16-byte loads for the aligned body, scalar head and tail),
// over records of a view or projection (packets, padding lanes skipped; a foreign view's last
// partial packet record by record), and column statistics (count, sum, min, max, mean, variance by
// Chan/Welford merging). On the GPU each block reduces with cub::BlockReduce into a partial held in
// scratch memory of the call's own (memory/scratch.hpp), and one block folds the partials in block
// order: the result does not depend on timing, and calls on different streams share nothing.
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/block/block_reduce.cuh>
#endif

namespace strata {

namespace detail {

/// An accumulator that may be empty, so no identity element is needed for a user's operator.
template <class A>
struct maybe {
  A value;
  bool valid;
};
template <class Op>
struct maybe_op {
  Op op;
  template <class A>
  STRATA_HD maybe<A> operator()(const maybe<A>& a, const maybe<A>& b) const {
    if (!a.valid) return b;
    if (!b.valid) return a;
    return {op(a.value, b.value), true};
  }
};

/// Elements of a column: a 16-byte aligned body read as vectors, and up to two vectors' worth of
/// head and tail elements read one by one.
template <class F, class Map>
struct column_source {
  const F* data;
  index_t n;
  Map map;
  static constexpr index_t lanes = index_t(vector_bytes / sizeof(F));
  static constexpr std::size_t unit_bytes = vector_bytes;
  STRATA_HD index_t head() const {
    index_t mis = index_t((reinterpret_cast<std::uintptr_t>(data) % vector_bytes) / sizeof(F));
    return std::min<index_t>(n, mis ? lanes - mis : 0);
  }
  STRATA_HD index_t units() const { return (n - head()) / lanes; }  // whole vectors in the body
  STRATA_HD index_t scalars() const { return n - units() * lanes; }
  STRATA_HD index_t scalar_index(index_t k) const { return k < head() ? k : head() + units() * lanes + (k - head()); }
  template <class A, class Op>
  STRATA_HD maybe<A> scalar(index_t k, Op) const {
    return {A(map(data[scalar_index(k)])), true};
  }
  template <class A, class Op>
  STRATA_HD maybe<A> unit(index_t u, Op op) const {
    auto w = vec::load<16>(data + head() + u * lanes);
    F e[lanes];
    std::memcpy(e, &w, sizeof e);
    if constexpr (requires { map.unit(e); }) return {map.unit(e), true};  // a map that folds a whole vector itself
    A acc = A(map(e[0]));
    STRATA_UNROLL
    for (index_t k = 1; k < lanes; ++k) acc = op(acc, A(map(e[k])));
    return {acc, true};
  }
};

/// Records of a view or projection as packets (lanes past size() are skipped); records from
/// tail_begin on, which no whole packet of the view covers, one by one.
template <class PacketView, class View, class Map>
struct packet_source {
  PacketView packets;
  View view;
  index_t tail_begin;
  Map map;
  static constexpr std::size_t unit_bytes = PacketView::loaded_bytes;
  STRATA_HD index_t units() const { return packets.size(); }
  STRATA_HD index_t scalars() const { return view.size() - tail_begin; }
  template <class A, class Op>
  STRATA_HD maybe<A> scalar(index_t k, Op) const {
    return {A(map(view.load(tail_begin + k))), true};
  }
  template <class A, class Op>
  STRATA_HD maybe<A> unit(index_t p, Op op) const {
    const auto pk = packets[p].get();
    constexpr int width = decltype(pk)::width;
    if (pk.valid == width) {  // every packet but a view's last: no lane to skip
      A acc = A(map(pk.lane[0]));
      STRATA_UNROLL
      for (int k = 1; k < width; ++k) acc = op(acc, A(map(pk.lane[k])));
      return {acc, true};
    }
    maybe<A> acc{A{}, false};
    STRATA_UNROLL
    for (int k = 0; k < width; ++k)
      if (k < pk.valid) acc = maybe_op<Op>{op}(acc, maybe<A>{A(map(pk.lane[k])), true});
    return acc;
  }
};

/// Records of a view read one by one (views that cannot take vector access).
template <class View, class Map>
struct record_source {
  View view;
  Map map;
  static constexpr std::size_t unit_bytes = 0;
  STRATA_HD index_t units() const { return 0; }
  STRATA_HD index_t scalars() const { return view.size(); }
  template <class A, class Op>
  STRATA_HD maybe<A> scalar(index_t k, Op) const {
    return {A(map(view.load(k))), true};
  }
  template <class A, class Op>
  STRATA_HD maybe<A> unit(index_t, Op) const {
    return {A{}, false};
  }
};

/// Block partials folded by the final launch.
template <class A>
struct partial_source {
  const maybe<A>* partials;
  index_t n;
  static constexpr std::size_t unit_bytes = 0;
  STRATA_HD index_t units() const { return 0; }
  STRATA_HD index_t scalars() const { return n; }
  template <class, class Op>
  STRATA_HD maybe<A> scalar(index_t k, Op) const {
    return partials[k];
  }
  template <class, class Op>
  STRATA_HD maybe<A> unit(index_t, Op) const {
    return {A{}, false};
  }
};

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int reduce_threads = 512;

/// Units a thread loads before it combines them: about 64 bytes in flight per thread and step
/// (four 16-byte vectors of a column, two packets of two 4-byte columns, one packet of four), so
/// that wide packets do not take the registers that let more warps stay resident.
template <class Source>
inline constexpr int reduce_unroll = Source::unit_bytes == 0 ? 1 : int(std::clamp<std::size_t>(64 / Source::unit_bytes, 1, 4));

/// Each block reduces a grid-stride share of the source, Unroll units a thread at a time. Final:
/// one block, which writes op(init, total) to *result; otherwise block b writes its partial to
/// partials[b].
template <class Source, class A, class Op, bool Final, int Unroll = reduce_unroll<Source>>
__global__ void __launch_bounds__(reduce_threads) reduce_kernel(Source src, Op op, A init, maybe<A>* partials, A* result) {
  using block_reduce = cub::BlockReduce<maybe<A>, reduce_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  const maybe_op<Op> mop{op};
  maybe<A> acc{A{}, false};
  const index_t tid = blockIdx.x * index_t(blockDim.x) + threadIdx.x, stride = index_t(gridDim.x) * blockDim.x;
  for (index_t k = tid; k < src.scalars(); k += stride) acc = mop(acc, src.template scalar<A>(k, op));
  const index_t units = src.units();
  index_t u = tid;
  // Unroll independent loads in flight per thread before their results are combined (pairwise).
  for (; u + (Unroll - 1) * stride < units; u += Unroll * stride) {
    maybe<A> part[Unroll];
    STRATA_UNROLL
    for (int j = 0; j < Unroll; ++j) part[j] = src.template unit<A>(u + j * stride, op);
    STRATA_UNROLL
    for (int w = 1; w < Unroll; w *= 2) {
      STRATA_UNROLL
      for (int j = 0; j + w < Unroll; j += 2 * w) part[j] = mop(part[j], part[j + w]);
    }
    acc = mop(acc, part[0]);
  }
  for (; u < units; u += stride) acc = mop(acc, src.template unit<A>(u, op));
  const maybe<A> block = block_reduce(temp).Reduce(acc, mop);
  if (threadIdx.x != 0) return;
  if constexpr (Final) *result = block.valid ? op(init, block.value) : init;
  else partials[blockIdx.x] = block;
}

/// Blocks for a reduction: as many as the GPU keeps resident of this kernel (the occupancy API:
/// packets of wide records take registers), fewer when there is less work.
template <auto Kernel>
int reduce_grid(index_t work) {
  return int(std::clamp<index_t>((work + reduce_threads - 1) / reduce_threads, 1, resident_blocks<Kernel>(reduce_threads)));
}

/// op(init, fold of src) into device memory at result, stream ordered.
template <class A, class Source, class Op>
void reduce_async(const Source& src, A init, Op op, A* device_result, stream_t stream, scratch_resource& r = scratch()) {
  constexpr auto blocks = &reduce_kernel<Source, A, Op, false>;
  const int grid = reduce_grid<blocks>(std::max(src.units(), src.scalars()));
  if (grid == 1) {
    launch<&reduce_kernel<Source, A, Op, true>>(1, reduce_threads, 0, stream, "strata reduction", src, op, init, nullptr, device_result);
    return;
  }
  scratch_block partials(sizeof(maybe<A>) * std::size_t(grid), stream, r);
  launch<blocks>(grid, reduce_threads, 0, stream, "strata reduction (blocks)", src, op, init, partials.as<maybe<A>>(), nullptr);
  launch<&reduce_kernel<partial_source<A>, A, Op, true>>(1, reduce_threads, 0, stream, "strata reduction (partials)",
                                                         partial_source<A>{partials.as<maybe<A>>(), grid}, op, init, nullptr,
                                                         device_result);
}

template <class A, class Source, class Op>
A reduce_to_host(const Source& src, A init, Op op, stream_t stream) {
  check_not_capturing(stream, "strata's reductions to the host", "wait for their result (use the *_async forms in a graph)");
  scratch_block result(sizeof(A), stream);
  reduce_async<A>(src, init, op, result.as<A>(), stream);
  A out;
  copy_bytes_async(&out, result.data(), sizeof(A), stream);
  synchronize(stream);
  return out;
}
#else
// Host backend: 64 chunks on OpenMP threads, combined in chunk order.
template <class A, class Source, class Op>
A reduce_to_host(const Source& src, A init, Op op, stream_t) {
  const maybe_op<Op> mop{op};
  constexpr int chunks = 64;
  maybe<A> part[chunks];
  const index_t scalars = src.scalars(), units = src.units();
  STRATA_PARALLEL_FOR_IF(units + scalars > 4096)
  for (int c = 0; c < chunks; ++c) {
    maybe<A> acc{A{}, false};
    for (index_t k = scalars * c / chunks; k < scalars * (c + 1) / chunks; ++k) acc = mop(acc, src.template scalar<A>(k, op));
    for (index_t u = units * c / chunks; u < units * (c + 1) / chunks; ++u) acc = mop(acc, src.template unit<A>(u, op));
    part[c] = acc;
  }
  maybe<A> total{A{}, false};
  for (auto& p : part) total = mop(total, p);
  return total.valid ? op(init, total.value) : init;
}
#endif

/// The operand a column span is, for the launch checks: where its memory lives.
template <class F>
operand column_operand(cuda::std::span<const F> column) {
  return {"column", locate(column.data()), index_t(column.size()), &type_name<F>, "elements"};
}

/// Packets over the records a view's whole packets cover, the rest one by one.
template <class View, class Map>
auto packet_source_of(const View& v, index_t body, Map map) {
  auto p = packets(leading(v, body));
  return packet_source<decltype(p), View, Map>{p, v, body, map};
}

struct identity_map {
  template <class X>
  STRATA_HD const X& operator()(const X& x) const {
    return x;
  }
};
}  // namespace detail

/// op-fold of a column (a span over device memory in the CUDA backend) with init: op must be
/// associative; elements are combined in a fixed order for a given device. The accumulator has
/// init's type, as in CUB: reduce(floats, 0.0, plus) adds in double.
template <class F, class A, class Op>
A reduce(cuda::std::span<const F> column, A init, Op op, stream_t stream = {}) {
  detail::launch_scope scope("strata::reduce", stream, {detail::column_operand(column)});
  return detail::reduce_to_host<A>(detail::column_source<F, detail::identity_map>{column.data(), index_t(column.size()), {}},
                                   init, op, stream);
}
template <class F, class A, class Op>
A reduce(cuda::std::span<F> column, A init, Op op, stream_t stream = {}) {
  return reduce(cuda::std::span<const F>(column), init, op, stream);
}

/// map each record of a view (SoA, AoSoA, AoS), projection or container to A (init's type: the
/// accumulator's) and fold with op; padding lanes never reach map. Packets when the view allows,
/// records otherwise.
template <class V, class Map, class A, class Op>
A transform_reduce(const V& v_arg, Map map, A init, Op op, stream_t stream = {}) {
  auto v = detail::as_const_view(v_arg);
  detail::launch_scope scope("strata::transform_reduce", stream, {detail::described(v, "input")});
  using record = typename decltype(v)::value_type;
  if constexpr (detail::packets_apply<record, decltype(v)>) {
    const index_t body = detail::packet_body<record>(v.size(), v);
    if (body >= 0) return detail::reduce_to_host<A>(detail::packet_source_of(v, body, map), init, op, stream);
  }
  return detail::reduce_to_host<A>(detail::record_source<decltype(v), Map>{v, map}, init, op, stream);
}

/// Stream-ordered form: the result lands in device memory (for benchmarks and pipelines).
#if defined(STRATA_BACKEND_CUDA)
template <class F, class A, class Op>
void reduce_async(cuda::std::span<const F> column, A init, Op op, A* device_result, stream_t stream = {}) {
  detail::launch_scope scope("strata::reduce_async", stream, {detail::column_operand(column)});
  detail::reduce_async<A>(detail::column_source<F, detail::identity_map>{column.data(), index_t(column.size()), {}}, init,
                          op, device_result, stream);
}
namespace detail {
/// transform_reduce_async with its scratch from r (a caller that reduces on one stream call after
/// call keeps its blocks: stream_scratch).
template <class V, class Map, class A, class Op>
void transform_reduce_async_from(const V& v_arg, Map map, A init, Op op, A* device_result, stream_t stream, scratch_resource& r) {
  auto v = as_const_view(v_arg);
  launch_scope scope("strata::transform_reduce_async", stream, {described(v, "input")});
  note_stream(v_arg, stream);
  using record = typename decltype(v)::value_type;
  if constexpr (packets_apply<record, decltype(v)>) {
    const index_t body = packet_body<record>(v.size(), v);
    if (body >= 0) return reduce_async<A>(packet_source_of(v, body, map), init, op, device_result, stream, r);
  }
  reduce_async<A>(record_source<decltype(v), Map>{v, map}, init, op, device_result, stream, r);
}
}  // namespace detail
template <class V, class Map, class A, class Op>
void transform_reduce_async(const V& v_arg, Map map, A init, Op op, A* device_result, stream_t stream = {}) {
  detail::transform_reduce_async_from(v_arg, map, init, op, device_result, stream, scratch());
}
#endif

/// Count, sum, min, max, mean and (population) variance of a column in one pass.
struct column_stats {
  double count = 0, mean = 0, m2 = 0, min = 0, max = 0;
  STRATA_HD double sum() const { return mean * count; }
  STRATA_HD double variance() const { return count > 0 ? m2 / count : 0; }
};

namespace detail {
struct stats_of {
  template <class F>
  STRATA_HD column_stats operator()(const F& x) const {
    double v = double(x);
    return {1, v, 0, v, v};
  }
  /// A vector's N elements at once: mean, then squares about it, with no division (N is a power
  /// of two). Merging the N elements one by one would cost two divisions each, and the divisions,
  /// not the loads, would then set the pace.
  template <class F, std::size_t N>
  STRATA_HD column_stats unit(const F (&e)[N]) const {
    double sum = 0, lo = double(e[0]), hi = double(e[0]);
    STRATA_UNROLL
    for (std::size_t k = 0; k < N; ++k) {
      const double v = double(e[k]);
      sum += v;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    const double mean = sum * (1.0 / double(N));
    double m2 = 0;
    STRATA_UNROLL
    for (std::size_t k = 0; k < N; ++k) {
      const double d = double(e[k]) - mean;
      m2 += d * d;
    }
    return {double(N), mean, m2, lo, hi};
  }
};
/// Chan et al.'s pairwise merge of (count, mean, M2): stable for long columns, unlike sum of squares.
struct merge_stats {
  STRATA_HD column_stats operator()(const column_stats& a, const column_stats& b) const {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    double n = a.count + b.count, d = b.mean - a.mean;
    return {n, a.mean + d * (b.count / n), a.m2 + b.m2 + d * d * (a.count * b.count / n), a.min < b.min ? a.min : b.min,
            a.max > b.max ? a.max : b.max};
  }
};
}  // namespace detail

template <class F>
column_stats statistics(cuda::std::span<const F> column, stream_t stream = {}) {
  detail::launch_scope scope("strata::statistics", stream, {detail::column_operand(column)});
  return detail::reduce_to_host<column_stats>(
      detail::column_source<F, detail::stats_of>{column.data(), index_t(column.size()), {}}, column_stats{},
      detail::merge_stats{}, stream);
}
template <class F>
column_stats statistics(cuda::std::span<F> column, stream_t stream = {}) {
  return statistics(cuda::std::span<const F>(column), stream);
}

}  // namespace strata
