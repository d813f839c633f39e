#!/usr/bin/env bash
# Call 4, 2 x H200: the split reads small records into registers before its ranking, and every
# run travels packed (no 64 MB limit), on top of call 1's rank threads. New: distributed_test,
# split_by_key_test, the demo on 2 GPUs (bit for bit), distributed_bench; old: b50b39d's
# distributed_bench (the A/B baseline, alternated), and call 3's build (rank threads alone).
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
for t in distributed_test split_by_key_test; do timeout 120 .carry/tests/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $?"; tail -1 "$R/$t.log"; done
timeout 60 .carry/examples/particles --gpus 2 >"$R/demo-gpus2.log" 2>&1; echo "demo rc $?"; tail -3 "$R/demo-gpus2.log"
save
for v in new old threads new old threads; do
  b=.carry/bench/distributed_bench; [ $v = old ] && b=.carry/bench/distributed_bench.old; [ $v = threads ] && b=.carry/bench/distributed_bench.threads
  timeout 90 $b --out "$R/bench-$v-$SECONDS.json" >"$R/bench-$v-$SECONDS.md" 2>&1; echo "bench $v rc $?"
  save
done
for f in "$R"/bench-*.md; do echo "== $(basename $f)"; grep "| 2 | " "$f" | head -3; sed -n '/passes alone/,$p' "$f" | grep "%"; done
STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 .carry/tests/split_by_key_test --gtest_brief=1 >"$R/memcheck-split.log" 2>&1; echo "memcheck split rc $?"; tail -1 "$R/memcheck-split.log"
save
