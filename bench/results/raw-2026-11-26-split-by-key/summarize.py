#!/usr/bin/env python3
"""Tables, JSON and a plot from the distributed_bench runs of this directory's calls.

Usage: python3 summarize.py OUT_PREFIX CALL [CALL...]  (e.g. ../nvidia-h200-x4-2026-11-26-split-by-key call1 call2)
Writes OUT_PREFIX.md, OUT_PREFIX.json and OUT_PREFIX.png; new = this change, old = the build it is
compared with, run alternately in each call (bench-new*/bench-packed* against bench-old*/
bench-unpacked*); TITLE (environment) names the comparison."""
import glob, json, os, statistics, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

prefix, calls = sys.argv[1], sys.argv[2:]
here = os.path.dirname(os.path.abspath(__file__))
runs = []
for c in calls:
    for f in sorted(glob.glob(os.path.join(here, c, "bench-*.json"))):
        d = json.load(open(f))
        d["call"], d["variant"] = c, ("old" if ("old" in os.path.basename(f) or "unpacked" in os.path.basename(f)) else "new")
        d["file"] = os.path.relpath(f, os.path.dirname(here))
        runs.append(d)
gpu = runs[0]["gpu"]
title = os.environ.get("TITLE", "migrate's keyed split (new) against 9a35573 (old)")
lines = [f"# distributed_bench on {len(runs[0]['weak_scaling'])} x {gpu}, {runs[0]['date']}: {title}", "",
         f"{runs[0]['records_per_gpu']} particles ({runs[0]['record_bytes']} bytes) per GPU; new and old alternated in each call; raw files in raw-2026-11-26-split-by-key/.", ""]
lines += [f"## Weak scaling of the demo step (efficiency = 1-GPU step / G-GPU step, median of {runs[0]['reps']} interleaved repetitions)", "",
          "| call | variant | " + " | ".join(f"{s['gpus']} GPUs step ms (eff.)" for s in runs[0]["weak_scaling"]) + " |",
          "| --- | --- | " + " | ".join("---:" for _ in runs[0]["weak_scaling"]) + " |"]
for r in runs:
    lines.append(f"| {r['call']} | {r['variant']} | " + " | ".join(f"{s['step_ms']:.3f} ({s['efficiency']:.3f})" for s in r["weak_scaling"]) + " |")
lines += ["", "## migrate (ms; NCCL raw buffers in the same run)", "", "| call | variant | " +
          " | ".join(f"{m['gpus']} GPUs {100 * m['moved_per_rank'] / runs[0]['records_per_gpu']:.0f}%" for m in runs[0]["migrate"]) + " | nothing moving, " +
          " / ".join(f"{m['gpus']}" for m in runs[0]["migrate"][::2]) + " GPUs |",
          "| --- | --- | " + " | ".join("---:" for _ in runs[0]["migrate"]) + " | ---: |"]
for r in runs:
    lines.append(f"| {r['call']} | {r['variant']} | " + " | ".join(f"{m['migrate_ms']:.3f} (raw {m['nccl_raw_ms']:.3f})" for m in r["migrate"]) + " | " +
                 " / ".join(f"{m['nothing_moving_ms']:.3f}" for m in r["migrate"][::2]) + " |")
ops = [r for r in runs if "exchange_ops" in r]
if ops:
    lines += ["", "## NCCL alone: the same bytes to the ring neighbours as 7 column sends or one send per neighbour (ms, new runs)", "",
              "| call | " + " | ".join(f"{o['gpus']} GPUs, {o['records_per_neighbour']} records: 7 sends / 1 send" for o in ops[0]["exchange_ops"]) + " |",
              "| --- | " + " | ".join("---:" for _ in ops[0]["exchange_ops"]) + " |"]
    for r in ops:
        lines.append(f"| {r['call']} | " + " | ".join(f"{o['per_column_ms']:.3f} / {o['packed_ms']:.3f}" for o in r["exchange_ops"]) + " |")
summary = {}
for v in ("new", "old"):
    rs = [r for r in runs if r["variant"] == v]
    summary[v] = {
        "efficiency_median": {str(s["gpus"]): statistics.median(r["weak_scaling"][i]["efficiency"] for r in rs) for i, s in enumerate(rs[0]["weak_scaling"])},
        "migrate_ms_median": {f"{m['gpus']}gpus_{100 * m['moved_per_rank'] / runs[0]['records_per_gpu']:.0f}pct": statistics.median(r["migrate"][i]["migrate_ms"] for r in rs)
                              for i, m in enumerate(rs[0]["migrate"])},
        "nothing_moving_ms_median": {f"{m['gpus']}gpus": statistics.median(r["migrate"][i]["nothing_moving_ms"] for r in rs) for i, m in enumerate(rs[0]["migrate"]) if i % 2 == 0},
        "runs": len(rs)}
lines += ["", "## Medians over the runs above", "", "| | new | old |", "| --- | ---: | ---: |"]
for key in ("efficiency_median", "migrate_ms_median", "nothing_moving_ms_median"):
    for k in summary["new"][key]:
        lines.append(f"| {key.replace('_median', '')} {k} | {summary['new'][key][k]:.3f} | {summary['old'][key][k]:.3f} |")
open(prefix + ".md", "w").write("\n".join(lines) + "\n")
json.dump({"gpu": gpu, "date": runs[0]["date"], "summary": summary, "runs": runs}, open(prefix + ".json", "w"), indent=1)
fig, ax = plt.subplots(figsize=(6, 4))
for r in runs:
    xs = [s["gpus"] for s in r["weak_scaling"]]
    ax.plot(xs, [s["efficiency"] for s in r["weak_scaling"]], "o-" if r["variant"] == "new" else "x--", color="C0" if r["variant"] == "new" else "C1",
            alpha=0.7, label=f"{r['variant']} ({r['call']})")
ax.axhline(0.9, color="gray", lw=0.8, ls=":")
ax.set_xlabel("GPUs")
ax.set_ylabel("weak-scaling efficiency")
ax.set_title(f"demo step, {runs[0]['records_per_gpu']} particles per GPU, {gpu}")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(prefix + ".png", dpi=120)
print("\n".join(lines))
