#!/bin/bash
# Device call 6 (one H200): Nsight Compute sections of torch.compile's RMS norm kernel at 1024 x 32768
# fp32 and of strata's plans there (the library's, and a rows plan of 1024 threads), plus the Triton
# kernel's PTX and TTGIR from Inductor's cache.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=bench/results/raw-2026-11-29-norm-long
mkdir -p /tmp/o/triton
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats"
timeout 200 ncu --clock-control none --profile-from-start off -k regex:triton $S python3 $P/triton_one.py > /tmp/o/ncu-triton-rms32768.txt 2>&1
for f in $(grep -rl "triton_red_fused__fused_rms_norm_0" /tmp/torchinductor_root ~/.triton 2>/dev/null | grep -E "\.(ptx|ttgir|json)$"); do cp "$f" /tmp/o/triton/$(echo $f | md5sum | cut -c1-6)-$(basename $f); done
.carry/long_probe rms32768 > /tmp/o/strata-rms32768.txt 2>&1
ncu --clock-control none -k regex:"rows_kernel" $S .carry/long_probe rms32768 > /tmp/o/ncu-strata-rms32768.txt 2>&1
tar -czf $OUT/call6.tgz -C /tmp/o .
ls /tmp/o/triton; grep -E "Duration|Registers Per|Achieved Occupancy|Issued Warp|Warp Cycles Per Issued|DRAM Throughput|Memory Throughput|Executed Ipc A|L2 Hit" /tmp/o/ncu-triton-rms32768.txt /tmp/o/ncu-strata-rms32768.txt
