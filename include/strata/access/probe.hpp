// SPDX-License-Identifier: Apache-2.0
// A functor's access pattern: which leaves an in-place update (for_each's f(record&), transform's
// record f(record) over its own records) reads and which it changes, found by running it where it
// runs (the device on the CUDA backend) on probe records. A leaf is read where changing its value
// alone changes the result, and written where the result's bits differ from the record's.
// strata's in-place algorithms then load the leaves read or written (a store is decided by
// comparing with the value loaded) and store the leaves written, so pattern.counts(n) is what one
// call over n records moves, leaf by leaf.
//
// The probe sees what the functor does on its probe records: 16 records, half of random bits and
// half of small values (bools 0 or 1, enums 0 .. 3), each leaf then changed alone; a functor
// probed must accept any bit pattern in its leaves (an index into a table read from a leaf would
// read out of bounds). A functor returning the record is probed as an in-place transform: leaves
// it passes through count as neither read nor written. A leaf the functor reads only in a branch its probe
// records never take, or changes only for rare values, is not seen; for such functors count the
// kernel's accesses instead (counting_view.hpp).
#pragma once

#include <strata/access/counts.hpp>
#include <strata/config.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>
#include <strata/reflect/changes.hpp>
#include <strata/reflect/leaves.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

namespace strata {

template <class T>
struct access_pattern {
  static constexpr std::size_t leaves = reflect::leaf_count<T>;
  std::array<bool, leaves> read{};
  std::array<bool, leaves> written{};

  /// What one in-place call over n records moves: every leaf read or written is loaded, every
  /// leaf written is stored, once a record.
  access_counts<T> counts(std::uint64_t n) const {
    access_counts<T> c;
    c.records = n;
    for (std::size_t l = 0; l < leaves; ++l) {
      c.reads[l] = read[l] || written[l] ? n : 0;
      c.writes[l] = written[l] ? n : 0;
    }
    return c;
  }
  bool operator==(const access_pattern&) const = default;
};

namespace detail {
/// What a probe call returns: the record after an update (`void f(record&)`, or `record f(record)`,
/// probed as an in-place transform), or a map functor's value. f is called on a mutable copy of
/// the probe record, so generic functors taking `auto&` are probed as for_each calls them.
template <class T, class F>
constexpr auto probe_result_of() {
  using R = std::remove_cvref_t<std::invoke_result_t<const F&, T&>>;
  if constexpr (std::is_void_v<R>) return std::type_identity<T>{};
  else return std::type_identity<R>{};
}
template <class T, class F>
using probe_result_t = typename decltype(probe_result_of<T, F>())::type;
/// A probe result in memory (a struct, so results of type bool are not a std::vector<bool>).
template <class R>
struct probe_slot {
  R value;
};

template <class T, class F>
STRATA_HD void apply_probe(const T& in, probe_slot<probe_result_t<T, F>>& out, const F& f) {
  T copy = in;
  if constexpr (std::is_void_v<std::invoke_result_t<const F&, T&>>) {
    f(copy);
    out.value = copy;
  } else {
    out.value = f(copy);
  }
}

#if defined(STRATA_BACKEND_CUDA)
template <class T, class F>
__global__ void probe_kernel(const T* in, probe_slot<probe_result_t<T, F>>* out, int n, F f) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) apply_probe(in[i], out[i], f);
}
#endif

template <class V>
V random_bits(std::mt19937_64& g) {
  unsigned char bytes[sizeof(V)];
  for (auto& b : bytes) b = static_cast<unsigned char>(g());
  V v;
  std::memcpy(&v, bytes, sizeof(V));
  return v;
}

/// A random value of leaf L: random bits, or (moderate) a value in [-4, 4] for floating-point
/// leaves and [-8, 8] ([0, 16] unsigned) for integers, so arithmetic on it stays in range.
template <class T, std::size_t L>
void randomize_leaf(T& r, std::mt19937_64& g, bool moderate) {
  using leaf = reflect::leaf_type_t<T, L>;
  leaf v;
  if constexpr (std::is_same_v<leaf, bool>) {
    v = (g() & 1) != 0;
  } else if constexpr (std::is_floating_point_v<leaf>) {
    if (moderate) v = leaf(std::uniform_real_distribution<double>(-4.0, 4.0)(g));
    else v = random_bits<leaf>(g);
  } else if constexpr (std::is_integral_v<leaf>) {
    if (moderate) v = leaf(std::int64_t(g() % 17) - (std::is_signed_v<leaf> ? 8 : 0));
    else v = random_bits<leaf>(g);
  } else if constexpr (std::is_enum_v<leaf>) {
    // Enumerators are small: moderate probes take 0 .. 3, where a flag's states usually lie.
    if (moderate) v = leaf(g() % 4);
    else v = random_bits<leaf>(g);
  } else {
    v = random_bits<leaf>(g);
  }
  reflect::leaf<L>(r) = v;
}
}  // namespace detail

