#!/usr/bin/env bash
# Call 1: gamma and beta asked into L1 (prefetch.global.L1) before a group's barrier, in the rows
# kernel (rows of whole units) and the block rows kernel (also clusters). A = the code before
# (f20f459), B = with the prefetch; full sweeps alternated A B A B; then the standalone cluster
# probe of stop 57 with its prefetch variant.
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
R=$OUT/call1 && mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
nvcc -O3 -arch=sm_90 -std=c++20 bench/results/raw-2026-11-29-norm-cluster/affine_cluster_probe_prefetch.cu -o /tmp/probe > $R/probe-build.log 2>&1 &
for i in 1 2; do
  for v in A B; do /tmp/ab/norm_sweep_$v --out $R/sweep-$v$i.json > $R/sweep-$v$i.md 2>&1; done
done
wait
/tmp/probe > $R/probe.txt 2>&1; /tmp/probe >> $R/probe.txt 2>&1
tar -czf $OUT/call1.tar.gz -C $OUT call1 && rm -rf $R
