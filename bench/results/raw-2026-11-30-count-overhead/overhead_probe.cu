// overhead_probe: where does strata::gather's count cost time? The official run of 2026-11-30 has
// gather (count) 3.49 ms against the records way forced 3.36 ms for a random permutation of 2^26
// particles, and 1.517 against 1.489 (columns forced) for a re-sort. Each of identity, a local
// shuffle (records moved within blocks of 64: nothing far) and a random permutation is gathered by
// the count and by each way forced, once each after a warm-up; run under nsys or ncu, every
// kernel's duration shows where the difference is. Outputs compared with the forced ways'. With
// `timed`, median of 7. A fourth family, 5% of the indices random (the rest the identity), has
// lines that jump in most places while the count stays under its limit (the columns way).
#include <strata/algorithm/sort.hpp>
#include <strata/container/soa_vector.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, z), (float, vx), (float, vy), (float, vz), (float, m));
};

int main(int argc, char** argv) {
  const bool timed = argc > 1 && std::string(argv[1]) == "timed";
  const std::size_t n = std::size_t(1) << 26;
  std::vector<particle> h(n);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& p : h) p = {u(g), u(g), u(g), u(g), u(g), u(g), u(g)};
  strata::soa_vector<particle> src(h), out, ref;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  using way = strata::detail::gather_way;
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<std::int32_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    if (kind == 1)
      for (std::size_t i = 0; i < n; i += 64) std::shuffle(p.begin() + i, p.begin() + i + 64, g);
    if (kind == 2) std::shuffle(p.begin(), p.end(), g);
    if (kind == 3)
      for (auto& x : p)
        if (g() % 20 == 0) x = std::int32_t(g() % n);
    std::int32_t* d;
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMemcpy(d, p.data(), n * 4, cudaMemcpyHostToDevice));
    const cuda::std::span<const std::int32_t> idx(d, n);
    const char* names[4] = {"identity", "shuffled in 64s", "random", "5% random"};
    for (auto [wname, w] : {std::pair{"columns", way::columns}, std::pair{"records", way::records}, std::pair{"count", way::count}}) {
      strata::detail::gather_forced = w;
      strata::gather(src, idx, out);  // warm-up (and the allocations)
      CK(cudaDeviceSynchronize());
      std::vector<float> t;
      for (int r = 0; r < (timed ? 7 : 1); ++r) {
        CK(cudaEventRecord(a));
        strata::gather(src, idx, out);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      if (w == way::columns) ref = out;
      bool same = true;
      if (w != way::columns) {
        const std::vector<particle> x = out.to_host(), y = ref.to_host();
        same = std::memcmp(x.data(), y.data(), n * sizeof(particle)) == 0;
      }
      std::printf("| %s | %s | %.3f | %s |\n", names[kind], wname, t[t.size() / 2], same ? "same" : "DIFFERENT");
      std::fflush(stdout);
    }
    strata::detail::gather_forced = way::count;
    CK(cudaFree(d));
  }
  return 0;
}
