// The strata driver: `strata demo` runs the particle demo, `strata describe` prints the layouts
// strata derives for the demo's records, `strata bench` runs the benchmarks (strata_bench).
#include "particles/particles.hpp"
#if defined(STRATA_DEMO_DISTRIBUTED)
#include "particles/distributed.hpp"
#endif

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <cstring>
#include <string>

namespace {

// Records `strata describe` shows besides the demo's particle: leaves of mixed sizes, and a nested
// record whose leaves are named by their paths.
struct mixed {
  BOOST_HANA_DEFINE_STRUCT(mixed, (double, energy), (float, x), (std::uint16_t, cell), (std::uint8_t, flags));
};
struct vec3 {
  BOOST_HANA_DEFINE_STRUCT(vec3, (float, x), (float, y), (float, z));
};
struct nested_particle {
  BOOST_HANA_DEFINE_STRUCT(nested_particle, (vec3, pos), (vec3, vel), (float, mass), (std::array<std::int16_t, 2>, cell));
};

template <class T>
void describe(const char* name) {
  using d = strata::layout::record_descriptor<T>;
  std::printf("record %s: %zu leaves, packed %zu B, natural %zu B (align %zu), padded %zu B (align %zu), "
              "%zu x %zu-byte access per record, packet of %zu records\n",
              name, d::leaves, d::packed_size, d::natural_size, d::natural_alignment, d::padded_size,
              d::padded_alignment, d::accesses_per_record, d::access_bytes, d::packet_width);
  strata::reflect::for_each_leaf<T>([](auto i) {
    using f = strata::layout::leaf_descriptor<T, decltype(i)::value>;
    std::printf("  %-10.*s offset %3zu  size %2zu  align %2zu  lanes/16B %2zu\n", static_cast<int>(f::name.size()),
                f::name.data(), f::offset, f::size, f::alignment, f::lanes);
  });
}

int usage() {
  std::printf("usage: strata demo %s | strata describe | strata bench [benchmark args]\n", strata_examples::demo_usage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "demo";
  if (cmd == "demo") {
    strata_examples::demo_options o;
    for (int i = 2; i < argc; i += 2)
      if (i + 1 >= argc || !strata_examples::set_demo_option(o, argv[i], argv[i + 1])) return usage();
    describe<strata_examples::particle>("particle");
    std::puts("");
    try {
      return strata_examples::run_demo(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "strata demo: %s\n", e.what());
      return 1;
    }
  }
  if (cmd == "bench") {
    // The benchmarks live in their own binary next to this one's build folder.
    std::string self = argv[0], dir = self.substr(0, self.find_last_of('/') + 1);
    std::string bench = dir + "../bench/strata_bench";
    argv[1] = bench.data();
    execv(bench.c_str(), argv + 1);
    std::perror(("strata bench: cannot run " + bench).c_str());
    return 1;
  }
  if (cmd == "describe") {
    describe<strata_examples::particle>("particle");
    describe<mixed>("mixed");
    describe<nested_particle>("nested_particle");
    return 0;
  }
  return usage();
}
