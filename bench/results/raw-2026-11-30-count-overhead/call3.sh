#!/bin/bash
# One H200, the library with a sampled line in every 64 (was 16) and the count's early stop,
# binaries built on the CPU machine and carried: lifecycle_test, its gather / count / permute cases
# under memcheck and racecheck, overhead_probe timed and its count kernels under ncu, and
# jump_sweep (../raw-2026-11-29-jump-sweep, unchanged) on its `few` families: does the count still
# pick the faster way at every point?
set -u
R=$OUT/c3 && mkdir -p $R /tmp/pp && tar -xJf .carry/p.tar.xz -C /tmp/pp
timeout 150 /tmp/pp/lt > $R/lifecycle.txt 2>&1; echo "lifecycle rc $?"; tail -3 $R/lifecycle.txt
F='--gtest_filter=*Gather*:*Jump*:*Permute*:*Indices*:*Spans*:*Spare*'
for t in memcheck racecheck; do
  STRATA_TEST_SANITIZER=1 timeout 100 compute-sanitizer --tool $t --error-exitcode 9 /tmp/pp/lt "$F" > $R/sanitize-$t.txt 2>&1; echo "$t rc $?"; tail -2 $R/sanitize-$t.txt
done
timeout 100 /tmp/pp/ovp timed > $R/timed.txt 2>&1; echo "timed rc $?"; cat $R/timed.txt
timeout 60 ncu --metrics gpu__time_duration.sum -k regex:far_count /tmp/pp/ovp > $R/ncu-count.txt 2>&1; echo "ncu rc $?"; grep -E "gpu__time_duration" $R/ncu-count.txt
timeout 200 /tmp/pp/jump_sweep few > $R/sweep-few.txt 2>&1; echo "sweep rc $?"; cat $R/sweep-few.txt
