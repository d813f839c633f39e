"""Tables, JSON and PNG of nvidia-h200-x4-2026-11-26-small-moves from the raw files here.
python3 summarize.py > tables.md"""
import glob, json, os, re
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "nvidia-h200-x4-2026-11-26-small-moves")

def runs(call, pattern):
    rows = []
    for f in sorted(glob.glob(os.path.join(here, call, pattern)), key=lambda p: int(re.findall(r"(\d+)\.json$", p)[0])):
        j = json.load(open(f))
        variant = re.findall(r"-(\w+)-\d+\.json$", f)[0]
        rows.append((variant, os.path.basename(f), j))
    return rows

calls = {
    "call1": ("4 x H200 machine, --gpus 2, old benchmark (rescatter every repetition)", runs("call1", "bench2-*.json")),
    "call2": ("4 x H200, old benchmark", runs("call2", "bench4-*.json")),
    "call3": ("4 x H200, steady-state benchmark", runs("call3", "bench-*.json")),
    "call7": ("4 x H200, steady-state benchmark", runs("call7", "bench-*.json")),
}
summary = {"gpu": "NVIDIA H200", "date": "2026-11-26", "records_per_gpu": 67108864, "record_bytes": 28, "calls": {}}
print("| call | benchmark | variant | run | 10% migrate ms, 2 GPUs (raw NCCL) | split pass ms (x copy) | step ms 1 / 2 / 3 / 4 GPUs | kick-drift only ms | efficiency 2 / 3 / 4 GPUs |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for call, (what, rs) in calls.items():
    summary["calls"][call] = []
    for variant, name, j in rs:
        m10 = [m for m in j["migrate"] if m["gpus"] == 2 and abs(m["moved_per_rank"] / j["records_per_gpu"] - 0.1) < 0.01][0]
        p10 = [p for p in j["passes"] if abs(p["fraction"] - 0.1) < 0.01][0]
        w = j["weak_scaling"]
        summary["calls"][call].append({"variant": variant, "file": name, "migrate_10pct_2gpu_ms": m10["migrate_ms"], "raw_ms": m10["nccl_raw_ms"],
                                       "split_ms": p10["split_ms"], "copy_ms": p10["copy_ms"], "weak_scaling": w})
        print(f"| {call} | {what} | {variant} | {name} | {m10['migrate_ms']:.3f} ({m10['nccl_raw_ms']:.3f}) | {p10['split_ms']:.3f} ({p10['split_ms'] / p10['copy_ms']:.2f}) | "
              + " / ".join(f"{r['step_ms']:.3f}" for r in w) + " | " + " / ".join(f"{r['drift_only_ms']:.3f}" for r in w) + " | "
              + " / ".join(f"{r['efficiency']:.3f}" for r in w[1:]) + " |")
json.dump(summary, open(out + ".json", "w"), indent=1)

fig, ax = plt.subplots(figsize=(7, 4.5))
style = {"new2": "-D", "new": "-o", "cand2": "-o", "base": "--s", "cand": "--s"}
for call, (what, rs) in calls.items():
    if call == "call1":
        continue
    for variant, name, j in rs:
        w = j["weak_scaling"]
        ax.plot([r["gpus"] for r in w], [r["efficiency"] for r in w], style.get(variant, "-x"), alpha=0.8,
                label=f"{call} {variant} ({'steady state' if call in ('call3', 'call7') else 'rescatter each repetition'})")
ax.axhline(0.9, color="gray", lw=0.8, ls=":")
ax.set_xlabel("GPUs (2^26 particles each)")
ax.set_ylabel("weak-scaling efficiency (1-GPU step / step)")
ax.set_xticks([1, 2, 3, 4])
ax.set_ylim(0.5, 1.02)
ax.set_title("particle demo step, 4 x H200, 2026-11-26")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out + ".png", dpi=110)
