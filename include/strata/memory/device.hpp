// Device queries and launch checks shared by strata's kernels (conversion, reductions, rows).
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
inline void check_launch(const char* what) { cuda_check(cudaGetLastError(), what); }
#endif

}  // namespace strata::detail
