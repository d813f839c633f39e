// Probe: rows longer than a block holds in registers (today streamed: each chunk read twice, the
// second time from L2) held whole by one block instead, with the units past the registers' 8 per
// thread in the block's shared memory. Thread t holds units t + k * G: k < 8 in registers (the
// library's row_part), k >= 8 in shared memory slot (k - 8) * G + t, loaded by cp.async (16 bytes
// each, no barrier: a thread reads only its own slots). Statistics as two sums over the block
// (layer norm: the sum, then squares about the mean), then every unit written normalized. Dense
// rows on 16-byte boundaries (the whole-unit path) only. Timed against strata's own launch of the
// plan it chooses (streamed), alternated in one loop (CUDA events, a 256 MiB memset before each
// run, median of 15); outputs compared with strata's (largest difference, relative to the largest
// output), every element checked written. Run 1 (wide-1.txt): blocks of 512, 384 and 256 threads,
// with and without the L2 prefetch. Run 2 (wide-2.txt, this source): blocks of 512 threads, no
// prefetch; v1 waits for the shared-memory units before summing the registers' and sums each
// shared-memory slot in turn (run 1's code); v2 sums the registers' units first and unrolls the
// shared-memory loops by 4. Run 3 (wide-3.txt, this source): v2 also merges fp32 layer-norm
// statistics per warp at one barrier, as the library's rows kernel does for fp32 blocks.
//   wide_probe [hidden,...]
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <thrust/execution_policy.h>
#include <thrust/tabulate.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using strata::index_t;
namespace sn = strata::detail::norm;

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } \
  } while (0)

constexpr int V = 8;

template <strata::norm_kind Kind, class T>
__global__ void __launch_bounds__(sn::max_group, 2) wide_kernel(sn::args<T> a, int S, index_t ahead, int v2) {
  extern __shared__ uint4 spill[];  // S * G units
  __shared__ sn::sum_slots slots;
  constexpr int L = sn::lanes<T>;
  const int G = int(blockDim.x), t = int(threadIdx.x);
  const index_t r = blockIdx.x, units = a.cols / L;
  if (ahead > 0 && t == 0 && r + ahead < a.rows) sn::prefetch_row(a.x + (r + ahead) * a.x_pitch, a.cols);
  const T* xrow = a.x + r * a.x_pitch;
  const index_t in_regs = std::min<index_t>(units, index_t(V) * G);
  // shared-memory units first (cp.async), then the registers' loads: all in flight at once
  for (int k = 0; k < S; ++k) {
    const index_t u = in_regs + t + index_t(k) * G;
    uint4* dst = spill + k * G + t;
    if (u < units) {
      const unsigned d = unsigned(__cvta_generic_to_shared(dst));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(xrow + u * L) : "memory");
    } else {
      *dst = uint4{0, 0, 0, 0};
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
  sn::row_part<T, V> part;
  part.load_whole(xrow, 0, in_regs, t, G, true);
  if (!v2) asm volatile("cp.async.wait_group 0;" ::: "memory");
  auto spilled = [&](int k, float (&f)[L]) { sn::unpack_kept<T>(spill[k * G + t], f); };
  float s = part.template sum<Kind>();
  if (v2) asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll 4
  for (int k = 0; k < S; ++k) {
    float f[L];
    spilled(k, f);
    for (int i = 0; i < L; ++i) s += Kind == strata::norm_kind::layer ? f[i] : f[i] * f[i];
  }
  const float n = float(a.cols);
  float mean = 0.0f, m2;
  if constexpr (Kind == strata::norm_kind::layer && sizeof(T) == 4) {
    if (v2) {  // run 3: the rows kernel's layer-norm statistics for fp32 blocks: per warp, one barrier
      int held = part.k_hi;
      for (int k = 0; k < S; ++k) held += in_regs + t + index_t(k) * G < units ? 1 : 0;
      const float count = sn::group_sum(float(held * L), 32, nullptr), wsum = sn::group_sum(s, 32, nullptr);
      const float wmean = count > 0 ? wsum / count : 0.0f;
      float q = part.sum_squares(wmean);
#pragma unroll 4
      for (int k = 0; k < S; ++k) {
        if (in_regs + t + index_t(k) * G >= units) break;
        float f[L];
        spilled(k, f);
        for (int i = 0; i < L; ++i) q += (f[i] - wmean) * (f[i] - wmean);
      }
      const float wm2 = sn::group_sum(q, 32, nullptr);
      const int lane = t % 32;
      if (lane == 0) slots.warps[t / 32] = sn::warp_moments{count, wsum, wm2};
      __syncthreads();
      const sn::warp_moments w = lane < G / 32 ? slots.warps[lane] : sn::warp_moments{0.0f, 0.0f, 0.0f};
      mean = sn::group_sum(w.sum, 32, nullptr) / n;
      const float d = w.count > 0 ? w.sum / w.count - mean : 0.0f;
      m2 = sn::group_sum(w.m2 + w.count * d * d, 32, nullptr);
    }
  }
  if (Kind == strata::norm_kind::layer && !(sizeof(T) == 4 && v2)) {
    mean = sn::group_sum(s, G, slots.sums[0]) / n;
    float q = part.sum_squares(mean);
#pragma unroll 4
    for (int k = 0; k < S; ++k) {
      if (in_regs + t + index_t(k) * G >= units) break;  // slots past the row
      float f[L];
      spilled(k, f);
      for (int i = 0; i < L; ++i) q += (f[i] - mean) * (f[i] - mean);
    }
    m2 = sn::group_sum(q, G, slots.sums[1]);
  } else if (Kind == strata::norm_kind::rms) {
    m2 = sn::group_sum(s, G, slots.sums[0]);
  }
  float mu, rstd;
  sn::finish<Kind>(sn::moments{n, mean, m2}, a.cols, a.eps, mu, rstd);
  T* yrow = a.y + r * a.y_pitch;
  part.template write<true, true>(yrow, a.gamma, a.beta, sn::row_span{a.cols, 0, 0, 0, 0}, mu, rstd);
#pragma unroll 4
  for (int k = 0; k < S; ++k) {
    const index_t u = in_regs + t + index_t(k) * G;
    if (u >= units) break;
    float x[L], g[L], b[L], v[L];
    spilled(k, x);
    sn::row_part<T, V>::template affine<true>(a.gamma, u * L, 1.0f, g);
    sn::row_part<T, V>::template affine<true>(a.beta, u * L, 0.0f, b);
    for (int i = 0; i < L; ++i) v[i] = (x[i] - mu) * (rstd * g[i]) + b[i];
    sn::store16(yrow + u * L, strata::rows::pack_floats<T>(v));
  }
}

template <class T>
struct hashed {
  __host__ __device__ T operator()(index_t i) const {
    std::uint32_t x = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32) * 40503u;
    x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
    return strata::from_float<T>(float(x % 20001) / 2500.0f - 3.5f);
  }
};

