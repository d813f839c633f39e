// SPDX-License-Identifier: Apache-2.0
// Layout advice: from access counts (counting_view.hpp, probe.hpp), the bytes each layout would
// move for the same access, and the layout that moves the fewest. A bandwidth-bound pass moves
// whole DRAM sectors (32 bytes), so the model places every record of a window of each candidate
// mapping (SoA, padded AoS, packed AoS, AoSoA of 8, 16, 32 and 64) and counts the sectors holding a
// leaf that is read or written: a sector moves as often as its most-read leaf is read per record,
// and is written back as often as its most-written leaf is written. Layouts within `tie` of the
// fewest bytes are ranked by whether strata's 16-byte paths run over them (packets, whole-record
// accesses), then SoA, AoSoA, AoS, packed AoS.
//
// In random order (advise_options::order: a gather, a neighbour loop's reads of other records)
// each record's accesses move the sectors its touched leaves span, and padded AoS, whose records
// sit whole in aligned sectors, moves the fewest.
//
// The model is of traffic only: it assumes each count is a pass over the records (a leaf read once
// a record streams its sectors) or, in random order, a record reached alone; that the kernel is
// bound by DRAM; and that sectors reused inside a pass stay in cache. with_layout() names the
// chosen layout's container type, for convert().
#pragma once

#include <strata/access/counts.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/mapping.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace strata {

enum class layout_kind { soa, aosoa8, aosoa16, aosoa32, aosoa64, aos, packed_aos };

inline const char* layout_name(layout_kind k) {
  switch (k) {
    case layout_kind::soa: return "soa";
    case layout_kind::aosoa8: return "aosoa8";
    case layout_kind::aosoa16: return "aosoa16";
    case layout_kind::aosoa32: return "aosoa32";
    case layout_kind::aosoa64: return "aosoa64";
    case layout_kind::aos: return "aos";
    case layout_kind::packed_aos: return "packed_aos";
  }
  return "?";
}

