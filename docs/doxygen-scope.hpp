// SPDX-License-Identifier: Apache-2.0
// Read by Doxygen only (docs/Doxyfile): declares the Thrust trait that strata's headers specialize
// for their proxy references, so Doxygen knows its scope.
namespace thrust {
namespace detail {
template <class T>
struct is_proxy_reference;
}  // namespace detail
}  // namespace thrust
