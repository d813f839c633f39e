// SPDX-License-Identifier: Apache-2.0
// Particle lifecycle against std:: algorithms on host vectors: push_back / append (host ranges and
// containers), erase_if / copy_if / partition_copy (all kept, none kept, about half, alternating), permute,
// sort_by_key (duplicate keys: stable; a bit range), sort_by; random sizes up to 1e6 and the size
// list; a hot loop of them that reaches the driver for no memory.
#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

using namespace strata_test;

namespace {

struct remove_none {
  STRATA_HD bool operator()(const mixed&) const { return false; }
};
struct remove_all {
  STRATA_HD bool operator()(const mixed&) const { return true; }
};
struct odd_cell {  // alternating, as cells of neighbouring records tend to be in sorted data
  STRATA_HD bool operator()(const mixed& m) const { return m.cell % 2 == 1; }
};
struct negative_x {  // about half
  STRATA_HD bool operator()(const mixed& m) const { return m.x < 0; }
};
struct cell_key {
  STRATA_HD std::uint32_t operator()(const mixed& m) const { return m.cell % 97; }  // many duplicates
};
struct id_bucket {
  STRATA_HD std::uint32_t operator()(const big_record& r) const { return std::uint32_t(r.id) >> 8; }
};
struct x_of {
  STRATA_HD double operator()(const mixed& m) const { return double(m.x); }
};

strata::index_t index_t_of(std::size_t n) { return strata::index_t(n); }

std::vector<std::size_t> lifecycle_sizes() {
  auto s = sizes_for<mixed>();
  std::mt19937_64 g(test_seed() + 15);
  for (int k = 0; k < 3; ++k) s.push_back(std::size_t(g() % (strata_test::under_sanitizer() ? 20000 : 1000000)));
  return s;
}

template <class Pred>
void check_erase(std::size_t n, Pred pred, const char* name) {
  SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n));
  auto ref = random_records<mixed>(n, 3);
  strata::soa_vector<mixed> v(ref);
  const std::size_t removed = strata::erase_if(v, pred);
  auto want = ref;
  want.erase(std::remove_if(want.begin(), want.end(), pred), want.end());
  EXPECT_EQ(removed, n - want.size());
  ASSERT_EQ(v.size(), want.size());
  ASSERT_EQ(first_difference<mixed>(v.to_host(), want), -1) << describe_difference<mixed>(v.to_host(), want);

  strata::soa_vector<mixed> src(ref), out(std::vector<mixed>(7, ref.empty() ? mixed{} : ref[0]));
  const std::size_t copied = strata::copy_if(src, out, pred);
  std::vector<mixed> want_copy;
  std::copy_if(ref.begin(), ref.end(), std::back_inserter(want_copy), pred);
  EXPECT_EQ(copied, want_copy.size());
  ASSERT_EQ(first_difference<mixed>(out.to_host(), want_copy), -1);

  // partition_copy: the picked records and the others, each in order, from one pass.
  strata::soa_vector<mixed> picked(std::vector<mixed>(3, ref.empty() ? mixed{} : ref[0])), others;
  const std::size_t k = strata::partition_copy(src, picked, others, pred);
  std::vector<mixed> want_rest;
  std::remove_copy_if(ref.begin(), ref.end(), std::back_inserter(want_rest), pred);
  EXPECT_EQ(k, want_copy.size());
  ASSERT_EQ(picked.size(), want_copy.size());
  ASSERT_EQ(others.size(), want_rest.size());
  ASSERT_EQ(first_difference<mixed>(picked.to_host(), want_copy), -1) << describe_difference<mixed>(picked.to_host(), want_copy);
  ASSERT_EQ(first_difference<mixed>(others.to_host(), want_rest), -1) << describe_difference<mixed>(others.to_host(), want_rest);
  EXPECT_THROW(strata::partition_copy(src, src, others, pred), std::invalid_argument);
}

}  // namespace

TEST(Lifecycle, PushBackAndAppendGrowAndKeepRecords) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(1000);
  strata::soa_vector<particle> v;
  for (std::size_t i = 0; i < 37; ++i) v.push_back(ref[i]);
  v.emplace_back(ref[37].x, ref[37].y, ref[37].z, ref[37].vx, ref[37].vy, ref[37].vz, ref[37].mass);
  EXPECT_EQ(v.size(), 38u);
  v.append(std::vector<particle>(ref.begin() + 38, ref.begin() + 500));  // a host range
  strata::soa_vector<particle> more(std::vector<particle>(ref.begin() + 500, ref.end()));
  v.append(more, strata::stream_t{});  // a container, stream ordered
  strata::synchronize(strata::stream_t{});
  EXPECT_EQ(v.size(), ref.size());
  EXPECT_GE(v.capacity(), v.size());
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1) << describe_difference<particle>(v.to_host(), ref);
  // Amortized growth: 1000 push_backs reallocate about log2(1000) times, not 1000.
  strata::soa_vector<particle> w;
  const long before = strata::testing::driver_allocations.load();
  for (auto& p : ref) w.push_back(p);
  EXPECT_LT(strata::testing::driver_allocations.load() - before, 20);
  EXPECT_EQ(first_difference<particle>(w.to_host(), ref), -1);
}

TEST(Lifecycle, EraseIfAndCopyIfAreStableCompactions) {
  STRATA_SEED_TRACE();
  for (std::size_t n : lifecycle_sizes()) {
    check_erase(n, remove_none{}, "all kept");
    check_erase(n, remove_all{}, "none kept");
    check_erase(n, odd_cell{}, "alternating");
    check_erase(n, negative_x{}, "about half");
  }
}

/// strata::permute by a random permutation (drawn from g) of ref's records matches std.
template <class T>
void check_random_permute(const std::vector<T>& ref, std::mt19937_64& g) {
  const std::size_t n = ref.size();
  std::vector<std::int32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), g);
  strata::soa_vector<T> v(ref);
  strata::buffer pb(n * sizeof(std::int32_t), strata::memory_space::device);
  strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
  strata::permute(v, cuda::std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(pb.data()), n));
  strata::synchronize(strata::stream_t{});
  std::vector<T> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(perm[i])];
  ASSERT_EQ(first_difference<T>(v.to_host(), want), -1) << "permute: " << describe_difference<T>(v.to_host(), want);
}

TEST(Lifecycle, PermuteSortByKeyAndSortBy) {
  STRATA_SEED_TRACE();
  for (std::size_t n : lifecycle_sizes()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n, 5);
    std::mt19937_64 g(test_seed() ^ n);
    ASSERT_NO_FATAL_FAILURE(check_random_permute(ref, g));
    std::vector<mixed> want(n);

    // sort_by_key with many equal keys: stable, keys sorted with the records.
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = std::uint32_t(g() % 50);
    strata::soa_vector<mixed> s(ref);
    strata::buffer kb(n * sizeof(std::uint32_t), strata::memory_space::device);
    strata::copy_bytes(kb.data(), keys.data(), kb.bytes());
    auto* dk = reinterpret_cast<std::uint32_t*>(kb.data());
    strata::sort_by_key(s, cuda::std::span<std::uint32_t>(dk, n), strata::stream_t{}, 0, 6);  // keys < 64: six bits
    strata::synchronize(strata::stream_t{});
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[order[i]];
    ASSERT_EQ(first_difference<mixed>(s.to_host(), want), -1) << "sort_by_key: " << describe_difference<mixed>(s.to_host(), want);
    auto sorted_keys = fetch(dk, n);
    ASSERT_TRUE(std::is_sorted(sorted_keys.begin(), sorted_keys.end()));

    // sort_by a key computed from the record.
    strata::soa_vector<mixed> b(ref);
    strata::sort_by(b, cell_key{});
    strata::synchronize(strata::stream_t{});
    want = ref;
    std::stable_sort(want.begin(), want.end(), [](const mixed& x, const mixed& y) { return cell_key{}(x) < cell_key{}(y); });
    ASSERT_EQ(first_difference<mixed>(b.to_host(), want), -1) << "sort_by: " << describe_difference<mixed>(b.to_host(), want);
  }
}

