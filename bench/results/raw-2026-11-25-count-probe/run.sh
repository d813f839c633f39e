#!/usr/bin/env bash
# Device call: count_probe (built as its header says) in .carryz/ab.tar.xz, run twice.
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
mkdir -p "$OUT/probe"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/probe/gpu.txt"
for i in 1 2; do timeout 150 .ab/count_probe > "$OUT/probe/probe-$i.txt" 2>&1; echo "rc $?"; done
cat "$OUT/probe/probe-1.txt"
