#!/bin/bash
# Call 2: three builds in one call: 0fed7e8 (base, .carry/base), 24d39d3 (mid, .carry/mid: tails
# in the whole-unit kernel) and this tree (new: rows of whole units run a copy without the tail);
# norm_sweep alternated three times each, normalize_test and memcheck of new, register counts.
export OUT
t0=$(date +%s)
R=/tmp/call2; mkdir -p $R
pack() { tar -czf $OUT/call2.tar.gz -C /tmp call2; }
for v in base mid; do
  rm -rf /tmp/src_$v && mkdir /tmp/src_$v && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/src_$v/; done
  cp -r .carry/$v/include /tmp/src_$v/include
  [ -d .carry/$v/bench ] && cp .carry/$v/bench/* /tmp/src_$v/bench/
done
(cmake --preset cuda -B /tmp/b_new > $R/cfg-new.log 2>&1 && cmake --build /tmp/b_new --target norm_sweep normalize_test -j 6 > $R/build-new.log 2>&1; echo new-build $?) &
for v in base mid; do
  (cd /tmp/src_$v && cmake --preset cuda -B /tmp/b_$v -DSTRATA_BUILD_TESTS=OFF > $R/cfg-$v.log 2>&1 && cmake --build /tmp/b_$v --target norm_sweep -j 4 > $R/build-$v.log 2>&1; echo $v-build $?) &
done
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in base mid new; do
  cuobjdump --dump-resource-usage /tmp/b_$v/bench/norm_sweep 2>/dev/null | grep -A1 "rows_kernel" | grep -o "Function [^:]*:\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - > $R/regs-$v.txt
done
for i in 0 1 2; do
  for v in new base mid; do
    timeout 60 /tmp/b_$v/bench/norm_sweep --out $R/sweep-$v-$i.json > $R/sweep-$v-$i.txt 2>&1; echo sweep $v rc $? $(( $(date +%s) - t0 )) s
  done
done
pack
/tmp/b_new/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 /tmp/b_new/tests/normalize_test > $R/normalize_test-memcheck.log 2>&1; echo memcheck rc $? $(grep "ERROR SUMMARY" $R/normalize_test-memcheck.log)
timeout 100 /tmp/b_new/bench/norm_sweep --validate --out $R/validate-new.json > $R/validate-new.txt 2>&1; echo validate rc $?
pack
echo done $(( $(date +%s) - t0 )) s
