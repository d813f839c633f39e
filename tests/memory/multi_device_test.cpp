// SPDX-License-Identifier: Apache-2.0
// Containers of one GPU used while another GPU is current: every container operation and algorithm
// either runs on the container's GPU and leaves the caller's current device as it was, or throws
// before anything is launched. After each case the process's CUDA work still runs on both GPUs
// (a launch on the wrong GPU would have lost the context). Needs two GPUs; skipped otherwise.
#include <strata/strata.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace strata_test;

namespace {

struct heavy {
  STRATA_HD bool operator()(const particle& p) const { return p.mass > 0.5f; }
};
struct cell_of {
  STRATA_HD std::uint32_t operator()(const particle& p) const { return std::uint32_t((p.x + 1.0f) * 8.0f) & 15u; }
};

#if defined(STRATA_BACKEND_CUDA)
int current() {
  int d = -1;
  (void)cudaGetDevice(&d);
  return d;
}

/// Runs f with `device` current and makes device 0 current again.
template <class F>
auto on(int device, F f) {
  EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
  auto r = f();
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  return r;
}

class OtherDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
    if (devices < 2) GTEST_SKIP() << "needs two GPUs (this machine has " << devices << ")";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
  void TearDown() override {
    if (IsSkipped()) return;
    EXPECT_EQ(current(), 0) << "the caller's current device changed";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    // Later work on both GPUs: a transform and a copy back on each.
    for (int d : {0, 1}) {
      auto ref = random_records<particle>(4099, 17);
      auto got = on(d, [&] {
        strata::soa_vector<particle> v(ref);
        strata::transform(v, v, drift{});
        return v.to_host();
      });
      for (auto& p : ref) p = drift{}(p);
      EXPECT_EQ(first_difference<particle>(got, ref), -1) << "device " << d;
      EXPECT_EQ(on(d, [] { return cudaDeviceSynchronize(); }), cudaSuccess) << "device " << d;
    }
  }
  /// n random records in a soa_vector made on device 1.
  static strata::soa_vector<particle> on_one(const std::vector<particle>& ref) {
    return on(1, [&] { return strata::soa_vector<particle>(ref); });
  }
};

TEST_F(OtherDevice, ContainerOperationsRunOnTheContainersDevice) {
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(10007, 3);
  auto v = on_one(ref);
  ASSERT_EQ(v.device(), 1);
  ASSERT_EQ(current(), 0);

  auto copy = v;
  EXPECT_EQ(copy.device(), 1) << "a copy lives on its source's GPU";
  EXPECT_EQ(first_difference<particle>(copy.to_host(), ref), -1);

  v.reserve(50000);
  v.resize(20000);
  EXPECT_EQ(v.device(), 1);
  std::vector<particle> want = ref;
  want.resize(20000, particle{});
  EXPECT_EQ(first_difference<particle>(v.to_host(), want), -1);

  const particle p{1, 2, 3, 4, 5, 6, 7};
  v.resize(20010, p);
  v.push_back(p);
  v.emplace_back(7.0f, 6.0f, 5.0f, 4.0f, 3.0f, 2.0f, 1.0f);
  want.resize(20010, p);
  want.push_back(p);
  want.push_back({7, 6, 5, 4, 3, 2, 1});
  v.append(ref);
  want.insert(want.end(), ref.begin(), ref.end());
  v.append(copy, strata::stream_t{});
  want.insert(want.end(), ref.begin(), ref.end());
  v[5] = p;
  want[5] = p;
  EXPECT_TRUE(same_bits(particle(v[6]), want[6]));
  EXPECT_EQ(first_difference<particle>(v.to_host(), want), -1);

  strata::soa_vector<particle> dst = on(1, [&] { return strata::soa_vector<particle>(v.size()); });
  v.copy_to_async(dst, strata::stream_t{});
  EXPECT_EQ(first_difference<particle>(dst.to_host(), want), -1);

  v.assign(ref.data(), ref.size());
  EXPECT_EQ(v.device(), 1);
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);

  strata::aos_vector<particle> a = on(1, [&] { return strata::aos_vector<particle>(ref); });
  auto a2 = a;
  EXPECT_EQ(a2.device(), 1);
  auto s = strata::to_soa(a2);
  EXPECT_EQ(s.device(), 1);
  EXPECT_EQ(first_difference<particle>(s.to_host(), ref), -1);
  auto back = strata::to_aos(s);
  EXPECT_EQ(back.device(), 1);
  EXPECT_EQ(first_difference<particle>(back.to_host(), ref), -1);
  strata::aos_to_soa(a.const_view(), s.view());
  strata::soa_to_aos(s.const_view(), a.view());
  EXPECT_EQ(first_difference<particle>(a.to_host(), ref), -1);
}

