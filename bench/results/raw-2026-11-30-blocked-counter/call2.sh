#!/bin/bash
# Call 2 (the same H200, warm): every GPU test binary and the demos of call 1's build (gpu-check.sh
# without its sanitizer, PyTorch and benchmark stages).
set -u
start=$SECONDS
[ -x /tmp/b/tests/lifecycle_test ] || { echo "call 1's build is gone (a fresh machine)"; exit 3; }
STRATA_COMMIT=$(git rev-parse --short HEAD 2>/dev/null) STRATA_PREBUILT=/tmp/b STRATA_SKIP=build,sanitize,torch,bench \
  STRATA_MPI_WHEEL=$PWD/.carry/mpich-4.2.3-py3-none-manylinux_2_28_x86_64.whl OUT=/tmp/ga bash scripts/gpu-check.sh > $OUT/summary-a.txt 2>&1
cp /tmp/ga/logs.tar.gz $OUT/logs-a.tar.gz 2>/dev/null
echo "gpu-check A done $((SECONDS - start)) s"
tail -30 $OUT/summary-a.txt
