// SPDX-License-Identifier: Apache-2.0
#include <strata/io/hdf5.hpp>
#include <strata/io/openpmd.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_vector.hpp>

#include "common/records.hpp"
#include "common/temp_path.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

using namespace strata_test;
namespace io = strata::io;
using strata::memory_space;

namespace {

using strata_test::temp_path;


template <class C>
void expect_records(const C& got, const std::vector<typename C::value_type>& want) {
  const auto host = got.to_host();
  ASSERT_EQ(host.size(), want.size());
  EXPECT_EQ(first_difference<typename C::value_type>(host, want), -1) << describe_difference<typename C::value_type>(host, want);
}

// ---- round trips ---------------------------------------------------------------------------------

template <class T>
class Hdf5RoundTrip : public ::testing::Test {};
// A compile-only build (STRATA_TEST_COMPILE_CHECK: CI's CUDA stage) instantiates three of them.
#if defined(STRATA_TEST_COMPILE_CHECK)
using Records = ::testing::Types<nested_particle, with_opaque, with_bools>;
#else
using Records = ::testing::Types<particle, mixed, three_bytes, nested_particle, cell_record, big_record, with_opaque, mixed_convert, wide64, with_bools>;
#endif
TYPED_TEST_SUITE(Hdf5RoundTrip, Records);

// Every layout in, every layout out, through small staging blocks (so device containers take several
// and the last is partial) and chunks smaller than the file's records.
TYPED_TEST(Hdf5RoundTrip, EveryLayoutReadsWhatEveryLayoutWrote) {
  using T = TypeParam;
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), std::size_t(5000)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto ref = random_records<T>(n, 71);
    temp_path tmp("roundtrip");
    {
      io::file f = io::file::create(tmp.str());
      io::write_options o;
      o.staging_records = 700, o.chunk_records = 512;
      io::write(f, "soa", strata::soa_vector<T>(ref), o);
      io::write(f, "aos", strata::aos_vector<T>(ref), o);
      io::write(f, "aosoa", strata::aosoa_vector<T>(ref), o);
      io::write(f, "host/soa", strata::host_soa_vector<T>(ref), o);
      io::write(f, "host/aos", strata::host_aos_vector<T>(ref), o);
      o.deflate = 4;
      io::write(f, "deflated", strata::soa_vector<T>(ref), o);
    }
    io::file f = io::file::open(tmp.str());
    io::read_options r;
    r.staging_records = 300;
    for (const char* g : {"soa", "aos", "aosoa", "host/soa", "host/aos", "deflated"}) {
      SCOPED_TRACE(g);
      expect_records(io::read<strata::soa_vector<T>>(f, g, r), ref);
      expect_records(io::read<strata::aos_vector<T>>(f, g, r), ref);
      expect_records(io::read<strata::aosoa_vector<T>>(f, g, r), ref);
      expect_records(io::read<strata::host_soa_vector<T>>(f, g, r), ref);
      expect_records(io::read<strata::host_aos_vector<T>>(f, g, r), ref);
      expect_records(io::read<strata::host_aosoa_vector<T>>(f, g, r), ref);
    }
    const io::group_info info = io::describe(f, "aos");
    EXPECT_EQ(info.records, n);
    EXPECT_EQ(info.layout, "aos");
    ASSERT_EQ(info.leaves.size(), strata::reflect::leaf_count<T>);
    for (std::size_t l = 0; l < info.leaves.size(); ++l) {
      EXPECT_EQ(info.leaves[l].name, strata::reflect::leaf_names<T>[l]);
      EXPECT_EQ(info.leaves[l].kind.bytes, strata::reflect::leaf_sizes<T>[l]);
      EXPECT_EQ(info.leaves[l].records, n);
    }
  }
}

TEST(Hdf5, LargeContainersCrossInManyBlocks) {
  STRATA_SEED_TRACE();
  const std::size_t n = under_sanitizer() ? 100003 : 1000000;
  const auto ref = random_records<nested_particle>(n, 7);
  temp_path tmp("large");
  {
    io::file f = io::file::create(tmp.str());
    io::write_options o;
    o.chunk_records = 4096;
    o.staging_records = n / 7;  // blocks of whole chunks, a partial last block
    io::write(f, "p", strata::soa_vector<nested_particle>(ref), o);
    io::write(f, "q", strata::aosoa_vector<nested_particle>(ref), o);
  }
  io::file f = io::file::open(tmp.str());
  io::read_options r;
  r.staging_records = n / 5 + 3;
  expect_records(io::read<strata::aos_vector<nested_particle>>(f, "p", r), ref);
  expect_records(io::read<strata::soa_vector<nested_particle>>(f, "q", r), ref);
}

