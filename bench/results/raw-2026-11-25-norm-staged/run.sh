#!/usr/bin/env bash
# Device call: normalize_test (GPU; racecheck and memcheck on the staged-plan tests) and norm_sweep --validate,
# a packed build of ba5c89e + staged.diff in .carryz/ab.tar.xz.
set -uo pipefail
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-}
R=$OUT/c1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 100 .ab/normalize_test --gtest_brief=1 > $R/test.txt 2>&1; echo "test rc $?"; tail -3 $R/test.txt
timeout 200 .ab/norm_sweep --validate --out $R/validate.json > $R/validate.md 2>&1; echo "validate rc $?"; head -3 $R/validate.md
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 .ab/normalize_test --gtest_brief=1 --gtest_filter='*Staged*' > $R/san-racecheck.txt 2>&1; echo "racecheck rc $?"; tail -2 $R/san-racecheck.txt
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .ab/normalize_test --gtest_brief=1 --gtest_filter='*Staged*' > $R/san-memcheck.txt 2>&1; echo "memcheck rc $?"; tail -2 $R/san-memcheck.txt
