#!/usr/bin/env bash
# Call 3, 2 x H200: distributed_bench with its new tables (migrate's passes alone on one GPU;
# NCCL ops also at n/10 records, the 10% migrate's bytes), twice, to see where the 10% migrate's
# 2.8 ms go.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
for i in 1 2; do
  timeout 100 .carry/bench/distributed_bench --out "$R/bench$i.json" >"$R/bench$i.md" 2>&1; echo "bench rc $?"; sed -n '/NCCL exchange/,$p' "$R/bench$i.md"; grep "| 2 | " "$R/bench$i.md" | head -3
done