/// The access pattern of an in-place update f: `void f(record&)` (for_each) or `record f(record)`
/// (transform over its own records); or of a map `value f(const record&)` (transform_reduce,
/// transform into other records), which writes nothing. f runs on the device on the CUDA backend
/// (it must be callable there, as for strata::for_each), on the host otherwise; 16 * (leaves + 1)
/// calls.
template <class T, class F>
access_pattern<T> access_of(const F& f) {
  static_assert(std::is_trivially_copyable_v<T>, "strata: access_of probes records that copy as bytes");
  static_assert(std::is_invocable_v<const F&, T&>,
                "strata: access_of needs an update (void f(record&), record f(const record&)) or a map (value f(const record&))");
  using R = detail::probe_result_t<T, F>;
  static_assert(std::is_trivially_copyable_v<R>, "strata: access_of compares a map's values as bytes: they must be trivially copyable");
  constexpr bool is_map = !std::is_same_v<R, T>;
  constexpr std::size_t leaves = reflect::leaf_count<T>;
  constexpr std::size_t bases = 16, per_base = leaves + 1;
  std::mt19937_64 g(0x5eed'acce'55ull);
  std::vector<T> in(bases * per_base);
  for (std::size_t b = 0; b < bases; ++b) {
    const bool moderate = b % 2 == 1;
    T base{};
    reflect::for_each_leaf<T>([&](auto leaf) { detail::randomize_leaf<T, decltype(leaf)::value>(base, g, moderate); });
    in[b * per_base] = base;
    reflect::for_each_leaf<T>([&](auto leaf) {
      constexpr std::size_t L = decltype(leaf)::value;
      T changed = base;
      // A value whose bits differ from the base's (random bits differ at once but for 1-byte bools).
      do detail::randomize_leaf<T, L>(changed, g, moderate);
      while (!detail::bits_differ(reflect::leaf<L>(changed), reflect::leaf<L>(base)) && !std::is_same_v<reflect::leaf_type_t<T, L>, bool>);
      if constexpr (std::is_same_v<reflect::leaf_type_t<T, L>, bool>) reflect::leaf<L>(changed) = !reflect::leaf<L>(base);
      in[b * per_base + 1 + L] = changed;
    });
  }
  std::vector<detail::probe_slot<R>> slots(in.size());
#if defined(STRATA_BACKEND_CUDA)
  buffer din(in.size() * sizeof(T), memory_space::device), dout(in.size() * sizeof(detail::probe_slot<R>), memory_space::device);
  copy_bytes(din.data(), in.data(), din.bytes());
  const unsigned threads = 128, blocks = unsigned((in.size() + threads - 1) / threads);
  detail::probe_kernel<<<blocks, threads>>>(reinterpret_cast<const T*>(din.data()), reinterpret_cast<detail::probe_slot<R>*>(dout.data()), int(in.size()), f);
  detail::check_launch("access_of probe kernel launch");
  copy_bytes(slots.data(), dout.data(), dout.bytes());
#else
  for (std::size_t i = 0; i < in.size(); ++i) detail::apply_probe(in[i], slots[i], f);
#endif
  const auto out = [&](std::size_t i) -> const R& { return slots[i].value; };
  access_pattern<T> p;
  if constexpr (is_map) {
    // A map writes nothing; leaf L is read where changing it alone changes the value.
    for (std::size_t b = 0; b < bases; ++b)
      reflect::for_each_leaf<T>([&](auto leaf) {
        constexpr std::size_t L = decltype(leaf)::value;
        p.read[L] = p.read[L] || detail::bits_differ(out(b * per_base + 1 + L), out(b * per_base));
      });
  } else {
    // Leaf L is read where changing it alone changes another leaf of the result, or changes L's
    // own result other than by passing the new value through.
    const auto other_leaf_differs = [](const T& a, const T& b, std::size_t skip) {
      bool d = false;
      reflect::for_each_leaf<T>([&](auto leaf) {
        constexpr std::size_t K = decltype(leaf)::value;
        d = d || (K != skip && detail::bits_differ(reflect::leaf<K>(a), reflect::leaf<K>(b)));
      });
      return d;
    };
    for (std::size_t b = 0; b < bases; ++b) {
      const T& base_in = in[b * per_base];
      const T& result = out(b * per_base);
      reflect::for_each_leaf<T>([&](auto leaf) {
        constexpr std::size_t L = decltype(leaf)::value;
        const T& changed_in = in[b * per_base + 1 + L];
        const T& changed_out = out(b * per_base + 1 + L);
        using detail::bits_differ;
        const bool passed_through = !bits_differ(reflect::leaf<L>(result), reflect::leaf<L>(base_in)) &&
                                    !bits_differ(reflect::leaf<L>(changed_out), reflect::leaf<L>(changed_in));
        p.written[L] = p.written[L] || bits_differ(reflect::leaf<L>(result), reflect::leaf<L>(base_in));
        p.read[L] = p.read[L] || other_leaf_differs(changed_out, result, L) ||
                    (!passed_through && bits_differ(reflect::leaf<L>(changed_out), reflect::leaf<L>(result)));
      });
    }
  }
  return p;
}

}  // namespace strata
