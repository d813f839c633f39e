// Reductions: over one column (a span; 16-byte loads for the aligned body, scalar head and tail),
// over records of a view or projection (packets, padding lanes skipped), and column statistics
// (count, sum, min, max, mean, variance by Chan/Welford merging). One launch: each block reduces
// with cub::BlockReduce, the last block to finish folds the block partials in a fixed order.
#pragma once

#include <strata/memory/device.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/resource.hpp>

#include <cuda/std/span>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
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
    A acc = A(map(e[0]));
    STRATA_UNROLL
    for (index_t k = 1; k < lanes; ++k) acc = op(acc, A(map(e[k])));
    return {acc, true};
  }
};

/// Records of a view or projection as packets; lanes past size() are skipped.
template <class PacketView, class Map>
struct packet_source {
  PacketView packets;
  Map map;
  STRATA_HD index_t units() const { return packets.size(); }
  STRATA_HD index_t scalars() const { return 0; }
  template <class A, class Op>
  STRATA_HD maybe<A> scalar(index_t, Op) const {
    return {A{}, false};
  }
  template <class A, class Op>
  STRATA_HD maybe<A> unit(index_t p, Op op) const {
    const auto pk = packets[p].get();
    maybe<A> acc{A{}, false};
    STRATA_UNROLL
    for (int k = 0; k < decltype(pk)::width; ++k)
      if (k < pk.valid) acc = maybe_op<Op>{op}(acc, maybe<A>{A(map(pk.lane[k])), true});
    return acc;
  }
};

