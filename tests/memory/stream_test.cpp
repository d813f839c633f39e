// Streams handed to strata: a live stream of the current device works; a destroyed stream, or one
// of another device, is refused with an exception that says so, before any work is queued.
#include <strata/strata.hpp>

#include "common/functors.hpp"
#include "common/records.hpp"
#include "common/testing.hpp"

#include <gtest/gtest.h>

using namespace strata_test;

TEST(Streams, WorkOnALiveStreamAndRefuseADestroyedOne) {
#if defined(STRATA_BACKEND_CUDA)
  STRATA_SEED_TRACE();
  auto ref = random_records<particle>(1000);
  strata::soa_vector<particle> v(ref), out(1000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  EXPECT_EQ(strata::transform(v, out, drift{}, s), strata::path::vectorized);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  try {
    strata::transform(v, out, drift{}, s);
    FAIL() << "a destroyed stream was accepted";
  } catch (const strata::cuda_error& e) {
    EXPECT_NE(std::string(e.what()).find("stream is not usable"), std::string::npos) << e.what();
  }
  EXPECT_THROW(v.copy_to_async(out, s), strata::cuda_error);
  EXPECT_EQ(first_difference<particle>(v.to_host(), ref), -1);  // nothing ran on the bad stream
#else
  GTEST_SKIP() << "the host backend has no streams (operations complete before returning)";
#endif
}

TEST(Streams, StreamOfAnotherDeviceIsRefused) {
#if defined(STRATA_BACKEND_CUDA)
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs two GPUs (this machine has " << devices << ")";
  cudaStream_t s;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  strata::soa_vector<particle> v(10), out(10);
  EXPECT_THROW(strata::transform(v, out, drift{}, s), std::invalid_argument);
#else
  GTEST_SKIP() << "the host backend has no devices";
#endif
}
