#!/bin/bash
# Device call 4 (one H200): affine_probe.cu (built at 939a830): what gamma and beta cost long rows.
tar -xJf .carry/bins.tar.xz -C .carry
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
timeout 300 .carry/affine_probe > /tmp/o/affine_probe.txt 2>&1; echo "probe rc $?"
cat /tmp/o/affine_probe.txt
tar -czf $OUT/call4.tgz -C /tmp/o .
