#!/usr/bin/env bash
# Call 3, the same 2 x H200 machine: the whole gpu-check on call 1's build, join_mpi under mpiexec included, then memcheck of join_mpi with two
# processes.
set -u
STRATA_PREBUILT=/tmp/b STRATA_SKIP=bench,torch bash scripts/gpu-check.sh 2>&1 | tail -25
prefix=$(python3 -c 'import sys; print(sys.prefix)')
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$prefix/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" PATH="$prefix/bin:$PATH" NCCL_NVLS_ENABLE=0
timeout 200 mpiexec -n 2 compute-sanitizer --tool memcheck --report-api-errors no --kernel-name-exclude kns=nccl --error-exitcode 99 \
  /tmp/b/tests/mpi_join_test --gtest_brief=1 >"$OUT/mpi-memcheck.log" 2>&1; echo "mpi memcheck rc $? $(grep -c 'ERROR SUMMARY: 0 errors' $OUT/mpi-memcheck.log) clean summaries"
