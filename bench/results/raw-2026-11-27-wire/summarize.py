#!/usr/bin/env python3
"""Tables, JSON and PNG of the wire-block runs (4 x H200, 2026-11-27). base = 00f9041's headers;
call1's new = leaving records and ghosts written into the wire block, the few-leaving path and
the halo in one listing pass that also writes the records (not kept); call2 / call3 new = the same
with a listing and a gather by the list into the wire block (kept). Writes tables.md here and
../nvidia-h200-x4-2026-11-27-wire.{md,json,png}."""
import glob, json, os, re, statistics

here = os.path.dirname(os.path.abspath(__file__))
runs = []  # (call, variant, run, doc)
for call in ("call1", "call2", "call3"):
    for path in sorted(glob.glob(os.path.join(here, call, "bench-*.json"))):
        v, i = re.match(r"bench-(\w+)-(\d)\.json", os.path.basename(path)).groups()
        if call == "call1" and v == "new":
            v = "listing-pass"
        runs.append((call, v, int(i), json.load(open(path))))

def label(call, v):
    return v if v != "new" else "new"

mig_rows, halo_rows, scale_rows = [], [], []
for call, v, i, d in runs:
    for m in d.get("migrate", []):
        frac = m["moved_per_rank"] / d["records_per_gpu"]
        mig_rows.append({"call": call, "variant": v, "run": i, "gpus": m["gpus"], "leaving": round(frac, 3), "migrate_ms": m["migrate_ms"], "nccl_raw_ms": m["nccl_raw_ms"]})
    for h in d.get("halo", []):
        halo_rows.append({"call": call, "variant": v, "run": i, **h})
    for s in d.get("weak_scaling", []):
        scale_rows.append({"call": call, "variant": v, "run": i, **s})

def span(xs):
    xs = sorted(xs)
    return f"{xs[0]:.3f}" if len(xs) == 1 or abs(xs[0] - xs[-1]) < 5e-4 else f"{xs[0]:.3f}-{xs[-1]:.3f}"

