#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's demo command: the CUDA build when a GPU answers, the host backend otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
preset=host
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; then
  preset=cuda
fi
echo "demo: building the $preset backend"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target strata_cli
exec "build/$preset/src/strata" demo "$@"
