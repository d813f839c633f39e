#!/usr/bin/env bash
# One H200, the library with the window count (far_sample): lifecycle_test, its gather cases under
# the four sanitizers, choice_probe (../raw-2026-11-28-gather-quads/choice_probe.cu) rebuilt, and
# jump_sweep on 8 of its 40 families.
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/c3.tar.xz -C /tmp/pp
timeout 120 /tmp/pp/lifecycle_test > "$R/lifecycle.txt" 2>&1; echo "lifecycle rc $?"; tail -3 "$R/lifecycle.txt"
F='--gtest_filter=*Gather*:*Jump*:*Permute*:*Indices*:*Spans*'
for t in memcheck racecheck initcheck synccheck; do
  timeout 150 compute-sanitizer --tool $t --error-exitcode 9 /tmp/pp/lifecycle_test "$F" > "$R/sanitize-$t.txt" 2>&1; echo "$t rc $?"; tail -2 "$R/sanitize-$t.txt"
done
timeout 100 /tmp/pp/choice_new > "$R/choice.txt" 2>&1; echo "choice rc $?"; cat "$R/choice.txt"
timeout 200 /tmp/pp/jump_sweep2 few > "$R/sweep-few.txt" 2>&1; echo "sweep rc $?"; cat "$R/sweep-few.txt"
cd $OUT && tar -czf results.tar.gz r && rm -rf r
