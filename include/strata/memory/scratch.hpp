// SPDX-License-Identifier: Apache-2.0
// Temporary memory for algorithms (reduction partials, sort and compaction buffers), stream
// ordered: a block is allocated for the work queued on one stream and given back after it, so
// work on different streams never shares a block and nothing waits for the device. The resource
// is replaceable (a caching allocator of the caller's, say); the default draws on one CUDA memory
// pool per device that keeps what it has allocated, so after warm-up no call reaches cudaMalloc.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata {

class scratch_resource {
 public:
  virtual ~scratch_resource() = default;
  /// `bytes` (> 0) usable by work queued on `stream` after this call, aligned to 256 bytes; throws
  /// out_of_memory when none can be had.
  virtual void* allocate(std::size_t bytes, stream_t stream) = 0;
  /// Gives p back once the work queued on `stream` before this call has finished.
  virtual void deallocate(void* p, std::size_t bytes, stream_t stream) noexcept = 0;
};

namespace testing {
/// Scratch blocks handed out by the default resource that had to grow its pool (a cudaMalloc
/// underneath); a hot loop that keeps this still allocates nothing from the driver.
inline std::atomic<long> scratch_pool_growths{0};
}  // namespace testing

/// CUDA backend: cudaMallocFromPoolAsync / cudaFreeAsync on a pool per device (release threshold
/// at its maximum, so freed blocks stay for the next call). Host backend: aligned operator new.
class pool_scratch final : public scratch_resource {
 public:
  void* allocate(std::size_t bytes, stream_t stream) override {
    long ordinal = testing::allocation_ordinal.fetch_add(1, std::memory_order_relaxed);
    if (auto hook = testing::fail_allocation_if.load(std::memory_order_relaxed); hook && hook(ordinal, bytes, memory_space::device))
      throw out_of_memory(bytes, memory_space::device, "injected failure (scratch)");
    void* p = nullptr;
#if defined(STRATA_BACKEND_CUDA)
    int dev = 0;
    detail::cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    // Inside graph capture the block comes from cudaMallocAsync (it becomes a graph memory node);
    // strata's pool, and the query of its size that counts growth, stay outside capture.
    const bool captured = detail::stream_capturing(stream);
    cudaMemPool_t pool = captured ? nullptr : pool_of(dev);
    std::uint64_t reserved_before = 0, reserved_after = 0;
    if (!captured) (void)cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved_before);
    const cudaError_t e = captured ? cudaMallocAsync(&p, bytes, stream) : cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw out_of_memory(bytes, memory_space::device, "scratch pool of device " + std::to_string(dev));
    }
    detail::cuda_check(e, "cudaMallocFromPoolAsync (strata scratch)");
    if (!captured) (void)cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved_after);
    if (reserved_after > reserved_before) {
      testing::scratch_pool_growths.fetch_add(1, std::memory_order_relaxed);
      testing::driver_allocations.fetch_add(1, std::memory_order_relaxed);
    }
#else
    (void)stream;
    p = ::operator new(bytes, std::align_val_t{column_alignment}, std::nothrow);
    if (!p) throw out_of_memory(bytes, memory_space::device, "scratch");
#endif
    testing::live_allocations.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
  void deallocate(void* p, std::size_t, stream_t stream) noexcept override {
    if (!p) return;
    testing::live_allocations.fetch_sub(1, std::memory_order_relaxed);
#if defined(STRATA_BACKEND_CUDA)
    (void)cudaFreeAsync(p, stream);
#else
    (void)stream;
    ::operator delete(p, std::align_val_t{column_alignment});
#endif
  }

 private:
#if defined(STRATA_BACKEND_CUDA)
  cudaMemPool_t pool_of(int dev) {
    std::lock_guard<std::mutex> lock(m_);
    if (std::size_t(dev) >= pools_.size()) pools_.resize(std::size_t(dev) + 1, nullptr);
    if (!pools_[dev]) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      cudaMemPool_t pool = nullptr;
      detail::cuda_check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (strata scratch)");
      std::uint64_t keep = ~std::uint64_t(0);
      detail::cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
      pools_[dev] = pool;
    }
    return pools_[dev];
  }
  std::mutex m_;
  std::vector<cudaMemPool_t> pools_;  // never destroyed: blocks may still be in flight at exit
#endif
};

namespace detail {
inline pool_scratch& default_scratch_resource() {
  static pool_scratch* r = new pool_scratch;  // outlives every static that may free into it
  return *r;
}
inline std::atomic<scratch_resource*> current_scratch{nullptr};
}  // namespace detail

/// The resource strata's algorithms take scratch from (the per-device pool unless replaced).
inline scratch_resource& scratch() {
  scratch_resource* r = detail::current_scratch.load(std::memory_order_acquire);
  return r ? *r : detail::default_scratch_resource();
}
/// Replaces the scratch resource for the whole process (nullptr restores the default); returns the
/// previous one. The resource must outlive every algorithm call that may use it.
inline scratch_resource* set_scratch_resource(scratch_resource* r) {
  return detail::current_scratch.exchange(r, std::memory_order_acq_rel);
}

