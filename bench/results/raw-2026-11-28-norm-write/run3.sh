#!/bin/bash
export OUT
t0=$(date +%s)
R=/tmp/res3; mkdir -p $R
rm -rf /tmp/base_src && mkdir /tmp/base_src && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/base_src/; done; cp -r .carry/base/include /tmp/base_src/include
(cmake --preset cuda -B /tmp/b > $R/cfg-new.log 2>&1 && cmake --build /tmp/b --target norm_sweep normalize_test strata_norm layer_norm_example -j 12 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/base_src && cmake --preset cuda -B /tmp/bb -DSTRATA_BUILD_TESTS=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/bb --target norm_sweep -j 4 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
/tmp/b/tests/normalize_test > $R/normalize_test.log 2>&1; echo test rc $? $(tail -1 $R/normalize_test.log)
for tool in memcheck initcheck racecheck synccheck; do
  STRATA_TEST_SANITIZER=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 /tmp/b/tests/normalize_test > $R/normalize_test-$tool.log 2>&1; echo $tool rc $? $(grep "ERROR SUMMARY" $R/normalize_test-$tool.log) $(( $(date +%s) - t0 )) s
done
/tmp/b/examples/layer_norm_example > $R/layer_norm_example.log 2>&1; echo example rc $?
timeout 120 python3 bench/layer_norm_torch.py --library /tmp/b/examples/libstrata_norm.so --out $R/torch-check.json > $R/torch-check.log 2>&1; echo torch-check rc $? $(tail -2 $R/torch-check.log)
for v in new base new base new base; do
  b=/tmp/b; [ $v = base ] && b=/tmp/bb
  i=$(ls $R | grep -c "sweep-$v.*json")
  timeout 60 $b/bench/norm_sweep --out $R/sweep-$v-$i.json > $R/sweep-$v-$i.txt 2>&1; echo sweep $v rc $? $(( $(date +%s) - t0 )) s
done
timeout 120 /tmp/b/bench/norm_sweep --validate --hidden 1023,1025,4095,4097,12544,15616,16128,16384,32768 --out $R/validate.json > $R/validate.txt 2>&1; echo validate rc $?
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
for h in 4097 15616; do
  timeout 100 ncu --clock-control none -k regex:rows_kernel --print-summary per-kernel --metrics $M /tmp/b/bench/norm_sweep --hidden $h --out /tmp/x.json > $R/ncu-$h.txt 2>&1; echo ncu $h rc $? $(( $(date +%s) - t0 )) s
done
tar -czf $OUT/res3.tar.gz -C /tmp res3
