#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs dependencies, builds the host backend, runs every test, then
# installs the Python module (host backend) and runs its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset host
cmake --build --preset host
ctest --preset host -j 2
bash scripts/test-python.sh
