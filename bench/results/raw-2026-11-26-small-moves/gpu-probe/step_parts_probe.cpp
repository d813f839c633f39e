// Which part of the demo step without migrate slows with the GPU count: strata's distributed
// transform (kick-drift) alone, transform_reduce_sum (the energy) alone, and the two as the
// benchmark's step runs them (energy every 10th step), 2^26 particles per GPU, 1..N GPUs.
// Built with the flags of bench/distributed.cpp (nvcc -x cu, -I include -I examples, NCCL linked).
#include <strata/distributed/distributed_vector.hpp>
#include "particles/distributed.hpp"

#include <chrono>
#include <cstdio>

namespace dist = strata::distributed;
using strata_examples::particle;
static double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main() {
  int gpus = 0;
  cudaGetDeviceCount(&gpus);
  const std::size_t n = std::size_t(1) << 26;
  const strata_examples::kick_drift f{1e-3f, 1e-3f};
  const strata_examples::total_energy energy{1.0f};
  for (int rep = 0; rep < 2; ++rep)
    for (int g = 1; g <= gpus; ++g) {
      dist::communicator comm = dist::communicator::local(g);
      dist::distributed_soa_vector<particle> d(comm);
      d.scatter(std::vector<particle>(n * std::size_t(g), particle{0.1f, 0.2f, 0.3f, 0.01f, 0.02f, 0.03f, 1.0f}));
      for (int w = 0; w < 3; ++w) d.transform(f), (void)d.transform_reduce_sum<double>(energy);
      comm.synchronize_all();
      double t0 = wall();
      for (int s = 0; s < 30; ++s) d.transform(f);
      comm.synchronize_all();
      const double transform_ms = (wall() - t0) / 30 * 1e3;
      t0 = wall();
      for (int s = 0; s < 10; ++s) (void)d.transform_reduce_sum<double>(energy);
      const double reduce_ms = (wall() - t0) / 10 * 1e3;
      t0 = wall();
      for (int s = 0; s < 30; ++s) {
        d.transform(f);
        if ((s + 1) % 10 == 0) (void)d.transform_reduce_sum<double>(energy);
      }
      comm.synchronize_all();
      const double step_ms = (wall() - t0) / 30 * 1e3;
      std::printf("rep %d gpus %d: transform %.4f ms/step, transform_reduce_sum %.4f ms/call, step (energy every 10th) %.4f ms\n", rep, g,
                  transform_ms, reduce_ms, step_ms);
    }
}
