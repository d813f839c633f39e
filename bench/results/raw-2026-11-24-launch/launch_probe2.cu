#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>
__global__ void k1(float* p, long n) { long i = blockIdx.x * 256L + threadIdx.x; if (i < n) p[i] += 1.f; }
using launch_fn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
using getctx_fn = CUresult (*)(CUstream, CUcontext*);
int main() {
  float* p; long n = 4096; cudaMalloc(&p, n * 4); cudaMemset(p, 0, n * 4);
  cudaStream_t nb; cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
  void* e = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuLaunchKernel", &e, 12000, cudaEnableDefault, &q);
  auto cu_launch = reinterpret_cast<launch_fn>(e);
  void* e2 = nullptr; cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &e2, 12000, cudaEnableDefault, &q);
  auto get_ctx = reinterpret_cast<getctx_fn>(e2);
  cudaKernel_t kk; std::printf("cudaGetKernel %d\n", int(cudaGetKernel(&kk, (const void*)&k1)));
  auto launchk = [&](CUstream s) { long nn = n; void* a[] = {&p, &nn}; return cu_launch((CUfunction)kk, 16, 1, 1, 256, 1, 1, 0, s, a, nullptr); };
  // fresh thread, never bound: null stream and nb stream
  std::thread([&] { std::printf("fresh thread cu null-stream: %d\n", int(launchk(nullptr))); std::printf("fresh thread cu nb: %d\n", int(launchk((CUstream)nb)));
                    std::printf("fresh thread cu legacy(0x1): %d\n", int(launchk((CUstream)0x1))); }).join();
  cudaDeviceSynchronize();
  // capture
  cudaGraph_t g; cudaStreamBeginCapture(nb, cudaStreamCaptureModeGlobal);
  int dev = -7; cudaError_t ge = cudaStreamGetDevice(nb, &dev);
  unsigned long long id = 0; cudaError_t gi = cudaStreamGetId(nb, &id);
  CUcontext c = nullptr; CUresult gc = get_ctx((CUstream)nb, &c);
  CUresult lk = launchk((CUstream)nb);
  cudaError_t ec = cudaStreamEndCapture(nb, &g);
  std::printf("during capture: GetDevice %d (dev %d) GetId %d GetCtx %d launch %d endcapture %d\n", int(ge), dev, int(gi), int(gc), int(lk), int(ec));
  cudaGraphExec_t ge2; std::printf("instantiate %d\n", int(cudaGraphInstantiate(&ge2, g, 0)));
  cudaGraphLaunch(ge2, nb); cudaStreamSynchronize(nb);
  float h[4]; cudaMemcpy(h, p, 16, cudaMemcpyDeviceToHost); std::printf("p[0] after 3 fresh-thread tries + graph: %g\n", h[0]);
  int sink = 0;
  struct variant { const char* name; std::function<void()> call; };
  std::vector<variant> vs = {
      {"<<<>>> nb", [&] { k1<<<16, 256, 0, nb>>>(p, n); }},
      {"cu kernel nb", [&] { launchk((CUstream)nb); }},
      {"<<<>>> legacy", [&] { k1<<<16, 256>>>(p, n); }},
      {"cu kernel null", [&] { launchk(nullptr); }},
      {"cudaStreamIsCapturing", [&] { cudaStreamCaptureStatus s; cudaStreamIsCapturing(nb, &s); sink += int(s); }},
      {"cudaStreamGetDevice", [&] { int d; cudaStreamGetDevice(nb, &d); sink += d; }},
      {"cudaStreamGetId", [&] { unsigned long long d; cudaStreamGetId(nb, &d); sink += int(d & 1); }},
      {"cudaStreamGetFlags", [&] { unsigned d; cudaStreamGetFlags(nb, &d); sink += int(d & 1); }},
      {"cuStreamGetCtx", [&] { CUcontext d; get_ctx((CUstream)nb, &d); sink += d ? 1 : 0; }},
      {"cudaGetDevice", [&] { int d; cudaGetDevice(&d); sink += d; }},
  };
  const int calls = 1000, rounds = 31;
  std::vector<std::vector<double>> t(vs.size());
  for (auto& w : vs) for (int i = 0; i < 200; ++i) w.call();
  cudaDeviceSynchronize();
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < vs.size(); ++k) {
      cudaDeviceSynchronize();
      auto h0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) vs[k].call();
      t[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / calls * 1e6);
    }
  cudaDeviceSynchronize();
  for (size_t k = 0; k < vs.size(); ++k) {
    auto s = t[k]; std::sort(s.begin(), s.end());
    std::printf("%-24s median %.3f us  p10 %.3f  p90 %.3f\n", vs[k].name, s[s.size() / 2], s[s.size() / 10], s[s.size() * 9 / 10]);
  }
  std::printf("err %s sink %d\n", cudaGetErrorString(cudaGetLastError()), sink);
}
