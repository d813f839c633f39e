// SPDX-License-Identifier: Apache-2.0
#include <strata/io/arrow.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

using namespace strata_test;
namespace io = strata::io;
namespace arrow = strata::io::arrow;
using strata::memory_space;

namespace {

bool bit(const void* bits, std::size_t i) { return (static_cast<const unsigned char*>(bits)[i / 8] >> (i % 8)) & 1u; }

/// Checks one exported node against the field it should be: name, format, flags, lengths, children,
/// and every value of a leaf against the source records (value k of record i is leaf
/// columns[k] of ref[i]). Returns the number of values checked.
template <class T>
std::size_t check_node(const arrow::field& e, const ArrowSchema& s, const ArrowArray& a, std::size_t length, const std::vector<T>& ref,
                       const std::string& path) {
  SCOPED_TRACE("field '" + path + "'");
  EXPECT_NE(s.release, nullptr);
  EXPECT_NE(a.release, nullptr);
  EXPECT_STREQ(s.format, e.format.c_str());
  EXPECT_STREQ(s.name, e.name.c_str());
  EXPECT_EQ(s.flags, 0);  // not nullable
  EXPECT_EQ(a.length, std::int64_t(length));
  EXPECT_EQ(a.null_count, 0);
  EXPECT_EQ(a.offset, 0);
  EXPECT_EQ(s.n_children, std::int64_t(e.children.size()));
  EXPECT_EQ(a.n_children, std::int64_t(e.children.size()));
  if (std::strcmp(s.format, e.format.c_str()) != 0 || s.n_children != a.n_children || a.n_children != std::int64_t(e.children.size())) return 0;
  if (!e.is_leaf()) {
    EXPECT_EQ(a.n_buffers, 1);
    EXPECT_EQ(a.buffers[0], nullptr);
    std::size_t checked = 0;
    const std::size_t child_length = e.is_list() ? length * e.list_size : length;
    for (std::size_t c = 0; c < e.children.size(); ++c)
      checked += check_node(e.children[c], *s.children[c], *a.children[c], child_length, ref, path + (e.is_list() ? "[]" : "." + e.children[c].name));
    return checked;
  }
  EXPECT_EQ(a.n_buffers, 2);
  EXPECT_EQ(a.buffers[0], nullptr);  // no validity bitmap: no nulls
  const std::size_t k = e.columns.size(), n = ref.size();
  EXPECT_EQ(length, n * k);
  if (n == 0) return 0;
  const auto* data = static_cast<const unsigned char*>(a.buffers[1]);
  EXPECT_NE(data, nullptr);
  if (!data || a.n_buffers != 2) return 0;
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t c = 0; c < k; ++c) {
    const std::size_t at = io::detail::leaf_offsets<T>[e.columns[c]];
    EXPECT_EQ(strata::reflect::leaf_sizes<T>[e.columns[c]], e.bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const auto* want = reinterpret_cast<const unsigned char*>(&ref[i]) + at;
      const std::size_t v = i * k + c;
      const bool same = e.boolean ? bit(data, v) == (*want != 0) : std::memcmp(data + v * e.bytes, want, e.bytes) == 0;
      if (!same && wrong++ == 0) first = "value " + std::to_string(v) + " (record " + std::to_string(i) + ", element " + std::to_string(c) + ")";
    }
  }
  EXPECT_EQ(wrong, 0u) << "first wrong: " << first;
  return n * k;
}

/// The whole batch: a struct of the record's members, every leaf of every record checked once.
template <class T>
void check_batch(const arrow::exported& x, const std::vector<T>& ref, const io::arrow_options& o = {}) {
  const arrow::field root = io::arrow_schema_of<T>(o);
  ASSERT_STREQ(x.schema.format, "+s");
  EXPECT_EQ(x.schema.n_children, std::int64_t(strata::reflect::field_count<T>));
  EXPECT_EQ(check_node(root, x.schema, x.array, ref.size(), ref, "<record>"), ref.size() * strata::reflect::leaf_count<T>);
  const auto meta = arrow::decode_metadata(x.schema.metadata, "the schema");
  ASSERT_EQ(meta.size(), 3u);
  EXPECT_EQ(meta[0].first, "strata.record");
  EXPECT_EQ(meta[0].second, strata::detail::type_name<T>());
  EXPECT_EQ(meta[2].first, "strata.schema");
  EXPECT_NE(meta[2].second.find("\"name\": \"" + std::string(strata::reflect::leaf_name<T, 0>()) + "\""), std::string::npos) << meta[2].second;
}

