// SPDX-License-Identifier: Apache-2.0
// One thread's part of a row normalization, the same code on the GPU and on the host backend: a
// row is cut into 16-byte units on 16-byte boundaries of memory, so a row that starts off such a
// boundary (a dense tensor of odd width) still moves in whole vectors, with a partial first and
// last unit read and written element by element. A thread holds `V` units of its group's share in
// registers as loaded (bf16 and fp16 at half the registers of floats), reports its elements'
// moments and writes its units normalized.
#pragma once

#include <strata/algorithm/rows.hpp>
#include <strata/config.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace strata {

enum class norm_kind { layer, rms };

namespace detail::norm {

/// Everything a normalization kernel needs, by value.
template <class T>
struct args {
  const T* x;
  T* y;
  const T* gamma;  // null: 1
  const T* beta;   // null: 0
  index_t rows, cols, x_pitch, y_pitch;
  float eps;
  /// 0: gamma and beta as given. Otherwise they point at copies, one per offset of a row's start
  /// from a 16-byte boundary (normalize.hpp: affine_copies): a row whose first element lies
  /// `head` elements past a boundary reads gamma + head * affine_step, whose units then lie as the
  /// row's do.
  index_t affine_step = 0;
  /// Every row stores its whole units as vectors (y's rows in phase with x's) and reads gamma and
  /// beta's as vectors (at its offset's copy, or gamma and beta lying as all rows do): set per
  /// call, so a row whose start moves skips the tests of write_part.
  bool vec_rows = false;
  /// y's rows own their padding up to the next 16-byte boundary (strata's matrix, rows on 16-byte
  /// boundaries ending in a partial unit): the rows kernel writes that unit whole, zeros past the
  /// row, so that the rows' bytes form one contiguous range. Rows that leave a gap in a 32-byte
  /// sector cost more than their bytes: on the H200, bf16 layer and RMS norm of rows of 1025 in a
  /// matrix run 1.03x and 1.04x faster with the unit written whole.
  bool pad_tail = false;
};

template <class T>
inline constexpr int lanes = int(16 / sizeof(T));

/// Row statistics as (count, mean, M2). For RMS norm, mean stays 0 and M2 is the sum of squares.
struct moments {
  float count, mean, m2;
};

// Products and sums that the compiler must not fuse: merge() gives the same bits whichever
// operand comes first, so every lane of a butterfly ends with the same statistics.
STRATA_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
STRATA_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

/// Two parts' statistics as one (Chan et al.; stable for long rows), symmetric in its operands.
template <norm_kind Kind>
STRATA_HD inline moments merge(const moments& a, const moments& b) {
  if constexpr (Kind == norm_kind::rms) {
    return {add_rn(a.count, b.count), 0.0f, add_rn(a.m2, b.m2)};
  } else {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    const float n = add_rn(a.count, b.count), d = b.mean - a.mean;
    const float mean = add_rn(mul_rn(a.count, a.mean), mul_rn(b.count, b.mean)) / n;
    return {n, mean, add_rn(add_rn(a.m2, b.m2), mul_rn(mul_rn(d, d), mul_rn(a.count, b.count) / n))};
  }
}

/// mean and 1/sqrt(var + eps) (layer norm), or 0 and 1/sqrt(mean(x^2) + eps) (RMS norm), from the
/// moments of a whole row of `cols` elements.
template <norm_kind Kind>
STRATA_HD inline void finish(const moments& m, index_t cols, float eps, float& mean, float& rstd) {
  const float var = m.m2 / float(cols);
#if defined(__CUDA_ARCH__)
  rstd = rsqrtf(var + eps);
#else
  rstd = 1.0f / std::sqrt(var + eps);
#endif
  mean = Kind == norm_kind::layer ? m.mean : 0.0f;
}

/// Where a row's units lie in memory: unit u holds the row's elements u * L - head ..
/// u * L - head + L - 1 (L = lanes<T>); units [full_begin, full_end) lie wholly inside the row.
struct row_span {
  index_t cols, units, full_begin, full_end;
  int head;
};
template <class T>
STRATA_HD inline row_span span_of(const T* row, index_t cols) {
  constexpr int L = lanes<T>;
  const int head = int(reinterpret_cast<std::uintptr_t>(row) % 16 / sizeof(T));
  return {cols, (head + cols + L - 1) / L, head > 0 ? 1 : 0, (head + cols) / L, head};
}

// 16-byte accesses to global memory with no ordering beyond their data: loads may be hoisted over
// the stores of other units (a thread never reads a unit after writing it), stores are never
// split. Spelled as ld/st.global: the unit base is computed through an integer, after which the
// compiler would emit generic accesses. The asm is volatile so that the compiler never moves a load
// above the test that guards it (a unit past a row's end may lie past its allocation).
STRATA_HD inline vec::word16 load16(const void* p) {
#if defined(__CUDA_ARCH__)
  uint4 r;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
#else
  return vec::load<16>(p);
#endif
}
STRATA_HD inline void store16(void* p, const vec::word16& w) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w));
#else
  vec::store<16>(p, w);
