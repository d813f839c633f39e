"""Weak-scaling table, JSON and plot of call 1 (base against rank-thread launches, 4 x H200)."""
import glob, json, os, re
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
runs = []
for f in sorted(glob.glob(os.path.join(here, "call1", "bench-*.json"))):
    v, i = re.match(r"bench-(\w+)-(\d)\.json", os.path.basename(f)).groups()
    d = json.load(open(f))
    runs.append({"variant": v, "run": int(i), "weak_scaling": d["weak_scaling"], "migrate": d["migrate"]})
stem = os.path.join(here, "..", "nvidia-h200-x4-2026-11-26-weak-scaling-recheck")
json.dump({"gpu": "NVIDIA H200 (4 x, one host)", "date": "2026-11-26", "records_per_gpu": 1 << 26,
           "command": "distributed_bench --reps 3 (base and new alternated; see raw-2026-11-26-x4/call1.sh)", "runs": runs},
          open(stem + ".json", "w"), indent=1)
lines = ["# Weak scaling of the demo step, 4 x H200, 2026-11-26", "",
         "2^26 particles per GPU, `distributed_bench --reps 3`, median of 3 repetitions of 30 steps each.",
         "base: transform / transform_reduce_sum enqueued from the caller's thread (the library as committed);",
         "new: enqueued by each rank's own thread (`rank-launch-not-kept.diff`, not kept). Alternated in one call;",
         "new run 3 did not fit the call's time limit. Raw files: `raw-2026-11-26-x4/call1/`.", "",
         "| variant | run | 1 GPU ms | 2 GPUs ms (eff.) | 3 GPUs ms (eff.) | 4 GPUs ms (eff.) | drift-only 4 GPUs ms |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for r in sorted(runs, key=lambda r: (r["run"], r["variant"])):
    w = {x["gpus"]: x for x in r["weak_scaling"]}
    cells = [f"{w[1]['step_ms']:.3f}"] + [f"{w[g]['step_ms']:.3f} ({w[g]['efficiency']:.3f})" for g in (2, 3, 4)]
    lines.append(f"| {r['variant']} | {r['run']} | " + " | ".join(cells) + f" | {w[4]['drift_only_ms']:.3f} |")
open(stem + ".md", "w").write("\n".join(lines) + "\n")
fig, ax = plt.subplots(figsize=(6, 4))
for r in runs:
    g = [x["gpus"] for x in r["weak_scaling"]]
    e = [x["efficiency"] for x in r["weak_scaling"]]
    ax.plot(g, e, marker="o", color="tab:blue" if r["variant"] == "base" else "tab:orange", alpha=0.7,
            label=f"{r['variant']} {r['run']}")
ax.axhline(0.90, color="gray", ls="--", label="target 0.90")
ax.set_xlabel("GPUs (2^26 particles each)"); ax.set_ylabel("weak-scaling efficiency of the demo step")
ax.set_xticks([1, 2, 3, 4]); ax.set_title("4 x H200, 2026-11-26"); ax.legend(fontsize=7); fig.tight_layout()
fig.savefig(stem + ".png", dpi=110)
print("\n".join(lines))
