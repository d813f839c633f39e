#!/bin/bash
# Device call 20 (one H200): gamma and beta read with L1 and L2 evict_last hints (load_kept) in every row
# kernel, against 44bb5d4 (base here): norm_sweep of
# each alternated twice, then both at rows of 16640-65536 elements (--hidden) twice; normalize_test
# of the change on the GPU and under compute-sanitizer memcheck, initcheck and racecheck.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
H=16640,18000,20480,24576,28672,32768,36864,40960,49152,57344,65536
for i in 0 1; do for b in base new; do
  timeout 200 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
done; done
for i in 0 1; do for b in base new; do
  timeout 100 .carry/sweep_$b --hidden $H --out /tmp/o/long-$b-$i.json > /tmp/o/long-$b-$i.txt 2>&1; echo "long $b $i rc $?"
done; done
tar -czf $OUT/call20.tgz -C /tmp/o .
.carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "rc $?" >> /tmp/o/normalize_test.log
for tool in memcheck initcheck racecheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool .carry/normalize_test > /tmp/o/normalize_test-$tool.log 2>&1
  echo "rc $?" >> /tmp/o/normalize_test-$tool.log
done
tar -czf $OUT/call20.tgz -C /tmp/o .
tail -n 2 /tmp/o/normalize_test*.log
