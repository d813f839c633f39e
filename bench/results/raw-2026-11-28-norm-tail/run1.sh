#!/bin/bash
# Call 1: this tree and 0fed7e8 (in .carry/base) built on the device; tests, sanitizers, the
# example, pytest, norm_sweep alternated, --validate, then torch. Tars results after each step.
export OUT
t0=$(date +%s)
R=/tmp/call1; mkdir -p $R
pack() { tar -czf $OUT/call1.tar.gz -C /tmp call1; }
rm -rf /tmp/base_src && mkdir /tmp/base_src && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/base_src/; done; cp -r .carry/base/include /tmp/base_src/include
(cmake --preset cuda -B /tmp/b -DSTRATA_PYTHON=ON > $R/cfg-new.log 2>&1 && cmake --build /tmp/b --target norm_sweep normalize_test strata_norm layer_norm_example _strata -j 12 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/base_src && cmake --preset cuda -B /tmp/bb -DSTRATA_BUILD_TESTS=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/bb --target norm_sweep -j 4 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
/tmp/b/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
pack
for v in new base new base new base; do
  b=/tmp/b; [ $v = base ] && b=/tmp/bb
  i=$(ls $R | grep -c "sweep-$v.*json")
  timeout 60 $b/bench/norm_sweep --out $R/sweep-$v-$i.json > $R/sweep-$v-$i.txt 2>&1; echo sweep $v rc $? $(( $(date +%s) - t0 )) s
done
timeout 100 /tmp/b/bench/norm_sweep --validate --out $R/validate-all.json > $R/validate-all.txt 2>&1; echo validate rc $?
pack
for tool in memcheck initcheck racecheck synccheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/tests/normalize_test > $R/normalize_test-$tool.log 2>&1; echo $tool rc $? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" $R/normalize_test-$tool.log) $(( $(date +%s) - t0 )) s
  pack
done
/tmp/b/examples/layer_norm_example > $R/layer_norm_example.log 2>&1; echo example rc $?
mkdir -p /tmp/py/strata; cp python/strata/*.py /tmp/b/python/_strata*.so /tmp/py/strata/ && (cd python/tests && PYTHONPATH=/tmp/py timeout 200 python3 -m pytest -q . > $R/pytest.log 2>&1; echo pytest rc $? $(tail -1 $R/pytest.log))
echo pytest done $(( $(date +%s) - t0 )) s
pack
left=$(( 570 - ($(date +%s) - t0) ))
echo torch budget $left s
timeout $left python3 bench/layer_norm_torch.py --library /tmp/b/examples/libstrata_norm.so --out $R/torch.json --sweep coarse > $R/torch.log 2>&1; echo torch rc $? $(tail -1 $R/torch.log)
pack
echo done $(( $(date +%s) - t0 )) s