// AoSoA containers (blocks of 32, sizes that end inside a block) take the same reordering calls:
// permute in place and through a spare, gather, sort_by_key and sort_by, against the host.
TEST(Lifecycle, ReorderingAnAosoaContainer) {
  STRATA_SEED_TRACE();
  using blocked = strata::aosoa_vector<mixed, 32>;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), std::size_t(1000), std::size_t(99991)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n, 67);
    std::mt19937_64 g(test_seed() ^ n ^ 67);
    std::vector<std::int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    strata::buffer pb(n * sizeof(std::int32_t), strata::memory_space::device);
    strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
    const cuda::std::span<const std::int32_t> idx(reinterpret_cast<const std::int32_t*>(pb.data()), n);
    std::vector<mixed> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(perm[i])];
    blocked c(ref), spare, dst;
    strata::permute(c, idx);
    ASSERT_EQ(first_difference<mixed>(c.to_host(), want), -1) << "permute: " << describe_difference<mixed>(c.to_host(), want);
    blocked d(ref);
    strata::permute(d, idx, spare);
    ASSERT_EQ(first_difference<mixed>(d.to_host(), want), -1) << "permute through a spare";
    const blocked src(ref);
    strata::gather(src, idx, dst);
    ASSERT_EQ(first_difference<mixed>(dst.to_host(), want), -1) << "gather";

    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = std::uint32_t(g() % 50);
    strata::buffer kb(n * sizeof(std::uint32_t), strata::memory_space::device);
    strata::copy_bytes(kb.data(), keys.data(), kb.bytes());
    blocked k(ref);
    strata::sort_by_key(k, cuda::std::span<std::uint32_t>(reinterpret_cast<std::uint32_t*>(kb.data()), n));
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return keys[x] < keys[y]; });
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[order[i]];
    ASSERT_EQ(first_difference<mixed>(k.to_host(), want), -1) << "sort_by_key: " << describe_difference<mixed>(k.to_host(), want);

    blocked s(ref);
    strata::sort_by(s, cell_key{}, spare);
    want = ref;
    std::stable_sort(want.begin(), want.end(), [](const mixed& x, const mixed& y) { return cell_key{}(x) < cell_key{}(y); });
    ASSERT_EQ(first_difference<mixed>(s.to_host(), want), -1) << "sort_by: " << describe_difference<mixed>(s.to_host(), want);
    if (n == 0) continue;
    std::vector<std::int32_t> bad = perm;
    bad[n / 2] = -1;
    strata::copy_bytes(pb.data(), bad.data(), pb.bytes());
    blocked e(ref);
    EXPECT_THROW(strata::permute(e, idx), std::out_of_range);
    ASSERT_EQ(first_difference<mixed>(e.to_host(), ref), -1) << "after a bad index";
  }
}

// permute, sort_by_key and sort_by through a spare container: the same records as in place, the
// spare holding the container's previous storage afterwards; a second call of the same size
// reuses both storages (they trade places, nothing allocated); a bad index leaves the container
// as it was; the container itself as its spare is refused.
TEST(Lifecycle, PermuteAndSortThroughASpare) {
  STRATA_SEED_TRACE();
  auto first_column = [](strata::soa_vector<mixed>& v) { return static_cast<const void*>(v.view().template column<0>().data()); };
  for (std::size_t n : lifecycle_sizes()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto ref = random_records<mixed>(n, 61);
    std::mt19937_64 g(test_seed() ^ n ^ 61);
    std::vector<std::int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    strata::buffer pb(n * sizeof(std::int32_t), strata::memory_space::device);
    strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
    const cuda::std::span<const std::int32_t> idx(reinterpret_cast<const std::int32_t*>(pb.data()), n);
    strata::soa_vector<mixed> c(ref), spare;
    std::vector<mixed> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(perm[i])];
    strata::permute(c, idx, spare);
    ASSERT_EQ(first_difference<mixed>(c.to_host(), want), -1) << "permute: " << describe_difference<mixed>(c.to_host(), want);
    ASSERT_EQ(first_difference<mixed>(spare.to_host(), ref), -1) << "the spare: " << describe_difference<mixed>(spare.to_host(), ref);
    const void* c_storage = first_column(c);
    const void* spare_storage = first_column(spare);
    strata::permute(c, idx, spare);  // twice: want[perm] of want
    std::vector<mixed> twice(n);
    for (std::size_t i = 0; i < n; ++i) twice[i] = want[std::size_t(perm[i])];
    ASSERT_EQ(first_difference<mixed>(c.to_host(), twice), -1) << "permute again: " << describe_difference<mixed>(c.to_host(), twice);
    if (n > 0) {
      EXPECT_EQ(first_column(c), spare_storage);
      EXPECT_EQ(first_column(spare), c_storage);
    }

    // sort_by_key with many equal keys, against the in-place sort of the same records and keys.
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = std::uint32_t(g() % 50);
    strata::buffer ka(n * sizeof(std::uint32_t), strata::memory_space::device), kb(n * sizeof(std::uint32_t), strata::memory_space::device);
    strata::copy_bytes(ka.data(), keys.data(), ka.bytes());
    strata::copy_bytes(kb.data(), keys.data(), kb.bytes());
    strata::soa_vector<mixed> in_place(ref), through(ref);
    strata::sort_by_key(in_place, cuda::std::span<std::uint32_t>(reinterpret_cast<std::uint32_t*>(ka.data()), n), strata::stream_t{}, 0, 6);
    strata::sort_by_key(through, cuda::std::span<std::uint32_t>(reinterpret_cast<std::uint32_t*>(kb.data()), n), spare, strata::stream_t{}, 0, 6);
    const auto a = in_place.to_host(), b = through.to_host();
    ASSERT_EQ(first_difference<mixed>(b, a), -1) << "sort_by_key: " << describe_difference<mixed>(b, a);
    EXPECT_EQ(fetch(reinterpret_cast<std::uint32_t*>(kb.data()), n), fetch(reinterpret_cast<std::uint32_t*>(ka.data()), n));

    // sort_by a key computed from the record.
    strata::soa_vector<mixed> s(ref);
    strata::sort_by(s, cell_key{}, spare);
    want = ref;
    std::stable_sort(want.begin(), want.end(), [](const mixed& x, const mixed& y) { return cell_key{}(x) < cell_key{}(y); });
    ASSERT_EQ(first_difference<mixed>(s.to_host(), want), -1) << "sort_by: " << describe_difference<mixed>(s.to_host(), want);

    if (n == 0) continue;
    // A bad index: refused, the container as it was.
    std::vector<std::int32_t> bad = perm;
    bad[n / 2] = std::int32_t(n);
    strata::copy_bytes(pb.data(), bad.data(), pb.bytes());
    strata::soa_vector<mixed> d(ref);
    EXPECT_THROW(strata::permute(d, idx, spare), std::out_of_range);
    ASSERT_EQ(first_difference<mixed>(d.to_host(), ref), -1) << "after a bad index: " << describe_difference<mixed>(d.to_host(), ref);
    EXPECT_THROW(strata::permute(d, idx, d), std::invalid_argument);
    EXPECT_THROW(strata::sort_by(d, cell_key{}, d), std::invalid_argument);
  }
}

