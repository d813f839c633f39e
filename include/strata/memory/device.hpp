// SPDX-License-Identifier: Apache-2.0
// Devices and where memory lives: the current device, a guard that makes a device current for
// one operation, the memory space and device of a pointer, launch checks shared by strata's
// kernels (conversion, reductions, rows), and the driver launch its per-call kernels go through.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#if defined(STRATA_BACKEND_CUDA)
#include <cuda.h>
#endif

#if defined(__GNUC__)
#include <cxxabi.h>
#endif
#if defined(__unix__)
#include <unistd.h>
#endif
#include <cstdlib>
#include <memory>

namespace strata {

/// Where a container's or view's memory lives. device is the owning GPU for device memory and -1
/// where any device may use it (pinned host memory, memory of the host backend, empty views).
struct memory_location {
  memory_space space = memory_space::device;
  int device = -1;
};

namespace detail {
/// Tells a container (anything with note_stream) that work on its memory was queued on `stream`,
/// so that its host-side operations wait for it (basic_vector::note_stream); views need nothing.
template <class X>
void note_stream(const X& x, stream_t stream) noexcept {
  if constexpr (requires { x.note_stream(stream); }) x.note_stream(stream);
}


#if defined(STRATA_BACKEND_CUDA)
inline int current_device() {
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  return dev;
}

/// Makes `device` current for the guard's lifetime and restores the caller's device after, so an
/// operation on a container of device 1 runs there whatever device the caller has current.
class device_guard {
 public:
  explicit device_guard(int device) : device_guard(device, device < 0 ? device : current_device()) {}
  /// With the caller's current device already known (one cudaGetDevice less per call).
  device_guard(int device, int current) {
    if (device < 0 || current == device) return;
    previous_ = current;
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~device_guard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
};

/// The space and device of memory a pointer points into (CUDA's pointer attributes).
inline memory_location locate(const void* p) {
  if (!p) return {memory_space::device, -1};
  cudaPointerAttributes a{};
  cuda_check(cudaPointerGetAttributes(&a, p), "cudaPointerGetAttributes");
  switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return {memory_space::device, a.device};
    case cudaMemoryTypeHost: return {memory_space::pinned, -1};
    default: return {memory_space::host, -1};
  }
}

struct device_shape {
  int sms = 0;
  int max_threads_per_sm = 0;
  std::size_t l2_bytes = 0;
};
inline const device_shape& current_device_shape() {
  static thread_local int cached_device = -1;
  static thread_local device_shape shape;
  const int dev = current_device();
  if (dev != cached_device) {
    cuda_check(cudaDeviceGetAttribute(&shape.sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    cuda_check(cudaDeviceGetAttribute(&shape.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
               "cudaDeviceGetAttribute");
    int l2 = 0;
    cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute");
    shape.l2_bytes = std::size_t(l2 > 0 ? l2 : 0);
    cached_device = dev;
  }
  return shape;
}
inline void check_launch(const char* what) { cuda_check(cudaGetLastError(), what); }

/// Blocks of `kernel` at `threads` threads a block and `shared` bytes of dynamic shared memory
/// (which the kernel must be allowed, cudaFuncAttributeMaxDynamicSharedMemorySize, past 48 KiB)
/// that one SM of the current device holds at once: the occupancy API, asked once per device,
/// kernel, block size and shared memory.
inline int blocks_per_sm(const void* kernel, int threads, std::size_t shared = 0) {
  static std::mutex m;
  static std::map<std::tuple<int, const void*, int, std::size_t>, int> cache;
  const auto key = std::make_tuple(current_device(), kernel, threads, shared);
  std::lock_guard<std::mutex> lock(m);
  auto [it, fresh] = cache.try_emplace(key, 0);
  if (fresh) {
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&it->second, kernel, threads, shared);
    if (e != cudaSuccess) cache.erase(it);
    cuda_check(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  }
  return it->second;
}
/// Blocks of a kernel the current device keeps resident at once (at least one per SM).
template <auto Kernel>
index_t resident_blocks(int threads) {
  return index_t(current_device_shape().sms) * std::max(1, blocks_per_sm(reinterpret_cast<const void*>(Kernel), threads));
}

/// The driver calls behind strata's launches, looked up once through the runtime (no link to
/// libcuda); usable() is false where the driver lacks one, and launches then go through the runtime.
struct driver_api {
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**,
                     void**) = nullptr;
  CUresult (*current)(CUcontext*) = nullptr;
  CUresult (*context_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*stream_context)(CUstream, CUcontext*) = nullptr;
  bool usable() const { return launch && current && context_id; }
};
inline const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    auto find = [](const char* name, auto& fn) {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) == cudaSuccess &&
          found == cudaDriverEntryPointSuccess)
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      else
        (void)cudaGetLastError();
    };
    find("cuLaunchKernel", a.launch);
    find("cuCtxGetCurrent", a.current);
    find("cuCtxGetId", a.context_id);
    find("cuGetErrorString", a.error_string);
    find("cuStreamGetCtx", a.stream_context);
    return a;
  }();
  return api;
}

