// SPDX-License-Identifier: Apache-2.0
// Foreign memory and DLPack: records whose columns someone else allocated (here three
// thrust::device_vector; in practice a framework's tensors or a simulation code's arrays) become an
// soa_view with make_soa_view, which checks each column's length and alignment and that all live
// in one place; strata's algorithms then run on them in place, no copy. A column goes out as a
// DLPack tensor (what PyTorch, CuPy and JAX import without a copy) and DLPack tensors come in as a
// view of the record.
#include <strata/strata.hpp>
#include <strata/interop/dlpack.hpp>

#include <thrust/device_vector.h>
#include <thrust/sequence.h>

#include <cstdio>
#include <memory>
#include <vector>

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, vx), (float, mass));
};
struct drift {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * 0.25f;
    return p;
  }
};
struct mass_of {
  STRATA_HD double operator()(const particle& p) const { return p.mass; }
};
struct x_of {
  STRATA_HD double operator()(const particle& p) const { return p.x; }
};
struct plus {
  STRATA_HD double operator()(double a, double b) const { return a + b; }
};

template <class F>
cuda::std::span<F> span_of(thrust::device_vector<F>& v) {
  return {thrust::raw_pointer_cast(v.data()), v.size()};
}

int main() {
  const int n = 1001;  // not a whole number of packets: the last records go one by one
  try {
    // Someone else's columns.
    thrust::device_vector<float> x(n), vx(n, 2.0f), mass(n, 0.5f);
    thrust::sequence(x.begin(), x.end());
    // alignment::vector: the 128-bit paths may run (cudaMalloc and malloc give 16-byte alignment);
    // alignment::element accepts any column aligned for its element, record by record.
    auto view = strata::make_soa_view<particle>(n, strata::alignment::vector, span_of(x), span_of(vx), span_of(mass));
    const strata::path p = strata::transform(view, view, drift{});
    bool ok = x[0] == 0.5f && x[n - 1] == float(n - 1) + 0.5f;

    // Out: the mass column as a DLPack tensor borrowing the view's memory (the caller's deleter
    // call frees the bookkeeping only).
    DLManagedTensor* t = strata::to_dlpack<&particle::mass>(view);
    ok = ok && t->dl_tensor.ndim == 1 && t->dl_tensor.shape[0] == n && t->dl_tensor.data == span_of(mass).data();
    t->deleter(t);

    // Out from a container the tensors keep alive, then back in: a view over the three tensors,
    // checked as make_soa_view checks (dtype, length, alignment, device).
    auto owned = std::make_shared<strata::soa_vector<particle>>(std::vector<particle>(n, particle{1.0f, -1.0f, 3.0f}));
    DLManagedTensor* cols[] = {strata::to_dlpack<&particle::x>(owned), strata::to_dlpack<&particle::vx>(owned),
                               strata::to_dlpack<&particle::mass>(owned)};
    owned.reset();  // the tensors hold the container now
    auto imported = strata::soa_view_from_dlpack<particle>(strata::alignment::vector, cols[0]->dl_tensor, cols[1]->dl_tensor, cols[2]->dl_tensor);
    strata::transform(imported, imported, drift{});
    const double total = strata::transform_reduce(imported, mass_of{}, 0.0, plus{});
    const double xs = strata::transform_reduce(imported, x_of{}, 0.0, plus{});
    ok = ok && total == 3.0 * n && xs == 0.75 * n;
    // A tensor of another element type is refused, naming it and both types.
    DLTensor doubles = cols[0]->dl_tensor;
    doubles.dtype = strata::dlpack_dtype<double>();
    try {
      (void)strata::span_from_dlpack<float>(doubles, "the x tensor");
      ok = false;
    } catch (const strata::type_error& e) {
      std::printf("refused, as it should be: %s\n", e.what());
    }
    for (auto* c : cols) c->deleter(c);  // the last one frees the container
    std::printf("%d records in foreign columns (%s), DLPack out and in: %s\n", n,
                p == strata::path::vectorized ? "16-byte vectors" : "record by record", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foreign_memory: %s\n", e.what());
    return 1;
  }
}
