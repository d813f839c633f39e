#!/usr/bin/env bash
# Call 1 (one H200): streamed rows whose last statistics item merges the row's moments once (B)
# against 2535f83 (A): every plan weighed at long rows, streamed plans also at longer lags
# (norm_sweep --validate), A B A B at the sweep's long widths and longer; normalize_test of B
# (built here) on the GPU and the streamed and long-row tests under memcheck, racecheck and synccheck (memcheck also the test of every row length).
set -u
start=$SECONDS
mkdir -p /tmp/ab /tmp/o && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > /tmp/o/gpu.txt
(cmake --preset cuda -B /tmp/b > /tmp/o/build.log 2>&1 && cmake --build /tmp/b --target normalize_test -j 8 >> /tmp/o/build.log 2>&1; echo "build rc $?" >> /tmp/o/build.log) &
L=32768,65536,100000,131072,262144,500000,1048576,4194304
/tmp/ab/norm_sweep_b --validate --hidden $L --out /tmp/o/validate-B.json > /tmp/o/validate-B.md 2>&1
/tmp/ab/norm_sweep_a --validate --hidden $L --out /tmp/o/validate-A.json > /tmp/o/validate-A.md 2>&1
echo "validate done $((SECONDS - start)) s"
for i in 1 2; do
  /tmp/ab/norm_sweep_a --hidden $L --out /tmp/o/long-A$i.json > /tmp/o/long-A$i.md 2>&1
  /tmp/ab/norm_sweep_b --hidden $L --out /tmp/o/long-B$i.json > /tmp/o/long-B$i.md 2>&1
done
echo "sweeps done $((SECONDS - start)) s"
wait
tail -2 /tmp/o/build.log
T=/tmp/b/tests/normalize_test
$T > /tmp/o/normalize_test.txt 2>&1; echo "rc $?" >> /tmp/o/normalize_test.txt; tail -3 /tmp/o/normalize_test.txt
for t in memcheck racecheck synccheck; do
  F='*Streamed*:*ManyRows*'; [ $t = memcheck ] && F="$F:*EveryRowLength*"
  timeout 150 compute-sanitizer --tool $t --error-exitcode 1 $T --gtest_filter="$F" > /tmp/o/san-$t.txt 2>&1; echo "rc $?" >> /tmp/o/san-$t.txt; tail -2 /tmp/o/san-$t.txt
done
echo "all done $((SECONDS - start)) s"
tar -czf $OUT/call1.tar.gz -C /tmp/o .
