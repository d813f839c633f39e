// Where strata::transform's host time per call goes, against a hand launch (probe, not committed).
#include <strata/algorithm/transform.hpp>
#include <strata/container/soa_vector.hpp>
#include "fixtures/records.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
#include <cuda.h>
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
template <int N> struct blob { char b[N]; };
template <int N> __global__ void empty_kernel(blob<N> b, std::int64_t n) { if (n < 0 && b.b[0]) printf("x"); }
__global__ void empty0() {}

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
  auto pin = packets(ci);
  auto pout = packets(co);
  using B = strata::detail::apply_each<decltype(pin), decltype(pout), strata::per_record_fn<advance>>;
  B body{pin, pout, {advance{}}};
  std::printf("body bytes %zu\n", sizeof(B));
  int sink = 0;
  cudaStream_t nb; cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
  using launch_fn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
  void* entry = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &q);
  auto cu_launch = reinterpret_cast<launch_fn>(entry);
  cudaFunction_t fbody, fhand;
  cudaGetFuncBySymbol(&fbody, (const void*)&strata::detail::direct_kernel<B>);
  cudaGetFuncBySymbol(&fhand, (const void*)&hand_advance);
  std::printf("entry %p q %d\n", entry, int(q));
  struct variant { const char* name; std::function<void()> call; };
  std::vector<variant> vs = {
      {"hand <<<>>>", [&] { hand_advance<<<unsigned((n4 + 255) / 256), 256>>>(x, y, z, vx, vy, vz, n4); }},
      {"strata::transform", [&] { strata::transform(in, out, advance{}); }},
      {"hand <<<>>> again", [&] { hand_advance<<<unsigned((n4 + 255) / 256), 256>>>(x, y, z, vx, vy, vz, n4); }},
      {"run_each(body) only", [&] { strata::detail::run_each(body, pin.size(), {}, "p"); }},
      {"cu body legacy", [&] { B b = body; std::int64_t nn = pin.size(); void* a[] = {&b, &nn};
                                  cu_launch((CUfunction)fbody, unsigned((nn + 255) / 256), 1, 1, 256, 1, 1, 0, nullptr, a, nullptr); }},
      {"cu hand legacy", [&] { std::int64_t nn = n4; void* a[] = {&x, &y, &z, &vx, &vy, &vz, &nn};
                                  cu_launch((CUfunction)fhand, unsigned((nn + 255) / 256), 1, 1, 256, 1, 1, 0, nullptr, a, nullptr); }},
      {"hand nonblocking", [&] { hand_advance<<<unsigned((n4 + 255) / 256), 256, 0, nb>>>(x, y, z, vx, vy, vz, n4); }},
      {"strata nonblocking", [&] { strata::transform(in, out, advance{}, nb); }},
      {"cu hand nonblocking", [&] { std::int64_t nn = n4; void* a[] = {&x, &y, &z, &vx, &vy, &vz, &nn};
                                  cu_launch((CUfunction)fhand, unsigned((nn + 255) / 256), 1, 1, 256, 1, 1, 0, (CUstream)nb, a, nullptr); }},
      {"cu body nonblocking", [&] { B b = body; std::int64_t nn = pin.size(); void* a[] = {&b, &nn};
                                  cu_launch((CUfunction)fbody, unsigned((nn + 255) / 256), 1, 1, 256, 1, 1, 0, (CUstream)nb, a, nullptr); }},
      {"hand per-thread", [&] { hand_advance<<<unsigned((n4 + 255) / 256), 256, 0, cudaStreamPerThread>>>(x, y, z, vx, vy, vz, n4); }},
      {"strata per-thread", [&] { strata::transform(in, out, advance{}, cudaStreamPerThread); }},
      {"detail::launch<> body", [&] { strata::detail::launch<&strata::detail::direct_kernel<B>>(dim3(unsigned((pin.size() + 255) / 256)), dim3(256), 0, {}, "p", body, pin.size()); }},
      {"cu CUkernel body legacy", [&] { static cudaKernel_t kb = [] { cudaKernel_t k; cudaGetKernel(&k, (const void*)&strata::detail::direct_kernel<B>); return k; }();
                                  B b = body; std::int64_t nn = pin.size(); void* a[] = {&b, &nn};
                                  cu_launch((CUfunction)kb, unsigned((nn + 255) / 256), 1, 1, 256, 1, 1, 0, (CUstream)0x1, a, nullptr); }},
      {"launch_scope only", [&] { strata::detail::launch_scope s("p", {}, {strata::detail::described(ci, "in"), strata::detail::described(co, "out")}); }},
      {"cudaGetDevice", [&] { int d; cudaGetDevice(&d); sink += d; }},
      {"cudaSetDevice(same)", [&] { cudaSetDevice(0); }},
      {"empty0 <<<16,256>>>", [&] { empty0<<<16, 256>>>(); }},
      {"empty 56B param", [&] { empty_kernel<48><<<16, 256>>>({}, n); }},
      {"empty 176B param", [&] { empty_kernel<168><<<16, 256>>>({}, n); }},
      {"empty 1024B param", [&] { empty_kernel<1016><<<16, 256>>>({}, n); }},
      {"cudaLaunchKernel 176B", [&] { blob<168> b{}; std::int64_t nn = n; void* a[] = {&b, &nn};
                                        cudaLaunchKernel((const void*)&empty_kernel<168>, dim3(16), dim3(256), a, 0, nullptr); }},
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
  for (size_t k = 0; k < vs.size(); ++k) {
    auto s = t[k]; std::sort(s.begin(), s.end());
    std::printf("%-26s median %.3f us  p10 %.3f  p90 %.3f\n", vs[k].name, s[s.size() / 2], s[s.size() / 10], s[s.size() * 9 / 10]);
  }
  std::printf("err %s sink %d\n", cudaGetErrorString(cudaGetLastError()), sink);
}
