// make_aos_view(records, n), the span-first order, still compiles but warns that the count comes
// first now (as in make_soa_view). The build is then stopped on purpose, so that every run of this
// test compiles the file again and shows the warning.
#include <strata/container/aos_view.hpp>
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (float, x), (int, id));
};
template <class T>
struct stop_here {
  static_assert(sizeof(T) == 0, "end of the deprecation check");
};
int main() {
  strata::layout::aligned_record<rec> storage[4];
  auto v = strata::make_aos_view<rec>(cuda::std::span<strata::layout::aligned_record<rec>>(storage, 4), 4);
  stop_here<rec> end;
  (void)end;
  return int(v.size());
}