template <class C>
void expect_records(const C& got, const std::vector<typename C::value_type>& want) {
  const auto host = got.to_host();
  ASSERT_EQ(host.size(), want.size());
  EXPECT_EQ(first_difference<typename C::value_type>(host, want), -1) << describe_difference<typename C::value_type>(host, want);
}

template <class T>
void expect_round_trip(const arrow::exported& x, const std::vector<T>& ref) {
  expect_records(io::from_arrow<strata::soa_vector<T>>(x.schema, x.array), ref);
  expect_records(io::from_arrow<strata::host_aos_vector<T>>(x.schema, x.array), ref);
  expect_records(io::from_arrow<strata::host_aosoa_vector<T>>(x.schema, x.array), ref);
}

/// Whether a leaf has an array of its own whose values can be the container's column (one column,
/// not a bool).
bool shareable(const arrow::field& f) { return f.is_leaf() && f.columns.size() == 1 && !f.boolean; }
std::size_t leaves_where(const arrow::field& f, bool (*pred)(const arrow::field&)) {
  if (f.is_leaf()) return pred(f) ? 1 : 0;
  std::size_t n = 0;
  for (const auto& c : f.children) n += leaves_where(c, pred);
  return n;
}

/// Every leaf array that should point into the SoA container does, at its column.
template <class T, class C>
void expect_shared_columns(const arrow::field& e, const ArrowArray& a, const C& c) {
  if (!e.is_leaf()) {
    for (std::size_t k = 0; k < e.children.size(); ++k) expect_shared_columns<T>(e.children[k], *a.children[k], c);
    return;
  }
  if (c.empty()) return;  // no values: no buffers
  const std::byte* column = io::detail::storage_base(c) + C::mapping_type::leaf_offset(c.capacity(), 0, e.columns[0]);
  if (shareable(e)) EXPECT_EQ(a.buffers[1], column) << "leaf " << strata::reflect::leaf_names<T>[e.columns[0]];
  else EXPECT_NE(a.buffers[1], column);
}

// ---- every record, every layout -------------------------------------------------------------------

template <class T>
class ArrowExport : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates three of them.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Records = ::testing::Types<nested_particle, with_opaque, with_bools>;
#else
using Records = ::testing::Types<particle, mixed, three_bytes, nested_particle, cell_record, big_record, with_opaque, mixed_convert, wide64, with_bools>;
#endif
TYPED_TEST_SUITE(ArrowExport, Records);

