// Experiment (not product code): where host AoS -> device time goes on this machine.
// Pipeline as in host_transfer.hpp (fill pinned slot with parallel copies, async H2D, 3 slots),
// varying chunk size, copy threads and the copy kind (memcpy vs SSE2 non-temporal stores).
#include <strata/convert/host_transfer.hpp>
#include <strata/container/soa_vector.hpp>
#include <boost/hana.hpp>

struct prt { BOOST_HANA_DEFINE_STRUCT(prt, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, m)); };

#include <cuda_runtime.h>
#include <emmintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using clk = std::chrono::steady_clock;

static void nt_copy(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  // head to 16-byte alignment of dst
  std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
  head = std::min(head, bytes);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  std::size_t n = bytes / 64;
  for (std::size_t i = 0; i < n; ++i) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
    d += 64, s += 64;
  }
  std::memcpy(d, s, bytes - n * 64);
  _mm_sfence();
}

static void par_copy(void* dst, const void* src, std::size_t bytes, unsigned parts, bool nt) {
  auto& pool = strata::detail::copy_pool::instance();
  parts = std::max(1u, std::min(parts, pool.threads()));
  const std::size_t slice = (bytes / parts + 63) / 64 * 64;
  pool.run(parts, [&](unsigned k) {
    std::size_t lo = std::min(bytes, k * slice), hi = std::min(bytes, lo + slice);
    if (nt) nt_copy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
    else std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

int main() {
  const std::size_t total = std::size_t(1) << 30;
  std::vector<char> host(total);
  for (std::size_t i = 0; i < total; i += 4096) host[i] = char(i);
  std::memset(host.data(), 1, total);
  char* dev = nullptr;
  cudaMalloc(&dev, total);
  char* pinned_all = nullptr;
  cudaMallocHost(&pinned_all, total);
  std::memcpy(pinned_all, host.data(), total);
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  // baseline: pinned H2D of the whole GiB
  std::vector<double> tb;
  for (int r = 0; r < 7; ++r) {
    auto t0 = clk::now();
    cudaMemcpyAsync(dev, pinned_all, total, cudaMemcpyHostToDevice, st);
    cudaStreamSynchronize(st);
    tb.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
  }
  const double base = med(tb);
  std::printf("threads in pool %u, pinned H2D 1 GiB %.2f ms (%.1f GB/s)\n", strata::detail::copy_pool::instance().threads(), base,
              total / base / 1e6);
  // host copy rate alone (pageable -> pinned), per thread count and kind
  for (bool nt : {false, true})
    for (unsigned th : {4u, 8u, 12u, 16u}) {
      std::vector<double> t;
      for (int r = 0; r < 5; ++r) {
        auto t0 = clk::now();
        for (std::size_t o = 0; o < total; o += (std::size_t(32) << 20)) par_copy(pinned_all + o, host.data() + o, std::size_t(32) << 20, th, nt);
        t.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
      }
      std::printf("fill only  nt=%d threads=%2u: %.2f ms (%.1f GB/s)\n", nt, th, med(t), total / med(t) / 1e6);
    }
  // Registering the caller's pages: cost of cudaHostRegister / Unregister, whole and by chunk,
  // and a pipeline that registers chunk k+1 while chunk k crosses.
  for (int rep = 0; rep < 0; ++rep) {
    std::vector<char> src(total);
    std::memset(src.data(), 2, total);
    auto t0 = clk::now();
    cudaError_t e = cudaHostRegister(src.data(), total, cudaHostRegisterDefault);
    auto t1 = clk::now();
    cudaMemcpyAsync(dev, src.data(), total, cudaMemcpyHostToDevice, st);
    cudaStreamSynchronize(st);
    auto t2 = clk::now();
    cudaHostUnregister(src.data());
    auto t3 = clk::now();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::printf("register whole 1 GiB: rc=%d register %.2f ms, H2D %.2f ms, unregister %.2f ms, total %.2f ms, x pinned %.3f\n", int(e),
                ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3), base / ms(t0, t3));
    for (std::size_t chunk_mb : {8, 32, 128}) {
      const std::size_t chunk = chunk_mb << 20;
      auto a = clk::now();
      double reg = 0;
      std::vector<cudaEvent_t> evs;
      for (std::size_t o = 0; o < total; o += chunk) {
        auto r0 = clk::now();
        cudaHostRegister(src.data() + o, chunk, cudaHostRegisterDefault);
        reg += ms(r0, clk::now());
        cudaMemcpyAsync(dev + o, src.data() + o, chunk, cudaMemcpyHostToDevice, st);
      }
      cudaStreamSynchronize(st);
      auto b = clk::now();
      for (std::size_t o = 0; o < total; o += chunk) cudaHostUnregister(src.data() + o);
      auto c = clk::now();
      std::printf("  chunked register %3zu MiB: register sum %.2f ms, registered+copied %.2f ms, unregister %.2f ms, total x pinned %.3f\n",
                  chunk_mb, reg, ms(a, b), ms(b, c), base / ms(a, c));
    }
  }
  {
    const std::size_t n = total / sizeof(prt);
    std::vector<prt> hp(n);
    std::memcpy(hp.data(), host.data(), n * sizeof(prt));
    strata::soa_vector<prt> dst(n);
    std::vector<double> pinb;
    for (int rep = 0; rep < 3; ++rep) {
      for (cudaStream_t s2 : {cudaStream_t(nullptr), st}) {
        std::vector<double> t;
        for (int r = 0; r < 7; ++r) {
          cudaDeviceSynchronize();
          auto t0 = clk::now();
          strata::detail::host_aos_to_soa(hp.data(), strata::index_t(n), dst.view(), s2);
          t.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
        }
        std::vector<double> tp;
        for (int r = 0; r < 7; ++r) {
          cudaDeviceSynchronize();
          auto t0 = clk::now();
          cudaMemcpyAsync(dev, pinned_all, n * sizeof(prt), cudaMemcpyHostToDevice, s2);
          cudaStreamSynchronize(s2);
          tp.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
        }
        std::printf("strata host_aos_to_soa (%s stream): %.2f ms, pinned %.2f ms, x pinned %.3f\n", s2 ? "non-blocking" : "legacy", med(t), med(tp), med(tp) / med(t));
      }
    }
  }
  const int slots = 3;
  for (int pass = 0; pass < 2; ++pass)
  for (std::size_t chunk_mb : {8, 12, 16, 24, 32}) {
    const std::size_t chunk = chunk_mb << 20;
    std::vector<char*> pin(slots);
    std::vector<cudaEvent_t> ev(slots);
    for (int i = 0; i < slots; ++i) cudaMallocHost(&pin[i], chunk), cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming);
    for (bool nt : {false})
      for (unsigned th : {12u, 16u}) {
        std::vector<double> t;
        for (int r = 0; r < 5; ++r) {
          auto t0 = clk::now();
          int k = 0;
          for (std::size_t o = 0; o < total; o += chunk, ++k) {
            const int b = k % slots;
            const std::size_t bytes = std::min(chunk, total - o);
            if (k >= slots) cudaEventSynchronize(ev[b]);
            par_copy(pin[b], host.data() + o, bytes, th, nt);
            cudaMemcpyAsync(dev + o, pin[b], bytes, cudaMemcpyHostToDevice, st);
            cudaEventRecord(ev[b], st);
          }
          cudaStreamSynchronize(st);
          t.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
        }
        std::printf("pipeline chunk=%3zu MiB nt=%d threads=%2u: %.2f ms, x pinned %.3f\n", chunk_mb, nt, th, med(t), base / med(t));
      }
    for (int i = 0; i < slots; ++i) cudaFreeHost(pin[i]), cudaEventDestroy(ev[i]);
  }
  std::printf("check %d\n", int(cudaGetLastError()));
  return 0;
}
