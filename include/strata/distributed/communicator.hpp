// SPDX-License-Identifier: Apache-2.0
// Ranks and the transport between them. On the CUDA backend every byte between GPUs moves through
// NCCL: a communicator holds one NCCL communicator per rank this process drives (all GPUs of the
// process through ncclCommInitAll, or one rank of a multi-process job through ncclCommInitRank with
// a unique id the caller hands over) and a stream per rank. On the host backend a stand-in with the
// same interface keeps every rank in this process and matches sends with receives by memcpy, so
// the distributed logic runs in CI without a GPU.
//
// Point-to-point calls go inside group(): all sends and receives of one exchange are issued there
// (NCCL's grouping; the stand-in executes them at the group's end, k-th send from a to b against
// k-th receive at b from a). Where every local rank has a host thread of its own, each may issue
// its own rank's part in rank_group() instead, at the same time as the others.
#pragma once

#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/resource.hpp>
#include <strata/memory/scratch.hpp>

#if defined(STRATA_BACKEND_CUDA)
#include <nccl.h>
#endif

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strata::distributed {

/// NCCL reported a failure (the result code and NCCL's own text), or the stand-in found sends and
/// receives that do not match.
class transport_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#if defined(STRATA_BACKEND_CUDA)
namespace detail {
inline void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    throw transport_error(std::string("strata: ") + what + " failed: " + ncclGetErrorString(r) + " (ncclResult " + std::to_string(int(r)) + ")");
}
template <class A>
ncclDataType_t nccl_type() {
  if constexpr (std::is_same_v<A, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<A, double>) return ncclFloat64;
  else if constexpr (std::is_integral_v<A> && std::is_signed_v<A> && sizeof(A) == 4) return ncclInt32;
  else if constexpr (std::is_integral_v<A> && std::is_signed_v<A> && sizeof(A) == 8) return ncclInt64;
  else if constexpr (std::is_integral_v<A> && std::is_unsigned_v<A> && sizeof(A) == 4) return ncclUint32;
  else if constexpr (std::is_integral_v<A> && std::is_unsigned_v<A> && sizeof(A) == 8) return ncclUint64;
  else static_assert(sizeof(A) == 0, "strata: all_reduce sums 32/64-bit integers, float and double");
}
}  // namespace detail
#endif

class communicator {
 public:
#if defined(STRATA_BACKEND_CUDA)
  /// One rank per GPU of `devices` (distinct), all driven by this process.
  static communicator local(const std::vector<int>& devices) {
    communicator c;
    if (devices.empty()) throw size_error("strata: communicator::local needs at least one device");
    int count = 0;
    strata::detail::cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (devices[i] < 0 || devices[i] >= count)
        throw device_error("strata: communicator::local: device " + std::to_string(devices[i]) + " does not exist (" + std::to_string(count) + " GPUs)");
      for (std::size_t j = 0; j < i; ++j)
        if (devices[j] == devices[i]) throw device_error("strata: communicator::local: device " + std::to_string(devices[i]) + " listed twice; NCCL needs one rank per GPU");
    }
    c.comms_.resize(devices.size());
    detail::nccl_check(ncclCommInitAll(c.comms_.data(), int(devices.size()), devices.data()), "ncclCommInitAll");
    c.size_ = int(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) c.add_rank(int(i), devices[i]);
    return c;
  }
  /// The first `ranks` GPUs of this process.
  static communicator local(int ranks) {
    std::vector<int> d(std::size_t(std::max(ranks, 0)));
    for (int i = 0; i < ranks; ++i) d[std::size_t(i)] = i;
    return local(d);
  }
  /// The unique id rank 0 of a multi-process job makes and hands to every process (over MPI, a file,
  /// a socket: the caller's choice).
  static ncclUniqueId unique_id() {
    ncclUniqueId id;
    detail::nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    return id;
  }
  /// Rank `rank` of `ranks` in a job of one process per GPU, on `device`.
  static communicator join(const ncclUniqueId& id, int ranks, int rank, int device) {
    communicator c;
    c.comms_.resize(1);
    strata::detail::device_guard g(device);
    detail::nccl_check(ncclCommInitRank(&c.comms_[0], ranks, id, rank), "ncclCommInitRank");
    c.size_ = ranks;
    c.add_rank(rank, device);
    return c;
  }
