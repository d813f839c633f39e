#!/usr/bin/env python3
"""Tables and a plot of call 2: A (2535f83) against B (1a15bc2's lag rule), best of three sweeps each,
at rows of 262144-4194304 elements; B's chosen plan against the fastest plan it weighed.
   python3 report.py   (writes ../nvidia-h200-2026-11-29-norm-streamed-lag.{md,json,png})"""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "nvidia-h200-2026-11-29-norm-streamed-lag")


def load(name):
    d = json.load(open(os.path.join(here, "call2", name)))
    return d["memcpy_gbps"], {(p["workload"], p["dtype"], p["hidden"]): p for p in d["results"]}


runs = {v: [load(f"long-{v}{i}.json") for i in (1, 2, 3)] for v in "AB"}
_, val = load("validate-B.json")
rows = []
for k in sorted(runs["A"][0][1], key=lambda k: (k[2], k[0], k[1])):
    best = {}
    for v in "AB":
        ms = min(r[1][k]["ms"] for r in runs[v])
        ratio = max(r[1][k]["gbps"] / r[0] for r in runs[v])
        best[v] = (ms, ratio, runs[v][0][1][k]["plan"])
    p = val[k]
    rows.append({"op": k[0], "dtype": k[1], "hidden": k[2], "rows": runs["A"][0][1][k]["rows"], "plan_A": best["A"][2], "plan_B": best["B"][2],
                 "ms_A": best["A"][0], "ms_B": best["B"][0], "x_memcpy_A": best["A"][1], "x_memcpy_B": best["B"][1],
                 "speedup": best["A"][0] / best["B"][0], "chosen_over_fastest_B": p["ms"] / p["fastest_ms"], "fastest_B": p["fastest_considered"]})
json.dump({"gpu": open(os.path.join(here, "call2", "gpu.txt")).read().strip(), "date": "2026-11-29", "rows": rows}, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write("# Streamed normalization rows: a lag of a row's chunks and the grid for rows of many chunks (H200, 2026-11-29)\n\n")
    f.write("NVIDIA H200 (driver 580.159.04, nvcc 13.0). A = 2535f83, B = 1a15bc2 (streamed plans whose rows have more chunks than an\n"
            "eighth of the grid take lag = chunks + grid). `norm_sweep --hidden ...` A B A B A B in one call (`raw-2026-11-29-norm-streamed/call2.sh`),\n"
            "best of three each; ratios x the same run's 1 GiB cudaMemcpy (4253 GB/s); each point moves about 256 MB. Last columns: B's chosen plan\n"
            "against the fastest plan `--validate` weighed (streamed plans also at lags of chunks + grid / 2 and chunks + grid).\n\n")
    f.write("| op | dtype | rows x hidden | plan B | A ms | B ms | A/B | A x memcpy | B x memcpy | B chosen / fastest |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for r in rows:
        f.write(f"| {r['op']} | {r['dtype']} | {r['rows']}x{r['hidden']} | {r['plan_B']} | {r['ms_A']:.4f} | {r['ms_B']:.4f} | {r['speedup']:.3f} | "
                f"{r['x_memcpy_A']:.3f} | {r['x_memcpy_B']:.3f} | {r['chosen_over_fastest_B']:.3f} |\n")
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, op in zip(axes, ["layer_norm", "rms_norm"]):
    for dt, c in [("fp32", "C0"), ("bf16", "C1")]:
        sel = [r for r in rows if r["op"] == op and r["dtype"] == dt]
        h = [r["hidden"] for r in sel]
        ax.plot(h, [r["x_memcpy_A"] for r in sel], "--o", color=c, label=f"{dt} before (2535f83)", alpha=0.6)
        ax.plot(h, [r["x_memcpy_B"] for r in sel], "-o", color=c, label=f"{dt} lag = chunks + grid (1a15bc2)")
    ax.set_xscale("log", base=2)
    ax.set_title(op)
    ax.set_xlabel("elements a row")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("x cudaMemcpy (1 GiB, same run)")
axes[0].legend(fontsize=7)
fig.suptitle("Streamed rows on the H200, 2026-11-29 (best of three sweeps)")
fig.tight_layout()
fig.savefig(out + ".png", dpi=110)
print(open(out + ".md").read())