/// Pins the cache size gather's count assumes, for the scope.
struct pin_gather_cache {
  std::size_t was = strata::detail::gather_cache_bytes;
  explicit pin_gather_cache(std::size_t bytes) { strata::detail::gather_cache_bytes = bytes; }
  ~pin_gather_cache() { strata::detail::gather_cache_bytes = was; }
};

// gather into another container: a re-sort (consecutive indices mostly close), a random
// permutation, and fewer indices than records with repeats; the result matches std and the way
// taken is the cheaper one (seen on the host backend, which runs the same count and choice). The
// count's cache is pinned at none: every jump past `near` could miss, as in a source far larger
// than L2 (a source this size fits in one, where the columns way is right for any indices).
template <class T>
void check_gather(std::size_t n, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n));
  const pin_gather_cache pin(0);
  auto ref = random_records<T>(n, seed);
  std::mt19937_64 g(test_seed() ^ seed ^ n);
  std::vector<std::int32_t> resort(n), shuffled(n), picks(n / 2 + 3);
  std::iota(resort.begin(), resort.end(), 0);
  for (std::size_t k = 0; n > 1 && k < n / 200; ++k) std::swap(resort[g() % n], resort[g() % n]);  // about 1 in 50 indices jump
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::shuffle(shuffled.begin(), shuffled.end(), g);
  for (auto& p : picks) p = n ? std::int32_t(g() % n) : 0;
  if (n == 0) picks.clear();
  const strata::soa_vector<T> src(ref);
  strata::soa_vector<T> dst(std::vector<T>(5, ref.empty() ? T{} : ref[0]));
  struct case_t {
    const char* name;
    const std::vector<std::int32_t>& idx;
    int way;  // 1: columns, 2: records, 0: either
  };
  const bool counted = index_t_of(n) >= strata::detail::gather_count_from;
  for (const case_t& c : {case_t{"resort", resort, 1}, case_t{"random", shuffled, counted && n > 1000 ? 2 : 1}, case_t{"repeats", picks, 0}}) {
    SCOPED_TRACE(c.name);
    strata::buffer ib(c.idx.size() * sizeof(std::int32_t), strata::memory_space::device);
    if (!c.idx.empty()) strata::copy_bytes(ib.data(), c.idx.data(), ib.bytes());
    const long columns = strata::testing::gathers_by_columns.load(), records = strata::testing::gathers_by_records.load();
    strata::gather(src, cuda::std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(ib.data()), c.idx.size()), dst);
    std::vector<T> want(c.idx.size());
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = ref[std::size_t(c.idx[i])];
    ASSERT_EQ(dst.size(), want.size());
    ASSERT_EQ(first_difference<T>(dst.to_host(), want), -1) << describe_difference<T>(dst.to_host(), want);
#if !defined(STRATA_BACKEND_CUDA)
    if (!c.idx.empty() && c.way == 1) {
      EXPECT_EQ(strata::testing::gathers_by_columns.load(), columns + 1);
    }
    if (!c.idx.empty() && c.way == 2) {
      EXPECT_EQ(strata::testing::gathers_by_records.load(), records + 1);
    }
#else
    (void)columns, (void)records;
#endif
  }
  // The columns way with 4- and 8-byte indices, each from an array aligned for vector loads and
  // from one that starts an element later (indices read one by one): the same records, n % 4 of
  // them past the last whole quad. The path taken is the one the record and alignment allow.
  using path = strata::detail::columns_path;
  const bool quads = strata::detail::gather_quads<T>::template applies<typename strata::soa_view<T>::mapping_type> && dst.view().vector_aligned();
  auto columns_case = [&]<class I>(std::size_t shift) {
    SCOPED_TRACE("columns, " + std::to_string(sizeof(I)) + "-byte indices, shifted by " + std::to_string(shift));
    strata::buffer ib((resort.size() + shift) * sizeof(I), strata::memory_space::device);
    std::vector<I> host(resort.size() + shift, I(0));
    std::copy(resort.begin(), resort.end(), host.begin() + std::ptrdiff_t(shift));
    if (!host.empty()) strata::copy_bytes(ib.data(), host.data(), ib.bytes());
    long before[3];
    for (int p = 0; p < 3; ++p) before[p] = strata::testing::column_gathers[p].load();
    strata::detail::gather_forced = strata::detail::gather_way::columns;
    strata::gather(src, cuda::std::span<const I>(reinterpret_cast<const I*>(ib.data()) + shift, resort.size()), dst);
    strata::detail::gather_forced = strata::detail::gather_way::count;
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(resort[i])];
    ASSERT_EQ(first_difference<T>(dst.to_host(), want), -1) << describe_difference<T>(dst.to_host(), want);
    if (n == 0) return;
    const path expected = !quads ? path::records_one_by_one : shift == 0 ? path::quads : path::quads_scalar_indices;
    for (int p = 0; p < 3; ++p) EXPECT_EQ(strata::testing::column_gathers[p].load(), before[p] + (p == int(expected) ? 1 : 0)) << "path " << p;
  };
  columns_case.template operator()<std::int32_t>(0);
  columns_case.template operator()<std::int32_t>(1);
  columns_case.template operator()<std::int64_t>(0);
  columns_case.template operator()<std::int64_t>(1);

  // No indices read nothing: where an empty span points (pageable host memory here) is not refused.
  const std::vector<std::int32_t> on_host(3, 0);
  strata::gather(src, cuda::std::span<const std::int32_t>(on_host.data(), 0), dst);
  EXPECT_EQ(dst.size(), 0u);

  strata::soa_vector<T> same(ref);
  EXPECT_THROW(strata::gather(same, cuda::std::span<const std::int32_t>(), same), std::invalid_argument);
  EXPECT_EQ(first_difference<T>(same.to_host(), ref), -1);
}

TEST(Lifecycle, GatherMatchesStdAndTakesTheCheaperWay) {
  STRATA_SEED_TRACE();
  for (std::size_t n : lifecycle_sizes()) check_gather<mixed>(n, 21);
  check_gather<mixed>(std::size_t(strata::detail::gather_count_from) * 3 + 5, 22);
}