struct clock_t_ {
  cudaEvent_t a, b;
  void* flush = nullptr;
  clock_t_() { CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b)); CHECK(cudaMalloc(&flush, 256u << 20)); }
  template <class F>
  float time(F&& f) {
    CHECK(cudaMemsetAsync(flush, 0, 256u << 20));
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <strata::norm_kind Kind, class T>
void probe(const char* op, const char* dtype, index_t hidden, double copy_gbps, double prefetch_bytes, clock_t_& clk) {
  constexpr int L = sn::lanes<T>;
  const index_t rows = std::max<index_t>(1, (index_t(256) << 20) / (2 * hidden * index_t(sizeof(T))));
  strata::matrix<T> x(rows, hidden), y(rows, hidden), yref(rows, hidden), g(1, hidden), b(1, hidden);
  auto xv = x.view();
  thrust::tabulate(thrust::device, xv.data, xv.data + rows * xv.pitch, hashed<T>{});
  std::vector<T> gh(static_cast<std::size_t>(hidden)), bh(static_cast<std::size_t>(hidden));
  for (index_t i = 0; i < hidden; ++i) gh[i] = strata::from_float<T>(0.5f + float(i % 7) / 8), bh[i] = strata::from_float<T>(float(i % 5) / 10 - 0.2f);
  g.copy_from_host(gh.data());
  b.copy_from_host(bh.data());
  const cuda::std::span<const T> gs(g.const_view().data, std::size_t(hidden));
  const cuda::std::span<const T> bs = Kind == strata::norm_kind::layer ? cuda::std::span<const T>(b.const_view().data, std::size_t(hidden)) : cuda::std::span<const T>{};
  const sn::args<T> a{xv.data, y.view().data, gs.data(), bs.data(), rows, hidden, xv.pitch, y.view().pitch, 1e-5f};
  const sn::row_needs needs = sn::needs_of(a);
  const sn::plan p = sn::planned<Kind, T>(needs);
  if (!needs.whole || hidden % L) return;
  auto lib = [&] { sn::run_with<Kind>(p, x.const_view(), yref.view(), gs, bs, 1e-5f); };
  const index_t units = hidden / L;
  const double bytes = 2.0 * double(rows) * double(hidden) * sizeof(T);
  for (int G : {512}) {
    const index_t in_regs = std::min<index_t>(units, index_t(V) * G);
    const int S = int((units - in_regs + G - 1) / G);
    const std::size_t smem = std::size_t(S) * G * 16;
    if (S < 1) continue;
    if (smem > 48 * 1024) CHECK(cudaFuncSetAttribute(wide_kernel<Kind, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wide_kernel<Kind, T>, G, smem) != cudaSuccess || per_sm == 0) {
      (void)cudaGetLastError();
      std::printf("| %s | %s | %lldx%lld | G=%d S=%d smem=%zu KiB does not fit |\n", op, dtype, (long long)rows, (long long)hidden, G, S, smem / 1024);
      continue;
    }
    for (int v2 : {0, 1}) {
      const index_t ahead = 0;
      auto mine = [&] { wide_kernel<Kind, T><<<unsigned(rows), G, smem>>>(a, S, ahead, v2); };
      CHECK(cudaMemset(y.view().data, 0xff, std::size_t(rows * y.view().pitch) * sizeof(T)));
      lib();
      mine();
      CHECK(cudaDeviceSynchronize());
      std::vector<T> h1(std::size_t(rows * y.view().pitch)), h2(h1.size());
      CHECK(cudaMemcpy(h1.data(), y.view().data, h1.size() * sizeof(T), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h2.data(), yref.view().data, h2.size() * sizeof(T), cudaMemcpyDeviceToHost));
      double diff = 0, top = 0;
      bool written = true;
      for (index_t r = 0; r < rows; ++r)
        for (index_t c = 0; c < hidden; ++c) {
          const std::size_t i = std::size_t(r * y.view().pitch + c);
          const double u = strata::to_float(h1[i]), w = strata::to_float(h2[i]);
          if (!std::isfinite(u)) written = false;
          diff = std::max(diff, std::abs(u - w)), top = std::max(top, std::abs(w));
        }
      std::vector<float> tl, tm;
      for (int i = 0; i < 15; ++i) {
        tl.push_back(clk.time(lib));
        tm.push_back(clk.time(mine));
      }
      const float ml = median(tl), mm = median(tm);
      std::printf("| %s | %s | %lldx%lld | %s | G=%d S=%d smem=%zu KiB v%d | %d | %lld | %.4f | %.3f | %.4f | %.3f | %.3f | %.1e | %s |\n", op, dtype,
                  (long long)rows, (long long)hidden, sn::describe(p).c_str(), G, S, smem / 1024, v2 + 1, per_sm, (long long)ahead, ml,
                  bytes / (ml * 1e-3) / 1e9 / copy_gbps, mm, bytes / (mm * 1e-3) / 1e9 / copy_gbps, ml / mm, diff / top,
                  written ? "all written" : "NOT WRITTEN");
      std::fflush(stdout);
    }
  }
}

int main(int argc, char** argv) {
  std::vector<index_t> hs = {16640, 20000, 24576, 28672, 32768, 40960};
  if (argc > 1) {
    hs.clear();
    std::string s = argv[1];
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t e = s.find(',', pos);
      hs.push_back(std::stoll(s.substr(pos, e - pos)));
      pos = e == std::string::npos ? s.size() : e + 1;
    }
  }
  clock_t_ clk;
  const std::size_t n = std::size_t(1) << 30;
  void *src, *dst;
  CHECK(cudaMalloc(&src, n));
  CHECK(cudaMalloc(&dst, n));
  CHECK(cudaMemset(src, 1, n));
  std::vector<float> t;
  for (int i = 0; i < 15; ++i) t.push_back(clk.time([&] { CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice)); }));
  const double copy_gbps = 2.0 * double(n) / (median(t) * 1e-3) / 1e9;
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const double prefetch_bytes = sn::memory_bandwidth() * sn::prefetch_seconds;
  std::printf("%s, cudaMemcpy D2D %.1f GB/s\n", prop.name, copy_gbps);
  std::printf("| op | dtype | rows x hidden | library plan | wide block | blocks/SM | ahead | library ms | x memcpy | wide ms | x memcpy | library / wide | max diff / max | output |\n"
              "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (index_t h : hs) {
    if (h <= 65536) {
      probe<strata::norm_kind::layer, float>("layer_norm", "fp32", h, copy_gbps, prefetch_bytes, clk);
      probe<strata::norm_kind::rms, float>("rms_norm", "fp32", h, copy_gbps, prefetch_bytes, clk);
    }
    if (h >= 32768) {
      probe<strata::norm_kind::layer, strata::bfloat16>("layer_norm", "bf16", h, copy_gbps, prefetch_bytes, clk);
      probe<strata::norm_kind::rms, strata::bfloat16>("rms_norm", "bf16", h, copy_gbps, prefetch_bytes, clk);
    }
  }
  return 0;
}
