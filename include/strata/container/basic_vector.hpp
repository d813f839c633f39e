// SPDX-License-Identifier: Apache-2.0
// basic_vector<T, M, Space>: the owning container over a mapping M (layout/mapping.hpp), one
// allocation per container laid out by M. soa_vector, aosoa_vector and aos_vector are this
// container over the SoA, blocked and padded AoS mappings; its view is the mapping kind's
// (basic_view over leaves for columnar mappings, aos_view over whole records). Copies are deep, as for thrust::device_vector; element access from the host is
// the slow path. Device memory stays on the GPU that was current when it was first allocated; the
// container's own operations run there whatever device is current.
//
// Records move between allocations as byte runs where the mapping allows: one run for padded AoS, a
// column per leaf for SoA; for blocked mappings the whole blocks of a range as one run plus the partial blocks at its
// ends leaf by leaf. A range that lands at a different position inside a block (appending to a
// blocked container whose size is not a whole number of blocks) is copied record by record by one
// Thrust kernel over the two views.
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/container/host_transpose.hpp>
#include <strata/container/view.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/memory/fill.hpp>
#include <strata/memory/resource.hpp>
#include <strata/iterator/record_iterator.hpp>

#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#if defined(STRATA_BACKEND_CUDA)
#include <thrust/system/cuda/execution_policy.h>
#endif

#include <cuda/std/array>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

template <class R, class T>
concept contiguous_range_of = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                              std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, T>;

namespace detail {
/// The view of a mapping kind: leaf views over columnar mappings, record views over record mappings.
template <class U, class M, bool Columnar = layout::columnar_mapping<M>>
struct view_for {
  using type = basic_view<U, M>;
};
template <class U, class M>
struct view_for<U, M, false> {
  using type = aos_view<U>;
};
}  // namespace detail

template <class T, class M, memory_space Space = memory_space::device>
class basic_vector {
  static constexpr bool columnar = layout::columnar_mapping<M>;
  static_assert((columnar || layout::record_mapping<M>) && std::is_same_v<typename M::record, T>,
                "strata: basic_vector needs a columnar or record mapping of T");
  static constexpr bool proven() {
    if constexpr (columnar) return M::proven();
    else return true;
  }
  static_assert(proven(), "strata: the mapping's layout facts (alignment, no overlap) do not hold for this record");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using mapping_type = M;
  using layout_type = M;
  using view_type = typename detail::view_for<T, M>::type;
  using const_view_type = typename detail::view_for<const T, M>::type;
  static constexpr memory_space space = Space;
  static constexpr std::size_t leaves = layout_type::leaves;
  /// The name errors use: the mapping's container alias (soa_vector, ...) where it gives one.
  static constexpr std::string_view container_name = [] {
    if constexpr (requires { M::container_name; }) return std::string_view(M::container_name);
    else return std::string_view("basic_vector");
  }();

  basic_vector() = default;
  explicit basic_vector(size_type n) { resize(n); }
  basic_vector(size_type n, const T& value) { resize(n, value); }
  /// AoS in: any contiguous host range of T (std::vector<T>, std::span<const T>, an array).
  template <class R>
    requires contiguous_range_of<R, T>
  explicit basic_vector(const R& records) {
    assign(std::ranges::data(records), std::ranges::size(records));
  }
  basic_vector(std::initializer_list<T> records) { assign(records.begin(), records.size()); }

