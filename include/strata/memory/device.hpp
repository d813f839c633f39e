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

/// Blocks of `threads` threads of `kernel` the current device runs at once (at least one per SM).
/// Kernels that loop over their work launch this many; the figure is kept per kernel and device.
template <class Kernel>
index_t resident_blocks(Kernel* kernel, int threads, std::size_t dynamic_smem = 0) {
  // One entry per kernel signature, refreshed when the kernel, device or block size changes.
  static thread_local const void* cached_kernel = nullptr;
  static thread_local int cached_device = -1, cached_threads = 0;
  static thread_local std::size_t cached_smem = 0;
  static thread_local index_t blocks = 0;
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  if (reinterpret_cast<const void*>(kernel) != cached_kernel || dev != cached_device || threads != cached_threads ||
      dynamic_smem != cached_smem) {
    int per_sm = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    blocks = index_t(std::max(1, per_sm)) * current_device_shape().sms;
    cached_kernel = reinterpret_cast<const void*>(kernel), cached_device = dev, cached_threads = threads;
    cached_smem = dynamic_smem;
  }
  return blocks;
}
#endif

}  // namespace strata::detail
