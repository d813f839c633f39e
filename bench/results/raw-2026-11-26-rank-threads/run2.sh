#!/usr/bin/env bash
# Call 2, 2 x H200: where migrate's host time goes after the wait for the counts. The binary of
# call 1 with host timestamps between migrate's steps (trace2.diff; medians per rank over the
# scaling benchmark's calls), twice, and NCCL_LAUNCH_MODE=GROUP once for comparison.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
for i in 1 2; do
  timeout 75 .carry/bench/distributed_bench.trace2 --out "$R/trace$i.json" >"$R/trace$i.md" 2>"$R/trace$i.txt"; echo "trace rc $?"; cat "$R/trace$i.txt"; grep -A4 "step ms" "$R/trace$i.md" | tail -2
done
NCCL_LAUNCH_MODE=GROUP timeout 75 .carry/bench/distributed_bench.trace2 --out "$R/trace-group.json" >"$R/trace-group.md" 2>"$R/trace-group.txt"; echo "trace group rc $?"; cat "$R/trace-group.txt"; grep -A4 "step ms" "$R/trace-group.md" | tail -2
tar -czf "$OUT/results.tar.gz" -C "$OUT" r
