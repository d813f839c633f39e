// SPDX-License-Identifier: Apache-2.0
// The normalization sweep: layer norm and RMS norm at every hidden size of the sweep (multiples of
// 256 up to 16384 and the odd and long ones), fp32 and bf16, rows chosen so that each case moves
// about 256 MB, timed like strata_bench (CUDA events, each run after a 256 MiB memset that empties
// L2; median of 20). With --validate, every plan the chooser weighed is timed too, with what the
// chooser knew of it (blocks per SM, resident row bytes, share of units used, score): the check
// that the choice holds across shapes. Writes results rows (report.py --extra) with each
// validated plan's time. Beside the ratio to a 1 GiB cudaMemcpy (the project's reference, as in
// strata_bench), each point also times a cudaMemcpy of its own input's bytes: a copy moving about
// 256 MB runs below the 1 GiB copy's rate itself (launch, ramp and drain weigh more).
// With --dense, rows lie back to back in plain device buffers (a tensor someone else allocated)
// instead of strata's matrix, whose rows start on 16-byte boundaries.
//   norm_sweep [--coarse] [--validate] [--dense] [--hidden h1,h2,...] [--out FILE]   (--help says more)
#include "common.hpp"

#include <strata/algorithm/normalize.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
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
bool dense_rows = false;  // --dense

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

struct timed_plan {
  std::string plan;
  int blocks = 0;
  double resident_kb = 0, used = 0, score = 0, ms = 0;
};
struct row {
  std::string kind, dtype, chosen, best;
  index_t rows, hidden;
  double bytes, ms, best_ms, copy_ms;  // copy_ms: cudaMemcpy of the input's bytes
  std::vector<timed_plan> plans;
};

