#!/usr/bin/env bash
# Call 1, 4 x H200: binaries built on the workstation and carried (.carryz/wire.tar.xz):
# distributed_test, particles and distributed_bench of the working tree (leaving records and ghosts
# written straight into the wire block), db-base = the same bench source against 00f9041's headers.
# The tests (split_by_key_test too: list_records), particles --gpus 2 / 4 against one GPU, the split and gather kernels' resources, then
# distributed_bench --parts migrate,scaling,halo base / new alternated while time is left.
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
for v in base new; do
  cuobjdump -res-usage $B/db-$v 2>/dev/null | grep -A1 "split_records_kernel\|list_records_kernel\|gather_records\|copy_run" | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" | sort | uniq -c > "$R/res-$v.txt"
done
head -20 "$R"/res-*.txt
save
for i in 1 2 3; do
  for v in base new; do
    [ $SECONDS -gt 480 ] && break 2
    timeout 150 $B/db-$v --parts migrate,scaling,halo --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"
    grep -A5 "^| GPUs | step ms" "$R/bench-$v-$i.md" | tail -4
    save
  done
done
save
