#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d .carry ] || tar -xJf .carryz/carry.tar.xz
mkdir -p .dev2/n && tar -xJf .dev2/norm.tar.xz -C .dev2/n
export LD_LIBRARY_PATH=$PWD/.carry/lib:$PWD/.dev2/n:${LD_LIBRARY_PATH:-}
R=$OUT/norm2; mkdir -p "$R"
N=.dev2/n
for v in old A B old B A; do
  b=$N/norm_sweep_$v; [ $v = old ] && b=.carry/bench/norm_sweep
  i=1; while [ -e "$R/sweep-$v-$i.json" ]; do i=$((i+1)); done
  timeout 120 $b --out "$R/sweep-$v-$i.json" > /dev/null 2>&1; echo "sweep $v rc $?"
done
tar -C "$OUT" -czf "$OUT/norm2.tar.gz" norm2 && rm -rf "$R"