// Staging memory stays staging_records records: a write's chunks are clamped to it, and a file
// whose chunks are larger than a read's staging block is read in parts of a chunk.
TEST(Hdf5, ChunksLargerThanTheStagingBlock) {
  const std::size_t n = 5000;
  const auto ref = random_records<particle>(n, 12);
  temp_path tmp("chunks");
  {
    io::file f = io::file::create(tmp.str());
    io::write_options o;
    o.chunk_records = 4096, o.staging_records = 1000;
    io::write(f, "clamped", strata::soa_vector<particle>(ref), o);
    o.staging_records = 4096;
    io::write(f, "large", strata::aos_vector<particle>(ref), o);
  }
  io::file f = io::file::open(tmp.str());
  auto chunk_of = [&](const char* dataset) {
    const hid_t d = H5Dopen2(f.id(), dataset, H5P_DEFAULT);
    const hid_t plist = H5Dget_create_plist(d);
    hsize_t dim = 0;
    EXPECT_EQ(H5Pget_chunk(plist, 1, &dim), 1);
    H5Pclose(plist);
    H5Dclose(d);
    return dim;
  };
  EXPECT_EQ(chunk_of("clamped/x"), 1000u) << "the chunk is clamped to staging_records";
  EXPECT_EQ(chunk_of("large/x"), 4096u);
  io::read_options r;
  r.staging_records = 700;  // a 4096-record chunk in parts of 700
  expect_records(io::read<strata::soa_vector<particle>>(f, "large", r), ref);
  expect_records(io::read<strata::aos_vector<particle>>(f, "large", r), ref);
  expect_records(io::read<strata::host_soa_vector<particle>>(f, "clamped", r), ref);
}

// A device AoSoA container crosses in whole AoSoA blocks that are also whole chunks where both fit
// in staging_records, and never in more than staging_records records unless that is below one
// AoSoA block.
TEST(Hdf5, AoSoAStagingKeepsChunksAndTheBound) {
  using M = strata::aosoa_mapping<particle, 32>;
  for (std::size_t block : {1u, 20u, 31u, 32u, 95u, 96u, 100u, 1000u, 4096u})
    for (std::size_t chunk : {1u, 16u, 48u, 100u, 1000u, 5000u}) {
      const auto p = io::detail::plan_staging<M>(100000, 100000, block, chunk);
      SCOPED_TRACE("block " + std::to_string(block) + ", chunk " + std::to_string(chunk));
      EXPECT_EQ(p.step % 32, 0u);
      if (block >= 32) EXPECT_LE(p.step, block) << "staging_records is the bound";
      else EXPECT_EQ(p.step, 32u) << "one AoSoA block";
      if (std::lcm<std::size_t>(32, chunk) <= block) EXPECT_EQ(p.step % chunk, 0u) << "whole chunks";
    }
  const std::size_t n = 3001;
  const auto ref = random_records<particle>(n, 13);
  temp_path tmp("aosoa_staging");
  {
    io::file f = io::file::create(tmp.str());
    io::write_options o;
    o.chunk_records = 48, o.staging_records = 100;  // 96 records a call: two chunks, three AoSoA blocks
    io::write(f, "a", strata::aosoa_vector<particle, 32>(ref), o);
    o.chunk_records = 7, o.staging_records = 20;  // below one AoSoA block
    io::write(f, "b", strata::aosoa_vector<particle, 32>(ref), o);
  }
  io::file f = io::file::open(tmp.str());
  io::read_options r;
  for (std::size_t staging : {20u, 100u, 1000u}) {
    r.staging_records = staging;
    expect_records(io::read<strata::aosoa_vector<particle, 32>>(f, "a", r), ref);
    expect_records(io::read<strata::aosoa_vector<particle, 32>>(f, "b", r), ref);
  }
}

