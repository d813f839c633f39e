#!/usr/bin/env bash
# Variants C (launch bounds on both kernels) and D (streamed only), both with layer-norm warps merged
# for fp32 groups of several warps and two sums for 16-bit rows, against the committed kernels.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .carry ] || tar -xJf .carryz/carry.tar.xz
mkdir -p .dev2/n && tar -xJf .dev2/norm3.tar.xz -C .dev2/n
export LD_LIBRARY_PATH=$PWD/.carry/lib:$PWD/.dev2/n:${LD_LIBRARY_PATH:-}
R=$OUT/norm3; mkdir -p "$R"
N=.dev2/n
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 60 $N/normalize_test --gtest_brief=1 > "$R/test.txt" 2>&1; echo "test rc $?"; tail -n 2 "$R/test.txt"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $N/normalize_test --gtest_brief=1 > "$R/san-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -n 1 "$R/san-$tool.txt"
done
for v in old C D old D C; do
  b=$N/norm_sweep_$v; [ $v = old ] && b=.carry/bench/norm_sweep
  i=1; while [ -e "$R/sweep-$v-$i.json" ]; do i=$((i+1)); done
  timeout 120 $b --out "$R/sweep-$v-$i.json" > /dev/null 2>&1; echo "sweep $v rc $?"
done
timeout 60 $N/norm_sweep_C --validate --out "$R/validate-C.json" > "$R/validate-C.md" 2>&1; echo "validate rc $?"
timeout 300 python3 bench/layer_norm_torch.py --library $N/libstrata_norm.so --out "$R/torch.json" --sweep coarse > "$R/torch.txt" 2>&1
echo "torch rc $?"; tail -n 3 "$R/torch.txt"
tar -C "$OUT" -czf "$OUT/norm3.tar.gz" norm3 && rm -rf "$R"
