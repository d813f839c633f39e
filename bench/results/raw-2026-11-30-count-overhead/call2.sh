#!/bin/bash
# One H200, the library with the count's early stop: lifecycle_test (carried, built on the CPU
# machine), its gather / count / permute cases under memcheck and racecheck, overhead_probe timed,
# and the count kernel of the random gather under Nsight Compute's stall sections.
set -u
P=bench/results/raw-2026-11-30-count-overhead
R=$OUT/c2 && mkdir -p $R /tmp/pp && tar -xJf .carry/lt.tar.xz -C /tmp/pp
nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -Iinclude -o /tmp/ovp $P/overhead_probe.cu || exit 1
timeout 150 /tmp/pp/lifecycle_test > $R/lifecycle.txt 2>&1; echo "lifecycle rc $?"; tail -3 $R/lifecycle.txt
F='--gtest_filter=*Gather*:*Jump*:*Permute*:*Indices*:*Spans*:*Spare*'
for t in memcheck racecheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $t --error-exitcode 9 /tmp/pp/lifecycle_test "$F" > $R/sanitize-$t.txt 2>&1; echo "$t rc $?"; tail -2 $R/sanitize-$t.txt
done
timeout 120 /tmp/ovp timed > $R/timed.txt 2>&1; echo "timed rc $?"; cat $R/timed.txt
timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy -k regex:far_count /tmp/ovp > $R/ncu-count.txt 2>&1; echo "ncu rc $?"
grep -E "far_count|Duration|Stall|Issue|Warp Cycles|Eligible|Active Warps|No Eligible|Registers|Achieved Occupancy" $R/ncu-count.txt | head -60