// Datasets are named by leaf path, typed as HDF5 knows them, and the group carries the schema.
TEST(Hdf5, FilesDescribeTheirRecords) {
  temp_path tmp("names");
  const auto ref = random_records<cell_record>(10);
  io::file f = io::file::create(tmp.str());
  io::write(f, "cells", strata::soa_vector<cell_record>(ref));
  io::h5::quiet q;
  for (const char* ds : {"cells/w[0]", "cells/w[2]", "cells/v/x", "cells/k", "cells/flags"})
    EXPECT_TRUE(io::h5::exists(f.id(), ds)) << ds;
  io::h5::id d = io::h5::check(H5Dopen2(f.id(), "cells/w[1]", H5P_DEFAULT), H5Dclose, "open");
  io::h5::id t = io::h5::check(H5Dget_type(d.get()), H5Tclose, "type");
  EXPECT_GT(H5Tequal(t.get(), H5T_IEEE_F64LE), 0);
  std::vector<double> w1(10);
  ASSERT_GE(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w1.data()), 0);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(w1[i], ref[i].w[1]);
  io::h5::id g = io::h5::check(H5Gopen2(f.id(), "cells", H5P_DEFAULT), H5Gclose, "group");
  const std::string schema = io::h5::read_string_attribute(g.get(), "strata.schema");
  EXPECT_NE(schema.find("{\"name\": \"w[2]\", \"type\": \"float64\", \"bytes\": 8"), std::string::npos) << schema;
  EXPECT_NE(schema.find("\"name\": \"k\", \"type\": \"int16\""), std::string::npos) << schema;
  EXPECT_EQ(io::h5::read_string_attribute(g.get(), "strata.version"), STRATA_VERSION_STRING);
  EXPECT_EQ(io::h5::read_u64_attribute(g.get(), "strata.records"), 10u);
}

// ---- 16-bit floats and bools -------------------------------------------------------------------

struct sixteen_bit {
  BOOST_HANA_DEFINE_STRUCT(sixteen_bit, (strata::half, h), (strata::bfloat16, b), (bool, alive), (float, f));
};
struct sixteen_bit_wide {
  BOOST_HANA_DEFINE_STRUCT(sixteen_bit_wide, (float, h), (float, b), (bool, alive), (double, f));
};

TEST(Hdf5, HalfAndBfloat16KeepTheirBitsAndWidenToFloat) {
  std::mt19937 g(7);
  std::vector<sixteen_bit> ref(300);
  for (auto& r : ref) {
    const float x = std::uniform_real_distribution<float>(-1000.f, 1000.f)(g);
    r.h = strata::from_float<strata::half>(x);
    r.b = strata::from_float<strata::bfloat16>(x * 1e20f);  // past half's range: bfloat16's own exponent
    r.alive = g() % 2;
    r.f = x;
  }
  temp_path tmp("half");
  {
    io::file f = io::file::create(tmp.str());
    io::write(f, "s", strata::soa_vector<sixteen_bit>(ref));
  }
  io::file f = io::file::open(tmp.str());
  const io::group_info info = io::describe(f, "s");
  EXPECT_EQ(info.leaves[0].kind.name(), "float16");
  EXPECT_EQ(info.leaves[1].kind.name(), "bfloat16");
  EXPECT_EQ(info.leaves[2].kind.name(), "bool");
  expect_records(io::read<strata::aos_vector<sixteen_bit>>(f, "s"), ref);
  // Every value of the narrower type is one of the wider: HDF5's conversion reads them exactly.
  const auto wide = io::read<strata::soa_vector<sixteen_bit_wide>>(f, "s").to_host();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(wide[i].h, strata::to_float(ref[i].h)) << i;
    ASSERT_EQ(wide[i].b, strata::to_float(ref[i].b)) << i;
    ASSERT_EQ(wide[i].alive, ref[i].alive) << i;
    ASSERT_EQ(wide[i].f, double(ref[i].f)) << i;
  }
}

// ---- ranges --------------------------------------------------------------------------------------

TEST(Hdf5, ReadsARangeOfRecords) {
  const auto ref = random_records<mixed>(1000, 3);
  temp_path tmp("range");
  io::file f = io::file::create(tmp.str());
  io::write(f, "m", strata::aos_vector<mixed>(ref));
  io::read_options r;
  r.first = 123, r.count = 400, r.staging_records = 64;
  expect_records(io::read<strata::aosoa_vector<mixed>>(f, "m", r), std::vector<mixed>(ref.begin() + 123, ref.begin() + 523));
  r.first = 900, r.count = 400;  // clamped to the records there are
  expect_records(io::read<strata::soa_vector<mixed>>(f, "m", r), std::vector<mixed>(ref.begin() + 900, ref.end()));
  r.first = 1000;
  EXPECT_EQ(io::read<strata::soa_vector<mixed>>(f, "m", r).size(), 0u);
  r.first = 1001;
  EXPECT_THROW((void)io::read<strata::soa_vector<mixed>>(f, "m", r), std::out_of_range);
}

