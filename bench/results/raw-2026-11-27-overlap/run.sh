#!/usr/bin/env bash
# One call on the 4 x H200 machine: the probe (built on the workstation, carried) on 2 and 4 GPUs,
# 10% and 2% leaving, twice each.
set -u
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
for i in 1 2; do for g in 2 4; do for f in 0.1 0.02; do timeout 60 .carryz/overlap_probe $g $f; echo; done; done; done 2>&1 | tee $OUT/probe.txt
