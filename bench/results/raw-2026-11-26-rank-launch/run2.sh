#!/usr/bin/env bash
# Call 2, the same 2 x H200 machine, on call 1's build: base = 1379582's distributed_bench
# (carried), new = the working tree (transform and transform_reduce_sum enqueued by each rank's
# thread). Tests, the demo on 2 GPUs, join_mpi under mpiexec with 2 processes, distributed_bench
# base / new alternated three times.
set -u
prefix=$(python3 -c 'import sys; print(sys.prefix)')
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$prefix/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" PATH="$prefix/bin:$PATH" NCCL_NVLS_ENABLE=0
B=/tmp/b
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
cp .carryz/db-base /tmp/db-base && chmod +x /tmp/db-base
for t in distributed_test lifecycle_test reduce_test split_by_key_test; do
  timeout 150 $B/tests/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $? $(tail -1 $R/$t.log)"
done
for n in 2; do
  timeout 120 mpiexec -n $n $B/tests/mpi_join_test >"$R/mpi-$n.log" 2>&1; echo "mpi -n $n rc $? passed ranks: $(grep -c '^\[  PASSED  \]' $R/mpi-$n.log)"
done
timeout 60 $B/examples/particles --gpus 2 >"$R/demo2.log" 2>&1; echo "demo rc $? $(grep 'bit for bit\|DIFFER' $R/demo2.log)"
save
for i in 1 2 3; do
  for v in base new; do
    bin=$B/bench/distributed_bench; [ $v = base ] && bin=/tmp/db-base
    timeout 120 $bin --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"; grep -A7 "step ms" "$R"/bench-$v-$i.md | tail -4
    save
  done
done
