#!/bin/bash
# Device call 13 (one H200): block_rows_kernel (rows of whole units, a block of up to 1024 threads
# per row) against 8852e54: norm_sweep of each, alternated twice; normalize_test of the change on
# the GPU and under compute-sanitizer memcheck, initcheck and racecheck; torch.compile at the long rows.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do for b in base new; do
  timeout 200 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
done; done
tar -czf $OUT/call13.tgz -C /tmp/o .
.carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "rc $?" >> /tmp/o/normalize_test.log
for tool in memcheck initcheck racecheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool .carry/normalize_test > /tmp/o/normalize_test-$tool.log 2>&1
  echo "rc $?" >> /tmp/o/normalize_test-$tool.log
done
tar -czf $OUT/call13.tgz -C /tmp/o .
timeout 150 python3 $P/inductor_probe.py > /tmp/o/torch-time-3.md 2>&1
tar -czf $OUT/call13.tgz -C /tmp/o .
tail -n 2 /tmp/o/normalize_test*.log
