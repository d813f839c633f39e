# SPDX-License-Identifier: Apache-2.0
"""h5py writing and reading the datasets bench/io.cpp writes (one float32 dataset per leaf of the
benchmark particle, the same chunks, maxshape and checksum filter) from NumPy arrays on the same
file system, and the comparison with io_bench's figures as JSON and a markdown table.

    io_bench --n 67108864 --dir /tmp --json io_bench.json
    python3 bench/io_h5py.py --strata io_bench.json --dir /tmp --out bench/results/<gpu>/<date>/io

Timings are wall clock, file creation to close, best of --repeat, as io_bench takes them.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import h5py
import numpy as np

LEAVES = ["x", "y", "z", "vx", "vy", "vz", "mass"]


def best_of(repeat, setup, body):
    best = float("inf")
    for _ in range(repeat):
        setup()
        t0 = time.perf_counter()
        body()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", required=True, help="io_bench's JSON")
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", required=True, help="path prefix of the results (.json and .md are added)")
    args = ap.parse_args()

    strata = json.loads(pathlib.Path(args.strata).read_text())
    n, chunk = int(strata["n"]), int(strata["chunk_records"])
    nbytes = n * 4 * len(LEAVES)
    rng = np.random.default_rng(1)
    columns = {leaf: rng.standard_normal(n, dtype=np.float32) for leaf in LEAVES}
    path = os.path.join(args.dir, "h5py-io-bench.h5")
    cases = []

    def report(name, seconds, what):
        gbs = nbytes / seconds * 1e-9
        print(f"{name:<28} {seconds * 1e3:10.1f} ms {gbs:8.2f} GB/s  {what}")
        cases.append({"case": name, "seconds": seconds, "GB/s": gbs, "what": what})

    def fresh():
        if os.path.exists(path):
            os.remove(path)

    for checksum in (True, False):
        tag = "" if checksum else " nochecksum"

        def write():
            with h5py.File(path, "w") as f:
                g = f.create_group("particles")
                for leaf, values in columns.items():
                    g.create_dataset(leaf, data=values, chunks=(min(chunk, n),), maxshape=(None,), fletcher32=checksum)

        report("h5py write" + tag, best_of(args.repeat, fresh, write), "NumPy columns to the file")
        into = {leaf: np.empty(n, np.float32) for leaf in LEAVES}

        def read():
            with h5py.File(path, "r") as f:
                for leaf in LEAVES:
                    f["particles"][leaf].read_direct(into[leaf])

        report("h5py read_direct" + tag, best_of(args.repeat, lambda: None, read), "the file into NumPy columns allocated once")
        for leaf in LEAVES:
            assert np.array_equal(into[leaf], columns[leaf]), leaf
        got = {}

        def read_new():
            got.clear()
            with h5py.File(path, "r") as f:
                for leaf in LEAVES:
                    got[leaf] = f["particles"][leaf][:]

        report("h5py read" + tag, best_of(args.repeat, lambda: None, read_new), "the file to new NumPy columns (ds[:])")
        for leaf in LEAVES:
            assert np.array_equal(got[leaf], columns[leaf]), leaf
    fresh()

    by = {c["case"]: c for c in strata["cases"]}
    ours = {c["case"]: c for c in cases}
    rows = []
    for tag in ("", " nochecksum"):
        for op, variants in (("write", ("host soa", "device soa", "device aos")), ("read", ("host soa", "device soa", "device aos"))):
            # strata's read returns a new container: its peer is h5py's ds[:] (new arrays); read_direct
            # into arrays allocated once is shown beside it.
            peer = ours["h5py " + op + tag]
            direct = ours.get("h5py read_direct" + tag) if op == "read" else None
            for v in variants:
                s = by[f"{op} {v}{tag}"]
                row = {"case": f"{op} {v}{tag}", "strata GB/s": s["GB/s"], "h5py GB/s": peer["GB/s"], "x h5py": s["GB/s"] / peer["GB/s"]}
                if direct:
                    row["h5py read_direct GB/s"] = direct["GB/s"]
                rows.append(row)
    copy = {c: by[c]["GB/s"] for c in ("copy device to pinned", "copy pinned to device")}
    result = {"strata": strata, "h5py": {"version": h5py.version.version, "hdf5": h5py.version.hdf5_version, "cases": cases}, "comparison": rows,
              "copy GB/s": copy}
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"{strata['n']} particles ({nbytes / 2**30:.2f} GiB, 7 float32 leaves), chunks of {chunk} records, best of {args.repeat}; "
             f"strata with HDF5 {strata['hdf5']}, h5py {h5py.version.version} with HDF5 {h5py.version.hdf5_version}; "
             f"copy alone: device to pinned {copy['copy device to pinned']:.2f} GB/s, pinned to device {copy['copy pinned to device']:.2f} GB/s",
             "", "Writes against h5py's create_dataset(data=...); reads (strata returns a new container) against h5py's ds[:] (new arrays), "
             "with read_direct into arrays allocated once beside them.",
             "", "| case | strata GB/s | h5py GB/s | x h5py | h5py read_direct GB/s |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['case']} | {r['strata GB/s']:.2f} | {r['h5py GB/s']:.2f} | {r['x h5py']:.2f} | "
              f"{r['h5py read_direct GB/s']:.2f} |" if "h5py read_direct GB/s" in r else
              f"| {r['case']} | {r['strata GB/s']:.2f} | {r['h5py GB/s']:.2f} | {r['x h5py']:.2f} |  |" for r in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
