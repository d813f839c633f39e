#!/bin/bash
# Device call 6 (one H200): block_rows_kernel with 16-bit statistics merged at one barrier and
# gamma / beta staged in shared memory by a wave of blocks that each normalize several rows (new)
# against 939a830 (base): the sweep alternated twice each, rows of 16640-65536 twice each;
# normalize_test of new on the GPU and under memcheck and racecheck.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
H=16640,20480,24576,28672,32768,36864,40960,49152,57344,65536
for i in 0 1; do for b in base new; do
  timeout 100 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
  timeout 60 .carry/sweep_$b --hidden $H --out /tmp/o/long-$b-$i.json > /tmp/o/long-$b-$i.txt 2>&1; echo "long $b $i rc $?"
done; done
tar -czf $OUT/call6.tgz -C /tmp/o .
.carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "normalize_test rc $?" | tee -a /tmp/o/normalize_test.log
for tool in memcheck racecheck; do
  STRATA_TEST_SANITIZER=1 timeout 170 compute-sanitizer --tool $tool --error-exitcode 3 .carry/normalize_test --gtest_filter='Normalize/*' > /tmp/o/normalize_test-$tool.log 2>&1
  echo "$tool rc $? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/o/normalize_test-$tool.log)"
done
tar -czf $OUT/call6.tgz -C /tmp/o .
