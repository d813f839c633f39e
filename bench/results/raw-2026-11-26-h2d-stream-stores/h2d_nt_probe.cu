// Probe (not product code): does the staging copy of host AoS -> device SoA gain from
// non-temporal (streaming) stores into pinned memory? The copy threads write each staging chunk
// with ordinary stores (glibc's memcpy below its non-temporal threshold, which is a fraction of
// the 300 MiB L3 these VMs report), so every written line is first read from DRAM (read for
// ownership) while the DMA engine reads the previous chunk and the threads read the source:
// 4 units of host DRAM traffic per byte moved instead of 3.
// Variants, interleaved, median of rounds, 1 GiB of 28-byte particles in a pageable vector:
//   pinned      cudaMemcpy of the same bytes from pinned memory (the reference)
//   library     strata::detail::host_aos_to_soa as built (memcpy, 32 MiB chunks, >= 2 MiB slices)
//   pipe-memcpy the same pipeline re-implemented here with memcpy (should match library)
//   pipe-nt     the same pipeline, slices copied with _mm_stream_si128 + sfence
//   pipe-memcpy-4MiB / -8MiB: memcpy in slices of at least 4 / 8 MiB (8 / 4 threads a chunk)
//   fill-memcpy / fill-nt: the staging copy alone (1 GiB into a 32 MiB pinned ring, no DMA)
//   register-1GiB: cudaHostRegister of the caller's vector, one copy from it, cudaHostUnregister
//   register-32MiB: the same per 32 MiB chunk, the next chunk registered while one crosses PCIe
//   register-only: cudaHostRegister + cudaHostUnregister of 1 GiB, no copy
//   library-pinned-source: host_aos_to_soa from records in strata's pinned buffer
//   library-registered: host_aos_to_soa from a std::vector the caller registered once
//   library-to-pinned / library-to-pageable: soa_to_host_aos into pinned memory / a std::vector
// Build: nvcc -std=c++20 -O3 -I include --expt-relaxed-constexpr --extended-lambda -arch=sm_90 h2d_nt_probe.cu
#include <strata/container/soa_vector.hpp>
#include <strata/convert/host_transfer.hpp>

#include <boost/hana.hpp>
#include <emmintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, mass));
};

namespace sd = strata::detail;

void nt_copy(void* dst, const void* src, std::size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
  _mm_sfence();
}

using copy_fn = void (*)(void*, const void*, std::size_t);
void plain_copy(void* d, const void* s, std::size_t b) { std::memcpy(d, s, b); }

