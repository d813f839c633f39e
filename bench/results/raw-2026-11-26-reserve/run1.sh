#!/usr/bin/env bash
# Call 1, 4 x H200: base = 599cd71's distributed_bench; new = working tree (scratch allocation
# with one pool query, all_reduce_sum through pool scratch, reserve() used by the benchmark and
# the demo). Tests, the demo on 4 GPUs, the scratch-call probe against both headers, then
# distributed_bench base / new alternated three times.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
C=.carry
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpus.txt"
for t in distributed_test reduce_test lifecycle_test; do
  timeout 120 $C/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $? $(tail -1 $R/$t.log)"
done
timeout 60 $C/particles --gpus 4 >"$R/demo4.log" 2>&1; echo "demo rc $? $(grep 'bit for bit\|DIFFER' $R/demo4.log)"; grep "ranks (migrate\|1 rank" "$R/demo4.log"
for v in "" _new; do timeout 60 $C/scratch_calls_probe$v >"$R/probe$v.txt" 2>&1; echo "probe$v rc $?"; cat "$R/probe$v.txt"; done
save
for i in 1 2 3; do
  for v in base new; do
    timeout 120 $C/db-$v --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"; grep -A7 "step ms" "$R"/bench-$v-$i.md | tail -4
    save
  done
done
