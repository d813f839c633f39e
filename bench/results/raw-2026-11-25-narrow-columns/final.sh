#!/usr/bin/env bash
# Final checks of the session's code on one GPU: the CUDA build of the fresh-clone CI run, packed with
# scripts/pack-gpu-build.sh. Every test binary directly (120 s timeout each), then gpu-check's
# sanitizer and demo stages (STRATA_SKIP=tests,torch,bench).
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/tests"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pass=0; fail=0; cases=0
for t in .carry/tests/*_test; do
  timeout 120 "$t" > "$OUT/tests/$(basename "$t").log" 2>&1; rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAILED $(basename "$t") rc $rc"; fi
  c=$(grep -o "PASSED  \] [0-9]*" "$OUT/tests/$(basename "$t").log" | grep -o "[0-9]*$"); cases=$((cases+${c:-0}))
done
echo "test binaries: $pass passed, $fail failed; cases passed: $cases"
tar -C "$OUT" -czf "$OUT/tests-logs.tgz" tests && rm -rf "$OUT/tests"
STRATA_PREBUILT=.carry STRATA_SKIP=tests,torch,bench OUT=$OUT/check timeout 420 bash scripts/gpu-check.sh > "$OUT/sanitize-demo-check.txt" 2>&1
echo "gpu-check rc $?"; tail -12 "$OUT/sanitize-demo-check.txt"
[ -d "$OUT/check" ] && tar -C "$OUT" -czf "$OUT/sanitize-logs.tar.gz" check && rm -rf "$OUT/check"
