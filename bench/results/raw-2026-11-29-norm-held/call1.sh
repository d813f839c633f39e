#!/usr/bin/env bash
# Call 1, one H200: held_probe built on the workstation (nvcc 13.0, sm_90) and carried, run twice.
set -u
for i in 1 2; do timeout 250 .carry/held_probe > "$OUT/held-$i.md" 2>&1; echo "run $i rc $?"; done
cat "$OUT/held-1.md"
