// SPDX-License-Identifier: Apache-2.0
// Probe kernels for the vector-width check: each moves records the way strata's layers do, and the
// sass-expect lines give the width every global load and store in it must have.
// Built once as is and once with STRATA_SASS_BREAK_ALIGNMENT, which drops the aligned record type:
// the check must then fail, which proves it can.
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/convert/convert.hpp>

#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/normalize.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/layout/vector_access.hpp>

#include <thrust/execution_policy.h>
#include <thrust/transform.h>

#include "../common/functors.hpp"

#include "../common/records.hpp"

using namespace strata_test;

#ifdef STRATA_SASS_BREAK_ALIGNMENT
template <class T>
using stored = T;
template <class T>
__device__ T load_record(const T* p) { return *p; }
template <class T>
__device__ void store_record(T* p, const T& v) { *p = v; }
#else
template <class T>
using stored = strata::layout::aligned_record<T>;
using strata::layout::load_record;
using strata::layout::store_record;

#endif

template <class T>
__device__ void copy_records(const stored<T>* __restrict__ in, stored<T>* __restrict__ out, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) {
    T v = load_record<T>(in + i);  // whole-record access through the descriptor's record type
    v.*strata::reflect::member_pointer<T, 0> += 1;
    store_record<T>(out + i, v);
  }
}

// {float a, b} as declared: two 32-bit accesses (shown for contrast, not a strata path).
// sass-expect: ^probe_two_floats_natural$ load=32 store=32
extern "C" __global__ void probe_two_floats_natural(const two_floats* in, two_floats* out, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) { two_floats v = in[i]; v.a += 1; out[i] = v; }
}
// sass-expect: ^probe_two_floats$ load=64 store=64
extern "C" __global__ void probe_two_floats(const stored<two_floats>* in, stored<two_floats>* out, long n) {
  copy_records<two_floats>(in, out, n);
}
// sass-expect: ^probe_three_bytes$ load=32 store=32
extern "C" __global__ void probe_three_bytes(const stored<three_bytes>* in, stored<three_bytes>* out, long n) {
  copy_records<three_bytes>(in, out, n);
}
// sass-expect: ^probe_float3$ load=128 store=128
extern "C" __global__ void probe_float3(const stored<with_float3>* in, stored<with_float3>* out, long n) {
  copy_records<with_float3>(in, out, n);
}
// sass-expect: ^probe_particle$ load=128 store=128
extern "C" __global__ void probe_particle(const stored<particle>* in, stored<particle>* out, long n) {
  copy_records<particle>(in, out, n);
}
// sass-expect: ^probe_eight_floats$ load=128 store=128
extern "C" __global__ void probe_eight_floats(const stored<eight_floats>* in, stored<eight_floats>* out, long n) {
  copy_records<eight_floats>(in, out, n);
}

