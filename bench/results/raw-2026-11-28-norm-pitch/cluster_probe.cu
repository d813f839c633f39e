// Probe (not part of the library): long rows split over a thread block cluster. Each block of a
// cluster of `parts` holds units [q * per, (q + 1) * per) of one row in registers (the library's
// row_part and part_moments), publishes its moments in shared memory, and after a cluster barrier
// every block merges all parts' moments through distributed shared memory in one fixed order and
// writes its units. Asks whether a row's bytes held per block, not per SM, set the fixed cost of
// the library's row plans at 8448-16384 fp32 elements (about 5 us over a copy at 64 KB rows),
// and how the split does past 16384, where the library streams rows.
#include <strata/algorithm/normalize.hpp>
#include <strata/container/matrix.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using strata::index_t;
namespace sn = strata::detail::norm;
namespace cg = cooperative_groups;
#define CK(x) strata::detail::cuda_check((x), #x)

template <strata::norm_kind Kind, class T, int V>
__global__ void __launch_bounds__(512, 2) cluster_rows(sn::args<T> a, int parts, index_t per, index_t ahead) {
  __shared__ sn::sum_slots slots;
  __shared__ sn::moments mine;
  __shared__ float2 stats;
  cg::cluster_group cl = cg::this_cluster();
  constexpr int L = sn::lanes<T>;
  const int q = int(cl.block_rank()), G = int(blockDim.x), t = int(threadIdx.x);
  const index_t r = index_t(blockIdx.x) / parts, units = a.cols / L;
  const index_t begin = std::min<index_t>(units, q * per), end = std::min<index_t>(units, begin + per);
  if (ahead > 0 && t == 0 && r + ahead < a.rows && end > begin) sn::prefetch_l2(a.x + (r + ahead) * a.x_pitch + begin * L, (end - begin) * 16);
  const T* xrow = a.x + r * a.x_pitch;
  sn::row_part<T, V> part;
  part.load_whole(xrow, begin, end, t, G, true);
  const sn::moments m = sn::part_moments<Kind>(part, float((end - begin) * L), G, slots);
  if (t == 0) mine = m;
  cl.sync();
  if (t < 32) {
    sn::moments all{0.0f, 0.0f, 0.0f};
    for (int k = t; k < parts; k += 32) {
      const sn::moments o = *cl.map_shared_rank(&mine, k);
      all = sn::merge<Kind>(all, o);
    }
    all = sn::butterfly<Kind>(all, 32);
    if (t == 0) sn::finish<Kind>(all, a.cols, a.eps, stats.x, stats.y);
  }
  cl.sync();  // stats for the block; and no block leaves while another reads its `mine`
  part.template write<Kind, true, true>(a.y + r * a.y_pitch, a.gamma, a.beta, sn::row_span{a.cols, 0, 0, 0, 0}, stats.x, stats.y);
}

static char* flush_buf;
static cudaEvent_t e0, e1;
template <class F>
double median_ms(F&& f) {
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) {
    CK(cudaMemsetAsync(flush_buf, i, std::size_t(256) << 20));
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void fill(unsigned short* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u;
    x ^= x >> 13;
    p[i] = (unsigned short)(0x3c00u + (x & 0x3ffu));
  }
}

double big_copy_gbps;

template <strata::norm_kind Kind, class T, int V>
bool try_cluster(const sn::args<T>& a, int parts, int G, index_t ahead, double& ms) {
  const index_t units = a.cols / sn::lanes<T>, per = index_t(G) * V;
  auto k = cluster_rows<Kind, T, V>;
  if (parts > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(a.rows * parts));
  cfg.blockDim = dim3(unsigned(G));
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = unsigned(parts), at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
  cfg.attrs = at, cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, k, &cfg) != cudaSuccess || clusters == 0) {
    (void)cudaGetLastError();
    return false;
  }
  (void)units;
  ms = median_ms([&] { CK(cudaLaunchKernelEx(&cfg, k, a, parts, per, ahead)); });
  std::printf("    cluster parts=%d G=%d V=%d ahead=%lld clusters=%d: %.4f ms\n", parts, G, V, (long long)ahead, clusters, ms);
  return true;
}