// ---- schema evolution -----------------------------------------------------------------------------

struct body_v1 {
  BOOST_HANA_DEFINE_STRUCT(body_v1, (float, x), (float, y), (std::int16_t, id), (float, old_mass), (std::uint8_t, tag));
};
// id widened, old_mass renamed to mass, tag removed, charge added.
struct body_v2 {
  BOOST_HANA_DEFINE_STRUCT(body_v2, (double, x), (float, y), (std::int32_t, id), (float, mass), (float, charge));
};
struct body_narrow {
  BOOST_HANA_DEFINE_STRUCT(body_narrow, (float, x), (std::int8_t, id));
};
struct body_kind {
  BOOST_HANA_DEFINE_STRUCT(body_kind, (std::int32_t, x));
};

struct Evolution : ::testing::Test {
  temp_path tmp{"evolution"};
  std::vector<body_v1> ref = random_records<body_v1>(257, 11);
  void SetUp() override {
    io::file f = io::file::create(tmp.str());
    io::write(f, "bodies", strata::soa_vector<body_v1>(ref));
  }
};

TEST_F(Evolution, ANewerRecordReadsWithRenamesAndZeroedNewLeaves) {
  io::file f = io::file::open(tmp.str());
  io::read_options r;
  r.renames["mass"] = "old_mass";
  r.missing = io::read_options::missing_leaves::zero;
  const auto got = io::read<strata::aos_vector<body_v2>>(f, "bodies", r).to_host();
  ASSERT_EQ(got.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].x, double(ref[i].x)) << i;
    ASSERT_EQ(got[i].y, ref[i].y) << i;
    ASSERT_EQ(got[i].id, std::int32_t(ref[i].id)) << i;
    ASSERT_EQ(got[i].mass, ref[i].old_mass) << i;
    ASSERT_EQ(got[i].charge, 0.0f) << i;
  }
}

TEST_F(Evolution, AMissingLeafIsNamed) {
  io::file f = io::file::open(tmp.str());
  strata::soa_vector<body_v2> dst(std::vector<body_v2>(5, body_v2{1, 2, 3, 4, 5}));
  io::read_options r;
  r.renames["mass"] = "old_mass";
  const std::string msg = what_of([&] { io::read(f, "bodies", dst, r); });
  EXPECT_NE(msg.find("has no leaf 'charge'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x, y, id, old_mass, tag"), std::string::npos) << msg;
  EXPECT_THROW(io::read(f, "bodies", dst, r), io::schema_error);
  r.renames.clear();
  r.missing = io::read_options::missing_leaves::zero;  // mass is not in the file under its new name
  const auto zeroed = io::read<strata::soa_vector<body_v2>>(f, "bodies", r).to_host();
  EXPECT_EQ(zeroed[3].mass, 0.0f);
  r.missing = io::read_options::missing_leaves::error;
  r.renames["mass"] = "weight";
  const std::string renamed = what_of([&] { io::read(f, "bodies", dst, r); });
  EXPECT_NE(renamed.find("leaf 'mass' (stored as 'weight')"), std::string::npos) << renamed;
  ASSERT_EQ(dst.size(), 5u);  // untouched by every refusal
  EXPECT_EQ(dst.to_host()[4].charge, 5.0f);
}

TEST_F(Evolution, NarrowingIsRefusedUnlessAllowed) {
  io::file f = io::file::open(tmp.str());
  strata::soa_vector<body_narrow> dst(std::vector<body_narrow>(3, body_narrow{9, 9}));
  const std::string msg = what_of([&] { io::read(f, "bodies", dst); });
  EXPECT_NE(msg.find("leaf 'id' is int16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("and int8 in"), std::string::npos) << msg;
  EXPECT_NE(msg.find("narrowing allows it"), std::string::npos) << msg;
  EXPECT_EQ(dst.size(), 3u);
  io::read_options r;
  r.narrowing = true;
  io::read(f, "bodies", dst, r);
  ASSERT_EQ(dst.size(), ref.size());
  const auto got = dst.to_host();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].x, ref[i].x);
    // HDF5 clamps integers that do not fit.
    ASSERT_EQ(got[i].id, std::int8_t(std::clamp<int>(ref[i].id, -128, 127))) << ref[i].id;
  }
}

