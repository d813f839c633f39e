#!/bin/bash
# Call 4: 83c59fc (base, .carry/base: before gamma and beta are copied per row offset) and this
# tree; the dense-tensor probe alternated, normalize_test and its four sanitizers, norm_sweep
# once, the example, pytest, the torch correctness check. Tars results after each step.
export OUT
t0=$(date +%s)
R=/tmp/call4; mkdir -p $R
pack() { tar -czf $OUT/call4.tar.gz -C /tmp call4; }
rm -rf /tmp/src_base && mkdir /tmp/src_base && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/src_base/; done
cp -r .carry/base/include /tmp/src_base/include
(cmake --preset cuda -B /tmp/b_new -DSTRATA_PYTHON=ON > $R/cfg-new.log 2>&1 && cmake --build /tmp/b_new --target norm_sweep normalize_test strata_norm layer_norm_example _strata -j 12 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/src_base && cmake --preset cuda -B /tmp/b_base -DSTRATA_BUILD_TESTS=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/b_base --target strata_norm -j 4 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
/tmp/b_new/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
pack
for i in 0 1; do
  for v in new base; do
    timeout 100 python3 bench/results/raw-2026-11-28-norm-tail/dense_probe.py --library /tmp/b_$v/examples/libstrata_norm.so --out $R/dense-$v-$i.json > $R/dense-$v-$i.txt 2>&1; echo dense $v rc $? $(( $(date +%s) - t0 )) s
  done
done
pack
for tool in memcheck initcheck racecheck synccheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b_new/tests/normalize_test > $R/normalize_test-$tool.log 2>&1; echo $tool rc $? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" $R/normalize_test-$tool.log) $(( $(date +%s) - t0 )) s
  pack
done
timeout 60 /tmp/b_new/bench/norm_sweep --out $R/sweep-new-0.json > $R/sweep-new-0.txt 2>&1; echo sweep rc $?
/tmp/b_new/examples/layer_norm_example > $R/layer_norm_example.log 2>&1; echo example rc $?
mkdir -p /tmp/py/strata; cp python/strata/*.py /tmp/b_new/python/_strata*.so /tmp/py/strata/ && (cd python/tests && PYTHONPATH=/tmp/py timeout 200 python3 -m pytest -q . > $R/pytest.log 2>&1; echo pytest rc $? $(tail -1 $R/pytest.log))
pack
timeout 120 python3 bench/layer_norm_torch.py --library /tmp/b_new/examples/libstrata_norm.so --out $R/torch.json > $R/torch.log 2>&1; echo torch rc $? $(tail -1 $R/torch.log)
pack
echo done $(( $(date +%s) - t0 )) s
