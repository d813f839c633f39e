#!/bin/bash
# Call 1 (one H200): build the CUDA preset (tests, demo, strata_bench) into /tmp/b for calls 2-3,
# run blocked_counter (timed, then every launch once under ncu) and strata_bench's permute and
# gather rows with the memcpy of the same run.
set -u
start=$SECONDS
O=$OUT/c1 && mkdir -p $O
cmake --preset cuda -B /tmp/b > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1
echo "build rc $? in $((SECONDS - start)) s"; tail -2 /tmp/build.log
P=bench/results/raw-2026-11-30-blocked-counter
nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -o /tmp/bcp $P/blocked_counter.cu && echo "probe built $((SECONDS - start)) s"
timeout 120 /tmp/bcp > $O/blocked.txt 2>&1; echo "probe rc $? $((SECONDS - start)) s"
timeout 150 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum -k regex:gq /tmp/bcp once > $O/blocked-ncu.txt 2>&1; echo "ncu rc $? $((SECONDS - start)) s"
timeout 150 /tmp/b/bench/strata_bench --benchmark_filter='memcpy/d2d|permute|gather' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out=$O/lifecycle.json --benchmark_out_format=json > $O/lifecycle.txt 2>&1; echo "bench rc $? $((SECONDS - start)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
cat $O/blocked.txt; grep -E "memcpy|permute|gather" $O/lifecycle.txt | grep -v "_stddev\|_cv\|_mean" | cut -c1-110
grep -E "gq|dram__bytes_read|sectors" $O/blocked-ncu.txt | head -0
tar -czf $OUT/c1.tar.gz -C $OUT c1 && rm -rf $O