final = lambda r: r["call"] in ("call2", "call3")
out = ["# Leaving records and ghosts written straight into the wire block: 4 x H200, 2026-11-27", "",
       "`distributed_bench` (bench/distributed.cpp), 2^26 particles of 28 bytes per GPU, NCCL from PyPI's nvidia-nccl-cu13,",
       "`NCCL_NVLS_ENABLE=0`. base = 00f9041's headers, new = this change, the same bench source, alternated in each call.",
       "Runs: base 3 and new 2 (calls 2 and 3: `--parts migrate,scaling,halo --reps 3` in call 2, `--parts migrate,halo` in call 3);",
       "call 1's variant wrote the records in the listing pass itself (not kept, rows below). Raw files: `raw-2026-11-27-wire/`.", "",
       "## migrate (ms; NCCL moving the same bytes between raw buffers in the last column)", "",
       "| GPUs | leaving | base | new | new / base | NCCL raw |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
for g, f in sorted({(r["gpus"], r["leaving"]) for r in mig_rows}, key=lambda t: (t[0], -t[1])):
    b = [r["migrate_ms"] for r in mig_rows if final(r) and r["variant"] == "base" and (r["gpus"], r["leaving"]) == (g, f)]
    n = [r["migrate_ms"] for r in mig_rows if final(r) and r["variant"] == "new" and (r["gpus"], r["leaving"]) == (g, f)]
    raw = [r["nccl_raw_ms"] for r in mig_rows if final(r) and (r["gpus"], r["leaving"]) == (g, f)]
    out.append(f"| {g} | {f:.0%} | {span(b)} | {span(n)} | {statistics.median(n) / statistics.median(b):.3f} | {span(raw)} |")
out += ["", "## halo_exchange, 2 directions, ghosts within `cut` of a slab face (ms)", "",
        "| GPUs | cut | ghosts a rank | base | new | new / base | NCCL raw |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for g, c in sorted({(r["gpus"], r["cutoff"]) for r in halo_rows}):
    sel = [r for r in halo_rows if final(r) and (r["gpus"], r["cutoff"]) == (g, c)]
    b = [r["halo_ms"] for r in sel if r["variant"] == "base"]
    n = [r["halo_ms"] for r in sel if r["variant"] == "new"]
    out.append(f"| {g} | {c:.2f} | {sel[0]['ghosts_per_rank']:.1e} | {span(b)} | {span(n)} | {statistics.median(n) / statistics.median(b):.3f} | {span([r['nccl_raw_ms'] for r in sel])} |")
out += ["", "## weak scaling of the demo step (efficiency = 1-GPU step / N-GPU step; step ms in brackets)", "",
        "| call | variant | run | 2 GPUs | 3 GPUs | 4 GPUs |", "| --- | --- | ---: | --- | --- | --- |"]
for call, v, i, d in runs:
    s = {r["gpus"]: r for r in d.get("weak_scaling", [])}
    if not s:
        continue
    out.append(f"| {call} | {v} | {i} | " + " | ".join(f"{s[g]['efficiency']:.3f} ({s[g]['step_ms']:.3f})" for g in (2, 3, 4)) + " |")
out += ["", "## call 1: the records written by the listing pass itself (not kept)", "",
        "| GPUs | leaving / cut | base ms | listing-pass ms |", "| ---: | --- | ---: | ---: |"]
c1 = [r for r in mig_rows if r["call"] == "call1"]
for g, f in sorted({(r["gpus"], r["leaving"]) for r in c1}, key=lambda t: (t[0], -t[1])):
    b = [r["migrate_ms"] for r in c1 if r["variant"] == "base" and (r["gpus"], r["leaving"]) == (g, f)]
    n = [r["migrate_ms"] for r in c1 if r["variant"] == "listing-pass" and (r["gpus"], r["leaving"]) == (g, f)]
    out.append(f"| {g} | migrate {f:.0%} | {span(b)} | {span(n)} |")
h1 = [r for r in halo_rows if r["call"] == "call1"]
for g, c in sorted({(r["gpus"], r["cutoff"]) for r in h1}):
    b = [r["halo_ms"] for r in h1 if r["variant"] == "base" and (r["gpus"], r["cutoff"]) == (g, c)]
    n = [r["halo_ms"] for r in h1 if r["variant"] == "listing-pass" and (r["gpus"], r["cutoff"]) == (g, c)]
    out.append(f"| {g} | halo cut {c:.2f} | {span(b)} | {span(n)} |")
open(os.path.join(here, "tables.md"), "w").write("\n".join(out) + "\n")
open(os.path.join(here, "..", "nvidia-h200-x4-2026-11-27-wire.md"), "w").write("\n".join(out) + "\n")
json.dump({"gpu": runs[0][3]["gpu"] + " x 4", "date": "2026-11-27", "records_per_gpu": runs[0][3]["records_per_gpu"],
           "variants": {"base": "00f9041", "new": "leaving records and ghosts written into the wire block by the split or the gather",
                        "listing-pass": "call 1 only: the listing pass writes the records (not kept)"},
           "migrate": mig_rows, "halo": halo_rows, "weak_scaling": scale_rows},
          open(os.path.join(here, "..", "nvidia-h200-x4-2026-11-27-wire.json"), "w"), indent=1)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
cases = sorted({(r["gpus"], r["leaving"]) for r in mig_rows}, key=lambda t: (t[0], -t[1]))
for k, v in enumerate(["base", "new"]):
    ys = [statistics.median([r["migrate_ms"] for r in mig_rows if final(r) and r["variant"] == v and (r["gpus"], r["leaving"]) == c]) for c in cases]
    axes[0].bar([x + (k - 0.5) * 0.38 for x in range(len(cases))], ys, 0.38, label=v)
axes[0].set_xticks(range(len(cases)))
axes[0].set_xticklabels([f"{g} GPUs\n{f:.0%}" for g, f in cases])
axes[0].set_ylabel("migrate ms (median)")
axes[0].legend()
hc = sorted({(r["gpus"], r["cutoff"]) for r in halo_rows})
for k, v in enumerate(["base", "new"]):
    ys = [statistics.median([r["halo_ms"] for r in halo_rows if final(r) and r["variant"] == v and (r["gpus"], r["cutoff"]) == c]) for c in hc]
    axes[1].bar([x + (k - 0.5) * 0.38 for x in range(len(hc))], ys, 0.38, label=v)
axes[1].set_xticks(range(len(hc)))
axes[1].set_xticklabels([f"{g} GPUs\ncut {c:.2f}" for g, c in hc])
axes[1].set_ylabel("halo_exchange ms (median)")
fig.suptitle("4 x NVIDIA H200, 2026-11-27: records written straight into the wire block (new) vs 00f9041 (base)")
fig.tight_layout()
fig.savefig(os.path.join(here, "..", "nvidia-h200-x4-2026-11-27-wire.png"), dpi=110)
