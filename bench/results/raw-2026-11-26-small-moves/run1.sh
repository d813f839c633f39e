#!/usr/bin/env bash
# Call 1, 4 x H200: split-stack candidate (HEAD + split-stack.diff) tests and memcheck; particles
# --gpus 4 for b50b39d (old), c7d6fa1 (base) and the candidate, alternated; the trace build's
# phases on 2-4 ranks; distributed_bench candidate vs base on 2 GPUs, alternated.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
C=.carry
timeout 60 $C/split_by_key_test --gtest_brief=1 >"$R/split_by_key_test.log" 2>&1; echo "split_by_key_test rc $?"; tail -1 "$R/split_by_key_test.log"
timeout 90 $C/distributed_test --gtest_brief=1 >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $?"; tail -1 "$R/distributed_test.log"
save
for v in old base cand old base cand; do
  timeout 40 $C/particles-$v --gpus 4 >"$R/demo4-$v-$SECONDS.log" 2>&1; echo "demo $v rc $? $(grep 'ranks (migrate' "$R"/demo4-$v-*.log | tail -1)"
done
save
timeout 150 $C/db-trace --reps 3 --out "$R/trace.json" >"$R/trace.md" 2>"$R/trace.txt"; echo "trace rc $?"; cat "$R/trace.txt"; grep -A7 "step ms" "$R/trace.md"
save
for v in cand base cand base; do
  timeout 60 $C/db-$v --gpus 2 --out "$R/bench2-$v-$SECONDS.json" >"$R/bench2-$v-$SECONDS.md" 2>&1; echo "bench2 $v rc $?"
done
save
for f in "$R"/bench2-*.md; do echo "== $(basename $f)"; grep "(10.0%)\|(2.0%)" "$f"; grep -A4 "split / copy" "$f" | tail -2; grep -A4 "step ms" "$f" | tail -2; done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 $C/split_by_key_test --gtest_brief=1 >"$R/memcheck-split.log" 2>&1; echo "memcheck split rc $?"; tail -2 "$R/memcheck-split.log"
save
