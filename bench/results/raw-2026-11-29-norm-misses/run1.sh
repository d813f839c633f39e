#!/bin/bash
# Device call 1 (one H200): every plan the chooser weighs, timed (norm_sweep --validate), at the
# widths where the sweep of f7edfc7 misses its target (nvidia-h200-2026-11-29-norm-gamma-kept.md).
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
H=1025,1792,8448,10752,11008,14592,15360,16128,16384,32768,65536,262144
for i in 0 1; do
  timeout 250 .carry/sweep_head --validate --hidden $H --out /tmp/o/validate-$i.json > /tmp/o/validate-$i.txt 2>&1; echo "validate $i rc $?"
done
tar -czf $OUT/call1.tgz -C /tmp/o .
