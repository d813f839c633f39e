#!/usr/bin/env python3
"""Before/after bars of the reduction rows (x cudaMemcpy, same run), from results-{old,new}-{1,2}.json.
Usage: plot.py DIR OUT.png"""
import json, sys, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d, out = sys.argv[1], sys.argv[2]
def load(name):
    rows = json.load(open(os.path.join(d, name)))["results"]
    return {(r["workload"], r["variant"]): r["ratio_memcpy"] for r in rows}
runs = {k: [load(f"results-{k}-{i}.json") for i in (1, 2)] for k in ("old", "new")}
keys = [("reduce_sum", "strata"), ("reduce_sum", "cub"), ("kinetic_energy", "strata_packets"), ("kinetic_energy", "thrust_zip"),
        ("statistics", "strata"), ("statistics", "thrust"), ("mixed_sum", "strata_packets"), ("mixed_sum", "thrust_zip")]
fig, ax = plt.subplots(figsize=(10, 4.2))
w = 0.38
for j, (k, colour) in enumerate((("old", "#999999"), ("new", "#1f77b4"))):
    vals = [sum(r[key] for r in runs[k]) / 2 for key in keys]
    ax.bar([i + (j - 0.5) * w for i in range(len(keys))], vals, w, color=colour,
           label={"old": "before (757104a)", "new": "after (467b01b)"}[k])
ax.axhline(0.95, color="k", lw=0.8, ls="--", label="DESIGN.md target 0.95")
ax.set_xticks(range(len(keys)))
ax.set_xticklabels([f"{a}\n{b}" for a, b in keys], fontsize=8)
ax.set_ylabel("x cudaMemcpy D2D (same run)")
ax.set_title("Reductions on NVIDIA H200, 2026-11-27 (mean of two runs; peers unchanged code)")
ax.legend(fontsize=8, loc="lower left")
fig.tight_layout()
fig.savefig(out, dpi=110)
