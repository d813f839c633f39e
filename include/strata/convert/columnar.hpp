// SPDX-License-Identifier: Apache-2.0
// Columnar -> columnar copies (SoA <-> AoSoA, AoSoA of one block size -> another, SoA -> SoA): the
// leaves of a few consecutive records lie in runs inside one block on both sides (blocks hold
// whole packets, and a group of at most 16 / widest-leaf records divides a packet), so a thread moves them as one access per leaf, no per-record
// registers, no shared memory. The host backend runs the same body per group on OpenMP threads.
#pragma once

#include <strata/config.hpp>
#include <strata/container/view.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>

#include <cuda/std/tuple>

#include <cstdint>
#include <string>
#include <utility>

namespace strata::detail {

/// A thread copies `group` consecutive records, every leaf of them: leaf L's part is
/// group * sizeof(L) bytes, one access of at most 16 bytes, every leaf loaded before any is stored;
/// consecutive threads take consecutive groups, so a warp's accesses to a leaf are contiguous on
/// both sides and the warp touches all of its records' bytes at once. `group` is the largest power
/// of two up to 16 whose records fit in 128 bytes and whose widest leaf fits in one 16-byte access
/// (4 particles of seven floats, 2 records of {double, int8}, 1 record with a 16-byte leaf): a
/// part of several 16-byte vectors per thread would spread a warp's accesses over several
/// segments each and lose a third of the bandwidth.
template <class T, class MS, class MD>
struct record_group_body {
  using desc = layout::record_descriptor<T>;
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  static constexpr index_t group = [] {
    index_t g = 1;
    while (g < 16 && std::size_t(g) * 2 * desc::packed_size <= 128 && std::size_t(g) * 2 * desc::widest_leaf <= vector_bytes) g *= 2;
    return g;
  }();
  template <std::size_t L>
  struct part {
    static constexpr std::size_t bytes = std::size_t(group) * sizeof(reflect::leaf_type_t<T, L>);
    static_assert(bytes <= vector_bytes);
    using word = vec::word_t<bytes>;
  };
  /// Leaves held in registers before their stores: at most 16 at a time.
  static constexpr std::size_t batch = 16;

  basic_view<const T, MS> src;
  basic_view<T, MD> dst;
  index_t n;
  index_t owned;  ///< records both sides own (capacity): whole groups inside it move as words

  STRATA_HD void operator()(index_t g) const {
    const index_t r = g * group;
    if (r + group <= owned) {
      [&]<std::size_t... B>(std::index_sequence<B...>) { (copy_batch<B * batch>(r), ...); }(
          std::make_index_sequence<(leaves + batch - 1) / batch>{});
    } else {
      // The last records of a view whose memory ends inside the group (a foreign view).
      for (index_t i = r; i < n; ++i) dst.store(i, src.load(i));
    }
  }

 private:
  template <std::size_t First>
  STRATA_HD void copy_batch(index_t r) const {
    constexpr std::size_t count = leaves - First < batch ? leaves - First : batch;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      auto words = cuda::std::make_tuple(load_part<First + J>(r)...);
      (store_part<First + J>(r, cuda::std::get<J>(words)), ...);
    }(std::make_index_sequence<count>{});
  }
  template <std::size_t L>
  STRATA_HD typename part<L>::word load_part(index_t r) const {
    return vec::load<part<L>::bytes>(reinterpret_cast<const char*>(src.template leaf_ptr<L>(r)));
  }
  template <std::size_t L>
  STRATA_HD void store_part(index_t r, const typename part<L>::word& w) const {
    vec::store<part<L>::bytes>(reinterpret_cast<char*>(dst.template leaf_ptr<L>(r)), w);
  }
};

#if defined(STRATA_BACKEND_CUDA)
inline constexpr int columnar_copy_threads = 256;
template <class Body>
__global__ void __launch_bounds__(columnar_copy_threads) columnar_copy_kernel(Body body, index_t groups) {
  const index_t g = index_t(blockIdx.x) * columnar_copy_threads + threadIdx.x;
  if (g < groups) body(g);
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

/// dst records [0, n) = src records [0, n), leaf by leaf in accesses of up to 16 bytes; stream-ordered.
template <class T, class MS, class MD>
void columnar_copy(const basic_view<const T, MS>& src, const basic_view<T, MD>& dst, stream_t stream) {
  static_assert(layout::record_descriptor<T>::all_leaves_vectorizable);
  const index_t n = src.size();
  if (n == 0) return;
  using body_t = record_group_body<T, MS, MD>;
  const body_t body{src, dst, n, src.capacity() < dst.capacity() ? src.capacity() : dst.capacity()};
  const index_t groups = (n + body_t::group - 1) / body_t::group;
#if defined(STRATA_BACKEND_CUDA)
  const index_t blocks = (groups + columnar_copy_threads - 1) / columnar_copy_threads;
  if (blocks > index_t(0x7fffffff)) throw size_error("strata: columnar copy of " + std::to_string(n) + " records needs too many blocks");
  columnar_copy_kernel<<<unsigned(blocks), columnar_copy_threads, 0, stream>>>(body, groups);
  check_launch("columnar copy kernel launch");
#else
  (void)stream;
  STRATA_PARALLEL_FOR_IF(groups > 4096)
  for (index_t g = 0; g < groups; ++g) body(g);
#endif
}

}  // namespace strata::detail
