#!/usr/bin/env bash
# One H200: profile_probe timed alone for each index array, then under Nsight Compute (the library's
# gather kernel of the second call, a few sections and metrics); then reduce_test's cases that
# launch from several host threads, twice under racecheck (the 2 x H200 check's stall).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/pp.tar.xz -C /tmp/pp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
for w in identity resort random permute; do /tmp/pp/profile_probe $w; done 2>&1 | tee "$R/times.txt"
m=dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
for w in identity resort random permute; do
  timeout 120 ncu --kernel-name regex:'gather_quads_kernel|gather_kernel' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics $m -o "$R/$w" /tmp/pp/profile_probe $w > "$R/ncu-$w.txt" 2>&1
  [ -f "$R/$w.ncu-rep" ] || timeout 120 ncu --kernel-name regex:'gather_quads_kernel|gather_kernel' --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats -o "$R/$w" /tmp/pp/profile_probe $w >> "$R/ncu-$w.txt" 2>&1
  ncu -i "$R/$w.ncu-rep" --page details >> "$R/ncu-$w.txt" 2>&1
  echo "ncu $w rc done at $SECONDS s"
done
for k in 1 2; do
  s=$SECONDS; timeout -k 10 100 compute-sanitizer --tool racecheck --require-cuda-init no --error-exitcode 99 /tmp/pp/reduce_test \
    --gtest_brief=1 --gtest_filter='*ConcurrentStreamsAndThreads*' > "$R/racecheck-$k.txt" 2>&1
  echo "racecheck run $k rc $? in $((SECONDS - s)) s" | tee -a "$R/racecheck-summary.txt"
done
tar -czf "$OUT/results.tar.gz" -C "$OUT" r
