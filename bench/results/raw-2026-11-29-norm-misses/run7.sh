#!/bin/bash
# Device call 7 (one H200): staged_probe.cu (built from the tree of call 6).
tar -xJf .carry/bins.tar.xz -C .carry
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
timeout 300 .carry/staged_probe > /tmp/o/staged_probe.txt 2>&1; echo "probe rc $?"
cat /tmp/o/staged_probe.txt
tar -czf $OUT/call7.tgz -C /tmp/o .
