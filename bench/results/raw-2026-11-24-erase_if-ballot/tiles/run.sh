#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/var; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
F='memcpy/d2d|erase_if/strata/'
for round in 1 2; do
  for v in new a b; do
    b=.dev2/ab/strata_bench_$v; [ $v = new ] && b=.carry/bench/strata_bench
    timeout 60 "$b" --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/$v-$round.json" --benchmark_out_format=json > "$R/$v-$round.txt" 2>&1
    echo "$v round $round rc $?"; grep -E "median" "$R/$v-$round.txt" | awk '{print "  "$1, $2, $3}'
  done
done
tar -C "$OUT" -czf "$OUT/var.tar.gz" var && rm -rf "$R"
