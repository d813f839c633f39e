#!/bin/bash
# Device call 11 (one H200): tail_probe.cu (built at 1f4d82e).
tar -xJf .carry/bins.tar.xz -C .carry
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
timeout 200 .carry/tail_probe > /tmp/o/tail_probe.txt 2>&1; echo "probe rc $?"
cat /tmp/o/tail_probe.txt
tar -czf $OUT/call11.tgz -C /tmp/o .
