"""Tables, JSON and plot for bench/results/nvidia-h200-x2-2026-11-26-rank-threads.*: the
distributed_bench runs of calls 1, 3 and 4 (2 x H200), by variant.
  old      b50b39d (migrate's exchange on the calling thread, runs over 64 MB column by column)
  threads  68fde67 (every rank's part on its own thread, its NCCL group included)
  new      a7c1641 (threads + every run packed + the split's early reads)
Call 7 (4 x H200, new = a7c1641 against old = b50b39d) makes nvidia-h200-x4-2026-11-26-rank-threads.{json,png}.
Usage: python3 summarize.py (from this directory); writes the JSON and PNG files next to this
directory and prints the markdown tables."""
import glob, json, os, re, statistics

here = os.path.dirname(os.path.abspath(__file__))
runs = []
for f in sorted(glob.glob(os.path.join(here, "call*/bench*.json"))):
    call = os.path.basename(os.path.dirname(f))
    if call == "call7":
        continue  # the 4-GPU machine: below
    name = os.path.basename(f)
    if call == "call1":
        v = "threads" if name.startswith("bench-new") else "old"
    elif call == "call3":
        v = "threads"  # 68fde67's library with 0ee5027's benchmark (the passes table); call 4 runs it again
    else:
        v = re.match(r"bench-(\w+)-", name).group(1)
    j = json.load(open(f))
    mig = {round(m["moved_per_rank"] / j["records_per_gpu"], 2): m for m in j["migrate"]}
    ws = {s["gpus"]: s for s in j["weak_scaling"]}
    runs.append({"call": call, "file": name, "variant": v, "migrate_10": mig[0.1]["migrate_ms"], "raw_10": mig[0.1]["nccl_raw_ms"],
                 "migrate_2": mig[0.02]["migrate_ms"], "idle": mig[0.1]["nothing_moving_ms"], "step1": ws[1]["step_ms"], "step2": ws[2]["step_ms"],
                 "drift2": ws[2]["drift_only_ms"], "eff2": ws[2]["efficiency"], "passes": j.get("passes", []), "ops": j["exchange_ops"]})

