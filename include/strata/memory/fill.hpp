// SPDX-License-Identifier: Apache-2.0
// Fills a typed range in any memory space with one value (device memory through Thrust).
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>

#include <thrust/execution_policy.h>
#include <thrust/fill.h>

#include <algorithm>

namespace strata::detail {

template <class F>
void fill_n(F* p, index_t n, const F& value, memory_space space) {
  if (n <= 0) return;
#if defined(STRATA_BACKEND_CUDA)
  if (space == memory_space::device) {
    thrust::fill_n(thrust::device, p, n, value);
    cuda_check(cudaDeviceSynchronize(), "fill (thrust::fill_n)");
    return;
  }
#else
  (void)space;
#endif
  std::fill_n(p, n, value);
}

}  // namespace strata::detail
