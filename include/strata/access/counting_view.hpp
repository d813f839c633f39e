// SPDX-License-Identifier: Apache-2.0
// Access counting: a view that counts, leaf by leaf, the values a kernel reads and writes through
// it, and optionally which bytes of the allocation it touched (a heatmap, one counter per granule
// of bytes, 32 by default: a DRAM sector). A user kernel takes a counting_view where it took the
// basic_view and reads and writes through read<L>() / write<L>(), get<&T::x>() / set<&T::x>(), or
// whole records (load / store, ref = r, T r = ref); the counts then say what it moved.
//
// Cost: every access is an atomic add to the leaf's counter. Threads of a warp that touch the same
// leaf add their count once (a match over the counter's address, then one atomic), so a kernel in
// which every thread reads the same leaves issues one atomic per leaf a warp; a heatmap adds one
// per granule touched. Counting is for measuring a kernel, not for production runs.
#pragma once

#include <strata/access/counts.hpp>
#include <strata/config.hpp>
#include <strata/container/view.hpp>
#include <strata/memory/resource.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strata {

namespace detail {
/// Adds 1 to *c for every calling thread; on the GPU the threads of a warp that hit the same
/// counter add their number with one atomic.
STRATA_HD inline void count_one(unsigned long long* c) {
#if defined(__CUDA_ARCH__)
  const unsigned same = __match_any_sync(__activemask(), reinterpret_cast<unsigned long long>(c));
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane == unsigned(__ffs(same) - 1)) atomicAdd(c, static_cast<unsigned long long>(__popc(same)));
#else
  std::atomic_ref<unsigned long long>(*c).fetch_add(1, std::memory_order_relaxed);
#endif
}
}  // namespace detail

template <class T, class M>
class counting_view;

/// Record i of a counting view: reads and writes go through the view and are counted.
template <class T, class M>
class counting_reference {
 public:
  using record = std::remove_const_t<T>;
  STRATA_HD counting_reference(const counting_view<T, M>& v, index_t i) : view_(v), i_(i) {}
  counting_reference(const counting_reference&) = default;

  STRATA_HD operator record() const { return view_.load(i_); }
  STRATA_HD record get() const { return view_.load(i_); }
  STRATA_HD const counting_reference& operator=(const record& r) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, r);
    return *this;
  }
  // Assigning one proxy to another copies the record (counted both ways), as for a real reference.
  STRATA_HD const counting_reference& operator=(const counting_reference& o) const
    requires(!std::is_const_v<T>)
  {
    view_.store(i_, o.get());
    return *this;
  }
  template <class U>
    requires(!std::is_const_v<T> && std::is_same_v<std::remove_const_t<U>, record>)
  STRATA_HD const counting_reference& operator=(const counting_reference<U, M>& o) const {
    view_.store(i_, o.get());
    return *this;
  }
  friend STRATA_HD void swap(const counting_reference& a, const counting_reference& b)
    requires(!std::is_const_v<T>)
  {
    const record t = a.get();
    a = b.get();
    b = t;
  }
  template <auto Sel>
  STRATA_HD auto get() const {
    return view_.template read<reflect::leaf_of<record, Sel>>(i_);
  }
  template <auto Sel, class V>
  STRATA_HD void set(const V& value) const {
    view_.template write<reflect::leaf_of<record, Sel>>(i_, value);
  }

 private:
  counting_view<T, M> view_;
  index_t i_;
};

/// A columnar view (SoA, AoSoA, packed AoS) whose accesses are counted. Made by an
/// access_counter, which owns the counters; trivially copyable into kernels.
template <class T, class M>
class counting_view {
 public:
  using record = std::remove_const_t<T>;
  using base_view = basic_view<T, M>;
  using reference = counting_reference<T, M>;
  static constexpr std::size_t leaves = base_view::leaves;
  template <std::size_t L>
  using leaf_type = typename base_view::template leaf_type<L>;

