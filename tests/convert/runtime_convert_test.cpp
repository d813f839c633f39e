// SPDX-License-Identifier: Apache-2.0
// AoS <-> SoA for records described at run time: packed (NumPy-style, unaligned fields) and aligned
// layouts, every size in the test size list, against a byte-by-byte host reference; round trips
// give the records back with the bytes no field covers zeroed; refusals name the problem.
#include <strata/convert/runtime.hpp>

#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
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
      // strides of an even number of 4-byte words (staged to AoS at a padded pitch), with byte and
      // 2-byte fields, gaps and 16-byte fields
      {"mixed16", 16, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}},
      {"two_floats8", 8, {{0, 4}, {4, 4}}},
      {"wide32", 32, {{0, 16}, {16, 4}}},
      {"floats96", 96, {{0, 4},  {4, 4},  {8, 4},  {12, 4}, {16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 4}, {36, 4}, {40, 4}, {44, 4},
                        {48, 4}, {52, 4}, {56, 4}, {60, 4}, {64, 4}, {68, 4}, {72, 4}, {76, 4}, {80, 4}, {84, 4}, {88, 4}, {92, 4}}},
      // byte fields in one word, a gap byte; three bytes packed
      {"three_bytes4", 4, {{0, 1}, {1, 1}, {2, 1}}},
      {"packed3", 3, {{2, 1}, {0, 1}, {1, 1}}},
      // 2-byte fields between an 8-byte and a 4-byte one, an odd number of words
      {"packed20", 20, {{0, 8}, {8, 2}, {10, 2}, {12, 2}, {14, 2}, {16, 4}}},
      // an 8-byte field at an odd offset of a packed record
      {"packed13", 13, {{1, 8}, {9, 4}, {0, 1}}},
      // the largest stride: a padded tile would not fit a block's shared memory
      {"stride1536", 1536, {{0, 16}, {16, 8}, {1500, 4}, {1535, 1}}},
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
// aos_shift: the AoS records start that many bytes past a 16-byte boundary (1 and 2: the tiles
// move by bytes or 2-byte words, at the record stride).
void every_layout_and_size(std::size_t shift, std::size_t aos_shift = 0) {
  for (const auto& c : cases())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33), std::size_t(257),
                          std::size_t(1000), std::size_t(99991), std::size_t(1000003)}) {
      if (c.stride * n > (std::size_t(64) << 20)) continue;  // the 1536-byte record up to 64 MiB
      // Sanitized runs (10-50x slower) stop at 99991 records (and 4 MiB): the tile paths all run by then.
      if (strata_test::under_sanitizer() && (n > 99991 || c.stride * n > (std::size_t(4) << 20))) continue;
      SCOPED_TRACE(std::string(c.name) + " n = " + std::to_string(n) + " column shift " + std::to_string(shift) + " AoS shift " +
                   std::to_string(aos_shift));
      const auto host = random_bytes(n * c.stride, n * 31 + c.stride);
      strata::buffer aos_buffer(n * c.stride + 16, strata::memory_space::device);
      std::byte* const aos_at = static_cast<std::byte*>(aos_buffer.data()) + aos_shift;
      strata::copy_bytes(aos_at, host.data(), n * c.stride);
      std::vector<strata::buffer> cols;
      std::vector<void*> ptrs;
      for (const auto& f : c.fields) {
        cols.emplace_back(n * f.size + 32, strata::memory_space::device);
        std::vector<unsigned char> poison(cols.back().bytes(), 0xA5);
        strata::copy_bytes(cols.back().data(), poison.data(), poison.size());
        ptrs.push_back(static_cast<std::byte*>(cols.back().data()) + shift * f.size);
      }
      strata::aos_to_soa(aos_at, c.stride, strata::index_t(n), c.fields, ptrs.data());
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
      // Poisoned around the records: nothing before or past them is written.
      strata::buffer back(n * c.stride + 32, strata::memory_space::device);
      {
        std::vector<unsigned char> poison(back.bytes(), 0x5A);
        strata::copy_bytes(back.data(), poison.data(), poison.size());
      }
      std::byte* const back_at = static_cast<std::byte*>(back.data()) + 16 + aos_shift;
      std::vector<const void*> cptrs(ptrs.begin(), ptrs.end());
      strata::soa_to_aos(cptrs.data(), c.fields, strata::index_t(n), back_at, c.stride);
      strata::synchronize(nullptr);
      const auto round = strata_test::fetch(static_cast<const std::byte*>(back.data()), back.bytes());
      std::vector<bool> covered(c.stride, false);
      for (const auto& f : c.fields)
        for (std::size_t b = 0; b < f.size; ++b) covered[f.offset + b] = true;
      for (std::size_t i = 0; i < n * c.stride; ++i)
        ASSERT_EQ(round[16 + aos_shift + i], covered[i % c.stride] ? host[i] : std::byte{0}) << "AoS byte " << i;
      for (std::size_t i = 0; i < round.size(); ++i)
        if (i < 16 + aos_shift || i >= 16 + aos_shift + n * c.stride) {
          ASSERT_EQ(round[i], std::byte(0x5A)) << "byte " << i << " outside the records";
        }
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

TEST(RuntimeConvert, RecordsOffAWordBoundary) {
  STRATA_SEED_TRACE();
  every_layout_and_size(0, 1);
  every_layout_and_size(0, 2);
}

// At strides of an odd number of 4-byte words every lane of a warp touches its own bank for every
// field size, and fields are accessed in the widest pieces their offset and the stride keep aligned.
TEST(RuntimeConvert, RotationAndPieces) {
  for (std::size_t size : {1, 2, 4, 8, 16})
    for (std::size_t stride : {4, 12, 20, 28, 100}) {
      if (size > stride) continue;
      const unsigned rot = strata::detail::runtime_rotation(size, stride);
      const std::uint32_t u = std::uint32_t(16 / size);
      for (std::uint32_t j = 0; j < u; ++j) {
        std::vector<int> hits(32, 0);
        for (std::uint32_t lane = 0; lane < 32; ++lane) {
          const std::uint32_t r = lane * u + strata::detail::runtime_rotated(j, lane, rot, u);
          ++hits[(r * stride / 4) % 32];
        }
        for (int h : hits) ASSERT_EQ(h, 1) << "size " << size << " stride " << stride << " step " << j;
      }
    }
  auto pieces = [](std::size_t stride, std::vector<runtime_field> f) {
    strata::detail::runtime_layout L{};
    std::vector<std::byte> a(stride * 64 + 16), c(16 * 64 + 16);
    std::vector<void*> cols(f.size(), c.data());
    (void)strata::detail::runtime_prepare("test", L, a.data(), stride, 64, f, cols.data());
    return std::vector<unsigned>(L.piece, L.piece + f.size());
  };
  EXPECT_EQ(pieces(16, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}), (std::vector<unsigned>{8, 4, 2, 1}));
  EXPECT_EQ(pieces(48, {{0, 16}, {16, 4}, {24, 8}, {40, 2}}), (std::vector<unsigned>{16, 4, 8, 2}));
  EXPECT_EQ(pieces(20, {{0, 8}, {8, 2}, {16, 4}}), (std::vector<unsigned>{4, 2, 4}));  // 20-byte records: 8-byte fields by words
  EXPECT_EQ(pieces(15, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}), (std::vector<unsigned>{1, 1, 1, 1}));
  EXPECT_EQ(pieces(13, {{1, 8}, {9, 4}, {0, 1}}), (std::vector<unsigned>{1, 1, 1}));
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
  // Offsets near 2^64 whose end wraps past zero, from a hostile file header: refused, not truncated.
  EXPECT_NE(run(16, {{~std::size_t(0) - 1, 4}}).find("ends past the 16-byte record"), std::string::npos);
  EXPECT_NE(run(16, {{std::size_t(1) << 63, 8}}).find("ends past the 16-byte record"), std::string::npos);
  EXPECT_NE(run(16, {{0, 4}, {~std::size_t(0) - 3, 4}}).find("field 1"), std::string::npos);
  // A record count whose records would run past the end of the address space.
  EXPECT_NE(run(16, {{0, 4}}, strata::index_t(1) << 62).find("overflows"), std::string::npos);
  EXPECT_NE(run(1, {{0, 1}}, 1000, reinterpret_cast<const void*>(~std::uintptr_t(0) - 100)).find("address space"), std::string::npos);
