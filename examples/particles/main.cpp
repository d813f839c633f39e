// The particle demo as its own program: particles [--n N] [--steps S] [--energy-every K] [--sort-every M]
#include "particles.hpp"
#if defined(STRATA_DEMO_DISTRIBUTED)
#include "distributed.hpp"
#endif

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  strata_examples::demo_options o;
  for (int i = 1; i < argc; i += 2)
    if (i + 1 >= argc || !strata_examples::set_demo_option(o, argv[i], argv[i + 1])) {
      std::fprintf(stderr, "usage: particles %s\n", strata_examples::demo_usage);
      return 2;
    }
  try {
    return strata_examples::run_demo(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "particles: %s\n", e.what());
    return 1;
  }
}
