#!/usr/bin/env bash
# One H200: l2hint_probe timed; the library's gather choice (choice_probe.cu) as committed and with
# records-way-counter.diff applied; then l2hint_probe once under Nsight Compute (DRAM bytes).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/c1.tar.xz -C /tmp/pp
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$R/gpu.txt"
timeout 200 /tmp/pp/l2hint_probe 2>&1 | tee "$R/l2hint.txt"
timeout 100 /tmp/pp/choice_base > "$R/choice-base.txt" 2>&1; echo "base rc $?"
timeout 100 /tmp/pp/choice_rc > "$R/choice-records-counter.txt" 2>&1; echo "rc rc $?"
tail -12 "$R/choice-base.txt" "$R/choice-records-counter.txt"
timeout 200 ncu --kernel-name regex:gq --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum \
  /tmp/pp/l2hint_probe once > "$R/l2hint-ncu.txt" 2>&1; echo "ncu rc $?"
grep -E "gq<|dram__bytes_read" "$R/l2hint-ncu.txt" | head -60
cd $OUT && tar -czf results.tar.gz r && rm -rf r
