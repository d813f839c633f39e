// soa_vector<T, Space>: owning SoA container, one padded allocation per container (see soa_layout),
// one column per leaf of T. Copies are deep, as for thrust::device_vector; element access from the
// host is the slow path. Device memory stays on the GPU that was current when it was first
// allocated; the container's own operations run there whatever device is current.
#pragma once

#include <strata/config.hpp>
#include <strata/container/host_transpose.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/memory/fill.hpp>
#include <strata/memory/resource.hpp>
#include <strata/iterator/record_iterator.hpp>
#include <strata/memory/soa_layout.hpp>

#include <cuda/std/array>

#include <algorithm>
#include <initializer_list>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace strata {

template <class R, class T>
concept contiguous_range_of = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                              std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, T>;

template <class T, memory_space Space = memory_space::device>
class soa_vector {
  static_assert(soa_layout<T>::proven(), "strata: SoA layout facts (alignment, no overlap) do not hold for this record");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using layout_type = soa_layout<T>;
  using view_type = soa_view<T>;
  using const_view_type = soa_view<const T>;
  static constexpr memory_space space = Space;
  static constexpr std::size_t leaves = layout_type::leaves;

  soa_vector() = default;
  explicit soa_vector(size_type n) { resize(n); }
  soa_vector(size_type n, const T& value) { resize(n, value); }
  /// AoS in: any contiguous host range of T (std::vector<T>, std::span<const T>, an array).
  template <class R>
    requires contiguous_range_of<R, T>
  explicit soa_vector(const R& records) {
    assign(std::ranges::data(records), std::ranges::size(records));
  }
  soa_vector(std::initializer_list<T> records) { assign(records.begin(), records.size()); }