TEST_F(Evolution, AnotherKindIsRefusedEvenWithNarrowing) {
  io::file f = io::file::open(tmp.str());
  io::read_options r;
  r.narrowing = true;
  const std::string msg = what_of([&] { (void)io::read<strata::soa_vector<body_kind>>(f, "bodies", r); });
  EXPECT_NE(msg.find("leaf 'x' is float32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no conversion"), std::string::npos) << msg;
}

// ---- damaged, mismatched and misused files ------------------------------------------------------

TEST(Hdf5Errors, TruncatedAndDamagedFilesFailAndLeaveTheDestination) {
  const auto ref = random_records<particle>(20000, 5);
  temp_path tmp("damaged");
  {
    io::file f = io::file::create(tmp.str());
    io::write_options o;
    o.chunk_records = 4096;
    io::write(f, "p", strata::soa_vector<particle>(ref), o);
  }
  const auto bytes = std::filesystem::file_size(tmp.p);
  std::vector<char> content(bytes);
  std::ifstream(tmp.p, std::ios::binary).read(content.data(), std::streamsize(bytes));
  const std::vector<particle> kept(4, particle{1, 2, 3, 4, 5, 6, 7});
  strata::soa_vector<particle> dst(kept);

  // Cut off at several points: opening or reading fails, with a file_error; dst is unchanged.
  for (double frac : {0.0, 0.01, 0.3, 0.6, 0.97}) {
    SCOPED_TRACE("truncated to " + std::to_string(frac));
    temp_path cut("cut");
    std::ofstream(cut.p, std::ios::binary).write(content.data(), std::streamsize(double(bytes) * frac));
    EXPECT_THROW(io::read(io::file::open(cut.str()), "p", dst), io::file_error);
    expect_records(dst, kept);
  }
  // Bytes flipped in the middle of the data: the chunk's checksum fails.
  temp_path flipped("flipped");
  std::vector<char> bad = content;
  for (std::size_t i = bytes / 2; i < bytes / 2 + 64; ++i) bad[i] = char(~bad[i]);
  std::ofstream(flipped.p, std::ios::binary).write(bad.data(), std::streamsize(bytes));
  const std::string msg = what_of([&] { io::read(io::file::open(flipped.str()), "p", dst); });
  EXPECT_NE(msg.find("cannot read leaf"), std::string::npos) << msg;
  EXPECT_THROW(io::read(io::file::open(flipped.str()), "p", dst), io::file_error);
  expect_records(dst, kept);
  // Not an HDF5 file at all; no file.
  temp_path text("text");
  std::ofstream(text.p) << "not hdf5\n";
  EXPECT_NE(what_of([&] { (void)io::file::open(text.str()); }).find("cannot open"), std::string::npos);
  EXPECT_THROW((void)io::file::open("/nonexistent/strata.h5"), io::file_error);
}

TEST(Hdf5Errors, ALeafOfTheWrongLengthIsNamed) {
  const auto ref = random_records<two_floats>(100);
  temp_path tmp("length");
  io::file f = io::file::create(tmp.str());
  io::write(f, "t", strata::soa_vector<two_floats>(ref));
  {  // shrink one leaf behind strata's back, as a damaged or hand-edited file would
    io::h5::quiet q;
    io::h5::id d = io::h5::check(H5Dopen2(f.id(), "t/b", H5P_DEFAULT), H5Dclose, "open");
    const hsize_t shorter = 60;
    ASSERT_GE(H5Dset_extent(d.get(), &shorter), 0);
  }
  strata::soa_vector<two_floats> dst(3);
  const std::string msg = what_of([&] { io::read(f, "t", dst); });
  EXPECT_NE(msg.find("leaf 'b' of 't'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds 60 records, the group says 100"), std::string::npos) << msg;
  EXPECT_EQ(dst.size(), 3u);
}

