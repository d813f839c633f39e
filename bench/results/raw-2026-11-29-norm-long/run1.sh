#!/bin/bash
# Device call 1 (one H200): long_probe timing, Nsight Compute of strata's long-row kernels and of
# torch.compile's for the same shapes, Inductor's generated source, torch.compile timings.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
.carry/long_probe time > /tmp/o/time.md 2>&1
ncu --clock-control none -k regex:"rows_kernel|streamed_kernel" --metrics $M --csv .carry/long_probe ncu > /tmp/o/ncu-strata.csv 2>&1
TORCH_LOGS=output_code timeout 300 python3 $P/inductor_probe.py > /tmp/o/torch-time.md 2> /tmp/o/inductor-code.txt
timeout 200 ncu --clock-control none --profile-from-start off -k regex:triton --metrics $M --csv python3 $P/inductor_probe.py --ncu > /tmp/o/ncu-torch.csv 2>&1
tar -czf $OUT/call1.tgz -C /tmp/o .
cat /tmp/o/time.md /tmp/o/torch-time.md; tail -3 /tmp/o/ncu-strata.csv /tmp/o/ncu-torch.csv
