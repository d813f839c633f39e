// matrix<T, Space>: rows x cols elements in one allocation, each row starting on a 16-byte
// boundary (the pitch is cols rounded up to 16 bytes), so rows can be read as 16-byte vectors
// whatever their length. The padding elements are zero and never reach a result.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <string>

namespace strata {

template <class T>
struct matrix_view {
  T* data = nullptr;
  index_t rows = 0, cols = 0, pitch = 0;  // pitch in elements
  STRATA_HD T* row(index_t r) const { return data + r * pitch; }
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator matrix_view<const U>() const {
    return {data, rows, cols, pitch};
  }
};

template <class T, memory_space Space = memory_space::device>
class matrix {
 public:
  static constexpr index_t pitch_for(index_t cols) { return index_t(align_up(std::size_t(cols) * sizeof(T), vector_bytes) / sizeof(T)); }

  matrix() = default;
  matrix(index_t rows, index_t cols) : rows_(rows), cols_(cols), pitch_(pitch_for(cols)) {
    if (rows < 0 || cols < 0) throw size_error("strata: matrix of " + std::to_string(rows) + " x " + std::to_string(cols));
    buf_ = buffer(std::size_t(rows) * std::size_t(pitch_) * sizeof(T), Space);
    fill_bytes_async(buf_.data(), 0, buf_.bytes(), stream_t{}, Space);
    synchronize(stream_t{});
  }
  /// From a dense host array of rows * cols elements.
  matrix(index_t rows, index_t cols, const T* dense) : matrix(rows, cols) { copy_from_host(dense); }

  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  index_t pitch() const { return pitch_; }
  matrix_view<T> view() { return {reinterpret_cast<T*>(buf_.data()), rows_, cols_, pitch_}; }
  matrix_view<const T> view() const { return const_view(); }
  matrix_view<const T> const_view() const { return {reinterpret_cast<const T*>(buf_.data()), rows_, cols_, pitch_}; }

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
};

}  // namespace strata
