#!/usr/bin/env python3
"""Tables, JSON and PNG of the halo_exchange runs: call1 (base = 987134c against b01e3e5, which
call 1 calls new and the tables call mid) and call3 (base, mid, new = every direction in one
exchange). Writes tables.md here and ../nvidia-h200-x4-2026-11-27-halo.{json,png}."""
import glob, json, os, re

here = os.path.dirname(os.path.abspath(__file__))
runs = []  # (call, variant, run, rows)
for path in sorted(glob.glob(os.path.join(here, "call1", "bench-*.json"))):
    v, i = re.match(r"bench-(\w+)-(\d)\.json", os.path.basename(path)).groups()
    runs.append(("call1", {"new": "mid"}.get(v, v), int(i), json.load(open(path))))
for path in sorted(glob.glob(os.path.join(here, "call3", "halo-*.json"))):
    v, i = re.match(r"halo-(\w+)-(\d)\.json", os.path.basename(path)).groups()
    runs.append(("call3", v, int(i), json.load(open(path))))
order = {"base": 0, "mid": 1, "new": 2}
runs.sort(key=lambda r: (r[0], r[2], order[r[1]]))

lines = ["| call | variant | run | GPUs | cutoff | ghosts received per rank | halo_exchange ms | NCCL raw ms | raw / halo |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
flat = []
for call, v, i, j in runs:
    for h in j.get("halo", []):
        lines.append(f"| {call} | {v} | {i} | {h['gpus']} | {h['cutoff']:.2f} | {h['ghosts_per_rank']:.0f} | {h['halo_ms']:.3f} | "
                     f"{h['nccl_raw_ms']:.3f} | {h['nccl_raw_ms'] / h['halo_ms']:.2f}x |")
        flat.append({"call": call, "variant": v, "run": i, **h})
mig = json.load(open(os.path.join(here, "call3", "migrate-new.json"))) if os.path.exists(os.path.join(here, "call3", "migrate-new.json")) else None
if mig:
    lines += ["", "migrate of new (call 3):", "", "| GPUs | moved per rank | migrate ms | NCCL raw ms | raw / migrate |", "| ---: | ---: | ---: | ---: | ---: |"]
    for m in mig["migrate"]:
        lines.append(f"| {m['gpus']} | {m['moved_per_rank']:.0f} | {m['migrate_ms']:.3f} | {m['nccl_raw_ms']:.3f} | {m['raw_over_migrate']:.2f}x |")
open(os.path.join(here, "tables.md"), "w").write("\n".join(lines) + "\n")
gpu = runs[0][3]["gpu"] if runs else ""
json.dump({"gpu": gpu + " x 4", "date": "2026-11-27", "records_per_gpu": runs[0][3]["records_per_gpu"] if runs else 0,
           "variants": {"base": "987134c: each direction copies the shard and selects with copy_if",
                        "mid": "b01e3e5: each direction counts and gathers as migrate does",
                        "new": "every direction counted, one wait, one exchange"},
           "halo": flat, "migrate_new": mig["migrate"] if mig else []},
          open(os.path.join(here, "..", "nvidia-h200-x4-2026-11-27-halo.json"), "w"), indent=1)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
cases = sorted({(h["gpus"], h["cutoff"]) for h in flat})
fig, ax = plt.subplots(figsize=(9, 4.5))
width = 0.25
for n, v in enumerate(["base", "mid", "new"]):
    ys = []
    for c in cases:
        t = sorted(h["halo_ms"] for h in flat if h["variant"] == v and h["call"] == "call3" and (h["gpus"], h["cutoff"]) == c)
        ys.append(t[len(t) // 2] if t else 0)
    ax.bar([k + (n - 1) * width for k in range(len(cases))], ys, width, label=v)
raw = []
for c in cases:
    t = sorted(h["nccl_raw_ms"] for h in flat if h["call"] == "call3" and (h["gpus"], h["cutoff"]) == c)
    raw.append(t[len(t) // 2] if t else 0)
ax.scatter(range(len(cases)), raw, color="black", marker="_", s=400, zorder=3, label="NCCL raw buffers")
ax.set_yscale("log")
ax.set_xticks(range(len(cases)))
ax.set_xticklabels([f"{g} GPUs\ncut {c:.2f}" for g, c in cases])
ax.set_ylabel("ms (log)")
ax.set_title("halo_exchange, 2 directions, 2^26 particles a GPU, 4 x H200 (call 3)")
ax.legend(loc="upper center", ncol=4, bbox_to_anchor=(0.5, -0.18))
fig.tight_layout()
fig.savefig(os.path.join(here, "..", "nvidia-h200-x4-2026-11-27-halo.png"), dpi=110)
print("\n".join(lines))
