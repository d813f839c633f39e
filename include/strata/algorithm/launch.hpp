// Launch helpers for strata's own kernels: a grid that fills the device once, and error checks.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>

#include <algorithm>

namespace strata::detail {

#if defined(STRATA_BACKEND_CUDA)
struct device_shape {
  int sms = 0;
  int max_threads_per_sm = 0;
};
inline const device_shape& current_device_shape() {
  static thread_local int cached_device = -1;
  static thread_local device_shape shape;
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  if (dev != cached_device) {
    cuda_check(cudaDeviceGetAttribute(&shape.sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    cuda_check(cudaDeviceGetAttribute(&shape.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
               "cudaDeviceGetAttribute");
    cached_device = dev;
  }
  return shape;
}
/// Blocks for a grid-stride loop over `work` items: at most one full wave of resident blocks.
inline int grid_for(index_t work, int threads) {
  const auto& s = current_device_shape();
  index_t wave = index_t(s.sms) * (s.max_threads_per_sm / threads);
  return int(std::max<index_t>(1, std::min<index_t>((work + threads - 1) / threads, wave)));
}
inline void check_launch(const char* what) { cuda_check(cudaGetLastError(), what); }
#endif

}  // namespace strata::detail
