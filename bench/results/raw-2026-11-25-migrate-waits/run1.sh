#!/usr/bin/env bash
# Call 1 on the 2-GPU machine: the migrate change's benchmark and tests, from a partial packed build
# (.carryz/carry1.tar.xz: distributed_test, lifecycle_test and distributed_bench of the change, and
# distributed_bench.old built from 9b1a3a5, the commit before it). distributed_bench new and old
# alternate (new, old, new, old, new); then the two tests, and memcheck of both (the keyed
# selection's tests and every distributed test). Results: $OUT/results.tar.gz, tables printed.
# BENCH_ARGS: extra distributed_bench arguments for both builds (call 1b: --steps 1000 --iters 40).
set -u
tar -xJf .carryz/carry1.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
for i in 1 2 3; do
  .carry/bench/distributed_bench ${BENCH_ARGS:-} --out "$R/bench-new-$i.json" >"$R/bench-new-$i.md" 2>&1; echo "new $i rc $?"; tail -8 "$R/bench-new-$i.md"
  if [ $i -lt 3 ]; then
    .carry/bench/distributed_bench.old ${BENCH_ARGS:-} --out "$R/bench-old-$i.json" >"$R/bench-old-$i.md" 2>&1; echo "old $i rc $?"; tail -8 "$R/bench-old-$i.md"
  fi
done
for t in distributed_test lifecycle_test; do
  .carry/tests/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $?"; grep -E '^\[  (PASSED|FAILED) ' "$R/$t.log"
done
api="--report-api-errors no --kernel-name-exclude kns=nccl"
STRATA_TEST_SANITIZER=1 compute-sanitizer --tool memcheck --leak-check full $api --error-exitcode 99 .carry/tests/distributed_test \
  --gtest_brief=1 >"$R/memcheck-distributed_test.log" 2>&1; echo "memcheck distributed_test rc $?"; tail -1 "$R/memcheck-distributed_test.log"
STRATA_TEST_SANITIZER=1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 .carry/tests/lifecycle_test --gtest_brief=1 \
  --gtest_filter='*SelectIndices*' >"$R/memcheck-lifecycle_select.log" 2>&1; echo "memcheck lifecycle select rc $?"; tail -1 "$R/memcheck-lifecycle_select.log"
tar -czf "$OUT/results.tar.gz" -C "$OUT" r && rm -rf "$R"
