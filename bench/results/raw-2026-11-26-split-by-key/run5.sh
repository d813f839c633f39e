#!/usr/bin/env bash
# Call 5, on the 4-GPU machine: runs of up to 64 MB travel packed (every column of a run in one
# NCCL message, copied into and out of a wire block). Binaries built on the workstation
# (.carryz/carry.tar.xz): distributed_test (packed and column by column), the demo on 4 GPUs (bit
# for bit against one rank), memcheck of distributed_test, then distributed_bench packed /
# unpacked / packed with --reps 3 (unpacked: the build of 42d5acc, the keyed split without
# packing). Results re-tarred after each step ($OUT/results.tar.gz) in case the call runs out.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
timeout 60 .carry/tests/distributed_test --gtest_brief=1 >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $?"; tail -3 "$R/distributed_test.log"
timeout 30 .carry/examples/particles --gpus 4 >"$R/demo-gpus4.log" 2>&1; echo "demo --gpus 4 rc $?"; tail -4 "$R/demo-gpus4.log"
save
STRATA_TEST_SANITIZER=1 timeout 90 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --kernel-name-exclude kns=nccl \
  --error-exitcode 99 .carry/tests/distributed_test --gtest_brief=1 >"$R/memcheck-distributed.log" 2>&1; echo "memcheck distributed_test rc $?"; tail -1 "$R/memcheck-distributed.log"
save
for v in packed unpacked packed2; do
  b=.carry/bench/distributed_bench; [ $v = unpacked ] && b=.carry/bench/distributed_bench.unpacked
  timeout 90 $b --reps 3 --out "$R/bench-$v.json" >"$R/bench-$v.md" 2>&1; echo "bench $v rc $?"; grep -A7 "step ms" "$R/bench-$v.md"; grep "| 4 | 6710886\|| 2 | 1342214" "$R/bench-$v.md"
  save
done
