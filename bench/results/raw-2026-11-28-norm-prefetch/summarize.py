#!/usr/bin/env python3
"""Summarizes the prefetch probes into ../nvidia-h200-2026-11-28-norm-prefetch.{md,json,png}.

  python3 summarize.py   (run in this folder)
Reads prefetch-1.txt (distance as a share of the rows resident, with and without an evict-last
hint), prefetch-2.txt (distance in MB), ahead-1.txt (the library's kernels through plan.ahead, rows
and streamed) and variant-1.txt (cache policies and placement, with the prefetch in place).
"""
import collections, json, statistics

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def table(name):
    out = []
    for line in open(name):
        if line.startswith("| ") and not line.startswith("| op") and "---" not in line:
            out.append([c.strip() for c in line.split("|")[1:-1]])
    return out


def size(dtype):
    return 4 if dtype == "fp32" else 2


def stats(xs):
    return {"n": len(xs), "median": round(statistics.median(xs), 4), "min": round(min(xs), 4), "max": round(max(xs), 4)}


summary = {"gpu": open("gpu.txt").read().strip(), "date": "2026-11-28"}
# Run 1: distance as a share f of the rows resident at once; library / prefetching time.
run1 = collections.defaultdict(list)
for r in table("prefetch-1.txt"):
    hidden = int(r[2].split("x")[1])
    mb = int(r[8]) * hidden * size(r[1]) / 1e6
    run1[(float(r[7]), int(r[9]))].append((mb, float(r[14])))
summary["run1_share_of_resident"] = {f"f={f} evict_last={h}": {**stats([x for _, x in v]), "mb_ahead_range": [round(min(m for m, _ in v), 2), round(max(m for m, _ in v), 2)]}
                                     for (f, h), v in sorted(run1.items())}
# Run 2: distance in MB, 92 row shapes.
run2 = collections.defaultdict(list)
per_shape = collections.defaultdict(dict)
for r in table("prefetch-2.txt"):
    mb = float(r[8])
    run2[mb].append(float(r[15]))
    per_shape[(r[0], r[1], int(r[2].split("x")[1]))][mb] = float(r[15])
summary["run2_mb_ahead"] = {f"{mb} MB": {**stats(v), "at_least_1.01": sum(x >= 1.01 for x in v), "below_0.99": sum(x < 0.99 for x in v)}
                            for mb, v in sorted(run2.items())}
# The library's kernels at several distances (ahead_probe): rows and streamed.
ahead = collections.defaultdict(list)
for r in table("ahead-1.txt"):
    shape = r[3].split()[0]
    label = r[4] or f"{float(r[6]):.1f} MB"
    if label not in ("none", "chosen"):
        label = "8 MB" if float(r[6]) > 7 else ("half" if float(r[6]) < 1.5 else "twice")
    ahead[(shape, label)].append(float(r[9]))
summary["library_kernels_by_distance"] = {f"{s} {l}": stats(v) for (s, l), v in sorted(ahead.items())}
# Variants with the prefetch in place.
names = {"0": "library (same code)", "1": "y stored evict-first", "2": "x loaded and y stored evict-first", "3": "prefetch after the row's loads"}
var = collections.defaultdict(list)
for r in table("variant-1.txt"):
    var[names[r[7]]].append(float(r[12]))
summary["variants_library_over_variant"] = {k: stats(v) for k, v in var.items()}
json.dump(summary, open("../nvidia-h200-2026-11-28-norm-prefetch.json", "w"), indent=1)

md = [f"# Rows prefetched into L2 ahead of the rows kernel: {summary['gpu']}, 2026-11-28", "",
      "Probe and library runs behind `prefetch_seconds` (include/strata/algorithm/norm_plan.hpp). Ratios are",
      "time without / time with (above 1: the prefetch is faster), alternated in one loop, CUDA events, a",
      "256 MiB memset before each run, median of 15; every output compared bit for bit. Raw files and probes:",
      "`raw-2026-11-28-norm-prefetch/` (README there).", "",
      "## Distance in MB ahead (prefetch_probe, run 2: 92 row shapes, 23 widths x layer/RMS x fp32/bf16)", "",
      "| MB ahead | shapes | median | min | max | >= 1.01 | < 0.99 |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for k, v in summary["run2_mb_ahead"].items():
    md.append(f"| {k} | {v['n']} | {v['median']:.3f} | {v['min']:.3f} | {v['max']:.3f} | {v['at_least_1.01']} | {v['below_0.99']} |")
md += ["", "0 MB is the same code timed against itself: the noise of the method.", "",
       "## Distance as a share of the rows resident (run 1: 44 row shapes)", "",
       "| share | evict-last hint | MB ahead | median | min | max |", "| ---: | --- | --- | ---: | ---: | ---: |"]
for k, v in summary["run1_share_of_resident"].items():
    f, h = k.split()
    md.append(f"| {f[2:]} | {'yes' if h.endswith('1') else 'no'} | {v['mb_ahead_range'][0]}-{v['mb_ahead_range'][1]} | {v['median']:.3f} | {v['min']:.3f} | {v['max']:.3f} |")
md += ["", "## The library's kernels by plan.ahead (ahead_probe: 1024-262144 elements)", "",
       "| kernel | distance | runs | median | min | max |", "| --- | --- | ---: | ---: | ---: | ---: |"]
for k, v in summary["library_kernels_by_distance"].items():
    s, l = k.split(" ", 1)
    md.append(f"| {s} | {l} | {v['n']} | {v['median']:.3f} | {v['min']:.3f} | {v['max']:.3f} |")
md += ["", "Streamed rows (statistics items prefetching a later chunk) ran slower at every distance: the",
       "library prefetches for row plans only.", "",
       "## Variants with the prefetch in place (variant_probe, 92 row shapes; library / variant)", "",
       "| variant | median | min | max |", "| --- | ---: | ---: | ---: |"]
for k, v in summary["variants_library_over_variant"].items():
    md.append(f"| {k} | {v['median']:.3f} | {v['min']:.3f} | {v['max']:.3f} |")
md += ["", "None beats the library's code."]
open("../nvidia-h200-2026-11-28-norm-prefetch.md", "w").write("\n".join(md) + "\n")

fig, ax = plt.subplots(figsize=(8, 4.5))
mbs = sorted(run2)
for key, d in per_shape.items():
    ax.plot(mbs, [d[m] for m in mbs], color="0.7", lw=0.6)
ax.plot(mbs, [statistics.median(run2[m]) for m in mbs], color="C0", lw=2.5, label="median of 92 row shapes (run 2)")
pts = sorted((m, x) for v in run1.values() for m, x in v)
ax.scatter([m for m, _ in pts], [x for _, x in pts], s=6, color="C3", label="run 1 (share of resident rows)")
ax.axhline(1.0, color="k", lw=0.8)
ax.set_xlabel("MB of rows prefetched ahead")
ax.set_ylabel("time without / time with")
ax.set_title("rows kernel, L2 prefetch distance (H200)")
ax.legend()
fig.tight_layout()
fig.savefig("../nvidia-h200-2026-11-28-norm-prefetch.png", dpi=110)
