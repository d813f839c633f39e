#!/usr/bin/env bash
# Call 1, 2 x H200 (no 4-GPU machine was lent this session): PyPI's mpich wheel (carried) installed offline, then the whole CUDA preset of the
# working tree built on the device into /tmp/b (kept for calls 2 and 3 while the machine stays warm).
set -u
python3 -m pip install -q --no-index .carryz/mpich-*.whl 2>&1 | tail -2
prefix=$(python3 -c 'import sys; print(sys.prefix)')
export PATH="$prefix/bin:$PATH"
which mpiexec; nvidia-smi --query-gpu=name --format=csv,noheader | head -4; nproc
cmake --preset cuda -B /tmp/b >"$OUT/configure.log" 2>&1; echo "configure rc $?"; grep -iE "mpi|nccl" "$OUT/configure.log"
start=$SECONDS
ninja -C /tmp/b -j "$(nproc)" >"$OUT/build.log" 2>&1; echo "build rc $? in $((SECONDS - start)) s"
grep -E "error|FAILED" "$OUT/build.log" | head
ls /tmp/b/tests | grep -c _test