// Indices outside the source: permute and gather throw std::out_of_range naming the first bad
// position and its value, and read nothing out of range (on the GPU such a read can be an illegal
// address, after which every CUDA call of the process fails: the valid work after each refusal
// checks that it did not happen). permute leaves the container as it was; gather writes zero
// records at the bad positions and the gathered ones elsewhere. Both ways of gather, and the count.
template <class I>
void check_bad_indices(std::size_t n, I bad_value, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " bad=" + std::to_string(bad_value));
  const auto ref = random_records<mixed>(n, seed);
  std::mt19937_64 g(test_seed() ^ seed ^ n);
  std::vector<I> perm(n);
  std::iota(perm.begin(), perm.end(), I(0));
  std::shuffle(perm.begin(), perm.end(), g);
  const std::size_t first = n / 2, second = n - 1;  // two bad positions: the lower one is reported
  perm[second] = bad_value;
  perm[first] = bad_value;
  strata::buffer pb(n * sizeof(I), strata::memory_space::device);
  strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
  const cuda::std::span<const I> idx(reinterpret_cast<const I*>(pb.data()), n);
  const std::string named = "indices[" + std::to_string(first) + "] = " + std::to_string(bad_value);

  strata::soa_vector<mixed> v(ref);
  try {
    strata::permute(v, idx);
    ADD_FAILURE() << "permute took an index outside the container";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
  ASSERT_EQ(first_difference<mixed>(v.to_host(), ref), -1) << "permute changed the container: " << describe_difference<mixed>(v.to_host(), ref);

  mixed zero;
  std::memset(static_cast<void*>(&zero), 0, sizeof zero);
  std::vector<mixed> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = i == first || i == second ? zero : ref[std::size_t(perm[i])];
  using way = strata::detail::gather_way;
  for (way w : {way::count, way::columns, way::records}) {
    SCOPED_TRACE("way " + std::to_string(int(w)));
    strata::soa_vector<mixed> dst;
    strata::detail::gather_forced = w;
    try {
      strata::gather(v, idx, dst);
      ADD_FAILURE() << "gather took an index outside the source";
    } catch (const std::out_of_range& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
    strata::detail::gather_forced = way::count;
    ASSERT_EQ(dst.size(), n);
    ASSERT_EQ(first_difference<mixed>(dst.to_host(), want), -1) << describe_difference<mixed>(dst.to_host(), want);
  }

  // Later work in the process succeeds: a valid permutation permutes as std does.
  std::iota(perm.begin(), perm.end(), I(0));
  std::shuffle(perm.begin(), perm.end(), g);
  strata::copy_bytes(pb.data(), perm.data(), pb.bytes());
  strata::permute(v, idx);
  for (std::size_t i = 0; i < n; ++i) want[i] = ref[std::size_t(perm[i])];
  ASSERT_EQ(first_difference<mixed>(v.to_host(), want), -1) << describe_difference<mixed>(v.to_host(), want);
}

TEST(Lifecycle, IndicesOutsideTheSourceAreRefused) {
  STRATA_SEED_TRACE();
  const std::size_t counted = std::size_t(strata::detail::gather_count_from) * 3 + 5;  // gather counts jumps
  for (std::size_t n : {std::size_t(2), std::size_t(1000), counted}) {
    check_bad_indices<std::int32_t>(n, std::int32_t(n), 43);                // one past the end
    check_bad_indices<std::int32_t>(n, -1, 44);                             // negative
    check_bad_indices<std::uint32_t>(n, 0xffffffffu, 45);                   // far past the end
    check_bad_indices<std::int64_t>(n, std::int64_t(1) << 40, 46);          // past any allocation
  }
}

// gather's choice reads a sample of the indices: one line of 32 in each group of sample::lines, at
// a place that changes from group to group. Indices sorted but for the same line of every group
// (random there) jump at about 1 pair in sample::lines; a sample at a fixed place in each group
// would see none or all.
TEST(Lifecycle, JumpSampleSeesAPatternThatRepeatsWithItsGroups) {
  using sample = strata::detail::far_sample;
  const strata::index_t n = sample::group * 2048 + 77;
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 g(test_seed() ^ 0x5a5a);
  for (strata::index_t grp = 0; grp * sample::group < n; ++grp)
    for (strata::index_t k = 5 * sample::line; k < 6 * sample::line && grp * sample::group + k < n; ++k)
      idx[std::size_t(grp * sample::group + k)] = std::int32_t(g() % std::uint64_t(n));
  std::vector<int> offsets(sample::lines);
  for (strata::index_t grp = 0; grp < sample::groups(n); ++grp) {
    const strata::index_t first = sample::line_start(grp);
    ASSERT_EQ(first % sample::line, 0);
    ASSERT_GE(first, grp * sample::group);
    ASSERT_LE(first + sample::line, (grp + 1) * sample::group);
    ++offsets[std::size_t((first - grp * sample::group) / sample::line)];
  }
  for (int c : offsets) EXPECT_GT(c, 2048 / sample::lines / 2);  // every place in a group is sampled, none much less often
  strata::buffer ib(idx.size() * sizeof(std::int32_t), strata::memory_space::device);
  strata::buffer far(sizeof(unsigned long long), strata::memory_space::device);
  strata::copy_bytes(ib.data(), idx.data(), ib.bytes());
  strata::detail::count_far_sample(reinterpret_cast<const std::int32_t*>(ib.data()), n, n, 8, 8, reinterpret_cast<unsigned long long*>(far.data()), {});
  unsigned long long count = 0;
  strata::copy_bytes(&count, far.data(), sizeof count);
  // Each sampled random line counts its 31 pairs (a random index lands far from its place and from
  // the line's earlier ones, but for a rare near pair); each sampled sorted line none.
  const unsigned long long random_lines = (unsigned long long)offsets[5];
  EXPECT_GT(random_lines, 0ull);
  EXPECT_LE(count, random_lines * (sample::line - 1));
  EXPECT_GE(count, random_lines * (sample::line - 1) * 95 / 100);
}

namespace {
/// far_sample's count of idx (device memory on the CUDA backend) with the given window.
unsigned long long far_count(const std::vector<std::int32_t>& idx, strata::index_t window, unsigned long long enough = ~0ull) {
  strata::buffer ib(idx.size() * sizeof(std::int32_t), strata::memory_space::device);
  strata::buffer far(sizeof(unsigned long long), strata::memory_space::device);
  strata::copy_bytes(ib.data(), idx.data(), ib.bytes());
  strata::detail::count_far_sample(reinterpret_cast<const std::int32_t*>(ib.data()), strata::index_t(idx.size()), strata::index_t(idx.size()), 8,
                                   window, reinterpret_cast<unsigned long long*>(far.data()), {}, enough);
  unsigned long long count = 0;
  strata::copy_bytes(&count, far.data(), sizeof count);
  return count;
}
}  // namespace

// A sampled index is far only where it jumps, lies past the window from where a gather in step
// with its output reads, and lands more than `near` from every earlier index of its line: indices
// that jump together to the same place count once, jumps back to the stream and moves within the
// window not at all; random targets each count, and so do steps that sweep the whole source.
TEST(Lifecycle, JumpSampleCountsNewPlacesPastTheWindow) {
  using sample = strata::detail::far_sample;
  const strata::index_t n = sample::group * 1024, d = n / 2;
  std::vector<std::int32_t> together(static_cast<std::size_t>(n)), scattered(static_cast<std::size_t>(n));
  std::mt19937_64 g(test_seed() ^ 0x77);
  for (strata::index_t i = 0; i < n; ++i) {
    const bool jumps = i % 8 == 3;  // four a line, 8 apart: each lands within `near` of the one before
    together[std::size_t(i)] = std::int32_t(jumps ? (i + d) % n : i);
    scattered[std::size_t(i)] = std::int32_t(jumps ? strata::index_t(g() % std::uint64_t(n)) : i);
  }
  EXPECT_EQ(far_count(together, 8), (unsigned long long)sample::groups(n));  // the first jump of each line
  EXPECT_EQ(far_count(together, 2 * d), 0ull);                                // no jump past the window
  const unsigned long long random = far_count(scattered, 8);
  EXPECT_GT(random, 3 * (unsigned long long)sample::groups(n) + sample::groups(n) / 2);
  EXPECT_LE(random, 4 * (unsigned long long)sample::groups(n));
  // Indices that sweep the whole source in steps shorter than the window (a transpose's order, as
  // records sorted by a key unrelated to their order): most lie far from where a gather in step
  // with its output reads, and each is a random read.
  std::vector<std::int32_t> sweep(static_cast<std::size_t>(n));
  const strata::index_t rows = 64, step = n / rows;
  for (strata::index_t i = 0; i < n; ++i) sweep[std::size_t(i)] = std::int32_t((i % rows) * step + i / rows);
  EXPECT_GT(far_count(sweep, 2 * step), sample::pairs(n) / 2);

  // The count may stop once it passes `enough` (the choice it feeds is then made): more than
  // `enough` and at most the full count, or the full count where that is not more. One block takes
  // the sample in 32 rounds, so the device stops after a few.
  strata::detail::gather_grid_cap = 1;
  const unsigned long long enough = (unsigned long long)sample::groups(n) / 4, stopped = far_count(scattered, 8, enough);
  EXPECT_GT(stopped, enough);
  EXPECT_LE(stopped, random);
#if defined(STRATA_BACKEND_CUDA)
  EXPECT_LT(stopped, random / 2);
#endif
  EXPECT_EQ(far_count(together, 8, (unsigned long long)sample::groups(n)), (unsigned long long)sample::groups(n));
  EXPECT_EQ(far_count(scattered, 8, random), random);
  strata::detail::gather_grid_cap = 0;

  // Half the indices jump far, four at a time to consecutive records: a count of every jump past
  // `near` (a quarter of the pairs) would take the records way; the columns way reads one place a
  // jump (taken on the host backend, which runs the same count). The result is right either way.
  const pin_gather_cache pin(0);
  const std::size_t m = std::size_t(strata::detail::gather_count_from) * 2 + 8;
  auto ref = random_records<mixed>(m, 47);
  std::vector<std::int32_t> idx(m);
  for (std::size_t i = 0; i < m; ++i) idx[i] = std::int32_t(i % 8 >= 2 && i % 8 < 6 ? (i + m / 2) % m : i);
  const strata::soa_vector<mixed> src(ref);
  strata::soa_vector<mixed> dst;
  strata::buffer ib(m * sizeof(std::int32_t), strata::memory_space::device);
  strata::copy_bytes(ib.data(), idx.data(), ib.bytes());
  const long columns = strata::testing::gathers_by_columns.load();
  strata::gather(src, cuda::std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(ib.data()), m), dst);
  std::vector<mixed> want(m);
  for (std::size_t i = 0; i < m; ++i) want[i] = ref[std::size_t(idx[i])];
  ASSERT_EQ(first_difference<mixed>(dst.to_host(), want), -1) << describe_difference<mixed>(dst.to_host(), want);
#if !defined(STRATA_BACKEND_CUDA)
  EXPECT_EQ(strata::testing::gathers_by_columns.load(), columns + 1);
#else
  (void)columns;
#endif

  // The transpose's order again, through gather, with a cache whose window is longer than its
  // steps and shorter than the source: the records way (a count of jumps past the window alone
  // took the columns way, 2.7x slower on the H200 for random particles sorted by cell).
  using costs = strata::detail::gather_costs<mixed, sizeof(strata::layout::aligned_record<mixed>)>;
  const std::size_t k = std::size_t(strata::detail::gather_count_from) * 2, k_step = k / 64;
  const pin_gather_cache window_of_four_steps(4 * k_step * (2 * costs::leaf_bytes + sizeof(std::int32_t)));
  auto ref2 = random_records<mixed>(k, 48);
  std::vector<std::int32_t> order(k);
  for (std::size_t i = 0; i < k; ++i) order[i] = std::int32_t((i % 64) * k_step + i / 64);
  const strata::soa_vector<mixed> src2(ref2);
  strata::buffer ob(k * sizeof(std::int32_t), strata::memory_space::device);
  strata::copy_bytes(ob.data(), order.data(), ob.bytes());
  const long records = strata::testing::gathers_by_records.load();
  strata::gather(src2, cuda::std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(ob.data()), k), dst);
  std::vector<mixed> want2(k);
  for (std::size_t i = 0; i < k; ++i) want2[i] = ref2[std::size_t(order[i])];
  ASSERT_EQ(first_difference<mixed>(dst.to_host(), want2), -1) << describe_difference<mixed>(dst.to_host(), want2);
