#!/bin/bash
set -x
export OUT
t0=$(date +%s)
(cmake --preset cuda -B /tmp/b -DSTRATA_BUILD_TESTS=OFF > /tmp/cfg.log 2>&1 || cmake --preset cuda -B /tmp/b > /tmp/cfg.log 2>&1) && cmake --build /tmp/b --target norm_sweep -j 16 2>&1 | tail -3
echo build $(( $(date +%s) - t0 )) s
nvidia-smi --query-gpu=name,driver_version --format=csv
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio,sm__cycles_elapsed.avg.per_second,smsp__warps_launched.sum
for h in 1024 4097 13824 15616; do
  timeout 150 ncu --clock-control none -k regex:rows_kernel --print-summary per-kernel --metrics $M /tmp/b/bench/norm_sweep --hidden $h --out /tmp/ns-$h.json > $OUT/ncu-$h.txt 2>&1
  echo h=$h rc=$? $(( $(date +%s) - t0 )) s
done
/tmp/b/bench/norm_sweep --hidden 1024,4097,13824,15616 --out $OUT/plain.json > $OUT/plain.txt 2>&1
cuobjdump -res-usage /tmp/b/bench/norm_sweep 2>/dev/null | grep -A1 rows_kernel | grep -o "Function [^:]*\|REG:[0-9]*\|STACK:[0-9]*" | paste - - - > $OUT/res.txt
cuobjdump -sass /tmp/b/bench/norm_sweep > /tmp/sass.txt 2>/dev/null; python3 - <<'PY' > $OUT/sass-counts.txt
import re,collections
cur=None; cnt=collections.Counter(); out={}
for line in open('/tmp/sass.txt'):
    m=re.search(r'Function : (\S+)',line)
    if m:
        if cur: out[cur]=cnt
        cur=m.group(1); cnt=collections.Counter(); continue
    m=re.match(r'\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)',line)
    if m and cur: cnt[m.group(2).split('.')[0]]+=1
if cur: out[cur]=cnt
for f,c in out.items():
    if 'rows_kernel' in f: print(f, sum(c.values()), dict(c.most_common(14)))
PY
echo done $(( $(date +%s) - t0 )) s
