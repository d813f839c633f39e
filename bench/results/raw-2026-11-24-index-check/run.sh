#!/usr/bin/env bash
# Checks of this commit's packed CUDA build on one GPU. PART=check: scripts/gpu-check.sh (every test
# binary, four compute-sanitizer tools, demos). PART=bench: transform_latency three times (a
# caller's stream now checked with one driver query), then permute / gather with every index
# checked (memcpy row in the same run). PART=latency: transform_latency three times and the
# interleaved probe (.carryz/probe/stream_launch_probe, built from
# raw-2026-11-24-stream-check/stream_launch_probe.cu) twice.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .carry && tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/run; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
B=.carry/bench/strata_bench
if [ "${PART:-check}" = latency ]; then
  for i in 1 2 3; do
    timeout 120 $B --benchmark_filter='transform_latency' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/latency-$i.json" --benchmark_out_format=json > "$R/latency-$i.txt" 2>&1
    echo "latency $i rc $?"
  done
  for i in 1 2; do .carryz/probe/stream_launch_probe; echo ---; done > "$R/probe.txt" 2>&1
  grep "strata / hand" "$R/probe.txt"
elif [ "${PART:-check}" = bench ]; then
  for i in 1 2 3; do
    timeout 120 $B --benchmark_filter='transform_latency' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/latency-$i.json" --benchmark_out_format=json > "$R/latency-$i.txt" 2>&1
    echo "latency $i rc $?"
  done
  timeout 240 $B --benchmark_filter='memcpy/d2d|permute|gather' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$R/gather.json" --benchmark_out_format=json > "$R/gather.txt" 2>&1
  echo "gather rc $?"
  grep -E "median" "$R/gather.txt" | awk '{print "  "$1, $2}'
else
  STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$R/check timeout 500 bash scripts/gpu-check.sh > "$R/check.txt" 2>&1
  echo "gpu-check rc $?"; tail -14 "$R/check.txt"
fi