#if !defined(STRATA_BACKEND_CUDA)
  EXPECT_EQ(strata::testing::gathers_by_records.load(), records + 1);
#else
  (void)records;
#endif
}

// Nested records permute and sort as flat ones do (whole records through the gather).
// Compaction over records of other leaf sizes and packet widths: 2-, 4- and 16-record packets, a
// 16-byte vector leaf, records whose tile outgrows the shared-memory staging (written with one
// store per leaf), and byte and 2-byte columns beside wider ones (read through shared memory on the
// GPU). The predicate reads the low bit of the first leaf's first byte.
struct low_bit_of_first_leaf {
  template <class R>
  STRATA_HD bool operator()(const R& r) const {
    unsigned char b;
    std::memcpy(&b, &strata::reflect::leaf<0>(r), 1);
    return (b & 1) != 0;
  }
};
// 19 bytes: 8-record packets, so the GPU's writing pass reads the 2-byte column through shared
// memory (8 records a thread fill a 16-byte vector) and the byte column one record at a time.
struct two_doubles_short_byte {
  BOOST_HANA_DEFINE_STRUCT(two_doubles_short_byte, (double, a), (double, b), (std::uint16_t, c), (std::uint8_t, d));
};
static_assert(strata::detail::compact_records<two_doubles_short_byte> == 8);
static_assert(strata::detail::compact_narrow_leaf<two_doubles_short_byte, 8, 2> && !strata::detail::compact_narrow_leaf<two_doubles_short_byte, 8, 3>);
static_assert(strata::detail::compact_narrow_leaf<three_bytes, strata::detail::compact_records<three_bytes>, 0>);
static_assert(!strata::detail::compact_has_narrow_leaf<big_record, strata::detail::compact_records<big_record>>);
// The writing kernel keeps three_bytes' and two_doubles_short_byte's narrow columns in shared memory
// from their loads to their last use (compact_staging::stage_in), big_record's leaves in registers.
static_assert(strata::detail::compact_staging<three_bytes>::stage_in && strata::detail::compact_staging<two_doubles_short_byte>::stage_in);
static_assert(!strata::detail::compact_staging<big_record>::stage_in);
// 14 byte columns: the input's columns and the output staging of a 2048-record tile would pass a
// block's 48 KiB of static shared memory, so the writing kernel loads these records one leaf at a
// time into registers as it does records without narrow columns.
struct fourteen_bytes {
  BOOST_HANA_DEFINE_STRUCT(fourteen_bytes, (std::array<std::uint8_t, 14>, b));
};
static_assert(strata::detail::compact_has_narrow_leaf<fourteen_bytes, strata::detail::compact_records<fourteen_bytes>>);
static_assert(strata::detail::compact_staging<fourteen_bytes>::fits && !strata::detail::compact_staging<fourteen_bytes>::stage_in);

