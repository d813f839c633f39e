#!/bin/bash
# Call 3 (the same H200, warm): the four compute-sanitizer tools over every test binary of call 1's build.
set -u
start=$SECONDS
[ -x /tmp/b/tests/lifecycle_test ] || { echo "call 1's build is gone (a fresh machine)"; exit 3; }
STRATA_PREBUILT=/tmp/b STRATA_SKIP=build,tests,demo,torch,bench STRATA_SANITIZER_TIMEOUT=150 \
  STRATA_MPI_WHEEL=$PWD/.carry/mpich-4.2.3-py3-none-manylinux_2_28_x86_64.whl OUT=/tmp/gb bash scripts/gpu-check.sh > $OUT/summary-b.txt 2>&1
cp /tmp/gb/logs.tar.gz $OUT/logs-b.tar.gz 2>/dev/null
echo "gpu-check B done $((SECONDS - start)) s"
tail -10 $OUT/summary-b.txt
