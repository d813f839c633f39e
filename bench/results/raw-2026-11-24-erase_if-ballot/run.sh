#!/usr/bin/env bash
# Device call: erase_if old/new A/B (bench binaries alternated), then gpu-check tests, sanitizers, demo.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/ab; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
# sanity: both binaries list the rows
F='memcpy/d2d|erase_if'
for round in 1 2; do
  for v in old new; do
    b=.dev2/ab/strata_bench_old; [ $v = new ] && b=.carry/bench/strata_bench
    timeout 100 "$b" --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/$v-$round.json" --benchmark_out_format=json > "$R/$v-$round.txt" 2>&1
    echo "$v round $round rc $?"; grep -E "median" "$R/$v-$round.txt" | awk '{print "  "$1, $2, $3}'
  done
done
echo "=== gpu-check"
STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$OUT/check timeout 380 bash scripts/gpu-check.sh > "$OUT/check.txt" 2>&1
echo "gpu-check rc $?"; tail -25 "$OUT/check.txt"
[ -d "$OUT/check/logs" ] && tar -C "$OUT/check" -czf "$OUT/check/logs-partial.tar.gz" logs && rm -rf "$OUT/check/logs"
tar -C "$OUT" -czf "$OUT/ab.tar.gz" ab && rm -rf "$R"
