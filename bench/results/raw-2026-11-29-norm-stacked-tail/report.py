#!/usr/bin/env python3
"""Tables and a plot of call 2: A (2535f83) against B (rows with elements in partial units weigh a
group narrower than 64 bytes holding 2 or more units a thread only where nothing else fits), best of
two sweeps each, rows of 5-1025 elements.  python3 report.py  (writes ../nvidia-h200-2026-11-29-norm-partial-rows.*)"""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "nvidia-h200-2026-11-29-norm-partial-rows")


def load(name):
    d = json.load(open(os.path.join(here, "call2", name)))
    return d["memcpy_gbps"], {(p["workload"], p["dtype"], p["hidden"]): p for p in d["results"]}


runs = {v: [load(f"tail-{v}{i}.json") for i in (1, 2)] for v in "AB"}
rows = []
for k in sorted(runs["A"][0][1], key=lambda k: (k[2], k[0], k[1])):
    r = {"op": k[0], "dtype": k[1], "hidden": k[2], "rows": runs["A"][0][1][k]["rows"],
         "partial_unit": k[2] % (4 if k[1] == "fp32" else 8) != 0}
    for v in "AB":
        r["ms_" + v] = min(x[1][k]["ms"] for x in runs[v])
        r["x_memcpy_" + v] = max(x[1][k]["gbps"] / x[0] for x in runs[v])
        r["plan_" + v] = runs[v][0][1][k]["plan"]
    r["speedup"] = r["ms_A"] / r["ms_B"]
    rows.append(r)
changed = [r for r in rows if r["plan_A"] != r["plan_B"]]
json.dump({"gpu": open(os.path.join(here, "call2", "gpu.txt")).read().strip(), "date": "2026-11-29", "rows": rows}, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write("# Rows ending in a partial 16-byte unit: no narrow group holding several units a thread (H200, 2026-11-29)\n\n")
    f.write("NVIDIA H200 (driver 580.159.04, nvcc 13.0). A = 2535f83, B = this change (norm_plan.hpp: `poorly_coalesced(plan, partial)`).\n"
            "`norm_sweep --hidden ...` (strata's matrix: rows on 16-byte boundaries) A B A B in one call "
            "(`raw-2026-11-29-norm-stacked-tail/call2.sh`), best of two each; ratios x the same run's 1 GiB cudaMemcpy.\n\n")
    sp = sorted(r["speedup"] for r in rows)
    f.write(f"{len(rows)} points (37 widths, layer and RMS norm, fp32 and bf16), {len(changed)} plans changed; "
            f"median A/B time {sp[len(sp) // 2]:.3f}; unchanged plans within {max(abs(r['speedup'] - 1) for r in rows if r not in changed) * 100:.1f}%.\n\n")
    f.write("| op | dtype | rows x hidden | plan A | plan B | A x memcpy | B x memcpy | A/B |\n| --- | --- | --- | --- | --- | ---: | ---: | ---: |\n")
    for r in changed:
        f.write(f"| {r['op']} | {r['dtype']} | {r['rows']}x{r['hidden']} | {r['plan_A']} | {r['plan_B']} | {r['x_memcpy_A']:.3f} | {r['x_memcpy_B']:.3f} | {r['speedup']:.3f} |\n")
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, op in zip(axes, ["layer_norm", "rms_norm"]):
    for dt, c in [("fp32", "C0"), ("bf16", "C1")]:
        sel = [r for r in rows if r["op"] == op and r["dtype"] == dt and r["partial_unit"] and r["hidden"] <= 300]
        h = [r["hidden"] for r in sel]
        ax.plot(h, [r["x_memcpy_A"] for r in sel], "--o", color=c, alpha=0.5, label=f"{dt} before (2535f83)")
        ax.plot(h, [r["x_memcpy_B"] for r in sel], "-o", color=c, label=f"{dt} this change")
    ax.set_title(op + ", rows ending in a partial unit")
    ax.set_xlabel("elements a row")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("x cudaMemcpy (1 GiB, same run)")
axes[0].legend(fontsize=7)
fig.suptitle("Short rows ending in a partial 16-byte unit, H200, 2026-11-29 (best of two sweeps)")
fig.tight_layout()
fig.savefig(out + ".png", dpi=110)
print(open(out + ".md").read())
