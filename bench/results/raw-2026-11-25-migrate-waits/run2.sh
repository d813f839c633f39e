#!/usr/bin/env bash
# Call 2 on the 2-GPU machine, with the whole packed build of the change (scripts/pack-gpu-build.sh,
# plus bench/distributed_bench.old: this commit's bench/distributed.cpp, with its interleaved
# repetitions, built against the headers of 9b1a3a5): distributed_bench new and old alternated
# (new, old, new, old, new; BENCH_ARGS for both), then every GPU test binary and the demos through
# gpu-check (sanitizers in call 3). Results: $OUT/results.tar.gz, tables printed.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$R/gpus.txt"
args="${BENCH_ARGS:-}"
for i in 1 2 3; do
  timeout 75 .carry/bench/distributed_bench $args --out "$R/bench-new-$i.json" >"$R/bench-new-$i.md" 2>&1; echo "new $i rc $?"; tail -8 "$R/bench-new-$i.md"
  if [ $i -lt 3 ]; then
    timeout 75 .carry/bench/distributed_bench.old $args --out "$R/bench-old-$i.json" >"$R/bench-old-$i.md" 2>&1; echo "old $i rc $?"; tail -8 "$R/bench-old-$i.md"
  fi
done
STRATA_PREBUILT=.carry STRATA_SKIP=bench,torch,sanitize OUT="$R/check" timeout 200 bash scripts/gpu-check.sh >"$R/check.txt" 2>&1
echo "gpu-check rc $?"; tail -12 "$R/check.txt"
tar -xzOf "$R/check/logs.tar.gz" logs/demo-gpus.log 2>/dev/null | tail -12
tar -czf "$OUT/results.tar.gz" -C "$OUT" r && rm -rf "$R"