#endif
}
/// The floats of a unit held as loaded. On the device, bf16 and fp16 are widened by volatile
/// instructions each time they are needed: otherwise the compiler reuses the floats of one pass in
/// the next and holds 8 floats per unit instead of 4 words, doubling a bf16 row's registers.
template <class T>
STRATA_HD inline void unpack_kept(const vec::word16& w, float (&out)[lanes<T>]) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, half>) {
    const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
    STRATA_UNROLL
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, bfloat16>) {
        std::uint32_t lo, hi;
        asm volatile("shl.b32 %0, %1, 16;" : "=r"(lo) : "r"(u[i]));
        asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(hi) : "r"(u[i]));
        out[2 * i] = __uint_as_float(lo), out[2 * i + 1] = __uint_as_float(hi);
      } else {
        asm volatile("{.reg .f16 a, b;\n mov.b32 {a, b}, %2;\n cvt.f32.f16 %0, a;\n cvt.f32.f16 %1, b;}"
                     : "=f"(out[2 * i]), "=f"(out[2 * i + 1]) : "r"(u[i]));
      }
    }
    return;
  }
#endif
  rows::unpack_floats<T>(w, out);
}

/// An L2 eviction policy for 16-byte accesses (createpolicy): 0 leaves the default. The streamed
/// kernel keeps x in L2 between a chunk's two reads and lets y go first.
using cache_policy = std::uint64_t;
#if defined(STRATA_BACKEND_CUDA)
/// Evict-last (kept) or evict-first (left to go first) for the whole access.
template <bool Keep>
__device__ inline cache_policy l2_policy() {
  cache_policy p = 0;
#if defined(__CUDA_ARCH__)
  if constexpr (Keep) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
  return p;
}
#endif
STRATA_HD inline vec::word16 load16(const void* p, cache_policy policy) {
#if defined(__CUDA_ARCH__)
  if (policy) {
    uint4 r;
    // volatile: kept below the test that guards it (see load16).
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(policy));
    return r;
  }
#endif
  (void)policy;
  return load16(p);
}
STRATA_HD inline void store16(void* p, const vec::word16& w, cache_policy policy) {
#if defined(__CUDA_ARCH__)
  if (policy) {
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w), "l"(policy));
    return;
  }
#endif
  (void)policy;
  store16(p, w);
}

/// A 16-byte unit of gamma or beta, which every row reads again: asked to stay in L1 and L2
/// (evict_last) while the rows stream past it. Read through the read-only path (__ldg), gamma
/// leaves L1 among the rows' loads: on the H200, a block of 1024 threads per row runs fp32 RMS norm
/// of 32768 elements at 0.85 of a copy that way and 0.96 with the hint. Volatile: kept below the
/// caller's null test.
STRATA_HD inline vec::word16 load_kept(const void* p) {
#if defined(__CUDA_ARCH__)
  uint4 r;
  asm volatile(
      "{.reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      " ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], pol;}"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
#else
  return load16(p);
#endif
}

/// Asks L2 for `bytes` bytes at p (16-byte aligned, a multiple of 16) in one bulk prefetch, which
/// nothing waits for. A hint: on the host and before sm_90 it does nothing.
STRATA_HD inline void prefetch_l2(const void* p, index_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(unsigned(bytes)) : "memory");
#else
  (void)p, (void)bytes;
#endif
}

template <class T>
STRATA_HD inline const T* unit_base(const T* row, int head) {
  return reinterpret_cast<const T*>(reinterpret_cast<std::uintptr_t>(row) - std::uintptr_t(head) * sizeof(T));
}

/// Asks L2 for the units of a row that lie wholly inside it (the units a normalization reads as
/// vectors), in one bulk prefetch.
template <class T>
STRATA_HD inline void prefetch_row(const T* row, index_t cols) {
  const row_span s = span_of(row, cols);
  if (s.full_end > s.full_begin) prefetch_l2(unit_base(row, s.head) + s.full_begin * lanes<T>, (s.full_end - s.full_begin) * 16);
}

