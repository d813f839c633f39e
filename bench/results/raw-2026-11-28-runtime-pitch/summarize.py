# Reads final/rt-{old,new}-{1,2}.txt (runtime_probe.cu output, old = the headers of 28e585f, new =
# this change, run alternately in one device call) and writes the JSON, table and plot of
# bench/results/nvidia-h200-2026-11-28-runtime-pitch.*. Usage: python3 summarize.py
import json, os, re
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "nvidia-h200-2026-11-28-runtime-pitch")

def parse(path):
    rows, memcpy = {}, None
    for line in open(path):
        m = re.search(r"cudaMemcpy D2D ([0-9.]+) GB/s", line)
        if m: memcpy = float(m.group(1))
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 10 and c[1].isdigit():
            rows[c[0]] = dict(stride=int(c[1]), fields=int(c[2]), records=int(c[3]), to_aos_ms=float(c[4]), to_aos_x=float(c[5]),
                              to_aos_ok=c[6] == "bit for bit", to_soa_ms=float(c[7]), to_soa_x=float(c[8]), to_soa_ok=c[9] == "bit for bit")
    return memcpy, rows

runs = {f"{v}-{i}": parse(os.path.join(here, "final", f"rt-{v}-{i}.txt")) for v in ("old", "new") for i in (1, 2)}
shapes = list(runs["old-1"][1].keys())
gpu = open(os.path.join(here, "final", "gpu.txt")).read().strip()
doc = {"gpu": gpu, "date": "2026-11-28", "probe": "bench/results/raw-2026-11-28-runtime-pitch/runtime_probe.cu",
       "old": "headers of 28e585f", "new": "this change", "runs": {k: {"memcpy_gbps": m, "rows": r} for k, (m, r) in runs.items()}}
json.dump(doc, open(out + ".json", "w"), indent=1)

def rng(key, shape, v):
    xs = [runs[f"{v}-{i}"][1][shape][key] for i in (1, 2)]
    return min(xs), max(xs)
def fmt(lo, hi):
    return f"{lo:.3f}" if abs(hi - lo) < 5e-4 else f"{lo:.3f}-{hi:.3f}"

lines = [f"# Runtime-described AoS <-> SoA: every unit's element order rotated, fields in their widest aligned pieces, tiles of up to 4096 records ({gpu.split(',')[0]}, 2026-11-28)", "",
         f"{gpu} (name, driver, max SM clock). `runtime_probe.cu` (raw-2026-11-28-runtime-pitch/) built against the headers of 28e585f (old) and of this change (new),",
         "run old, new, old, new in one device call; each figure is the median of 20 runs with L2 overwritten before each, as a share of",
         "cudaMemcpy D2D of the same bytes (read plus written) in the same process. Both columns of each run were checked bit for bit",
         "against a host transposition (gap bytes zero). Ranges are over the two runs.", "",
         "| record | stride | SoA -> AoS old | new | new / old time | AoS -> SoA old | new | new / old time |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
ratios = []
for s in shapes:
    st = runs["old-1"][1][s]["stride"]
    oa, na = rng("to_aos_x", s, "old"), rng("to_aos_x", s, "new")
    os_, ns = rng("to_soa_x", s, "old"), rng("to_soa_x", s, "new")
    ta = sum(runs[f"new-{i}"][1][s]["to_aos_ms"] for i in (1, 2)) / sum(runs[f"old-{i}"][1][s]["to_aos_ms"] for i in (1, 2))
    ts = sum(runs[f"new-{i}"][1][s]["to_soa_ms"] for i in (1, 2)) / sum(runs[f"old-{i}"][1][s]["to_soa_ms"] for i in (1, 2))
    ok = all(runs[k][1][s]["to_aos_ok"] and runs[k][1][s]["to_soa_ok"] for k in runs)
    lines.append(f"| {s} | {st} | {fmt(*oa)} | {fmt(*na)} | {ta:.3f} | {fmt(*os_)} | {fmt(*ns)} | {ts:.3f} |" + ("" if ok else " WRONG"))
    ratios.append((s, (oa[0] + oa[1]) / 2, (na[0] + na[1]) / 2, (os_[0] + os_[1]) / 2, (ns[0] + ns[1]) / 2))
lines += ["", "cudaMemcpy D2D: " + ", ".join(f"{k} {m:.1f} GB/s" for k, (m, _) in runs.items()) + ".", ""]
open(out + ".md", "w").write("\n".join(lines))

fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
for ax, (title, o, n) in zip(axes, [("SoA -> AoS (soa_to_aos, runtime fields)", 1, 2), ("AoS -> SoA (aos_to_soa, runtime fields)", 3, 4)]):
    y = range(len(ratios))
    ax.barh([i + 0.2 for i in y], [r[o] for r in ratios], height=0.4, label="old (28e585f)", color="#bbbbbb")
    ax.barh([i - 0.2 for i in y], [r[n] for r in ratios], height=0.4, label="new", color="#2a6fb0")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlim(0, 1.1)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("x cudaMemcpy (same bytes, same run)")
    ax.set_yticks(list(y))
    ax.set_yticklabels([r[0] for r in ratios], fontsize=8)
    ax.invert_yaxis()
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper right", fontsize=8)
fig.suptitle(f"Runtime-described record conversions, {gpu.split(',')[0]}, 2026-11-28 (mean of two runs)", fontsize=11)
fig.tight_layout(rect=(0, 0, 1, 0.93))
fig.savefig(out + ".png", dpi=110)