  counting_view() = default;
  STRATA_HD counting_view(const base_view& v, unsigned long long* counters, unsigned long long* heat, std::uintptr_t base,
                          std::size_t granule, std::size_t granules)
      : view_(v), counters_(counters), heat_(heat), base_(base), granule_(granule), granules_(granules) {}

  STRATA_HD index_t size() const { return view_.size(); }
  STRATA_HD const base_view& uncounted() const { return view_; }
  STRATA_HD reference operator[](index_t i) const { return reference(*this, i); }

  template <std::size_t L>
  STRATA_HD std::remove_const_t<leaf_type<L>> read(index_t i) const {
    note<L>(i, 0);
    return *view_.template leaf_ptr<L>(i);
  }
  template <std::size_t L, class V>
  STRATA_HD void write(index_t i, const V& value) const {
    static_assert(!std::is_const_v<T>, "strata: this counting view reads only (it counts a const view)");
    if constexpr (!std::is_const_v<T>) {
      note<L>(i, leaves);
      *view_.template leaf_ptr<L>(i) = static_cast<leaf_type<L>>(value);
    }
  }
  STRATA_HD record load(index_t i) const {
    record r;
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      reflect::leaf<L>(r) = read<L>(i);
    });
    return r;
  }
  STRATA_HD void store(index_t i, const record& r) const {
    reflect::for_each_leaf<record>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      write<L>(i, reflect::leaf<L>(r));
    });
  }

 private:
  template <std::size_t L>
  STRATA_HD void note(index_t i, std::size_t kind) const {
    detail::count_one(counters_ + kind + L);
    if (heat_ != nullptr) {
      const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(view_.template leaf_ptr<L>(i));
      const std::size_t first = (a - base_) / granule_, last = (a + sizeof(leaf_type<L>) - 1 - base_) / granule_;
      for (std::size_t g = first; g <= last && g < granules_; ++g) detail::count_one(heat_ + g);
    }
  }

  base_view view_{};
  unsigned long long* counters_ = nullptr;  ///< reads of each leaf, then writes of each leaf
  unsigned long long* heat_ = nullptr;      ///< accesses of each granule, or null
  std::uintptr_t base_ = 0;
  std::size_t granule_ = 1;
  std::size_t granules_ = 0;
};

/// Owns the counters of a counting view of `v` (in the memory space of v's records, zeroed):
/// `view()` goes into the kernel, `counts()` and `heatmap()` read the results after it.
template <class T, class M>
class access_counter {
 public:
  using record = std::remove_const_t<T>;
  /// granule: the heatmap's bytes a counter (0: no heatmap). The heatmap covers the bytes from the
  /// lowest leaf of record 0 to the end of the last leaf of record capacity() - 1.
  explicit access_counter(const basic_view<T, M>& v, std::size_t granule = 0) : view_(v), granule_(granule) {
    if (granule != 0 && v.capacity() > 0) {
      std::uintptr_t lo = ~std::uintptr_t(0), hi = 0;
      reflect::for_each_leaf<record>([&](auto f) {
        constexpr std::size_t L = decltype(f)::value;
        const auto first = reinterpret_cast<std::uintptr_t>(v.template leaf_ptr<L>(0));
        const auto last = reinterpret_cast<std::uintptr_t>(v.template leaf_ptr<L>(v.capacity() - 1)) + reflect::leaf_sizes<record>[L];
        lo = first < lo ? first : lo;
        hi = last > hi ? last : hi;
      });
      // The heatmap covers one allocation: leaves spread over more bytes than the mapping places
      // (a foreign view's columns in separate allocations) would count the gaps between them.
      if (hi - lo > M::bytes(std::size_t(v.capacity())))
        throw std::invalid_argument("strata: access_counter: the view's leaves span " + std::to_string(hi - lo) +
                                    " bytes where its mapping places " + std::to_string(M::bytes(std::size_t(v.capacity()))) +
                                    " (columns in separate allocations): count it without a heatmap (granule 0)");
      base_ = lo;
      span_ = hi - lo;
      granules_ = (span_ + granule - 1) / granule;
    }
    const std::size_t words = 2 * leaves + granules_;
    counters_ = buffer(words * sizeof(unsigned long long), v.location().space);
    reset();
  }