template <strata::norm_kind Kind, class T>
void shape(const char* dtype, index_t hidden, char* xb, char* yb, char* zb, const T* g, const T* b) {
  const index_t rows = std::max<index_t>(1, index_t(268.4e6 / (2.0 * hidden * sizeof(T))));
  const std::size_t bytes = std::size_t(rows) * hidden * sizeof(T);
  auto x = strata::make_matrix_view<const T>(reinterpret_cast<const T*>(xb), rows, hidden, hidden);
  auto y = strata::make_matrix_view<T>(reinterpret_cast<T*>(yb), rows, hidden, hidden);
  const cuda::std::span<const T> gs(g, std::size_t(hidden)), bs(b, Kind == strata::norm_kind::layer ? std::size_t(hidden) : 0);
  const double copy = median_ms([&] { CK(cudaMemcpyAsync(zb, xb, bytes, cudaMemcpyDeviceToDevice)); });
  auto lib = [&] {
    if constexpr (Kind == strata::norm_kind::layer) strata::layer_norm<T>(x, y, gs, bs, 1e-5f);
    else strata::rms_norm<T>(x, y, gs, 1e-6f);
  };
  const double lms = median_ms(lib);
  const char* kind = Kind == strata::norm_kind::layer ? "layer" : "rms";
  const sn::args<T> a{reinterpret_cast<const T*>(xb), reinterpret_cast<T*>(zb), g, Kind == strata::norm_kind::layer ? b : nullptr, rows, hidden, hidden, hidden, 1e-5f};
  const index_t units = hidden / sn::lanes<T>;
  double best = 1e9;
  int bp = 0, bg = 0, bv = 0;
  index_t ba = 0;
  std::printf("%s %s %lld x %lld: copy %.4f ms, library %.4f ms (x same copy %.3f, x 1 GiB copy %.3f)\n", kind, dtype, (long long)rows,
              (long long)hidden, copy, lms, copy / lms, 2.0 * bytes / (lms * 1e-3) / 1e9 / big_copy_gbps);
  for (int parts : {2, 4, 8, 16})
    for (int v : {2, 4, 8}) {
      const index_t need = (units + parts - 1) / parts;
      int G = int((need + v - 1) / v);
      G = (G + 31) / 32 * 32;
      if (G > 512 || G < 64) continue;
      if ((need + G - 1) / G != v) continue;  // a smaller count covers it with these threads
      const index_t part_bytes = need * 16;
      for (index_t ahead : {index_t(0), std::max<index_t>(1, index_t(1.9e6 / double(hidden * sizeof(T))))}) {
        double ms = 0;
        bool ok = false;
        switch (v) {
          case 2: ok = try_cluster<Kind, T, 2>(a, parts, G, ahead, ms); break;
          case 4: ok = try_cluster<Kind, T, 4>(a, parts, G, ahead, ms); break;
          default: ok = try_cluster<Kind, T, 8>(a, parts, G, ahead, ms); break;
        }
        if (ok && ms < best) best = ms, bp = parts, bg = G, bv = v, ba = ahead;
        (void)part_bytes;
      }
    }
  // check the best against the library's output
  double maxdiff = -1;
  if (bp) {
    switch (bv) {
      case 2: try_cluster<Kind, T, 2>(a, bp, bg, ba, best); break;
      case 4: try_cluster<Kind, T, 4>(a, bp, bg, ba, best); break;
      default: try_cluster<Kind, T, 8>(a, bp, bg, ba, best); break;
    }
    lib();
    CK(cudaDeviceSynchronize());
    std::vector<T> hy(std::size_t(rows) * hidden), hz(hy.size());
    CK(cudaMemcpy(hy.data(), yb, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hz.data(), zb, bytes, cudaMemcpyDeviceToHost));
    maxdiff = 0;
    for (std::size_t i = 0; i < hy.size(); ++i)
      maxdiff = std::max(maxdiff, double(std::abs(strata::to_float(hy[i]) - strata::to_float(hz[i]))));
  }
  std::printf("| %s | %s | %lldx%lld | %.4f | %.3f | %.3f | parts=%d G=%d V=%d ahead=%lld | %.4f | %.3f | %.3f | %.4f | %.3g |\n", kind, dtype,
              (long long)rows, (long long)hidden, lms, copy / lms, 2.0 * bytes / (lms * 1e-3) / 1e9 / big_copy_gbps, bp, bg, bv, (long long)ba,
              best, copy / best, 2.0 * bytes / (best * 1e-3) / 1e9 / big_copy_gbps, lms / best, maxdiff);
  std::fflush(stdout);
}

int main() {
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMalloc(&flush_buf, std::size_t(256) << 20));
  const std::size_t cap = std::size_t(1) << 30;
  char *xb, *yb, *zb, *gb;
  CK(cudaMalloc(&xb, cap));
  CK(cudaMalloc(&yb, cap));
  CK(cudaMalloc(&zb, cap));
  CK(cudaMalloc(&gb, std::size_t(8) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(xb), cap / 2);
  fill<<<1024, 256>>>(reinterpret_cast<unsigned short*>(gb), (std::size_t(8) << 20) / 2);
  CK(cudaDeviceSynchronize());
  const double big = median_ms([&] { CK(cudaMemcpyAsync(yb, xb, cap, cudaMemcpyDeviceToDevice)); });
  big_copy_gbps = 2.0 * cap / (big * 1e-3) / 1e9;
  std::printf("cudaMemcpy 1 GiB: %.1f GB/s\n", big_copy_gbps);
  std::printf("| kind | dtype | rows x hidden | library ms | x same copy | x 1 GiB copy | best cluster | ms | x same copy | x 1 GiB copy | library / cluster | max diff |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  const float* gf = reinterpret_cast<const float*>(gb);
  const __nv_bfloat16* gh = reinterpret_cast<const __nv_bfloat16*>(gb);
  for (index_t h : {4096, 8448, 9216, 12288, 16384, 32768, 65536, 262144}) {
    shape<strata::norm_kind::layer, float>("fp32", h, xb, yb, zb, gf, gf + (1 << 20) - h);
    shape<strata::norm_kind::rms, float>("fp32", h, xb, yb, zb, gf, gf + (1 << 20) - h);
    shape<strata::norm_kind::layer, __nv_bfloat16>("bf16", h, xb, yb, zb, gh, gh + (1 << 21) - h);
    shape<strata::norm_kind::rms, __nv_bfloat16>("bf16", h, xb, yb, zb, gh, gh + (1 << 21) - h);
  }
  return 0;
}
