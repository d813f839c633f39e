// SPDX-License-Identifier: Apache-2.0
// strata's layer and RMS normalization (forward and backward) behind C entry points, for callers
// that hold raw device pointers: bench/layer_norm_torch.py and bench/norm_backward_torch.py load
// this library with ctypes and run it on PyTorch tensors (dense rows from torch.empty, which
// strata did not allocate).
#include <strata/algorithm/norm_backward.hpp>
#include <strata/algorithm/normalize.hpp>

#include <cstdio>
#include <exception>

namespace {

template <class T>
int run(int kind, const void* x, void* y, const void* gamma, const void* beta, long long rows, long long cols, long long x_pitch,
        long long y_pitch, float eps, void* stream) {
  auto xv = strata::make_matrix_view(static_cast<const T*>(x), rows, cols, x_pitch);
  auto yv = strata::make_matrix_view(static_cast<T*>(y), rows, cols, y_pitch);
  const cuda::std::span<const T> g(static_cast<const T*>(gamma), gamma ? std::size_t(cols) : 0);
  const cuda::std::span<const T> b(static_cast<const T*>(beta), beta ? std::size_t(cols) : 0);
  const auto s = static_cast<strata::stream_t>(stream);
  const strata::path p = kind == 0 ? strata::layer_norm<T>(xv, yv, g, b, eps, s) : strata::rms_norm<T>(xv, yv, g, eps, s);
  return p == strata::path::vectorized ? 0 : 1;
}

template <class T>
int run_backward(int kind, const void* x, const void* dy, const void* gamma, void* dx, void* dgamma, void* dbeta, long long rows, long long cols,
                 long long x_pitch, long long dy_pitch, long long dx_pitch, float eps, void* stream) {
  auto xv = strata::make_matrix_view(static_cast<const T*>(x), rows, cols, x_pitch);
  auto dyv = strata::make_matrix_view(static_cast<const T*>(dy), rows, cols, dy_pitch);
  auto dxv = strata::make_matrix_view(static_cast<T*>(dx), rows, cols, dx_pitch);
  const cuda::std::span<const T> g(static_cast<const T*>(gamma), gamma ? std::size_t(cols) : 0);
  const cuda::std::span<T> dg(static_cast<T*>(dgamma), dgamma ? std::size_t(cols) : 0), db(static_cast<T*>(dbeta), dbeta ? std::size_t(cols) : 0);
  const auto s = static_cast<strata::stream_t>(stream);
  const strata::norm_backward_path p = kind == 0 ? strata::layer_norm_backward<T>(xv, dyv, g, dxv, dg, db, eps, s)
                                                 : strata::rms_norm_backward<T>(xv, dyv, g, dxv, dg, eps, s);
  return (p.access == strata::path::vectorized ? 0 : 1) + (p.shape == strata::norm_backward_shape::two_pass ? 2 : 0);
}

}  // namespace

extern "C" {
/// kind: 0 layer norm, 1 RMS norm (beta ignored); dtype: 0 fp32, 1 bf16, 2 fp16; pitches in elements;
/// gamma/beta may be null. Returns 0 (16-byte path) or 1 (element path), or -1 with the error in err.
int strata_norm(int kind, int dtype, const void* x, void* y, const void* gamma, const void* beta, long long rows, long long cols,
                long long x_pitch, long long y_pitch, float eps, void* stream, char* err, int err_len) {
  try {
    switch (dtype) {
      case 0: return run<float>(kind, x, y, gamma, beta, rows, cols, x_pitch, y_pitch, eps, stream);
      case 1: return run<strata::bfloat16>(kind, x, y, gamma, beta, rows, cols, x_pitch, y_pitch, eps, stream);
      case 2: return run<strata::half>(kind, x, y, gamma, beta, rows, cols, x_pitch, y_pitch, eps, stream);
      default: std::snprintf(err, std::size_t(err_len), "strata_norm: unknown dtype %d", dtype); return -1;
    }
  } catch (const std::exception& e) {
    std::snprintf(err, std::size_t(err_len), "%s", e.what());
    return -1;
  }
}

/// The backward: dx (and dgamma, dbeta where not null) from x, dy and gamma (null: 1). Returns
/// 0 / 1 (16-byte / element path) plus 2 where rows too long to hold took two passes, or -1
/// with the error in err.
int strata_norm_backward(int kind, int dtype, const void* x, const void* dy, const void* gamma, void* dx, void* dgamma, void* dbeta,
                         long long rows, long long cols, long long x_pitch, long long dy_pitch, long long dx_pitch, float eps, void* stream,
                         char* err, int err_len) {
  if (kind != 0 && kind != 1) return std::snprintf(err, std::size_t(err_len), "strata_norm_backward: unknown kind %d (0 layer, 1 RMS)", kind), -1;
  if (kind == 1 && dbeta)
    return std::snprintf(err, std::size_t(err_len), "strata_norm_backward: RMS norm has no beta; pass dbeta = NULL"), -1;
  try {
    switch (dtype) {
      case 0: return run_backward<float>(kind, x, dy, gamma, dx, dgamma, dbeta, rows, cols, x_pitch, dy_pitch, dx_pitch, eps, stream);
      case 1: return run_backward<strata::bfloat16>(kind, x, dy, gamma, dx, dgamma, dbeta, rows, cols, x_pitch, dy_pitch, dx_pitch, eps, stream);
      case 2: return run_backward<strata::half>(kind, x, dy, gamma, dx, dgamma, dbeta, rows, cols, x_pitch, dy_pitch, dx_pitch, eps, stream);
      default: std::snprintf(err, std::size_t(err_len), "strata_norm_backward: unknown dtype %d", dtype); return -1;
    }
  } catch (const std::exception& e) {
    std::snprintf(err, std::size_t(err_len), "%s", e.what());
    return -1;
  }
}
}