/// Copies a 16-byte unit into shared memory without holding a register for it (cp.async; a plain
/// copy on the host and before sm_80). The data is there after wait_copies().
STRATA_HD inline void copy16_async(vec::word16* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(unsigned(__cvta_generic_to_shared(dst))), "l"(src) : "memory");
#else
  *dst = load16(src);
#endif
}
STRATA_HD inline void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/// Elements of a row's partial first and last units that one part of the row holds (the part of
/// units [begin, end)); a group needs at least this many threads (norm_plan.hpp: min_group).
STRATA_HD inline int partial_elements(const row_span& s, index_t begin, index_t end, int L, int& head_n, index_t& tail_c) {
  head_n = s.head > 0 && begin == 0 ? int(s.cols < L - s.head ? s.cols : L - s.head) : 0;
  tail_c = s.full_end * L - s.head;  // the partial last unit's first element (when there is one)
  const bool tail = s.full_end < s.units && !(s.head > 0 && s.full_end == 0) && s.full_end >= begin && s.full_end < end;
  return head_n + (tail ? int(s.cols - tail_c) : 0);
}

/// Elements of the row in its units [begin, end).
template <class T>
STRATA_HD inline float elements_in(const row_span& s, index_t begin, index_t end) {
  const index_t lo = begin * lanes<T> - s.head, hi = end * lanes<T> - s.head;
  const index_t n = (hi < s.cols ? hi : s.cols) - (lo > 0 ? lo : 0);
  return n > 0 ? float(n) : 0.0f;
}

/// The units one thread holds of the whole units among a row's units [begin, end): the part's
/// first whole unit + t + k * G in slot k; slots [0, k_hi) hold whole units, the others zero. The
/// elements of the row's partial first and last units (fewer than 2 * L) are spread one per thread
/// over the group's first threads (`extra`, element `extra_c` of the row): their masks stay out of
/// every slot's code, and a group's slots need cover only the whole units (a row of 8 * 128 + 1
/// bf16 elements fills 32 threads x 4 slots, as one of 8 * 128 does).
/// Spill: slots V .. V + spill - 1 lie in shared memory (slot V + j at sp[j * step], set by the
/// caller; a thread reads only its own slots, so no barrier guards them), loaded by cp.async
/// while the registers' loads are in flight. Every pass visits the slots in order, registers first.
template <class T, int V, bool Spill = false>
struct row_part {
  static constexpr int L = lanes<T>;
  vec::word16 w[V];
  index_t first;  // unit in slot 0
  int step, k_hi;
  index_t extra_c;  // the row element this thread holds besides its units, -1 for none
  float extra;
  vec::word16* sp = nullptr;  // Spill: this thread's first shared-memory slot
  int spill = 0;              // Spill: slots in shared memory

  STRATA_HD bool whole(int k) const { return k < k_hi; }
  /// The unit in shared-memory slot V + j, read when used. (Never w[k] at a run-time k: indexing
  /// the registers' array at run time would move it to local memory.)
  STRATA_HD vec::word16 shared_unit(int j) const { return sp[j * step]; }

  /// Rows on 16-byte boundaries made of whole units (the common case, chosen per call), units
  /// [begin, end) of them: the thread's units are begin + t + k * G below end, found by compares,
  /// so the loads issue after a few instructions.
  STRATA_HD void load_whole(const T* row, index_t begin, index_t end, int t, int G, bool live, cache_policy policy = 0) {
    first = begin + t, step = G, k_hi = 0, extra_c = -1, extra = 0.0f;
    const int units = int(end - begin);  // a part: at most G * (V + spill) units
    // Slot k's unit lies k units of the group past slot 0's: one element offset, then 32-bit steps
    // (the pointer is formed only for a unit the thread loads).
    const index_t base = first * L;
    STRATA_UNROLL
    for (int k = 0; k < V; ++k) {
      const bool mine = live && t + k * G < units;
      w[k] = vec::word16{};
      if (mine) w[k] = load16(row + (base + k * G * L), policy);
      k_hi += mine ? 1 : 0;
    }
    if constexpr (Spill) {
      for (int k = V; k < V + spill; ++k) {
        const bool mine = live && t + k * G < units;
        if (mine) copy16_async(sp + (k - V) * step, row + (first + k * G) * L);
        else sp[(k - V) * step] = vec::word16{};
        k_hi += mine ? 1 : 0;
      }
      wait_copies();
    }
  }

