// SPDX-License-Identifier: Apache-2.0
// Raw memory for each space (device, pinned host, host) and the byte copies between them. The host
// backend maps every space to host memory under the same API. A test hook can fail any allocation.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace strata {

#if defined(STRATA_BACKEND_CUDA)
using stream_t = cudaStream_t;
#else
struct host_stream;
/// The host backend runs every "asynchronous" operation to completion before returning.
using stream_t = host_stream*;
#endif

namespace testing {
/// Fault injection: when set, called before every allocation with its ordinal (0, 1, ...); returning
/// true makes that allocation fail with out_of_memory. Off (nullptr) costs one predictable branch.
using allocation_hook = bool (*)(long ordinal, std::size_t bytes, memory_space space);
inline std::atomic<allocation_hook> fail_allocation_if{nullptr};
inline std::atomic<long> allocation_ordinal{0};
/// Allocations made and not yet freed, for leak checks in tests.
inline std::atomic<long> live_allocations{0};
/// Allocations that reached the CUDA driver (cudaMalloc, cudaMallocHost, and scratch-pool growth):
/// a hot loop that keeps this still makes none.
inline std::atomic<long> driver_allocations{0};
}  // namespace testing

/// Allocates bytes aligned to column_alignment; throws out_of_memory (strong guarantee: nothing held).
inline void* allocate(std::size_t bytes, memory_space space) {
  if (bytes == 0) return nullptr;
  long ordinal = testing::allocation_ordinal.fetch_add(1, std::memory_order_relaxed);
  if (auto hook = testing::fail_allocation_if.load(std::memory_order_relaxed); hook && hook(ordinal, bytes, space))
    throw out_of_memory(bytes, space, "injected failure");
  void* p = nullptr;
#if defined(STRATA_BACKEND_CUDA)
  if (space != memory_space::host) {
    testing::driver_allocations.fetch_add(1, std::memory_order_relaxed);
    cudaError_t e = space == memory_space::device ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw out_of_memory(bytes, space, cudaGetErrorString(e));
    }
    detail::cuda_check(e, space == memory_space::device ? "cudaMalloc" : "cudaMallocHost");
    testing::live_allocations.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
#endif
  p = ::operator new(bytes, std::align_val_t{column_alignment}, std::nothrow);
  if (!p) throw out_of_memory(bytes, space);
  testing::live_allocations.fetch_add(1, std::memory_order_relaxed);
  return p;
}

inline void deallocate(void* p, memory_space space) noexcept {
  if (!p) return;
  testing::live_allocations.fetch_sub(1, std::memory_order_relaxed);
#if defined(STRATA_BACKEND_CUDA)
  if (space == memory_space::device) { (void)cudaFree(p); return; }
  if (space == memory_space::pinned) { (void)cudaFreeHost(p); return; }
#else
  (void)space;
#endif
  ::operator delete(p, std::align_val_t{column_alignment});
}

namespace detail {
/// A stream handed to strata must belong to the current device and be alive: checked before use so
/// the failure names the stream instead of surfacing later as an unrelated launch error.
inline void check_stream(stream_t stream, const char* operation) {
#if defined(STRATA_BACKEND_CUDA)
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return;
  // A stream being captured into a graph may not be asked for its device; its work is checked
  // when the graph is instantiated.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &capture);
  if (e == cudaSuccess && capture != cudaStreamCaptureStatusNone) return;
  int stream_device = -1, current = -1;
  if (e == cudaSuccess) e = cudaStreamGetDevice(stream, &stream_device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw cuda_error(std::string(operation) + ": the stream is not usable (destroyed, or not a stream)", int(e),
                     cudaGetErrorString(e));
  }
  cuda_check(cudaGetDevice(&current), "cudaGetDevice");
  if (stream_device != current)
    throw std::invalid_argument("strata: " + std::string(operation) + ": the stream belongs to device " +
                                std::to_string(stream_device) + " but device " + std::to_string(current) + " is current");
#else
  (void)stream, (void)operation;
#endif
}

#if defined(STRATA_BACKEND_CUDA)
/// Whether work queued on `stream` now goes into a graph being captured. A stream the runtime
/// cannot answer for counts as captured: callers then neither wait on it nor use memory outside
/// the graph's own.
inline bool stream_capturing(stream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return capture != cudaStreamCaptureStatusNone;
}
#endif

/// Refuses, before anything changes, a container that must grow for work queued on a stream being
/// captured into a CUDA graph: growing allocates and fills device memory outside the stream, which
/// the capture forbids (the capture would be invalidated). The caller reserves room beforehand.
inline void check_growth_allowed(stream_t stream, const char* op, const char* what, std::size_t have, std::size_t need) {
#if defined(STRATA_BACKEND_CUDA)
  if (need > have && stream_capturing(stream))
    throw std::invalid_argument(std::string(op) + ": the " + what + " must grow from " + std::to_string(have) + " to " + std::to_string(need) +
                                " records while the stream is captured into a CUDA graph, where allocating is not allowed; reserve(" +
                                std::to_string(need) + ") it before the capture");
#else
  (void)stream, (void)op, (void)what, (void)have, (void)need;
#endif
}
/// Refuses, before anything is queued, an operation that must wait for the stream (it returns a
/// count the device computes) while the stream is captured into a CUDA graph, where a wait would
/// invalidate the capture.
inline void check_not_capturing(stream_t stream, const char* op, const char* why) {
#if defined(STRATA_BACKEND_CUDA)
  if (stream_capturing(stream))
    throw std::invalid_argument(std::string(op) + " " + why + ", which a stream being captured into a CUDA graph cannot do; call it outside the capture");
#else
  (void)stream, (void)op, (void)why;
#endif
}
}  // namespace detail

