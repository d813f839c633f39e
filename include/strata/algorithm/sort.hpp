// SPDX-License-Identifier: Apache-2.0
// Reordering every column of a container (SoA or AoSoA, on the device) at once: permute (records
// by an index array, in place), gather (records of one container at an index array into another),
// and sort_by_key / sort_by, which sort (key, index) pairs once with cub::DeviceRadixSort
// (stable: equal keys keep their order) and then permute. Each reorders in place, or through a
// spare container of the caller's (one gather into the spare's storage, then the two trade places).
// Two ways move records by index, and the cheaper one runs:
// - whole records: the columns go to padded AoS records in scratch memory (a transpose at copy
//   speed), whole records are gathered by index into the columns (one or two 16-byte loads per
//   record instead of a 32-byte sector per leaf): about two copies of the records, whatever the
//   indices. permute, which must read every record before it overwrites any, always takes it.
// - columns: each leaf read at the indices straight into the destination's columns, four
//   destinations per store (convert/gather.hpp): one copy of the records when consecutive indices
//   stay close (a re-sort of particles that moved a little), a sector per leaf per index that
//   reads farther from where the gather reads than L2 keeps, at a place its neighbours do not read.
//   gather counts such jumps in a sample of the indices on the device (far_sample) and both ways
//   are queued; the kernels of the one the count does not choose return at once (the host never
//   waits for the count).
// The caller's indices are checked as the kernels read them (a compare each): one outside the
// source reads nothing, and permute and gather throw std::out_of_range once the stream is done
// (permute restores the records first). Indices strata makes itself (sort_by_key) are not waited on.
// Scratch comes from strata::scratch() (no cudaMalloc once the pool is warm). The host backend
// runs the same transposes, gathers and choice, and sorts with Thrust's stable sort on OpenMP
// threads.
#pragma once

#include <strata/algorithm/transform.hpp>
#include <strata/config.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/convert/gather.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/scratch.hpp>

#include <cuda/std/span>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(STRATA_BACKEND_CUDA)
#include <cub/device/device_radix_sort.cuh>
#else
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#endif

namespace strata {

namespace detail {
template <class I>
struct iota_fn {
  I* out;
  STRATA_HD void operator()(index_t i) const { out[i] = I(i); }
};
template <class K, class View, class KeyFn>
struct keys_of {
  K* out;
  View view;
  KeyFn key;
  STRATA_HD void operator()(index_t i) const { out[i] = K(key(view.load(i))); }
};
/// Orders indices by bits [begin, end) of their keys (integers), or by the whole key (floats).
template <class K, class I>
struct masked_less {
  const K* keys;
  int begin, end;
  bool operator()(I x, I y) const {
    if (begin <= 0 && end >= int(sizeof(K) * 8)) return keys[x] < keys[y];  // every bit: the key's own order
    if constexpr (std::is_integral_v<K>) {
      using U = std::make_unsigned_t<K>;
      const int bits = int(sizeof(K) * 8);
      const U high = end >= bits ? ~U(0) : U((U(1) << end) - 1), low = begin <= 0 ? U(0) : U((U(1) << begin) - 1);
      const U mask = U(high & ~low);
      return (U(keys[x]) & mask) < (U(keys[y]) & mask);
    } else {
      return keys[x] < keys[y];
    }
  }
};
/// Below this many indices gather reads the columns without sampling jumps first: one launch, and
/// a source this small is read from L2 whichever way.
inline constexpr index_t gather_count_from = index_t(1) << 15;
/// Benchmarks time each way of gather alone; everything else leaves the choice to the count.
enum class gather_way { count, columns, records };
inline gather_way gather_forced = gather_way::count;
/// Tests pin the cache size the count's window comes from (0: none; ~0: the device's, cache_bytes()).
inline std::size_t gather_cache_bytes = ~std::size_t(0);
}  // namespace detail

namespace testing {
/// Host backend: how many gathers took each way (the GPU's choice stays in device memory).
inline std::atomic<long> gathers_by_columns{0}, gathers_by_records{0};
/// Both backends: gathers whose columns way (queued, chosen or not) stores four records per
/// access with vector index loads, with index loads one by one (an index array not aligned for
/// vectors), or moves records one by one (leaves other than 1, 2, 4, 8 or 16 bytes), indexed by
/// detail::columns_path.
inline std::atomic<long> column_gathers[3] = {0, 0, 0};
}  // namespace testing

namespace detail {
/// Where a gather of the caller's indices records the first one outside its source (index_check):
/// a device word set to ~0 in stream order.
class bad_index_slot {
 public:
  explicit bad_index_slot(stream_t stream) : block_(sizeof(unsigned long long), stream) {
#if defined(STRATA_BACKEND_CUDA)
    cuda_check(cudaMemsetAsync(block_.data(), 0xff, sizeof(unsigned long long), stream), "cudaMemsetAsync (strata index check)");
#else
    *get() = ~0ull;
#endif
  }
  unsigned long long* get() const { return block_.as<unsigned long long>(); }
  /// The first position whose index was out of range, or -1; waits for the stream. A stream being
  /// captured into a graph cannot be waited on: -1 there (the kernels still read nothing out of
  /// range; the graph's runs are not checked).
  index_t first_bad(stream_t stream) const {
#if defined(STRATA_BACKEND_CUDA)
    if (stream_capturing(stream)) return -1;
#endif
    unsigned long long at = ~0ull;
    copy_bytes_async(&at, get(), sizeof at, stream);
    synchronize(stream);
    return at == ~0ull ? index_t(-1) : index_t(at);
  }

