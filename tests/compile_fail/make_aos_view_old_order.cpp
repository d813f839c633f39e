// SPDX-License-Identifier: Apache-2.0
// make_aos_view(records, n), the span-first order, still compiles but warns that the count comes
// first now (as in make_soa_view). This target turns that warning into an error (CMakeLists.txt),
// so that every run of the test compiles the file again and shows the message.
#include <strata/container/aos_view.hpp>
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (float, x), (int, id));
};
int main() {
  strata::layout::aligned_record<rec> storage[4];
  auto v = strata::make_aos_view<rec>(cuda::std::span<strata::layout::aligned_record<rec>>(storage, 4), 4);
  return int(v.size());
}
