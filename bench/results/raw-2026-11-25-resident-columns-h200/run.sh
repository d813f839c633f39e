#!/usr/bin/env bash
# Device call: erase_if's resident narrow columns (38e346e) on the H200. erase_sweep of
# raw-2026-11-25-erase_if-pass built against compact.hpp of 1f8e56e (old) and of this commit (new,
# same compaction code as 38e346e..ba5c89e), alternated twice in one call.
# Build (repository root), once per version, the old one with -I /tmp/oldinc first holding
# include/strata/algorithm/compact.hpp of 1f8e56e:
#   nvcc [-I /tmp/oldinc] -I include -I . -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr --extended-lambda \
#     --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu \
#     bench/results/raw-2026-11-25-erase_if-pass/erase_sweep.cu -lcuda -o .ab/sweep_{old,new}
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
R=$OUT/sweep; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
for round in 1 2; do
  for v in old new; do
    timeout 120 .ab/sweep_$v > "$R/sweep-$v-$round.txt" 2>&1; echo "sweep $v $round rc $?"
  done
done
python3 bench/results/raw-2026-11-25-resident-columns-h200/table.py "$R"