/// The container of records T in layout K (memory space S).
template <class T, layout_kind K, memory_space S = memory_space::device>
struct layout_container;
template <class T, memory_space S>
struct layout_container<T, layout_kind::soa, S> { using type = soa_vector<T, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::aos, S> { using type = aos_vector<T, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::packed_aos, S> { using type = aosoa_vector<T, 1, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::aosoa8, S> { using type = aosoa_vector<T, 8, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::aosoa16, S> { using type = aosoa_vector<T, 16, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::aosoa32, S> { using type = aosoa_vector<T, 32, S>; };
template <class T, memory_space S>
struct layout_container<T, layout_kind::aosoa64, S> { using type = aosoa_vector<T, 64, S>; };
template <class T, layout_kind K, memory_space S = memory_space::device>
using layout_container_t = typename layout_container<T, K, S>::type;

/// What one layout would move for the counted access, per record.
struct layout_estimate {
  layout_kind layout{};
  double read_bytes = 0;     ///< sector bytes read a record
  double written_bytes = 0;  ///< sector bytes written back a record
  bool vector_access = false;  ///< strata's 16-byte paths run over this layout
  double bytes() const { return read_bytes + written_bytes; }
  const char* name() const { return layout_name(layout); }
};

/// How the counted work reaches records: passes over all of them in order (streaming), or one
/// record at a time at scattered indices (random: a gather, a neighbour's position), where every
/// access moves the sectors that record's touched leaves span and no neighbour shares them.
enum class access_order { streaming, random };

struct advise_options {
  access_order order = access_order::streaming;
  std::size_t sector_bytes = 32;
  /// Layouts moving at most this fraction more than the fewest bytes count as tied.
  double tie = 0.02;
};

/// Every candidate layout's estimate, the best first.
struct layout_advice {
  std::vector<layout_estimate> ranked;
  const layout_estimate& best() const { return ranked.front(); }
  const layout_estimate& of(layout_kind k) const {
    for (const auto& e : ranked)
      if (e.layout == k) return e;
    throw std::invalid_argument("strata: layout_advice has no estimate for this layout");
  }
  std::string table() const {
    std::string s = "layout       read B/rec  written B/rec  16-byte paths\n";
    char line[128];
    for (const auto& e : ranked) {
      std::snprintf(line, sizeof line, "%-12s %10.2f %14.2f  %s\n", e.name(), e.read_bytes, e.written_bytes, e.vector_access ? "yes" : "no");
      s += line;
    }
    return s;
  }
};

namespace detail {
/// Sector bytes a record that the counts' passes move through mapping M: records of a window of
/// `capacity` placed, each sector charged its most-accessed leaf's passes.
template <class M, class T>
layout_estimate estimate_layout(layout_kind k, const access_counts<T>& c, std::size_t sector, bool vector_access) {
  constexpr std::size_t leaves = reflect::leaf_count<T>;
  const std::size_t capacity = M::round_capacity(4096);
  const std::size_t sectors = (M::bytes(capacity) + sector - 1) / sector;
  std::vector<double> rd(sectors, 0.0), wr(sectors, 0.0);
  for (std::size_t l = 0; l < leaves; ++l) {
    const double pr = c.reads_per_record(l), pw = c.writes_per_record(l);
    if (pr == 0 && pw == 0) continue;
    for (std::size_t i = 0; i < capacity; ++i) {
      const std::size_t off = M::leaf_offset(capacity, i, l);
      for (std::size_t s = off / sector; s <= (off + reflect::leaf_sizes<T>[l] - 1) / sector && s < sectors; ++s) {
        rd[s] = std::max(rd[s], std::max(pr, pw));  // a written sector is read first (an in-place update)
        wr[s] = std::max(wr[s], pw);
      }
    }
  }
  layout_estimate e;
  e.layout = k;
  e.vector_access = vector_access;
  for (std::size_t s = 0; s < sectors; ++s) e.read_bytes += rd[s], e.written_bytes += wr[s];
  e.read_bytes *= double(sector) / double(capacity);
  e.written_bytes *= double(sector) / double(capacity);
  return e;
}
/// Random order: each record's accesses move the sectors its touched leaves span, alone. A
/// record's leaves reached p times a record cost p times its sectors (the most-read leaf of a
/// sector sets that sector's count), averaged over the records of a window (records of a size
/// that is no multiple of the sector straddle sectors differently).
template <class M, class T>
layout_estimate estimate_random(layout_kind k, const access_counts<T>& c, std::size_t sector, bool vector_access) {
  constexpr std::size_t leaves = reflect::leaf_count<T>;
  const std::size_t capacity = M::round_capacity(4096);
  double rd_total = 0, wr_total = 0;
  std::vector<std::pair<std::size_t, std::pair<double, double>>> touched;  // sector, (read, written) passes
  for (std::size_t i = 0; i < capacity; ++i) {
    touched.clear();
    for (std::size_t l = 0; l < leaves; ++l) {
      const double pr = c.reads_per_record(l), pw = c.writes_per_record(l);
      if (pr == 0 && pw == 0) continue;
      const std::size_t off = M::leaf_offset(capacity, i, l);
      for (std::size_t s = off / sector; s <= (off + reflect::leaf_sizes<T>[l] - 1) / sector; ++s) {
        auto it = std::find_if(touched.begin(), touched.end(), [&](const auto& t) { return t.first == s; });
        if (it == touched.end()) touched.push_back({s, {std::max(pr, pw), pw}});
        else it->second = {std::max(it->second.first, std::max(pr, pw)), std::max(it->second.second, pw)};
      }
    }
    for (const auto& t : touched) rd_total += t.second.first, wr_total += t.second.second;
  }
  layout_estimate e;
  e.layout = k;
  e.vector_access = vector_access;
  e.read_bytes = rd_total * double(sector) / double(capacity);
  e.written_bytes = wr_total * double(sector) / double(capacity);
  return e;
}
template <class M, class T>
layout_estimate estimate(layout_kind k, const access_counts<T>& c, const advise_options& o, bool vector_access) {
  return o.order == access_order::random ? estimate_random<M>(k, c, o.sector_bytes, vector_access)
                                         : estimate_layout<M>(k, c, o.sector_bytes, vector_access);
}
template <class M>
constexpr bool columnar_packets() {
  return layout::record_descriptor<typename M::record>::all_leaves_vectorizable && layout::packet_aligned_blocks<M>();
}
}  // namespace detail

/// The layout that moves the fewest bytes for the counted access, and every candidate's estimate.
/// A write a record assumes the leaf was read first (strata's in-place updates compare before
/// they store): count a kernel that only writes with a counting view and read the estimate so.
template <class T>
layout_advice advise(const access_counts<T>& c, advise_options o = {}) {
  if (o.sector_bytes == 0) throw std::invalid_argument("strata: advise: sector_bytes must be positive");
  using d = layout::record_descriptor<T>;
  layout_advice a;
  a.ranked.push_back(detail::estimate<soa_mapping<T>>(layout_kind::soa, c, o, d::all_leaves_vectorizable));
  a.ranked.push_back(detail::estimate<aosoa_mapping<T, 32>>(layout_kind::aosoa32, c, o,
                                                                   detail::columnar_packets<aosoa_mapping<T, 32>>()));
  a.ranked.push_back(detail::estimate<aosoa_mapping<T, 16>>(layout_kind::aosoa16, c, o,
                                                                   detail::columnar_packets<aosoa_mapping<T, 16>>()));
  a.ranked.push_back(detail::estimate<aosoa_mapping<T, 64>>(layout_kind::aosoa64, c, o,
                                                                   detail::columnar_packets<aosoa_mapping<T, 64>>()));
  a.ranked.push_back(detail::estimate<aosoa_mapping<T, 8>>(layout_kind::aosoa8, c, o,
                                                                  detail::columnar_packets<aosoa_mapping<T, 8>>()));
  a.ranked.push_back(detail::estimate<aos_mapping<T>>(layout_kind::aos, c, o, aos_mapping<T>::stride >= vector_bytes));
  a.ranked.push_back(detail::estimate<aosoa_mapping<T, 1>>(layout_kind::packed_aos, c, o, false));
  double fewest = a.ranked.front().bytes();
  for (const auto& e : a.ranked) fewest = std::min(fewest, e.bytes());
  const double limit = fewest * (1 + o.tie) + 1e-9;
  std::stable_sort(a.ranked.begin(), a.ranked.end(), [&](const layout_estimate& x, const layout_estimate& y) {
    const bool xt = x.bytes() <= limit, yt = y.bytes() <= limit;
    if (xt != yt) return xt;
    if (!xt) return x.bytes() < y.bytes();
    return x.vector_access > y.vector_access;
  });
  return a;
}

/// Calls f(layout_container<T, K, S>{}) for the layout k names, so f can make the advised
/// container (the tag's member type `type`) and convert into it (docs/access.md shows it).
template <class T, memory_space S = memory_space::device, class F>
decltype(auto) with_layout(layout_kind k, F&& f) {
  switch (k) {
    case layout_kind::soa: return f(layout_container<T, layout_kind::soa, S>{});
    case layout_kind::aosoa8: return f(layout_container<T, layout_kind::aosoa8, S>{});
    case layout_kind::aosoa16: return f(layout_container<T, layout_kind::aosoa16, S>{});
    case layout_kind::aosoa32: return f(layout_container<T, layout_kind::aosoa32, S>{});
    case layout_kind::aosoa64: return f(layout_container<T, layout_kind::aosoa64, S>{});
    case layout_kind::aos: return f(layout_container<T, layout_kind::aos, S>{});
    case layout_kind::packed_aos: return f(layout_container<T, layout_kind::packed_aos, S>{});
  }
  throw std::invalid_argument("strata: with_layout: not a layout_kind");
}

}  // namespace strata