template <class T>
class CompactionRecords : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates three of them.
#if defined(STRATA_TEST_COMPILE_CHECK)
using compaction_records = ::testing::Types<three_bytes, big_record, mixed>;
#else
using compaction_records = ::testing::Types<two_floats, three_bytes, eight_floats, floats_then_vec4, cell_record, big_record, mixed, quad,
                                            two_doubles_short_byte, fourteen_bytes>;
#endif
TYPED_TEST_SUITE(CompactionRecords, compaction_records);
TYPED_TEST(CompactionRecords, EraseCopyAndPartitionMatchStd) {
  STRATA_SEED_TRACE();
  using T = TypeParam;
  const low_bit_of_first_leaf pick{};
  // 1000 and 6161 end inside a warp's span and inside a 16-byte vector of a byte column.
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(4097), std::size_t(6161),
                        std::size_t(strata_test::under_sanitizer() ? 30011 : 300007)}) {
    SCOPED_TRACE(n);
    auto ref = random_records<T>(n, 31);
    std::vector<T> want_kept, want_rest;
    std::partition_copy(ref.begin(), ref.end(), std::back_inserter(want_kept), std::back_inserter(want_rest), pick);
    strata::soa_vector<T> v(ref), kept, rest;
    EXPECT_EQ(strata::erase_if(v, pick), want_kept.size());
    ASSERT_EQ(first_difference<T>(v.to_host(), want_rest), -1) << describe_difference<T>(v.to_host(), want_rest);
    const strata::soa_vector<T> in(ref);
    check_gather<T>(n, 25);
    EXPECT_EQ(strata::copy_if(in, kept, pick), want_kept.size());
    ASSERT_EQ(first_difference<T>(kept.to_host(), want_kept), -1);
    EXPECT_EQ(strata::partition_copy(in, kept, rest, pick), want_kept.size());
    ASSERT_EQ(first_difference<T>(kept.to_host(), want_kept), -1);
    ASSERT_EQ(first_difference<T>(rest.to_host(), want_rest), -1);
  }
}

// A record with an opaque 12-byte leaf takes no packets: partition_copy runs two selections.
struct opaque_half {
  STRATA_HD bool operator()(const with_opaque& r) const { return (r.id & 1) == 0; }
};
/// pick(i): byte i of a device array is set.
struct byte_set {
  const std::uint8_t* flags;
  STRATA_HD bool operator()(strata::index_t i) const { return flags[i] != 0; }
};

// The index selection migrate uses (one block going block by block up to 8 blocks' records; above,
// block counts, their scan, and the writing pass of the blocks that picked something), against a
// sequential loop. Sizes around the 2048-record block, a warp and the one-block limit, densities
// none / all / alternating / sparse / about half, and an offset added to every index.
TEST(Lifecycle, SelectIndicesListsPickedIndicesInOrder) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(test_seed());
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(2047), std::size_t(2048), std::size_t(2049),
                        std::size_t(6000), std::size_t(16383), std::size_t(16384), std::size_t(16385), std::size_t(100003),
                        std::size_t(1) << 20})
    for (int density : {0, 1, 2, 3, 4}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", density " + std::to_string(density));
      std::vector<std::uint8_t> flags(n);
      for (std::size_t i = 0; i < n; ++i)
        flags[i] = std::uint8_t(density == 0 ? 0 : density == 1 ? 1 : density == 2 ? i % 2 : density == 3 ? g() % 997 == 0 : g() % 2);
      const std::int64_t first = 12345;
      std::vector<std::int64_t> want;
      for (std::size_t i = 0; i < n; ++i)
        if (flags[i]) want.push_back(first + std::int64_t(i));
      strata::buffer fb(std::max<std::size_t>(n, 1), strata::memory_space::device);
      strata::copy_bytes(fb.data(), flags.data(), n);
      // One slot more than n, all preset: nothing is written past the picked ones.
      strata::buffer ob(sizeof(std::int64_t) * (n + 2), strata::memory_space::device);
      std::vector<std::int64_t> preset(n + 2, -7);
      strata::copy_bytes(ob.data(), preset.data(), ob.bytes());
      auto* out = reinterpret_cast<std::int64_t*>(ob.data());
      strata::detail::select_indices_async(byte_set{reinterpret_cast<const std::uint8_t*>(fb.data())}, strata::index_t(n), first, out + 1, out,
                                           strata::stream_t{}, "test selection");
      strata::synchronize(strata::stream_t{});
      std::vector<std::int64_t> got(n + 2);
      strata::copy_bytes(got.data(), ob.data(), ob.bytes());
      ASSERT_EQ(got[0], std::int64_t(want.size()));
      for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k + 1], want[k]) << "index " << k;
      for (std::size_t k = want.size() + 1; k < n + 2; ++k) ASSERT_EQ(got[k], -7) << "slot " << k << " written";
    }
}

// gather's columns way stores four records per access where every leaf allows vectors; a record
// with an opaque 12-byte leaf moves one record at a time (check_gather checks which ran). Records
// larger than a thread's register budget gather fewer quads at once, and in batches of leaves.
using strata_soa_mapping_of_mixed = strata::soa_view<mixed>::mapping_type;
static_assert(strata::detail::gather_quads<mixed>::applies<strata_soa_mapping_of_mixed> && strata::detail::gather_quads<mixed>::quads == 4);
static_assert(!strata::detail::gather_quads<with_opaque>::applies<strata::soa_view<with_opaque>::mapping_type>);
static_assert(strata::detail::gather_quads<cell_record>::quads == 2 && strata::detail::gather_quads<big_record>::quads == 1);
static_assert(strata::detail::gather_quads<padded128>::batches == 2);
TEST(Lifecycle, GatherRecordsWithoutVectorLeaves) {
  STRATA_SEED_TRACE();
  check_gather<with_opaque>(5003, 34);
  check_gather<with_opaque>(std::size_t(strata::detail::gather_count_from) + 77, 35);
}

// A gather whose grid is smaller than its spans: the blocks take the spans in turn from a counter
// (for_each_span), so each block moves several spans, in no fixed order. Three blocks here, over
// 4-record quads (mixed: the re-sort case and the forced columns cases of check_gather), whole
// padded records behind the count's gate (mixed, the random case at 50001, counted), and records
// moved one by one (with_opaque), with the last span partly filled; on the host backend the cap
// changes nothing and the records still have to match.
TEST(Lifecycle, GatherBlocksTakeSpansInTurn) {
  STRATA_SEED_TRACE();
  strata::detail::gather_grid_cap = 3;
  for (std::size_t n : {std::size_t(4096 * 7 + 3), std::size_t(50001)}) check_gather<mixed>(n, 41);
  check_gather<with_opaque>(1024 * 5 + 7, 42);
  strata::detail::gather_grid_cap = 0;
}