TEST(Hdf5Errors, GroupsAreNotReplacedUnlessAsked) {
  const auto a = random_records<particle>(10, 1), b = random_records<particle>(20, 2);
  temp_path tmp("overwrite");
  io::file f = io::file::create(tmp.str());
  io::write(f, "run/step", strata::soa_vector<particle>(a));
  EXPECT_NE(what_of([&] { io::write(f, "run/step", strata::soa_vector<particle>(b)); }).find("already has 'run/step'"), std::string::npos);
  expect_records(io::read<strata::soa_vector<particle>>(f, "run/step"), a);
  io::write_options o;
  o.overwrite = true;
  io::write(f, "run/step", strata::aos_vector<particle>(b), o);
  expect_records(io::read<strata::soa_vector<particle>>(f, "run/step"), b);
  EXPECT_FALSE(io::h5::exists(f.id(), "run/step.strata-partial"));
  EXPECT_NE(what_of([&] { (void)io::read<strata::soa_vector<particle>>(f, "run/nothing"); }).find("has no group 'run/nothing'"), std::string::npos);
  o.deflate = 12;
  EXPECT_THROW(io::write(f, "x", strata::soa_vector<particle>(a), o), std::invalid_argument);
}

TEST(Hdf5Errors, AReadOnlyFileRefusesWritesAndKeepsNoPartialGroup) {
  const auto a = random_records<particle>(10, 1);
  temp_path tmp("readonly");
  {
    io::file f = io::file::create(tmp.str());
    io::write(f, "a", strata::soa_vector<particle>(a));
  }
  {
    io::file f = io::file::open(tmp.str());
    EXPECT_THROW(io::write(f, "b", strata::soa_vector<particle>(a)), io::file_error);
  }
  io::file rw = io::file::open(tmp.str(), io::file::mode::read_write);
  EXPECT_FALSE(io::h5::exists(rw.id(), "b"));
  EXPECT_FALSE(io::h5::exists(rw.id(), "b.strata-partial"));
  expect_records(io::read<strata::soa_vector<particle>>(rw, "a"), a);
}


// ---- hostile files: attributes and values a damaged or crafted file may hold -------------------------

struct energy_parts {
  BOOST_HANA_DEFINE_STRUCT(energy_parts, (double, kin), (double, pot));
};
struct scalar_energy {
  BOOST_HANA_DEFINE_STRUCT(scalar_energy, (double, energy), (bool, alive));
};
struct split_energy {
  BOOST_HANA_DEFINE_STRUCT(split_energy, (energy_parts, energy), (bool, alive));
};

