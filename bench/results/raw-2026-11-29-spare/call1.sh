#!/usr/bin/env bash
# One H200: the library with gather's window count, the records way's span counter and the spare
# reorders. lifecycle_test, its gather / permute / sort cases under the four sanitizers, the
# particle demo (sort_by through a spare) plain and under memcheck, spare_probe, choice_probe
# (../raw-2026-11-28-gather-quads/) and jump_sweep few (../raw-2026-11-29-jump-sweep/).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/c4.tar.xz -C /tmp/pp
git log -1 --format=%H > "$R/rev.txt" 2>/dev/null
timeout 120 /tmp/pp/lifecycle_test > "$R/lifecycle.txt" 2>&1; echo "lifecycle rc $?"; tail -n 3 "$R/lifecycle.txt"
F='--gtest_filter=*Gather*:*Jump*:*Permute*:*Indices*:*Spans*:*Spare*'
for t in memcheck racecheck initcheck synccheck; do
  timeout 150 compute-sanitizer --tool $t --error-exitcode 9 /tmp/pp/lifecycle_test "$F" > "$R/sanitize-$t.txt" 2>&1; echo "$t rc $?"; tail -n 2 "$R/sanitize-$t.txt"
done
timeout 60 /tmp/pp/particles > "$R/demo.txt" 2>&1; echo "demo rc $?"; tail -n 12 "$R/demo.txt"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/pp/particles > "$R/demo-memcheck.txt" 2>&1; echo "demo memcheck rc $?"; tail -n 2 "$R/demo-memcheck.txt"
timeout 120 /tmp/pp/spare_probe > "$R/spare.txt" 2>&1; echo "spare rc $?"; cat "$R/spare.txt"
timeout 100 /tmp/pp/choice3 > "$R/choice.txt" 2>&1; echo "choice rc $?"; tail -n 9 "$R/choice.txt"
timeout 150 /tmp/pp/jump_sweep3 few > "$R/sweep-few.txt" 2>&1; echo "sweep rc $?"; grep -E "^###|uniform|re-sort" "$R/sweep-few.txt"
cd $OUT && tar -czf results.tar.gz r && rm -rf r
