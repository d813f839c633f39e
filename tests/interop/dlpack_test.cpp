// SPDX-License-Identifier: Apache-2.0
// DLPack export and import: what a container's column or a matrix looks like as a tensor (dtype,
// shape, strides, device, data), round trips back to views over the same memory, the owner kept
// alive by a shared export, and every refusal (dtype, shape, stride, alignment, device) naming the
// problem.
#include <strata/interop/dlpack.hpp>
#include <strata/interop/mdspan.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/algorithm/transform.hpp>

#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>

namespace {

using strata_test::fetch;
using strata_test::mixed;
using strata_test::nested_particle;
using strata_test::particle;
using strata_test::vec3;

using strata_test::what_of;

struct managed_deleter {
  void operator()(DLManagedTensor* t) const {
    if (t && t->deleter) t->deleter(t);
  }
};
using managed_ptr = std::unique_ptr<DLManagedTensor, managed_deleter>;

struct drift_and_double_mass {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx;
    p.mass *= 2.0f;
    return p;
  }
};

DLDeviceType expected_device_type() {
#if defined(STRATA_BACKEND_CUDA)
  return kDLCUDA;
#else
  return kDLCPU;
#endif
}

TEST(DLPack, DtypesOfLeafTypes) {
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<float>()), "float32");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<double>()), "float64");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<std::int16_t>()), "int16");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<std::uint8_t>()), "uint8");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<std::uint64_t>()), "uint64");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<strata::half>()), "float16");
  EXPECT_EQ(strata::to_string(strata::dlpack_dtype<strata::bfloat16>()), "bfloat16");
}

TEST(DLPack, ExportedColumnsDescribeTheContainersMemory) {
  STRATA_SEED_TRACE();
  const auto host = strata_test::random_records<mixed>(1001);
  strata::soa_vector<mixed> s(host);
  auto v = s.view();
  managed_ptr e(strata::to_dlpack<&mixed::energy>(v));
  managed_ptr c(strata::to_dlpack<&mixed::cell>(v));
  const DLTensor& te = e->dl_tensor;
  EXPECT_EQ(te.data, static_cast<void*>(v.column<&mixed::energy>().data()));
  EXPECT_EQ(te.ndim, 1);
  EXPECT_EQ(te.shape[0], 1001);
  EXPECT_EQ(te.strides[0], 1);
  EXPECT_EQ(te.byte_offset, 0u);
  EXPECT_EQ(strata::to_string(te.dtype), "float64");
  EXPECT_EQ(te.device.device_type, expected_device_type());
  EXPECT_EQ(strata::to_string(c->dl_tensor.dtype), "uint16");
  // The tensor's elements are the column's records.
  auto energy = fetch(static_cast<const double*>(te.data), 1001);
  auto cell = fetch(static_cast<const std::uint16_t*>(c->dl_tensor.data), 1001);
  for (std::size_t i = 0; i < host.size(); ++i) {
    ASSERT_EQ(energy[i], host[i].energy) << i;
    ASSERT_EQ(cell[i], host[i].cell) << i;
  }
}

TEST(DLPack, NestedLeavesByMemberPath) {
  STRATA_SEED_TRACE();
  const auto host = strata_test::random_records<nested_particle>(77);
  strata::soa_vector<nested_particle> s(host);
  managed_ptr t(strata::to_dlpack<strata::member<&nested_particle::vel, &vec3::y>>(s.view()));
  auto got = fetch(static_cast<const float*>(t->dl_tensor.data), 77);
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], host[i].vel.y) << i;
  // Leaf index 4 is vel.y as well.
  managed_ptr same(strata::to_dlpack<4>(s.view()));
  EXPECT_EQ(same->dl_tensor.data, t->dl_tensor.data);
}

TEST(DLPack, SharedExportKeepsTheContainerAlive) {
  auto s = std::make_shared<strata::soa_vector<particle>>(strata_test::random_records<particle>(300));
  std::weak_ptr<strata::soa_vector<particle>> watch = s;
  const auto want = fetch(s->view().column<&particle::vz>().data(), 300);
  DLManagedTensor* t = strata::to_dlpack<&particle::vz>(s);
  s.reset();
  ASSERT_FALSE(watch.expired()) << "the exported tensor must hold the container";
  EXPECT_EQ(fetch(static_cast<const float*>(t->dl_tensor.data), 300), want);
  t->deleter(t);
  EXPECT_TRUE(watch.expired()) << "the deleter must release the container";
}

