#!/usr/bin/env bash
# The committed code, packed build: gather / permute benchmarks first (quiet GPU), then, where
# CHECK=1, scripts/gpu-check.sh (every test binary on the GPU, four compute-sanitizer tools, demos).
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .carry && tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/final; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 200 .carry/bench/strata_bench --benchmark_filter='memcpy/d2d|permute|gather' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$R/gather.json" --benchmark_out_format=json > "$R/gather.txt" 2>&1
echo "bench rc $?"; grep -E "median" "$R/gather.txt" | awk '{print "  "$1, $2, $3}'
if [ "${CHECK:-0}" = 1 ]; then
  STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$R/check timeout 420 bash scripts/gpu-check.sh > "$R/check.txt" 2>&1
  echo "gpu-check rc $?"; tail -14 "$R/check.txt"
fi
tar -C "$OUT" -czf "$OUT/final.tar.gz" final && rm -rf "$R"
