#!/bin/bash
# One H200: overhead_probe timed (events, median of 7), then once under ncu (every kernel's duration).
set -u
P=bench/results/raw-2026-11-30-count-overhead
nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -Iinclude -o /tmp/ovp $P/overhead_probe.cu || exit 1
mkdir -p $OUT/c1
timeout 200 /tmp/ovp timed > $OUT/c1/timed.txt 2>&1; echo "timed rc $?"
timeout 200 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum -k regex:"far_count|gather|soa_to_aos_gated|soa_to_aos_kernel|memset" /tmp/ovp > $OUT/c1/ncu.txt 2>&1; echo "ncu rc $?"
cat $OUT/c1/timed.txt
grep -E "^  [a-zA-Z_]|gpu__time_duration|dram__bytes_read|^\|" $OUT/c1/ncu.txt | sed -E 's/\(.*//' | awk '{printf "%s ", $0} /gpu__time/ {print ""}' | sed -E 's/ +/ /g' | grep -v "Mbyte 33.5" | cut -c1-150 | head -80
