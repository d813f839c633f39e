#!/usr/bin/env bash
# Call 4: the library with cluster plans chosen (cluster_plan): the normalization tests, the same
# under the four sanitizers, the full sweep twice, every plan weighed at long rows (also lengths
# outside the sweep: 49152, 100000, 196608).
cd .carry && tar -xJf bins.tar.xz && cd ..
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64
B=.carry/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
$B/normalize_test --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc $?" >> $OUT/tests.log
for tool in memcheck racecheck synccheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 420 compute-sanitizer --tool $tool --error-exitcode 99 $B/normalize_test --gtest_brief=1 \
    > $OUT/san-$tool.log 2>&1 &
done
wait
$B/norm_sweep --out $OUT/sweep1.json > $OUT/sweep1.md 2>&1
$B/norm_sweep --out $OUT/sweep2.json > $OUT/sweep2.md 2>&1
$B/norm_sweep --validate --hidden 32768,49152,65536,100000,131072,196608,262144 --out $OUT/validate.json > $OUT/validate.md 2>&1
for tool in memcheck racecheck synccheck initcheck; do echo "$tool: $(tail -2 $OUT/san-$tool.log | tr '\n' ' ')"; done
tail -3 $OUT/tests.log
cut -c1-220 $OUT/validate.md
