#!/bin/bash
# Device call 5 (one H200): merge_probe.cu (built at 939a830).
tar -xJf .carry/bins.tar.xz -C .carry
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
timeout 300 .carry/merge_probe > /tmp/o/merge_probe.txt 2>&1; echo "probe rc $?"
cat /tmp/o/merge_probe.txt
tar -czf $OUT/call5.tgz -C /tmp/o .