TYPED_TEST(ArrowExport, EveryLayoutExportsEveryLeafAndReadsBack) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(17)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto ref = random_records<T>(n, 5);
    const arrow::field root = io::arrow_schema_of<T>();
    const std::size_t own = leaves_where(root, shareable), leaves = leaves_where(root, [](const arrow::field&) { return true; });
    {
      SCOPED_TRACE("host soa");
      strata::host_soa_vector<T> c(ref);
      arrow::exported x = io::to_arrow(c);
      check_batch(x, ref);
      expect_shared_columns<T>(root, x.array, c);
      EXPECT_EQ(x.shared_leaves, own);
      EXPECT_EQ(x.copied_leaves, leaves - own);
      EXPECT_EQ(x.path, own == leaves ? io::export_path::shared : own == 0 ? io::export_path::copied : io::export_path::partly_shared);
      expect_round_trip(x, ref);
    }
    for (auto mode : {0, 1, 2, 3}) {
      SCOPED_TRACE("layout " + std::to_string(mode));
      arrow::exported x = mode == 0   ? io::to_arrow(strata::host_aos_vector<T>(ref))
                          : mode == 1 ? io::to_arrow(strata::host_aosoa_vector<T>(ref))
                          : mode == 2 ? io::to_arrow(strata::soa_vector<T>(ref))  // device memory on the CUDA backend
                                      : io::to_arrow(strata::aos_vector<T>(ref));
      check_batch(x, ref);
      EXPECT_EQ(x.path, io::export_path::copied);
      EXPECT_EQ(x.shared_leaves, 0u);
      EXPECT_EQ(x.copied_leaves, leaves);
      expect_round_trip(x, ref);
    }
    {
      SCOPED_TRACE("arrays as structs of their elements");
      io::arrow_options o;
      o.arrays = io::arrow_options::array_form::struct_of_elements;
      strata::host_soa_vector<T> c(ref);
      arrow::exported x = io::to_arrow(c, o);
      const arrow::field st = io::arrow_schema_of<T>(o);
      check_batch(x, ref, o);
      expect_shared_columns<T>(st, x.array, c);
      EXPECT_EQ(leaves_where(st, [](const arrow::field& f) { return f.columns.size() == 1; }), strata::reflect::leaf_count<T>);
      expect_round_trip(x, ref);  // the import takes either form of an array
    }
  }
}

TEST(Arrow, AMillionRecordsShareTheirColumns) {
  STRATA_SEED_TRACE();
  const std::size_t n = 1000000;
  const auto ref = random_records<with_bools>(n, 11);
  strata::host_soa_vector<with_bools> c(ref);
  arrow::exported x = io::to_arrow(c);
  check_batch(x, ref);
  expect_shared_columns<with_bools>(io::arrow_schema_of<with_bools>(), x.array, c);
  EXPECT_EQ(x.path, io::export_path::partly_shared);  // the bools are bit-packed, mask is a list
  expect_records(io::from_arrow<strata::host_aos_vector<with_bools>>(x.schema, x.array), ref);
  const auto cells = random_records<cell_record>(n, 12);
  arrow::exported y = io::to_arrow(strata::aosoa_vector<cell_record>(cells));
  check_batch(y, cells);
  expect_records(io::from_arrow<strata::soa_vector<cell_record>>(y.schema, y.array), cells);
}

// ---- types ---------------------------------------------------------------------------------------

struct sixteen_byte_leaves {
  BOOST_HANA_DEFINE_STRUCT(sixteen_byte_leaves, (unsigned __int128, big), (strata::half, h), (strata::bfloat16, b), (std::int64_t, l),
                           (std::uint32_t, u), (std::array<strata::half, 2>, hh), (bool, flag));
};

TEST(Arrow, FormatsNameEachLeafType) {
  const arrow::field f = io::arrow_schema_of<cell_record>();
  ASSERT_EQ(f.children.size(), 5u);
  EXPECT_EQ(f.children[0].name, "w");
  EXPECT_EQ(f.children[0].format, "+w:3");
  EXPECT_EQ(f.children[0].children[0].name, "item");
  EXPECT_EQ(f.children[0].children[0].format, "g");
  EXPECT_EQ(f.children[1].format, "+s");  // the vector type: a struct of x, y, z
  ASSERT_EQ(f.children[1].children.size(), 3u);
  EXPECT_EQ(f.children[1].children[2].name, "z");
  EXPECT_EQ(f.children[1].children[2].format, "f");
  EXPECT_EQ(f.children[2].format, "s");
  EXPECT_EQ(f.children[3].format, "C");
  EXPECT_EQ(f.children[4].format, "+w:2");
  const arrow::field w = io::arrow_schema_of<sixteen_byte_leaves>();
  EXPECT_EQ(w.children[0].format, "w:16");
  EXPECT_NE(arrow::metadata_value(w.children[0], "strata.type").find("opaque16"), std::string_view::npos);
  EXPECT_EQ(w.children[1].format, "e");
  EXPECT_EQ(w.children[2].format, "S");
  EXPECT_EQ(arrow::metadata_value(w.children[2], "strata.type"), "bfloat16");
  EXPECT_EQ(w.children[3].format, "l");
  EXPECT_EQ(w.children[4].format, "I");
  EXPECT_EQ(w.children[6].format, "b");
  const arrow::field q = io::arrow_schema_of<wide64>().children[2];  // std::array<quad, 6>: a list of structs
  EXPECT_EQ(q.format, "+w:6");
  EXPECT_EQ(q.children[0].format, "+s");
  EXPECT_EQ(q.children[0].children[3].format, "C");
}

