// SPDX-License-Identifier: Apache-2.0
// Benchmark driver: records the GPU, CUDA version and backend in the JSON context, then runs.
#include "common.hpp"

#include <string>

int main(int argc, char** argv) {
#if defined(STRATA_BACKEND_CUDA)
  int dev = 0, runtime = 0;
  cudaDeviceProp prop{};
  STRATA_BENCH_CHECK(cudaGetDevice(&dev));
  STRATA_BENCH_CHECK(cudaGetDeviceProperties(&prop, dev));
  STRATA_BENCH_CHECK(cudaRuntimeGetVersion(&runtime));
  benchmark::AddCustomContext("gpu", prop.name);
  benchmark::AddCustomContext("cuda", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10));
  benchmark::AddCustomContext("backend", "cuda");
#else
  benchmark::AddCustomContext("gpu", "host backend (no GPU)");
  benchmark::AddCustomContext("cuda", "none");
  benchmark::AddCustomContext("backend", "host");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