print("| call | variant | 10% migrate ms (raw NCCL) | 2% migrate ms | nothing moving ms | 1-GPU step ms | 2-GPU step ms | efficiency 1 -> 2 |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in runs:
    print(f"| {r['call']} | {r['variant']} | {r['migrate_10']:.3f} ({r['raw_10']:.3f}) | {r['migrate_2']:.3f} | {r['idle']:.3f} | {r['step1']:.3f} | {r['step2']:.3f} | {r['eff2']:.3f} |")
print()
med = {}
for v in sorted({r["variant"] for r in runs}):
    rs = [r for r in runs if r["variant"] == v]
    med[v] = {k: statistics.median(r[k] for r in rs) for k in ("migrate_10", "raw_10", "migrate_2", "idle", "eff2")}
    med[v]["runs"] = len(rs)
print("| variant | runs | 10% migrate ms | raw / migrate | 2% migrate ms | efficiency 1 -> 2 (median) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for v, m in med.items():
    print(f"| {v} | {m['runs']} | {m['migrate_10']:.3f} | {m['raw_10'] / m['migrate_10']:.2f}x | {m['migrate_2']:.3f} | {m['eff2']:.3f} |")
print()
print("| call | variant | leaving | count ms | list ms | split ms | copy ms | split / copy |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in runs:
    for p in r["passes"]:
        print(f"| {r['call']} | {r['variant']} | {100 * p['fraction']:.0f}% | {p['count_ms']:.3f} | {p['list_ms']:.3f} | {p['split_ms']:.3f} | {p['copy_ms']:.3f} | {p['split_ms'] / p['copy_ms']:.2f} |")
print()
print("| call | variant | records per neighbour | 7 column sends ms | 1 send ms |")
print("| --- | --- | ---: | ---: | ---: |")
for r in runs:
    for o in r["ops"]:
        if o["records_per_neighbour"] > 2000000:
            print(f"| {r['call']} | {r['variant']} | {o['records_per_neighbour']} | {o['per_column_ms']:.3f} | {o['packed_ms']:.3f} |")

json.dump({"gpu": "2 x NVIDIA H200", "date": "2026-11-26", "records_per_gpu": 67108864, "runs": runs, "medians": med},
          open(os.path.join(here, "..", "nvidia-h200-x2-2026-11-26-rank-threads.json"), "w"), indent=1)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    order = ["old", "threads", "new"]
    for i, key, title in ((0, "migrate_10", "10% of 2^26 particles leaving (ms)"), (1, "eff2", "weak scaling 1 -> 2 GPUs")):
        for x, v in enumerate(order):
            ys = [r[key] for r in runs if r["variant"] == v]
            ax[i].scatter([x] * len(ys), ys)
        ax[i].set_xticks(range(len(order)), order)
        ax[i].set_title(title)
    ax[0].axhline(statistics.median(r["raw_10"] for r in runs) / 0.9, ls="--", c="gray", label="target (raw NCCL / 0.90)")
    ax[0].legend()
    ax[1].axhline(0.9, ls="--", c="gray", label="target")
    ax[1].legend()
    fig.suptitle("distributed_bench, 2 x H200, 2026-11-26")
    fig.tight_layout()
    fig.savefig(os.path.join(here, "..", "nvidia-h200-x2-2026-11-26-rank-threads.png"), dpi=100)
except ImportError:
    pass

# 4 x H200 (call 7): migrate and weak scaling on 2, 3 and 4 GPUs, new against old, alternated.
four = []
for f in sorted(glob.glob(os.path.join(here, "call7/bench*.json"))):
    j = json.load(open(f))
    v = re.match(r"bench-(\w+)-", os.path.basename(f)).group(1)
    for m in j["migrate"]:
        four.append({"file": os.path.basename(f), "variant": v, "kind": "migrate", "gpus": m["gpus"],
                     "fraction": round(m["moved_per_rank"] / j["records_per_gpu"], 2), "ms": m["migrate_ms"], "raw_ms": m["nccl_raw_ms"]})
    for w in j["weak_scaling"]:
        four.append({"file": os.path.basename(f), "variant": v, "kind": "scaling", "gpus": w["gpus"], "step_ms": w["step_ms"], "efficiency": w["efficiency"]})
print()
print("4 x H200 (call 7):")
print()
print("| variant | run | 10% migrate ms, 2 / 3 / 4 GPUs | 2% migrate ms, 2 / 3 / 4 GPUs | efficiency 2 / 3 / 4 GPUs |")
print("| --- | --- | --- | --- | --- |")
for f in sorted({r["file"] for r in four}, key=lambda x: int(re.search(r"-(\d+)\.json", x).group(1))):
    rs = [r for r in four if r["file"] == f]
    m10 = " / ".join(f"{r['ms']:.3f}" for r in rs if r["kind"] == "migrate" and r["fraction"] == 0.1)
    m2 = " / ".join(f"{r['ms']:.3f}" for r in rs if r["kind"] == "migrate" and r["fraction"] == 0.02)
    ef = " / ".join(f"{r['efficiency']:.3f}" for r in rs if r["kind"] == "scaling" and r["gpus"] > 1)
    print(f"| {rs[0]['variant']} | {f} | {m10} | {m2} | {ef} |")
json.dump({"gpu": "4 x NVIDIA H200", "date": "2026-11-26", "records_per_gpu": 67108864, "rows": four},
          open(os.path.join(here, "..", "nvidia-h200-x4-2026-11-26-rank-threads.json"), "w"), indent=1)
try:
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for v, mk in (("old", "o"), ("new", "s")):
        rs = [r for r in four if r["variant"] == v and r["kind"] == "migrate" and r["fraction"] == 0.1]
        ax[0].scatter([r["gpus"] for r in rs], [r["ms"] for r in rs], marker=mk, label=v)
        rs = [r for r in four if r["variant"] == v and r["kind"] == "scaling"]
        ax[1].scatter([r["gpus"] for r in rs], [r["efficiency"] for r in rs], marker=mk, label=v)
    ax[0].set_title("10% of 2^26 particles leaving (ms)"), ax[0].set_xlabel("GPUs"), ax[0].legend()
    ax[1].set_title("weak scaling of the demo step"), ax[1].set_xlabel("GPUs"), ax[1].axhline(0.9, ls="--", c="gray"), ax[1].legend()
    fig.suptitle("distributed_bench, 4 x H200, 2026-11-26 (new a7c1641, old b50b39d)")
    fig.tight_layout()
    fig.savefig(os.path.join(here, "..", "nvidia-h200-x4-2026-11-26-rank-threads.png"), dpi=100)
except NameError:
    pass
