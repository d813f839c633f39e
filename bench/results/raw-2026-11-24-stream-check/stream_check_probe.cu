// Probe: what asking a caller's stream for its device costs, the runtime's way (capture status,
// then cudaStreamGetDevice) against the driver's cuStreamGetCtx compared with the current context;
// and whether cuStreamGetCtx may be called on a stream being captured (global mode) and on another
// stream while one captures, without invalidating the capture.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void noop() {}

template <class F>
double ns_per_call(F&& f, int n = 200000) {
  for (int i = 0; i < 1000; ++i) f();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaStream_t s, other;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&other));
  volatile int sink = 0;
  for (int round = 0; round < 3; ++round) {
    const double runtime = ns_per_call([&] {
      cudaStreamCaptureStatus c;
      int d = -1;
      if (cudaStreamIsCapturing(s, &c) == cudaSuccess && c == cudaStreamCaptureStatusNone) cudaStreamGetDevice(s, &d);
      sink = sink + d;
    });
    const double driver = ns_per_call([&] {
      CUcontext sc = nullptr, cur = nullptr;
      cuStreamGetCtx(reinterpret_cast<CUstream>(s), &sc);
      cuCtxGetCurrent(&cur);
      sink = sink + (sc == cur);
    });
    const double driver_only = ns_per_call([&] {
      CUcontext sc = nullptr;
      cuStreamGetCtx(reinterpret_cast<CUstream>(s), &sc);
      sink = sink + (sc != nullptr);
    });
    const double get_id = ns_per_call([&] {
      unsigned long long id = 0;
      cudaStreamGetId(s, &id);
      sink = sink + int(id);
    });
    std::printf("round %d: IsCapturing+GetDevice %.1f ns, cuStreamGetCtx+cuCtxGetCurrent %.1f ns, cuStreamGetCtx %.1f ns, cudaStreamGetId %.1f ns\n",
                round, runtime, driver, driver_only, get_id);
  }
  // Under global-mode capture of s: cuStreamGetCtx on s and on another stream.
  for (int which = 0; which < 2; ++which) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    noop<<<1, 1, 0, s>>>();
    CUcontext sc = nullptr, cur = nullptr;
    CUresult r = cuStreamGetCtx(reinterpret_cast<CUstream>(which == 0 ? s : other), &sc);
    cuCtxGetCurrent(&cur);
    noop<<<1, 1, 0, s>>>();
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(s, &g);
    std::printf("capture, cuStreamGetCtx on %s: result %d, same context %d; end capture: %s\n", which == 0 ? "the capturing stream" : "another stream",
                int(r), int(sc == cur), cudaGetErrorString(e));
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
  }
  // A stream of device 1 where there is one.
  int devices = 0;
  CK(cudaGetDeviceCount(&devices));
  std::printf("devices %d\n", devices);
  return sink == 12345;
}
