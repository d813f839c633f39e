#!/usr/bin/env bash
# Call 5, on the 4-GPU machine (lent late in the session), with call 2's packed build
# (.carryz/carry.tar.xz): every GPU test binary and the demos through gpu-check (the sharded demo
# on all four GPUs), distributed_bench twice (migrate on 2, 3 and 4 GPUs; weak scaling 1 to 4),
# then memcheck of the multi-GPU tests. Results: $OUT/results.tar.gz, tables printed.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
nvidia-smi topo -m >"$R/topo.txt" 2>&1
STRATA_PREBUILT=.carry STRATA_SKIP=bench,torch,sanitize OUT="$R/check" timeout 240 bash scripts/gpu-check.sh >"$R/check.txt" 2>&1
echo "gpu-check rc $?"; tail -9 "$R/check.txt"
tar -xzOf "$R/check/logs.tar.gz" logs/demo-gpus.log 2>/dev/null | tail -8
for i in 1 2; do
  timeout 150 .carry/bench/distributed_bench --out "$R/bench-$i.json" >"$R/bench-$i.md" 2>&1; echo "bench $i rc $?"; tail -16 "$R/bench-$i.md"
done
api="--report-api-errors no --kernel-name-exclude kns=nccl"
STRATA_TEST_SANITIZER=1 timeout 120 compute-sanitizer --tool memcheck --leak-check full $api --error-exitcode 99 .carry/tests/distributed_test \
  --gtest_brief=1 >"$R/memcheck-distributed_test.log" 2>&1; echo "memcheck distributed_test rc $?"; tail -1 "$R/memcheck-distributed_test.log"
STRATA_TEST_SANITIZER=1 timeout 60 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 .carry/tests/multi_device_test \
  --gtest_brief=1 >"$R/memcheck-multi_device_test.log" 2>&1; echo "memcheck multi_device_test rc $?"; tail -1 "$R/memcheck-multi_device_test.log"
tar -czf "$OUT/results.tar.gz" -C "$OUT" r && rm -rf "$R"