  basic_vector(const basic_vector& o) { copy_from(o); }
  template <memory_space S>
  explicit basic_vector(const basic_vector<T, M, S>& o) {
    copy_from(o);
  }
  basic_vector(basic_vector&& o) noexcept
      : buf_(std::move(o.buf_)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)),
        device_(std::exchange(o.device_, -1)), pending_(o.pending_.exchange(0, std::memory_order_relaxed)),
        pending_device_(o.pending_device_.load(std::memory_order_relaxed)) {}
  basic_vector& operator=(const basic_vector& o) {
    if (this != &o) basic_vector(o).swap(*this);
    return *this;
  }
  basic_vector& operator=(basic_vector&& o) noexcept {
    basic_vector(std::move(o)).swap(*this);
    return *this;
  }

  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  static constexpr size_type max_size() noexcept { return layout_type::max_capacity; }
  /// Bytes of the one allocation (columns, their padding and the gaps to 256-byte boundaries).
  size_type allocated_bytes() const noexcept { return buf_.bytes(); }
  /// Record mappings: the padded records, one object each.
  auto* data() noexcept
    requires(!columnar)
  {
    return stored_ptr();
  }
  const auto* data() const noexcept
    requires(!columnar)
  {
    return stored_ptr();
  }
  /// Shared ownership of the current allocation (null when there is none): whoever holds it may
  /// read the memory after the container has grown, traded storage or been destroyed (it then
  /// holds the records as they were). DLPack exports of a shared container hold it.
  std::shared_ptr<const void> storage() const noexcept { return buf_.share(); }
  /// The GPU holding the records (-1: none yet, or host memory).
  int device() const noexcept { return device_; }
  memory_location location() const noexcept { return {Space, device_}; }

  void swap(basic_vector& o) noexcept {
    buf_.swap(o.buf_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(device_, o.device_);
    // Work noted on either may still run on either storage (a gather into a spare that then trades
    // places): both keep both notes.
    const std::uintptr_t both = merged(pending_.load(std::memory_order_relaxed), o.pending_.load(std::memory_order_relaxed));
    pending_.store(both, std::memory_order_relaxed), o.pending_.store(both, std::memory_order_relaxed);
    const int dev = std::max(pending_device_.load(std::memory_order_relaxed), o.pending_device_.load(std::memory_order_relaxed));
    pending_device_.store(dev, std::memory_order_relaxed), o.pending_device_.store(dev, std::memory_order_relaxed);
  }

  /// Records that work on this container's memory was queued on `stream` (strata's algorithms call
  /// it). A stream that the legacy default stream does not wait for (one created non-blocking, or
  /// any other stream of the caller's) makes the next host-side operation (element access,
  /// push_back, growth, copies to the host) first wait for the GPU, so it never races with that
  /// work; for device memory the legacy default stream needs nothing (the copies run on it), for
  /// pinned memory, which the host reads and writes directly, every stream is noted. The stream
  /// handle is only compared, never used: a stream destroyed since is harmless.
  void note_stream(stream_t stream) const noexcept {
#if defined(STRATA_BACKEND_CUDA)
    if (Space == memory_space::host) return;  // kernels never touch pageable memory
    const bool legacy = stream == nullptr || stream == cudaStreamLegacy;
    if (legacy && Space == memory_space::device) return;
    const std::uintptr_t token = legacy ? legacy_token : reinterpret_cast<std::uintptr_t>(stream);
    std::uintptr_t cur = pending_.load(std::memory_order_relaxed);
    while (!pending_.compare_exchange_weak(cur, merged(cur, token), std::memory_order_relaxed)) {
    }
    if (Space == memory_space::pinned) {
      int dev = -1;
      if (cudaGetDevice(&dev) == cudaSuccess) pending_device_.store(dev, std::memory_order_relaxed);
    }
#else
    (void)stream;
#endif
  }
  /// Waits for the work noted on this container (note_stream); host-side operations call it.
  void wait() const { settle(); }
  /// The caller has waited for `stream`: work noted on it alone is done.
  void note_done(stream_t stream) const noexcept {
#if defined(STRATA_BACKEND_CUDA)
    std::uintptr_t cur = token_of(stream);
    pending_.compare_exchange_strong(cur, 0, std::memory_order_relaxed);
#else
    (void)stream;
#endif
  }
  friend void swap(basic_vector& a, basic_vector& b) noexcept { a.swap(b); }

  /// Grows capacity to at least n (rounded to whole packets). Strong guarantee: on failure the
  /// container is unchanged.
  void reserve(size_type n) {
    if (n <= capacity_) return;
    check_size(n, "reserve");
    settle();
    detail::device_guard on(device_);  // the copy and the wait for it on the container's GPU
    basic_vector grown;
    grown.device_ = device_;
    grown.allocate(layout_type::round_capacity(n));
    grown.copy_records(0, *this, 0, size_, stream_t{});
    synchronize(stream_t{});
    grown.size_ = size_;
    swap(grown);
  }

  /// New records are value-initialised (all bytes zero) or copies of value. Strong guarantee.
  void resize(size_type n) { resize_impl(n, nullptr); }
  /// Size n without writing the records past the old size (they hold whatever the allocation
  /// holds): for callers that overwrite them at once (copy_if). Strong guarantee.
  void resize_for_overwrite(size_type n) {
    check_size(n, "resize_for_overwrite");
    if (n > capacity_) reserve(std::max(n, capacity_ + capacity_ / 2));
    size_ = n;
  }
  void resize(size_type n, const T& value) { resize_impl(n, &value); }
  void clear() noexcept { size_ = 0; }

  // Views are taken from lvalues only: a view of a temporary container would dangle.
  view_type view() & noexcept {
    if constexpr (columnar) return view_type(columns<std::byte*>(), index_t(size_), index_t(capacity_), location());
    else return view_type(stored_ptr(), index_t(size_), location());
  }
  const_view_type view() const& noexcept { return const_view(); }
  const_view_type const_view() const& noexcept {
    if constexpr (columnar) return const_view_type(columns<const std::byte*>(), index_t(size_), index_t(capacity_), location());
    else return const_view_type(stored_ptr(), index_t(size_), location());
  }
  operator view_type() & noexcept { return view(); }
  operator const_view_type() const& noexcept { return const_view(); }
  void view() && = delete;
  void view() const&& = delete;
  void const_view() && = delete;
  void const_view() const&& = delete;
  operator view_type() && = delete;
  operator const_view_type() && = delete;
  operator const_view_type() const&& = delete;

  using system = thrust_system_t<Space>;
  using iterator = record_iterator<view_type, system>;
  using const_iterator = record_iterator<const_view_type, system>;
  iterator begin() noexcept { return iterator(view(), 0); }
  iterator end() noexcept { return iterator(view(), index_t(size_)); }
  const_iterator begin() const noexcept { return cbegin(); }
  const_iterator end() const noexcept { return cend(); }
  const_iterator cbegin() const noexcept { return const_iterator(const_view(), 0); }
  const_iterator cend() const noexcept { return const_iterator(const_view(), index_t(size_)); }

  template <std::size_t I>
  auto column() noexcept { return view().template column<I>(); }
  template <std::size_t I>
  auto column() const noexcept { return const_view().template column<I>(); }
  template <auto Sel>
    requires selector<Sel>
  auto column() noexcept {
    return view().template column<Sel>();
  }
  template <auto Sel>
    requires selector<Sel>
  auto column() const noexcept {
    return const_view().template column<Sel>();
  }

  /// Replaces the contents with n AoS records from host memory.
  void assign(const T* records, size_type n) {
    check_size(n, "assign");
    settle();
    detail::device_guard on(device_);
    if (n > 0 && records == nullptr) throw size_error("strata: " + std::string(container_name) + "::assign: null pointer with " + std::to_string(n) + " records");
    basic_vector fresh;
    fresh.device_ = device_;
    fresh.allocate(layout_type::round_capacity(n));
    fresh.size_ = n;
    if constexpr (columnar) detail::aos_to_soa_from_host(records, n, fresh.view(), Space);
    else fresh.put_records(0, records, n);
    swap(fresh);
  }
  template <class R>
    requires contiguous_range_of<R, T>
  void assign(const R& records) {
    assign(std::ranges::data(records), std::ranges::size(records));
  }

  /// Appends one record from the host (the slow path: one small copy per leaf); capacity doubles
  /// when full, so n calls cost O(n) copies in all. Strong guarantee.
  void push_back(const T& r) {
    settle();
    if (size_ == capacity_) reserve(std::max<size_type>(2 * capacity_, layout_type::capacity_quantum));
    write_record(size_, r);
    ++size_;
  }
  /// push_back(T{args...}).
  template <class... A>
  void emplace_back(A&&... args) {
    push_back(T{std::forward<A>(args)...});
  }

  /// Appends host AoS records: for columnar mappings they cross to the device through the pinned
  /// pipeline into a staging container, whose columns are then copied behind this one's; padded
  /// records are padded on the host and copied behind the last. Capacity grows by at least half.
  /// Strong guarantee.
  void append(std::span<const T> records) {
    if (records.empty()) return;
    check_size(size_ + records.size(), "append");
    settle();
    detail::device_guard on(device_);  // the staging container on this one's GPU
    if constexpr (columnar) {
      const basic_vector staged(records);
      append(staged, stream_t{});
      synchronize(stream_t{});
    } else {
      const size_type n = records.size(), at = size_;
      if (at + n > capacity_) reserve(std::max(at + n, capacity_ + capacity_ / 2));
      put_records(at, records.data(), n);
      size_ = at + n;
    }
  }
  template <class R>
    requires contiguous_range_of<R, T>
  void append(const R& records) {
    append(std::span<const T>(std::ranges::data(records), std::ranges::size(records)));
  }
  /// Appends another container's records: one stream-ordered copy per column, queued on `stream`
  /// (size() counts them at once; work on other streams must wait for `stream`). Capacity grows by
  /// at least half when it must grow. Strong guarantee.
  template <memory_space S>
  void append(const basic_vector<T, M, S>& other, stream_t stream) {
    const size_type n = other.size(), at = size_;
    if (n == 0) return;
    check_size(at + n, "append");
    settle_for(stream);  // work queued on another stream may still write the padding the records go to
    if (at + n > capacity_) reserve(std::max(at + n, capacity_ + capacity_ / 2));
    copy_records(at, other, 0, n, stream);
    size_ = at + n;
    note_stream(stream);
    other.note_stream(stream);
  }

  /// AoS records on the way out (SoA -> AoS for columnar mappings).
  std::vector<T> to_host() const {
    std::vector<T> out(size_);
    copy_to_host(std::span<T>(out));
    return out;
  }
  void copy_to_host(std::span<T> out) const {
    if (out.size() != size_) detail::throw_size_error(std::string(container_name) + "::copy_to_host: output records", index_t(out.size()), index_t(size_));
    settle();
    detail::device_guard on(device_);
    if constexpr (columnar) {
      detail::soa_to_aos_to_host(const_view(), out.data(), Space);
    } else {
      using stored = typename M::stored;
      const stored* src = stored_ptr();
      std::vector<stored> staged;
      if (Space == memory_space::device && STRATA_DEVICE_IS_SEPARATE) {
        staged.resize(size_);
        copy_bytes(staged.data(), src, size_ * sizeof(stored));
        src = staged.data();
      }
      STRATA_PARALLEL_FOR_IF(size_ > (1 << 16))
      for (index_t i = 0; i < index_t(size_); ++i) out[i] = src[i].value;
    }
  }

  /// Stream-ordered copy of all records into dst (any memory space, same record type); dst must
  /// already hold size() records. Returns before completion on the CUDA backend.
  template <memory_space S>
  void copy_to_async(basic_vector<T, M, S>& dst, stream_t stream) const {
    if (dst.size() != size_) detail::throw_size_error(std::string(container_name) + "::copy_to_async: destination size", index_t(dst.size()), index_t(size_));
    dst.copy_records(0, *this, 0, size_, stream);
    note_stream(stream);
    dst.note_stream(stream);
  }

  /// Record i read or written from the host (one small copy per leaf, or of the padded record).
  T get(size_type i) const {
    check_index(i);
    settle();
    detail::device_guard on(device_);
    if constexpr (!columnar) {
      typename M::stored r;
      copy_bytes(&r, stored_ptr() + i, sizeof r);
      return r.value;
    } else {
      T r;
      reflect::for_each_leaf<T>([&](auto f) {
        constexpr std::size_t L = decltype(f)::value;
        copy_bytes(&reflect::leaf<L>(r), buf_.data() + M::leaf_offset(capacity_, i, L), layout_type::leaf_sizes[L]);
      });
      return r;
    }
  }
  void set(size_type i, const T& r) {
    check_index(i);
    settle();
    write_record(i, r);
  }

  /// Host-side element proxy, the slow path (as thrust::device_vector::operator[]).
  class host_reference {
   public:
    operator T() const { return v_->get(i_); }
    host_reference& operator=(const T& r) {
      v_->set(i_, r);
      return *this;
    }

   private:
    friend class basic_vector;
    host_reference(basic_vector* v, size_type i) : v_(v), i_(i) {}
    basic_vector* v_;
    size_type i_;
  };
  host_reference operator[](size_type i) { return host_reference(this, i); }
  T operator[](size_type i) const { return get(i); }

 private:
  template <class, class, memory_space>
  friend class basic_vector;

  std::byte* column_ptr(std::size_t i) const noexcept { return buf_.data() + layout_type::column_offset(capacity_, i); }
  auto* stored_ptr() const noexcept { return reinterpret_cast<typename M::stored*>(buf_.data()); }
  // Record mappings: n host records padded into records [at, at + n), i.e. staged on the host when
  // the container's memory is the device's.
  void put_records(size_type at, const T* records, size_type n) {
    using stored = typename M::stored;
    auto pad = [&](stored* out) {
      STRATA_PARALLEL_FOR_IF(n > (1 << 16))
      for (index_t i = 0; i < index_t(n); ++i) out[i] = stored(records[i]);
    };
    if (Space != memory_space::device || !STRATA_DEVICE_IS_SEPARATE) {
      pad(stored_ptr() + at);
    } else {
      std::vector<stored> staged(n);
      pad(staged.data());
      copy_bytes(stored_ptr() + at, staged.data(), n * sizeof(stored));
    }
  }
  // Record i's leaves from the host, i < capacity() (the padded record whole for record mappings).
  void write_record(size_type i, const T& r) {
    detail::device_guard on(device_);
    if constexpr (!columnar) {
      const typename M::stored padded(r);
      copy_bytes(stored_ptr() + i, &padded, sizeof padded);
    } else {
      reflect::for_each_leaf<T>([&](auto f) {
        constexpr std::size_t L = decltype(f)::value;
        copy_bytes(buf_.data() + M::leaf_offset(capacity_, i, L), &reflect::leaf<L>(r), layout_type::leaf_sizes[L]);
      });
    }
  }

  // Calls run(leaf or -1, offset in an allocation of capacity `cap`, bytes, record) for the byte runs
  // holding records [from, from + n): one run (leaf -1) of whole records for record mappings, one
  // per leaf (SoA), or per leaf for the partial blocks at the ends and one run (leaf -1) for the
  // whole blocks between them.
  template <class Run>
  static void for_each_run(size_type cap, size_type from, size_type n, Run&& run) {
    if (n == 0) return;
    if constexpr (!columnar) {
      run(-1, from * M::stride, n * M::stride, from);
    } else if constexpr (M::block == 0) {
      for (std::size_t l = 0; l < leaves; ++l) run(int(l), M::leaf_offset(cap, from, l), n * M::leaf_sizes[l], from);
    } else {
      constexpr size_type b = M::block;
      const size_type to = from + n;
      size_type i = from;
      auto partial = [&](size_type lo, size_type hi) {
        for (std::size_t l = 0; l < leaves; ++l) run(int(l), M::leaf_offset(cap, lo, l), (hi - lo) * M::leaf_sizes[l], lo);
      };
      if (i % b != 0) {
        const size_type hi = std::min(to, (i / b + 1) * b);
        partial(i, hi);
        i = hi;
      }
      if (const size_type whole = (to - i) / b; whole > 0) {
        run(-1, (i / b) * M::block_bytes, whole * M::block_bytes, i);
        i += whole * b;
      }
      if (i < to) partial(i, to);
    }
  }

  // Records [from, from + n) of src -> this container's records [at, at + n), stream-ordered.
  template <memory_space S>
  void copy_records(size_type at, const basic_vector<T, M, S>& src, size_type from, size_type n, stream_t stream) {
    if (n == 0) return;
    // On the GPU of whichever side is device memory, so a stream of that GPU is the right one
    // whatever device is current.
    detail::device_guard on(device_ >= 0 ? device_ : src.device_);
    // Same position inside a block (always, for SoA): byte runs line up on both sides.
    auto by_runs = [&] {
      for_each_run(capacity_, at, n, [&](int leaf, size_type off, size_type bytes, size_type i) {
        const size_type j = i - at + from;  // the same record on the source side
        size_type src_off = 0;
        if constexpr (!columnar) src_off = j * M::stride;
        else if constexpr (M::block == 0) src_off = M::leaf_offset(src.capacity_, j, std::size_t(leaf));
        else src_off = leaf >= 0 ? M::leaf_offset(src.capacity_, j, std::size_t(leaf)) : j / M::block * M::block_bytes;
        copy_bytes_async(buf_.data() + off, src.buf_.data() + src_off, bytes, stream);
      });
    };
    if constexpr (!columnar) {
      by_runs();
    } else if constexpr (M::block == 0) {
      by_runs();
    } else if (at % M::block == from % M::block) {
      by_runs();
    } else if constexpr (S != Space) {
      const size_type shift = from % M::block;
      basic_vector<T, M, Space> staged;  // the record copy below runs inside one memory space
      staged.device_ = device_;
      staged.allocate(layout_type::round_capacity(shift + n));
      staged.copy_records(shift, src, from, n, stream);
      synchronize(stream);
      copy_records(at, staged, shift, n, stream);
      synchronize(stream);
    } else {
      detail::device_guard on(device_);
      auto in = src.const_view();
      auto out = view_type(columns<std::byte*>(), index_t(capacity_), index_t(capacity_), location());
      auto first = record_iterator<decltype(in), system>(in, index_t(from));
      auto dst = record_iterator<decltype(out), system>(out, index_t(at));
      run_records([&](auto policy) { thrust::copy(policy, first, first + index_t(n), dst); }, stream);
    }
  }

  // Runs f(policy) with the Thrust policy for this container's memory on `stream`.
  template <class F>
  static void run_records(F&& f, stream_t stream) {
    if constexpr (Space == memory_space::device) {
#if defined(STRATA_BACKEND_CUDA)
      f(thrust::cuda::par_nosync.on(stream));
      detail::check_launch("strata container record copy");
#else
      (void)stream;
      f(thrust::device);
#endif
    } else {
      (void)stream;
      f(thrust::host);
    }
  }
  template <class P>
  cuda::std::array<P, leaves> columns() const noexcept {
    cuda::std::array<P, leaves> c{};
    for (std::size_t i = 0; i < leaves; ++i) c[i] = capacity_ ? column_ptr(i) : nullptr;
    return c;
  }

  // Allocates capacity for an empty container and zeroes every byte, so padding lanes are
  // initialised. Device memory goes to the container's GPU (the current one for a new container).
  void allocate(size_type capacity) {
    if (Space == memory_space::device && STRATA_DEVICE_IS_SEPARATE && device_ < 0) device_ = detail::current_device();
    detail::device_guard on(device_);
    buffer b(layout_type::bytes(capacity), Space);
    fill_bytes_async(b.data(), 0, b.bytes(), stream_t{}, Space);
    synchronize(stream_t{});
    buf_ = std::move(b);
    capacity_ = capacity;
  }

  void resize_impl(size_type n, const T* value) {
    check_size(n, "resize");
    settle();
    if (n > capacity_) {
      basic_vector grown(*this, std::max(n, capacity_ + capacity_ / 2));
      grown.fill_tail(size_, n, value);
      swap(grown);
    } else {
      fill_tail(size_, n, value);
    }
    size_ = n;
  }
  // Copy of o with room for capacity records, on o's device; the space past o.size() is zero.
  basic_vector(const basic_vector& o, size_type capacity) : device_(o.device_) {
    detail::device_guard on(device_);
    allocate(layout_type::round_capacity(capacity));
    copy_records(0, o, 0, o.size_, stream_t{});
    synchronize(stream_t{});
    size_ = o.size_;
  }
  // Records [from, to) become value, or zero bytes when value is null.
  void fill_tail(size_type from, size_type to, const T* value) {
    if (to <= from) return;
    detail::device_guard on(device_);
    if (!value) {
      for_each_run(capacity_, from, to - from,
                   [&](int, size_type off, size_type bytes, size_type) { fill_bytes_async(buf_.data() + off, 0, bytes, stream_t{}, Space); });
      synchronize(stream_t{});
      return;
    }
    if constexpr (!columnar) {
      detail::fill_n(stored_ptr() + from, index_t(to - from), typename M::stored(*value), Space);
    } else if constexpr (M::block == 0) {
      reflect::for_each_leaf<T>([&](auto f) {
        constexpr std::size_t L = decltype(f)::value;
        detail::fill_n(view().template leaf_ptr<L>(index_t(from)), index_t(to - from), reflect::leaf<L>(*value), Space);
      });
    } else {
      auto out = view_type(columns<std::byte*>(), index_t(capacity_), index_t(capacity_), location());
      auto first = record_iterator<view_type, system>(out, index_t(from));
      run_records([&](auto policy) { thrust::fill(policy, first, first + index_t(to - from), *value); }, stream_t{});
      synchronize(stream_t{});
    }
  }

  template <memory_space S>
  void copy_from(const basic_vector<T, M, S>& o) {
    if (o.capacity_ == 0) return;
    o.settle();
    // A device copy lives on the source's GPU, whichever is current (as resize and to_soa do).
    if constexpr (S == Space) device_ = o.device_;
    allocate(o.capacity_);  // same capacity, same layout: one copy of the whole allocation
    detail::device_guard on(device_ >= 0 ? device_ : o.device_);
    copy_bytes(buf_.data(), o.buf_.data(), buf_.bytes());
    size_ = o.size_;
  }

  static void check_size(size_type n, const char* op) {
    if (n > max_size())
      throw out_of_memory(std::size_t(-1), Space, std::string(container_name) + "::" + op + " of " + std::to_string(n) + " records exceeds max_size()");
  }
  void check_index(size_type i) const {
    if (i >= size_) throw std::out_of_range("strata: " + std::string(container_name) + " index " + std::to_string(i) + " out of range (size " + std::to_string(size_) + ")");
  }

  // Waits for the container's GPU where work was queued on its memory on a stream that host-side
  // copies (the legacy default stream) are not ordered after (note_stream).
  void settle() const {
#if defined(STRATA_BACKEND_CUDA)
    if (!pending_.load(std::memory_order_relaxed)) return;
    detail::device_guard on(device_ >= 0 ? device_ : pending_device_.load(std::memory_order_relaxed));
    detail::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (strata: host access after queued work)");
    pending_.store(0, std::memory_order_relaxed);
#endif
  }
  // Before work queued on `stream` that touches the memory: nothing to wait for where every noted
  // work ran on that stream (stream order covers it), or while the stream is captured into a graph
  // (a wait would end the capture; the graph's place in the caller's streams orders it).
  void settle_for(stream_t stream) const {
#if defined(STRATA_BACKEND_CUDA)
    const std::uintptr_t cur = pending_.load(std::memory_order_relaxed);
    if (cur == 0 || cur == token_of(stream) || detail::stream_capturing(stream)) return;
    settle();
#else
    (void)stream;
#endif
  }
  // Noted work: 0 none, a stream's handle, legacy_token (the handle cudaStreamLegacy has) for the
  // legacy default stream, several for work on more than one stream.
  static constexpr std::uintptr_t legacy_token = 1, several = ~std::uintptr_t(0);
  static std::uintptr_t token_of(stream_t stream) noexcept {
#if defined(STRATA_BACKEND_CUDA)
    if (stream == nullptr || stream == cudaStreamLegacy) return legacy_token;
#endif
    return reinterpret_cast<std::uintptr_t>(stream);
  }
  static constexpr std::uintptr_t merged(std::uintptr_t a, std::uintptr_t b) noexcept { return a == 0 ? b : b == 0 || a == b ? a : several; }

  buffer buf_;
  size_type size_ = 0;
  size_type capacity_ = 0;
  int device_ = -1;
  mutable std::atomic<std::uintptr_t> pending_{0};
  mutable std::atomic<int> pending_device_{-1};  // pinned memory: the GPU the noted work ran on
};


}  // namespace strata