namespace detail {
/// Scratch for work that one caller queues on one stream, call after call (a distributed
/// container's rank): a freed block goes on this cache's list instead of back to the resource,
/// and a later request takes a listed block that holds it. Work on the one stream runs in order,
/// so a block given back behind some work and handed out again before more is as safe as a pool's
/// stream-ordered reuse, and a steady loop makes no call into the driver: with one host thread
/// per GPU, each pool allocation and free waited for the others' (about 9 us a pair with 4
/// threads, 1 us with one). Misses go to scratch() in sizes of a quarter-power-of-two step (at
/// most a quarter more than asked), so requests that vary a little from call to call find the
/// same block; a request takes the smallest listed block that holds it and is at most twice the
/// size a miss would ask for. Each block returns to the resource it came from; at most max_listed
/// blocks stay listed, the one listed longest ago going back first. One thread at a time, one
/// stream only; the device is the one current at construction (the stream's), on which listed
/// blocks go back whatever device is current then.
class stream_scratch final : public scratch_resource {
 public:
  static constexpr std::size_t max_listed = 16;
  explicit stream_scratch(stream_t stream) : stream_(stream), device_(current_device()) {}
  stream_scratch(const stream_scratch&) = delete;
  stream_scratch& operator=(const stream_scratch&) = delete;
  ~stream_scratch() override { release(); }

  /// The size a miss asks the resource for: bytes rounded up to 256 and then to a quarter of the
  /// power of two below it.
  static std::size_t size_class(std::size_t bytes) {
    if (bytes <= 256) return 256;
    std::size_t base = 256;
    while (base < (bytes - 1) / 2 + 1) base *= 2;  // base < bytes <= 2 base
    const std::size_t step = base / 4;
    return (bytes + step - 1) / step * step;
  }

  void* allocate(std::size_t bytes, stream_t stream) override {
    if (stream != stream_) throw std::logic_error("strata: stream_scratch serves one stream; a block was asked for on another");
    const std::size_t size = size_class(bytes);
    std::size_t best = listed_.size();
    for (std::size_t i = 0; i < listed_.size(); ++i) {
      const std::size_t b = listed_[i].bytes;
      if (b >= bytes && b / 2 <= size && (best == listed_.size() || b < listed_[best].bytes)) best = i;
    }
    out_.reserve(out_.size() + 1);  // the pushes below cannot throw once a block is held
    if (best != listed_.size()) {
      const block b = listed_[best];
      listed_.erase(listed_.begin() + std::ptrdiff_t(best));
      out_.push_back(b);
      return b.p;
    }
    scratch_resource& r = scratch();
    void* p = r.allocate(size, stream_);
    out_.push_back(block{p, size, &r});
    return p;
  }
  /// p comes back behind the work queued on the stream it was asked for on (scratch_block does so).
  void deallocate(void* p, std::size_t, stream_t) noexcept override {
    if (!p) return;
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (out_[i].p == p) {
        const block b = out_[i];
        out_.erase(out_.begin() + std::ptrdiff_t(i));
        try {
          listed_.push_back(b);
        } catch (...) {
          b.from->deallocate(b.p, b.bytes, stream_);
          return;
        }
        if (listed_.size() > max_listed) {
          listed_.front().from->deallocate(listed_.front().p, listed_.front().bytes, stream_);
          listed_.erase(listed_.begin());
        }
        return;
      }
    assert(false && "strata: stream_scratch was handed back a block it did not hand out");
  }
  /// Gives every listed block back to its resource, behind the work queued on the stream, with the
  /// stream's device current (a resource such as the default pool frees into the current device's
  /// pool).
  void release() noexcept {
    if (listed_.empty()) return;
    try {
      device_guard g(device_);
      for (const block& b : listed_) b.from->deallocate(b.p, b.bytes, stream_);
      listed_.clear();
    } catch (...) {  // the device cannot be made current: the context is gone, and its memory with it
    }
  }
  /// Blocks and bytes listed for reuse.
  std::size_t listed_blocks() const { return listed_.size(); }
  std::size_t listed_bytes() const {
    std::size_t n = 0;
    for (const block& b : listed_) n += b.bytes;
    return n;
  }

 private:
  struct block {
    void* p;
    std::size_t bytes;
    scratch_resource* from;
  };
  stream_t stream_;
  int device_;
  std::vector<block> listed_, out_;  // listed_: oldest first
};

/// A scratch block for one operation on one stream, given back (stream ordered) on scope exit.
class scratch_block {
 public:
  scratch_block(std::size_t bytes, stream_t stream, scratch_resource& r = scratch())
      : r_(&r), bytes_(bytes), stream_(stream), p_(bytes ? r.allocate(bytes, stream) : nullptr) {}
  ~scratch_block() { r_->deallocate(p_, bytes_, stream_); }
  scratch_block(const scratch_block&) = delete;
  scratch_block& operator=(const scratch_block&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(p_); }
  template <class U>
  U* as(std::size_t byte_offset = 0) const {
    return reinterpret_cast<U*>(data() + byte_offset);
  }

 private:
  scratch_resource* r_;
  std::size_t bytes_;
  stream_t stream_;
  void* p_;
};
}  // namespace detail

}  // namespace strata
