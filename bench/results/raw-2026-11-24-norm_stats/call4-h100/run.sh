#!/usr/bin/env bash
# The adopted normalization kernels (E, a938f17) against the committed ones (9705f81) on an H100.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .carry ] || tar -xJf .carryz/carry.tar.xz
mkdir -p .dev2/n && tar -xJf .dev2/norm4.tar.xz -C .dev2/n
export LD_LIBRARY_PATH=$PWD/.carry/lib:$PWD/.dev2/n:${LD_LIBRARY_PATH:-}
R=$OUT/norm5; mkdir -p "$R"
N=.dev2/n
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 60 $N/normalize_test --gtest_brief=1 > "$R/test.txt" 2>&1; echo "test rc $?"; tail -n 2 "$R/test.txt"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $N/normalize_test --gtest_brief=1 > "$R/san-memcheck.txt" 2>&1
echo "memcheck rc $?"; tail -n 1 "$R/san-memcheck.txt"
for v in old E old E; do
  b=$N/norm_sweep_$v; [ $v = old ] && b=.carry/bench/norm_sweep
  i=1; while [ -e "$R/sweep-$v-$i.json" ]; do i=$((i+1)); done
  timeout 120 $b --out "$R/sweep-$v-$i.json" > /dev/null 2>&1; echo "sweep $v rc $?"
done
timeout 60 $N/norm_sweep_E --validate --out "$R/validate-E.json" > "$R/validate-E.md" 2>&1; echo "validate rc $?"
tar -C "$OUT" -czf "$OUT/norm5.tar.gz" norm5 && rm -rf "$R"
