#!/bin/bash
# Call 5: the copies only where a unit's element-wise affine reads number 16 or more (16-bit
# gamma and beta) on inputs of 32 MiB or more; 83c59fc (base, .carry/base) against this tree on
# the dense-tensor probe, normalize_test, memcheck and initcheck. Tars results after each step.
export OUT
t0=$(date +%s)
R=/tmp/call5; mkdir -p $R
pack() { tar -czf $OUT/call5.tar.gz -C /tmp call5; }
rm -rf /tmp/src_base && mkdir /tmp/src_base && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/src_base/; done
cp -r .carry/base/include /tmp/src_base/include
(cmake --preset cuda -B /tmp/b_new > $R/cfg-new.log 2>&1 && cmake --build /tmp/b_new --target normalize_test strata_norm -j 12 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/src_base && cmake --preset cuda -B /tmp/b_base -DSTRATA_BUILD_TESTS=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/b_base --target strata_norm -j 4 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
/tmp/b_new/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
pack
for v in new base; do
  timeout 60 python3 bench/results/raw-2026-11-28-norm-tail/dense_probe.py --library /tmp/b_$v/examples/libstrata_norm.so --out $R/dense-$v-0.json > $R/dense-$v-0.txt 2>&1; echo dense $v rc $? $(( $(date +%s) - t0 )) s
  pack
done
for tool in memcheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b_new/tests/normalize_test > $R/normalize_test-$tool.log 2>&1; echo $tool rc $? $(grep "ERROR SUMMARY" $R/normalize_test-$tool.log) $(( $(date +%s) - t0 )) s
  pack
done
echo done $(( $(date +%s) - t0 )) s
