// Probe (not library code): can migrate's NCCL exchange overlap the shard's compaction? On every GPU
// of the machine at once: (1) NCCL alone, each rank sending `move` bytes to the next rank and
// receiving as much from the one before (one group), (2) a streaming copy kernel alone over
// `stay` bytes (the staying records' rewrite: read once, written once, 16-byte vectors), (3) both at
// once on two streams of each GPU. Median of 15 after 3 warm-ups; each timed to the end of its work
// on every GPU.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 overlap_probe.cu -lnccl -o overlap_probe
#include <nccl.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); std::exit(1); } } while (0)
#define NK(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { std::printf("NCCL %s at %d\n", ncclGetErrorString(r), __LINE__); std::exit(1); } } while (0)

__global__ void stream_copy(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) out[i] = in[i];
}

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(int argc, char** argv) {
  int G = 0;
  CK(cudaGetDeviceCount(&G));
  if (argc > 1) G = std::min(G, std::atoi(argv[1]));
  const size_t records = size_t(1) << 26, rec = 28;
  const double leave = argc > 2 ? std::atof(argv[2]) : 0.1;
  const size_t move = size_t(double(records) * leave) * rec, stay = (size_t(double(records) * (1 - leave)) * rec) / 16 * 16;
  std::vector<int> devs(G);
  for (int g = 0; g < G; ++g) devs[g] = g;
  std::vector<ncclComm_t> comms(G);
  NK(ncclCommInitAll(comms.data(), G, devs.data()));
  struct per { cudaStream_t s_nccl, s_copy; char *send, *recv; float4 *a, *b; int sms; };
  std::vector<per> p(G);
  for (int g = 0; g < G; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaStreamCreateWithFlags(&p[g].s_nccl, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&p[g].s_copy, cudaStreamNonBlocking));
    CK(cudaMalloc(&p[g].send, move)); CK(cudaMalloc(&p[g].recv, move));
    CK(cudaMalloc(&p[g].a, stay)); CK(cudaMalloc(&p[g].b, stay));
    CK(cudaMemset(p[g].send, 1, move)); CK(cudaMemset(p[g].a, 2, stay));
    cudaDeviceProp prop{}; CK(cudaGetDeviceProperties(&prop, g)); p[g].sms = prop.multiProcessorCount;
  }
  auto nccl = [&] {
    NK(ncclGroupStart());
    for (int g = 0; g < G; ++g) {
      NK(ncclSend(p[g].send, move, ncclChar, (g + 1) % G, comms[g], p[g].s_nccl));
      NK(ncclRecv(p[g].recv, move, ncclChar, (g + G - 1) % G, comms[g], p[g].s_nccl));
    }
    NK(ncclGroupEnd());
  };
  auto copy = [&] {
    for (int g = 0; g < G; ++g) {
      CK(cudaSetDevice(g));
      stream_copy<<<p[g].sms * 8, 256, 0, p[g].s_copy>>>(p[g].a, p[g].b, stay / 16);
    }
  };
  auto sync = [&] {
    for (int g = 0; g < G; ++g) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
  };
  auto timed = [&](auto f) {
    std::vector<double> t;
    for (int i = 0; i < 18; ++i) {
      sync();
      const double t0 = now();
      f();
      sync();
      if (i >= 3) t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2] * 1e3;
  };
  const double t_nccl = timed(nccl), t_copy = timed(copy);
  const double t_both_nc = timed([&] { nccl(); copy(); }), t_both_cn = timed([&] { copy(); nccl(); });
  const double t_seq = timed([&] { nccl(); sync(); copy(); });
  std::printf("%d GPUs, 2^26 records of 28 bytes, %.0f%% leaving: NCCL %.1f MB a rank each way, copy kernel %.1f MB a rank\n", G, 100 * leave,
              move / 1e6, stay / 1e6);
  std::printf("| NCCL alone ms | copy alone ms | sum | one after the other ms | both, NCCL queued first ms | both, copy first ms | overlap: max / both |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  std::printf("| %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |\n", t_nccl, t_copy, t_nccl + t_copy, t_seq, t_both_nc, t_both_cn,
              std::max(t_nccl, t_copy) / std::min(t_both_nc, t_both_cn));
  for (int g = 0; g < G; ++g) ncclCommDestroy(comms[g]);
  return 0;
}
