// The strata driver: `strata describe` prints the layout strata derives for the demo's particle.
#include <strata/layout/descriptor.hpp>

#include "common/records.hpp"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

template <class T>
void describe(const char* name) {
  using d = strata::layout::record_descriptor<T>;
  std::printf("record %s: %zu fields, packed %zu B, natural %zu B (align %zu), padded %zu B (align %zu), "
              "%zu x %zu-byte access per record, packet of %zu records\n",
              name, d::fields, d::packed_size, d::natural_size, d::natural_alignment, d::padded_size,
              d::padded_alignment, d::accesses_per_record, d::access_bytes, d::packet_width);
  strata::reflect::for_each_field<T>([](auto i) {
    using f = strata::layout::field_descriptor<T, decltype(i)::value>;
    std::printf("  %-8.*s offset %2zu  size %2zu  align %2zu  lanes/16B %2zu\n", static_cast<int>(f::name.size()),
                f::name.data(), f::offset, f::size, f::alignment, f::lanes);
  });
}

int usage() {
  std::puts("usage: strata describe");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "describe";
  if (cmd == "describe") {
    describe<strata_test::particle>("particle");
    describe<strata_test::mixed>("mixed");
    return 0;
  }
  return usage();
}
