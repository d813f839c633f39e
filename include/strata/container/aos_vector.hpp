// aos_vector<T, Space>: owning array of padded, aligned records (layout::aligned_record<T>), with the
// same API as soa_vector where it applies (views from lvalues only, operations on the container's
// own GPU).
#pragma once

#include <strata/config.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/layout/aos_mapping.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/memory/fill.hpp>
#include <strata/memory/resource.hpp>
#include <strata/iterator/record_iterator.hpp>

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace strata {

template <class T, memory_space Space = memory_space::device>
class aos_vector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using stored = layout::aligned_record<T>;
  using mapping_type = aos_mapping<T>;
  using view_type = aos_view<T>;
  using const_view_type = aos_view<const T>;
  static constexpr memory_space space = Space;

  aos_vector() = default;
  explicit aos_vector(size_type n) { resize(n); }
  aos_vector(size_type n, const T& value) { resize(n, value); }
  template <class R>
    requires contiguous_range_of<R, T>
  explicit aos_vector(const R& records) {
    assign(std::ranges::data(records), std::ranges::size(records));
  }
  aos_vector(std::initializer_list<T> records) { assign(records.begin(), records.size()); }
  aos_vector(const aos_vector& o) { copy_from(o); }
  template <memory_space S>
  explicit aos_vector(const aos_vector<T, S>& o) {
    copy_from(o);
  }
  aos_vector(aos_vector&& o) noexcept
      : buf_(std::move(o.buf_)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)),
        device_(std::exchange(o.device_, -1)) {}
  aos_vector& operator=(const aos_vector& o) {
    if (this != &o) aos_vector(o).swap(*this);
    return *this;
  }
  aos_vector& operator=(aos_vector&& o) noexcept {
    aos_vector(std::move(o)).swap(*this);
    return *this;
  }

  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  static constexpr size_type max_size() noexcept { return mapping_type::max_capacity; }
  stored* data() noexcept { return ptr(); }
  const stored* data() const noexcept { return ptr(); }
  int device() const noexcept { return device_; }
  memory_location location() const noexcept { return {Space, device_}; }

  void swap(aos_vector& o) noexcept {
    buf_.swap(o.buf_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(device_, o.device_);
  }
  friend void swap(aos_vector& a, aos_vector& b) noexcept { a.swap(b); }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    aos_vector grown(*this, n);
    swap(grown);
  }
  void resize(size_type n) { resize_impl(n, nullptr); }
  void resize(size_type n, const T& value) { resize_impl(n, &value); }
  void clear() noexcept { size_ = 0; }

  // Views are taken from lvalues only: a view of a temporary container would dangle.
  view_type view() & noexcept { return view_type(ptr(), index_t(size_), location()); }
  const_view_type view() const& noexcept { return const_view(); }
  const_view_type const_view() const& noexcept { return const_view_type(ptr(), index_t(size_), location()); }
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

  void assign(const T* records, size_type n) {
    check_size(n, "assign");
    if (n > 0 && records == nullptr) throw size_error("strata: aos_vector::assign: null pointer with " + std::to_string(n) + " records");
    aos_vector fresh;
    fresh.device_ = device_;
    fresh.allocate(n);
    fresh.size_ = n;
    if (Space != memory_space::device || !STRATA_DEVICE_IS_SEPARATE) {
      pad_records(records, fresh.ptr(), n);
    } else {
      std::vector<stored> staged(n);
      pad_records(records, staged.data(), n);
      copy_bytes(fresh.ptr(), staged.data(), n * sizeof(stored));
    }
    swap(fresh);
  }
  template <class R>
    requires contiguous_range_of<R, T>
  void assign(const R& records) {
    assign(std::ranges::data(records), std::ranges::size(records));
  }

  /// Appends host records (padded on the way); capacity grows by at least half. Strong guarantee.
  void append(std::span<const T> records) {
    const size_type n = records.size(), at = size_;
    if (n == 0) return;
    check_size(at + n, "append");
    if (at + n > capacity_) reserve(std::max(at + n, capacity_ + capacity_ / 2));
    std::vector<stored> staged(n);
    pad_records(records.data(), staged.data(), n);
    copy_bytes(ptr() + at, staged.data(), n * sizeof(stored));
    size_ = at + n;
  }

  std::vector<T> to_host() const {
    std::vector<T> out(size_);
    copy_to_host(std::span<T>(out));
    return out;
  }
  void copy_to_host(std::span<T> out) const {
    if (out.size() != size_) detail::throw_size_error("aos_vector::copy_to_host: output records", index_t(out.size()), index_t(size_));
    const stored* src = ptr();
    std::vector<stored> staged;
    if (Space == memory_space::device && STRATA_DEVICE_IS_SEPARATE) {
      staged.resize(size_);
      copy_bytes(staged.data(), src, size_ * sizeof(stored));
      src = staged.data();
    }
STRATA_PARALLEL_FOR_IF(size_ > (1 << 16))
    for (index_t i = 0; i < index_t(size_); ++i) out[i] = src[i].value;
  }

  template <memory_space S>
  void copy_to_async(aos_vector<T, S>& dst, stream_t stream) const {
    if (dst.size() != size_) detail::throw_size_error("aos_vector::copy_to_async: destination size", index_t(dst.size()), index_t(size_));
    copy_bytes_async(dst.data(), ptr(), size_ * sizeof(stored), stream);
  }

  T get(size_type i) const {
    check_index(i);
    stored r;
    copy_bytes(&r, ptr() + i, sizeof(stored));
    return r.value;
  }
  void set(size_type i, const T& v) {
    check_index(i);
    stored r(v);
    copy_bytes(ptr() + i, &r, sizeof(stored));
  }
  class host_reference {
   public:
    operator T() const { return v_->get(i_); }
    host_reference& operator=(const T& r) {
      v_->set(i_, r);
      return *this;
    }

   private:
    friend class aos_vector;
    host_reference(aos_vector* v, size_type i) : v_(v), i_(i) {}
    aos_vector* v_;
    size_type i_;
  };
  host_reference operator[](size_type i) { return host_reference(this, i); }
  T operator[](size_type i) const { return get(i); }

 private:
  template <class, memory_space>
  friend class aos_vector;

  stored* ptr() const noexcept { return reinterpret_cast<stored*>(buf_.data()); }

  static void pad_records(const T* in, stored* out, size_type n) {
STRATA_PARALLEL_FOR_IF(n > (1 << 16))
    for (index_t i = 0; i < index_t(n); ++i) out[i] = stored(in[i]);
  }
  void allocate(size_type capacity) {
    if (Space == memory_space::device && STRATA_DEVICE_IS_SEPARATE && device_ < 0) device_ = detail::current_device();
    detail::device_guard on(device_);
    buffer b(mapping_type::bytes(capacity), Space);
    fill_bytes_async(b.data(), 0, b.bytes(), stream_t{}, Space);
    synchronize(stream_t{});
    buf_ = std::move(b);
    capacity_ = capacity;
  }
  aos_vector(const aos_vector& o, size_type capacity) : device_(o.device_) {
    check_size(capacity, "reserve");
    allocate(capacity);
    copy_bytes(ptr(), o.ptr(), o.size_ * sizeof(stored));
    size_ = o.size_;
  }
  void resize_impl(size_type n, const T* value) {
    check_size(n, "resize");
    if (n > capacity_) {
      aos_vector grown(*this, std::max(n, capacity_ + capacity_ / 2));
      grown.fill_tail(size_, n, value);
      swap(grown);
    } else {
      fill_tail(size_, n, value);
    }
    size_ = n;
  }
  void fill_tail(size_type from, size_type to, const T* value) {
    if (to <= from) return;
    detail::device_guard on(device_);
    if (!value) {
      fill_bytes_async(ptr() + from, 0, (to - from) * sizeof(stored), stream_t{}, Space);
      synchronize(stream_t{});
    } else {
      detail::fill_n(ptr() + from, index_t(to - from), stored(*value), Space);
    }
  }
  template <memory_space S>
  void copy_from(const aos_vector<T, S>& o) {
    if (o.capacity_ == 0) return;
    // A device copy lives on the source's GPU, whichever is current (as resize and to_soa do).
    if constexpr (S == Space) device_ = o.device_;
    allocate(o.capacity_);
    copy_bytes(buf_.data(), o.buf_.data(), buf_.bytes());
    size_ = o.size_;
  }
  static void check_size(size_type n, const char* op) {
    if (n > max_size())
      throw out_of_memory(std::size_t(-1), Space, std::string("aos_vector::") + op + " of " + std::to_string(n) + " records exceeds max_size()");
  }
  void check_index(size_type i) const {
    if (i >= size_) throw std::out_of_range("strata: aos_vector index " + std::to_string(i) + " out of range (size " + std::to_string(size_) + ")");
  }

  buffer buf_;
  size_type size_ = 0;
  size_type capacity_ = 0;
  int device_ = -1;
};

template <class T>
using host_aos_vector = aos_vector<T, memory_space::host>;

}  // namespace strata
