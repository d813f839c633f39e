// SPDX-License-Identifier: Apache-2.0
// Portability macros and backend selection: the only header that spells compiler specifics.
#pragma once

#if defined(__CUDACC__)
#define STRATA_BACKEND_CUDA 1
#define STRATA_HD __host__ __device__
/// Device memory is not host-addressable: host access goes through copies.
#define STRATA_DEVICE_IS_SEPARATE 1
#else
#define STRATA_BACKEND_HOST 1
// The host backend runs Thrust's "device" algorithms on OpenMP threads.
#ifndef THRUST_DEVICE_SYSTEM
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_OMP
#endif
#define STRATA_HD
#define STRATA_DEVICE_IS_SEPARATE 0
#endif

#define STRATA_PRAGMA(x) _Pragma(#x)
#if defined(__CUDA_ARCH__) || defined(__clang__)
#define STRATA_UNROLL STRATA_PRAGMA(unroll)
#elif defined(__CUDACC__)
#define STRATA_UNROLL  // nvcc's host pass: the host compiler sees none of the device loops' pragmas
#elif defined(__GNUC__)
#define STRATA_UNROLL STRATA_PRAGMA(GCC unroll 16)
#else
#define STRATA_UNROLL
#endif

// Host loops over records use OpenMP threads where the compiler has it (the host backend).
#if defined(_OPENMP)
#define STRATA_PARALLEL_FOR_IF(cond) STRATA_PRAGMA(omp parallel for schedule(static) if (cond))
#define STRATA_PARALLEL_SUM_IF(cond, var) STRATA_PRAGMA(omp parallel for schedule(static) reduction(+ : var) if (cond))
#else
#define STRATA_PARALLEL_FOR_IF(cond)
#define STRATA_PARALLEL_SUM_IF(cond, var)
#endif

// A __host__ __device__ template that calls the functor it is given: host-only functors are fine
// when it is called from host code, so nvcc's cross-execution-space check is turned off for it.
#if defined(__CUDACC__)
#define STRATA_EXEC_CHECK_DISABLE STRATA_PRAGMA(nv_exec_check_disable)
#else
#define STRATA_EXEC_CHECK_DISABLE
#endif

#include <cstddef>
#include <cstdint>

namespace strata {
/// Record and element counts: 64-bit everywhere, so more than 2^31 records work.
using index_t = std::int64_t;
using size_type = std::size_t;

/// Every column of a container starts on this boundary (the widest access a GPU coalesces).
inline constexpr std::size_t column_alignment = 256;
/// Width of one vector access in bytes (LDG.E.128 / STG.E.128).
inline constexpr std::size_t vector_bytes = 16;

constexpr std::size_t align_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) / a * a; }
constexpr bool is_pow2(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }
constexpr std::size_t next_pow2(std::size_t n) noexcept {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}
}  // namespace strata
