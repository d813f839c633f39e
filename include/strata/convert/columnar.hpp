// SPDX-License-Identifier: Apache-2.0
// Columnar -> columnar copies (SoA <-> AoSoA, AoSoA of one block size -> another, SoA -> SoA): every
// leaf of a columnar mapping lies in runs of whole 16-byte units (blocks are multiples of 16
// records), so each leaf moves as 16-byte vectors, one load and one store per unit, whatever the
// record: no per-record registers, no shared memory. Thread k moves unit k of every leaf (a unit
// is 16 / sizeof(leaf) records), loading a batch of leaves before storing any. The host backend
// runs the same body per unit on OpenMP threads.
#pragma once

#include <strata/config.hpp>
#include <strata/container/view.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <cstdint>
#include <string>

namespace strata::detail {

template <class T, class MS, class MD>
struct columnar_copy_body {
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  /// Leaves loaded into registers before any is stored: eight 16-byte vectors (32 registers).
  static constexpr std::size_t batch = 8;
  basic_view<const T, MS> src;
  basic_view<T, MD> dst;
  index_t n;
  index_t owned;  ///< records both sides own (capacity): whole units inside it move as vectors

  template <std::size_t L>
  static constexpr index_t unit = index_t(vector_bytes / sizeof(reflect::leaf_type_t<T, L>));

  STRATA_HD void operator()(index_t k) const {
    [&]<std::size_t... B>(std::index_sequence<B...>) { (copy_batch<B * batch>(k), ...); }(
        std::make_index_sequence<(leaves + batch - 1) / batch>{});
  }

 private:
  template <std::size_t First>
  STRATA_HD void copy_batch(index_t k) const {
    constexpr std::size_t count = leaves - First < batch ? leaves - First : batch;
    vec::word16 w[count];
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((k * unit<First + J> < n && (k + 1) * unit<First + J> <= owned
            ? void(w[J] = vec::load<16>(src.template leaf_ptr<First + J>(k * unit<First + J>)))
            : void()),
       ...);
      (store_unit<First + J>(k, w[J]), ...);
    }(std::make_index_sequence<count>{});
  }
  template <std::size_t L>
  STRATA_HD void store_unit(index_t k, const vec::word16& w) const {
    constexpr index_t u = unit<L>;
    const index_t r = k * u;
    if (r >= n) return;
    if (r + u <= owned) {
      vec::store<16>(dst.template leaf_ptr<L>(r), w);
    } else {
      // A unit one side does not wholly own (a foreign view's last records): element by element.
      for (index_t j = r; j < n; ++j) *dst.template leaf_ptr<L>(j) = *src.template leaf_ptr<L>(j);
    }
  }
};

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int columnar_copy_threads = 256;
template <class Body>
__global__ void __launch_bounds__(columnar_copy_threads) columnar_copy_kernel(Body body, index_t units) {
  const index_t k = index_t(blockIdx.x) * columnar_copy_threads + threadIdx.x;
  if (k < units) body(k);
}
#endif

/// Whether columnar_copy can run: every leaf 1, 2, 4, 8 or 16 bytes, both sides' runs 16-byte
/// aligned (false for a foreign view aligned for its elements only).
template <class T, class MS, class MD>
bool columnar_copy_applies(const basic_view<const T, MS>& src, const basic_view<T, MD>& dst) {
  if constexpr (!layout::record_descriptor<T>::all_leaves_vectorizable || !layout::packet_aligned_blocks<MS>() ||
                !layout::packet_aligned_blocks<MD>()) {
    return false;
  } else {
    return src.vector_aligned() && dst.vector_aligned();
  }
}

/// dst records [0, n) = src records [0, n), leaf by leaf in 16-byte units; stream-ordered.
template <class T, class MS, class MD>
void columnar_copy(const basic_view<const T, MS>& src, const basic_view<T, MD>& dst, stream_t stream) {
  static_assert(layout::record_descriptor<T>::all_leaves_vectorizable);
  const index_t n = src.size();
  if (n == 0) return;
  using body_t = columnar_copy_body<T, MS, MD>;
  body_t body{src, dst, n, src.capacity() < dst.capacity() ? src.capacity() : dst.capacity()};
  // Units of the widest leaf are the most numerous: one thread each.
  const index_t u_min = index_t(vector_bytes / layout::record_descriptor<T>::widest_leaf);
  const index_t units = (n + u_min - 1) / u_min;
#if defined(STRATA_BACKEND_CUDA)
  const index_t blocks = (units + columnar_copy_threads - 1) / columnar_copy_threads;
  if (blocks > index_t(0x7fffffff)) throw size_error("strata: columnar copy of " + std::to_string(n) + " records needs too many blocks");
  columnar_copy_kernel<<<unsigned(blocks), columnar_copy_threads, 0, stream>>>(body, units);
  check_launch("columnar copy kernel launch");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(units > 4096)
  for (index_t k = 0; k < units; ++k) body(k);
#endif
}

}  // namespace strata::detail
