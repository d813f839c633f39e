#!/usr/bin/env bash
# Call 1, 2 x H200: the CUDA preset of this tree built on the device (/tmp/b), then gpu-check's
# tests and demos (particles --gpus 2 included), then distributed_bench --gpus 2 while time is left.
set -u
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r ga 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
git log -1 --format=%H > "$R/rev.txt" 2>/dev/null
s=$SECONDS
(cmake --preset cuda -B /tmp/b && cmake --build /tmp/b) >"$R/build.log" 2>&1; echo "build rc $? in $((SECONDS - s)) s"
tail -3 "$R/build.log"
STRATA_PREBUILT=/tmp/b STRATA_SKIP=build,sanitize,torch,bench OUT=$OUT/ga timeout 330 bash scripts/gpu-check.sh 2>&1 | tail -25
save
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="/tmp/b/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
left=$((570 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left /tmp/b/bench/distributed_bench --gpus 2 --parts migrate,scaling,passes --reps 3 --out "$R/bench.json" >"$R/bench.md" 2>&1; echo "bench rc $? at $SECONDS s"
  tail -40 "$R/bench.md"
fi
save
