#!/usr/bin/env bash
# One call per machine (H100, then H200): convert_test (the pinned path's test among them), its
# host-transfer tests under memcheck, then the probe twice (5 rounds x 5 reps, variants interleaved).
set -u
lscpu | grep -E "Model name|L3"
.carryz/convert_test --gtest_brief=1 2>&1 | tail -3
STRATA_TEST_SANITIZER=1 compute-sanitizer --tool memcheck --error-exitcode 99 .carryz/convert_test --gtest_filter='ConvertHost.*' --gtest_brief=1 2>&1 | tail -3
.carryz/h2d_nt_probe 5 5
.carryz/h2d_nt_probe 5 5 | tail -18