// The container grows after the export (push_back past its capacity, a reserve, a permute through
// a spare): the tensor still points into live memory, the storage it was exported from, and reads
// the records as they were (AddressSanitizer would report a use after free).
TEST(DLPack, SharedExportOutlivesTheContainersGrowth) {
  auto s = std::make_shared<strata::soa_vector<particle>>(strata_test::random_records<particle>(300));
  const auto want = fetch(s->view().column<&particle::x>().data(), 300);
  DLManagedTensor* t = strata::to_dlpack<&particle::x>(s);
  const void* exported = t->dl_tensor.data;
  const std::size_t capacity = s->capacity();
  while (s->capacity() == capacity) s->push_back(particle{});
  s->reserve(8 * s->capacity());
  ASSERT_NE(static_cast<const void*>(s->view().column<&particle::x>().data()), exported) << "the container moved to new storage";
  EXPECT_EQ(fetch(static_cast<const float*>(t->dl_tensor.data), 300), want);
  s.reset();
  EXPECT_EQ(fetch(static_cast<const float*>(t->dl_tensor.data), 300), want);
  t->deleter(t);
  auto m = std::make_shared<strata::matrix<float>>(4, 5);
  DLManagedTensor* mt = strata::to_dlpack(m);
  *m = strata::matrix<float>(1, 1);  // the matrix's storage replaced
  EXPECT_EQ(fetch(static_cast<const float*>(mt->dl_tensor.data), 20), std::vector<float>(20, 0.0f));
  mt->deleter(mt);
}

TEST(DLPack, ImportedColumnsFormAViewOverTheSameMemory) {
  STRATA_SEED_TRACE();
  for (std::size_t n : strata_test::sizes_for<particle>()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto host = strata_test::random_records<particle>(n, 3);
    strata::soa_vector<particle> src(host);
    auto v = src.view();
    managed_ptr x(strata::to_dlpack<&particle::x>(v)), y(strata::to_dlpack<&particle::y>(v)), z(strata::to_dlpack<&particle::z>(v)),
        vx(strata::to_dlpack<&particle::vx>(v)), vy(strata::to_dlpack<&particle::vy>(v)), vz(strata::to_dlpack<&particle::vz>(v)),
        m(strata::to_dlpack<&particle::mass>(v));
    auto w = strata::soa_view_from_dlpack<particle>(strata::alignment::vector, x->dl_tensor, y->dl_tensor, z->dl_tensor,
                                                    vx->dl_tensor, vy->dl_tensor, vz->dl_tensor, m->dl_tensor);
    ASSERT_EQ(w.size(), strata::index_t(n));
    EXPECT_EQ(w.capacity(), strata::index_t(n)) << "an imported view ends where the tensors do";
    EXPECT_EQ(w.column<&particle::mass>().data(), v.column<&particle::mass>().data());
    // Writing through the imported view is visible in the container.
    strata::transform(w, w, drift_and_double_mass{});
    const auto back = src.to_host();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(back[i].x, host[i].x + host[i].vx) << i;
      ASSERT_EQ(back[i].mass, host[i].mass * 2.0f) << i;
      ASSERT_EQ(back[i].vz, host[i].vz) << i;
    }
  }
}

TEST(DLPack, MatrixRoundTripKeepsThePitch) {
  strata::matrix<float> m(5, 13);
  managed_ptr t(strata::to_dlpack(m.view()));
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 5);
  EXPECT_EQ(t->dl_tensor.shape[1], 13);
  EXPECT_EQ(t->dl_tensor.strides[0], m.pitch());
  EXPECT_EQ(t->dl_tensor.strides[1], 1);
  auto back = strata::matrix_view_from_dlpack<float>(t->dl_tensor);
  EXPECT_EQ(back.data, m.view().data);
  EXPECT_EQ(back.rows, 5);
  EXPECT_EQ(back.cols, 13);
  EXPECT_EQ(back.pitch, m.pitch());
  EXPECT_FALSE(back.owns_padding) << "an imported matrix's padding belongs to its producer";
  auto md = strata::to_mdspan(back);
  EXPECT_EQ(md.extent(0), 5);
  EXPECT_EQ(md.extent(1), 13);
  EXPECT_EQ(md.stride(0), m.pitch());

  auto owned = std::make_shared<strata::matrix<float>>(2, 3);
  std::weak_ptr<strata::matrix<float>> watch = owned;
  DLManagedTensor* k = strata::to_dlpack(owned);
  owned.reset();
  EXPECT_FALSE(watch.expired());
  k->deleter(k);
  EXPECT_TRUE(watch.expired());
}

