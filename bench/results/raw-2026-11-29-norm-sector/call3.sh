#!/usr/bin/env bash
# Call 3 (call 4: the write path kept single; call 5: the partial unit written by one element store per thread): the rows kernel storing a matrix row's partial last unit whole (args::pad_tail).
# normalize_test (every case), full norm_sweep alternated A B A B (A = f20f459, B = this change),
# then normalize_test under the four sanitizers. Outputs in one archive.
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
R=$OUT/call${CALL:-3} && mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
/tmp/ab/normalize_test --gtest_brief=1 > $R/tests.log 2>&1; echo "tests rc $?" >> $R/tests.log
for i in 1 2; do
  for v in A B; do /tmp/ab/norm_sweep_$v --out $R/sweep-$v$i.json > $R/sweep-$v$i.md 2>&1; done
done
for tool in memcheck racecheck synccheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 420 compute-sanitizer --tool $tool --error-exitcode 99 /tmp/ab/normalize_test --gtest_brief=1 \
    > $R/san-$tool.log 2>&1 &
done
wait
tar -czf $OUT/call${CALL:-3}.tar.gz -C $OUT call${CALL:-3} && rm -rf $R
