#!/usr/bin/env bash
# Call 1 (one H200): short rows ending in a partial 16-byte unit stacked in groups too (B, the
# working tree of this call: stacked_rows_kernel's Tail variant) against 2535f83 (A, whose
# short-row code is 1a15bc2's), A B A B at rows of 5-1025 elements ending in a partial unit (and
# whole rows beside them), every plan weighed for B; normalize_test of B (built here) on the GPU and
# the stacked-rows and plan tests under memcheck, racecheck, initcheck and synccheck.
set -u
start=$SECONDS
mkdir -p /tmp/ab /tmp/o && rm -rf /tmp/o/* && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > /tmp/o/gpu.txt
(cmake --preset cuda -B /tmp/b > /tmp/o/build.log 2>&1 && cmake --build /tmp/b --target normalize_test -j 8 >> /tmp/o/build.log 2>&1; echo "build rc $?" >> /tmp/o/build.log) &
S=5,6,7,9,11,12,13,15,17,20,25,31,33,36,50,63,64,65,70,96,99,100,127,128,129,150,193,200,255,256,257,300,500,513,1000,1023,1025,3000,4095,4097,5000
for i in 1 2; do
  /tmp/ab/norm_sweep_a --hidden $S --out /tmp/o/tail-A$i.json > /tmp/o/tail-A$i.md 2>&1
  /tmp/ab/norm_sweep_b --hidden $S --out /tmp/o/tail-B$i.json > /tmp/o/tail-B$i.md 2>&1
done
/tmp/ab/norm_sweep_b --validate --hidden $S --out /tmp/o/validate-B.json > /tmp/o/validate-B.md 2>&1
echo "sweeps done $((SECONDS - start)) s"
wait
tail -2 /tmp/o/build.log
T=/tmp/b/tests/normalize_test
$T > /tmp/o/normalize_test.txt 2>&1; echo "rc $?" >> /tmp/o/normalize_test.txt; tail -3 /tmp/o/normalize_test.txt
for t in memcheck racecheck synccheck initcheck; do
  F='*Stacked*:NormalizePlan*:NormalizeErrors*'; [ $t = memcheck ] && F="$F:*EveryRowLength*"
  timeout 150 compute-sanitizer --tool $t --error-exitcode 1 $T --gtest_filter="$F" > /tmp/o/san-$t.txt 2>&1; echo "rc $?" >> /tmp/o/san-$t.txt; tail -2 /tmp/o/san-$t.txt
done
echo "all done $((SECONDS - start)) s"
tar -czf $OUT/call1.tar.gz -C /tmp/o .
