#!/usr/bin/env bash
# Device call after the gpu-check of 0521202 ran past its time limit in the sanitizer stage:
# synccheck on the two test binaries this stop changed (compaction and normalization tests) and
# racecheck on rows_test (which the timed-out racecheck had not reached), from the same packed build.
set -uo pipefail
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-} STRATA_TEST_SANITIZER=1
mkdir -p "$OUT/f"
timeout 80 compute-sanitizer --tool synccheck --error-exitcode 9 .ab/lifecycle_test --gtest_brief=1 --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$OUT/f/synccheck-lifecycle.txt" 2>&1; echo "synccheck lifecycle rc $?"; tail -1 "$OUT/f/synccheck-lifecycle.txt"
timeout 60 compute-sanitizer --tool synccheck --error-exitcode 9 .ab/normalize_test --gtest_brief=1 > "$OUT/f/synccheck-normalize.txt" 2>&1; echo "synccheck normalize rc $?"; tail -1 "$OUT/f/synccheck-normalize.txt"
timeout 50 compute-sanitizer --tool racecheck --error-exitcode 9 .ab/rows_test --gtest_brief=1 > "$OUT/f/racecheck-rows.txt" 2>&1; echo "racecheck rows rc $?"; tail -1 "$OUT/f/racecheck-rows.txt"
