// SPDX-License-Identifier: Apache-2.0
// Columns in memory the test owns, as a caller's tensors would be: one device allocation per leaf
// with poisoned guard bytes before and after, and `slack` elements past the view's n that belong to
// the caller. A view over them (make_soa_view) must never touch a guard byte or a slack element.
#pragma once

#include <strata/container/soa_view.hpp>
#include <strata/memory/resource.hpp>

#include "testing.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace strata_test {

template <class T>
class foreign_columns {
 public:
  static constexpr std::size_t guard = 64;  // bytes before each column (keeps it 16-byte aligned) and after its slack
  static constexpr unsigned char poison = 0xA5;

  /// n records; each column holds n + slack elements, starting `shift` elements (plus `offset`
  /// bytes, a multiple of 16: an allocator's header, say) past a 16-byte boundary (shift 1 makes the
  /// columns unfit for 16-byte access).
  explicit foreign_columns(std::size_t n, std::size_t slack = 0, std::size_t shift = 0, std::size_t offset = 0)
      : n_(n), slack_(slack), shift_(shift), offset_(offset) {
    strata::reflect::for_each_leaf<T>([&](auto l) {
      constexpr std::size_t L = decltype(l)::value;
      const std::size_t bytes = guard + offset + (shift + n + slack) * sizeof(leaf_t<L>) + guard;
      bufs_.emplace_back(bytes, strata::memory_space::device);
      std::vector<unsigned char> p(bytes, poison);
      strata::copy_bytes(bufs_.back().data(), p.data(), bytes);
    });
    seal();
  }

  template <std::size_t L>
  using leaf_t = strata::reflect::leaf_type_t<T, L>;
  template <std::size_t L>
  leaf_t<L>* column() const {
    return reinterpret_cast<leaf_t<L>*>(bufs_[L].data() + guard + offset_) + shift_;
  }

  /// The view a caller would make: spans of n + slack elements, n records.
  strata::soa_view<T> view(strata::alignment a = strata::alignment::vector) const {
    return [&]<std::size_t... L>(std::index_sequence<L...>) {
      return strata::make_soa_view<T>(strata::index_t(n_), a, cuda::std::span<leaf_t<L>>(column<L>(), n_ + slack_)...);
    }(std::make_index_sequence<strata::reflect::leaf_count<T>>{});
  }

  void upload(const std::vector<T>& records) {
    strata::reflect::for_each_leaf<T>([&](auto l) {
      constexpr std::size_t L = decltype(l)::value;
      std::vector<leaf_t<L>> col(records.size());
      for (std::size_t i = 0; i < records.size(); ++i) col[i] = strata::reflect::leaf<L>(records[i]);
      strata::copy_bytes(column<L>(), col.data(), col.size() * sizeof(leaf_t<L>));
    });
    seal();
  }
  std::vector<T> download() const {
    std::vector<T> out(n_);
    if (n_ != 0) std::memset(static_cast<void*>(out.data()), 0, n_ * sizeof(T));
    strata::reflect::for_each_leaf<T>([&](auto l) {
      constexpr std::size_t L = decltype(l)::value;
      auto col = fetch(column<L>(), n_);
      for (std::size_t i = 0; i < n_; ++i) strata::reflect::leaf<L>(out[i]) = col[i];
    });
    return out;
  }
  /// Every slack element of every column set to `value` (the caller's own data).
  template <class F>
  void fill_slack(const F& value) {
    strata::reflect::for_each_leaf<T>([&](auto l) {
      constexpr std::size_t L = decltype(l)::value;
      std::vector<leaf_t<L>> s(slack_, leaf_t<L>(value));
      strata::copy_bytes(column<L>() + n_, s.data(), slack_ * sizeof(leaf_t<L>));
    });
    seal();
  }

  /// "" when no byte outside the n records changed since the columns were last set up; otherwise
  /// which column and byte.
  std::string damage() const {
    std::string out;
    strata::reflect::for_each_leaf<T>([&](auto l) {
      constexpr std::size_t L = decltype(l)::value;
      if (!out.empty()) return;
      const auto b = bytes_of(L);
      const std::size_t begin = guard + offset_ + shift_ * sizeof(leaf_t<L>), end = begin + n_ * sizeof(leaf_t<L>);
      for (std::size_t i = 0; i < b.size(); ++i)
        if ((i < begin || i >= end) && b[i] != sealed_[L][i]) {
          out = "column '" + std::string(strata::reflect::leaf_name<T, L>()) + "' byte " + std::to_string(i) +
                " changed (its records are bytes " + std::to_string(begin) + ".." + std::to_string(end) + ")";
          return;
        }
    });
    return out;
  }

 private:
  std::size_t n_, slack_, shift_, offset_;
  std::vector<unsigned char> bytes_of(std::size_t l) const {
    std::vector<unsigned char> b(bufs_[l].bytes());
    strata::copy_bytes(b.data(), bufs_[l].data(), b.size());
    return b;
  }
  void seal() {
    sealed_.clear();
    for (std::size_t l = 0; l < bufs_.size(); ++l) sealed_.push_back(bytes_of(l));
  }
  std::vector<strata::buffer> bufs_;
  std::vector<std::vector<unsigned char>> sealed_;
};

}  // namespace strata_test
