#!/usr/bin/env bash
# One H200, the library with the span counter (gather's blocks take spans in turn): choice_probe
# (raw-2026-11-28-gather-quads, rebuilt: the count's way and each way forced, re-sorts after 0-150
# steps and a random permutation, memcpy in the same run), the re-sort's columns gather under
# Nsight Compute (profile_probe), lifecycle_test, and its gather and permute cases under the four
# sanitizers side by side.
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/v.tar.xz -C /tmp/pp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
s=$SECONDS; timeout 100 /tmp/pp/choice_probe 2>&1 | tee "$R/choice.txt"; echo "choice_probe done in $((SECONDS - s)) s"
timeout 40 ncu --kernel-name regex:gather_quads_kernel --launch-skip 1 --launch-count 1 \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
  /tmp/pp/profile_probe resort > "$R/ncu-resort.txt" 2>&1; grep -E "dram__|gpu__time|resort:" "$R/ncu-resort.txt"
s=$SECONDS; timeout 60 /tmp/pp/lifecycle_test --gtest_brief=1 > "$R/lifecycle.txt" 2>&1; echo "lifecycle_test rc $? in $((SECONDS - s)) s"; tail -3 "$R/lifecycle.txt"
export STRATA_TEST_SANITIZER=1
for tool in memcheck racecheck initcheck synccheck; do
  extra=""; [ $tool = memcheck ] && extra="--leak-check full"
  timeout -k 5 75 compute-sanitizer --tool $tool $extra --error-exitcode 99 /tmp/pp/lifecycle_test --gtest_brief=1 \
    --gtest_filter='*Gather*:*Permute*:*Indices*' > "$R/$tool.txt" 2>&1 &
done
wait
for tool in memcheck racecheck initcheck synccheck; do echo "$tool: $(grep -E 'SUMMARY|PASSED|FAILED' "$R/$tool.txt" | tr '\n' ' ')"; done
tar -czf "$OUT/results.tar.gz" -C "$OUT" r
