#!/usr/bin/env bash
# Device call: the counting pass reads records of narrow leaves in 16-byte vectors (this commit's
# compact.hpp). lifecycle_test on the GPU and under memcheck / racecheck / initcheck (compaction
# tests); erase_sweep of raw-2026-11-25-erase_if-pass built against compact.hpp of 5bd6baa (old) and
# of this commit (new), old, new, old, new.
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-}
R=$OUT/cv; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 120 .ab/lifecycle_test --gtest_brief=1 > "$R/lifecycle.txt" 2>&1; echo "lifecycle rc $?"; tail -1 "$R/lifecycle.txt"
for tool in memcheck racecheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 .ab/lifecycle_test --gtest_brief=1 --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$R/san-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -1 "$R/san-$tool.txt"
done
for v in old new old new; do
  i=1; while [ -e "$R/sweep-$v-$i.txt" ]; do i=$((i+1)); done
  timeout 120 .ab/sweep_$v > "$R/sweep-$v-$i.txt" 2>&1; echo "sweep $v $i rc $?"
done
python3 bench/results/raw-2026-11-25-resident-columns-h200/table.py "$R" | tee "$R/table.txt"
tar -C "$OUT" -czf "$OUT/cv.tar.gz" cv && rm -rf "$R"
