#!/bin/bash
# Device call 21 (one H200): f7edfc7's norm_sweep at rows of 16384-262144 elements beside
# torch.compile's layer and RMS norm at the same shapes (inductor_probe.py), one call, twice each.
tar -xJf .carry/bins.tar.xz -C .carry
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
python3 -c "import torch; print(torch.__version__)" > /tmp/o/torch-version.txt 2>&1
for i in 0 1; do
  timeout 100 .carry/sweep_new --hidden 16384,32768,65536,262144 --out /tmp/o/long4-new-$i.json > /tmp/o/long4-new-$i.txt 2>&1; echo "sweep $i rc $?"
  timeout 200 python3 $P/inductor_probe.py > /tmp/o/torch-time-$i.md 2>&1; echo "torch $i rc $?"
done
tar -czf $OUT/call21.tgz -C /tmp/o .
