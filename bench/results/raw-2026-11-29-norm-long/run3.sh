#!/bin/bash
# Device call 3 (one H200): looped kernel a chunk ahead, blocks up to 1024 threads: long_probe looped;
# Nsight Compute of three looped plans (ncu-looped); torch.compile's chosen Triton configs.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o
.carry/long_probe looped > /tmp/o/looped-2.md 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
ncu --clock-control none -k regex:"looped_kernel|rows_kernel|streamed_kernel" --metrics $M --csv .carry/long_probe ncu-looped > /tmp/o/ncu-looped.csv 2>&1
ncu --clock-control none -k regex:"looped_kernel" -c 2 --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis .carry/long_probe ncu-looped > /tmp/o/ncu-looped-sections.txt 2>&1
timeout 240 python3 $P/inductor_probe.py > /tmp/o/torch-time-2.md 2>&1
find /tmp/torchinductor_root -name "*.best_config" | while read f; do echo "== $f"; cat "$f"; echo; done > /tmp/o/triton-best-configs.txt 2>&1
tar -czf $OUT/call3.tgz -C /tmp/o .
cat /tmp/o/triton-best-configs.txt | head -50
