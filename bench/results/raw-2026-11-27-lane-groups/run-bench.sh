#!/usr/bin/env bash
# Device call (one H200): strata_bench's conversion rows, the build before this change (old: the
# packed binary of raw-2026-11-27-block-tile, whose library is d969b36's) and this change's (new:
# scripts/pack-gpu-build.sh of 140df4e), alternating twice.
set -u
tar -xJf .carryz/carry.tar.xz && tar -xJf .carryz/block-tile.tar.xz -C /tmp
export LD_LIBRARY_PATH=$PWD/.carry/lib:/tmp/bt-pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
F='memcpy/d2d|aos_to_soa|soa_to_aos'
for r in 1 2; do
  /tmp/bt-pack/new/strata_bench --benchmark_filter="$F" --benchmark_out=$OUT/old-$r.json --benchmark_out_format=json > /dev/null 2>&1
  .carry/bench/strata_bench --benchmark_filter="$F" --benchmark_out=$OUT/new-$r.json --benchmark_out_format=json > /dev/null 2>&1
done
ls $OUT
