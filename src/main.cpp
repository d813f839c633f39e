// SPDX-License-Identifier: Apache-2.0
// The strata driver: `strata demo` runs the particle demo, `strata describe` prints the layouts
// strata derives for the demo's records, `strata bench` runs the benchmarks (strata_bench, built
// beside this program) with the arguments that follow. `strata --help` says the same.
#include "particles/options.hpp"
#if defined(STRATA_DEMO_DISTRIBUTED)
#include "particles/distributed.hpp"
#endif

#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

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

namespace fs = std::filesystem;

/// strata_bench of this build (its bench/ folder beside src/), run with args in this process's place.
/// Where it is not built, says the command that builds it.
int run_bench(const char* argv0, const std::vector<std::string>& args) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);  // also right when strata was found on PATH
  if (ec) self = fs::absolute(argv0);
  const fs::path build = self.parent_path().parent_path(), bench = build / "bench" / "strata_bench";
  if (!fs::exists(bench)) {
#if STRATA_BENCH_CONFIGURED
    std::fprintf(stderr, "strata bench: the benchmarks are not built yet (no %s). Build them, then run strata bench again:\n"
                 "  cmake --build %s --target strata_bench\n", bench.c_str(), build.c_str());
#else
    std::fprintf(stderr, "strata bench: this build was configured without the benchmarks. Configure and build them, then run "
                 "strata bench again:\n  cmake -S %s -B %s -DSTRATA_BUILD_BENCH=ON && cmake --build %s --target strata_bench\n",
                 STRATA_SOURCE_DIR, build.c_str(), build.c_str());
#endif
    return 1;
  }
  std::vector<char*> bench_argv{const_cast<char*>(bench.c_str())};
  for (const auto& a : args) bench_argv.push_back(const_cast<char*>(a.c_str()));
  bench_argv.push_back(nullptr);
  execv(bench.c_str(), bench_argv.data());
  std::perror(("strata bench: cannot run " + bench.string()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"strata: structured GPU data. Runs the particle demo (the default), describes the layouts strata derives "
               "for records, runs the benchmarks."};
  app.require_subcommand(0, 1);
  strata_examples::demo_options o;
  CLI::App* demo = app.add_subcommand("demo", "the particle demo: the same steps in four layouts, their times, whether they agree");
  strata_examples::add_demo_options(*demo, o);
  CLI::App* describe_cmd = app.add_subcommand("describe", "the leaves, sizes and packets strata derives for the demo's records");
  CLI::App* bench_cmd = app.add_subcommand("bench", "the benchmarks (strata_bench); what follows goes to it (strata bench --help lists "
                                                "Google Benchmark's flags)");
  bench_cmd->prefix_command();
  bench_cmd->set_help_flag();  // --help after `bench` is strata_bench's
  CLI11_PARSE(app, argc, argv);

  if (*bench_cmd) return run_bench(argv[0], bench_cmd->remaining());
  if (*describe_cmd) {
    describe<strata_examples::particle>("particle");
    describe<mixed>("mixed");
    describe<nested_particle>("nested_particle");
    return 0;
  }
  describe<strata_examples::particle>("particle");
  std::puts("");
  try {
    return strata_examples::run_demo(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata demo: %s\n", e.what());
    return 1;
  }
}