  soa_vector(const soa_vector& o) { copy_from(o); }
  template <memory_space S>
  explicit soa_vector(const soa_vector<T, S>& o) {
    copy_from(o);
  }
  soa_vector(soa_vector&& o) noexcept
      : buf_(std::move(o.buf_)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)),
        device_(std::exchange(o.device_, -1)) {}
  soa_vector& operator=(const soa_vector& o) {
    if (this != &o) soa_vector(o).swap(*this);
    return *this;
  }
  soa_vector& operator=(soa_vector&& o) noexcept {
    soa_vector(std::move(o)).swap(*this);
    return *this;
  }

  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  static constexpr size_type max_size() noexcept { return layout_type::max_capacity; }
  /// Bytes of the one allocation (columns, their padding and the gaps to 256-byte boundaries).
  size_type allocated_bytes() const noexcept { return buf_.bytes(); }
  /// The GPU holding the records (-1: none yet, or host memory).
  int device() const noexcept { return device_; }
  memory_location location() const noexcept { return {Space, device_}; }

  void swap(soa_vector& o) noexcept {
    buf_.swap(o.buf_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(device_, o.device_);
  }
  friend void swap(soa_vector& a, soa_vector& b) noexcept { a.swap(b); }

  /// Grows capacity to at least n (rounded to whole packets). Strong guarantee: on failure the
  /// container is unchanged.
  void reserve(size_type n) {
    if (n <= capacity_) return;
    check_size(n, "reserve");
    soa_vector grown;
    grown.device_ = device_;
    grown.allocate(layout_type::round_capacity(n));
    for (std::size_t i = 0; i < leaves; ++i)
      copy_bytes_async(grown.column_ptr(i), column_ptr(i), size_ * layout_type::leaf_sizes[i], stream_t{});
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
  view_type view() & noexcept { return view_type(columns<std::byte*>(), index_t(size_), index_t(capacity_), location()); }
  const_view_type view() const& noexcept { return const_view(); }
  const_view_type const_view() const& noexcept {
    return const_view_type(columns<const std::byte*>(), index_t(size_), index_t(capacity_), location());
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
    if (n > 0 && records == nullptr) throw size_error("strata: soa_vector::assign: null pointer with " + std::to_string(n) + " records");
    soa_vector fresh;
    fresh.device_ = device_;
    fresh.allocate(layout_type::round_capacity(n));
    fresh.size_ = n;
    detail::aos_to_soa_from_host(records, n, fresh.view(), Space);
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
    if (size_ == capacity_) reserve(std::max<size_type>(2 * capacity_, layout_type::capacity_quantum));
    write_record(size_, r);
    ++size_;
  }
  /// push_back(T{args...}).
  template <class... A>
  void emplace_back(A&&... args) {
    push_back(T{std::forward<A>(args)...});
  }

  /// Appends host AoS records: they cross to the device through the pinned pipeline into a staging
  /// container, whose columns are then copied behind this one's. Capacity grows by at least half.
  /// Strong guarantee.
  void append(std::span<const T> records) {
    if (records.empty()) return;
    check_size(size_ + records.size(), "append");
    const soa_vector staged(records);
    append(staged, stream_t{});
    synchronize(stream_t{});
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
  void append(const soa_vector<T, S>& other, stream_t stream) {
    const size_type n = other.size(), at = size_;
    if (n == 0) return;
    check_size(at + n, "append");
    if (at + n > capacity_) reserve(std::max(at + n, capacity_ + capacity_ / 2));
    for (std::size_t i = 0; i < leaves; ++i)
      copy_bytes_async(column_ptr(i) + at * layout_type::leaf_sizes[i], other.column_ptr(i), n * layout_type::leaf_sizes[i], stream);
    size_ = at + n;
  }

  /// SoA -> AoS on the way out.
  std::vector<T> to_host() const {
    std::vector<T> out(size_);
    copy_to_host(std::span<T>(out));
    return out;
  }
  void copy_to_host(std::span<T> out) const {
    if (out.size() != size_) detail::throw_size_error("soa_vector::copy_to_host: output records", index_t(out.size()), index_t(size_));
    detail::soa_to_aos_to_host(const_view(), out.data(), Space);
  }

  /// Stream-ordered copy of all records into dst (any memory space, same record type); dst must
  /// already hold size() records. Returns before completion on the CUDA backend.
  template <memory_space S>
  void copy_to_async(soa_vector<T, S>& dst, stream_t stream) const {
    if (dst.size() != size_) detail::throw_size_error("soa_vector::copy_to_async: destination size", index_t(dst.size()), index_t(size_));
    for (std::size_t i = 0; i < leaves; ++i)
      copy_bytes_async(dst.view().column_bytes(i), column_ptr(i), size_ * layout_type::leaf_sizes[i], stream);
  }

  /// Record i read or written from the host (one small copy per leaf).
  T get(size_type i) const {
    check_index(i);
    T r;
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      copy_bytes(&reflect::leaf<L>(r), const_view().template column_data<L>() + i, layout_type::leaf_sizes[L]);
    });
    return r;
  }
  void set(size_type i, const T& r) {
    check_index(i);
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
    friend class soa_vector;
    host_reference(soa_vector* v, size_type i) : v_(v), i_(i) {}
    soa_vector* v_;
    size_type i_;
  };
  host_reference operator[](size_type i) { return host_reference(this, i); }
  T operator[](size_type i) const { return get(i); }

 private:
  template <class, memory_space>
  friend class soa_vector;

  std::byte* column_ptr(std::size_t i) const noexcept { return buf_.data() + layout_type::column_offset(capacity_, i); }
  // Record i's leaves from the host, i < capacity().
  void write_record(size_type i, const T& r) {
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      copy_bytes(column_ptr(L) + i * layout_type::leaf_sizes[L], &reflect::leaf<L>(r), layout_type::leaf_sizes[L]);
    });
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
    if (n > capacity_) {
      soa_vector grown(*this, std::max(n, capacity_ + capacity_ / 2));
      grown.fill_tail(size_, n, value);
      swap(grown);
    } else {
      fill_tail(size_, n, value);
    }
    size_ = n;
  }
  // Copy of o with room for capacity records, on o's device; the space past o.size() is zero.
  soa_vector(const soa_vector& o, size_type capacity) : device_(o.device_) {
    allocate(layout_type::round_capacity(capacity));
    for (std::size_t i = 0; i < leaves; ++i)
      copy_bytes_async(column_ptr(i), o.column_ptr(i), o.size_ * layout_type::leaf_sizes[i], stream_t{});
    synchronize(stream_t{});
    size_ = o.size_;
  }
  // Records [from, to) become value, or zero bytes when value is null.
  void fill_tail(size_type from, size_type to, const T* value) {
    if (to <= from) return;
    detail::device_guard on(device_);
    if (!value) {
      for (std::size_t i = 0; i < leaves; ++i)
        fill_bytes_async(column_ptr(i) + from * layout_type::leaf_sizes[i], 0, (to - from) * layout_type::leaf_sizes[i], stream_t{}, Space);
      synchronize(stream_t{});
      return;
    }
    reflect::for_each_leaf<T>([&](auto f) {
      constexpr std::size_t L = decltype(f)::value;
      detail::fill_n(view().template column_data<L>() + from, index_t(to - from), reflect::leaf<L>(*value), Space);
    });
  }

  template <memory_space S>
  void copy_from(const soa_vector<T, S>& o) {
    if (o.capacity_ == 0) return;
    // A device copy lives on the source's GPU, whichever is current (as resize and to_soa do).
    if constexpr (S == Space) device_ = o.device_;
    allocate(o.capacity_);  // same capacity, same layout: one copy of the whole allocation
    copy_bytes(buf_.data(), o.buf_.data(), buf_.bytes());
    size_ = o.size_;
  }

  static void check_size(size_type n, const char* op) {
    if (n > max_size())
      throw out_of_memory(std::size_t(-1), Space, std::string("soa_vector::") + op + " of " + std::to_string(n) + " records exceeds max_size()");
  }
  void check_index(size_type i) const {
    if (i >= size_) throw std::out_of_range("strata: soa_vector index " + std::to_string(i) + " out of range (size " + std::to_string(size_) + ")");
  }

  buffer buf_;
  size_type size_ = 0;
  size_type capacity_ = 0;
  int device_ = -1;
};

template <class T>
using host_soa_vector = soa_vector<T, memory_space::host>;
template <class T>
using pinned_soa_vector = soa_vector<T, memory_space::pinned>;

}  // namespace strata
