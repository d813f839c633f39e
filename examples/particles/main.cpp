// SPDX-License-Identifier: Apache-2.0
// The particle demo as its own program; `particles --help` lists the options.
#include "options.hpp"
#if defined(STRATA_DEMO_DISTRIBUTED)
#include "distributed.hpp"
#endif

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  strata_examples::demo_options o;
  CLI::App app{"The strata particle demo: the same particle steps in four layouts (AoS, padded AoS, SoA through Thrust "
               "iterators, SoA through strata's packets), their times and whether they agree."};
  strata_examples::add_demo_options(app, o);
  CLI11_PARSE(app, argc, argv);
  try {
    return strata_examples::run_demo(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "particles: %s\n", e.what());
    return 1;
  }
}
