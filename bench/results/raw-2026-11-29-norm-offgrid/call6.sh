#!/usr/bin/env bash
# Call 6: normalize_test of the change (stacked rows, the choice as committed) on the GPU, and under
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck.
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
/tmp/ab/normalize_test > /tmp/o/normalize_test.txt 2>&1; echo "rc $?" >> /tmp/o/normalize_test.txt
for t in memcheck racecheck initcheck synccheck; do
  timeout 140 compute-sanitizer --tool $t --error-exitcode 1 /tmp/ab/normalize_test > /tmp/o/san-$t.txt 2>&1; echo "rc $?" >> /tmp/o/san-$t.txt
done
tar -czf $OUT/call6.tar.gz -C /tmp/o .