TEST(Hdf5Hostile, AttributesOfTheWrongShapeAreRefused) {
  temp_path tmp("hostile-attrs");
  io::file f = io::file::create(tmp.str());
  io::write(f, "g", strata::soa_vector<scalar_energy>(3));
  io::h5::quiet q;
  io::h5::id g = io::h5::check(H5Gopen2(f.id(), "g", H5P_DEFAULT), H5Gclose, "group");
  // strata.records as four integers, strata.leaves as an array of three strings.
  ASSERT_GE(H5Adelete(g.get(), "strata.records"), 0);
  const hsize_t four = 4, three = 3;
  const std::uint64_t counts[4] = {3, 3, 3, 3};
  io::h5::id s4 = io::h5::check(H5Screate_simple(1, &four, nullptr), H5Sclose, "space");
  io::h5::id a = io::h5::check(H5Acreate2(g.get(), "strata.records", H5T_STD_U64LE, s4.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attr");
  ASSERT_GE(H5Awrite(a.get(), H5T_NATIVE_UINT64, counts), 0);
  a.reset();
  strata::soa_vector<scalar_energy> dst(2);
  EXPECT_NE(what_of([&] { io::read(f, "g", dst); }).find("strata.records holds 4 values"), std::string::npos);
  ASSERT_GE(H5Adelete(g.get(), "strata.leaves"), 0);
  io::h5::id st = io::h5::check(H5Tcopy(H5T_C_S1), H5Tclose, "type");
  ASSERT_GE(H5Tset_size(st.get(), 64), 0);
  io::h5::id s3 = io::h5::check(H5Screate_simple(1, &three, nullptr), H5Sclose, "space");
  io::h5::id b = io::h5::check(H5Acreate2(g.get(), "strata.leaves", st.get(), s3.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attr");
  std::vector<char> text(3 * 64, 'a');
  ASSERT_GE(H5Awrite(b.get(), st.get(), text.data()), 0);
  b.reset();
  EXPECT_THROW((void)io::describe(f, "g"), io::file_error);
  EXPECT_EQ(dst.size(), 2u);
}

TEST(Hdf5Hostile, BoolLeavesHoldingOtherBytesAreRefused) {
  temp_path tmp("hostile-bool");
  io::file f = io::file::create(tmp.str());
  std::vector<scalar_energy> ref(4, scalar_energy{1.0, true});
  io::write(f, "g", strata::soa_vector<scalar_energy>(ref));
  {  // the raw bytes 0, 1, 5, 0 under strata's own FALSE / TRUE type
    io::h5::quiet q;
    io::h5::id d = io::h5::check(H5Dopen2(f.id(), "g/alive", H5P_DEFAULT), H5Dclose, "open");
    io::h5::id t = io::h5::check(H5Dget_type(d.get()), H5Tclose, "type");
    const unsigned char raw[4] = {0, 1, 5, 0};
    ASSERT_GE(H5Dwrite(d.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw), 0);
  }
  strata::aos_vector<scalar_energy> dst(1);
  const std::string msg = what_of([&] { io::read(f, "g", dst); });
  EXPECT_NE(msg.find("leaf 'alive' of 'g'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds byte 5 at record 2"), std::string::npos) << msg;
  EXPECT_EQ(dst.size(), 1u);
}

TEST(Hdf5Hostile, PathsAndEvolutionEdges) {
  temp_path tmp("paths");
  io::file f = io::file::create(tmp.str());
  const auto ref = random_records<scalar_energy>(9);
  io::write(f, "/abs/one", strata::soa_vector<scalar_energy>(ref));  // a leading '/' names the same group
  expect_records(io::read<strata::soa_vector<scalar_energy>>(f, "abs/one"), ref);
  expect_records(io::read<strata::soa_vector<scalar_energy>>(f, "/abs/one"), ref);
  EXPECT_THROW(io::write(f, "trailing/", strata::soa_vector<scalar_energy>(ref)), std::invalid_argument);
  EXPECT_FALSE(io::h5::exists(f.id(), "trailing"));
  // A scalar leaf that became a struct: a missing leaf (named), or zero where asked.
  const std::string msg = what_of([&] { (void)io::read<strata::soa_vector<split_energy>>(f, "abs/one"); });
  EXPECT_NE(msg.find("has no leaf 'energy.kin'"), std::string::npos) << msg;
  io::read_options r;
  r.missing = io::read_options::missing_leaves::zero;
  const auto split = io::read<strata::soa_vector<split_energy>>(f, "abs/one", r).to_host();
  EXPECT_EQ(split[3].energy.kin, 0.0);
  EXPECT_EQ(split[3].alive, ref[3].alive);
  // A rename of a leaf the record lacks is a typo, not a no-op.
  io::read_options typo;
  typo.renames["enrgy"] = "energy";
  EXPECT_NE(what_of([&] { (void)io::read<strata::soa_vector<scalar_energy>>(f, "abs/one", typo); }).find("'enrgy', which is no leaf"),
            std::string::npos);
}

// ---- openPMD ---------------------------------------------------------------------------------------

const std::vector<io::openpmd_record> nested_records = {
    {"position", {{"x", "pos.x"}, {"y", "pos.y"}, {"z", "pos.z"}}, {1, 0, 0, 0, 0, 0, 0}, 1e-6},
    {"weighting", {{"", "mass"}}, {}, 1.0}};

TEST(OpenPmd, SpeciesFollowTheStandardsLayout) {
  const auto ref = random_records<nested_particle>(500, 9);
  temp_path tmp("openpmd");
  io::file f = io::file::create(tmp.str());
  io::openpmd_options o;
  o.author = "strata tests";
  io::write_openpmd(f, {7, 0.5, 0.25, 1e-15}, "electrons", strata::aosoa_vector<nested_particle>(ref), nested_records, o);
  io::write_openpmd(f, {7, 0.5, 0.25, 1e-15}, "ions", strata::soa_vector<nested_particle>(ref), nested_records);
  io::h5::quiet q;
  io::h5::id root = io::h5::check(H5Gopen2(f.id(), "/", H5P_DEFAULT), H5Gclose, "root");
  EXPECT_EQ(io::h5::read_string_attribute(root.get(), "openPMD"), "1.1.0");
  EXPECT_EQ(io::h5::read_string_attribute(root.get(), "basePath"), "/data/%T/");
  EXPECT_EQ(io::h5::read_string_attribute(root.get(), "particlesPath"), "particles/");
  EXPECT_EQ(io::h5::read_string_attribute(root.get(), "author"), "strata tests");
  for (const char* p : {"data/7/particles/electrons/position/x", "data/7/particles/ions/position/z", "data/7/particles/ions/weighting",
                        "data/7/particles/electrons/positionOffset/y"})
    EXPECT_TRUE(io::h5::exists(f.id(), p)) << p;
  EXPECT_FALSE(io::h5::exists(f.id(), "data/7/particles/electrons/vel"));  // unmapped leaves are left out
  io::h5::id d = io::h5::check(H5Dopen2(f.id(), "data/7/particles/electrons/position/y", H5P_DEFAULT), H5Dclose, "open");
  std::vector<float> y(500);
  ASSERT_GE(H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, y.data()), 0);
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], ref[i].pos.y) << i;
  double unit_si = 0;
  io::h5::id a = io::h5::check(H5Aopen(d.get(), "unitSI", H5P_DEFAULT), H5Aclose, "unitSI");
  ASSERT_GE(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &unit_si), 0);
  EXPECT_EQ(unit_si, 1e-6);
  io::h5::id it = io::h5::check(H5Gopen2(f.id(), "data/7", H5P_DEFAULT), H5Gclose, "iteration");
  EXPECT_TRUE(io::h5::has_attribute(it.get(), "time") && io::h5::has_attribute(it.get(), "dt") && io::h5::has_attribute(it.get(), "timeUnitSI"));
}

