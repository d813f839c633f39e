#!/bin/bash
# Device call 8 (one H200; call 9: the same with the write pass forming addresses per unit from the row pointers): norm_sweep of the change (row_part's addresses from one pointer and
# 32-bit offsets) and of 8852e54, alternated twice.
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do for b in base new; do
  timeout 280 .carry/sweep_$b --out /tmp/o/sweep-$b-$i.json > /tmp/o/sweep-$b-$i.txt 2>&1; echo "$b $i rc $?"
  tar -czf $OUT/call$CALL.tgz -C /tmp/o .
done; done