TEST(Arrow, SixteenByteAndSixteenBitLeavesRoundTrip) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(17), std::size_t(999)}) {
    const auto ref = random_records<sixteen_byte_leaves>(n, 3);
    strata::host_soa_vector<sixteen_byte_leaves> c(ref);
    arrow::exported x = io::to_arrow(c);
    check_batch(x, ref);
    expect_round_trip(x, ref);
    // The field metadata says what the uint16 and the 16 bytes hold.
    const auto meta = arrow::decode_metadata(x.schema.children[2]->metadata, "b");
    ASSERT_EQ(meta.size(), 1u);
    EXPECT_EQ(meta[0], (std::pair<std::string, std::string>{"strata.type", "bfloat16"}));
  }
}

// ---- ownership -----------------------------------------------------------------------------------

TEST(Arrow, ReleaseFreesEverythingAndChildrenMayBeMovedOut) {
  const auto ref = random_records<big_record>(100, 1);
  const long before = strata::testing::live_allocations.load();
  {
    strata::host_soa_vector<big_record> c(ref);
    ArrowSchema s{};
    ArrowArray a{};
    {
      arrow::exported x = io::to_arrow(c);
      x.release_into(&s, &a);
      EXPECT_EQ(x.schema.release, nullptr);
      EXPECT_EQ(x.array.release, nullptr);
    }  // x no longer owns them: nothing is released here
    ASSERT_NE(a.release, nullptr);
    // A consumer keeps only child 1 (d, the double2 struct): moves it out, releases the parent.
    ArrowArray kept = *a.children[1];
    a.children[1]->release = nullptr;
    ArrowSchema kept_schema = *s.children[1];
    s.children[1]->release = nullptr;
    a.release(&a);
    s.release(&s);
    EXPECT_EQ(a.release, nullptr);
    EXPECT_EQ(s.release, nullptr);
    // The child still reads the container's memory, after the container is gone too.
    c = strata::host_soa_vector<big_record>();
    ASSERT_EQ(kept.n_children, 2);
    EXPECT_STREQ(kept_schema.children[1]->name, "y");
    const auto* y = static_cast<const double*>(kept.children[1]->buffers[1]);
    for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(y[i], ref[i].d.y) << i;
    EXPECT_GT(strata::testing::live_allocations.load(), before);  // the container's allocation, held by the child
    kept.release(&kept);
    kept_schema.release(&kept_schema);
    EXPECT_EQ(kept.release, nullptr);
  }
  EXPECT_EQ(strata::testing::live_allocations.load(), before);
  {  // copies (bools, lists, an AoS gather) are freed with the last array too
    arrow::exported x = io::to_arrow(strata::host_aos_vector<with_bools>(random_records<with_bools>(50)));
    EXPECT_GT(strata::testing::live_allocations.load(), before);
  }
  EXPECT_EQ(strata::testing::live_allocations.load(), before);
}

TEST(Arrow, CopyAskedForDoesNotShare) {
  const auto ref = random_records<particle>(40, 2);
  strata::host_soa_vector<particle> c(ref);
  io::arrow_options o;
  o.copy = true;
  arrow::exported x = io::to_arrow(c, o);
  EXPECT_EQ(x.path, io::export_path::copied);
  c.view().template column<0>()[3] = 1234.5f;  // a write after the export does not show
  check_batch(x, ref);
  arrow::exported shared = io::to_arrow(c);
  EXPECT_EQ(static_cast<const float*>(shared.array.children[0]->buffers[1])[3], 1234.5f);  // shared: it shows
}

