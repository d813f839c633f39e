"""Tables, JSON and PNG of calls 1-2 (4 x H200): distributed_bench of 599cd71 (base) against the
working tree of each call (new), alternated three times per call. Run from this folder:
python3 summarize.py > tables.md (writes ../nvidia-h200-x4-2026-11-26-scratch-reuse.{json,png})."""
import json, glob, os, statistics

calls = {"call1": "scratch query trimmed + reserve (not kept: no gain)", "call2": "reserve + stream_scratch (landed)"}
rows, data = [], {}
for call in sorted(calls):
    for v in ("base", "new"):
        for i in (1, 2, 3):
            f = f"{call}/bench-{v}-{i}.json"
            if not os.path.exists(f):
                continue
            d = json.load(open(f))
            ws = {w["gpus"]: w for w in d["weak_scaling"]}
            data.setdefault(call, {}).setdefault(v, []).append(d)
            rows.append((call, v, i, ws))

print("# Weak scaling of the demo step, 2^26 particles per GPU, 4 x H200 (distributed_bench --reps 3)\n")
print("| call | variant | run | step ms 1 / 2 / 3 / 4 GPUs | drift-only ms 1 / 4 | efficiency 2 / 3 / 4 |")
print("| --- | --- | ---: | --- | --- | --- |")
for call, v, i, ws in rows:
    steps = " / ".join(f"{ws[g]['step_ms']:.3f}" for g in sorted(ws))
    eff = " / ".join(f"{ws[g]['efficiency']:.3f}" for g in sorted(ws) if g > 1)
    print(f"| {call} | {v} ({calls[call] if v == 'new' else '599cd71'}) | {i} | {steps} | {ws[1]['drift_only_ms']:.3f} / {ws[4]['drift_only_ms']:.3f} | {eff} |")

print("\n# migrate alone (same runs, call 2, new): ms\n")
print("| GPUs | leaving | migrate ms (3 runs) | NCCL raw ms | nothing moving ms |")
print("| ---: | ---: | --- | ---: | ---: |")
news = data["call2"]["new"]
for k, m in enumerate(news[0]["migrate"]):
    ms = " / ".join(f"{d['migrate'][k]['migrate_ms']:.3f}" for d in news)
    print(f"| {m['gpus']} | {100 * m['moved_per_rank'] / news[0]['records_per_gpu']:.0f}% | {ms} | {m['nccl_raw_ms']:.3f} | {m['nothing_moving_ms']:.3f} |")

summary = {"gpu": "NVIDIA H200 (4 x, one host)", "date": "2026-11-26", "method": "bench/distributed.cpp weak scaling, steady state, 30 steps a timing, median of 3 repetitions; base and new alternated in one call",
           "runs": [{"call": c, "variant": v, "run": i, "weak_scaling": list(ws.values())} for c, v, i, ws in rows]}
json.dump(summary, open("../nvidia-h200-x4-2026-11-26-scratch-reuse.json", "w"), indent=1)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for call, v, i, ws in rows:
        g = sorted(ws)
        style = {"base": ("tab:gray", "o"), "new": ("tab:blue" if call == "call2" else "tab:orange", "s")}[v]
        label = f"{call} {v}" if i == 1 else None
        ax.plot(g, [ws[x]["efficiency"] for x in g], color=style[0], marker=style[1], alpha=0.8, label=label)
    ax.axhline(0.9, color="k", ls="--", lw=0.8)
    ax.set_xlabel("GPUs (H200)"); ax.set_ylabel("weak-scaling efficiency"); ax.set_xticks([1, 2, 3, 4]); ax.set_ylim(0.75, 1.02)
    ax.set_title("demo step, 2^26 particles per GPU"); ax.legend(fontsize=7)
    fig.tight_layout(); fig.savefig("../nvidia-h200-x4-2026-11-26-scratch-reuse.png", dpi=110)
except ImportError:
    pass
