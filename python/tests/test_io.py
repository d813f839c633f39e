# SPDX-License-Identifier: Apache-2.0
"""HDF5 files that strata wrote, read with h5py alone: examples/snapshots writes a particle run's
checkpoints (scripts/test.sh passes the built program as STRATA_SNAPSHOTS_EXAMPLE), and every leaf
must be a dataset of the right dtype whose values NumPy recomputes exactly; its openPMD iterations
must pass the openPMD validator."""
import json
import os
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

EXAMPLE = os.environ.get("STRATA_SNAPSHOTS_EXAMPLE")
N, STEPS, EVERY = 3001, 12, 4
LEAVES = {"pos/x": "f4", "pos/y": "f4", "pos/z": "f4", "vel/x": "f4", "vel/y": "f4", "vel/z": "f4",
          "mass": "f4", "id": "i8", "alive": "?"}


def initial(n):
    """examples/snapshots' initial particles, computed as its initial() does."""
    i = np.arange(n, dtype=np.uint64)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    unit = lambda shift: ((((h >> np.uint64(shift)) % np.uint64(1024)).astype(np.int64) - 512) / 1024).astype(np.float32)
    return {"pos/x": unit(0), "pos/y": unit(5), "pos/z": unit(10), "vel/x": unit(15), "vel/y": unit(20), "vel/z": unit(3),
            "mass": (1.0 + (i % np.uint64(7)).astype(np.float64) / 8).astype(np.float32), "id": (i.astype(np.int64) << 20),
            "alive": np.ones(n, dtype=bool)}


def advanced(p, steps):
    """Drifted as examples/snapshots' drift does: exact in float32 (velocities and dt are multiples of powers of two)."""
    q = {k: v.copy() for k, v in p.items()}
    dt = np.float32(1 / 16)
    for _ in range(steps):
        for c in "xyz":
            q["pos/" + c] = (q["pos/" + c] + q["vel/" + c] * dt).astype(np.float32)
        q["alive"] = (q["pos/x"] >= -4) & (q["pos/x"] < 4)
    return q


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    if not EXAMPLE:
        pytest.skip("STRATA_SNAPSHOTS_EXAMPLE is not set (scripts/test.sh sets it to the built examples/snapshots)")
    path = tmp_path_factory.mktemp("io") / "run.h5"
    subprocess.run([EXAMPLE, "--n", str(N), "--steps", str(STEPS), "--every", str(EVERY), "--out", str(path)], check=True)
    with h5py.File(path, "r") as f:
        yield f


def test_every_leaf_is_a_dataset_of_its_type(snapshots):
    g = snapshots["final"]
    for name, dtype in LEAVES.items():
        assert g[name].shape == (N,), name
        assert g[name].dtype == np.dtype(dtype), name
        assert g[name].attrs["strata.type"] == {"f4": "float32", "i8": "int64", "?": "bool"}[dtype]
    assert int(g.attrs["strata.records"]) == N
    assert g.attrs["strata.leaves"].split() == ["pos.x", "pos.y", "pos.z", "vel.x", "vel.y", "vel.z", "mass", "id", "alive"]
    schema = json.loads(g.attrs["strata.schema"])
    assert [leaf["name"] for leaf in schema["leaves"]] == g.attrs["strata.leaves"].split()
    assert {leaf["name"]: leaf["bytes"] for leaf in schema["leaves"]}["id"] == 8
    assert g["pos/x"].compression == "gzip" and g["pos/x"].fletcher32


def test_values_match_numpy_at_every_checkpoint(snapshots):
    start = initial(N)
    steps = sorted(int(s) for s in snapshots["steps"])
    assert steps == list(range(0, STEPS + 1, EVERY))
    for s in steps:
        want = advanced(start, s)
        for name in LEAVES:
            got = snapshots[f"steps/{s}/{name}"][:]
            np.testing.assert_array_equal(got, want[name], err_msg=f"step {s} leaf {name}")
    for name in LEAVES:
        np.testing.assert_array_equal(snapshots[f"final/{name}"][:], snapshots[f"steps/{STEPS}/{name}"][:])


def test_ranges_read_as_slices(snapshots):
    x = snapshots["final/pos/x"]
    np.testing.assert_array_equal(x[100:200], x[:][100:200])


def test_openpmd_iterations_pass_the_validator(snapshots):
    check_h5 = pytest.importorskip("openpmd_validator.check_h5")
    errors, warnings = check_h5.check_file(snapshots.filename, verbose=False)
    assert errors == 0
    assert sorted(int(i) for i in snapshots["data"]) == list(range(0, STEPS + 1, EVERY))
    species = snapshots[f"data/{STEPS}/particles/tracers"]
    np.testing.assert_array_equal(species["position/y"][:], snapshots["final/pos/y"][:])
    np.testing.assert_array_equal(species["mass"][:], snapshots["final/mass"][:])
    assert list(species["position"].attrs["unitDimension"]) == [1, 0, 0, 0, 0, 0, 0]
    assert species["position/x"].attrs["unitSI"] == 1e-6
    assert species["positionOffset/x"].attrs["shape"][0] == N
    assert "alive" not in species  # leaves the mapping leaves out are not written


def test_openpmd_viewer_reads_the_species(snapshots):
    """openPMD-viewer (the reader openPMD's analysis scripts use) finds every iteration and reads the
    species' records with their units applied."""
    viewer = pytest.importorskip("openpmd_viewer")
    ts = viewer.OpenPMDTimeSeries(os.path.dirname(snapshots.filename), check_all_files=False)
    assert list(ts.iterations) == list(range(0, STEPS + 1, EVERY))
    assert "tracers" in ts.avail_species
    want = advanced(initial(N), STEPS)
    x, y, m = ts.get_particle(["x", "y", "mass"], species="tracers", iteration=STEPS)
    # openPMD-viewer reports SI values: the stored micrometres times their unitSI (1e-6 m), the mass
    # times its unitSI (1e-27 kg).
    np.testing.assert_allclose(x, want["pos/x"].astype(np.float64) * 1e-6, rtol=1e-6)
    np.testing.assert_allclose(y, want["pos/y"].astype(np.float64) * 1e-6, rtol=1e-6)
    np.testing.assert_allclose(m, want["mass"].astype(np.float64) * 1e-27, rtol=1e-6)
