#!/usr/bin/env bash
# Small-launch latency before / after strata's per-call kernels go to the driver with a function
# handle cached per context: transform_latency from the packed build of this commit (after) and of
# 59f579b (before; the same transform code as 968fbe1; .carry/bench/strata_bench_before),
# alternated three times, then, where CHECK=1,
# scripts/gpu-check.sh (every test binary on the GPU, four compute-sanitizer tools, demos).
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .carry && tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/launch; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
for i in 1 2 3; do
  for side in before after; do
    bin=.carry/bench/strata_bench; [ $side = before ] && bin=.carry/bench/strata_bench_before
    timeout 120 $bin --benchmark_filter='transform_latency' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/latency-$i-$side.json" --benchmark_out_format=json > "$R/latency-$i-$side.txt" 2>&1
    echo "$side $i rc $?"
  done
done
grep -E "median" "$R/latency-3-after.txt" | awk '{print "  "$1, $2, $3}'
if [ "${CHECK:-0}" = 1 ]; then
  STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$R/check timeout 420 bash scripts/gpu-check.sh > "$R/check.txt" 2>&1
  echo "gpu-check rc $?"; tail -14 "$R/check.txt"
fi
tar -C "$OUT" -czf "$OUT/launch.tar.gz" launch && rm -rf "$R"