/// The driver's text for a CUresult (its numbers differ from cudaError_t's for some failures).
inline std::string driver_error_string(CUresult r) {
  const char* text = nullptr;
  if (driver().error_string) (void)driver().error_string(r, &text);
  return text ? text : "CUresult " + std::to_string(int(r));
}

/// The current context's process-unique id plus one, or 0 where the thread has no context current
/// (its first CUDA work; the runtime binds the device's primary context on its first call).
inline unsigned long long current_context_key() {
  const driver_api& d = driver();
  if (!d.usable()) return 0;
  CUcontext c = nullptr;
  unsigned long long id = 0;
  if (d.current(&c) != CUDA_SUCCESS || c == nullptr || d.context_id(c, &id) != CUDA_SUCCESS) return 0;
  return id + 1;
}

/// Whether a caller's stream belongs to the context current on this thread: one driver query
/// (cuStreamGetCtx, about 20 ns, allowed while streams are captured), where the runtime's
/// cudaStreamGetDevice costs about 0.1 us with the capture check it needs. False where the driver
/// cannot say (then the runtime is asked).
inline bool stream_in_current_context(stream_t stream) {
  const driver_api& d = driver();
  if (!d.stream_context || !d.current) return false;
  CUcontext own = nullptr, current = nullptr;
  return d.current(&current) == CUDA_SUCCESS && current != nullptr && d.stream_context(reinterpret_cast<CUstream>(stream), &own) == CUDA_SUCCESS &&
         own == current;
}

/// The stream the driver is to launch on for a runtime stream: the runtime's 0 is the legacy
/// default stream, or the per-thread one where the program is built for per-thread default streams.
inline CUstream driver_stream(stream_t stream) {
  if (stream != nullptr) return reinterpret_cast<CUstream>(stream);
#if defined(__CUDART_API_PER_THREAD_DEFAULT_STREAM)
  return CU_STREAM_PER_THREAD;
#else
  return CU_STREAM_LEGACY;
#endif
}

/// One kernel's function handle in each context it is launched in, looked up once per context
/// (cudaGetFuncBySymbol gives the handle in the current context). Readers take no lock.
class function_cache {
 public:
  CUfunction find(unsigned long long context) const {
    for (const slot& s : slots_) {
      const unsigned long long key = s.context.load(std::memory_order_acquire);
      if (key == context) return s.function;
      if (key == 0) break;
    }
    return nullptr;
  }
  /// The handle in the current context (keyed `context`), or null when it cannot be had or every
  /// slot is taken (such launches go through the runtime).
  CUfunction add(unsigned long long context, const void* kernel) {
    std::lock_guard<std::mutex> lock(fill_);
    if (CUfunction f = find(context)) return f;
    for (slot& s : slots_) {
      if (s.context.load(std::memory_order_relaxed) != 0) continue;
      cudaFunction_t f = nullptr;
      if (cudaGetFuncBySymbol(&f, kernel) != cudaSuccess || f == nullptr) {
        (void)cudaGetLastError();
        return nullptr;
      }
      s.function = f;
      s.context.store(context, std::memory_order_release);
      return f;
    }
    return nullptr;
  }

 private:
  struct slot {
    std::atomic<unsigned long long> context{0};
    CUfunction function = nullptr;
  };
  std::array<slot, 16> slots_;
  std::mutex fill_;
};

template <class F>
struct kernel_params;
template <class... P>
struct kernel_params<void (*)(P...)> {
  using type = std::tuple<P...>;
};

/// Launches Kernel<<<grid, block, smem, stream>>>(args...) and throws what failed. The launch goes
/// to the driver with the kernel's function handle in the current context, looked up once per
/// context: the runtime's launch, and the driver's launch of a context-independent kernel handle,
/// find that function again on every call, which costs a launch of a few thousand records
/// 0.2-0.4 us of the 3.2-3.8 us the host spends issuing it (a loop of small steps is bound by that
/// issue rate). A thread with no context current yet (its first CUDA work), or a driver without
/// these entry points, launches through cudaLaunchKernel. As with the runtime's launch, the kernel
/// runs in the current context, and a stream of another context is an error.
template <auto Kernel, class... Args>
void launch(dim3 grid, dim3 block, std::size_t smem, stream_t stream, const char* what, Args&&... args) {
  static function_cache functions;
  typename kernel_params<decltype(Kernel)>::type params(std::forward<Args>(args)...);
  void* pointers[sizeof...(Args) + 1] = {};
  std::apply(
      [&](auto&... p) {
        int i = 0;
        ((pointers[i++] = static_cast<void*>(&p)), ...);
      },
      params);
  const void* kernel = reinterpret_cast<const void*>(Kernel);
  if (const unsigned long long context = current_context_key()) {
    CUfunction f = functions.find(context);
    if (!f) f = functions.add(context, kernel);
    if (f) {
      const CUresult r = driver().launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, unsigned(smem), driver_stream(stream),
                                         pointers, nullptr);
      if (r != CUDA_SUCCESS) throw cuda_error(what, int(r), driver_error_string(r));
      return;
    }
  }
  cuda_check(cudaLaunchKernel(kernel, grid, block, pointers, smem, stream), what);
}
#else
inline int current_device() { return 0; }
class device_guard {
 public:
  explicit device_guard(int) {}
  device_guard(int, int) {}
};
inline memory_location locate(const void*) { return {memory_space::device, -1}; }
#endif

