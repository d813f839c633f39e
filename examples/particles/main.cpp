// The particle demo as its own program: particles [--n N] [--steps S]
#include "particles.hpp"

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  strata_examples::demo_options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) o.n = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--steps")) o.steps = std::atoi(argv[i + 1]);
  }
  try {
    return strata_examples::run_demo(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "particles: %s\n", e.what());
    return 1;
  }
}
