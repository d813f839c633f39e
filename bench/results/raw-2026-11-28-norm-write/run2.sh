#!/bin/bash
export OUT
t0=$(date +%s)
mkdir -p /tmp/res
rm -rf /tmp/base_src && mkdir /tmp/base_src && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/base_src/; done; cp -r .carry/base/include /tmp/base_src/include
(cmake --preset cuda -B /tmp/b > /tmp/res/cfg-new.log 2>&1 && cmake --build /tmp/b --target norm_sweep normalize_test -j 12 > /tmp/res/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/base_src && cmake --preset cuda -B /tmp/bb -DSTRATA_BUILD_TESTS=OFF > /tmp/res/cfg-base.log 2>&1 && cmake --build /tmp/bb --target norm_sweep -j 4 > /tmp/res/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
/tmp/b/tests/normalize_test > /tmp/res/normalize_test.log 2>&1; echo test rc $? $(tail -1 /tmp/res/normalize_test.log)
STRATA_TEST_SANITIZER=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b/tests/normalize_test > /tmp/res/normalize_test-memcheck.log 2>&1; echo memcheck rc $? $(grep "ERROR SUMMARY" /tmp/res/normalize_test-memcheck.log)
echo tested $(( $(date +%s) - t0 )) s
for v in new base new base; do
  [ $(( $(date +%s) - t0 )) -gt 420 ] && break
  b=/tmp/b; [ $v = base ] && b=/tmp/bb
  i=$(ls /tmp/res | grep -c "sweep-$v")
  timeout 150 $b/bench/norm_sweep --out /tmp/res/sweep-$v-$i.json > /tmp/res/sweep-$v-$i.txt 2>&1; echo sweep $v rc $? $(( $(date +%s) - t0 )) s
done
tar -czf $OUT/res.tar.gz -C /tmp res