#if defined(STRATA_BACKEND_CUDA)
  std::vector<std::byte> pageable(64 * 16);
  EXPECT_THROW(strata::aos_to_soa(pageable.data(), 16, 64, std::vector<runtime_field>{{0, 4}}, c), strata::memory_space_error);
#endif
}

// Field lists, strides and counts drawn at random, hostile ones included (offsets and sizes near
// 2^64, sizes that are not 1, 2, 4, 8 or 16, overlapping fields, columns aligned to less than their
// element): every description either converts exactly as the host reference says or is refused
// with strata's error naming it. Run under AddressSanitizer and UndefinedBehaviorSanitizer in CI.
TEST(RuntimeConvert, RandomDescriptionsConvertOrAreRefused) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(strata_test::test_seed() ^ 0x5eedf00d);
  auto pick = [&](std::uint64_t n) { return std::size_t(g() % n); };
  const std::size_t hostile[] = {~std::size_t(0), ~std::size_t(0) - 1, ~std::size_t(0) - 15, std::size_t(1) << 63, std::size_t(1) << 32,
                                 std::size_t(0xffffffff)};
  int converted = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    const std::size_t stride = pick(8) == 0 ? hostile[pick(6)] : 1 + pick(80);
    const std::size_t nf = pick(10) == 0 ? 0 : 1 + pick(6);
    std::vector<runtime_field> f(nf);
    for (auto& x : f) {
      const std::size_t sizes[] = {1, 2, 4, 8, 16, 3, 0, 32};
      x.size = sizes[pick(pick(5) == 0 ? 8 : 5)];
      x.offset = pick(12) == 0 ? hostile[pick(6)] : pick(stride < 100 ? stride + 1 : 100);
    }
    const strata::index_t n = pick(10) == 0 ? -strata::index_t(pick(5)) - 1 : strata::index_t(pick(300));
    const std::size_t shift = pick(4) == 0 ? 1 : 0;  // columns one byte past their alignment
    SCOPED_TRACE("round " + std::to_string(round) + ": stride " + std::to_string(stride) + ", " + std::to_string(nf) + " fields, n " +
                 std::to_string(n));
    const std::size_t records = n > 0 ? std::size_t(n) : 0;
    const std::size_t aos_bytes = stride <= 4096 ? records * stride : 0;
    const auto host = random_bytes(aos_bytes, std::uint64_t(round));
    strata::buffer aos(aos_bytes + 16, strata::memory_space::device);
    strata::copy_bytes(aos.data(), host.data(), aos_bytes);
    std::vector<strata::buffer> cols;
    std::vector<void*> ptrs;
    for (const auto& x : f) {
      const std::size_t elem = x.size <= 32 ? x.size : 1;
      cols.emplace_back(records * elem + 32, strata::memory_space::device);
      ptrs.push_back(static_cast<std::byte*>(cols.back().data()) + shift);
    }
    try {
      strata::aos_to_soa(aos.data(), stride, n, f, ptrs.data());
      strata::synchronize(nullptr);
    } catch (const strata::size_error&) {
      ++refused;
      continue;
    } catch (const strata::misaligned_pointer&) {
      ++refused;
      continue;
    }
    ++converted;
    for (std::size_t k = 0; k < f.size(); ++k) {
      const auto got = strata_test::fetch(static_cast<const std::byte*>(ptrs[k]), records * f[k].size);
      for (std::size_t i = 0; i < records; ++i)
        for (std::size_t b = 0; b < f[k].size; ++b)
          ASSERT_EQ(got[i * f[k].size + b], host[i * stride + f[k].offset + b]) << "field " << k << " record " << i;
    }
  }
  EXPECT_GT(converted, 20) << "the generator made too few valid descriptions to test the conversion";
  EXPECT_GT(refused, 20) << "the generator made too few hostile descriptions";
}

}  // namespace
