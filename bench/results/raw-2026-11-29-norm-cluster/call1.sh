#!/usr/bin/env bash
# Call 1: cluster plans (shape::cluster) against the chosen plans, every plan weighed timed
# (norm_sweep --validate) at long rows; the cluster tests, also under memcheck / racecheck / synccheck.
cd .carry && tar -xJf bins.tar.xz && cd ..
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64
B=.carry/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
$B/normalize_test --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc $?" >> $OUT/tests.log
$B/norm_sweep --validate --hidden 8192,12288,14592,16384,32768,65536,131072,262144 --out $OUT/validate.json > $OUT/validate.md 2>&1
for tool in memcheck racecheck synccheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 99 $B/normalize_test --gtest_brief=1 \
    --gtest_filter='*Cluster*:*EveryRowLength*' > $OUT/san-$tool.log 2>&1 &
done
wait
for tool in memcheck racecheck synccheck initcheck; do echo "$tool: $(tail -3 $OUT/san-$tool.log | tr '\n' ' ')"; done
tail -5 $OUT/tests.log
