#!/usr/bin/env bash
# Call 2, 4 x H200: as call 1, with the few-leaving path and the halo's gathers back to a listing
# and a gather by the list (now into the wire block), not one listing pass that writes the records
# (call 1: 10% slower at 2% leaving). The tests, particles --gpus 2 / 4, distributed_bench
# --parts migrate,scaling,halo base / new alternated twice, then distributed_test and
# split_by_key_test under compute-sanitizer's four tools side by side with gpu-check's options.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/wire.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/wire/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
G=$(nvidia-smi -L | wc -l)
B=/tmp/wire
timeout 120 $B/split_by_key_test >"$R/split_by_key_test.log" 2>&1; echo "split_by_key_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/split_by_key_test.log | tr '\n' ' ')"
timeout 200 $B/distributed_test >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/distributed_test.log | tr '\n' ' ')"
grep -E "FAILED|Failure" "$R/distributed_test.log" | head -5
if grep -q "FAILED\|Failure" "$R/distributed_test.log" || ! grep -q "PASSED" "$R/distributed_test.log"; then save; exit 1; fi
for g in 2 $G; do
  timeout 90 $B/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo --gpus $g rc $? $(grep -i 'bit for bit\|differ' $R/demo$g.log | head -2)"
done
cuobjdump -res-usage $B/db-new 2>/dev/null | grep -A1 "split_records_kernel\|gather_records" | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" | sort | uniq -c | tee "$R/res-new.txt"
save
for i in 1 2; do
  for v in base new; do
    [ $SECONDS -gt 300 ] && break 2
    timeout 100 $B/db-$v --parts migrate,scaling,halo --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"
    grep -A5 "^| GPUs | step ms" "$R/bench-$v-$i.md" | tail -4
    save
  done
done
left=$(( 570 - SECONDS )); [ $left -gt 220 ] && left=220
export STRATA_TEST_SANITIZER=1
for t in distributed_test split_by_key_test; do
  for tool in memcheck initcheck synccheck racecheck; do
    (
      extra="--report-api-errors no --kernel-name-exclude kns=nccl"
      [ $tool = memcheck ] && extra+=" --leak-check full"
      [ $tool = initcheck ] && extra+=" --kernel-name-exclude kns=unpack_run"
      timeout -k 5 $left compute-sanitizer --tool $tool $extra --require-cuda-init no --error-exitcode 99 $B/$t --gtest_brief=1 >"$R/$t-$tool.log" 2>&1
      echo "$t $tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $R/$t-$tool.log | tr '\n' ' ')"
    ) &
  done
done
wait
save
