// Probe: host time per call of strata::transform (4096 particles, the latency benchmark's advance)
// against a hand float4 kernel on the legacy default stream, a blocking stream and a non-blocking
// stream the caller made; and the stream check alone, the way launch_scope asks now (one driver
// query) and the runtime's way it asked before. Variants interleaved: 41 rounds of 1000 calls each.
#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>
#include "fixtures/records.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
using strata_fixtures::particle;
constexpr float dt = 0.01f;
struct advance {
  STRATA_HD particle operator()(particle p) const { p.x += p.vx * dt, p.y += p.vy * dt, p.z += p.vz * dt; return p; }
};
__global__ void hand_advance(float4* x, float4* y, float4* z, const float4* vx, const float4* vy, const float4* vz, std::int64_t n4) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 a = x[i], b = y[i], c = z[i], u = vx[i], v = vy[i], w = vz[i];
  a.x += u.x * dt, a.y += u.y * dt, a.z += u.z * dt, a.w += u.w * dt;
  b.x += v.x * dt, b.y += v.y * dt, b.z += v.z * dt, b.w += v.w * dt;
  c.x += w.x * dt, c.y += w.y * dt, c.z += w.z * dt, c.w += w.w * dt;
  x[i] = a, y[i] = b, z[i] = c;
}
int main() {
  const std::int64_t n = 4096, n4 = n / 4;
  strata::soa_vector<particle> v(n);
  auto in = strata::project<&particle::x, &particle::y, &particle::z, &particle::vx, &particle::vy, &particle::vz>(v);
  auto out = strata::project<&particle::x, &particle::y, &particle::z>(v);
  auto f4 = [&](auto col) { return reinterpret_cast<float4*>(col.data()); };
  float4 *x = f4(v.column<&particle::x>()), *y = f4(v.column<&particle::y>()), *z = f4(v.column<&particle::z>());
  float4 *vx = f4(v.column<&particle::vx>()), *vy = f4(v.column<&particle::vy>()), *vz = f4(v.column<&particle::vz>());
  auto ci = strata::detail::as_const_view(in);
  auto co = strata::detail::as_view(out);
  cudaStream_t blk, nb;
  cudaStreamCreate(&blk);
  cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
  int sink = 0;
  auto hand = [&](cudaStream_t s) { hand_advance<<<unsigned((n4 + 255) / 256), 256, 0, s>>>(x, y, z, vx, vy, vz, n4); };
  struct variant { const char* name; std::function<void()> call; };
  std::vector<variant> vs = {
      {"hand legacy", [&] { hand(nullptr); }},
      {"strata legacy", [&] { strata::transform(in, out, advance{}); }},
      {"hand blocking stream", [&] { hand(blk); }},
      {"strata blocking stream", [&] { strata::transform(in, out, advance{}, blk); }},
      {"hand non-blocking", [&] { hand(nb); }},
      {"strata non-blocking", [&] { strata::transform(in, out, advance{}, nb); }},
      {"launch_scope legacy", [&] { strata::detail::launch_scope s("p", {}, {strata::detail::described(ci, "in"), strata::detail::described(co, "out")}); }},
      {"launch_scope blocking", [&] { strata::detail::launch_scope s("p", blk, {strata::detail::described(ci, "in"), strata::detail::described(co, "out")}); }},
      {"runtime stream check", [&] { cudaStreamCaptureStatus c; int d = -1; if (cudaStreamIsCapturing(blk, &c) == cudaSuccess && c == cudaStreamCaptureStatusNone) cudaStreamGetDevice(blk, &d); sink += d; }},
      {"driver stream check", [&] { sink += strata::detail::stream_in_current_context(blk); }},
      {"cudaGetDevice", [&] { int d; cudaGetDevice(&d); sink += d; }},
  };
  const int calls = 1000, rounds = 41;
  std::vector<std::vector<double>> t(vs.size());
  for (auto& w : vs) for (int i = 0; i < 200; ++i) w.call();
  cudaDeviceSynchronize();
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < vs.size(); ++k) {
      cudaDeviceSynchronize();
      auto h0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) vs[k].call();
      t[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / calls * 1e6);
    }
  cudaDeviceSynchronize();
  std::vector<double> med(vs.size());
  for (size_t k = 0; k < vs.size(); ++k) {
    auto s = t[k]; std::sort(s.begin(), s.end());
    med[k] = s[s.size() / 2];
    std::printf("%-24s median %.3f us  p10 %.3f  p90 %.3f\n", vs[k].name, med[k], s[s.size() / 10], s[s.size() * 9 / 10]);
  }
  std::printf("strata / hand: legacy %.3f, blocking stream %.3f, non-blocking %.3f\n", med[1] / med[0], med[3] / med[2], med[5] / med[4]);
  std::printf("err %s sink %d\n", cudaGetErrorString(cudaGetLastError()), sink);
}