TEST_F(OtherDevice, AlgorithmsRunOnTheContainersDevice) {
  STRATA_SEED_TRACE();
  for (std::size_t n : {std::size_t(1000), std::size_t(1) << 20}) {
    SCOPED_TRACE(n);
    auto ref = random_records<particle>(n, 11);
    auto v = on_one(ref);
    auto out = on_one(std::vector<particle>(n));

    EXPECT_EQ(strata::transform(v, out, drift{}), strata::path::vectorized);
    std::vector<particle> want(n);
    std::transform(ref.begin(), ref.end(), want.begin(), drift{});
    EXPECT_EQ(first_difference<particle>(out.to_host(), want), -1);
    EXPECT_EQ(strata::for_each(out, kick{}), strata::path::vectorized);
    for (auto& p : want) kick{}(p);
    EXPECT_EQ(first_difference<particle>(out.to_host(), want), -1);
    ASSERT_EQ(current(), 0);

    double energy = 0, energy_scale = 0;
    for (const auto& p : ref) energy += kinetic_energy{}(p), energy_scale += std::abs(kinetic_energy{}(p));
    EXPECT_NEAR(strata::transform_reduce(v, kinetic_energy{}, 0.0, plus_d{}), energy, 1e-12 * (1 + energy_scale));
    double mass = 0, mass_scale = 0;
    for (const auto& p : ref) mass += p.mass, mass_scale += std::abs(p.mass);
    EXPECT_NEAR(strata::reduce(v.column<&particle::mass>(), 0.0f, plus_f{}), mass, 1e-5 * (1 + mass_scale)) << "float sums, any order";
    EXPECT_EQ(strata::statistics(v.column<&particle::mass>()).count, std::int64_t(n));

    strata::soa_vector<particle> kept;  // no memory yet: it lands on the input's device
    const std::size_t k = strata::copy_if(v, kept, heavy{});
    EXPECT_EQ(kept.device(), 1);
    std::vector<particle> heavy_ones;
    std::copy_if(ref.begin(), ref.end(), std::back_inserter(heavy_ones), heavy{});
    EXPECT_EQ(k, heavy_ones.size());
    EXPECT_EQ(first_difference<particle>(kept.to_host(), heavy_ones), -1);

    auto e = v;
    EXPECT_EQ(strata::erase_if(e, heavy{}), heavy_ones.size());
    std::vector<particle> light;
    std::copy_if(ref.begin(), ref.end(), std::back_inserter(light), [](const particle& p) { return !heavy{}(p); });
    EXPECT_EQ(first_difference<particle>(e.to_host(), light), -1);

    auto sorted = v;
    strata::sort_by(sorted, cell_of{}, strata::stream_t{}, 0, 4);
    std::vector<particle> by_cell = ref;
    std::stable_sort(by_cell.begin(), by_cell.end(), [](const particle& a, const particle& b) { return cell_of{}(a) < cell_of{}(b); });
    EXPECT_EQ(first_difference<particle>(sorted.to_host(), by_cell), -1);

    std::vector<std::int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());
    strata::buffer idx = on(1, [&] { return strata::buffer(n * sizeof(std::int32_t), strata::memory_space::device); });
    strata::copy_bytes(idx.data(), perm.data(), n * sizeof(std::int32_t));
    auto permuted = v;
    strata::permute(permuted, cuda::std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(idx.data()), n));
    std::vector<particle> reversed(ref.rbegin(), ref.rend());
    EXPECT_EQ(first_difference<particle>(permuted.to_host(), reversed), -1);
    ASSERT_EQ(current(), 0);
  }
}

TEST_F(OtherDevice, NormalizationRunsOnTheMatrixDevice) {
  const strata::index_t rows = 37, cols = 1000;
  std::vector<float> x(std::size_t(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i % 97) * 0.25f - 7.0f;
  auto m = on(1, [&] { return strata::matrix<float>(rows, cols, x.data()); });
  auto y = on(1, [&] { return strata::matrix<float>(rows, cols); });
  EXPECT_EQ(strata::layer_norm<float>(m.const_view(), y.view(), {}, {}), strata::path::vectorized);
  std::vector<float> got(x.size());
  y.copy_to_host(got.data());
  for (strata::index_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (strata::index_t c = 0; c < cols; ++c) mean += x[std::size_t(r * cols + c)];
    mean /= cols;
    for (strata::index_t c = 0; c < cols; ++c) var += (x[std::size_t(r * cols + c)] - mean) * (x[std::size_t(r * cols + c)] - mean);
    var /= cols;
    for (strata::index_t c = 0; c < cols; c += 111)
      ASSERT_NEAR(got[std::size_t(r * cols + c)], (x[std::size_t(r * cols + c)] - mean) / std::sqrt(var + 1e-5), 1e-4) << r << "," << c;
  }
}

TEST_F(OtherDevice, OperandsOnTwoDevicesAreRefusedBeforeAnyLaunch) {
  auto ref = random_records<particle>(5000, 23);
  auto one = on_one(ref);
  strata::soa_vector<particle> zero(ref);  // device 0, current
  EXPECT_THROW(strata::transform(one, zero, drift{}), strata::device_error);
  EXPECT_THROW(strata::transform(zero, one, drift{}), strata::device_error);
  EXPECT_THROW(strata::copy_if(one, zero, heavy{}), strata::device_error);
  EXPECT_EQ(zero.size(), ref.size()) << "a refused copy_if leaves its output as it was";
  EXPECT_EQ(first_difference<particle>(zero.to_host(), ref), -1);
  EXPECT_EQ(first_difference<particle>(one.to_host(), ref), -1);
  cudaStream_t s0;
  ASSERT_EQ(cudaStreamCreate(&s0), cudaSuccess);
  EXPECT_THROW(strata::transform(one, one, drift{}, s0), strata::device_error) << "a stream of device 0 for data on device 1";
  EXPECT_THROW(strata::erase_if(one, heavy{}, s0), strata::device_error);
  EXPECT_THROW(strata::sort_by(one, cell_of{}, s0), strata::device_error);
  EXPECT_EQ(first_difference<particle>(one.to_host(), ref), -1) << "refused calls leave the data as it was";
  ASSERT_EQ(cudaStreamDestroy(s0), cudaSuccess);
}
#else
TEST(OtherDevice, NeedsTheCudaBackend) { GTEST_SKIP() << "the host backend has one device"; }
#endif

}  // namespace