template <strata::norm_kind Kind, class T>
row measure(const char* dtype, index_t hidden, bool validate) {
  const index_t rows = std::max<index_t>(1, strata_bench::scaled(index_t(256) << 20) / (2 * hidden * index_t(sizeof(T))));
  // strata's matrix (rows padded to 16-byte boundaries), or with --dense rows back to back in plain
  // device buffers, as a tensor someone else allocated holds them.
  strata::matrix<T> mx, my, g(1, hidden), b(1, hidden);
  strata::buffer dx, dy;
  strata::matrix_view<T> xv, yv;
  if (dense_rows) {
    dx = strata::buffer(std::size_t(rows * hidden) * sizeof(T), strata::memory_space::device);
    dy = strata::buffer(std::size_t(rows * hidden) * sizeof(T), strata::memory_space::device);
    xv = strata::make_matrix_view(reinterpret_cast<T*>(dx.data()), rows, hidden, hidden);
    yv = strata::make_matrix_view(reinterpret_cast<T*>(dy.data()), rows, hidden, hidden);
  } else {
    mx = strata::matrix<T>(rows, hidden), my = strata::matrix<T>(rows, hidden);
    xv = mx.view(), yv = my.view();
  }
  const auto xc = strata::make_matrix_view<const T>(xv.data, rows, hidden, xv.pitch);
  thrust::tabulate(thrust::device, xv.data, xv.data + rows * xv.pitch, hashed<T>{});
  std::vector<T> ones(std::size_t(hidden), strata::from_float<T>(1.0f)), zeros(std::size_t(hidden), strata::from_float<T>(0.0f));
  g.copy_from_host(ones.data());
  b.copy_from_host(zeros.data());
  const cuda::std::span<const T> gs(g.const_view().data, std::size_t(hidden)), bs(b.const_view().data, std::size_t(hidden));
  const cuda::std::span<const T> beta = Kind == strata::norm_kind::layer ? bs : cuda::std::span<const T>{};
  auto call = [&](const sn::plan* p) {
    if (p) return sn::run_with<Kind>(*p, xc, yv, gs, beta, 1e-5f);
    if constexpr (Kind == strata::norm_kind::layer) return strata::layer_norm<T>(xc, yv, gs, bs, 1e-5f);
    else return strata::rms_norm<T>(xc, yv, gs, 1e-5f);
  };
  row r{Kind == strata::norm_kind::layer ? "layer_norm" : "rms_norm", dtype, "", "", rows, hidden,
        2.0 * double(rows) * double(hidden) * sizeof(T), 0, 0, 0, {}};
  const sn::args<T> a{xv.data, yv.data, gs.data(), beta.data(), rows, hidden, xv.pitch, yv.pitch, 1e-5f};
  const sn::row_needs needs = sn::needs_of(a);
  r.chosen = sn::describe(sn::planned<Kind, T>(needs));
  r.ms = median_ms([&] { call(nullptr); });
  r.copy_ms = median_ms([&] { strata::copy_bytes_async(yv.data, xv.data, std::size_t(r.bytes / 2), strata::stream_t{}); });
  r.best = r.chosen, r.best_ms = r.ms;
  if (validate) {
#if defined(STRATA_BACKEND_CUDA)
    const sn::device_model model = sn::gpu_model<Kind, T>(needs.whole, needs.tail);
#else
    const sn::device_model model = sn::host_model();
#endif
    std::vector<sn::plan> weighed = sn::plans_considered<Kind, T>(needs);
    // Streamed plans also at longer lags than the chooser sets (a row's chunks plus half or all of
    // the grid): how far a row's normalization may trail its statistics before L2 loses the chunks.
    for (std::size_t i = 0, n = weighed.size(); i < n; ++i) {
      if (weighed[i].shape != sn::shape::streamed) continue;
      for (const index_t extra : {index_t(weighed[i].grid / 2), index_t(weighed[i].grid)}) {
        sn::plan q = weighed[i];
        q.lag = index_t(q.parts) + extra;
        if (q.lag > weighed[i].lag) weighed.push_back(q);
      }
    }
    for (const sn::plan& p : weighed) {
      timed_plan t;
      t.plan = sn::describe(p), t.blocks = model.blocks_per_sm(p);
      const index_t units = p.shape == sn::shape::streamed ? needs.units.spanned : needs.units.held;
      t.resident_kb = sn::resident_bytes(p, units, t.blocks) / 1024, t.score = sn::score(p, units, t.blocks, model.target_bytes_per_sm);
      t.used = double(units) / (double(p.parts) * p.group * p.vpt);
      t.ms = median_ms([&] { call(&p); });
      if (t.ms < r.best_ms) r.best_ms = t.ms, r.best = t.plan;
      r.plans.push_back(t);
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool coarse = false, validate = false;
  std::string out = "norm_sweep.json";
  std::vector<index_t> only;
  CLI::App app{"The normalization sweep: layer norm and RMS norm, fp32 and bf16, at every hidden size of the sweep."};
  app.add_flag("--coarse", coarse, "hidden sizes in steps of 1024 (256 otherwise) up to 16384, and the odd and long ones");
  app.add_flag("--validate", validate, "also time every plan the chooser weighed");
  app.add_flag("--dense", dense_rows, "rows back to back in plain device buffers instead of strata's matrix");
  app.add_option("--hidden", only, "only these hidden sizes (comma separated)")->delimiter(',')->check(CLI::Range(index_t(1), index_t(1) << 40));
  app.add_option("--out", out, "the JSON file to write")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::size_t copy_bytes = strata_bench::scaled(index_t(1) << 30);
  strata::buffer src(copy_bytes, strata::memory_space::device), dst(copy_bytes, strata::memory_space::device);
  strata::fill_bytes_async(src.data(), 1, copy_bytes, strata::stream_t{}, strata::memory_space::device);
  const double copy_ms = median_ms([&] { strata::copy_bytes_async(dst.data(), src.data(), copy_bytes, strata::stream_t{}); });
  const double memcpy_gbps = 2.0 * double(copy_bytes) / (copy_ms * 1e-3) / 1e9;
#if defined(STRATA_BACKEND_CUDA)
  std::printf("memory bandwidth from the device %.1f GB/s, row bytes per SM targeted %.1f KiB\n", sn::memory_bandwidth() / 1e9,
              sn::gpu_model<strata::norm_kind::layer, float>(true, false).target_bytes_per_sm / 1024);
#endif
  std::printf("cudaMemcpy D2D %.1f GB/s\n| op | dtype | rows x hidden | chosen | ms | x memcpy | x copy of its bytes | fastest considered | ms | "
              "chosen / fastest |\n| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |\n", memcpy_gbps);
  std::vector<row> all;
  for (index_t h : only.empty() ? hiddens(coarse) : only) {
    for (auto r : {measure<strata::norm_kind::layer, float>("fp32", h, validate), measure<strata::norm_kind::layer, strata::bfloat16>("bf16", h, validate),
                   measure<strata::norm_kind::rms, float>("fp32", h, validate), measure<strata::norm_kind::rms, strata::bfloat16>("bf16", h, validate)}) {
      std::printf("| %s | %s | %lldx%lld | %s | %.4f | %.3f | %.3f | %s | %.4f | %.3f |\n", r.kind.c_str(), r.dtype.c_str(), (long long)r.rows,
                  (long long)r.hidden, r.chosen.c_str(), r.ms, r.bytes / (r.ms * 1e-3) / 1e9 / memcpy_gbps, r.copy_ms / r.ms, r.best.c_str(),
                  r.best_ms, r.ms / r.best_ms);
      std::fflush(stdout);
      all.push_back(r);
    }
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const row& r : all) {
    nlohmann::ordered_json considered = nlohmann::ordered_json::array();
    for (const timed_plan& t : r.plans)
      considered.push_back({{"plan", t.plan}, {"blocks_per_sm", t.blocks}, {"resident_kb", t.resident_kb}, {"used", t.used},
                            {"score", t.score}, {"ms", t.ms}});
    results.push_back({{"workload", r.kind}, {"variant", "strata"}, {"dtype", r.dtype}, {"rows", r.rows}, {"hidden", r.hidden},
                       {"n", r.rows * r.hidden}, {"bytes", (long long)r.bytes}, {"ms", r.ms}, {"gbps", r.bytes / (r.ms * 1e-3) / 1e9},
                       {"copy_ms", r.copy_ms}, {"plan", r.chosen}, {"fastest_considered", r.best}, {"fastest_ms", r.best_ms},
                       {"considered", considered}});
  }
  std::ofstream(out) << nlohmann::ordered_json{{"memcpy_gbps", memcpy_gbps}, {"results", results}}.dump(1) << "\n";
  return 0;
}
