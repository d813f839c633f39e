// AoS <-> SoA for records described at run time: packed (NumPy-style, unaligned fields) and aligned
// layouts, every size in the test size list, against a byte-by-byte host reference; round trips
// give the records back with the bytes no field covers zeroed; refusals name the problem.
#include <strata/convert/runtime.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using strata::runtime_field;

struct layout_case {
  const char* name;
  std::size_t stride;
  std::vector<runtime_field> fields;
};

const std::vector<layout_case>& cases() {
  static const std::vector<layout_case> c = {
      // np.dtype([('e', '<f8'), ('x', '<f4'), ('cell', '<u2'), ('flags', 'u1')]) : packed, 15 bytes
      {"packed15", 15, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}},
      // the particle: 7 x f4, 28 bytes
      {"particle28", 28, {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 4}}},
      // aligned with a gap (bytes 20..23 belong to no field) and a 16-byte field
      {"aligned48", 48, {{0, 16}, {16, 4}, {24, 8}, {32, 8}, {40, 2}}},
      // fields listed out of offset order, odd stride
      {"unordered7", 7, {{4, 2}, {0, 4}, {6, 1}}},
  };
  return c;
}

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 g(strata_test::test_seed() ^ salt);
  std::vector<std::byte> b(n);
  for (auto& x : b) x = std::byte(g() & 0xff);
  return b;
}

// shift 0: every column 16-byte aligned (whole units move as vectors); shift 1: each column starts
// one element past a 16-byte boundary (aligned to its element only: the element-by-element path).
void every_layout_and_size(std::size_t shift) {
  for (const auto& c : cases())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33), std::size_t(257),
                          std::size_t(1000), std::size_t(99991), std::size_t(1000003)}) {
      SCOPED_TRACE(std::string(c.name) + " n = " + std::to_string(n) + " column shift " + std::to_string(shift));
      const auto host = random_bytes(n * c.stride, n * 31 + c.stride);
      strata::buffer aos(std::max<std::size_t>(1, n * c.stride), strata::memory_space::device);
      strata::copy_bytes(aos.data(), host.data(), n * c.stride);
      std::vector<strata::buffer> cols;
      std::vector<void*> ptrs;
      for (const auto& f : c.fields) {
        cols.emplace_back(n * f.size + 32, strata::memory_space::device);
        std::vector<unsigned char> poison(cols.back().bytes(), 0xA5);
        strata::copy_bytes(cols.back().data(), poison.data(), poison.size());
        ptrs.push_back(static_cast<std::byte*>(cols.back().data()) + shift * f.size);
      }
      strata::aos_to_soa(aos.data(), c.stride, strata::index_t(n), c.fields, ptrs.data());
      strata::synchronize(nullptr);
      for (std::size_t k = 0; k < c.fields.size(); ++k) {
        const auto& f = c.fields[k];
        const auto got = strata_test::fetch(static_cast<const std::byte*>(ptrs[k]), n * f.size + 16);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t b = 0; b < f.size; ++b)
            ASSERT_EQ(got[i * f.size + b], host[i * c.stride + f.offset + b]) << "field " << k << " record " << i << " byte " << b;
        for (std::size_t b = n * f.size; b < got.size(); ++b)
          ASSERT_EQ(got[b], std::byte(0xA5)) << "field " << k << ": byte " << b << " past the column's end was written";
      }
      // Back: every field's bytes as they were, the gaps zero.
      strata::buffer back(std::max<std::size_t>(1, n * c.stride), strata::memory_space::device);
      std::vector<const void*> cptrs(ptrs.begin(), ptrs.end());
      strata::soa_to_aos(cptrs.data(), c.fields, strata::index_t(n), back.data(), c.stride);
      strata::synchronize(nullptr);
      const auto round = strata_test::fetch(static_cast<const std::byte*>(back.data()), n * c.stride);
      std::vector<bool> covered(c.stride, false);
      for (const auto& f : c.fields)
        for (std::size_t b = 0; b < f.size; ++b) covered[f.offset + b] = true;
      for (std::size_t i = 0; i < n * c.stride; ++i)
        ASSERT_EQ(round[i], covered[i % c.stride] ? host[i] : std::byte{0}) << "AoS byte " << i;
    }
}

TEST(RuntimeConvert, EveryLayoutAndSizeAgainstAHostReference) {
  STRATA_SEED_TRACE();
  every_layout_and_size(0);
}

TEST(RuntimeConvert, ColumnsAlignedOnlyToTheirElements) {
  STRATA_SEED_TRACE();
  every_layout_and_size(1);
}

TEST(RuntimeConvert, RefusalsNameTheProblem) {
  strata::buffer aos(64 * 16, strata::memory_space::device), col(64 * 16, strata::memory_space::device);
  void* c[2] = {col.data(), col.data()};
  auto run = [&](std::size_t stride, std::vector<runtime_field> f, strata::index_t n = 64, const void* a = nullptr) {
    try {
      strata::aos_to_soa(a ? a : aos.data(), stride, n, f, c);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(nothing thrown)");
  };
  EXPECT_NE(run(16, {{0, 3}}).find("fields of 1, 2, 4, 8 or 16 bytes"), std::string::npos);
  EXPECT_NE(run(16, {{14, 4}}).find("ends past the 16-byte record"), std::string::npos);
  EXPECT_NE(run(0, {{0, 4}}).find("records of 0 bytes"), std::string::npos);
  EXPECT_NE(run(4096, {{0, 4}}).find("records of 4096 bytes"), std::string::npos);
  EXPECT_NE(run(16, {}).find("0 fields"), std::string::npos);
  EXPECT_NE(run(16, {{0, 4}}, -1).find("negative record count"), std::string::npos);
  void* odd[1] = {static_cast<std::byte*>(col.data()) + 2};
  EXPECT_THROW(strata::aos_to_soa(aos.data(), 16, 64, std::vector<runtime_field>{{0, 4}}, odd), strata::misaligned_pointer);
#if defined(STRATA_BACKEND_CUDA)
  std::vector<std::byte> pageable(64 * 16);
  EXPECT_THROW(strata::aos_to_soa(pageable.data(), 16, 64, std::vector<runtime_field>{{0, 4}}, c), strata::memory_space_error);
#endif
}

}  // namespace
