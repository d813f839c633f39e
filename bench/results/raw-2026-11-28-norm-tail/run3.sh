#!/bin/bash
# Call 3: 0fed7e8 (base, .carry/base) and this tree (new: a rows-kernel variant of its own for rows
# ending in a partial unit), built in one call; norm_sweep alternated three times each, the dense
# tensor probe alternated twice each, --validate, normalize_test under the four sanitizers, the
# example, pytest, then torch (coarse sweep). Tars results after each step.
export OUT
t0=$(date +%s)
R=/tmp/call3; mkdir -p $R
pack() { tar -czf $OUT/call3.tar.gz -C /tmp call3; }
rm -rf /tmp/src_base && mkdir /tmp/src_base && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/src_base/; done
cp -r .carry/base/include /tmp/src_base/include; cp .carry/base/bench/* /tmp/src_base/bench/
(cmake --preset cuda -B /tmp/b_new -DSTRATA_PYTHON=ON > $R/cfg-new.log 2>&1 && cmake --build /tmp/b_new --target norm_sweep normalize_test strata_norm layer_norm_example _strata -j 10 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/src_base && cmake --preset cuda -B /tmp/b_base -DSTRATA_BUILD_TESTS=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/b_base --target norm_sweep strata_norm -j 6 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in base new; do
  cuobjdump --dump-resource-usage /tmp/b_$v/bench/norm_sweep 2>/dev/null | grep -A1 "rows_kernel" | grep -o "Function [^:]*:\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - > $R/regs-$v.txt
done
for i in 0 1 2; do
  for v in new base; do
    timeout 60 /tmp/b_$v/bench/norm_sweep --out $R/sweep-$v-$i.json > $R/sweep-$v-$i.txt 2>&1; echo sweep $v rc $? $(( $(date +%s) - t0 )) s
  done
done
pack
for i in 0 1; do
  for v in new base; do
    timeout 100 python3 bench/results/raw-2026-11-28-norm-tail/dense_probe.py --library /tmp/b_$v/examples/libstrata_norm.so --out $R/dense-$v-$i.json > $R/dense-$v-$i.txt 2>&1; echo dense $v rc $? $(( $(date +%s) - t0 )) s
  done
done
pack
/tmp/b_new/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
timeout 100 /tmp/b_new/bench/norm_sweep --validate --out $R/validate-new.json > $R/validate-new.txt 2>&1; echo validate rc $?
pack
for tool in memcheck initcheck racecheck synccheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b_new/tests/normalize_test > $R/normalize_test-$tool.log 2>&1; echo $tool rc $? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" $R/normalize_test-$tool.log) $(( $(date +%s) - t0 )) s
done
/tmp/b_new/examples/layer_norm_example > $R/layer_norm_example.log 2>&1; echo example rc $?
mkdir -p /tmp/py/strata; cp python/strata/*.py /tmp/b_new/python/_strata*.so /tmp/py/strata/ && (cd python/tests && PYTHONPATH=/tmp/py timeout 200 python3 -m pytest -q . > $R/pytest.log 2>&1; echo pytest rc $? $(tail -1 $R/pytest.log))
pack
left=$(( 575 - ($(date +%s) - t0) ))
echo torch budget $left s
timeout $left python3 bench/layer_norm_torch.py --library /tmp/b_new/examples/libstrata_norm.so --out $R/torch.json --sweep coarse > $R/torch.log 2>&1; echo torch rc $? $(tail -1 $R/torch.log)
pack
echo done $(( $(date +%s) - t0 )) s
