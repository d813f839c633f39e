# SPDX-License-Identifier: Apache-2.0
"""LAMMPS's bench/in.lj as whole MD steps on one GPU: strata's examples/lennard_jones beside
OpenMM's CUDA platform and JAX-MD's neighbour-list Lennard-Jones on the same system (fcc at
density 0.8442, cut at 2.5, skin 0.3, velocity-Verlet NVE, dt 0.005, T = 1.44 at start), in the
same run of this script. Writes JSON (atom-steps per second, neighbour-build time, step-0
potential energy per atom) and a markdown table with the ratios strata / peer.

    python3 bench/lj_peers.py --strata build/cuda/examples/lennard_jones --cells 20 64 128 \\
        --steps 200 --out bench/results/<gpu>/<date>/lennard_jones_peers

What each peer runs (its own fastest standard path for this system):
- OpenMM (openmm + openmm-cuda-13 from PyPI): a NonbondedForce with CutoffPeriodic at 2.5, no
  dispersion correction, no switching, zero charges; a VerletIntegrator; the CUDA platform in
  'single' precision for fp32 and 'double' for fp64 (OpenMM's own neighbour list, rebuilt as it
  decides). OpenMM uses unitful quantities: sigma = 1 nm, epsilon = 1 kJ/mol, mass = 1 amu make
  its time unit 1 ps, so dt = 0.005 ps is in.lj's step.
- JAX-MD (jax-md from PyPI, JAX on the GPU): energy.lennard_jones_neighbor_list (its cutoff is
  smoothed from r_onset = 2.0 to 2.5, which costs what the plain cut does), dr_threshold 0.3,
  simulate.nve, neighbour update every step inside a jitted lax.fori_loop of the timed steps.
- strata: examples/lennard_jones --thermo 0 (its own timing of the step loop, rebuilds included).
Each is timed after a warm-up run (compilation, first neighbour build); the time of a step loop
ends with the results on the host.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import time

import numpy as np

DENSITY, CUTOFF, SKIN, DT, T0 = 0.8442, 2.5, 0.3, 0.005, 1.44


def fcc(cells: int, seed: int = 87287):
    a = (4 / DENSITY) ** (1 / 3)
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    g = np.stack(np.meshgrid(np.arange(cells), np.arange(cells), np.arange(cells), indexing="ij"), -1).reshape(-1, 1, 3)
    pos = ((g + basis[None]) * a).reshape(-1, 3)
    rng = np.random.default_rng(seed)
    vel = rng.uniform(-0.5, 0.5, pos.shape)
    vel -= vel.mean(0)
    vel *= np.sqrt(T0 * (3 * len(pos) - 3) / (vel ** 2).sum())
    return pos, vel, a * cells


def run_strata(binary: str, cells: int, steps: int, precision: str):
    out = subprocess.run([binary, "--cells", str(cells), "--steps", str(steps), "--thermo", "0", "--precision", precision,
                          "--max-drift", "1e9"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) steps in ([\d.]+) s: ([\d.e+]+) atom-steps/s; (\d+) neighbour rebuilds .*?, ([\d.]+) s building", out)
    e = re.search(r"E_pair\(0\) = (-?[\d.]+)", out)
    build = re.search(r"path \w+, ([\d.]+) ms; Verlet list", out)
    if not m:
        raise RuntimeError("unexpected output of " + binary + ":\n" + out)
    return {"atom_steps_per_s": float(m.group(3)), "seconds": float(m.group(2)), "rebuilds": int(m.group(4)),
            "build_s_total": float(m.group(5)), "first_cell_build_ms": float(build.group(1)) if build else None,
            "e_pair0": float(e.group(1)) if e else None}


def run_openmm(pos, vel, box, steps: int, precision: str):
    import openmm as mm

    n = len(pos)
    system = mm.System()
    for _ in range(n):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    nb = mm.NonbondedForce()
    nb.setNonbondedMethod(mm.NonbondedForce.CutoffPeriodic)
    nb.setCutoffDistance(CUTOFF)
    nb.setUseDispersionCorrection(False)
    nb.setUseSwitchingFunction(False)
    for _ in range(n):
        nb.addParticle(0.0, 1.0, 1.0)
    system.addForce(nb)
    integrator = mm.VerletIntegrator(DT)
    platform = mm.Platform.getPlatformByName("CUDA")
    ctx = mm.Context(system, integrator, platform, {"Precision": "single" if precision == "fp32" else "double"})
    ctx.setPositions(pos)
    ctx.setVelocities(vel)
    t0 = time.perf_counter()
    e0 = ctx.getState(getEnergy=True).getPotentialEnergy()._value / n
    first = time.perf_counter() - t0  # the first force evaluation: neighbour build and kernel compilation
    integrator.step(20)
    ctx.getState(getEnergy=True)
    t0 = time.perf_counter()
    integrator.step(steps)
    ctx.getState(getEnergy=True)
    seconds = time.perf_counter() - t0
    del ctx
    return {"atom_steps_per_s": n * steps / seconds, "seconds": seconds, "e_pair0": e0, "first_evaluation_s": first,
            "platform": "CUDA " + mm.version.full_version}


def run_jax_md(pos, vel, box, steps: int, precision: str):
    import jax
    jax.config.update("jax_enable_x64", precision == "fp64")
    import jax.numpy as jnp
    from jax import lax
    from jax_md import energy, partition, simulate, space

    dtype = jnp.float64 if precision == "fp64" else jnp.float32
    R = jnp.asarray(pos, dtype)
    displacement, shift = space.periodic(box)
    neighbor_fn, energy_fn = energy.lennard_jones_neighbor_list(displacement, box, sigma=1.0, epsilon=1.0, r_onset=2.0, r_cutoff=CUTOFF,
                                                                dr_threshold=SKIN, format=partition.NeighborListFormat.Dense)
    t0 = time.perf_counter()
    nbrs = neighbor_fn.allocate(R)
    jax.block_until_ready(nbrs.idx)
    allocate_s = time.perf_counter() - t0
    e0 = float(energy_fn(R, neighbor=nbrs)) / len(pos)
    init_fn, apply_fn = simulate.nve(energy_fn, shift, DT)
    state = init_fn(jax.random.PRNGKey(0), R, kT=T0, neighbor=nbrs)
    state = state.set(momentum=jnp.asarray(vel, dtype))  # mass 1: momentum = velocity

    @jax.jit
    def run(state, nbrs):
        def body(_, carry):
            s, nb = carry
            s = apply_fn(s, neighbor=nb)
            return s, nb.update(s.position)
        return lax.fori_loop(0, steps, body, (state, nbrs))

    s, nb = run(state, nbrs)  # compile and warm up
    jax.block_until_ready(s.position)
    t0 = time.perf_counter()
    s, nb = run(s, nb)
    jax.block_until_ready(s.position)
    seconds = time.perf_counter() - t0
    update = jax.jit(lambda nb, r: nb.update(r))
    jax.block_until_ready(update(nb, s.position).idx)
    t0 = time.perf_counter()
    jax.block_until_ready(update(nb, s.position).idx)
    update_s = time.perf_counter() - t0
    return {"atom_steps_per_s": len(pos) * steps / seconds, "seconds": seconds, "e_pair0": e0, "allocate_s": allocate_s,
            "neighbor_update_s": update_s, "overflow": bool(nb.did_buffer_overflow), "jax": jax.__version__}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", required=True, help="the built examples/lennard_jones")
    ap.add_argument("--cells", type=int, nargs="+", default=[20, 64])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--precision", nargs="+", default=["fp32", "fp64"])
    ap.add_argument("--peers", nargs="+", default=["openmm", "jax_md"])
    ap.add_argument("--out", required=True, help="path prefix of the results (.json and .md are added)")
    args = ap.parse_args()
    rows = []
    for cells in args.cells:
        pos, vel, box = fcc(cells)
        for precision in args.precision:
            row = {"atoms": len(pos), "cells": cells, "precision": precision, "steps": args.steps,
                   "strata": run_strata(args.strata, cells, args.steps, precision)}
            for peer in args.peers:
                try:
                    row[peer] = (run_openmm if peer == "openmm" else run_jax_md)(pos, vel, box, args.steps, precision)
                except Exception as e:  # a peer that cannot run at this size is reported, not fatal
                    row[peer] = {"error": f"{type(e).__name__}: {e}"[:400]}
                if "atom_steps_per_s" in row[peer]:
                    row[peer]["strata_ratio"] = row["strata"]["atom_steps_per_s"] / row[peer]["atom_steps_per_s"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = pathlib.Path(args.out)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    meta = {"gpu": gpu, "command": "python3 bench/lj_peers.py " + " ".join(os.sys.argv[1:]), "rows": rows}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    lines = [f"# Lennard-Jones steps (LAMMPS bench/in.lj) on {gpu}", "",
             "Atom-steps per second over the timed steps (higher is better); ratio = strata / peer.", "",
             "| atoms | precision | strata | OpenMM CUDA | ratio | JAX-MD | ratio | strata rebuilds | E_pair(0) strata / OpenMM / JAX-MD |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        def cell(peer):
            p = r.get(peer, {})
            return (f"{p['atom_steps_per_s']:.3g}", f"{p['strata_ratio']:.2f}x") if "atom_steps_per_s" in p else (p.get("error", "not run")[:60], "")
        om, jm = cell("openmm"), cell("jax_md")
        e = " / ".join(f"{r.get(k, {}).get('e_pair0', float('nan')):.7f}" for k in ("strata", "openmm", "jax_md"))
        lines.append(f"| {r['atoms']} | {r['precision']} | {r['strata']['atom_steps_per_s']:.3g} | {om[0]} | {om[1]} | {jm[0]} | {jm[1]} | "
                     f"{r['strata']['rebuilds']} | {e} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