 private:
  scratch_block block_;
};
/// Throws std::out_of_range naming indices[at] (device or host memory), which is outside [0, size).
template <class I>
[[noreturn]] void throw_bad_index(const char* op, const I* indices, index_t at, index_t size, const char* after) {
  I value{};
  copy_bytes(&value, indices + at, sizeof value);
  throw std::out_of_range(std::string(op) + ": indices[" + std::to_string(at) + "] = " + std::to_string(value) +
                          " is outside the source's records [0, " + std::to_string(size) + "); " + after);
}

/// The scratch memory of one gather_records call, taken before it or its caller writes anything,
/// so a failed allocation leaves every operand as it was.
struct gather_workspace {
  std::optional<scratch_block> far, aos, counters;
  /// The way gather_records takes for n indices: the count between both ways, or one of them.
  static gather_way way(index_t n) {
    if (gather_forced == gather_way::records) return gather_way::records;
    if (n < gather_count_from || gather_forced == gather_way::columns) return gather_way::columns;
    return gather_way::count;
  }
  gather_workspace(index_t src_size, index_t n, std::size_t stride, stream_t stream) {
    if (n == 0) return;
    const gather_way w = way(n);
    if (w == gather_way::count) far.emplace(sizeof(unsigned long long), stream);
    if (w != gather_way::columns) aos.emplace(std::size_t(src_size) * stride, stream);
#if defined(STRATA_BACKEND_CUDA)
    counters.emplace(2 * sizeof(unsigned long long), stream);  // the span counters of both ways
#endif
  }
  unsigned long long* counter(int k) const { return counters ? counters->as<unsigned long long>() + k : nullptr; }
};

/// dst records [0, n) = src records idx[i], by whichever way moves fewer bytes (see the top), with
/// the scratch ws took (nothing allocated here). Indices outside [0, src.size()) read nothing and
/// give zero records; the first one's position goes to *first_bad where that is not null.
template <class T, class M, class I>
void gather_records(const basic_view<const T, M>& src, const I* idx, index_t n, const basic_view<T, M>& dst, stream_t stream,
                    unsigned long long* first_bad, const gather_workspace& ws) {
  if (n == 0) return;
  constexpr std::size_t stride = sizeof(layout::aligned_record<T>);
  const index_check check{src.size(), first_bad};
  const gather_way way = gather_workspace::way(n);
  if (way == gather_way::records) {
    soa_to_aos_bytes<T, stride>(src, 0, ws.aos->data(), src.size(), stream);
    gather_aos_to_soa<T, stride>(ws.aos->data(), idx, n, dst, stream, check, {}, ws.counter(1));
    return;
  }
  auto note = [](columns_path p) { testing::column_gathers[int(p)].fetch_add(1, std::memory_order_relaxed); };
  if (way == gather_way::columns) {
    note(gather_soa_to_soa(src, idx, n, dst, stream, first_bad, {}, ws.counter(0)));
#if !defined(STRATA_BACKEND_CUDA)
    testing::gathers_by_columns.fetch_add(1, std::memory_order_relaxed);
#endif
    return;
  }
  using costs = gather_costs<T, stride>;
  auto* far = ws.far->as<unsigned long long>();
  const std::size_t cache = gather_cache_bytes == ~std::size_t(0) ? cache_bytes() : gather_cache_bytes;
  const unsigned long long limit = far_sample::scaled(costs::direct_limit(src.size(), n), n);
  count_far_sample(idx, n, src.size(), costs::near, costs::window(cache, sizeof(I)), far, stream, limit);
  note(gather_soa_to_soa(src, idx, n, dst, stream, first_bad, path_gate{far, limit, true}, ws.counter(0)));
  const path_gate by_records{far, limit, false};
  soa_to_aos_bytes<T, stride>(src, 0, ws.aos->data(), src.size(), stream, by_records);
  gather_aos_to_soa<T, stride>(ws.aos->data(), idx, n, dst, stream, check, by_records, ws.counter(1));
#if !defined(STRATA_BACKEND_CUDA)
  (by_records.open() ? testing::gathers_by_records : testing::gathers_by_columns).fetch_add(1, std::memory_order_relaxed);
#endif
}

template <class T>
operand index_operand(const void* p, index_t n, const char* role) {
  return {role, locate(p), n, &type_name<T>, "elements"};
}
}  // namespace detail

namespace detail {
/// permute's work, with its scratch taken at construction (before the caller sorts keys or changes
/// anything): the records to padded AoS scratch, then gathered back into the columns. With
/// `checked`, an index outside [0, n) restores the records as they were and throws (the host waits
/// for the stream to know); unchecked (indices made by strata) it stays stream ordered.
template <class T, class M>
class permute_in_place {
 public:
  static constexpr std::size_t stride = sizeof(layout::aligned_record<T>);
  permute_in_place(basic_vector<T, M>& c, stream_t stream, bool checked)
      : c_(c), stream_(stream), aos_(std::size_t(c.size()) * stride, stream), counter_(sizeof(unsigned long long), stream) {
    if (checked) bad_.emplace(stream);
  }
  template <class I>
  void run(const I* indices) {
    const index_t n = index_t(c_.size());
    auto v = c_.view();
    soa_to_aos_bytes<T, stride>(basic_view<const T, M>(v), 0, aos_.data(), n, stream_);
    gather_aos_to_soa<T, stride>(aos_.data(), indices, n, v, stream_, index_check{n, bad_ ? bad_->get() : nullptr}, {},
                                 counter_.as<unsigned long long>());
    if (!bad_) return;
    if (const index_t at = bad_->first_bad(stream_); at >= 0) {
      aos_bytes_to_soa<T, stride>(aos_.data(), n, v, 0, stream_);
      synchronize(stream_);
      throw_bad_index("strata::permute", indices, at, n, "the container is left as it was");
    }
  }

