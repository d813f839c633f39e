#!/usr/bin/env bash
# Device call: normalization with load16 / the cache-hint load as volatile asm (this commit) against
# ddc6eb9 (non-volatile), both packed builds in .carryz/ab.tar.xz (.ab/norm_sweep_{old,new},
# .ab/normalize_test). Only the streamed kernels' whole-unit variants differ in SASS (75 of 96
# normalization kernels of tests/sass/probe_kernels.cu are identical), so the sweep covers the
# streamed row lengths plus two row-kernel lengths as a control; old and new alternated twice.
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-}
R=$OUT/vol; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 100 .ab/normalize_test --gtest_brief=1 > "$R/test.txt" 2>&1; echo "test rc $?"; tail -1 "$R/test.txt"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .ab/normalize_test --gtest_brief=1 > "$R/san-memcheck.txt" 2>&1; echo "memcheck rc $?"; tail -1 "$R/san-memcheck.txt"
for round in 1 2; do
  for v in old new; do
    timeout 100 .ab/norm_sweep_$v --hidden 4096,12288,16640,20480,32768,65536,262144 --out "$R/sweep-$v-$round.json" > "$R/sweep-$v-$round.md" 2>&1
    echo "sweep $v $round rc $?"
  done
done
