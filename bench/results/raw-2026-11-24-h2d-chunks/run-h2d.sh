#!/usr/bin/env bash
# Host AoS -> device SoA: the committed build (.carry, 32 MiB staging chunks) and a build with 16 MiB chunks (.dev2/ab/strata_bench_16), alternated. Ran unchanged in the three calls of this folder; the 16 MiB build had 2 MiB slices in h200-16MiB-chunks-2MiB-slices/ and 1 MiB slices in the other two.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .carry ] || tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/h2d; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 120 .dev2/ab/convert_test_16 --gtest_brief=1 > "$R/convert_test.txt" 2>&1; echo "convert_test rc $?"; tail -n 2 "$R/convert_test.txt"
for v in 32 16 32 16; do
  b=.carry/bench/strata_bench; [ $v = 16 ] && b=.dev2/ab/strata_bench_16
  i=1; while [ -e "$R/chunk$v-$i.json" ]; do i=$((i+1)); done
  timeout 120 $b --benchmark_filter='host_aos_to_device_soa' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$R/chunk$v-$i.json" --benchmark_out_format=json > "$R/chunk$v-$i.txt" 2>&1
  echo "chunk $v MiB run $i rc $?"; grep -E "median" "$R/chunk$v-$i.txt" | awk '{print "  "$1, $2, $3, $4, $5, $6, $7, $8}'
done
tar -C "$OUT" -czf "$OUT/h2d.tar.gz" h2d && rm -rf "$R"
