#!/usr/bin/env bash
# Call 3, 4 x H200: call 2's binaries with distributed_test rebuilt after its spread ghost
# functions moved to integer arithmetic (call 2's initcheck run failed one halo case by one record:
# the float ghost function of the host model and of the device disagreed on a record at a
# boundary, as nvcc fuses the multiply and the add). The tests, initcheck of the halo tests, then
# distributed_bench --parts migrate,halo base / new once more.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/wire.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/wire/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
B=/tmp/wire
timeout 100 $B/distributed_test >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/distributed_test.log | tr '\n' ' ')"
STRATA_TEST_SANITIZER=1 timeout 90 compute-sanitizer --tool initcheck --report-api-errors no --kernel-name-exclude kns=nccl --kernel-name-exclude kns=unpack_run \
  --require-cuda-init no --error-exitcode 99 $B/distributed_test --gtest_filter='*Halo*' --gtest_brief=1 >"$R/initcheck-halo.log" 2>&1
echo "initcheck halo rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/initcheck-halo.log | tr '\n' ' ')"
save
for v in base new; do
  [ $SECONDS -gt 200 ] && break
  timeout 50 $B/db-$v --parts migrate,halo --out "$R/bench-$v-3.json" >"$R/bench-$v-3.md" 2>&1; echo "bench $v rc $? at $SECONDS s"
  save
done
