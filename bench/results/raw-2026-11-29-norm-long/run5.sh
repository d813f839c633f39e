#!/bin/bash
# Device call 5 (one H200): rows held by a block of 1024 threads (the rows kernel's bounds raised to
# 1024 threads, 64 registers) against every plan the library weighs, long_probe looped.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
.carry/long_probe looped > /tmp/o/rows1024-1.md 2>&1
tar -czf $OUT/call5.tgz -C /tmp/o .
cat /tmp/o/rows1024-1.md