TEST(Arrow, AFailedAllocationLeaksNothing) {
  const auto ref = random_records<wide64>(30, 4);
  strata::host_aos_vector<wide64> c(ref);
  const long before = strata::testing::live_allocations.load();
  int failures = 0;
  for (long k = 0; k < 200; ++k) {
    const long start = strata::testing::allocation_ordinal.load();
    static long target;  // a hook is a plain function pointer: the ordinal to fail lives here
    target = start + k;
    strata::testing::fail_allocation_if = [](long ordinal, std::size_t, memory_space) { return ordinal == target; };
    bool threw = false;
    try {
      arrow::exported x = io::to_arrow(c);
    } catch (const strata::out_of_memory&) {
      threw = true, ++failures;
    }
    strata::testing::fail_allocation_if = nullptr;
    EXPECT_EQ(strata::testing::live_allocations.load(), before) << "allocation " << k;
    if (!threw) break;  // past the last allocation the export makes
  }
  EXPECT_GT(failures, 50);  // one per gathered leaf and more
}

// ---- import: what is refused ----------------------------------------------------------------------

struct renamed_particle {
  BOOST_HANA_DEFINE_STRUCT(renamed_particle, (vec3, pos), (vec3, vel), (float, weight));
};
struct double_particle {
  BOOST_HANA_DEFINE_STRUCT(double_particle, (vec3, pos), (vec3, vel), (double, mass));
};
struct short_cells {
  BOOST_HANA_DEFINE_STRUCT(short_cells, (std::array<double, 2>, w));
};

