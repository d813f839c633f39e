#!/usr/bin/env bash
# Call 4, on the 2-GPU machine: after the functors and host threads moved out of
# distributed_vector.hpp into distributed/rank_work.hpp (no change in what they do):
# distributed_test and the sharded demo on 2 GPUs (bit for bit against one rank). Printed only.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 .carry/tests/distributed_test --gtest_brief=1 2>&1 | tail -3; echo "distributed_test rc ${PIPESTATUS[0]}"
timeout 60 .carry/examples/particles --gpus 2 2>&1 | tail -4; echo "demo rc ${PIPESTATUS[0]}"
