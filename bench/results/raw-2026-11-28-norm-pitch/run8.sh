#!/bin/bash
# Device call 8 (one H200): norm_sweep of e2df246 with the per-point copy of each input's bytes,
# twice.
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do .carry/norm_sweep --out /tmp/o/sweep-$i.json > /tmp/o/sweep-$i.txt 2>&1; done
tar -czf $OUT/call8.tgz -C /tmp/o .
grep -c "^| " /tmp/o/sweep-0.txt