 private:
  basic_vector<T, M>& c_;
  stream_t stream_;
  scratch_block aos_, counter_;
  std::optional<bad_index_slot> bad_;
};

/// A gather of n records of src into dst (or a spare), everything it needs taken at construction:
/// dst's larger storage aside where it must grow (on the current device), the gather's scratch and
/// the bad-index word. Nothing has changed if construction throws; commit() then makes dst hold n
/// records to be overwritten (no allocation) and run() gathers.
template <class T, class M>
class gather_into {
 public:
  gather_into(const basic_vector<T, M>& src, basic_vector<T, M>& dst, index_t n, stream_t stream, const char* op, const char* what, bool checked)
      : src_(src), dst_(dst), n_(n), stream_(stream) {
    check_growth_allowed(stream, op, what, dst.capacity(), std::size_t(n));  // before anything is queued
    ws_.emplace(index_t(src.size()), n, sizeof(layout::aligned_record<T>), stream);
    if (std::size_t(n) > dst.capacity()) fresh_.resize_for_overwrite(std::size_t(n));
    if (checked && n > 0) bad_.emplace(stream);
  }
  void commit() {
    if (std::size_t(n_) > dst_.capacity()) {
      dst_.swap(fresh_);
    } else {
      dst_.clear();
      dst_.resize_for_overwrite(std::size_t(n_));
    }
  }
  /// The gather; an index outside src throws std::out_of_range naming it once the stream is done
  /// (`after` says what is left where), where the gather was made `checked`.
  template <class I>
  void run(const I* idx, const char* op, const char* after) {
    if (n_ == 0) return;
    gather_records(src_.const_view(), idx, n_, dst_.view(), stream_, bad_ ? bad_->get() : nullptr, *ws_);
    if (bad_)
      if (const index_t at = bad_->first_bad(stream_); at >= 0) throw_bad_index(op, idx, at, index_t(src_.size()), after);
  }

