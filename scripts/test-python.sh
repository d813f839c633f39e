#!/usr/bin/env bash
# The Python module: `pip install .` (the host backend unless STRATA_PIP_ARGS asks for another),
# then its pytest suite against NumPy (and PyTorch where it is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q numpy pytest
# shellcheck disable=SC2086
python3 -m pip install -q ${STRATA_PIP_ARGS:-} .
cd python/tests
python3 -m pytest -q .
