#!/bin/bash
# Device call 2 (one H200): every plan the chooser weighs, timed at all 296 sweep points
# (norm_sweep --validate), twice, with f7edfc7's build: the data the plan rule is checked against.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do
  t0=$(date +%s)
  timeout 280 .carry/sweep_head --validate --out /tmp/o/validate-all-$i.json > /tmp/o/validate-all-$i.txt 2>&1; echo "validate $i rc $? $(( $(date +%s) - t0 )) s"
done
tar -czf $OUT/call2.tgz -C /tmp/o .
