// SPDX-License-Identifier: Apache-2.0
// Columns and matrices as cuda::std::mdspan: a column of a view is a 1-D mdspan over its size()
// records, a matrix_view a 2-D mdspan whose row stride is the pitch. Both borrow the memory of the
// view they come from and are usable in host and device code, as the views are.
#pragma once

#include <strata/config.hpp>
#include <strata/container/matrix.hpp>
#include <strata/container/soa_view.hpp>

#include <cuda/std/mdspan>

namespace strata {

template <class U>
using column_mdspan = cuda::std::mdspan<U, cuda::std::dextents<index_t, 1>>;
template <class U>
using matrix_mdspan = cuda::std::mdspan<U, cuda::std::dextents<index_t, 2>, cuda::std::layout_stride>;

/// A column of the view: size() elements, contiguous. Sel is a leaf index or a selector naming one
/// leaf (&T::x, strata::member<&T::pos, &vec3::x>).
template <auto Sel, class T>
  requires(std::is_integral_v<decltype(Sel)> || selector<Sel>)
STRATA_HD auto to_mdspan(const soa_view<T>& v) {
  constexpr std::size_t L = reflect::leaf_of<std::remove_const_t<T>, Sel>;
  return column_mdspan<typename soa_view<T>::template leaf_type<L>>(v.template column_data<L>(), v.size());
}

/// rows x cols elements; element (r, c) at data + r * pitch + c. The padding past cols is not in it.
template <class T>
STRATA_HD matrix_mdspan<T> to_mdspan(const matrix_view<T>& m) {
  using ext = cuda::std::dextents<index_t, 2>;
  const cuda::std::array<index_t, 2> strides{m.pitch, index_t(1)};
  return matrix_mdspan<T>(m.data, cuda::std::layout_stride::mapping<ext>(ext(m.rows, m.cols), strides));
}

}  // namespace strata
