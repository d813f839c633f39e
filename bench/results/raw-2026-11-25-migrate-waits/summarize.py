#!/usr/bin/env python3
"""Tables, JSON and plot of this folder's runs: python3 summarize.py (writes next to bench/results/)."""
import glob, json, os, statistics as st
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.dirname(here)
def load(pattern):
    return [json.load(open(f)) | {"file": os.path.relpath(f, here)} for f in sorted(glob.glob(os.path.join(here, pattern)))]

new, old = load("call2/bench-new-*.json"), load("call2/bench-old-*.json")
four = load("call5/bench-*.json")
def mig(runs, gpus, frac):
    rows = [m for r in runs for m in r["migrate"] if m["gpus"] == gpus and abs(m["moved_per_rank"] / r["records_per_gpu"] - frac) < 0.01]
    return rows
def ws(runs, gpus):
    return [w for r in runs for w in r["weak_scaling"] if w["gpus"] == gpus]
med = lambda xs: st.median(xs)
fmt = lambda xs: "[" + ", ".join(f"{x:.3f}" for x in xs) + "]"
summary = {"gpu": "2 x NVIDIA H200 (one host)", "date": new[0]["date"], "records_per_gpu": new[0]["records_per_gpu"], "migrate": [], "weak_scaling": []}
L = []
L.append("| records leaving per rank | new ms | old ms | new / old time | NCCL raw ms | raw / new (target >= 0.90) | nothing leaving: new ms | old ms |")
L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for frac in (0.10, 0.02):
    n_, o_ = mig(new, 2, frac), mig(old, 2, frac)
    nm, om = [m["migrate_ms"] for m in n_], [m["migrate_ms"] for m in o_]
    raw = med([m["nccl_raw_ms"] for m in n_ + o_])
    ni, oi = [m["nothing_moving_ms"] for m in n_], [m["nothing_moving_ms"] for m in o_]
    L.append(f"| {n_[0]['moved_per_rank']:.0f} ({100*frac:.0f}%) | {med(nm):.3f} {fmt(nm)} | {med(om):.3f} {fmt(om)} | {med(nm)/med(om):.2f} | {raw:.3f} | {raw/med(nm):.2f}x | {med(ni):.3f} {fmt(ni)} | {med(oi):.3f} {fmt(oi)} |")
    summary["migrate"].append({"fraction": frac, "new_ms": nm, "old_ms": om, "nccl_raw_ms": raw, "nothing_new_ms": ni, "nothing_old_ms": oi})
mig_table = "\n".join(L)
L = []
L.append("| code | 1-GPU step ms | 2-GPU step ms | 2-GPU kick-drift only ms | particles migrated per step | efficiency per run | median (target >= 0.90) |")
L.append("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
for name, runs in (("new", new), ("old", old)):
    e = [w["efficiency"] for w in ws(runs, 2)]
    L.append(f"| {name} | {med([w['step_ms'] for w in ws(runs, 1)]):.3f} | {med([w['step_ms'] for w in ws(runs, 2)]):.3f} | {med([w['drift_only_ms'] for w in ws(runs, 2)]):.3f} | {ws(runs, 2)[0]['moved_per_step']:.0f} | {fmt(e)} | {med(e):.3f} |")
    summary["weak_scaling"].append({"code": name, "efficiency": e, "step_ms_1": [w["step_ms"] for w in ws(runs, 1)], "step_ms_2": [w["step_ms"] for w in ws(runs, 2)]})
ws_table = "\n".join(L)
L = []
L.append("| GPUs | step ms | kick-drift only ms | particles migrated per step | efficiency (two runs) |")
L.append("| ---: | ---: | ---: | ---: | --- |")
for g in (1, 2, 3, 4):
    w = ws(four, g)
    L.append(f"| {g} | {med([x['step_ms'] for x in w]):.3f} | {med([x['drift_only_ms'] for x in w]):.3f} | {w[0]['moved_per_step']:.0f} | {fmt([x['efficiency'] for x in w])} |")
L.append("")
L.append("| GPUs | records leaving per rank | migrate ms (two runs) | NCCL raw ms | raw / migrate |")
L.append("| ---: | ---: | --- | ---: | ---: |")
for g in (2, 3, 4):
    for frac in (0.10, 0.02):
        m = mig(four, g, frac)
        L.append(f"| {g} | {m[0]['moved_per_rank']:.0f} ({100*frac:.0f}%) | {fmt([x['migrate_ms'] for x in m])} | {med([x['nccl_raw_ms'] for x in m]):.3f} | {med([x['nccl_raw_ms'] for x in m])/med([x['migrate_ms'] for x in m]):.2f}x |")
four_table = "\n".join(L)
summary["four_gpus"] = four
json.dump(summary, open(os.path.join(out, "nvidia-h200-x2-2026-11-25-migrate-waits.json"), "w"), indent=1)

fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
for name, runs, c in (("this code", new, "tab:blue"), ("before (9b1a3a5)", old, "tab:gray")):
    e = [w["efficiency"] for w in ws(runs, 2)]
    ax[0].plot(range(1, len(e) + 1), e, "o-", color=c, label=name)
ax[0].axhline(0.90, color="tab:red", ls="--", label="target 0.90")
ax[0].set_xlabel("run (alternated in one session)"); ax[0].set_ylabel("weak-scaling efficiency, 1 -> 2 GPUs")
ax[0].set_title("2 x H200: demo step, 2^26 particles per GPU"); ax[0].legend(fontsize=8); ax[0].set_ylim(0.7, 1.0)
g = [1, 2, 3, 4]
e4 = [med([x["efficiency"] for x in ws(four, k)]) for k in g]
ax[1].plot(g, e4, "o-", color="tab:blue", label="this code")
ax[1].axhline(0.90, color="tab:red", ls="--", label="target 0.90")
ax[1].set_xticks(g); ax[1].set_xlabel("GPUs"); ax[1].set_ylabel("weak-scaling efficiency")
ax[1].set_title("4 x H200 machine"); ax[1].legend(fontsize=8); ax[1].set_ylim(0.4, 1.05)
fig.tight_layout(); fig.savefig(os.path.join(out, "nvidia-h200-x2-2026-11-25-migrate-waits.png"), dpi=110)

tables = {"mig": mig_table, "ws": ws_table, "four": four_table}
open(os.path.join(here, "tables.md"), "w").write("\n\n".join(tables.values()) + "\n")
print(mig_table, ws_table, four_table, sep="\n\n")
