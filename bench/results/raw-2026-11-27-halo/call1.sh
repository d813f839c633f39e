#!/usr/bin/env bash
# Call 1, multi-GPU machine: binaries built on the workstation and carried (.carryz/halo.tar.xz):
# distributed_test and particles of the working tree (halo_exchange through migrate's counting and
# gather; migrate's first step shared with it), distributed_test under compute-sanitizer memcheck,
# particles --gpus 2 and --gpus G against one GPU, then distributed_bench --parts halo,migrate built
# from the same bench source against HEAD's headers (base) and the working tree's (new), alternated.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
tar -xJf .carryz/halo.tar.xz -C /tmp
export LD_LIBRARY_PATH="/tmp/halo/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
G=$(nvidia-smi -L | wc -l)
B=/tmp/halo
timeout 200 $B/distributed_test >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/distributed_test.log | tr '\n' ' ')"
grep -E "FAILED|Failure" "$R/distributed_test.log" | head -5
export STRATA_TEST_SANITIZER=1
timeout 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 $B/distributed_test >"$R/memcheck.log" 2>&1
echo "memcheck rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/memcheck.log | tr '\n' ' ')"
unset STRATA_TEST_SANITIZER
save
for g in 2 $G; do
  timeout 90 $B/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo --gpus $g rc $? $(grep -i 'bit for bit\|differ' $R/demo$g.log | head -2)"
done
save
for i in 1 2; do
  for v in base new; do
    [ $SECONDS -gt 520 ] && break 2
    timeout 200 $B/db-$v --parts halo,migrate --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"
    grep -A12 "^| GPUs | cutoff" "$R/bench-$v-$i.md"; grep -A9 "^| GPUs | records moved" "$R/bench-$v-$i.md" | tail -6
    save
  done
done
save
