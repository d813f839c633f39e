#!/usr/bin/env bash
# The final tree on 2 x H200: call 1 builds the CUDA preset on the device (raw-2026-11-26-rank-launch/build.sh),
# call 2 runs the whole gpu-check on that build (mpi_join_test under mpiexec included).
set -u
STRATA_PREBUILT=/tmp/b STRATA_SKIP=bench,torch bash scripts/gpu-check.sh 2>&1 | tail -16
