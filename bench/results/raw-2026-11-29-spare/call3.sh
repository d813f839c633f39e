#!/usr/bin/env bash
# One H200: lifecycle_test of b49958e (permute through a spare and gather sharing gather_checked),
# and its gather / permute / spare cases under memcheck and racecheck.
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/c6.tar.xz -C /tmp/pp
timeout 120 /tmp/pp/lifecycle_test > "$R/lifecycle.txt" 2>&1; echo "lifecycle rc $?"; tail -n 3 "$R/lifecycle.txt"
F='--gtest_filter=*Gather*:*Permute*:*Indices*:*Spare*'
for t in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $t --error-exitcode 9 /tmp/pp/lifecycle_test "$F" > "$R/sanitize-$t.txt" 2>&1; echo "$t rc $?"; tail -n 2 "$R/sanitize-$t.txt"
done
cd $OUT && tar -czf results.tar.gz r && rm -rf r
