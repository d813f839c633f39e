// SPDX-License-Identifier: Apache-2.0
// Rows of 2-D data: matrix<T, Space> holds rows x cols elements in one allocation, each row
// starting on a 16-byte boundary (the pitch is cols rounded up to 16 bytes), so rows can be read
// as 16-byte vectors whatever their length; its padding elements are its own, zero, and never
// reach a result. matrix_view also describes rows someone else owns (a dense PyTorch tensor, any
// pitch): make_matrix_view checks them, and nothing strata runs touches their elements past cols.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/checked.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace strata {

template <class T>
struct matrix_view {
  T* data = nullptr;
  index_t rows = 0, cols = 0, pitch = 0;  // pitch in elements
  /// Elements [cols, pitch) of each row are the view's own padding (strata's matrix): whole 16-byte
  /// vectors may be read and written across the row's end. False for rows someone else owns.
  bool owns_padding = false;
  memory_location where{};

  STRATA_HD T* row(index_t r) const { return data + r * pitch; }
  STRATA_HD memory_location location() const { return where; }
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator matrix_view<const U>() const {
    return {data, rows, cols, pitch, owns_padding, where};
  }
};

/// Rows owned by someone else: rows x cols elements, row r at data + r * pitch (pitch >= cols, in
/// elements; a dense row-major tensor has pitch == cols). Checks the sizes, the pointer's
/// alignment for T, and finds the memory's space and device.
template <class T>
matrix_view<T> make_matrix_view(T* data, index_t rows, index_t cols, index_t pitch) {
  if (rows < 0 || cols < 0 || pitch < cols)
    throw size_error("strata: make_matrix_view: " + std::to_string(rows) + " x " + std::to_string(cols) + " with pitch " +
                     std::to_string(pitch) + " (the pitch must be at least cols)");
  if (!data && rows > 0 && cols > 0) throw size_error("strata: make_matrix_view: null pointer with " + std::to_string(rows) + " rows");
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) != 0) throw misaligned_pointer("make_matrix_view: rows", data, alignof(T));
  // Kernels form data + r * pitch + c for every row and column: none of those addresses may wrap.
  if (rows > 0 && cols > 0)
    (void)detail::checked_extent(data, detail::checked_add(detail::checked_mul(std::size_t(rows - 1), std::size_t(pitch), "make_matrix_view: elements"),
                                                           std::size_t(cols), "make_matrix_view: elements"),
                                 sizeof(T), "make_matrix_view: rows");
  return {data, rows, cols, pitch, false, detail::locate(data)};
}
template <class T>
matrix_view<T> make_matrix_view(T* data, index_t rows, index_t cols) {
  return make_matrix_view(data, rows, cols, cols);
}

template <class T, memory_space Space = memory_space::device>
class matrix {
 public:
  static constexpr index_t pitch_for(index_t cols) { return index_t(align_up(std::size_t(cols) * sizeof(T), vector_bytes) / sizeof(T)); }

  matrix() = default;
  matrix(index_t rows, index_t cols) : rows_(rows), cols_(cols), pitch_(pitch_for(cols)) {
    if (rows < 0 || cols < 0) throw size_error("strata: matrix of " + std::to_string(rows) + " x " + std::to_string(cols));
    const std::size_t row_bytes = detail::checked_mul(std::size_t(cols), sizeof(T), "matrix: bytes of a row");
    (void)detail::checked_add(row_bytes, vector_bytes, "matrix: bytes of a padded row");
    const std::size_t bytes = detail::checked_mul(detail::checked_mul(std::size_t(rows), std::size_t(pitch_), "matrix: elements"), sizeof(T),
                                                  "matrix: bytes");
    if (Space == memory_space::device && STRATA_DEVICE_IS_SEPARATE) device_ = detail::current_device();
    buf_ = buffer(bytes, Space);
    fill_bytes_async(buf_.data(), 0, buf_.bytes(), stream_t{}, Space);
    synchronize(stream_t{});
  }
  /// From a dense host array of rows * cols elements.
  matrix(index_t rows, index_t cols, const T* dense) : matrix(rows, cols) { copy_from_host(dense); }

  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  index_t pitch() const { return pitch_; }
  memory_location location() const { return {Space, device_}; }
  /// Shared ownership of the allocation (basic_vector::storage): DLPack exports hold it.
  std::shared_ptr<const void> storage() const noexcept { return buf_.share(); }
  matrix_view<T> view() & { return {reinterpret_cast<T*>(buf_.data()), rows_, cols_, pitch_, true, location()}; }
  matrix_view<const T> view() const& { return const_view(); }
  matrix_view<const T> const_view() const& {
    return {reinterpret_cast<const T*>(buf_.data()), rows_, cols_, pitch_, true, location()};
  }
  void view() && = delete;
  void const_view() && = delete;

  void copy_from_host(const T* dense) {
    copy_rows(buf_.data(), std::size_t(pitch_) * sizeof(T), dense, std::size_t(cols_) * sizeof(T), std::size_t(cols_) * sizeof(T),
              std::size_t(rows_));
  }
  void copy_to_host(T* dense) const {
    copy_rows(dense, std::size_t(cols_) * sizeof(T), buf_.data(), std::size_t(pitch_) * sizeof(T), std::size_t(cols_) * sizeof(T),
              std::size_t(rows_));
  }

 private:
  buffer buf_;
  index_t rows_ = 0, cols_ = 0, pitch_ = 0;
  int device_ = -1;
};

}  // namespace strata