#else
  /// `ranks` ranks, all in this process (the host backend's stand-in for GPUs).
  static communicator local(int ranks) {
    if (ranks < 1) throw size_error("strata: communicator::local needs at least one rank");
    communicator c;
    c.size_ = ranks;
    for (int r = 0; r < ranks; ++r) c.add_rank(r, 0);
    return c;
  }
#endif

  communicator(communicator&& o) noexcept { swap(o); }
  communicator& operator=(communicator&& o) noexcept {
    communicator(std::move(o)).swap(*this);
    return *this;
  }
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  ~communicator() {
#if defined(STRATA_BACKEND_CUDA)
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      strata::detail::device_guard g(devices_[i]);
      if (streams_.size() > i && streams_[i]) (void)cudaStreamDestroy(streams_[i]);
      if (comms_[i]) (void)ncclCommDestroy(comms_[i]);
    }
#endif
  }

  /// Ranks in the whole job.
  int size() const { return size_; }
  /// Ranks this process drives, and each one's global rank, device and stream.
  int local_ranks() const { return int(ranks_.size()); }
  int rank(int local) const { return ranks_.at(std::size_t(local)); }
  int device(int local) const { return devices_.at(std::size_t(local)); }
  stream_t stream(int local) const { return streams_.at(std::size_t(local)); }
  /// Whether every rank of the job is in this process (what scatter/gather of a whole range need).
  bool all_local() const { return local_ranks() == size(); }

  /// Issues the sends and receives f makes as one exchange.
  template <class F>
  void group(F&& f) {
#if defined(STRATA_BACKEND_CUDA)
    detail::nccl_check(ncclGroupStart(), "ncclGroupStart");
    try {
      f();
    } catch (...) {
      (void)ncclGroupEnd();
      throw;
    }
    detail::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
#else
    sends_.clear(), recvs_.clear();
    f();
    match();
#endif
  }
  /// Issues the sends and receives f makes for local rank l, from l's own thread: every local rank
  /// calls this at once, each from a thread of its own (one exchange; NCCL groups per thread, and
  /// the stand-in meets every local rank before it matches the transfers). A failure on one rank
  /// (f throws, or the transfers do not match) throws on every rank, so none waits for ever.
  template <class F>
  void rank_group(int l, F&& f) {
#if defined(STRATA_BACKEND_CUDA)
    (void)l;
    group(std::forward<F>(f));
#else
    meeting& m = *meeting_;
    const std::size_t k = std::size_t(l);
    m.sends[k].clear(), m.recvs[k].clear();
    m.open[k] = 1;
    bool failed = false;
    std::string why;
    try {
      f();
    } catch (const std::exception& e) {
      failed = true, why = e.what();
    } catch (...) {
      failed = true, why = "an exception that is not a std::exception";
    }
    m.open[k] = 0;
    std::unique_lock<std::mutex> g(m.m);
    if (failed && m.error.empty()) m.error = "strata: rank " + std::to_string(rank(l)) + "'s exchange failed: " + why;
    const unsigned long generation = m.generation;
    if (++m.arrived == local_ranks()) {
      sends_.clear(), recvs_.clear();
      for (int q = 0; q < local_ranks(); ++q) {
        sends_.insert(sends_.end(), m.sends[std::size_t(q)].begin(), m.sends[std::size_t(q)].end());
        recvs_.insert(recvs_.end(), m.recvs[std::size_t(q)].begin(), m.recvs[std::size_t(q)].end());
      }
      if (m.error.empty()) try {
          match();
        } catch (const std::exception& e) {
          m.error = e.what();
        }
      m.result = m.error, m.error.clear();
      m.arrived = 0, ++m.generation;
      m.met.notify_all();
    } else {
      m.met.wait(g, [&] { return m.generation != generation; });
    }
    if (!m.result.empty()) throw transport_error(m.result);
#endif
  }
  /// `bytes` bytes from local rank `from` to global rank `to` (inside group()).
  void send(int from, const void* p, std::size_t bytes, int to) {
    check_peer(to, "send");
#if defined(STRATA_BACKEND_CUDA)
    strata::detail::device_guard g(device(from));
    detail::nccl_check(ncclSend(p, bytes, ncclUint8, to, comms_.at(std::size_t(from)), stream(from)), "ncclSend");
#else
    const transfer t{rank(from), to, const_cast<void*>(p), bytes};
    if (meeting_->open[std::size_t(from)]) meeting_->sends[std::size_t(from)].push_back(t);
    else sends_.push_back(t);
#endif
  }
  /// `bytes` bytes at local rank `at` from global rank `from` (inside group()).
  void recv(int at, void* p, std::size_t bytes, int from) {
    check_peer(from, "recv");
#if defined(STRATA_BACKEND_CUDA)
    strata::detail::device_guard g(device(at));
    detail::nccl_check(ncclRecv(p, bytes, ncclUint8, from, comms_.at(std::size_t(at)), stream(at)), "ncclRecv");
#else
    const transfer t{from, rank(at), p, bytes};
    if (meeting_->open[std::size_t(at)]) meeting_->recvs[std::size_t(at)].push_back(t);
    else recvs_.push_back(t);
#endif
  }

  /// parts[local] points at one A in local rank `local`'s device memory, written by work queued on
  /// its stream; each becomes the sum over every rank of the job, the same addition as
  /// all_reduce_sum's, queued on the ranks' streams: nothing waits, so ranks whose partial results
  /// come from device work need no host round trip before the sum.
  template <class A>
  void all_reduce_sum_in_place(const std::vector<A*>& parts) {
    if (int(parts.size()) != local_ranks()) strata::detail::throw_size_error("communicator::all_reduce_sum_in_place: parts", index_t(parts.size()), local_ranks());
#if defined(STRATA_BACKEND_CUDA)
    detail::nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int l = 0; l < local_ranks(); ++l) {
      strata::detail::device_guard g(device(l));
      detail::nccl_check(ncclAllReduce(parts[std::size_t(l)], parts[std::size_t(l)], 1, detail::nccl_type<A>(), ncclSum, comms_[std::size_t(l)], stream(l)),
                         "ncclAllReduce");
    }
    detail::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