  /// After load_whole, for a row on a 16-byte boundary whose length is not a multiple of L: the
  /// elements of its partial last unit (unit cols / L), one per thread over the part's first
  /// threads, where the part's units [begin, end) include that unit.
  STRATA_HD void load_tail(const T* row, index_t cols, index_t begin, index_t end, int t, bool live) {
    const index_t u = cols / L, c = u * L + t;
    if (live && u >= begin && u < end && c < cols) extra_c = c, extra = to_float(row[c]);
  }

  /// Places the thread and loads its whole units and its element, all in flight at once.
  /// live == false: the thread holds nothing. The whole units are those of load_whole counted from
  /// the 16-byte boundary at or before the row's start, so they cost what a whole row's do (slots
  /// found by compares, 32-bit steps); the partial units' elements follow.
  STRATA_HD void load(const T* row, const row_span& s, index_t begin, index_t end, int t, int G, bool live, cache_policy policy = 0) {
    const index_t wb = s.full_begin > begin ? s.full_begin : begin, we = s.full_end < end ? s.full_end : end;
    load_whole(unit_base(row, s.head), wb, we > wb ? we : wb, t, G, live, policy);
    int head_n;
    index_t tail_c;
    const int n = partial_elements(s, begin, end, L, head_n, tail_c);
    extra_c = !live || t >= n ? -1 : t < head_n ? index_t(t) : tail_c + (t - head_n);
    extra = extra_c >= 0 ? to_float(row[extra_c]) : 0.0f;
  }

  /// Elements this thread holds.
  STRATA_HD float count() const { return float(k_hi) * L + (extra_c >= 0 ? 1.0f : 0.0f); }
  /// Sum of the thread's elements (layer norm), or of their squares (RMS norm).
  template <norm_kind Kind>
  STRATA_HD float sum() const {
    float s = Kind == norm_kind::layer ? extra : extra * extra;
    auto add = [&](const vec::word16& u) {
      float f[L];
      unpack_kept<T>(u, f);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) s += Kind == norm_kind::layer ? f[i] : f[i] * f[i];  // empty slots are zero
    };
    STRATA_UNROLL
    for (int k = 0; k < V; ++k) add(w[k]);
    if constexpr (Spill) {
      for (int k = V; k < V + spill; ++k) add(shared_unit(k - V));
    }
    return s;
  }
  /// Sum of (x - c)^2 over the thread's elements.
  STRATA_HD float sum_squares(float c) const {
    float m2 = extra_c >= 0 ? (extra - c) * (extra - c) : 0.0f;
    auto add = [&](const vec::word16& u, int k) {
      float f[L], acc = 0;
      unpack_kept<T>(u, f);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) acc += (f[i] - c) * (f[i] - c);
      m2 += whole(k) ? acc : 0.0f;
    };
    STRATA_UNROLL
    for (int k = 0; k < V; ++k) add(w[k], k);
    if constexpr (Spill) {
      for (int k = V; k < V + spill; ++k) add(shared_unit(k - V), k);
    }
    return m2;
  }

  /// Writes the thread's units and element normalized: (x - mean) * rstd * gamma + beta (RMS norm:
  /// x * rstd * gamma + beta, its mean being 0, which saves a subtraction an element). VecOut:
  /// y's rows lie on 16-byte boundaries as x's do (whole units are one store each); VecAffine:
  /// gamma and beta's elements of a unit lie on one (one load each). With VecAffine, whether gamma
  /// and beta are given is settled once per call: each case writes its units with the missing one
  /// folded to a constant: testing for it and filling it per unit would take about a third of a
  /// 16-bit row's write pass, which keeps 65-80% of an H200 SM's issue slots busy.
  /// extra == false: the thread's element past its units is left to the caller (tail_value).
  template <norm_kind Kind, bool VecOut, bool VecAffine>
  STRATA_HD void write(T* yrow, const T* gamma, const T* beta, const row_span& s, float mean, float rstd, cache_policy policy = 0,
                       bool extra = true) const {
    if constexpr (VecAffine) {
      if (gamma) {
        if (beta) write_units<Kind, VecOut, true, given::yes, given::yes>(yrow, gamma, beta, s, mean, rstd, policy);
        else write_units<Kind, VecOut, true, given::yes, given::no>(yrow, gamma, beta, s, mean, rstd, policy);
      } else {
        if (beta) write_units<Kind, VecOut, true, given::no, given::yes>(yrow, gamma, beta, s, mean, rstd, policy);
        else write_units<Kind, VecOut, true, given::no, given::no>(yrow, gamma, beta, s, mean, rstd, policy);
      }
    } else {
      write_units<Kind, VecOut, false, given::maybe, given::maybe>(yrow, gamma, beta, s, mean, rstd, policy);
    }
    if (extra && extra_c >= 0) yrow[extra_c] = from_float<T>(tail_value(gamma, beta, mean, rstd));
  }
  /// The thread's element past its units, normalized (extra_c >= 0).
  STRATA_HD float tail_value(const T* gamma, const T* beta, float mean, float rstd) const {
    const float g = gamma ? to_float(gamma[extra_c]) : 1.0f, b = beta ? to_float(beta[extra_c]) : 0.0f;
    return (extra - mean) * (rstd * g) + b;
  }

  /// Whether write_units is handed gamma (or beta): known present, known absent, or tested per unit.
  enum class given { no, yes, maybe };

  template <norm_kind Kind, bool VecOut, bool VecAffine, given G, given B>
  STRATA_HD void write_units(T* yrow, const T* gamma, const T* beta, const row_span& s, float mean, float rstd, cache_policy policy) const {
    T* ybase = const_cast<T*>(unit_base(yrow, s.head));
    auto put = [&](const vec::word16& unit_k, int k) {
      const index_t u = first + index_t(k) * step, c0 = u * L - s.head;
      float x[L], g[L], b[L], v[L];
      unpack_kept<T>(unit_k, x);
      affine<VecAffine, G>(gamma, c0, 1.0f, g);
      affine<VecAffine, B>(beta, c0, 0.0f, b);
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) v[i] = (Kind == norm_kind::layer ? x[i] - mean : x[i]) * (rstd * g[i]) + b[i];
      if constexpr (VecOut) {
        store16(ybase + u * L, rows::pack_floats<T>(v), policy);
      } else {
        for (int i = 0; i < L; ++i) yrow[c0 + i] = from_float<T>(v[i]);
      }
    };
    STRATA_UNROLL
    for (int k = 0; k < V; ++k)
      if (whole(k)) put(w[k], k);
    if constexpr (Spill) {
      for (int k = V; k < V + spill; ++k)
        if (whole(k)) put(shared_unit(k - V), k);
    }
  }

  /// gamma or beta's elements c0 .. c0 + L - 1 as floats (`fill` where null, or where Given says
  /// it is absent): one access when they lie on a 16-byte boundary, element by element otherwise.
  template <bool Vec, given Given>
  STRATA_HD static void affine(const T* p, index_t c0, float fill, float (&out)[L]) {
    if (Given == given::no || (Given == given::maybe && !p)) {
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) out[i] = fill;
    } else if constexpr (Vec) {
      rows::unpack_floats<T>(load_kept(p + c0), out);
    } else {
      STRATA_UNROLL
      for (int i = 0; i < L; ++i) out[i] = to_float(p[c0 + i]);  // gamma or beta off its boundary
    }
  }
};