/// Stream-ordered byte copy between any two spaces; returns before completion on the CUDA backend.
inline void copy_bytes_async(void* dst, const void* src, std::size_t bytes, stream_t stream) {
  if (bytes == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  detail::check_stream(stream, "copy");
  detail::cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
#else
  (void)stream;
  std::memcpy(dst, src, bytes);
#endif
}

inline void synchronize(stream_t stream) {
#if defined(STRATA_BACKEND_CUDA)
  detail::cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#else
  (void)stream;
#endif
}

inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  copy_bytes_async(dst, src, bytes, stream_t{});
  synchronize(stream_t{});
}

/// Sets bytes of memory in `space`: stream-ordered on the device, immediate on host memory.
inline void fill_bytes_async(void* dst, int value, std::size_t bytes, stream_t stream, memory_space space) {
  if (bytes == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  if (space == memory_space::device) {
    detail::cuda_check(cudaMemsetAsync(dst, value, bytes, stream), "cudaMemsetAsync");
    return;
  }
  if (space == memory_space::pinned) synchronize(stream);  // earlier copies into it may be in flight
#else
  (void)stream, (void)space;
#endif
  std::memset(dst, value, bytes);
}

/// Copies `rows` rows of `width` bytes between pitched layouts (any spaces); synchronous.
inline void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t rows) {
  if (rows == 0 || width == 0) return;
#if defined(STRATA_BACKEND_CUDA)
  detail::cuda_check(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault), "cudaMemcpy2D");
#else
  for (std::size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
#endif
}

/// Owns one allocation; moves, never copies. The allocation can be shared (share()): an exporter
/// that hands it to another library (DLPack) keeps it alive past the buffer's own life, so a
/// container that grows or is destroyed never frees memory a consumer still reads.
class buffer {
 public:
  buffer() = default;
  buffer(std::size_t bytes, memory_space space) : bytes_(bytes), space_(space) {
    if (void* p = allocate(bytes, space)) p_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), release{space});  // frees p if this throws
  }
  buffer(buffer&& o) noexcept : p_(std::move(o.p_)), bytes_(std::exchange(o.bytes_, 0)), space_(o.space_) {}
  buffer& operator=(buffer&& o) noexcept {
    buffer(std::move(o)).swap(*this);
    return *this;
  }
  void swap(buffer& o) noexcept {
    p_.swap(o.p_);
    std::swap(bytes_, o.bytes_);
    std::swap(space_, o.space_);
  }
  std::byte* data() const noexcept { return p_.get(); }
  std::size_t bytes() const noexcept { return bytes_; }
  memory_space space() const noexcept { return space_; }
  /// Shared ownership of the allocation: it is freed when the buffer and every share are gone.
  std::shared_ptr<const void> share() const noexcept { return p_; }

 private:
  struct release {
    memory_space space;
    void operator()(std::byte* p) const noexcept { deallocate(p, space); }
  };
  std::shared_ptr<std::byte> p_;
  std::size_t bytes_ = 0;
  memory_space space_ = memory_space::host;
};

}  // namespace strata
