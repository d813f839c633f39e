// Host AoS in, device SoA out (and back): pinned staging in chunks, several threads filling the
// staging buffer while the previous chunk crosses PCIe and is transposed on the device.
#pragma once

#include <strata/config.hpp>
#include <strata/convert/transpose.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace strata::detail {

/// memcpy split across threads: one thread cannot fill pinned memory as fast as PCIe drains it.
inline void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t per_thread_min = std::size_t(4) << 20;
  unsigned threads = std::min<unsigned>(8, std::max(1u, std::thread::hardware_concurrency() / 2));
  threads = unsigned(std::min<std::size_t>(threads, std::max<std::size_t>(1, bytes / per_thread_min)));
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<std::thread> pool;
  std::size_t slice = align_up(bytes / threads, 64);
  for (unsigned t = 0; t < threads; ++t) {
    std::size_t lo = std::min(bytes, t * slice), hi = t + 1 == threads ? bytes : std::min(bytes, lo + slice);
    pool.emplace_back([=] { std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo); });
  }
  for (auto& th : pool) th.join();
}

#if defined(STRATA_BACKEND_CUDA)
/// Two pinned and two device staging buffers of chunk_bytes each, and an event per slot.
struct staging {
  static constexpr std::size_t chunk_bytes = std::size_t(32) << 20;
  buffer pinned[2], device[2];
  cudaEvent_t done[2] = {nullptr, nullptr};
  explicit staging(std::size_t bytes) {
    std::size_t b = std::min(bytes, chunk_bytes);
    for (int i = 0; i < 2; ++i) {
      pinned[i] = buffer(b, memory_space::pinned);
      device[i] = buffer(b, memory_space::device);
    }
    for (auto& e : done) cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~staging() {
    for (auto e : done)
      if (e) cudaEventDestroy(e);
  }
  staging(const staging&) = delete;
};

template <std::size_t Stride>
constexpr index_t chunk_records() {
  constexpr index_t tile = tile_records<Stride>;
  return std::max<index_t>(tile, index_t(staging::chunk_bytes / Stride) / tile * tile);
}
#endif

/// n host records of T (natural layout) -> dst records [0, n). Returns when the data is in place.
template <class T>
void host_aos_to_soa(const T* host, index_t n, const soa_view<T>& dst, stream_t stream) {
  check_aos_pointer<T>("host_aos_to_soa", host, n, alignof(T));
  check_soa_destination("host_aos_to_soa", dst, n);
#if defined(STRATA_BACKEND_CUDA)
  if (n == 0) return;
  constexpr index_t c = chunk_records<sizeof(T)>();
  staging st(std::size_t(std::min(n, c)) * sizeof(T));
  for (index_t first = 0, k = 0; first < n; first += c, ++k) {
    const int b = int(k % 2);
    const index_t count = std::min(c, n - first);
    const std::size_t bytes = std::size_t(count) * sizeof(T);
    if (k >= 2) cuda_check(cudaEventSynchronize(st.done[b]), "cudaEventSynchronize (staging)");
    parallel_memcpy(st.pinned[b].data(), host + first, bytes);
    cuda_check(cudaMemcpyAsync(st.device[b].data(), st.pinned[b].data(), bytes, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync (host to device staging)");
    cuda_check(cudaEventRecord(st.done[b], stream), "cudaEventRecord");
    aos_bytes_to_soa<T, sizeof(T)>(st.device[b].data(), count, dst, first, stream);
  }
  synchronize(stream);  // the staging buffers die here
#else
  aos_bytes_to_soa<T, sizeof(T)>(reinterpret_cast<const std::byte*>(host), n, dst, 0, stream);
#endif
}

/// src records -> src.size() host records of T. Returns when the data is in place.
template <class T>
void soa_to_host_aos(const soa_view<const T>& src, T* host, stream_t stream) {
  const index_t n = src.size();
  check_aos_pointer<T>("soa_to_host_aos", host, n, alignof(T));
  check_soa_destination("soa_to_host_aos", src, n);
#if defined(STRATA_BACKEND_CUDA)
  if (n == 0) return;
  constexpr index_t c = chunk_records<sizeof(T)>();
  staging st(std::size_t(std::min(n, c)) * sizeof(T));
  index_t pending = -1;  // first record of the chunk whose bytes wait in pinned memory
  auto drain = [&](index_t first) {
    const int b = int((first / c) % 2);
    const std::size_t bytes = std::size_t(std::min(c, n - first)) * sizeof(T);
    cuda_check(cudaEventSynchronize(st.done[b]), "cudaEventSynchronize (staging)");
    parallel_memcpy(host + first, st.pinned[b].data(), bytes);
  };
  for (index_t first = 0, k = 0; first < n; first += c, ++k) {
    const int b = int(k % 2);
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
