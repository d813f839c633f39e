#!/usr/bin/env bash
# Call 3, one GPU: reduce_test (built on the workstation, carried) under racecheck, whole and one
# test at a time, to place the "failure to track a kernel launch" that call 2's racecheck reported.
set -u
R=$OUT/r && mkdir -p "$R"
t=.carryz/reduce_test; chmod +x $t
nvidia-smi --query-gpu=name --format=csv,noheader
for i in 1 2 3; do
  compute-sanitizer --tool racecheck --error-exitcode 99 $t --gtest_brief=1 >"$R/whole-$i.log" 2>&1
  echo "whole $i rc $? $(grep -c 'Internal Sanitizer Error' $R/whole-$i.log) internal; $(grep 'RACECHECK SUMMARY' $R/whole-$i.log)"
done
for f in $($t --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}'); do
  for i in 1 2 3; do
    compute-sanitizer --tool racecheck --error-exitcode 99 $t --gtest_filter="$f" >"$R/$f-$i.log" 2>&1
    echo "$f $i rc $? $(grep -c 'Internal Sanitizer Error' $R/$f-$i.log) internal; $(grep 'RACECHECK SUMMARY' $R/$f-$i.log)"
  done
done
tar -czf "$OUT/racecheck.tar.gz" -C "$OUT" r
