// SPDX-License-Identifier: Apache-2.0
// Benchmark support: device timers (CUDA events, or a steady clock on the host backend), buffers,
// and registration that names each run workload/variant/n with the bytes it must move.
#pragma once

#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <benchmark/benchmark.h>

#include "../fixtures/random.hpp"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace strata_bench {

/// Benchmark inputs: random records from a fixed seed, the same on every run.
template <class T>
std::vector<T> records(std::size_t n, std::uint64_t salt = 0) {
  return strata_fixtures::seeded_records<T>(n, 0x5eedu, salt);
}

#if defined(STRATA_BACKEND_CUDA)
#define STRATA_BENCH_CHECK(expr) strata::detail::cuda_check((expr), #expr)
class timer {
 public:
  timer() {
    STRATA_BENCH_CHECK(cudaEventCreate(&a_));
    STRATA_BENCH_CHECK(cudaEventCreate(&b_));
  }
  ~timer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  void start() { STRATA_BENCH_CHECK(cudaEventRecord(a_)); }
  /// Seconds since start(), after the device finished; also surfaces launch errors.
  double stop() {
    STRATA_BENCH_CHECK(cudaEventRecord(b_));
    STRATA_BENCH_CHECK(cudaEventSynchronize(b_));
    STRATA_BENCH_CHECK(cudaGetLastError());
    float ms = 0;
    STRATA_BENCH_CHECK(cudaEventElapsedTime(&ms, a_, b_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t a_, b_;
};
inline void sync() { STRATA_BENCH_CHECK(cudaDeviceSynchronize()); }
/// Before each timed iteration: a 256 MiB memset on the stream, which leaves L2 holding none of the
/// benchmark's data and keeps the GPU busy while the host queues the timed work, so the events
/// measure device time, not the host's launch latency. Triton's do_bench, which times the PyTorch
/// figures in bench/layer_norm_torch.py, does the same.
inline void flush_l2() {
  static const std::size_t bytes = std::size_t(256) << 20;
  static strata::buffer scratch(bytes, strata::memory_space::device);
  strata::fill_bytes_async(scratch.data(), 0, bytes, strata::stream_t{}, strata::memory_space::device);
}
#else
class timer {
 public:
  void start() { t0_ = std::chrono::steady_clock::now(); }
  double stop() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};
inline void sync() {}
inline void flush_l2() {}
#endif

/// What a timed iteration holds: device time only (the work is queued while the GPU flushes L2),
/// or everything from an idle GPU on (work that runs partly on the host, such as staging copies,
/// must not start its host part before the clock does).
enum class timing { device, from_idle };

/// Runs body() a few times untimed, then once per benchmark iteration timed on the device, each
/// after flush_l2().
template <class Body>
void run_timed(benchmark::State& state, double bytes, double n, Body&& body, timing mode = timing::device) {
  for (int i = 0; i < 3; ++i) body();
  sync();
  timer t;
  for (auto _ : state) {
    flush_l2();
    if (mode == timing::from_idle) sync();
    t.start();
    body();
    state.SetIterationTime(t.stop());
  }
  state.counters["bytes"] = bytes;
  state.counters["n"] = n;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

/// Benchmark size: STRATA_BENCH_SCALE=k divides the default sizes by 2^k (quick runs, host backend).
inline std::int64_t scaled(std::int64_t n) {
  static const int shift = [] {
    const char* s = std::getenv("STRATA_BENCH_SCALE");
#if defined(STRATA_BACKEND_CUDA)
    if (!s) return 0;
#else
    if (!s) return 6;  // the host backend runs 64x smaller problems by default
#endif
    int k = -1;
    const char* end = s + std::strlen(s);
    const auto [at, err] = std::from_chars(s, end, k);
    if (err != std::errc{} || at != end || k < 0 || k > 30) {
      std::fprintf(stderr, "STRATA_BENCH_SCALE=%s: a whole number from 0 to 30 is needed\n", s);
      std::exit(2);
    }
    return k;
  }();
  return n >> shift;
}

inline benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b) {
  return b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20)->Repetitions(5)->ReportAggregatesOnly(true);
}

#define STRATA_BENCH_CAT2(a, b) a##b
#define STRATA_BENCH_CAT(a, b) STRATA_BENCH_CAT2(a, b)
#define STRATA_BENCHMARK(fn, name)                                         \
  static auto* STRATA_BENCH_CAT(strata_bench_, __LINE__) = ::strata_bench::configure( \
      ::benchmark::RegisterBenchmark(std::string(name).c_str(), fn))

}  // namespace strata_bench