TEST(DLPack, RefusalsNameTheProblem) {
  strata::soa_vector<particle> s(strata_test::random_records<particle>(64));
  managed_ptr x(strata::to_dlpack<&particle::x>(s.view()));
  DLTensor t = x->dl_tensor;

  EXPECT_THROW((void)strata::span_from_dlpack<int>(t), strata::type_error);
  EXPECT_NE(what_of([&] { (void)strata::span_from_dlpack<double>(t); }).find("float32 elements; the column needs float64"), std::string::npos);

  DLTensor two_d = t;
  std::int64_t shape2[2] = {8, 8}, strides2[2] = {8, 1};
  two_d.ndim = 2, two_d.shape = shape2, two_d.strides = strides2;
  EXPECT_THROW((void)strata::span_from_dlpack<float>(two_d), strata::size_error);

  DLTensor strided = t;
  std::int64_t shape1[1] = {32}, stride1[1] = {2};
  strided.shape = shape1, strided.strides = stride1;
  EXPECT_NE(what_of([&] { (void)strata::span_from_dlpack<float>(strided); }).find("stride 2"), std::string::npos);

  // Four bytes into the column: fine for element access, refused for 16-byte vectors.
  DLTensor shifted = t;
  std::int64_t shape63[1] = {63};
  shifted.shape = shape63, shifted.byte_offset = 4;
  EXPECT_NO_THROW((void)strata::span_from_dlpack<float>(shifted));
  DLTensor y = shifted, z = shifted, vx = shifted, vy = shifted, vz = shifted, m = shifted;
  EXPECT_THROW((void)strata::soa_view_from_dlpack<particle>(strata::alignment::vector, shifted, y, z, vx, vy, vz, m),
               strata::misaligned_pointer);
  EXPECT_NO_THROW((void)strata::soa_view_from_dlpack<particle>(strata::alignment::element, shifted, y, z, vx, vy, vz, m));
  DLTensor odd = t;
  odd.byte_offset = 2;
  EXPECT_THROW((void)strata::span_from_dlpack<float>(odd), strata::misaligned_pointer);

  // An empty tensor without memory is a column of nothing; one at an offset from null is refused.
  DLTensor none = t;
  std::int64_t shape0[1] = {0};
  none.data = nullptr, none.shape = shape0, none.byte_offset = 0;
  EXPECT_TRUE(strata::span_from_dlpack<float>(none).empty());
  none.byte_offset = 16;
  EXPECT_NE(what_of([&] { (void)strata::span_from_dlpack<float>(none); }).find("data is null) but byte_offset 16"), std::string::npos);
  DLTensor none2 = two_d;
  std::int64_t shape00[2] = {0, 8};
  none2.data = nullptr, none2.shape = shape00, none2.byte_offset = ~std::uint64_t(0) - 27;
  EXPECT_THROW((void)strata::matrix_view_from_dlpack<float>(none2), strata::size_error);

  // Columns of different lengths.
  DLTensor shorter = t;
  std::int64_t shape10[1] = {10};
  shorter.shape = shape10;
  EXPECT_NE(what_of([&] { (void)strata::soa_view_from_dlpack<particle>(strata::alignment::element, t, t, t, t, t, t, shorter); })
                .find("column 'mass' has 10 elements"),
            std::string::npos);

  // Memory strata cannot reach, and a device the memory does not belong to.
  DLTensor opencl = t;
  opencl.device = {kDLOpenCL, 0};
  EXPECT_THROW((void)strata::span_from_dlpack<float>(opencl), strata::memory_space_error);
  DLTensor other = t;
#if defined(STRATA_BACKEND_CUDA)
  other.device = {kDLCUDA, t.device.device_id + 1};
  // "its memory belongs to device 0" where that GPU exists, "this machine has 1 GPU" where not.
  const std::string named = what_of([&] { (void)strata::span_from_dlpack<float>(other); });
  EXPECT_NE(named.find("says CUDA device " + std::to_string(other.device.device_id) + " but"), std::string::npos) << named;
  EXPECT_TRUE(named.find("belongs to device") != std::string::npos || named.find("this machine has") != std::string::npos) << named;
  DLTensor host_memory = t;
  std::vector<float> h(64);
  host_memory.data = h.data();  // says CUDA, is pageable host memory
  EXPECT_THROW((void)strata::span_from_dlpack<float>(host_memory), strata::memory_space_error);
#else
  other.device = {kDLCUDA, 0};
  EXPECT_NE(what_of([&] { (void)strata::span_from_dlpack<float>(other); }).find("host backend"), std::string::npos);
  EXPECT_THROW((void)strata::span_from_dlpack<float>(other), strata::device_error);
#endif

  // Matrices: column stride, overlapping rows, dimensions.
  DLTensor mt = two_d;
  std::int64_t bad_cols[2] = {8, 2};
  mt.strides = bad_cols;
  EXPECT_THROW((void)strata::matrix_view_from_dlpack<float>(mt), strata::size_error);
  std::int64_t overlap[2] = {4, 1};
  mt.strides = overlap;
  EXPECT_NE(what_of([&] { (void)strata::matrix_view_from_dlpack<float>(mt); }).find("overlapping rows"), std::string::npos);
  mt.strides = nullptr;  // dense
  auto dense = strata::matrix_view_from_dlpack<float>(mt);
  EXPECT_EQ(dense.pitch, 8);
  EXPECT_THROW((void)strata::matrix_view_from_dlpack<float>(t), strata::size_error);
}


