#!/usr/bin/env bash
# Call 3, multi-GPU machine: every direction of halo_exchange in one exchange (working tree after
# b01e3e5). distributed_test and particles built on the workstation and carried; the tests alone,
# then under compute-sanitizer's four tools side by side with gpu-check's options for this binary;
# particles --gpus 2 and --gpus G against one GPU; distributed_bench --parts halo built from the
# same bench source against 987134c (base), b01e3e5 (mid: a round per direction) and the working
# tree (new), alternated twice; and once --parts migrate of new.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/halo.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/halo/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
G=$(nvidia-smi -L | wc -l)
B=/tmp/halo t=/tmp/halo/distributed_test
timeout 200 $t >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/distributed_test.log | tr '\n' ' ')"
for tool in memcheck initcheck synccheck racecheck; do
  (
    extra="--report-api-errors no --kernel-name-exclude kns=nccl"
    [ $tool = memcheck ] && extra+=" --leak-check full"
    [ $tool = initcheck ] && extra+=" --kernel-name-exclude kns=unpack_run"
    STRATA_TEST_SANITIZER=1 timeout -k 10 300 compute-sanitizer --tool $tool $extra --require-cuda-init no --error-exitcode 99 $t --gtest_brief=1 >"$R/$tool.log" 2>&1
    echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $R/$tool.log | tr '\n' ' ')"
  ) &
done
wait
save
for g in 2 $G; do
  timeout 90 $B/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo --gpus $g rc $? $(grep -i 'bit for bit\|differ' $R/demo$g.log | head -2)"
done
save
for i in 1 2; do
  for v in base mid new; do
    [ $SECONDS -gt 480 ] && break 2
    timeout 120 $B/db-$v --parts halo --out "$R/halo-$v-$i.json" >"$R/halo-$v-$i.md" 2>&1; echo "halo $v $i rc $? at $SECONDS s"
    grep -A8 "^| GPUs | cutoff" "$R/halo-$v-$i.md" | tail -6
    save
  done
done
[ $SECONDS -lt 500 ] && { timeout 100 $B/db-new --parts migrate --out "$R/migrate-new.json" >"$R/migrate-new.md" 2>&1; echo "migrate new rc $?"; grep -A8 "^| GPUs | records moved" "$R/migrate-new.md" | tail -6; }
save