TEST(Lifecycle, PartitionCopyWithoutPackets) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(4097), std::size_t(100003)}) {
    auto ref = random_records<with_opaque>(n, 21);
    strata::soa_vector<with_opaque> in(ref), picked, others;
    EXPECT_EQ(strata::partition_copy(in, picked, others, opaque_half{}), std::size_t(std::count_if(ref.begin(), ref.end(), opaque_half{})));
    std::vector<with_opaque> want_picked, want_rest;
    std::partition_copy(ref.begin(), ref.end(), std::back_inserter(want_picked), std::back_inserter(want_rest), opaque_half{});
    ASSERT_EQ(first_difference<with_opaque>(picked.to_host(), want_picked), -1) << n;
    ASSERT_EQ(first_difference<with_opaque>(others.to_host(), want_rest), -1) << n;
  }
}

TEST(Lifecycle, NestedRecordsSortWhole) {
  STRATA_SEED_TRACE();
  auto ref = random_records<big_record>(5003);
  strata::soa_vector<big_record> v(ref);
  strata::sort_by(v, id_bucket{});
  strata::synchronize(strata::stream_t{});
  auto want = ref;
  std::stable_sort(want.begin(), want.end(), [](const big_record& a, const big_record& b) { return id_bucket{}(a) < id_bucket{}(b); });
  EXPECT_EQ(first_difference<big_record>(v.to_host(), want), -1) << describe_difference<big_record>(v.to_host(), want);
  check_gather<big_record>(5003, 23);
  check_gather<big_record>(std::size_t(strata::detail::gather_count_from) + 77, 24);
}

// Records whose padded size is 128 bytes: permute's and gather's transpose tiles swizzle their
// shared memory (convert/transpose.hpp), on both the way to the padded records and back.
static_assert(strata::detail::warp_tile<padded128, sizeof(strata::layout::aligned_record<padded128>)>::swizzle);
TEST(Lifecycle, SwizzledTileRecordsPermuteAndGather) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(1), std::size_t(63), std::size_t(5003)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::mt19937_64 g(test_seed() ^ n);
    ASSERT_NO_FATAL_FAILURE(check_random_permute(random_records<padded128>(n, 27), g));
  }
  check_gather<padded128>(5003, 28);
  check_gather<padded128>(std::size_t(strata::detail::gather_count_from) + 77, 29);
}

// Records whose tiles' columns share the lanes among leaves of one type (leaf_groups; runs of
// doubles, floats, int16 and bytes): permute and gather move them whole.
static_assert(strata::detail::leaf_groups<mixed80, strata::detail::warp_tile<mixed80, sizeof(strata::layout::aligned_record<mixed80>)>::records>::count <
              strata::reflect::leaf_count<mixed80>);
TEST(Lifecycle, GroupedTileRecordsPermuteAndGather) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(1), std::size_t(127), std::size_t(5003)}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::mt19937_64 g(test_seed() ^ n);
    ASSERT_NO_FATAL_FAILURE(check_random_permute(random_records<mixed80>(n, 30), g));
  }
  check_gather<mixed80>(5003, 32);
  check_gather<mixed80>(std::size_t(strata::detail::gather_count_from) + 77, 33);
}

// After a warm-up round, a step's lifecycle operations take all their scratch from the pool: no
// cudaMalloc, no pool growth.
TEST(Lifecycle, StreamScratchHandsBlocksOutAgainOnItsStream) {
  using strata::detail::scratch_block;
  using strata::detail::stream_scratch;
  for (std::size_t b : {std::size_t(1), std::size_t(256), std::size_t(257), std::size_t(1000), std::size_t(4097), std::size_t(123456789)}) {
    const std::size_t c = stream_scratch::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_LE(c, std::max<std::size_t>(256, b + b / 4 + 1)) << b;
    EXPECT_EQ(c % 64, 0u);
  }
  const strata::stream_t st{};
  const long live = strata::testing::live_allocations.load();
  {
    stream_scratch cache(st);
    const long ordinal = strata::testing::allocation_ordinal.load();
    void* first = nullptr;
    { scratch_block b(1000, st, cache); first = b.data(); }
    { scratch_block b(900, st, cache); EXPECT_EQ(b.data(), first) << "a block of the same size class is reused"; }
    EXPECT_EQ(strata::testing::allocation_ordinal.load() - ordinal, 1);
    {
      scratch_block small(200, st, cache);  // the listed block is more than twice a miss's size (256): a new one
      EXPECT_NE(small.data(), first);
      scratch_block both(1000, st, cache);
      EXPECT_EQ(both.data(), first);
      scratch_block again(1000, st, cache);  // the one listed block is taken: a new one
      EXPECT_NE(again.data(), first);
    }
    EXPECT_EQ(strata::testing::allocation_ordinal.load() - ordinal, 3);
    EXPECT_EQ(cache.listed_blocks(), 3u);
    {
      std::vector<std::unique_ptr<scratch_block>> many;
      for (int i = 0; i < 40; ++i) many.push_back(std::make_unique<scratch_block>(std::size_t(5000 + 100 * i), st, cache));
    }
    EXPECT_EQ(cache.listed_blocks(), stream_scratch::max_listed) << "the oldest listed blocks go back";
#if defined(STRATA_BACKEND_CUDA)
    cudaStream_t other = nullptr;
    ASSERT_EQ(cudaStreamCreate(&other), cudaSuccess);
    EXPECT_THROW(scratch_block(64, other, cache), std::logic_error);
    cudaStreamDestroy(other);
#endif
    cache.release();
    EXPECT_EQ(cache.listed_blocks(), 0u);
    { scratch_block b(1000, st, cache); }
  }
  strata::synchronize(st);
  EXPECT_EQ(strata::testing::live_allocations.load(), live) << "every block went back to the resource";
}

#if defined(STRATA_BACKEND_CUDA)
/// Forwards to the default resource and notes the device current at each free.
struct device_noting_resource final : strata::scratch_resource {
  std::vector<int> freed_on;
  void* allocate(std::size_t bytes, strata::stream_t s) override { return strata::detail::default_scratch_resource().allocate(bytes, s); }
  void deallocate(void* p, std::size_t bytes, strata::stream_t s) noexcept override {
    int dev = -1;
    (void)cudaGetDevice(&dev);
    freed_on.push_back(dev);
    strata::detail::default_scratch_resource().deallocate(p, bytes, s);
  }
};

// A cache made for device 1's stream gives its blocks back with device 1 current, whichever device
// is current when it is released or destroyed (a resource may free into the current device's pool).
TEST(Lifecycle, StreamScratchGivesBlocksBackOnItsOwnDevice) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "needs two GPUs";
  using strata::detail::scratch_block;
  using strata::detail::stream_scratch;
  device_noting_resource noting;
  strata::scratch_resource* before = strata::set_scratch_resource(&noting);
  const long live = strata::testing::live_allocations.load();
  cudaStream_t s1 = nullptr;
  {
    strata::detail::device_guard g(1);
    ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
  }
  {
    std::unique_ptr<stream_scratch> cache;
    {
      strata::detail::device_guard g(1);
      cache = std::make_unique<stream_scratch>(s1);
      { scratch_block a(4096, s1, *cache); }
      scratch_block b(100000, s1, *cache);
      scratch_block c(4096, s1, *cache);
    }
    EXPECT_EQ(strata::detail::current_device(), 0);
    EXPECT_EQ(cache->listed_blocks(), 2u);
    EXPECT_EQ(cache->listed_bytes(), stream_scratch::size_class(4096) + stream_scratch::size_class(100000));
    cache->release();
    EXPECT_EQ(cache->listed_bytes(), 0u);
    {
      strata::detail::device_guard g(1);
      { scratch_block d(5000, s1, *cache); }
    }
    cache.reset();  // device 0 current
    EXPECT_EQ(strata::detail::current_device(), 0) << "the caller's device stays current";
  }
  {
    strata::detail::device_guard g(1);
    EXPECT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s1), cudaSuccess);
  }
  strata::set_scratch_resource(before);
  EXPECT_EQ(noting.freed_on, std::vector<int>({1, 1, 1}));
  EXPECT_EQ(strata::testing::live_allocations.load(), live);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif

