#!/usr/bin/env bash
# Device call 3 (h200/call3): the refactor of load_rounds (narrow_columns, compact_stages_column;
# behaviour and registers unchanged): lifecycle_test on the GPU, memcheck and racecheck on the
# compaction tests, and one erase_sweep against the refactored compact.hpp.
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
R=$OUT/call3; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 150 .ab/lifecycle_test > "$R/lifecycle.txt" 2>&1; echo "lifecycle rc $?"; tail -n2 "$R/lifecycle.txt"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .ab/lifecycle_test --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$R/lifecycle-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -n1 "$R/lifecycle-$tool.txt"
done
timeout 150 .ab/sweep_new > "$R/sweep-new.txt" 2>&1; echo "sweep rc $?"; cat "$R/sweep-new.txt"
