#!/usr/bin/env bash
# Call 7, 4 x H200: the binaries of call 4 (a7c1641: rank threads, every run packed, early split
# reads; same library as 7d61a33 but for the unpacking kernel's name) against b50b39d's
# distributed_bench, alternated, 3 repetitions each; distributed_test and the demo on 4 GPUs.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
timeout 90 .carry/tests/distributed_test --gtest_brief=1 >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $?"; tail -1 "$R/distributed_test.log"
timeout 40 .carry/examples/particles --gpus 4 >"$R/demo-gpus4.log" 2>&1; echo "demo rc $?"; tail -4 "$R/demo-gpus4.log"
save
for v in new old new old; do
  b=.carry/bench/distributed_bench; [ $v = old ] && b=.carry/bench/distributed_bench.old
  timeout 100 $b --reps 3 --out "$R/bench-$v-$SECONDS.json" >"$R/bench-$v-$SECONDS.md" 2>&1; echo "bench $v rc $?"
  save
done
for f in "$R"/bench-*.md; do echo "== $(basename $f)"; grep -A6 "step ms" "$f" | tail -4; grep "(10.0%)\|(2.0%)" "$f"; done