TEST(Lifecycle, HotLoopMakesNoDriverAllocations) {
  STRATA_SEED_TRACE();
  auto ref = random_records<mixed>(200000, 9);
  strata::soa_vector<mixed> v(ref);
  v.reserve(v.size() + 1000);
  auto step = [&] {
    (void)strata::erase_if(v, odd_cell{});
    strata::sort_by(v, cell_key{});
    (void)strata::transform_reduce(v, x_of{}, 0.0, plus_d{});
    v.resize(ref.size());
  };
  step();
  const long before = strata::testing::driver_allocations.load();
  for (int i = 0; i < 20; ++i) step();
  EXPECT_EQ(strata::testing::driver_allocations.load(), before);
}

// The predicate of a compaction is asked twice per record on the GPU (counting pass, writing pass).
// One that answers differently the second time is reported instead of leaving a wrong compaction
// unnoticed; the input is untouched (copy_if) and later CUDA work in the process runs.
struct first_calls_only {  // true for the first `n` calls in all, false after: not a function of the record
  unsigned long long* calls;
  unsigned long long n;
  STRATA_HD bool operator()(const particle&) const {
#if defined(__CUDA_ARCH__)
    return atomicAdd(calls, 1ull) < n;
#else
    return false;
#endif
  }
};
struct keep_particle {
  STRATA_HD bool operator()(const particle&) const { return true; }
};
TEST(Lifecycle, PredicateThatChangesItsAnswerIsReported) {
#if !defined(STRATA_BACKEND_CUDA)
  GTEST_SKIP() << "the host backend asks the predicate once per record";
#else
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(100003, 17);
  const strata::soa_vector<particle> in(ref);
  strata::soa_vector<particle> out;
  strata::buffer calls(sizeof(unsigned long long), strata::memory_space::device);
  const unsigned long long zero = 0;
  strata::copy_bytes(calls.data(), &zero, sizeof zero);
  EXPECT_THROW((void)strata::copy_if(in, out, first_calls_only{reinterpret_cast<unsigned long long*>(calls.data()), ref.size()}),
               std::logic_error);
  EXPECT_EQ(first_difference<particle>(in.to_host(), ref), -1);
  strata::soa_vector<particle> again;
  EXPECT_EQ(strata::copy_if(in, again, keep_particle{}), ref.size());
  EXPECT_EQ(first_difference<particle>(again.to_host(), ref), -1);
#endif
}

// The reverse: every record refused by the counting pass and kept by the writing pass. Each tile
// then finds more kept records than its place in the output holds; it must write none of them
// (before, its records went below the output's first element: compute-sanitizer's memcheck saw
// invalid writes before the allocation). In place and out of place, with a rest output too; the
// outputs of the refused out-of-place calls are left empty, erase_if's container keeps its size and
// holds only its own records.
struct after_first_calls {  // false for the first `n` calls in all, true after
  unsigned long long* calls;
  unsigned long long n;
  STRATA_HD bool operator()(const particle&) const {
#if defined(__CUDA_ARCH__)
    return atomicAdd(calls, 1ull) >= n;
#else
    return false;
#endif
  }
};
TEST(Lifecycle, PredicateThatKeepsMoreTheSecondTimeWritesNothingOutside) {
#if !defined(STRATA_BACKEND_CUDA)
  GTEST_SKIP() << "the host backend asks the predicate once per record";
#else
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(100003, 19);
  strata::buffer calls(sizeof(unsigned long long), strata::memory_space::device);
  auto reset = [&] {
    const unsigned long long zero = 0;
    strata::copy_bytes(calls.data(), &zero, sizeof zero);
  };
  const after_first_calls pred{reinterpret_cast<unsigned long long*>(calls.data()), ref.size()};
  const strata::soa_vector<particle> in(ref);
  strata::soa_vector<particle> out(std::vector<particle>(ref.begin(), ref.begin() + 10)), rest;
  reset();
  EXPECT_THROW((void)strata::copy_if(in, out, pred), std::logic_error);
  EXPECT_EQ(out.size(), 0u);
  reset();
  EXPECT_THROW((void)strata::partition_copy(in, out, rest, pred), std::logic_error);
  EXPECT_EQ(out.size(), 0u);
  EXPECT_EQ(rest.size(), 0u);
  EXPECT_EQ(first_difference<particle>(in.to_host(), ref), -1);
  strata::soa_vector<particle> v(ref);
  reset();
  EXPECT_THROW((void)strata::erase_if(v, pred), std::logic_error);
  ASSERT_EQ(v.size(), ref.size());
  auto key = [](const particle& p) { return std::tuple(p.x, p.y, p.z, p.vx, p.vy, p.vz, p.mass); };
  std::set<decltype(key(ref[0]))> own;
  for (const auto& p : ref) own.insert(key(p));
  for (const auto& p : v.to_host()) ASSERT_TRUE(own.count(key(p))) << "erase_if left a record that was never in the container";
  strata::soa_vector<particle> again;
  EXPECT_EQ(strata::copy_if(in, again, keep_particle{}), ref.size());
  EXPECT_EQ(first_difference<particle>(again.to_host(), ref), -1);
#endif
}

// In place, a tile writes over the input of earlier tiles only once they have read it. Here the
// first tile's records are all removed and its predicate calls stall (about 0.2 ms on the GPU),
// while every later record is kept: the next tiles' output is the first tile's input, so they find
// it unread and wait for it. The result must still be the stable compaction.
struct removed_slowly {
  STRATA_HD bool operator()(const particle& p) const {
    const bool marked = p.mass == -1234.5f;
#if defined(__CUDA_ARCH__)
    if (marked)
      for (int i = 0; i < 200; ++i) __nanosleep(1000);
#endif
    return marked;
  }
};
TEST(Lifecycle, EraseIfWaitsForASlowTileUnderItsOutput) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(200003, 23);
  for (std::size_t i = 0; i < 3000; ++i) ref[i].mass = -1234.5f;
  for (std::size_t i = 3000; i < ref.size(); ++i)
    if (ref[i].mass == -1234.5f) ref[i].mass = 0;
  strata::soa_vector<particle> v(ref);
  const removed_slowly pred{};
  auto want = ref;
  want.erase(std::remove_if(want.begin(), want.end(), pred), want.end());
  EXPECT_EQ(strata::erase_if(v, pred), std::size_t(3000));
  ASSERT_EQ(first_difference<particle>(v.to_host(), want), -1) << describe_difference<particle>(v.to_host(), want);
}
