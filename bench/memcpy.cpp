// SPDX-License-Identifier: Apache-2.0
// The yardstick: a device-to-device copy of 1 GiB, counted as bytes read plus bytes written.
#include "common.hpp"

#include <strata/memory/resource.hpp>

namespace {

void memcpy_d2d(benchmark::State& state) {
  const std::size_t bytes = std::size_t(strata_bench::scaled(std::int64_t(1) << 30));
  strata::buffer a(bytes, strata::memory_space::device), b(bytes, strata::memory_space::device);
  strata::fill_bytes_async(a.data(), 1, bytes, strata::stream_t{}, strata::memory_space::device);
  strata_bench::run_timed(state, 2.0 * double(bytes), double(bytes), [&] {
    strata::copy_bytes_async(b.data(), a.data(), bytes, strata::stream_t{});
  });
}
STRATA_BENCHMARK(memcpy_d2d, "memcpy/d2d/" + std::to_string(strata_bench::scaled(std::int64_t(1) << 30)));

}  // namespace