/// The last-level cache that the memory strata's kernels read goes through: the current device's
/// L2, or on the host backend the CPU's last-level cache where the C library reports it (0 where
/// it does not).
inline std::size_t cache_bytes() {
#if defined(STRATA_BACKEND_CUDA)
  return current_device_shape().l2_bytes;
#elif defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  static const std::size_t bytes = [] {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return std::size_t(l3 > 0 ? l3 : l2 > 0 ? l2 : 0);
  }();
  return bytes;
#else
  return 0;
#endif
}

/// The readable name of a type, for error messages.
template <class T>
std::string type_name() {
  const char* raw = typeid(T).name();
#if defined(__GNUC__)
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(raw, nullptr, nullptr, &status), std::free);
  if (status == 0 && d) return d.get();
#endif
  return raw;
}

/// One operand of an operation, as error messages name it: "the output (1000 records of particle)".
/// Built on every call, read only when something is refused: the type's name is made then.
struct operand {
  const char* role;
  memory_location where;
  index_t size;
  std::string (*type)();             // the record type, or a column's element type
  const char* unit = "records";      // what size counts
  std::string describe() const {
    return std::string("the ") + role + " (" + std::to_string(size) + " " + unit + " of " + type() + ")";
  }
};
template <class V>
operand described(const V& v, const char* role) {
  return {role, v.location(), index_t(v.size()), &type_name<typename V::value_type>};
}

/// A raw array of n records of T handed to an operation.
template <class T>
operand pointer_operand(const T* p, index_t n, const char* role) {
  return {role, locate(p), n, &type_name<std::remove_const_t<T>>};
}

/// Where an operation runs: checks that no operand lives in pageable host memory (GPU kernels
/// cannot read it), that every operand in device memory is on one GPU and that a stream given
/// belongs to that GPU; then makes that GPU current until the scope ends. Everything is checked
/// before anything is launched, so a refused call leaves the CUDA context as it was.
class launch_scope {
 public:
  launch_scope(const char* op, stream_t stream, std::initializer_list<operand> operands)
      : launch_scope(pick_device(op, stream, operands)) {}

 private:
  struct picked {
    int device, current;  // the operation's device, and the caller's current one
  };
  explicit launch_scope(picked p) : guard_(p.device, p.current) {}
  static picked pick_device(const char* op, stream_t stream, std::initializer_list<operand> operands) {
#if defined(STRATA_BACKEND_CUDA)
    const operand* on = nullptr;
    for (const operand& o : operands) {
      // No kernel reads an empty operand, so where it points does not matter (an empty span may
      // point one past the end of an allocation, which the runtime reports as unregistered host
      // memory); operands in device memory still pick the device, empty or not.
      if (o.where.space == memory_space::host && o.size > 0)
        throw memory_space_error("strata: " + std::string(op) + ": " + o.describe() +
                                 " is in pageable host memory, which GPU kernels cannot read; copy it to device memory "
                                 "(a soa_vector or aos_vector with memory_space::device) first");
      if (o.where.space != memory_space::device || o.where.device < 0) continue;
      if (!on) on = &o;
      else if (on->where.device != o.where.device)
        throw device_error("strata: " + std::string(op) + ": " + on->describe() + " is on device " +
                           std::to_string(on->where.device) + " but " + o.describe() + " is on device " +
                           std::to_string(o.where.device));
    }
    const int current = current_device(), device = on ? on->where.device : current;
    // A stream of the context current here, on the operation's device: the common case, one
    // driver query. Anything else (a stream of another device or context, a thread with no
    // context yet) is asked of the runtime, which names the device or the error.
    if (stream != nullptr && stream != cudaStreamLegacy && stream != cudaStreamPerThread &&
        !(device == current && stream_in_current_context(stream))) {
      // A stream being captured into a graph may not be asked for its device; its work is
      // checked when the graph is instantiated.
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      cudaError_t e = cudaStreamIsCapturing(stream, &capture);
      int stream_device = device;
      if (e == cudaSuccess && capture == cudaStreamCaptureStatusNone) e = cudaStreamGetDevice(stream, &stream_device);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw cuda_error(std::string(op) + ": the stream is not usable (destroyed, or not a stream)", int(e), cudaGetErrorString(e));
      }
      if (stream_device != device)
        throw device_error("strata: " + std::string(op) + ": the stream belongs to device " + std::to_string(stream_device) +
                           " but " + (on ? on->describe() + " is on device " : std::string("device ")) +
                           std::to_string(device) + (on ? "" : " is current"));
    }
    return {device, current};
#else
    (void)op, (void)stream, (void)operands;
    return {-1, -1};
#endif
  }
  device_guard guard_;
};

}  // namespace detail
}  // namespace strata
