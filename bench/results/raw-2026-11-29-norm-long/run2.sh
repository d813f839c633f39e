#!/bin/bash
# Device call 2 (one H200): long_probe looped: the library's plan against looped plans.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
.carry/long_probe looped > /tmp/o/looped-1.md 2>&1
tar -czf $OUT/call2.tgz -C /tmp/o .
cat /tmp/o/looped-1.md