#else
    A sum{};
    for (A* p : parts) sum += *p;
    for (A* p : parts) *p = sum;
#endif
  }

  /// values[local] is each local rank's partial result; returns the sum over every rank of the job.
  /// Integers are exact. Floats: on the host stand-in summed in rank order; on the CUDA backend in
  /// the order NCCL's all-reduce chooses (ranks' partials, not records, are what it adds).
  template <class A>
  A all_reduce_sum(const std::vector<A>& values) {
    if (int(values.size()) != local_ranks()) strata::detail::throw_size_error("communicator::all_reduce_sum: values", index_t(values.size()), local_ranks());
#if defined(STRATA_BACKEND_CUDA)
    // Each value goes to its rank's pool scratch and the in-place all-reduce adds them there (no
    // cudaMalloc / cudaFree per call).
    std::vector<std::unique_ptr<strata::detail::scratch_block>> parts;
    std::vector<A*> at;
    for (int l = 0; l < local_ranks(); ++l) {
      strata::detail::device_guard g(device(l));
      parts.push_back(std::make_unique<strata::detail::scratch_block>(sizeof(A), stream(l)));
      at.push_back(parts.back()->as<A>());
      copy_bytes_async(at.back(), &values[std::size_t(l)], sizeof(A), stream(l));
    }
    all_reduce_sum_in_place(at);
    A out{};
    {
      strata::detail::device_guard g(device(0));
      copy_bytes_async(&out, at[0], sizeof(A), stream(0));
      synchronize(stream(0));
    }
    synchronize_all();
    // Each block goes back on its own device (a caller's scratch resource may rely on the current
    // device, as the default pool does when it allocates).
    for (int l = 0; l < local_ranks(); ++l) {
      strata::detail::device_guard g(device(l));
      parts[std::size_t(l)].reset();
    }
    return out;
#else
    A sum{};
    for (const A& v : values) sum += v;
    return sum;
#endif
  }

  /// Waits for every local rank's stream.
  void synchronize_all() const {
    for (int l = 0; l < local_ranks(); ++l) {
      strata::detail::device_guard g(device(l));
      synchronize(stream(l));
    }
  }

 private:
  communicator() = default;
  void add_rank(int global, int dev) {
    ranks_.push_back(global);
    devices_.push_back(dev);
#if defined(STRATA_BACKEND_CUDA)
    strata::detail::device_guard g(dev);
    cudaStream_t s = nullptr;
    strata::detail::cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    streams_.push_back(s);
#else
    streams_.push_back(stream_t{});
    if (!meeting_) meeting_ = std::make_unique<meeting>();
    meeting_->sends.emplace_back(), meeting_->recvs.emplace_back(), meeting_->open.push_back(0);
#endif
  }
  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= size_)
      throw size_error(std::string("strata: communicator::") + what + ": rank " + std::to_string(peer) + " of " + std::to_string(size_));
  }
  void swap(communicator& o) noexcept {
    std::swap(size_, o.size_);
    ranks_.swap(o.ranks_);
    devices_.swap(o.devices_);
    streams_.swap(o.streams_);
#if defined(STRATA_BACKEND_CUDA)
    comms_.swap(o.comms_);
#else
    meeting_.swap(o.meeting_);
#endif
  }

