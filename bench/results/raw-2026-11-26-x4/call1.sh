#!/usr/bin/env bash
# Call 1, 4-GPU machine: PyPI's mpich wheel (carried) installed offline; the whole CUDA preset of
# the working tree built on the device into /tmp/b (kept for call 2); join_mpi under mpiexec with
# 4 processes and with one process that sees no GPU; particles --gpus 4; then distributed_bench
# base (HEAD's transform / transform_reduce_sum, enqueued from the caller's thread) against new
# (enqueued by each rank's thread), both built on the workstation and carried, alternated.
set -u
python3 -m pip install -q --no-index .carryz/mpich-*.whl 2>&1 | tail -2
prefix=$(python3 -c 'import sys; print(sys.prefix)')
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$prefix/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" PATH="$prefix/bin:$PATH" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"; nproc
cmake --preset cuda -B /tmp/b >"$R/configure.log" 2>&1; echo "configure rc $?"
start=$SECONDS
ninja -C /tmp/b -j "$(nproc)" >"$R/build.log" 2>&1; echo "build rc $? in $((SECONDS - start)) s"
grep -E "error|FAILED" "$R/build.log" | head
B=/tmp/b
timeout 150 mpiexec -n 4 $B/tests/mpi_join_test >"$R/mpi-4.log" 2>&1; echo "mpi -n 4 rc $? passed ranks: $(grep -c '^\[  PASSED  \]' $R/mpi-4.log)"
t=$B/tests/mpi_join_test
timeout 120 mpiexec -n 1 env STRATA_TEST_GPULESS_RANK=1 $t --gtest_filter='*WithoutAGpu*' : -n 1 env STRATA_TEST_GPULESS_RANK=1 CUDA_VISIBLE_DEVICES= $t --gtest_filter='*WithoutAGpu*' >"$R/mpi-gpuless.log" 2>&1
echo "mpi gpuless rank rc $? ($(grep -c 'OK \] MpiJoin' $R/mpi-gpuless.log) OK lines)"
timeout 60 $B/examples/particles --gpus 4 >"$R/demo4.log" 2>&1; echo "demo --gpus 4 rc $? $(grep 'bit for bit\|DIFFER' $R/demo4.log)"
save
cp .carryz/db-base /tmp/db-base; cp .carryz/db-new /tmp/db-new; chmod +x /tmp/db-*
for i in 1 2 3; do
  for v in base new; do
    [ $SECONDS -gt 470 ] && break 2
    timeout 150 /tmp/db-$v --reps 3 --out "$R/bench-$v-$i.json" >"$R/bench-$v-$i.md" 2>&1; echo "bench $v $i rc $? at $SECONDS s"; grep -A8 "step ms" "$R"/bench-$v-$i.md | tail -5
    save
  done
done
