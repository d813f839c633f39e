#!/usr/bin/env bash
# Call 2: cluster_probe.cu (where a cluster plan's time goes), then the normalization tests again
# with every cluster size allowed at launch, and the cluster tests under the sanitizers.
cd .carry && tar -xJf bins.tar.xz && cd ..
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64
B=.carry/bin
$B/cluster_probe > $OUT/probe.txt 2>&1
$B/normalize_test --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc $?" >> $OUT/tests.log
for tool in memcheck racecheck synccheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 99 $B/normalize_test --gtest_brief=1 \
    --gtest_filter='*Cluster*' > $OUT/san-$tool.log 2>&1 &
done
wait
for tool in memcheck racecheck synccheck initcheck; do echo "$tool: $(tail -2 $OUT/san-$tool.log | tr '\n' ' ')"; done
tail -3 $OUT/tests.log; cat $OUT/probe.txt
