#!/usr/bin/env bash
# Call 1, 4 x H200: migrate ahead of its counts (95d7ed6) against the code before (c354040, the
# same bench source). The distributed tests, particles --gpus 2 / 4 (bit for bit the one-rank run),
# distributed_bench --parts migrate,scaling base / new alternated, then distributed_test under
# compute-sanitizer's four tools side by side with gpu-check's options.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/carry.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
G=$(nvidia-smi -L | wc -l)
B=/tmp/.carry
for t in split_by_key_test distributed_test; do
  timeout 200 $B/tests/$t >"$R/$t.log" 2>&1; echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|Failure" "$R/distributed_test.log" | head -5
if grep -q "FAILED\|Failure" "$R/distributed_test.log" || ! grep -q "PASSED" "$R/distributed_test.log"; then save; exit 1; fi
for g in 2 $G; do
  timeout 90 $B/examples/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo --gpus $g rc $? $(grep -i 'bit for bit\|differ\|ms a step' $R/demo$g.log | head -3 | tr '\n' ' ')"
done
save
for i in 1 2; do
  for v in base new; do
    [ $SECONDS -gt 330 ] && break 2
    bin=$B/bench/distributed_bench; [ $v = base ] && bin=$B/bench/distributed_bench_base
    timeout 100 $bin --parts migrate,scaling --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"
    grep -A5 "^| GPUs | step ms" "$R/bench-$v-$i.md" | tail -4
    save
  done
done
left=$(( 570 - SECONDS )); [ $left -gt 200 ] && left=200
export STRATA_TEST_SANITIZER=1
for tool in memcheck initcheck synccheck racecheck; do
  (
    extra="--report-api-errors no --kernel-name-exclude kns=nccl"
    [ $tool = memcheck ] && extra+=" --leak-check full"
    [ $tool = initcheck ] && extra+=" --kernel-name-exclude kns=unpack_run"
    timeout -k 5 $left compute-sanitizer --tool $tool $extra --require-cuda-init no --error-exitcode 99 $B/tests/distributed_test --gtest_brief=1 >"$R/distributed_test-$tool.log" 2>&1
    echo "distributed_test $tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $R/distributed_test-$tool.log | tr '\n' ' ')"
  ) &
done
wait
save
