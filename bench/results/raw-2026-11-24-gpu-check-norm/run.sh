#!/usr/bin/env bash
# gpu-check of b1c34df's build (normalization change a938f17) and the staging-chunk probe, one call.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .carryz/carry.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
R=$OUT/check; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
lscpu | grep -E "Model name|L3|^CPU\(s\)" | tee -a "$R/gpu.txt"
timeout 120 .dev2/ab/h2d_probe > "$R/h2d-probe.txt" 2>&1; echo "probe rc $?"; grep -E "strata|pipeline" "$R/h2d-probe.txt"
STRATA_PREBUILT=.carry STRATA_SKIP=torch,bench OUT=$R/gpu-check timeout 420 bash scripts/gpu-check.sh > "$R/gpu-check.txt" 2>&1
echo "gpu-check rc $?"; tail -n 16 "$R/gpu-check.txt"
tar -C "$OUT" -czf "$OUT/check.tar.gz" check && rm -rf "$R"
