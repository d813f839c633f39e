// SPDX-License-Identifier: Apache-2.0
// What a pass over records touched, leaf by leaf: how many values were read and written, and their
// bytes. Counts come from a counting view (counting_view.hpp: a kernel's own accesses, counted as
// they happen) or from a functor's access pattern (probe.hpp: what strata's in-place algorithms
// load and store for it); advise.hpp turns them into the layout that moves the fewest bytes.
#pragma once

#include <strata/config.hpp>
#include <strata/reflect/leaves.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

namespace strata {

template <class T>
struct access_counts {
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  /// The records the counted work covered (a view's size): reads[l] / records is how many times
  /// each record's leaf l was read.
  std::uint64_t records = 0;
  std::array<std::uint64_t, leaves> reads{};
  std::array<std::uint64_t, leaves> writes{};

  std::uint64_t bytes_read() const { return weighted(reads); }
  std::uint64_t bytes_written() const { return weighted(writes); }
  double reads_per_record(std::size_t l) const { return records == 0 ? 0.0 : double(reads[l]) / double(records); }
  double writes_per_record(std::size_t l) const { return records == 0 ? 0.0 : double(writes[l]) / double(records); }

  /// Counts of more work over the same records: the accesses add up.
  access_counts& operator+=(const access_counts& o) {
    records = std::max(records, o.records);
    for (std::size_t l = 0; l < leaves; ++l) reads[l] += o.reads[l], writes[l] += o.writes[l];
    return *this;
  }
  friend access_counts operator+(access_counts a, const access_counts& b) { return a += b; }
  bool operator==(const access_counts&) const = default;

  /// One line a leaf: its path, bytes, and reads and writes per record.
  std::string table() const {
    std::string s = "leaf                      bytes  reads/record  writes/record\n";
    char line[160];
    for (std::size_t l = 0; l < leaves; ++l) {
      const std::string name(reflect::leaf_names<T>[l]);
      std::snprintf(line, sizeof line, "%-24s %6zu %13.3f %14.3f\n", name.c_str(), reflect::leaf_sizes<T>[l], reads_per_record(l),
                    writes_per_record(l));
      s += line;
    }
    std::snprintf(line, sizeof line, "%llu records, %llu bytes read, %llu bytes written\n", (unsigned long long)records,
                  (unsigned long long)bytes_read(), (unsigned long long)bytes_written());
    return s + line;
  }

 private:
  static std::uint64_t weighted(const std::array<std::uint64_t, leaves>& c) {
    std::uint64_t b = 0;
    for (std::size_t l = 0; l < leaves; ++l) b += c[l] * reflect::leaf_sizes<T>[l];
    return b;
  }
};

}  // namespace strata
