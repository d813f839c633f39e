#!/usr/bin/env bash
# Final check of the committed code: lifecycle benchmarks first (quiet GPU), then gpu-check tests,
# compute-sanitizer and the demos.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/final; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 150 .carry/bench/strata_bench --benchmark_filter='memcpy/d2d|erase_if|permute|sort_by_key' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$R/lifecycle.json" --benchmark_out_format=json > "$R/lifecycle.txt" 2>&1
echo "bench rc $?"; grep -E "median" "$R/lifecycle.txt" | awk '{print "  "$1, $2, $3}'
STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$R/check timeout 380 bash scripts/gpu-check.sh > "$R/check.txt" 2>&1
echo "gpu-check rc $?"; tail -14 "$R/check.txt"
tar -C "$OUT" -czf "$OUT/final.tar.gz" final && rm -rf "$R"
