#!/usr/bin/env bash
# Device call (one H200): the new CUDA test binaries on the GPU and under compute-sanitizer, then
# the conversion rows of strata_bench, HEAD's binary (old) and this change's (new) alternating
# twice. Binaries come packed in .carryz/block-tile.tar.xz (old/strata_bench, new/*).
set -u
tar -xJf .carryz/block-tile.tar.xz -C /tmp
N=/tmp/bt-pack/new O=/tmp/bt-pack/old
export LD_LIBRARY_PATH=/tmp/bt-pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # the build machine's libbenchmark
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
# The first call ran everything but lacked libbenchmark (no JSON came back); the second ran the
# benchmark part alone (ONLY_BENCH=1).
if [ -z "${ONLY_BENCH:-}" ]; then
  for t in convert_test random_records_test lifecycle_test; do
    echo "== $t"; $N/$t 2>&1 | tail -4
  done > $OUT/tests.txt 2>&1
  compute-sanitizer --tool memcheck --error-exitcode 9 $N/convert_test > $OUT/san-memcheck.txt 2>&1; echo "memcheck rc=$?" >> $OUT/tests.txt
  compute-sanitizer --tool racecheck --error-exitcode 9 $N/convert_test --gtest_filter='Convert/7.*:Convert/8.*:Convert/9.*' > $OUT/san-racecheck.txt 2>&1; echo "racecheck rc=$?" >> $OUT/tests.txt
fi
F='memcpy/d2d|aos_to_soa|soa_to_aos'
for r in 1 2; do
  $O/strata_bench --benchmark_filter="$F" --benchmark_out=$OUT/old-$r.json --benchmark_out_format=json > /dev/null 2>&1
  $N/strata_bench --benchmark_filter="$F" --benchmark_out=$OUT/new-$r.json --benchmark_out_format=json > /dev/null 2>&1
done
ls $OUT
