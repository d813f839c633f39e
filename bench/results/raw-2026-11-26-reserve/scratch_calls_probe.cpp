// Host time of the driver calls one strata scratch allocation makes, and of a launch and a memset,
// with 1 thread and with one thread per GPU at once (migrate's rank threads): which of them are
// worth taking off the path. Built with nvcc -x cu -O3 -std=c++20 -I include.
#include <strata/memory/scratch.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

using clk = std::chrono::steady_clock;

__global__ void empty_kernel(int* p) {
  if (p && threadIdx.x == 1000) *p = 0;
}

static double per_call_us(int threads, int reps, const std::function<void(int, cudaStream_t, cudaMemPool_t)>& f) {
  std::vector<cudaStream_t> st(threads);
  std::vector<cudaMemPool_t> pools(threads);
  for (int t = 0; t < threads; ++t) {
    cudaSetDevice(t);
    cudaStreamCreateWithFlags(&st[t], cudaStreamNonBlocking);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = t;
    cudaMemPoolCreate(&pools[t], &props);
    std::uint64_t keep = ~std::uint64_t(0);
    cudaMemPoolSetAttribute(pools[t], cudaMemPoolAttrReleaseThreshold, &keep);
    for (int i = 0; i < 10; ++i) f(t, st[t], pools[t]);  // warm
    cudaStreamSynchronize(st[t]);
  }
  std::vector<double> us(threads);
  std::vector<std::thread> th;
  for (int t = 0; t < threads; ++t)
    th.emplace_back([&, t] {
      cudaSetDevice(t);
      const auto a = clk::now();
      for (int i = 0; i < reps; ++i) f(t, st[t], pools[t]);
      us[t] = std::chrono::duration<double, std::micro>(clk::now() - a).count() / reps;
    });
  for (auto& x : th) x.join();
  for (int t = 0; t < threads; ++t) cudaSetDevice(t), cudaStreamSynchronize(st[t]), cudaStreamDestroy(st[t]);
  double m = 0;
  for (double u : us) m = std::max(m, u);
  return m;
}

int main() {
  int gpus = 0;
  cudaGetDeviceCount(&gpus);
  const int reps = 20000;
  struct probe {
    const char* name;
    std::function<void(int, cudaStream_t, cudaMemPool_t)> f;
  };
  std::vector<probe> probes = {
      {"cudaGetDevice", [](int, cudaStream_t, cudaMemPool_t) { int d; cudaGetDevice(&d); }},
      {"cudaStreamIsCapturing", [](int, cudaStream_t s, cudaMemPool_t) { cudaStreamCaptureStatus c; cudaStreamIsCapturing(s, &c); }},
      {"cudaMemPoolGetAttribute(reserved)", [](int, cudaStream_t, cudaMemPool_t p) { std::uint64_t r; cudaMemPoolGetAttribute(p, cudaMemPoolAttrReservedMemCurrent, &r); }},
      {"cudaMallocFromPoolAsync+cudaFreeAsync (256 B)", [](int, cudaStream_t s, cudaMemPool_t p) { void* q; cudaMallocFromPoolAsync(&q, 256, p, s); cudaFreeAsync(q, s); }},
      {"empty kernel launch <<<1, 32>>>", [](int, cudaStream_t s, cudaMemPool_t) { empty_kernel<<<1, 32, 0, s>>>(nullptr); }},
      {"cudaMemsetAsync (16 B of a 256 B pool block, block held)", [](int t, cudaStream_t s, cudaMemPool_t p) {
         static void* q[16];  // per thread index; remade for each new stream
         static cudaStream_t on[16];
         if (on[t] != s) cudaMallocFromPoolAsync(&q[t], 256, p, s), on[t] = s;
         cudaMemsetAsync(q[t], 0, 16, s);
       }},
      {"strata stream_scratch allocate+deallocate (256 B)", [](int t, cudaStream_t s, cudaMemPool_t) {
         static strata::detail::stream_scratch* c[16];
         static cudaStream_t on[16];
         if (on[t] != s) c[t] = new strata::detail::stream_scratch(s), on[t] = s;
         void* q = c[t]->allocate(256, s);
         c[t]->deallocate(q, 256, s);
       }},
      {"strata pool_scratch allocate+deallocate (256 B)", [](int, cudaStream_t s, cudaMemPool_t) { auto& r = strata::scratch(); void* q = r.allocate(256, s); r.deallocate(q, 256, s); }},
  };
  std::printf("| call | 1 thread (us) | %d threads, one per GPU (us, slowest thread) |\n| --- | --- | --- |\n", gpus);
  for (auto& p : probes) {
    const double one = per_call_us(1, reps, p.f), all = per_call_us(gpus, reps, p.f);
    std::printf("| %s | %.3f | %.3f |\n", p.name, one, all);
  }
}
