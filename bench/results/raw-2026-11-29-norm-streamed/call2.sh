#!/usr/bin/env bash
# Call 2 (one H200): streamed rows of more chunks than an eighth of the grid take a lag of their
# chunks and the grid (B) against 2535f83 (A), A B A B three times at long rows, every plan
# weighed for B; normalize_test of B (built here: the streamed test with forced plans) on the GPU
# and under memcheck, racecheck and synccheck.
set -u
start=$SECONDS
mkdir -p /tmp/ab /tmp/o && rm -rf /tmp/o/* && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > /tmp/o/gpu.txt
(cmake --preset cuda -B /tmp/b > /tmp/o/build.log 2>&1 && cmake --build /tmp/b --target normalize_test -j 8 >> /tmp/o/build.log 2>&1; echo "build rc $?" >> /tmp/o/build.log) &
L=262144,400000,500000,600000,750000,1048576,1500000,2097152,4194304
for i in 1 2 3; do
  /tmp/ab/norm_sweep_a --hidden $L --out /tmp/o/long-A$i.json > /tmp/o/long-A$i.md 2>&1
  /tmp/ab/norm_sweep_b --hidden $L --out /tmp/o/long-B$i.json > /tmp/o/long-B$i.md 2>&1
done
/tmp/ab/norm_sweep_b --validate --hidden $L --out /tmp/o/validate-B.json > /tmp/o/validate-B.md 2>&1
echo "sweeps done $((SECONDS - start)) s"
wait
tail -2 /tmp/o/build.log
T=/tmp/b/tests/normalize_test
$T > /tmp/o/normalize_test.txt 2>&1; echo "rc $?" >> /tmp/o/normalize_test.txt; tail -3 /tmp/o/normalize_test.txt
for t in memcheck racecheck synccheck initcheck; do
  F='*Streamed*:*ManyRows*'; [ $t = memcheck ] && F="$F:*EveryRowLength*"
  timeout 150 compute-sanitizer --tool $t --error-exitcode 1 $T --gtest_filter="$F" > /tmp/o/san-$t.txt 2>&1; echo "rc $?" >> /tmp/o/san-$t.txt; tail -2 /tmp/o/san-$t.txt
done
echo "all done $((SECONDS - start)) s"
tar -czf $OUT/call2.tar.gz -C /tmp/o .
