// The normalization sweep: layer norm and RMS norm at every hidden size of the sweep (multiples of
// 256 up to 16384 and the odd and long ones), fp32 and bf16, rows chosen so that each case moves
// about 256 MB, timed like strata_bench (CUDA events, each run after a 256 MiB memset that empties
// L2; median of 20). With --validate, every configuration the chooser considered is timed too, and
// the table shows the chosen one against the fastest: the check that the choice holds across
// shapes. Writes results rows (report.py --extra) and the validation table as JSON.
//   norm_sweep [--coarse] [--validate] [--out FILE]
#include "common.hpp"

#include <strata/algorithm/normalize.hpp>

#include <thrust/execution_policy.h>
#include <thrust/tabulate.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

using strata::index_t;
namespace sn = strata::detail::norm;

std::vector<index_t> hiddens(bool coarse) {
  std::set<index_t> h = {1000, 1023, 1025, 3000, 4095, 4097, 5000, 12288, 32768, 65536, 262144};
  for (index_t c = coarse ? 1024 : 256; c <= 16384; c += coarse ? 1024 : 256) h.insert(c);
  if (coarse) h.insert({256, 512, 768});
  return {h.begin(), h.end()};
}

template <class T>
struct hashed {
  STRATA_HD T operator()(index_t i) const {
    std::uint32_t x = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32) * 40503u;
    x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
    return strata::from_float<T>(float(x % 20001) / 2500.0f - 3.5f);
  }
};

template <class Body>
double median_ms(Body&& body) {
  for (int i = 0; i < 3; ++i) body();
  strata_bench::sync();
  std::vector<double> t;
  strata_bench::timer clock;
  for (int i = 0; i < 20; ++i) {
    strata_bench::flush_l2();
    clock.start();
    body();
    t.push_back(clock.stop() * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct row {
  std::string kind, dtype, chosen, best;
  index_t rows, hidden;
  double bytes, ms, best_ms;
};

template <strata::norm_kind Kind, class T>
row measure(const char* dtype, index_t hidden, bool validate) {
  const index_t rows = std::max<index_t>(1, strata_bench::scaled(index_t(256) << 20) / (2 * hidden * index_t(sizeof(T))));
  strata::matrix<T> x(rows, hidden), y(rows, hidden), g(1, hidden), b(1, hidden);
  auto xv = x.view();
  thrust::tabulate(thrust::device, xv.data, xv.data + rows * xv.pitch, hashed<T>{});
  std::vector<T> ones(std::size_t(hidden), strata::from_float<T>(1.0f)), zeros(std::size_t(hidden), strata::from_float<T>(0.0f));
  g.copy_from_host(ones.data());
  b.copy_from_host(zeros.data());
  const cuda::std::span<const T> gs(g.const_view().data, std::size_t(hidden)), bs(b.const_view().data, std::size_t(hidden));
  auto call = [&](const sn::plan* p) {
    if (p) return sn::run_with<Kind>(*p, x.const_view(), y.view(), gs, Kind == strata::norm_kind::layer ? bs : cuda::std::span<const T>{}, 1e-5f);
    if constexpr (Kind == strata::norm_kind::layer) return strata::layer_norm<T>(x.const_view(), y.view(), gs, bs, 1e-5f);
    else return strata::rms_norm<T>(x.const_view(), y.view(), gs, 1e-5f);
  };
  row r{Kind == strata::norm_kind::layer ? "layer_norm" : "rms_norm", dtype, "", "", rows, hidden,
        2.0 * double(rows) * double(hidden) * sizeof(T), 0, 0};
#if defined(STRATA_BACKEND_CUDA)
  const sn::plan chosen = sn::planned<Kind, T>(hidden);
  r.chosen = sn::describe(chosen);
#endif
  r.ms = median_ms([&] { call(nullptr); });
  r.best = r.chosen, r.best_ms = r.ms;
#if defined(STRATA_BACKEND_CUDA)
  if (validate)
    for (const sn::plan& p : sn::candidates<T>(hidden)) {
      const double ms = median_ms([&] { call(&p); });
      if (ms < r.best_ms) r.best_ms = ms, r.best = sn::describe(p);
    }
#else
  (void)validate;
#endif
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool coarse = false, validate = false;
  std::string out = "norm_sweep.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--coarse") coarse = true;
    else if (a == "--validate") validate = true;
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else return std::fprintf(stderr, "usage: norm_sweep [--coarse] [--validate] [--out FILE]\n"), 2;
  }
  const std::size_t copy_bytes = std::size_t(1) << 30;
  strata::buffer src(copy_bytes, strata::memory_space::device), dst(copy_bytes, strata::memory_space::device);
  strata::fill_bytes_async(src.data(), 1, copy_bytes, strata::stream_t{}, strata::memory_space::device);
  const double copy_ms = median_ms([&] { strata::copy_bytes_async(dst.data(), src.data(), copy_bytes, strata::stream_t{}); });
  const double memcpy_gbps = 2.0 * double(copy_bytes) / (copy_ms * 1e-3) / 1e9;
  std::printf("cudaMemcpy D2D %.1f GB/s\n| op | dtype | rows x hidden | chosen | ms | x memcpy | fastest considered | ms | chosen / fastest |\n"
              "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: |\n", memcpy_gbps);
  std::vector<row> all;
  for (index_t h : hiddens(coarse)) {
    for (auto r : {measure<strata::norm_kind::layer, float>("fp32", h, validate), measure<strata::norm_kind::layer, strata::bfloat16>("bf16", h, validate),
                   measure<strata::norm_kind::rms, float>("fp32", h, validate), measure<strata::norm_kind::rms, strata::bfloat16>("bf16", h, validate)}) {
      std::printf("| %s | %s | %lldx%lld | %s | %.4f | %.3f | %s | %.4f | %.3f |\n", r.kind.c_str(), r.dtype.c_str(), (long long)r.rows,
                  (long long)r.hidden, r.chosen.c_str(), r.ms, r.bytes / (r.ms * 1e-3) / 1e9 / memcpy_gbps, r.best.c_str(), r.best_ms,
                  r.ms / r.best_ms);
      std::fflush(stdout);
      all.push_back(r);
    }
  }
  std::ofstream f(out);
  f << "{\"memcpy_gbps\": " << memcpy_gbps << ", \"results\": [\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    const row& r = all[i];
    f << " {\"workload\": \"" << r.kind << "\", \"variant\": \"strata\", \"dtype\": \"" << r.dtype << "\", \"rows\": " << r.rows
      << ", \"hidden\": " << r.hidden << ", \"n\": " << r.rows * r.hidden << ", \"bytes\": " << (long long)r.bytes << ", \"ms\": " << r.ms
      << ", \"gbps\": " << r.bytes / (r.ms * 1e-3) / 1e9 << ", \"plan\": \"" << r.chosen << "\", \"fastest_considered\": \"" << r.best
      << "\", \"fastest_ms\": " << r.best_ms << "}" << (i + 1 < all.size() ? ",\n" : "\n");
  }
  f << "]}\n";
  return 0;
}