TEST(ArrowImport, MismatchesNameTheFieldAndLeaveTheDestination) {
  const auto ref = random_records<nested_particle>(20, 6);
  arrow::exported x = io::to_arrow(strata::host_soa_vector<nested_particle>(ref));
  const auto keep = random_records<renamed_particle>(3, 7);
  strata::soa_vector<renamed_particle> dst(keep);
  std::string msg = what_of([&] { io::from_arrow(x.schema, x.array, dst); });
  EXPECT_NE(msg.find("has no field 'weight' (its fields: pos, vel, mass)"), std::string::npos) << msg;
  expect_records(dst, keep);

  strata::aos_vector<double_particle> d2(2);
  msg = what_of([&] { io::from_arrow(x.schema, x.array, d2); });
  EXPECT_NE(msg.find("field 'mass' of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is float32 ('f') where the record has float64 ('g')"), std::string::npos) << msg;
  EXPECT_EQ(d2.size(), 2u);

  arrow::exported c = io::to_arrow(strata::host_soa_vector<cell_record>(random_records<cell_record>(5)));
  strata::soa_vector<short_cells> d3(1);
  msg = what_of([&] { io::from_arrow(c.schema, c.array, d3); });
  EXPECT_NE(msg.find("field 'w' of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fixed-size list of 3 ('+w:3') where the record has fixed-size list of 2 ('+w:2')"), std::string::npos) << msg;
  EXPECT_EQ(d3.size(), 1u);

  // A bfloat16 leaf needs the metadata that says the uint16 holds one.
  arrow::exported b = io::to_arrow(strata::host_soa_vector<sixteen_byte_leaves>(random_records<sixteen_byte_leaves>(4)));
  const char* saved = b.schema.children[2]->metadata;
  b.schema.children[2]->metadata = nullptr;
  strata::soa_vector<sixteen_byte_leaves> d4(1);
  msg = what_of([&] { io::from_arrow(b.schema, b.array, d4); });
  EXPECT_NE(msg.find("field 'b' of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("without strata.type; the record's leaf is strata.type 'bfloat16'"), std::string::npos) << msg;
  b.schema.children[2]->metadata = saved;
  EXPECT_EQ(d4.size(), 1u);
}

TEST(ArrowImport, NullsShortChildrenAndOffsets) {
  const auto ref = random_records<nested_particle>(30, 8);
  arrow::exported x = io::to_arrow(strata::host_soa_vector<nested_particle>(ref));
  strata::soa_vector<nested_particle> dst(2);
  // nulls counted
  ArrowArray& y = *x.array.children[0]->children[1];  // pos.y
  y.null_count = 2;
  std::string msg = what_of([&] { io::from_arrow(x.schema, x.array, dst); });
  EXPECT_NE(msg.find("field 'pos.y' of the record batch read into"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds 2 nulls; strata's records have no nulls"), std::string::npos) << msg;
  // nulls not counted (-1), found in a validity bitmap
  std::vector<unsigned char> valid(4, 0xff);
  valid[1] &= ~(1u << 3);  // value 11
  const void* saved = y.buffers[0];
  y.null_count = -1;
  y.buffers[0] = valid.data();
  msg = what_of([&] { io::from_arrow(x.schema, x.array, dst); });
  EXPECT_NE(msg.find("holds a null at value 11"), std::string::npos) << msg;
  valid[1] = 0xff;  // a bitmap without a null, count unknown: read
  expect_records(io::from_arrow<strata::soa_vector<nested_particle>>(x.schema, x.array), ref);
  y.buffers[0] = saved;
  y.null_count = 0;
  EXPECT_EQ(dst.size(), 2u);
  // a child shorter than its parent
  x.array.children[2]->length = 29;
  msg = what_of([&] { io::from_arrow(x.schema, x.array, dst); });
  EXPECT_NE(msg.find("field 'mass' of the record batch read into"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds 29 values where 30 are needed"), std::string::npos) << msg;
  x.array.children[2]->length = 30;
  EXPECT_EQ(dst.size(), 2u);
  // a slice: the parent's offset, and a child's own offset on top of it
  x.array.offset = 5;
  x.array.length = 20;
  expect_records(io::from_arrow<strata::aos_vector<nested_particle>>(x.schema, x.array), std::vector<nested_particle>(ref.begin() + 5, ref.begin() + 25));
  x.array.children[2]->offset = 3;
  x.array.children[2]->length = 27;
  const auto sliced = io::from_arrow<strata::host_soa_vector<nested_particle>>(x.schema, x.array).to_host();
  for (std::size_t i = 0; i < 20; ++i) {
    ASSERT_EQ(sliced[i].mass, ref[i + 8].mass) << i;
    ASSERT_EQ(sliced[i].pos.x, ref[i + 5].pos.x) << i;
  }
  x.array.children[2]->length = 24;  // the parent's offset 5 + 20 values: 25 needed (its own offset 3 comes on top)
  msg = what_of([&] { io::from_arrow(x.schema, x.array, dst); });
  EXPECT_NE(msg.find("holds 24 values where 25 are needed"), std::string::npos) << msg;
  EXPECT_EQ(dst.size(), 2u);
}

TEST(ArrowImport, SlicedListsAndBools) {
  const auto ref = random_records<with_bools>(40, 9);
  arrow::exported x = io::to_arrow(strata::host_aos_vector<with_bools>(ref));
  x.array.offset = 7;
  x.array.length = 33;
  expect_records(io::from_arrow<strata::soa_vector<with_bools>>(x.schema, x.array), std::vector<with_bools>(ref.begin() + 7, ref.end()));
}

TEST(ArrowImport, NotARecordBatch) {
  const auto ref = random_records<particle>(3);
  arrow::exported x = io::to_arrow(strata::host_soa_vector<particle>(ref));
  strata::soa_vector<particle> dst;
  // a child array (float32), not a struct
  std::string msg = what_of([&] { io::from_arrow(*x.schema.children[0], *x.array.children[0], dst); });
  EXPECT_NE(msg.find("a record batch is a struct array ('+s'); this one is float32 ('f')"), std::string::npos) << msg;
  ArrowSchema released{};
  msg = what_of([&] { io::from_arrow(released, x.array, dst); });
  EXPECT_NE(msg.find("already released"), std::string::npos) << msg;
}

}  // namespace
