#!/usr/bin/env bash
# H100: erase_if old/new A/B, then ncu of the new counting and writing kernels.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/ab; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
F='memcpy/d2d|erase_if'
for round in 1 2; do
  for v in old new; do
    b=.dev2/ab/strata_bench_old; [ $v = new ] && b=.carry/bench/strata_bench
    timeout 100 "$b" --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$R/$v-$round.json" --benchmark_out_format=json > "$R/$v-$round.txt" 2>&1
    echo "$v round $round rc $?"; grep -E "median" "$R/$v-$round.txt" | awk '{print "  "$1, $2, $3}'
  done
done
timeout 200 ncu --set full -k regex:'compact' -c 2 -o "$R/ncu-erase" .carry/bench/strata_bench --benchmark_filter='erase_if/strata/' > "$R/ncu-run.txt" 2>&1
echo "ncu rc $?"
ncu --import "$R/ncu-erase.ncu-rep" --page details --print-units base > "$R/ncu-erase.txt" 2>&1
grep -E "compact|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Block Limit|Compute \(SM\) Throughput|L1/TEX Hit|L2 Hit|Excessive|One or More|Warp Cycles Per Issued" "$R/ncu-erase.txt" | head -60
rm -f "$R/ncu-erase.ncu-rep"
tar -C "$OUT" -czf "$OUT/ab.tar.gz" ab && rm -rf "$R"