TEST(OpenPmd, BadMappingsAreRefusedBeforeWriting) {
  const strata::soa_vector<nested_particle> ps(random_records<nested_particle>(10));
  temp_path tmp("openpmd-bad");
  io::file f = io::file::create(tmp.str());
  auto refusal = [&](std::vector<io::openpmd_record> r) { return what_of([&] { io::write_openpmd(f, {}, "e", ps, r); }); };
  EXPECT_NE(refusal({{"weighting", {{"", "mass"}}, {}, 1}}).find("no 'position'"), std::string::npos);
  const std::string unknown = refusal({{"position", {{"x", "pos.w"}}, {}, 1}});
  EXPECT_NE(unknown.find("names leaf 'pos.w'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("pos.x, pos.y, pos.z, vel.x"), std::string::npos) << unknown;
  EXPECT_NE(refusal({{"position", {{"x", "pos.x"}}, {}, 1}, {"other", {{"x", "pos.x"}}, {}, 1}}).find("mapped twice"), std::string::npos);
  EXPECT_NE(refusal({{"position", {{"x", "pos.x"}, {"x", "pos.y"}}, {}, 1}}).find("component named 'x'"), std::string::npos);
  EXPECT_THROW(io::write_openpmd(f, {}, "a/b", ps, nested_records), std::invalid_argument);
  EXPECT_FALSE(io::h5::exists(f.id(), "data"));  // nothing was written
  io::write_openpmd(f, {}, "e", ps, nested_records);
  EXPECT_THROW(io::write_openpmd(f, {}, "e", ps, nested_records), io::file_error);  // the species exists
}

}  // namespace

// A read that writes every leaf skips zeroing the container first; the columns' room past the
// records must still be zero, as in a value-initialised container (packets load it; bools there
// must hold 0 or 1).
TEST(Hdf5, ColumnsPastTheRecordsReadAsZero) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1001)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto ref = random_records<with_bools>(n, 91);
    temp_path tmp("tails");
    {
      io::file f = io::file::create(tmp.str());
      io::write(f, "b", strata::host_soa_vector<with_bools>(ref));
    }
    io::file f = io::file::open(tmp.str());
    const auto got = io::read<strata::host_soa_vector<with_bools>>(f, "b");
    expect_records(got, ref);
    ASSERT_GE(got.capacity(), n);
    const auto v = got.const_view();
    for (std::size_t l = 0; l < strata::reflect::leaf_count<with_bools>; ++l) {
      const std::size_t bytes = strata::reflect::leaf_sizes<with_bools>[l];
      const std::byte* col = v.column_bytes(l);
      for (std::size_t i = n * bytes; i < got.capacity() * bytes; ++i) ASSERT_EQ(col[i], std::byte{0}) << "leaf " << l << " byte " << i;
    }
  }
}
