#!/usr/bin/env bash
# Call 2, on the 4-GPU machine, after call 1 (run1.sh): migrate's split and list skip the ranking
# by destination when one destination receives everything, and records of one key find each
# other by ballots instead of __match_any_sync. Binaries built on the workstation
# (.carryz/carry.tar.xz): split_by_key_test and distributed_test, the sharded demo on 4 and 2 GPUs
# (bit for bit against one rank), memcheck and racecheck of split_by_key_test, memcheck of
# distributed_test, then distributed_bench new / old / new / old (old: 9a35573's build).
# Results: $OUT/results.tar.gz, tables printed.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
for t in split_by_key_test distributed_test; do
  timeout 120 .carry/tests/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $?"; tail -3 "$R/$t.log"
done
for g in 4 2; do
  timeout 60 .carry/examples/particles --gpus $g >"$R/demo-gpus$g.log" 2>&1; echo "demo --gpus $g rc $?"; tail -4 "$R/demo-gpus$g.log"
done
export STRATA_TEST_SANITIZER=1
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 .carry/tests/split_by_key_test --gtest_brief=1 >"$R/$tool-split.log" 2>&1
  echo "$tool split_by_key_test rc $?"; tail -1 "$R/$tool-split.log"
done
timeout 150 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --kernel-name-exclude kns=nccl --error-exitcode 99 \
  .carry/tests/distributed_test --gtest_brief=1 >"$R/memcheck-distributed.log" 2>&1; echo "memcheck distributed_test rc $?"; tail -1 "$R/memcheck-distributed.log"
unset STRATA_TEST_SANITIZER
for v in new old new2 old2; do
  b=.carry/bench/distributed_bench; case $v in old*) b=.carry/bench/distributed_bench.old;; esac
  timeout 140 $b --out "$R/bench-$v.json" >"$R/bench-$v.md" 2>&1; echo "bench $v rc $?"; tail -26 "$R/bench-$v.md"
done
tar -czf "$OUT/results.tar.gz" -C "$OUT" r && rm -rf "$R"