// Tensors as a hostile or buggy producer hands them over, drawn at random: shapes and strides
// negative, zero, huge or missing, byte offsets near 2^64, dtypes and devices of every kind, null
// data. Each import either refuses with one of strata's errors or returns a view that reads exactly
// the elements the tensor describes. Run under AddressSanitizer and UndefinedBehaviorSanitizer in CI.
TEST(DLPack, RandomTensorsImportOrAreRefused) {
  STRATA_SEED_TRACE();
  std::mt19937_64 g(strata_test::test_seed() ^ 0xd1a9ac);
  auto pick = [&](std::uint64_t n) { return std::int64_t(g() % n); };
  const std::size_t elems = 4096;
  auto ref = strata_test::random_records<particle>(elems);
  std::vector<float> host(elems);
  for (std::size_t i = 0; i < elems; ++i) host[i] = ref[i].x;
  strata::buffer mem(elems * sizeof(float), strata::memory_space::device);
  strata::copy_bytes(mem.data(), host.data(), elems * sizeof(float));
  const std::int64_t hostile[] = {-1, -4096, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(), 1ll << 40, 0};
  int imported = 0, refused = 0;
  for (int round = 0; round < 2000; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    DLTensor t{};
    t.data = pick(20) == 0 ? nullptr : mem.data();
    t.device = {expected_device_type(), 0};
    if (pick(10) == 0) {
      // Any integer a C producer may store, including ones no enumerator names: written as bytes,
      // since forming such a DLDeviceType value in C++ is itself undefined.
      const std::underlying_type_t<DLDeviceType> raw = static_cast<std::underlying_type_t<DLDeviceType>>(pick(40));
      std::memcpy(&t.device.device_type, &raw, sizeof raw);
      t.device.device_id = std::int32_t(pick(3));
    }
    t.dtype = {kDLFloat, 32, 1};
    if (pick(8) == 0) t.dtype = {std::uint8_t(pick(8)), std::uint8_t(8 << pick(4)), std::uint16_t(1 + pick(2))};
    t.ndim = pick(8) == 0 ? std::int32_t(pick(4)) : std::int32_t(1 + pick(2));
    std::int64_t shape[3] = {}, strides[3] = {};
    // A valid layout inside the buffer to start from.
    const std::int64_t cols = 1 + pick(64), pitch = cols + pick(8), rows = std::int64_t(elems) / pitch - pick(3);
    const std::int64_t offset_elems = pick(16);
    if (t.ndim == 2) shape[0] = std::max<std::int64_t>(rows, 0), shape[1] = cols, strides[0] = pitch, strides[1] = 1;
    else shape[0] = pick(std::int64_t(elems) - offset_elems + 1), strides[0] = 1;
    t.byte_offset = std::uint64_t(offset_elems) * sizeof(float);
    if (t.ndim == 2 && (shape[0] - 1) * pitch + cols + offset_elems > std::int64_t(elems)) shape[0] = 0;
    t.shape = shape;
    t.strides = pick(4) == 0 ? nullptr : strides;
    // Then one field made hostile, or none.
    switch (pick(6)) {
      case 0: shape[pick(2)] = hostile[pick(6)]; break;
      case 1: strides[pick(2)] = hostile[pick(6)]; break;
      case 2: t.byte_offset = pick(2) ? ~std::uint64_t(0) - std::uint64_t(pick(64)) : std::uint64_t(pick(1 << 20)); break;
      case 3: if (pick(2)) t.shape = nullptr; break;
      default: break;
    }
    // What strata can check: the dtype, the device, the alignment, non-negative extents, rows that do
    // not overlap, addresses that do not wrap. A tensor that claims more elements than its producer
    // allocated is undetectable; such imports are checked against the tensor's own description only.
    const int type = strata::detail::dl_device_type(t.device);
#if defined(STRATA_BACKEND_CUDA)
    int gpus = 0;
    ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
    // The buffer is device memory of GPU 0; a tensor without memory only has to name a GPU that exists.
    const bool right_device = (type == kDLCUDA && (t.device.device_id == 0 || (t.data == nullptr && t.device.device_id < gpus))) ||
                              type == kDLCUDAManaged;
#else
    const bool right_device = type == kDLCPU || type == kDLCUDAHost;  // host memory either way
#endif
    const bool right_kind = t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1 && right_device;
    // Computed as an integer: adding an offset to a null pointer is itself undefined.
    auto expected_data = [&] { return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(t.data) + std::uintptr_t(t.byte_offset)); };
    auto inside = [&](std::uint64_t last_elem) { return t.byte_offset <= elems * sizeof(float) && last_elem <= elems; };
    try {
      if (t.ndim == 2) {
        auto m = strata::matrix_view_from_dlpack<float>(t);
        ++imported;
        ASSERT_TRUE(right_kind) << "a tensor of another dtype or device was imported";
        ASSERT_TRUE(t.data != nullptr || t.byte_offset == 0) << "a tensor without memory was imported at an offset";
        ASSERT_GE(m.rows, 0);
        ASSERT_GE(m.pitch, m.cols);
        ASSERT_EQ(static_cast<const void*>(m.data), expected_data());
        if (m.rows > 0 && m.cols > 0) {
          const std::uint64_t first = t.byte_offset / sizeof(float), last = first + std::uint64_t((m.rows - 1) * m.pitch + m.cols);
          if (inside(last)) {
            const auto got = fetch(m.row(m.rows - 1), std::size_t(m.cols));
            for (std::int64_t c = 0; c < m.cols; ++c) ASSERT_EQ(got[std::size_t(c)], host[std::size_t(last) - std::size_t(m.cols) + std::size_t(c)]);
          }
        }
      } else {
        auto sp = strata::span_from_dlpack<float>(t);
        ++imported;
        ASSERT_TRUE(right_kind) << "a tensor of another dtype or device was imported";
        ASSERT_TRUE(t.data != nullptr || t.byte_offset == 0) << "a tensor without memory was imported at an offset";
        ASSERT_EQ(static_cast<const void*>(sp.data()), expected_data());
        const std::uint64_t first = t.byte_offset / sizeof(float);
        if (!sp.empty() && inside(first + sp.size())) {
          const auto got = fetch(sp.data(), sp.size());
          for (std::size_t i = 0; i < sp.size(); ++i) ASSERT_EQ(got[i], host[std::size_t(first) + i]);
        }
      }
    } catch (const std::invalid_argument&) {  // every strata refusal: size, type, alignment, memory space, device
      ++refused;
    }
  }
  EXPECT_GT(imported, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
