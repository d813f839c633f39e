// SPDX-License-Identifier: Apache-2.0
// The particle demo's command-line options (CLI11), shared by the `particles` program and
// `strata demo`: values are checked as they are parsed, so `--n abc` or `--steps -1` stop with a
// message instead of running with a default.
#pragma once

#include "particles.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace strata_examples {

/// A CLI11 check that the value is a whole number of at least `least` (CLI11's PositiveNumber
/// would name the range of a double in its message).
inline CLI::Validator whole_number(long long least) {
  const std::string want = "a whole number >= " + std::to_string(least);
  return CLI::Validator(
      [least, want](std::string& s) -> std::string {
        long long v = 0;
        const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
        return err == std::errc{} && end == s.data() + s.size() && v >= least ? std::string{} : want + ", not '" + s + "'";
      },
      ">= " + std::to_string(least));
}

inline void add_demo_options(CLI::App& app, demo_options& o) {
  app.add_option("--n", o.n, "particles (default 2^26 on a GPU, 2^20 on the host backend; with --gpus 2^24 / 2^18)")
      ->check(whole_number(1));
  app.add_option("--steps", o.steps, "time steps (default 100 on a GPU, 20 on the host backend)")->check(whole_number(1));
  app.add_option("--energy-every", o.energy_every, "reduce the total energy every K steps (0: at the start and end only)")
      ->check(whole_number(0))
      ->capture_default_str();
  app.add_option("--sort-every", o.sort_every,
                 "every M steps remove the particles that left the box, inject as many and re-sort by cell (default: steps / 2)")
      ->check(whole_number(1));
  app.add_option("--gpus", o.gpus,
                 "run on G ranks, the box cut into G slabs along x (one GPU each through NCCL; the host backend's stand-in "
                 "runs them in this process)")
      ->check(whole_number(1));
#if defined(STRATA_DEMO_HDF5)
  app.add_option("--checkpoint", o.checkpoint,
                 "write the ranks' particles to this HDF5 file every --checkpoint-every steps (strata::io), restart from the first "
                 "checkpoint and check the restarted run ends bit for bit where the uninterrupted one did (implies --gpus 1)");
  app.add_option("--checkpoint-every", o.checkpoint_every, "steps between checkpoints (default: steps / 2)")->check(whole_number(1));
#endif
}

}  // namespace strata_examples
