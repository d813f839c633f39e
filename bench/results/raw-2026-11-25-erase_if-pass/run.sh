#!/usr/bin/env bash
# Device call: erase_if old/new A/B (bench binaries alternated twice, memcpy + erase_if rows),
# the lifecycle tests under memcheck / racecheck / synccheck, then (PART=all) gpu-check.
# h200/, h100/: old = the cuda-preset strata_bench of 4824da8, new = 5355705's; bench/lifecycle.cpp of both
#   zeroed the upper half of the records before each erase_if run (see the results file).
# fixed-h200/, fixed-h100/: bench/lifecycle.cpp with its setup fixed, old = linked against compact.hpp of
#   4824da8, new = the packed build.
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/carry.tar.xz
[ -f .carryz/ab/strata_bench_old ] || { xz -dc .carryz/ab/strata_bench_old.xz > .carryz/ab/strata_bench_old && chmod +x .carryz/ab/strata_bench_old; }
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/ab; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
F='memcpy/d2d|erase_if'
for round in 1 2; do
  for v in old new; do
    b=.carryz/ab/strata_bench_old; [ $v = new ] && b=.carry/bench/strata_bench
    timeout 120 "$b" --benchmark_filter="$F" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/$v-$round.json" --benchmark_out_format=json > "$R/$v-$round.txt" 2>&1
    echo "$v round $round rc $?"; grep -E "median" "$R/$v-$round.txt" | awk '{print "  "$1, $2, $3}'
  done
done
echo "=== lifecycle_test"
timeout 120 .carry/tests/lifecycle_test 2>&1 | tail -3
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .carry/tests/lifecycle_test --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$R/lifecycle-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -2 "$R/lifecycle-$tool.txt"
done
if [ "${PART:-}" = all ]; then
  echo "=== gpu-check"
  STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$OUT/check timeout 380 bash scripts/gpu-check.sh > "$OUT/check.txt" 2>&1
  echo "gpu-check rc $?"; tail -25 "$OUT/check.txt"
  [ -d "$OUT/check/logs" ] && tar -C "$OUT/check" -czf "$OUT/check/logs-partial.tar.gz" logs && rm -rf "$OUT/check/logs"
fi
tar -C "$OUT" -czf "$OUT/ab.tar.gz" ab && rm -rf "$R"
