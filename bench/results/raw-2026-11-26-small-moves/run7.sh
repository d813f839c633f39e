#!/usr/bin/env bash
# Call 7, 4 x H200: transform_reduce_sum with the shards' partial sums reduced in device memory
# (new2) against c9019ae (new): distributed_test, the demo on 4 GPUs, the step-parts probe built
# against both headers, distributed_bench new2 / new alternated, then memcheck of distributed_test.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
C=.carry
timeout 90 $C/distributed_test --gtest_brief=1 >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(tail -1 $R/distributed_test.log)"
timeout 40 $C/particles --gpus 4 >"$R/demo4.log" 2>&1; echo "demo rc $? $(grep 'bit for bit\|DIFFER' $R/demo4.log)"; grep "ranks (migrate\|1 rank" "$R/demo4.log"
for v in old new; do timeout 60 $C/probe-$v >"$R/probe-$v.txt" 2>&1; echo "probe $v rc $?"; cat "$R/probe-$v.txt"; done
save
for v in new2 new; do
  timeout 120 $C/db-$v --reps 3 --out "$R/bench-$v-$SECONDS.json" >"$R/bench-$v-$SECONDS.md" 2>&1; echo "bench $v rc $?"; grep -A7 "step ms" "$R"/bench-$v-*.md | tail -4
  save
done
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --kernel-name-exclude kns=nccl --require-cuda-init no --error-exitcode 99 $C/distributed_test --gtest_brief=1 >"$R/san-memcheck-distributed.log" 2>&1; echo "memcheck rc $? $(tail -1 $R/san-memcheck-distributed.log)"
save