#if !defined(STRATA_BACKEND_CUDA)
  struct transfer {
    int from, to;
    void* p;
    std::size_t bytes;
  };
  void match() {
    std::vector<bool> used(recvs_.size(), false);
    for (const transfer& s : sends_) {
      bool done = false;
      for (std::size_t k = 0; k < recvs_.size() && !done; ++k) {
        const transfer& r = recvs_[k];
        if (used[k] || r.from != s.from || r.to != s.to) continue;
        if (r.bytes != s.bytes)
          throw transport_error("strata: rank " + std::to_string(s.from) + " sends " + std::to_string(s.bytes) + " bytes to rank " +
                                std::to_string(s.to) + ", which receives " + std::to_string(r.bytes));
        if (s.bytes) std::memcpy(r.p, s.p, s.bytes);
        used[k] = done = true;
      }
      if (!done)
        throw transport_error("strata: rank " + std::to_string(s.from) + " sends to rank " + std::to_string(s.to) + ", which does not receive");
    }
    for (std::size_t k = 0; k < recvs_.size(); ++k)
      if (!used[k])
        throw transport_error("strata: rank " + std::to_string(recvs_[k].to) + " receives from rank " + std::to_string(recvs_[k].from) +
                              ", which does not send");
  }
  std::vector<transfer> sends_, recvs_;
  /// rank_group()'s meeting point: each local rank's transfers (written by its own thread only
  /// while open), and the threads that have arrived.
  struct meeting {
    std::vector<std::vector<transfer>> sends, recvs;
    std::vector<char> open;  // a byte per rank: each thread writes its own
    std::mutex m;
    std::condition_variable met;
    int arrived = 0;
    unsigned long generation = 0;
    std::string error, result;
  };
  std::unique_ptr<meeting> meeting_;
#endif

  int size_ = 0;
  std::vector<int> ranks_, devices_;
  std::vector<stream_t> streams_;
#if defined(STRATA_BACKEND_CUDA)
  std::vector<ncclComm_t> comms_;
#endif
};

}  // namespace strata::distributed
