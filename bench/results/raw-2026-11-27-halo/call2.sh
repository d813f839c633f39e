#!/usr/bin/env bash
# Call 2, multi-GPU machine: call 1's distributed_test (carried) under compute-sanitizer's four
# tools side by side, with gpu-check's options for this binary (NCCL's expected API errors at
# initialisation not reported, NCCL's kernels not checked; initcheck leaves out unpack_run).
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/halo.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/halo/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0 STRATA_TEST_SANITIZER=1
R=$OUT/r && mkdir -p "$R"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tee "$R/gpus.txt"; nvidia-smi -L | wc -l
t=/tmp/halo/distributed_test
for tool in memcheck initcheck synccheck racecheck; do
  (
    extra="--report-api-errors no --kernel-name-exclude kns=nccl"
    [ $tool = memcheck ] && extra+=" --leak-check full"
    [ $tool = initcheck ] && extra+=" --kernel-name-exclude kns=unpack_run"
    timeout -k 10 300 compute-sanitizer --tool $tool $extra --require-cuda-init no --error-exitcode 99 $t --gtest_brief=1 >"$R/$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $R/$tool.log | tr '\n' ' ')"
  ) &
done
wait
tar -czf "$OUT/results.tar.gz" -C "$OUT" r