#ifndef STRATA_SASS_BREAK_ALIGNMENT
// thrust::transform over packet iterators: every global access of its kernels is 128 bits wide.
// sass-expect: packet_view.*per_record_fn load=128 store=128
void probe_thrust_packets(strata::soa_view<const particle> in, strata::soa_view<particle> out) {
  auto pin = strata::packets(in);
  auto pout = strata::packets(out);
  thrust::transform(thrust::device, strata::packets_begin(pin), strata::packets_end(pin), strata::packets_begin(pout),
                    strata::per_record(drift{}));
}
// Half-precision-wide columns: a three-byte record packs 16 records per packet (8-bit columns).
// sass-expect: packet_view.*three_bytes.*per_record_fn load=128 store=128
struct brighten {
  __host__ __device__ three_bytes operator()(three_bytes c) const {
    c.r = static_cast<std::int8_t>(c.r + 1);
    return c;
  }
};
void probe_thrust_packets_bytes(strata::soa_view<const three_bytes> in, strata::soa_view<three_bytes> out) {
  auto pin = strata::packets(in);
  auto pout = strata::packets(out);
  thrust::transform(thrust::device, strata::packets_begin(pin), strata::packets_end(pin), strata::packets_begin(pout),
                    strata::per_record(brighten{}));
}
// strata::transform's packet path (CUB's transform kernel over packet iterators): 128-bit only.
// sass-expect: transform_kernel.*packet_view.*per_record_fn.*drift load=128 store=128
void probe_strata_transform(strata::soa_view<const particle> in, strata::soa_view<particle> out) {
  strata::transform(in, out, drift{});
}
// In place, an update stores the leaves it changes only: drift reads x, y, z, vx, vy, vz and writes
// x, y, z (the mass is neither loaded nor stored, the velocities not stored), as a hand float4
// kernel does; for_each's kick the same with the roles swapped.
// sass-expect: direct_kernel.*update_each.*basic_packet_view.*assign_result.*drift load=128 store=128 loads=6 stores=3
// sass-expect: direct_kernel.*update_each.*basic_packet_view.*per_record_update.*kick load=128 store=128 loads=6 stores=3
void probe_in_place(strata::soa_view<particle> v) {
  strata::transform(v, v, drift{});
  strata::for_each(v, kick{});
}
// Reductions: the column body is read as 16-byte vectors (head and tail elements one by one).
// sass-expect: reduce_kernel.*column_source load=any128 store=any32
void probe_reduce(cuda::std::span<const float> col, float* result) {
  strata::reduce_async(col, 0.0f, plus_f{}, result);
}
// Conversion: 16-byte AoS loads (bytes only at an unaligned array's ends) and 16-byte column
// stores; the reverse direction mirrors it. The masked instantiations (Lb1E), for views whose
// memory ends inside a column unit, move that unit element by element. (EELb0E: the kernel's Masked
// argument, after the tile type's own last argument, its swizzle flag.)
// sass-expect: aos_to_soa_kernel.*EELb0E load=any128 store=128
// sass-expect: soa_to_aos_kernel.*EELb0E load=128 store=any128
// sass-expect: aos_to_soa_kernel.*EELb1E load=any128 store=any128
// sass-expect: soa_to_aos_kernel.*EELb1E load=any128 store=any128
void probe_convert(const particle* aos, strata::soa_view<particle> soa, particle* back) {
  strata::aos_to_soa(aos, soa.size(), soa);
  strata::soa_to_aos(strata::soa_view<const particle>(soa), back);
}
// Nested records: strata::transform's packet path over the nested particle (vec3 members), and
// the transposes of a record of arrays, a vector type and leaves of four sizes: 128-bit only.
// sass-expect: transform_kernel.*packet_view.*nested_particle.*per_record_fn load=128 store=128
void probe_nested_transform(strata::soa_view<const nested_particle> in, strata::soa_view<nested_particle> out) {
  strata::transform(in, out, drift_nested{});
}
// AoSoA (blocks of 32 particles): the packet path and the transposes address leaves through the
// generic view and stay 128-bit.
// sass-expect: transform_kernel.*aosoa_mapping.*per_record_fn.*drift load=128 store=128
// sass-expect: direct_kernel.*aosoa_mapping.*per_record_fn.*drift load=128 store=128
void probe_aosoa_transform(strata::aosoa_view<const particle> in, strata::aosoa_view<particle> out) {
  strata::transform(in, out, drift{});
}
// sass-expect: aos_to_soa_kernel.*EELb0E.*aosoa_mapping load=any128 store=128
// sass-expect: soa_to_aos_kernel.*EELb0E.*aosoa_mapping load=128 store=any128
void probe_aosoa_convert(const particle* aos, strata::aosoa_view<particle> v, particle* back) {
  strata::aos_to_soa(aos, v.size(), v);
  strata::soa_to_aos(strata::aosoa_view<const particle>(v), back);
}
// sass-expect: aos_to_soa_kernel.*cell_record.*EELb0E load=any128 store=128
// sass-expect: soa_to_aos_kernel.*cell_record.*EELb0E load=128 store=any128
void probe_nested_convert(const cell_record* aos, strata::soa_view<cell_record> soa, cell_record* back) {
  strata::aos_to_soa(aos, soa.size(), soa);
  strata::soa_to_aos(strata::soa_view<const cell_record>(soa), back);
}
// gather's transpose behind a path gate: the tiles move in 16-byte vectors as above; the one other
// load is the gate's 8-byte count.
// sass-expect: soa_to_aos_gated_kernel.*particle.*EELb0E load=any128 store=any128
void probe_gather(const strata::soa_vector<particle>& src, cuda::std::span<const int> idx, strata::soa_vector<particle>& dst) {
  strata::gather(src, idx, dst);
}
// Compaction: each warp reads 32 adjacent records a leaf at a time (coalesced 4-byte loads); the
// kept records are staged in shared memory and go out as 16-byte vectors, the partial units at a
// run's ends element by element.
// sass-expect: compact_kernel.*particle load=any32 store=any128
struct mass_below {
  __host__ __device__ bool operator()(const particle& p) const { return p.mass < 0.5f; }
};
void probe_erase_if(strata::soa_vector<particle>& v) { (void)strata::erase_if(v, mass_below{}); }
// Byte columns: each warp reads its span of a column in 16-byte vectors into shared memory (a load
// of one byte a record would move 32 bytes a warp).
// sass-expect: compact_kernel.*three_bytes load=any128 store=any128
// The counting pass reads whole tiles of such records in 16-byte vectors too (the last, partial
// tile one byte a record).
// sass-expect: compact_count_kernel.*three_bytes load=any128 store=any64
struct red_below {
  __host__ __device__ bool operator()(const three_bytes& c) const { return c.r < 16; }
};
void probe_erase_if_bytes(strata::soa_vector<three_bytes>& v) { (void)strata::erase_if(v, red_below{}); }
// Normalization: rows, gamma and beta in 16-byte vectors, output likewise (fp32 and bf16), in every
// kernel and every units-per-thread count; the elements of a row's partial first and last units,
// gamma and beta off their boundaries and an output at another offset than the input move element
// by element (norm_row.hpp), so each kernel also has narrower accesses. Blocks holding part of a
// row in shared memory (the second flag) load those units by cp.async, the rest as vectors; the
// variant for rows ending in a partial unit (the third flag) reads and writes its whole units as
// vectors too.
// sass-expect: rows_kernel.*Li[1-8]ELb[01]ELb[01]ELb[01]EEEv load=any128 store=any128
// Short rows of whole units stacked in groups take only such rows: every access is a vector.
// sass-expect: stacked_rows_kernel.*Li[1-8]ELi[248]EEEv load=128 store=128
// sass-expect: streamed_kernel.*Li[1-8]ELb[01]EEEv load=any128 store=any128
void probe_layer_norm(strata::matrix_view<const float> x, strata::matrix_view<float> y, const float* g,
                      strata::matrix_view<const strata::bfloat16> xb, strata::matrix_view<strata::bfloat16> yb, const strata::bfloat16* gb) {
  strata::layer_norm<float>(x, y, {g, std::size_t(x.cols)}, {g, std::size_t(x.cols)}, 1e-5f);
  strata::layer_norm<strata::bfloat16>(xb, yb, {gb, std::size_t(xb.cols)}, {gb, std::size_t(xb.cols)}, 1e-5f);
  strata::rms_norm<float>(x, y, {g, std::size_t(x.cols)}, 1e-5f);
}
#endif
