#!/bin/bash
# Device call 3 (one H200): row plans chosen within 0.95 of the best score (was 0.85) and
# block_rows_kernel reading gamma and beta through row_part::affine (new) against f7edfc7 (head):
# norm_sweep of each alternated twice; normalize_test of new on the GPU.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
H=16640,20480,24576,32768,40960,49152,65536
for i in 0 1; do for b in head new; do
  timeout 100 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
  timeout 60 .carry/sweep_$b --hidden $H --out /tmp/o/long-$b-$i.json > /tmp/o/long-$b-$i.txt 2>&1; echo "long $b $i rc $?"
done; done
.carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "normalize_test rc $?" | tee -a /tmp/o/normalize_test.log
tar -czf $OUT/call3.tgz -C /tmp/o .
