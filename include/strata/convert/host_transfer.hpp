// SPDX-License-Identifier: Apache-2.0
// Host AoS in, device SoA out (and back): pinned staging in chunks, several threads filling the
// staging buffer while the previous chunk crosses PCIe and is transposed on the device. Records
// already in page-locked memory skip the staging copy and cross PCIe from where they are.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::testing {
/// Chunks of host records copied through pinned staging by the host transfers (pageable records);
/// page-locked records cross without it.
inline std::atomic<long> staged_host_chunks{0};
}  // namespace strata::testing

namespace strata::detail {

/// Waits until done() holds: spins for up to `spin` (half a millisecond by default), then returns
/// false so the caller can block. A staging transfer hands the pool a chunk every few hundred
/// microseconds; waking sleeping threads through a condition variable each time cost about 10% of
/// a 1 GiB transfer on an H200 host of 16 cores, which spinning between chunks avoids.
template <class Done>
bool spin_until(Done done, std::chrono::microseconds spin = std::chrono::microseconds(500)) {
  const auto limit = std::chrono::steady_clock::now() + spin;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
#if defined(__SSE2__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() > limit) return false;
  }
}

/// A few threads kept for staging copies: one thread cannot fill pinned memory as fast as PCIe
/// drains it, and starting threads for every chunk would cost more than the copy saves.
class copy_pool {
 public:
  static copy_pool& instance() {
    static copy_pool pool;
    return pool;
  }
  /// Runs job(0..parts-1) on the pool and the calling thread; returns when all are done.
  template <class Job>
  void run(unsigned parts, Job job) {
    std::unique_lock<std::mutex> lock(run_mutex_);  // one run at a time
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = [&job](unsigned k) { job(k); };
      parts_ = parts;
      next_ = 0;
      pending_.store(parts);
      generation_.store(generation_.load() + 1);
    }
    cv_.notify_all();
    work();
    if (!spin_until([&] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> g(m_);
      done_cv_.wait(g, [&] { return pending_.load() == 0; });
    }
  }
  unsigned threads() const { return unsigned(workers_.size()) + 1; }
  ~copy_pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  copy_pool() {
    unsigned n = std::min(16u, std::max(2u, std::thread::hardware_concurrency())) - 1;
    for (unsigned i = 0; i < n; ++i)
      workers_.emplace_back([this] {
        unsigned long seen = 0;
        for (;;) {
          auto woken = [&] { return stop_.load() || generation_.load() != seen; };
          if (!spin_until(woken)) {
            std::unique_lock<std::mutex> g(m_);
            cv_.wait(g, woken);
          }
          {
            std::lock_guard<std::mutex> g(m_);
            if (stop_.load()) return;
            seen = generation_.load();
          }
          work();
        }
      });
  }
  // Parts are claimed under m_; job_ is replaced only by the next run(), which cannot start before
  // every claimed part has finished (pending_ == 0).
  void work() {
    for (;;) {
      unsigned k;
      {
        std::lock_guard<std::mutex> g(m_);
        if (next_ >= parts_) return;
        k = next_++;
      }
      job_(k);
      std::lock_guard<std::mutex> g(m_);
      if (pending_.fetch_sub(1) == 1) done_cv_.notify_all();
    }
  }
  std::mutex run_mutex_, m_;
  std::condition_variable cv_, done_cv_;
  std::function<void(unsigned)> job_;
  unsigned parts_ = 0, next_ = 0;
  // Written under m_, also read without it by spinning threads.
  std::atomic<unsigned> pending_{0};
  std::atomic<unsigned long> generation_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

/// memcpy split across the pool's threads in slices of at least 2 MiB.
inline void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t min_slice = std::size_t(2) << 20;
  if (bytes == 0) return;  // an empty range may come with null pointers, which memcpy must not see
  if (bytes < 2 * min_slice) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto& pool = copy_pool::instance();
  const unsigned parts = unsigned(std::min<std::size_t>(pool.threads(), bytes / min_slice));
  const std::size_t slice = align_up((bytes + parts - 1) / parts, 64);
  pool.run(parts, [&](unsigned k) {
    std::size_t lo = std::min(bytes, k * slice), hi = std::min(bytes, lo + slice);
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

#if defined(STRATA_BACKEND_CUDA)
/// Three pinned and three device staging buffers of chunk_bytes each, and an event per slot: the
/// host fills one while a second crosses PCIe and a third waits, which absorbs the jitter of the
/// copy threads. Kept per thread and device and reused: pinning memory costs more than moving it.
struct staging {
  static constexpr std::size_t chunk_bytes = std::size_t(32) << 20;
  static constexpr int slots = 3;
  buffer pinned[slots], device[slots];
  cudaEvent_t done[slots] = {};
  int device_id = -1;

  static staging& get(std::size_t bytes) {
    static thread_local staging s;
    int dev = 0;
    cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    std::size_t want = std::min(bytes, chunk_bytes);
    if (s.device_id != dev || s.pinned[0].bytes() < want) s.reset(want, dev);
    return s;
  }
  ~staging() { release_events(); }

 private:
  staging() = default;
  void reset(std::size_t b, int dev) {
    staging fresh;  // allocate first: on failure the old buffers stay as they were
    for (int i = 0; i < slots; ++i) {
      fresh.pinned[i] = buffer(b, memory_space::pinned);
      fresh.device[i] = buffer(b, memory_space::device);
    }
    for (auto& e : fresh.done) cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    release_events();
    for (int i = 0; i < slots; ++i) {
      pinned[i].swap(fresh.pinned[i]);
      device[i].swap(fresh.device[i]);
      std::swap(done[i], fresh.done[i]);
    }
    device_id = dev;
  }
  void release_events() {
    for (auto& e : done)
      if (e) cudaEventDestroy(e), e = nullptr;
  }
};

template <std::size_t Stride>
constexpr index_t chunk_records() {
  constexpr index_t tile = warp_tile_records<Stride>;
  return std::max<index_t>(tile, index_t(staging::chunk_bytes / Stride) / tile * tile);
}

/// Whether the host range [p, p + bytes) is page-locked (cudaMallocHost, strata's pinned memory,
/// or pages the caller registered with cudaHostRegister) at both ends. Such records cross PCIe
/// straight from where they are: the staging copy is what holds a pageable transfer below a
/// pinned one (16 threads fill pinned memory at 52-81 GB/s on an H100 host, and that rate
/// falls while the DMA engine reads host memory beside them), and registering a caller's pages
/// for one transfer costs about three times the copy. A device pointer throws: its records are
/// for aos_to_soa, not for a host transfer.
inline bool host_range_pinned(const char* op, const void* p, std::size_t bytes) {
  const memory_location first = locate(p), last = locate(static_cast<const char*>(p) + bytes - 1);
  if (first.space == memory_space::device || last.space == memory_space::device)
    throw memory_space_error(std::string("strata: ") + op + ": the host records are in device memory (device " +
                             std::to_string(first.space == memory_space::device ? first.device : last.device) + "); aos_to_soa / soa_to_aos convert on the device");
  return first.space == memory_space::pinned && last.space == memory_space::pinned;
}
#endif

/// n host records of T (natural layout) -> dst records [0, n). Returns when the data is in place.
template <class T, class M>
void host_aos_to_soa(const T* host, index_t n, const basic_view<T, M>& dst, stream_t stream) {
  check_aos_pointer<T>("host_aos_to_soa", host, n, alignof(T));
  check_soa_destination("host_aos_to_soa", dst, n);
  launch_scope scope("strata host AoS -> SoA", stream, {described(dst, "SoA output")});
#if defined(STRATA_BACKEND_CUDA)
  if (n == 0) return;
  constexpr index_t c = chunk_records<sizeof(T)>();
  const bool pinned = host_range_pinned("host_aos_to_soa", host, std::size_t(n) * sizeof(T));
  staging& st = staging::get(std::size_t(std::min(n, c)) * sizeof(T));
  for (index_t first = 0, k = 0; first < n; first += c, ++k) {
    const int b = int(k % staging::slots);
    const index_t count = std::min(c, n - first);
    const std::size_t bytes = std::size_t(count) * sizeof(T);
    // Pinned records go straight to the device slot, whose earlier transpose precedes this copy on
    // the stream; pageable ones are copied into the pinned slot once PCIe has drained it.
    const void* from = host + first;
    if (!pinned) {
      if (k >= staging::slots) cuda_check(cudaEventSynchronize(st.done[b]), "cudaEventSynchronize (staging)");
      parallel_memcpy(st.pinned[b].data(), host + first, bytes);
      testing::staged_host_chunks.fetch_add(1, std::memory_order_relaxed);
      from = st.pinned[b].data();
    }
    cuda_check(cudaMemcpyAsync(st.device[b].data(), from, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (host to device staging)");
    cuda_check(cudaEventRecord(st.done[b], stream), "cudaEventRecord");
    aos_bytes_to_soa<T, sizeof(T)>(st.device[b].data(), count, dst, first, stream);
  }
  synchronize(stream);  // the staging buffers die here
#else
  aos_bytes_to_soa<T, sizeof(T)>(reinterpret_cast<const std::byte*>(host), n, dst, 0, stream);
#endif
}

/// src records -> src.size() host records of T. Returns when the data is in place.
template <class T, class M>
void soa_to_host_aos(const basic_view<const T, M>& src, T* host, stream_t stream) {
  const index_t n = src.size();
  check_aos_pointer<T>("soa_to_host_aos", host, n, alignof(T));
  check_soa_destination("soa_to_host_aos", src, n);
  launch_scope scope("strata SoA -> host AoS", stream, {described(src, "SoA input")});
#if defined(STRATA_BACKEND_CUDA)
  if (n == 0) return;
  constexpr index_t c = chunk_records<sizeof(T)>();
  staging& st = staging::get(std::size_t(std::min(n, c)) * sizeof(T));
  if (host_range_pinned("soa_to_host_aos", host, std::size_t(n) * sizeof(T))) {
    // Pinned records are written straight from the device slots; one wait at the end.
    for (index_t first = 0, k = 0; first < n; first += c, ++k) {
      const int b = int(k % staging::slots);
      const index_t count = std::min(c, n - first);
      soa_to_aos_bytes<T, sizeof(T)>(src, first, st.device[b].data(), count, stream);
      cuda_check(cudaMemcpyAsync(host + first, st.device[b].data(), std::size_t(count) * sizeof(T), cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync (device staging to host)");
    }
    synchronize(stream);
    return;
  }
  index_t pending = -1;  // first record of the chunk whose bytes wait in pinned memory
  auto drain = [&](index_t first) {
    const int b = int((first / c) % staging::slots);
    const std::size_t bytes = std::size_t(std::min(c, n - first)) * sizeof(T);
    cuda_check(cudaEventSynchronize(st.done[b]), "cudaEventSynchronize (staging)");
    parallel_memcpy(host + first, st.pinned[b].data(), bytes);
    testing::staged_host_chunks.fetch_add(1, std::memory_order_relaxed);
  };
  for (index_t first = 0, k = 0; first < n; first += c, ++k) {
    const int b = int(k % staging::slots);
    const index_t count = std::min(c, n - first);
    soa_to_aos_bytes<T, sizeof(T)>(src, first, st.device[b].data(), count, stream);
    cuda_check(cudaMemcpyAsync(st.pinned[b].data(), st.device[b].data(), std::size_t(count) * sizeof(T),
                               cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync (device staging to host)");
    cuda_check(cudaEventRecord(st.done[b], stream), "cudaEventRecord");
    if (pending >= 0) drain(pending);  // overlaps with this chunk's transpose and copy
    pending = first;
  }
  drain(pending);
#else
  soa_to_aos_bytes<T, sizeof(T)>(src, 0, reinterpret_cast<std::byte*>(host), n, stream);
#endif
}

}  // namespace strata::detail
