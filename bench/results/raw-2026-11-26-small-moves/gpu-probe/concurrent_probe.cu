// Whether a bandwidth-bound kernel slows when several GPUs of the machine run it at once: the
// particle kick-drift (7 fp32 columns, 2^26 records, read and written once) timed with CUDA events
// on each GPU alone, then on GPUs 0..g-1 at once (one host thread per GPU), g = 2..N.
// nvcc -O3 -std=c++17 -arch=sm_90 concurrent_probe.cu -o concurrent_probe
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void kick_drift(float4* x, float4* y, float4* z, float4* vx, float4* vy, float4* vz, size_t n4, float kdt, float dt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 px = x[i], py = y[i], pz = z[i], ux = vx[i], uy = vy[i], uz = vz[i];
#define KD(c) ux.c -= px.c * kdt; uy.c -= py.c * kdt; uz.c -= pz.c * kdt; px.c += ux.c * dt; py.c += uy.c * dt; pz.c += uz.c * dt;
    KD(x) KD(y) KD(z) KD(w)
    x[i] = px, y[i] = py, z[i] = pz, vx[i] = ux, vy[i] = uy, vz[i] = uz;
  }
}

struct gpu {
  int dev;
  float4* col[7];
  cudaStream_t s;
  cudaEvent_t a, b;
};
constexpr size_t n = size_t(1) << 26, n4 = n / 4;
constexpr int steps = 30;

float run(gpu& g) {  // ms per step
  CK(cudaSetDevice(g.dev));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g.dev));
  CK(cudaEventRecord(g.a, g.s));
  for (int k = 0; k < steps; ++k) kick_drift<<<sms * 8, 256, 0, g.s>>>(g.col[0], g.col[1], g.col[2], g.col[3], g.col[4], g.col[5], n4, 1e-3f, 1e-3f);
  CK(cudaEventRecord(g.b, g.s));
  CK(cudaEventSynchronize(g.b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, g.a, g.b));
  return ms / steps;
}

int main() {
  int N = 0;
  CK(cudaGetDeviceCount(&N));
  std::vector<gpu> gs(N);
  for (int d = 0; d < N; ++d) {
    gs[d].dev = d;
    CK(cudaSetDevice(d));
    for (auto& c : gs[d].col) { CK(cudaMalloc(&c, n * 4)); CK(cudaMemset(c, 0, n * 4)); }
    CK(cudaStreamCreateWithFlags(&gs[d].s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&gs[d].a));
    CK(cudaEventCreate(&gs[d].b));
    run(gs[d]);  // warm
  }
  for (int rep = 0; rep < 3; ++rep) {
    std::printf("rep %d alone:", rep);
    for (int d = 0; d < N; ++d) std::printf(" gpu%d %.4f", d, run(gs[d]));
    std::printf("\n");
    for (int g = 2; g <= N; ++g) {
      std::vector<float> ms(g);
      std::vector<std::thread> ts;
      for (int d = 0; d < g; ++d) ts.emplace_back([&, d] { ms[d] = run(gs[d]); });
      for (auto& t : ts) t.join();
      std::printf("rep %d together %d:", rep, g);
      for (int d = 0; d < g; ++d) std::printf(" gpu%d %.4f", d, ms[d]);
      std::printf("  max %.4f\n", *std::max_element(ms.begin(), ms.end()));
    }
  }
}
