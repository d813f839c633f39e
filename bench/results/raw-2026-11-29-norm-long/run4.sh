#!/bin/bash
# Device call 4 (one H200): the whole-unit looped kernel (32-bit offsets, one chunk held): long_probe looped;
# Nsight Compute of three looped plans (ncu-looped); torch.compile's chosen Triton configs.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o
.carry/long_probe looped > /tmp/o/looped-3.md 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
ncu --clock-control none -k regex:"looped_kernel|rows_kernel|streamed_kernel" --metrics $M --csv .carry/long_probe ncu-looped > /tmp/o/ncu-looped.csv 2>&1
ncu --clock-control none -k regex:"looped_kernel" -c 2 --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis .carry/long_probe ncu-looped > /tmp/o/ncu-looped-sections.txt 2>&1
tar -czf $OUT/call4.tgz -C /tmp/o .
python3 - <<"PY"
import collections
b=collections.OrderedDict()
for l in open("/tmp/o/looped-3.md"):
    f=[x.strip() for x in l.strip().strip("|").split("|")]
    if len(f)<9 or f[0] in ("kind","---"): continue
    d=b.setdefault((f[0],f[1],f[2]),{})
    if f[3]=="chosen": d["c"]=(float(f[5]),f[7],f[4])
    elif "b" not in d or float(f[5])<d["b"][0]: d["b"]=(float(f[5]),f[7],f[4],f[8])
for k,d in b.items(): print(k,d["c"][1],d["c"][2][:30],"|",d["b"][1],d["b"][2],d["b"][3],round(d["c"][0]/d["b"][0],3))
PY