void par_copy(void* dst, const void* src, std::size_t bytes, copy_fn copy, std::size_t min_slice) {
  auto& pool = sd::copy_pool::instance();
  const unsigned parts = unsigned(std::max<std::size_t>(1, std::min<std::size_t>(pool.threads(), bytes / min_slice)));
  const std::size_t slice = ((bytes + parts - 1) / parts + 63) / 64 * 64;
  pool.run(parts, [&](unsigned k) {
    std::size_t lo = std::min(bytes, k * slice), hi = std::min(bytes, lo + slice);
    copy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

template <class V>
void pipeline(const particle* host, strata::index_t n, const V& dst, copy_fn copy, std::size_t min_slice) {
  constexpr strata::index_t c = sd::chunk_records<sizeof(particle)>();
  sd::staging& st = sd::staging::get(std::size_t(std::min(n, c)) * sizeof(particle));
  const strata::stream_t stream{};
  for (strata::index_t first = 0, k = 0; first < n; first += c, ++k) {
    const int b = int(k % sd::staging::slots);
    const strata::index_t count = std::min(c, n - first);
    const std::size_t bytes = std::size_t(count) * sizeof(particle);
    if (k >= sd::staging::slots) cudaEventSynchronize(st.done[b]);
    par_copy(st.pinned[b].data(), host + first, bytes, copy, min_slice);
    cudaMemcpyAsync(st.device[b].data(), st.pinned[b].data(), bytes, cudaMemcpyHostToDevice, stream);
    cudaEventRecord(st.done[b], stream);
    sd::aos_bytes_to_soa<particle, sizeof(particle)>(st.device[b].data(), count, dst, first, stream);
  }
  cudaStreamSynchronize(stream);
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7, reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::size_t n = (std::size_t(1) << 30) / sizeof(particle), bytes = n * sizeof(particle);
  std::vector<particle> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = particle{float(i), 1, 2, 3, 4, 5, float(i % 97)};
  strata::soa_vector<particle> dst(n);
  strata::buffer pinned(bytes, strata::memory_space::pinned), dev(bytes, strata::memory_space::device);
  std::memcpy(pinned.data(), host.data(), bytes);
  std::vector<particle> registered(host), host_out(n);
  cudaHostRegister(registered.data(), bytes, cudaHostRegisterDefault);
  strata::buffer pinned_out(bytes, strata::memory_space::pinned);
  const std::size_t ring_bytes = std::size_t(32) << 20;
  strata::buffer ring(ring_bytes, strata::memory_space::pinned);
  auto fill = [&](copy_fn copy) {
    for (std::size_t at = 0; at < bytes; at += ring_bytes)
      par_copy(ring.data(), reinterpret_cast<const char*>(host.data()) + at, std::min(ring_bytes, bytes - at), copy, std::size_t(2) << 20);
  };
  std::vector<std::pair<std::string, std::function<void()>>> variants = {
      {"pinned", [&] { cudaMemcpy(dev.data(), pinned.data(), bytes, cudaMemcpyHostToDevice); }},
      {"library", [&] { sd::host_aos_to_soa(host.data(), strata::index_t(n), dst.view(), strata::stream_t{}); }},
      {"pipe-memcpy", [&] { pipeline(host.data(), strata::index_t(n), dst.view(), plain_copy, std::size_t(2) << 20); }},
      {"pipe-nt", [&] { pipeline(host.data(), strata::index_t(n), dst.view(), nt_copy, std::size_t(2) << 20); }},
      {"pipe-nt-1MiB", [&] { pipeline(host.data(), strata::index_t(n), dst.view(), nt_copy, std::size_t(1) << 20); }},
      {"pipe-memcpy-4MiB", [&] { pipeline(host.data(), strata::index_t(n), dst.view(), plain_copy, std::size_t(4) << 20); }},
      {"pipe-memcpy-8MiB", [&] { pipeline(host.data(), strata::index_t(n), dst.view(), plain_copy, std::size_t(8) << 20); }},
      {"register-1GiB", [&] {
         cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault);
         cudaMemcpy(dev.data(), host.data(), bytes, cudaMemcpyHostToDevice);
         cudaHostUnregister(host.data());
       }},
      {"register-32MiB", [&] {
         // Page-aligned pieces inside the vector (its ends stay unregistered: copied as pageable).
         char* h = reinterpret_cast<char*>(host.data());
         const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(h) + 4095) / 4096 * 4096, hi = (reinterpret_cast<std::uintptr_t>(h) + bytes) / 4096 * 4096;
         char* d = reinterpret_cast<char*>(dev.data());
         cudaMemcpy(d, h, lo - reinterpret_cast<std::uintptr_t>(h), cudaMemcpyHostToDevice);
         std::vector<char*> regs;
         for (std::uintptr_t at = lo; at < hi; at += ring_bytes) {
           const std::size_t len = std::min<std::uintptr_t>(ring_bytes, hi - at);
           cudaHostRegister(reinterpret_cast<void*>(at), len, cudaHostRegisterDefault);
           regs.push_back(reinterpret_cast<char*>(at));
           cudaMemcpyAsync(d + (at - reinterpret_cast<std::uintptr_t>(h)), reinterpret_cast<void*>(at), len, cudaMemcpyHostToDevice, 0);
         }
         cudaMemcpy(d + (hi - reinterpret_cast<std::uintptr_t>(h)), h + (hi - reinterpret_cast<std::uintptr_t>(h)), reinterpret_cast<std::uintptr_t>(h) + bytes - hi, cudaMemcpyHostToDevice);
         cudaDeviceSynchronize();
         for (char* r : regs) cudaHostUnregister(r);
       }},
      {"register-only", [&] {
         cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault);
         cudaHostUnregister(host.data());
       }},
      {"library-pinned-source", [&] { sd::host_aos_to_soa(reinterpret_cast<const particle*>(pinned.data()), strata::index_t(n), dst.view(), strata::stream_t{}); }},
      {"library-registered", [&] { sd::host_aos_to_soa(registered.data(), strata::index_t(n), dst.view(), strata::stream_t{}); }},
      {"library-to-pinned", [&] { sd::soa_to_host_aos(dst.const_view(), reinterpret_cast<particle*>(pinned_out.data()), strata::stream_t{}); }},
      {"library-to-pageable", [&] { sd::soa_to_host_aos(dst.const_view(), host_out.data(), strata::stream_t{}); }},
      {"fill-memcpy", [&] { fill(plain_copy); }},
      {"fill-nt", [&] { fill(nt_copy); }},
  };
  std::vector<std::vector<double>> ms(variants.size());
  if (cudaGetLastError() != cudaSuccess) std::printf("a CUDA call failed before the rounds\n");
  for (auto& v : variants) v.second();  // warm: staging, pool threads, kernels
  cudaDeviceSynchronize();
  for (int r = 0; r < rounds; ++r)
    for (std::size_t v = 0; v < variants.size(); ++v)
      for (int k = 0; k < reps; ++k) {
        cudaDeviceSynchronize();
        const auto t0 = std::chrono::steady_clock::now();
        variants[v].second();
        cudaDeviceSynchronize();
        ms[v].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
  // The result must be right: every record, bit for bit, after the last variant that writes dst.
  pipeline(host.data(), strata::index_t(n), dst.view(), nt_copy, std::size_t(2) << 20);
  const auto back = dst.to_host();
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) std::printf("CUDA error during the rounds: %s\n", cudaGetErrorString(e));
  const bool ok = back.size() == n && std::memcmp(back.data(), host.data(), bytes) == 0;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s, %u copy threads, 1 GiB, %d rounds x %d reps; SoA result of pipe-nt %s\n", p.name, sd::copy_pool::instance().threads(), rounds, reps,
              ok ? "bit for bit" : "WRONG");
  auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  const double ref = median(ms[0]);
  std::printf("| variant | median ms | min ms | GB/s | x pinned copy |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const double m = median(ms[v]);
    std::printf("| %s | %.2f | %.2f | %.1f | %.3f |\n", variants[v].first.c_str(), m, *std::min_element(ms[v].begin(), ms[v].end()), double(bytes) / m / 1e6,
                ref / m);
  }
  return ok ? 0 : 1;
}
