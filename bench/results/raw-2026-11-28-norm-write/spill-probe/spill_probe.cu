// Probe: fp32 rows of 8448-16384 elements held by one block of 512 threads with fewer units a thread
// in registers and the rest in shared memory (the library's Spill kernel at V < 8), so that three or
// four such blocks fit an SM instead of two. Times each against the library's own plan on the same
// data and checks the outputs are the same bits.
#include <strata/strata.hpp>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
namespace sn = strata::detail::norm;
using strata::index_t;

static char* flush_buf;
static void flush() { cudaMemsetAsync(flush_buf, 0, 200 << 20); }
template <class F>
static float time_ms(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    flush();
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}


// The library's rows_kernel (norm_kernels.hpp) with Whole and Spill, built for MinBlocks blocks of
// 512 threads an SM instead of 2.
template <strata::norm_kind Kind, int V, int MinBlocks>
__global__ void __launch_bounds__(512, MinBlocks) probe_kernel(sn::args<float> a, int G, int spill) {
  __shared__ sn::sum_slots slots;
  extern __shared__ strata::vec::word16 spill_slots[];
  const int t = int(threadIdx.x);
  const index_t r = index_t(blockIdx.x);
  const float* xrow = a.x + r * a.x_pitch;
  sn::row_part<float, V, true> part;
  part.sp = spill_slots + t, part.spill = spill;
  part.load_whole(xrow, 0, a.cols / 4, t, G, true);
  const sn::moments m = sn::part_moments<Kind>(part, float(a.cols), G, slots);
  float mean, rstd;
  sn::finish<Kind>(m, a.cols, a.eps, mean, rstd);
  part.template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, sn::row_span{a.cols, 0, 0, 0, 0}, mean, rstd);
}

template <strata::norm_kind Kind, int V, int MinBlocks>
static void probe(index_t hidden, float copy_ms_per_byte) {
  const index_t rows = (index_t(256) << 20) / (2 * hidden * 4), units = hidden / 4;
  std::vector<float> hx(std::size_t(rows * hidden));
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = float((i * 2654435761u) % 20001) / 2500.0f - 3.5f;
  strata::matrix<float> x(rows, hidden, hx.data()), y1(rows, hidden), y2(rows, hidden), g(1, hidden), b(1, hidden);
  std::vector<float> ones(std::size_t(hidden), 1.0f), zeros(std::size_t(hidden), 0.0f);
  g.copy_from_host(ones.data()), b.copy_from_host(zeros.data());
  const cuda::std::span<const float> gs(g.const_view().data, std::size_t(hidden)), bs(b.const_view().data, std::size_t(hidden));
  const cuda::std::span<const float> beta = Kind == strata::norm_kind::layer ? bs : cuda::std::span<const float>{};
  auto lib = [&] {
    if constexpr (Kind == strata::norm_kind::layer) strata::layer_norm<float>(x.const_view(), y1.view(), gs, bs, 1e-5f);
    else strata::rms_norm<float>(x.const_view(), y1.view(), gs, 1e-5f);
  };
  const sn::args<float> a{x.const_view().data, y2.view().data, gs.data(), beta.data(), rows, hidden, x.const_view().pitch, y2.view().pitch, 1e-5f};
  const int spill = int((units + 511) / 512) - V;
  const std::size_t smem = std::size_t(spill) * 512 * 16;
  auto k = probe_kernel<Kind, V, MinBlocks>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 512, smem);
  cudaFuncAttributes attr;
  cudaFuncGetAttributes(&attr, k);
  auto mine = [&] { k<<<unsigned(rows), 512, smem>>>(a, 512, spill); };
  const float t_lib = time_ms(lib), t_mine = time_ms(mine);
  cudaDeviceSynchronize();
  std::vector<float> o1(hx.size()), o2(hx.size());
  y1.copy_to_host(o1.data()), y2.copy_to_host(o2.data());
  const bool same = std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0;
  const double bytes = 2.0 * double(rows) * double(hidden) * 4;
  std::printf("| %s | %lld | %s | %.4f | %.3f | V=%d spill=%d minblocks=%d regs=%d local=%zu blocks/SM=%d | %.4f | %.3f | %.3f | %s |\n",
              Kind == strata::norm_kind::layer ? "layer" : "rms", (long long)hidden,
              sn::describe(sn::planned<Kind, float>(sn::needs_of(a))).c_str(), t_lib, bytes / (t_lib * 1e-3) / 1e9 * copy_ms_per_byte, V, spill, MinBlocks,
              attr.numRegs, attr.localSizeBytes, blocks, t_mine, bytes / (t_mine * 1e-3) / 1e9 * copy_ms_per_byte, t_lib / t_mine, same ? "same bits" : "DIFFERENT");
}

int main() {
  cudaMalloc(&flush_buf, 200 << 20);
  char *s, *d;
  const std::size_t n = std::size_t(1) << 30;
  cudaMalloc(&s, n), cudaMalloc(&d, n);
  const float copy_ms = time_ms([&] { cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice); });
  const double copy_gbps = 2.0 * double(n) / (copy_ms * 1e-3) / 1e9;
  std::printf("cudaMemcpy D2D %.1f GB/s\n| kind | hidden | library plan | ms | x memcpy | probe | ms | x memcpy | speedup | check |\n|---|---:|---|---:|---:|---|---:|---:|---:|---|\n", copy_gbps);
  cudaFree(s), cudaFree(d);
  for (index_t h : {8448, 10240, 11264, 12288, 13824, 15616, 16384}) {
    const float c = float(1.0 / copy_gbps);
    probe<strata::norm_kind::layer, 4, 2>(h, c);
    probe<strata::norm_kind::layer, 4, 3>(h, c);
    probe<strata::norm_kind::layer, 2, 3>(h, c);
    probe<strata::norm_kind::layer, 2, 4>(h, c);
    probe<strata::norm_kind::rms, 4, 3>(h, c);
    probe<strata::norm_kind::rms, 2, 3>(h, c);
    probe<strata::norm_kind::rms, 2, 4>(h, c);
  }
}
