#!/usr/bin/env bash
# Call 2, 4 x H200: as call 1, with the slots right-sized (a quarter more than the last call's
# largest message) and laid out only for the pairs of ranks that exchanged records in the last
# call (call 1: a slot of 2x, rounded to a power of two, for every pair). Base = c354040's headers.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/ahead2.tar.xz -C /tmp
export LD_LIBRARY_PATH="$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
G=$(nvidia-smi -L | wc -l)
B=/tmp/ahead2
timeout 200 $B/distributed_test >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/distributed_test.log | tr '\n' ' ')"
grep -E "FAILED|Failure" "$R/distributed_test.log" | head -5
if grep -q "FAILED\|Failure" "$R/distributed_test.log" || ! grep -q "PASSED" "$R/distributed_test.log"; then save; exit 1; fi
for g in 2 $G; do
  timeout 90 $B/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo --gpus $g rc $? $(grep -i 'bit for bit\|differ' $R/demo$g.log | head -2 | tr '\n' ' ')"
done
save
for i in 1 2; do
  for v in base new; do
    [ $SECONDS -gt 330 ] && break 2
    bin=$B/distributed_bench; [ $v = base ] && bin=$B/distributed_bench_base
    timeout 100 $bin --parts migrate,scaling --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"
    grep -A5 "^| GPUs | step ms" "$R/bench-$v-$i.md" | tail -4
    save
  done
done
left=$(( 560 - SECONDS )); [ $left -gt 150 ] && left=150
export STRATA_TEST_SANITIZER=1
for tool in memcheck racecheck; do
  (
    timeout -k 5 $left compute-sanitizer --tool $tool --report-api-errors no --kernel-name-exclude kns=nccl --require-cuda-init no --error-exitcode 99 $B/distributed_test --gtest_brief=1 >"$R/distributed_test-$tool.log" 2>&1
    echo "distributed_test $tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $R/distributed_test-$tool.log | tr '\n' ' ')"
  ) &
done
wait
save
