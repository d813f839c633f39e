#!/bin/bash
# Device call 12 (one H200): strata::matrix rows of 1 KiB or more on 128-byte boundaries (new)
# against 1f4d82e (base, rows on 16-byte boundaries): the sweep (its inputs are strata::matrix)
# alternated twice each; normalize_test of new on the GPU and under memcheck.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do for b in base new; do
  timeout 60 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
done; done
tar -czf $OUT/call12.tgz -C /tmp/o .
timeout 60 .carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "normalize_test rc $?" | tee -a /tmp/o/normalize_test.log
STRATA_TEST_SANITIZER=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 .carry/normalize_test --gtest_filter='Normalize/*' > /tmp/o/normalize_test-memcheck.log 2>&1
echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' /tmp/o/normalize_test-memcheck.log)"
tar -czf $OUT/call12.tgz -C /tmp/o .
