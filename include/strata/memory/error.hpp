// SPDX-License-Identifier: Apache-2.0
// Exceptions strata throws; each message names the operation, the sizes and the pointers involved.
#pragma once

#include <strata/config.hpp>

#include <cstddef>
#include <cstdint>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace strata {

enum class memory_space { device, pinned, host };

inline const char* to_string(memory_space s) {
  switch (s) {
    case memory_space::device: return "device";
    case memory_space::pinned: return "pinned host";
    case memory_space::host: return "host";
  }
  return "?";
}

/// Out of memory: derived from std::bad_alloc so existing handlers catch it; knows the bytes asked for.
class out_of_memory : public std::bad_alloc {
 public:
  out_of_memory(std::size_t bytes, memory_space space, const std::string& detail = {})
      : bytes_(bytes), space_(space) {
    std::ostringstream s;
    s << "strata: out of " << to_string(space) << " memory allocating " << bytes << " bytes";
    if (!detail.empty()) s << " (" << detail << ")";
    what_ = s.str();
  }
  const char* what() const noexcept override { return what_.c_str(); }
  std::size_t bytes() const noexcept { return bytes_; }
  memory_space space() const noexcept { return space_; }

 private:
  std::size_t bytes_;
  memory_space space_;
  std::string what_;
};

/// A CUDA call failed: names the operation and CUDA's error string.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(const std::string& operation, int code, const std::string& cuda_message)
      : std::runtime_error("strata: " + operation + " failed: " + cuda_message + " (CUDA error " +
                           std::to_string(code) + ")"),
        code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A pointer is not aligned as the access it is used for needs.
class misaligned_pointer : public std::invalid_argument {
 public:
  misaligned_pointer(const std::string& what, const void* p, std::size_t needed)
      : std::invalid_argument(message(what, p, needed)), pointer_(p), needed_(needed) {}
  const void* pointer() const noexcept { return pointer_; }
  std::size_t needed() const noexcept { return needed_; }

 private:
  static std::string message(const std::string& what, const void* p, std::size_t needed) {
    std::ostringstream s;
    s << "strata: " << what << " at " << p << " is not aligned to " << needed << " bytes (address mod " << needed
      << " = " << (reinterpret_cast<std::uintptr_t>(p) % needed) << ")";
    return s.str();
  }
  const void* pointer_;
  std::size_t needed_;
};

/// Sizes that must agree do not, or a size is impossible (null pointer with records, too little memory).
class size_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Memory in a space an operation cannot use: pageable host memory handed to a device algorithm,
/// say. Thrown before anything is launched.
class memory_space_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An element type other than the one an operation needs: a DLPack tensor of int32 offered as a
/// float column, say.
class type_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Memory of one GPU used with memory or a stream of another. Thrown before anything is launched.
class device_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
[[noreturn]] inline void throw_size_error(const std::string& what, std::int64_t got, std::int64_t want) {
  throw size_error("strata: " + what + ": got " + std::to_string(got) + ", expected " + std::to_string(want));
}

#if defined(STRATA_BACKEND_CUDA)
inline void cuda_check(cudaError_t e, const char* operation) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
    throw cuda_error(operation, static_cast<int>(e), cudaGetErrorString(e));
  }
}
#endif
}  // namespace detail

}  // namespace strata
