#!/usr/bin/env bash
# Call 2, 4 x H200: base = 599cd71's distributed_bench; new = the working tree (reserve,
# and each rank's scratch blocks kept between calls: stream_scratch). Tests, the demo on 4 GPUs,
# the call probe (launch, memset, pool and cached scratch, 1 and 4 threads), distributed_bench base /
# new alternated three times, then compute-sanitizer on distributed_test and the cache's test.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
C=.carry
for t in distributed_test reduce_test lifecycle_test split_by_key_test; do
  timeout 120 $C/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $? $(tail -1 $R/$t.log)"
done
timeout 60 $C/particles --gpus 4 >"$R/demo4.log" 2>&1; echo "demo rc $? $(grep 'bit for bit\|DIFFER' $R/demo4.log)"; grep "ranks (migrate\|1 rank" "$R/demo4.log"
timeout 60 $C/calls_probe >"$R/probe.txt" 2>&1; echo "probe rc $?"; cat "$R/probe.txt"
save
for i in 1 2 3; do
  for v in base new; do
    timeout 120 $C/db-$v --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"; grep -A7 "step ms" "$R"/bench-$v-$i.md | tail -4
    save
  done
done
grep -B1 -A8 "records moved per rank" "$R"/bench-new-3.md
export STRATA_TEST_SANITIZER=1
san="compute-sanitizer --report-api-errors no --kernel-name-exclude kns=nccl --require-cuda-init no --error-exitcode 99"
timeout 100 $san --tool memcheck $C/distributed_test --gtest_brief=1 >"$R/memcheck-distributed.log" 2>&1; echo "memcheck distributed rc $? $(tail -1 $R/memcheck-distributed.log)"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 60 compute-sanitizer --tool $tool --require-cuda-init no --error-exitcode 99 $C/lifecycle_test --gtest_filter='*StreamScratch*:*HotLoop*:*SelectIndices*' --gtest_brief=1 >"$R/$tool-lifecycle.log" 2>&1; echo "$tool lifecycle rc $? $(tail -1 $R/$tool-lifecycle.log)"
done
save