  counting_view<T, M> view() const {
    auto* c = reinterpret_cast<unsigned long long*>(counters_.data());
    return counting_view<T, M>(view_, c, granules_ == 0 ? nullptr : c + 2 * leaves, base_, granule_ == 0 ? 1 : granule_, granules_);
  }
  /// The counts so far (waits for the device).
  access_counts<record> counts() const {
    const auto w = words();
    access_counts<record> out;
    out.records = std::uint64_t(view_.size());
    for (std::size_t l = 0; l < leaves; ++l) out.reads[l] = w[l], out.writes[l] = w[leaves + l];
    return out;
  }
  /// Accesses per granule of the allocation, lowest address first (empty without a heatmap).
  std::vector<std::uint64_t> heatmap() const {
    const auto w = words();
    return {w.begin() + std::ptrdiff_t(2 * leaves), w.end()};
  }
  /// Writes the heatmap as text: a header line `# strata heatmap granule=G span=S record_bytes=R`
  /// (R: the bytes of a block, one record for packed AoS, N records for AoSoA; 0 for SoA), then
  /// one count a line (none for an empty view). scripts/heatmap.py draws it as a PNG, a row of pixels a record or block.
  void write_heatmap(const std::string& path) const {
    if (granule_ == 0) throw std::logic_error("strata: access_counter::write_heatmap: this counter keeps no heatmap (granule 0)");
    const auto h = heatmap();
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("strata: access_counter::write_heatmap: cannot open " + path);
    const std::size_t block_bytes = M::block == 0 ? 0 : M::block_bytes;
    bool ok = std::fprintf(f, "# strata heatmap granule=%zu span=%zu record_bytes=%zu\n", granule_, span_, block_bytes) > 0;
    for (std::size_t g = 0; ok && g < h.size(); ++g) ok = std::fprintf(f, "%llu\n", static_cast<unsigned long long>(h[g])) > 0;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) throw std::runtime_error("strata: access_counter::write_heatmap: writing " + path + " failed");
  }
  std::size_t granule() const { return granule_; }
  /// Bytes the heatmap covers; granule g counts accesses to bytes [g * granule, (g + 1) * granule).
  std::size_t span_bytes() const { return span_; }
  void reset() {
    synchronize(stream_t{});
    fill_bytes_async(counters_.data(), 0, counters_.bytes(), stream_t{}, counters_.space());
    synchronize(stream_t{});
  }

 private:
  static constexpr std::size_t leaves = reflect::leaf_count<record>;
  std::vector<std::uint64_t> words() const {
    std::vector<std::uint64_t> w(counters_.bytes() / sizeof(unsigned long long));
    synchronize(stream_t{});
    if (!w.empty()) copy_bytes(w.data(), counters_.data(), counters_.bytes());
    return w;
  }
  basic_view<T, M> view_;
  std::size_t granule_ = 0, granules_ = 0, span_ = 0;
  std::uintptr_t base_ = 0;
  buffer counters_;
};

namespace detail {
template <class V>
auto counter_for(const V& v, std::size_t granule) {
  return access_counter<std::conditional_t<V::is_const, const typename V::record, typename V::record>, typename V::mapping_type>(v, granule);
}
}  // namespace detail

/// Counters for a container's or a view's records: count_accesses(c).view() goes into the kernel
/// (a const container's counting view reads only).
template <class C>
auto count_accesses(C& c, std::size_t granule = 0) {
  if constexpr (requires { c.view(); }) return detail::counter_for(c.view(), granule);
  else return detail::counter_for(c, granule);
}
template <class C>
auto count_accesses(const C& c, std::size_t granule = 0) {
  if constexpr (requires { c.const_view(); }) return detail::counter_for(c.const_view(), granule);
  else return detail::counter_for(c, granule);
}

}  // namespace strata