/// Records of a view read one by one (views that cannot take vector access).
template <class View, class Map>
struct record_source {
  View view;
  Map map;
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

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int reduce_threads = 512;

/// Device scratch for block partials, a completion counter and the result; grows, never shrinks.
inline std::byte* reduce_scratch(std::size_t bytes) {
  static thread_local buffer scratch;
  static thread_local int device = -1;
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  if (scratch.bytes() < bytes || dev != device) {
    scratch = buffer();
    buffer b(std::max<std::size_t>(bytes, 4096), memory_space::device);
    fill_bytes_async(b.data(), 0, b.bytes(), stream_t{}, memory_space::device);
    synchronize(stream_t{});
    scratch = std::move(b);
    device = dev;
  }
  return scratch.data();
}

template <class Source, class A, class Op>
__global__ void __launch_bounds__(reduce_threads) reduce_kernel(Source src, Op op, A init, maybe<A>* partials,
                                                               unsigned* done, A* result) {
  using block_reduce = cub::BlockReduce<maybe<A>, reduce_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  __shared__ bool last;
  const maybe_op<Op> mop{op};
  maybe<A> acc{A{}, false};
  const index_t tid = blockIdx.x * index_t(blockDim.x) + threadIdx.x, stride = index_t(gridDim.x) * blockDim.x;
  for (index_t k = tid; k < src.scalars(); k += stride) acc = mop(acc, src.template scalar<A>(k, op));
  const index_t units = src.units();
  index_t u = tid;
  // Four independent vector loads in flight per thread before their results are combined.
  for (; u + 3 * stride < units; u += 4 * stride) {
    maybe<A> a = src.template unit<A>(u, op), b = src.template unit<A>(u + stride, op),
             c = src.template unit<A>(u + 2 * stride, op), d = src.template unit<A>(u + 3 * stride, op);
    acc = mop(acc, mop(mop(a, b), mop(c, d)));
  }
  for (; u < units; u += stride) acc = mop(acc, src.template unit<A>(u, op));
  maybe<A> block = block_reduce(temp).Reduce(acc, mop);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The last block folds the partials in block order: the result does not depend on timing.
  maybe<A> total{A{}, false};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total = mop(total, partials[b]);
  __syncthreads();
  total = block_reduce(temp).Reduce(total, mop);
  if (threadIdx.x == 0) {
    *result = total.valid ? op(init, total.value) : init;
    *done = 0;  // ready for the next launch on this scratch
  }
}

template <class A, class Source, class Op>
void reduce_async(const Source& src, A init, Op op, A* device_result, stream_t stream) {
  check_stream(stream, "strata reduction");
  const auto& shape = current_device_shape();
  const int grid = std::max(1, shape.sms * (shape.max_threads_per_sm / reduce_threads));
  std::byte* s = reduce_scratch(align_up(sizeof(maybe<A>) * grid, 256) + 256);
  auto* partials = reinterpret_cast<maybe<A>*>(s);
  auto* done = reinterpret_cast<unsigned*>(s + align_up(sizeof(maybe<A>) * grid, 256));
  reduce_kernel<Source, A, Op><<<grid, reduce_threads, 0, stream>>>(src, op, init, partials, done, device_result);
  check_launch("strata reduction");
}

template <class A, class Source, class Op>
A reduce_to_host(const Source& src, A init, Op op, stream_t stream) {
  static thread_local buffer result;
  if (!result.data()) result = buffer(256, memory_space::device);
  reduce_async<A>(src, init, op, reinterpret_cast<A*>(result.data()), stream);
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

struct identity_map {
  template <class X>
  STRATA_HD const X& operator()(const X& x) const {
    return x;
  }
};
}  // namespace detail

/// op-fold of a column (a span over device memory in the CUDA backend) with init: op must be
/// associative; elements are combined in a fixed order for a given device.
template <class F, class Op>
F reduce(cuda::std::span<const F> column, F init, Op op, stream_t stream = {}) {
  return detail::reduce_to_host<F>(detail::column_source<F, detail::identity_map>{column.data(), index_t(column.size()), {}},
                                   init, op, stream);
}
template <class F, class Op>
F reduce(cuda::std::span<F> column, F init, Op op, stream_t stream = {}) {
  return reduce(cuda::std::span<const F>(column), init, op, stream);
}

/// map each record of a view, projection or container to A and fold with op; padding lanes never
/// reach map. Packets when the view allows, records otherwise.
template <class V, class Map, class A, class Op>
A transform_reduce(const V& v_arg, Map map, A init, Op op, stream_t stream = {}) {
  auto v = detail::as_const_view(v_arg);
  using record = typename decltype(v)::value_type;
  if constexpr (layout::record_descriptor<record>::all_fields_vectorizable) {
    if (v.vector_ready())
      return detail::reduce_to_host<A>(detail::packet_source<decltype(packets(v)), Map>{packets(v), map}, init, op, stream);
  }
  return detail::reduce_to_host<A>(detail::record_source<decltype(v), Map>{v, map}, init, op, stream);
}

/// Stream-ordered form: the result lands in device memory (for benchmarks and pipelines).
#if defined(STRATA_BACKEND_CUDA)
template <class F, class Op>
void reduce_async(cuda::std::span<const F> column, F init, Op op, F* device_result, stream_t stream = {}) {
  detail::reduce_async<F>(detail::column_source<F, detail::identity_map>{column.data(), index_t(column.size()), {}}, init,
                          op, device_result, stream);
}
template <class V, class Map, class A, class Op>
void transform_reduce_async(const V& v_arg, Map map, A init, Op op, A* device_result, stream_t stream = {}) {
  auto v = detail::as_const_view(v_arg);
  if (!v.vector_ready()) throw size_error("strata::transform_reduce_async: the view cannot take packet access");
  detail::reduce_async<A>(detail::packet_source<decltype(packets(v)), Map>{packets(v), map}, init, op, device_result, stream);
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
  return detail::reduce_to_host<column_stats>(
      detail::column_source<F, detail::stats_of>{column.data(), index_t(column.size()), {}}, column_stats{},
      detail::merge_stats{}, stream);
}
template <class F>
column_stats statistics(cuda::std::span<F> column, stream_t stream = {}) {
  return statistics(cuda::std::span<const F>(column), stream);
}

}  // namespace strata