/// Whether y's rows start where x's do relative to 16-byte boundaries (whole units store as one
/// vector), and whether gamma and beta's elements of a unit lie on one boundary.
STRATA_HD inline bool same_phase(const void* a, const void* b) {
  return reinterpret_cast<std::uintptr_t>(a) % 16 == reinterpret_cast<std::uintptr_t>(b) % 16;
}
template <class T>
STRATA_HD inline bool affine_on_units(const T* gamma, const T* beta, int head) {
  auto ok = [&](const T* p) { return !p || reinterpret_cast<std::uintptr_t>(p) % 16 == std::uintptr_t(head) * sizeof(T); };
  return ok(gamma) && ok(beta);
}

/// Writes a thread's units choosing the store and affine widths the row's alignment allows.
template <norm_kind Kind, class T, int V, bool Spill>
STRATA_HD inline void write_part(const row_part<T, V, Spill>& part, const args<T>& a, const T* xrow, T* yrow, const row_span& s,
                                 float mean, float rstd, cache_policy policy = 0) {
  const index_t shift = index_t(s.head) * a.affine_step;
  const T *gamma = a.gamma ? a.gamma + shift : nullptr, *beta = a.beta ? a.beta + shift : nullptr;
  if (a.vec_rows) return part.template write<Kind, true, true>(yrow, gamma, beta, s, mean, rstd, policy);
  const bool vec_out = same_phase(xrow, yrow), vec_affine = affine_on_units(gamma, beta, s.head);
  if (vec_out && vec_affine) part.template write<Kind, true, true>(yrow, gamma, beta, s, mean, rstd, policy);
  else if (vec_out) part.template write<Kind, true, false>(yrow, gamma, beta, s, mean, rstd, policy);
  else part.template write<Kind, false, false>(yrow, gamma, beta, s, mean, rstd);
}

}  // namespace detail::norm
}  // namespace strata