 private:
  const basic_vector<T, M>& src_;
  basic_vector<T, M>& dst_;
  index_t n_;
  stream_t stream_;
  std::optional<gather_workspace> ws_;
  basic_vector<T, M> fresh_;
  std::optional<bad_index_slot> bad_;
};
template <class T, class M>
void check_spare(const basic_vector<T, M>& c, const basic_vector<T, M>& spare, const char* op) {
  if (&c == &spare) throw std::invalid_argument(std::string(op) + ": the spare is the container itself");
}
}  // namespace detail

/// Reorders the records of c: record i becomes the record that was at indices[i]. indices holds
/// c.size() values in [0, c.size()) (a permutation; repeated values copy records). Every index is
/// checked as it is read: one outside that range throws std::out_of_range naming it, and c is left
/// as it was. To know, the host waits for the stream at the end (except while the stream is
/// captured into a graph: there nothing out of range is read, and bad indices give zero records).
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void permute(basic_vector<T, M>& c, cuda::std::span<const I> indices, stream_t stream = {}) {
  const index_t n = index_t(c.size());
  if (index_t(indices.size()) != n) detail::throw_size_error("strata::permute: indices", index_t(indices.size()), n);
  detail::launch_scope scope("strata::permute", stream,
                             {detail::described(c.view(), "container"), detail::index_operand<I>(indices.data(), n, "indices")});
  if (n == 0) return;
  c.note_stream(stream);
  detail::permute_in_place<T, M>(c, stream, true).run(indices.data());
}
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void permute(basic_vector<T, M>& c, cuda::std::span<I> indices, stream_t stream = {}) {
  permute(c, cuda::std::span<const I>(indices), stream);
}

/// permute through a spare container: the records of c in the order of indices are gathered into
/// spare's storage (kept across calls where it holds them; grown otherwise) by whichever way moves
/// fewer bytes, then c and spare trade places. One gather instead of the in-place permute's
/// transpose and gather: where consecutive indices stay close (particles re-sorted after a step)
/// it moves about half the bytes. Afterwards c's records live in what was spare's storage (views
/// and pointers into c taken before now refer to spare) and spare holds c's previous records. An
/// index outside [0, c.size()) throws std::out_of_range naming it; c is then left as it was and
/// spare's records are unspecified. The host waits for the stream at the end to know, as permute.
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void permute(basic_vector<T, M>& c, cuda::std::span<const I> indices, basic_vector<T, M>& spare, stream_t stream = {}) {
  detail::check_spare(c, spare, "strata::permute");
  const index_t n = index_t(c.size());
  if (index_t(indices.size()) != n) detail::throw_size_error("strata::permute: indices", index_t(indices.size()), n);
  detail::launch_scope scope("strata::permute", stream,
                             {detail::described(c.const_view(), "container"), detail::described(spare.const_view(), "spare"),
                              detail::index_operand<I>(indices.data(), n, "indices")});
  c.note_stream(stream), spare.note_stream(stream);
  detail::gather_into<T, M> g(c, spare, n, stream, "strata::permute", "spare", true);
  g.commit();
  g.run(indices.data(), "strata::permute", "the container is left as it was (the spare's records are not)");
  c.swap(spare);
}
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void permute(basic_vector<T, M>& c, cuda::std::span<I> indices, basic_vector<T, M>& spare, stream_t stream = {}) {
  permute(c, cuda::std::span<const I>(indices), spare, stream);
}

/// Gathers records of src into dst: dst record i becomes src record indices[i], for every i of
/// indices (dst is resized to indices.size(); indices hold values in [0, src.size()), repeats
/// allowed). src and dst are distinct containers. Counts, on the device, how often consecutive
/// indices jump in a sample of them (far_sample) and reads the columns at the indices or moves
/// whole padded records, whichever moves fewer bytes (see the top of this file), without the host
/// waiting for the choice. Every index is checked as it is read: one outside [0, src.size()) reads
/// nothing and throws std::out_of_range naming it (dst then holds zero records at the bad
/// positions); to know, the host waits for the stream at the end, except while the stream is
/// captured into a graph.
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void gather(const basic_vector<T, M>& src, cuda::std::span<const I> indices, basic_vector<T, M>& dst, stream_t stream = {}) {
  if (&src == &dst) throw std::invalid_argument("strata::gather: src and dst are the same container (strata::permute reorders in place)");
  const index_t n = index_t(indices.size());
  // Checked before dst changes: a refused call leaves it as it was; so does a failed allocation
  // (a larger dst is made aside and swapped in). A dst with no memory yet is allocated on src's
  // device (the scope makes it current).
  detail::launch_scope scope("strata::gather", stream,
                             {detail::described(src.const_view(), "source"), detail::described(dst.const_view(), "destination"),
                              detail::index_operand<I>(indices.data(), n, "indices")});
  src.note_stream(stream), dst.note_stream(stream);
  detail::gather_into<T, M> g(src, dst, n, stream, "strata::gather", "destination", true);
  g.commit();
  g.run(indices.data(), "strata::gather", "the destination holds zero records where indices are out of range");
}
template <class T, class M, class I>
  requires(std::is_integral_v<I> && layout::columnar_mapping<M>)
void gather(const basic_vector<T, M>& src, cuda::std::span<I> indices, basic_vector<T, M>& dst, stream_t stream = {}) {
  gather(src, cuda::std::span<const I>(indices), dst, stream);
}

namespace detail {
/// sort_by_key's work once the call is checked: (key, index) pairs sorted, then apply(order) puts
/// the records in that order (const I*, I = int32 or int64 as n needs). Every allocation comes
/// before the keys change (the caller takes apply's beforehand), and apply allocates nothing, so a
/// failed allocation leaves keys and records as they were.
template <class T, class M, class K, class Apply>
void sort_by_key_with(basic_vector<T, M>& c, cuda::std::span<K> keys, stream_t stream, int begin_bit, int end_bit, Apply&& apply) {
  const index_t n = index_t(c.size());
  if (n <= 1) return;
  auto sort_with = [&]<class I>() {
    scratch_block idx(sizeof(I) * std::size_t(n) * 2, stream);
    I* a = idx.as<I>();
    [[maybe_unused]] I* b = a + n;  // the values' second buffer (CUDA)
    run_each(iota_fn<I>{a}, n, stream, "strata::sort_by_key (indices)");
#if defined(STRATA_BACKEND_CUDA)
    scratch_block alt(sizeof(K) * std::size_t(n), stream);
    cub::DoubleBuffer<K> dk(keys.data(), alt.as<K>());
    cub::DoubleBuffer<I> dv(a, b);
    std::size_t temp = 0;
    cuda_check(cub::DeviceRadixSort::SortPairs(nullptr, temp, dk, dv, n, begin_bit, end_bit, stream), "cub::DeviceRadixSort");
    scratch_block tmp(std::max<std::size_t>(temp, 1), stream);
    cuda_check(cub::DeviceRadixSort::SortPairs(tmp.data(), temp, dk, dv, n, begin_bit, end_bit, stream), "cub::DeviceRadixSort");
    if (dk.Current() != keys.data()) copy_bytes_async(keys.data(), dk.Current(), sizeof(K) * std::size_t(n), stream);
    apply(static_cast<const I*>(dv.Current()));
#else
    // Indices ordered by the compared bits of their keys (Thrust's stable sort on OpenMP threads),
    // then the keys in that order.
    thrust::stable_sort(thrust::device, a, a + n, masked_less<K, I>{keys.data(), begin_bit, end_bit});
    std::vector<K> sorted(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) sorted[std::size_t(i)] = keys[std::size_t(a[i])];
    apply(static_cast<const I*>(a));
    std::copy(sorted.begin(), sorted.end(), keys.data());
#endif
  };
  if (n <= index_t(0x7fffffff)) sort_with.template operator()<std::int32_t>();
  else sort_with.template operator()<std::int64_t>();
}
}  // namespace detail

/// Sorts the records of c by keys (keys[i] belongs to record i; c.size() of them), stably, and
/// sorts keys with them. Only bits [begin_bit, end_bit) of the keys are compared (fewer bits,
/// fewer radix passes: 18-bit cell indices need end_bit = 18). Stream ordered.
template <class T, class M, class K>
  requires(std::is_arithmetic_v<K> && layout::columnar_mapping<M>)
void sort_by_key(basic_vector<T, M>& c, cuda::std::span<K> keys, stream_t stream = {}, int begin_bit = 0, int end_bit = int(sizeof(K) * 8)) {
  const index_t n = index_t(c.size());
  if (index_t(keys.size()) != n) detail::throw_size_error("strata::sort_by_key: keys", index_t(keys.size()), n);
  detail::launch_scope scope("strata::sort_by_key", stream,
                             {detail::described(c, "container"), detail::index_operand<K>(keys.data(), n, "keys")});
  if (n <= 1) return;
  c.note_stream(stream);
  detail::permute_in_place<T, M> reorder(c, stream, false);
  detail::sort_by_key_with(c, keys, stream, begin_bit, end_bit, [&](const auto* order) { reorder.run(order); });
}

/// sort_by_key through a spare container, as permute through one: the records are gathered in
/// key order into spare's storage and c and spare trade places (views and pointers into c taken
/// before now refer to spare; spare's records are unspecified afterwards).
template <class T, class M, class K>
  requires(std::is_arithmetic_v<K> && layout::columnar_mapping<M>)
void sort_by_key(basic_vector<T, M>& c, cuda::std::span<K> keys, basic_vector<T, M>& spare, stream_t stream = {}, int begin_bit = 0,
                 int end_bit = int(sizeof(K) * 8)) {
  detail::check_spare(c, spare, "strata::sort_by_key");
  const index_t n = index_t(c.size());
  if (index_t(keys.size()) != n) detail::throw_size_error("strata::sort_by_key: keys", index_t(keys.size()), n);
  detail::launch_scope scope("strata::sort_by_key", stream,
                             {detail::described(c, "container"), detail::described(spare.const_view(), "spare"),
                              detail::index_operand<K>(keys.data(), n, "keys")});
  if (n <= 1) return;
  c.note_stream(stream), spare.note_stream(stream);
  detail::gather_into<T, M> reorder(c, spare, n, stream, "strata::sort_by_key", "spare", false);
  detail::sort_by_key_with(c, keys, stream, begin_bit, end_bit, [&](const auto* order) {
    reorder.commit();
    reorder.run(order, "strata::sort_by_key", "");
    c.swap(spare);
  });
}

/// Sorts the records of c by key_fn(record) (an unsigned or signed integer, or a float), stably:
/// the keys are computed on the device into scratch memory, no key array of the caller's. Bits
/// [begin_bit, end_bit) of the keys are compared (a cell index below 2^18: end_bit = 18).
template <class T, class M, class KeyFn>
  requires layout::columnar_mapping<M>
void sort_by(basic_vector<T, M>& c, KeyFn key_fn, stream_t stream = {}, int begin_bit = 0,
             int end_bit = int(sizeof(std::invoke_result_t<KeyFn, const T&>) * 8)) {
  using K = std::remove_cvref_t<std::invoke_result_t<KeyFn, const T&>>;
  static_assert(std::is_arithmetic_v<K>, "strata::sort_by: the key function must return an integer or a floating-point value");
  const index_t n = index_t(c.size());
  auto v = c.const_view();
  detail::launch_scope scope("strata::sort_by", stream, {detail::described(v, "container")});
  if (n <= 1) return;
  detail::scratch_block keys(sizeof(K) * std::size_t(n), stream);
  detail::run_each(detail::keys_of<K, decltype(v), KeyFn>{keys.as<K>(), v, key_fn}, n, stream, "strata::sort_by (keys)");
  sort_by_key(c, cuda::std::span<K>(keys.as<K>(), std::size_t(n)), stream, begin_bit, end_bit);
}

/// sort_by through a spare container, as permute through one (see there): one gather of the
/// records into spare's storage, then c and spare trade places.
template <class T, class M, class KeyFn>
  requires layout::columnar_mapping<M>
void sort_by(basic_vector<T, M>& c, KeyFn key_fn, basic_vector<T, M>& spare, stream_t stream = {}, int begin_bit = 0,
             int end_bit = int(sizeof(std::invoke_result_t<KeyFn, const T&>) * 8)) {
  using K = std::remove_cvref_t<std::invoke_result_t<KeyFn, const T&>>;
  static_assert(std::is_arithmetic_v<K>, "strata::sort_by: the key function must return an integer or a floating-point value");
  detail::check_spare(c, spare, "strata::sort_by");
  const index_t n = index_t(c.size());
  auto v = c.const_view();
  detail::launch_scope scope("strata::sort_by", stream, {detail::described(v, "container"), detail::described(spare.const_view(), "spare")});
  if (n <= 1) return;
  detail::scratch_block keys(sizeof(K) * std::size_t(n), stream);
  detail::run_each(detail::keys_of<K, decltype(v), KeyFn>{keys.as<K>(), v, key_fn}, n, stream, "strata::sort_by (keys)");
  sort_by_key(c, cuda::std::span<K>(keys.as<K>(), std::size_t(n)), spare, stream, begin_bit, end_bit);
}

}  // namespace strata
