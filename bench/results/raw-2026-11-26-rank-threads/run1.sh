#!/usr/bin/env bash
# Call 1, 2 x H200: migrate with every rank's part (its NCCL group included) on the rank's own
# thread. Binaries built on the workstation (.carryz/carry.tar.xz): the 22 test binaries of
# b50b39d plus distributed_test, distributed_bench and the demo of this change; the old
# distributed_bench and demo (b50b39d) for A/B; distributed_bench.trace, this change with host
# timestamps around migrate's steps (trace.diff). gpu-check's test and demo stages, then the
# benchmarks alternated new/old, then the trace. Results re-tarred after each step.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
STRATA_PREBUILT=.carry STRATA_SKIP=build,sanitize,torch,bench OUT="$R/check" timeout 200 bash scripts/gpu-check.sh >"$R/check.txt" 2>&1
echo "gpu-check rc $?"; tail -8 "$R/check.txt"
save
for v in new old new old; do
  b=.carry/bench/distributed_bench; [ $v = old ] && b=.carry/bench/distributed_bench.old
  timeout 75 $b --out "$R/bench-$v-$SECONDS.json" >"$R/bench-$v-$SECONDS.md" 2>&1; echo "bench $v rc $?"
  save
done
for f in "$R"/bench-*.md; do echo "== $f"; grep -A4 "step ms" "$f" | tail -2; grep "| 2 | " "$f" | head -2; done
timeout 75 .carry/bench/distributed_bench.trace --out "$R/trace.json" >"$R/trace.md" 2>"$R/trace.txt"; echo "trace rc $?"; cat "$R/trace.txt"; grep -A4 "step ms" "$R/trace.md" | tail -2
timeout 30 .carry/examples/particles.old --gpus 2 >"$R/demo-old.log" 2>&1; grep "ranks" "$R/demo-old.log"
save
