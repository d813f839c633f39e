// Does a row that ends inside a 32-byte sector cost a copy of rows more than its bytes, and does
// writing the rest of that sector (padding the row's owner keeps zero) give it back? A block of
// 128 threads copies one row of `row_bytes` bytes at a pitch of `pitch` bytes with 16-byte
// vectors, the partial last vector's bytes one by one (as a kernel over rows of any length
// does). Fill == 1: the partial vector and the rest of its 32-byte sector are written whole, the
// bytes past the row as zeros (the row's owner pads it). Timed as the median of 21 runs after a
// 256 MiB memset that flushes L2; rows x row_bytes about 128 MiB.
#include <algorithm>
#include <cstdio>
#include <vector>

template <int Fill>
__global__ void __launch_bounds__(128) copy_rows(const char* x, char* y, long row_bytes, long pitch) {
  const char* xr = x + blockIdx.x * pitch;
  char* yr = y + blockIdx.x * pitch;
  const long whole = row_bytes / 16, tail = row_bytes % 16;
  for (long u = threadIdx.x; u < whole; u += blockDim.x)
    reinterpret_cast<int4*>(yr)[u] = reinterpret_cast<const int4*>(xr)[u];
  if constexpr (Fill == 0) {
    if (tail > 0 && threadIdx.x < tail) yr[whole * 16 + threadIdx.x] = xr[whole * 16 + threadIdx.x];
  } else {
    // the partial vector, then vectors of zeros up to the end of its sector (within the pitch)
    if (row_bytes % 32 == 0) return;
    const long sector_end = (row_bytes + 31) / 32 * 32, end = (pitch < sector_end ? pitch : sector_end) / 16;
    const long u = whole + threadIdx.x;
    if (u < end) {
      int4 v = make_int4(0, 0, 0, 0);
      if (u == whole && tail > 0) {
        v = reinterpret_cast<const int4*>(xr)[u];
        const int t = int(tail);  // bytes of the row in this vector; the rest written as zeros
        auto keep = [t](int c) { const int nb = t - 4 * c; return nb >= 4 ? ~0u : nb <= 0 ? 0u : (1u << (8 * nb)) - 1; };
        v.x &= keep(0), v.y &= keep(1), v.z &= keep(2), v.w &= keep(3);
      }
      reinterpret_cast<int4*>(yr)[u] = v;
    }
  }
}

int main() {
  char *x, *y, *flush;
  const size_t cap = 160u << 20;
  cudaMalloc(&x, cap), cudaMalloc(&y, cap), cudaMalloc(&flush, 256 << 20);
  cudaMemset(x, 0, cap), cudaMemset(y, 0, cap);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  auto time = [&](auto launch) {
    std::vector<float> ts;
    for (int i = 0; i < 24; ++i) {
      cudaMemsetAsync(flush, i, 256 << 20);
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (i >= 3) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  const long total = 128l << 20;
  printf("| row bytes | pitch | rows | copy of the rows' bytes (cudaMemcpy) ms | row ends written as they are ms | sector filled ms | x copy, as they are | x copy, filled |\n");
  printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (long rb : {2048l, 2050l, 2064l, 2080l, 4096l, 4100l, 4112l, 4128l, 8194l, 8208l, 16388l, 16400l}) {
    for (long pitch : {(rb + 15) / 16 * 16, (rb + 31) / 32 * 32, (rb + 127) / 128 * 128}) {
      const long rows = total / rb;
      const float c = time([&] { cudaMemcpyAsync(y, x, size_t(rows * rb), cudaMemcpyDeviceToDevice); });
      const float a = time([&] { copy_rows<0><<<unsigned(rows), 128>>>(x, y, rb, pitch); });
      const float f = time([&] { copy_rows<1><<<unsigned(rows), 128>>>(x, y, rb, pitch); });
      if (cudaGetLastError() != cudaSuccess) return printf("launch failed\n"), 1;
      printf("| %ld | %ld | %ld | %.4f | %.4f | %.4f | %.3f | %.3f |\n", rb, pitch, rows, c, a, f, c / a, c / f);
    }
  }
}
