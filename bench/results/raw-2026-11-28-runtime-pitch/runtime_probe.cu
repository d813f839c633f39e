// Probe: the runtime-described SoA -> AoS conversion (strata::soa_to_aos with runtime_field lists)
// for records of several shapes; each output checked byte for byte against a host transposition
// (gap bytes zero). Built once against the headers before the change and once after
// (2026-11-28: three shapes added to the 2026-11-27 probe):
//   nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -I<root>/include runtime_probe.cu -o probe
#include <strata/convert/runtime.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s line %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)

struct shape {
  std::string name;
  std::size_t stride;
  std::vector<strata::runtime_field> fields;
};

void* flush_buf = nullptr;
std::size_t flush_bytes = 0;

template <class F>
float median_ms(F&& f, int reps = 20) {
  f();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CK(cudaMemsetAsync(flush_buf, r, flush_bytes));
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Optional arguments: the tile's record cap and byte budget (strata::detail::runtime_tile_cap and
// runtime_tile_budget, both directions; 0: the library's defaults).
int main(int argc, char** argv) {
  if (argc > 1) strata::detail::runtime_tile_cap = std::uint32_t(std::atoi(argv[1]));
  if (argc > 2) strata::detail::runtime_tile_budget = std::uint32_t(std::atoi(argv[2]));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  flush_bytes = std::size_t(prop.l2CacheSize) * 4;
  CK(cudaMalloc(&flush_buf, flush_bytes));
  const std::size_t cb = std::size_t(1) << 30;
  void *x, *y;
  CK(cudaMalloc(&x, cb));
  CK(cudaMalloc(&y, cb));
  CK(cudaMemset(x, 1, cb));
  const float copy_ms = median_ms([&] { CK(cudaMemcpyAsync(y, x, cb, cudaMemcpyDeviceToDevice)); });
  const double memcpy_gbps = 2.0 * double(cb) / copy_ms / 1e6;
  CK(cudaFree(x));
  CK(cudaFree(y));
  std::printf("%s; cudaMemcpy D2D %.1f GB/s (read + written); median of 20, L2 overwritten before each; tile cap %u, budget %u (0: default)\n\n", prop.name, memcpy_gbps, strata::detail::runtime_tile_cap, strata::detail::runtime_tile_budget);
  std::printf("| record | stride | fields | records | ms | x memcpy | output | to SoA ms | to SoA x memcpy | to SoA output |\n| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |\n");

  std::vector<shape> shapes;
  {
    shape s{"particle (7 x fp32)", 28, {}};
    for (std::size_t k = 0; k < 7; ++k) s.fields.push_back({4 * k, 4});
    shapes.push_back(s);
  }
  shapes.push_back({"mixed (f64, f32, u16, u8; 1 gap byte)", 16, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}});
  shapes.push_back({"three_bytes (3 x u8, 1 gap byte)", 4, {{0, 1}, {1, 1}, {2, 1}}});
  shapes.push_back({"two_floats", 8, {{0, 4}, {4, 4}}});
  {
    shape s{"24 x fp32", 96, {}};
    for (std::size_t k = 0; k < 24; ++k) s.fields.push_back({4 * k, 4});
    shapes.push_back(s);
  }
  shapes.push_back({"f64, 4 x u16, f32 (packed: 20 bytes)", 20, {{0, 8}, {8, 2}, {10, 2}, {12, 2}, {14, 2}, {16, 4}}});
  shapes.push_back({"float4-like 16-byte field + f32 + gap", 32, {{0, 16}, {16, 4}}});
  shapes.push_back({"packed NumPy (f64, f32, u16, u8: 15 bytes)", 15, {{0, 8}, {8, 4}, {12, 2}, {14, 1}}});
  shapes.push_back({"packed NumPy (u8, f64, f32: 13 bytes)", 13, {{0, 1}, {1, 8}, {9, 4}}});
  shapes.push_back({"u16 x 3 + gap (8 bytes)", 8, {{0, 2}, {2, 2}, {4, 2}}});

  std::mt19937_64 g(42);
  for (const shape& s : shapes) {
    std::size_t field_bytes = 0;
    for (const auto& f : s.fields) field_bytes += f.size;
    const std::size_t n = (std::size_t(1) << 30) / (field_bytes + s.stride) * 2 / 2;  // about 1 GiB moved
    std::vector<std::vector<unsigned char>> host_cols(s.fields.size());
    std::vector<void*> cols(s.fields.size());
    for (std::size_t k = 0; k < s.fields.size(); ++k) {
      host_cols[k].resize(n * s.fields[k].size);
      for (std::size_t i = 0; i + 8 <= host_cols[k].size(); i += 8) {
        const std::uint64_t v = g();
        std::memcpy(&host_cols[k][i], &v, 8);
      }
      for (std::size_t i = host_cols[k].size() / 8 * 8; i < host_cols[k].size(); ++i) host_cols[k][i] = (unsigned char)g();
      CK(cudaMalloc(&cols[k], host_cols[k].size()));
      CK(cudaMemcpy(cols[k], host_cols[k].data(), host_cols[k].size(), cudaMemcpyHostToDevice));
    }
    std::vector<unsigned char> want(n * s.stride, 0);
    for (std::size_t k = 0; k < s.fields.size(); ++k)
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&want[i * s.stride + s.fields[k].offset], &host_cols[k][i * s.fields[k].size], s.fields[k].size);
    void* aos = nullptr;
    CK(cudaMalloc(&aos, want.size()));
    CK(cudaMemset(aos, 0xab, want.size()));
    const cuda::std::span<const strata::runtime_field> fs(s.fields.data(), s.fields.size());
    const strata::index_t nn = strata::index_t(n);
    strata::soa_to_aos(cols.data(), fs, nn, aos, s.stride);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(want.size());
    CK(cudaMemcpy(got.data(), aos, got.size(), cudaMemcpyDeviceToHost));
    const bool ok = got == want;
    const float ms = median_ms([&] { strata::soa_to_aos(cols.data(), fs, nn, aos, s.stride); });
    const double bytes = double(n) * double(field_bytes + s.stride);
    // The other direction from the same records: columns poisoned, then compared with the originals.
    std::vector<void*> back(s.fields.size());
    for (std::size_t k = 0; k < s.fields.size(); ++k) {
      CK(cudaMalloc(&back[k], host_cols[k].size()));
      CK(cudaMemset(back[k], 0xcd, host_cols[k].size()));
    }
    CK(cudaMemcpy(aos, want.data(), want.size(), cudaMemcpyHostToDevice));
    strata::aos_to_soa(aos, s.stride, nn, fs, back.data());
    CK(cudaDeviceSynchronize());
    bool back_ok = true;
    for (std::size_t k = 0; k < s.fields.size(); ++k) {
      std::vector<unsigned char> col(host_cols[k].size());
      CK(cudaMemcpy(col.data(), back[k], col.size(), cudaMemcpyDeviceToHost));
      back_ok = back_ok && col == host_cols[k];
    }
    const float back_ms = median_ms([&] { strata::aos_to_soa(aos, s.stride, nn, fs, back.data()); });
    std::printf("| %s | %zu | %zu | %zu | %.4f | %.3f | %s | %.4f | %.3f | %s |\n", s.name.c_str(), s.stride, s.fields.size(), n, ms,
                bytes / ms / 1e6 / memcpy_gbps, ok ? "bit for bit" : "WRONG", back_ms, bytes / back_ms / 1e6 / memcpy_gbps,
                back_ok ? "bit for bit" : "WRONG");
    for (void* c : back) CK(cudaFree(c));
    for (void* c : cols) CK(cudaFree(c));
    CK(cudaFree(aos));
  }
  return 0;
}
