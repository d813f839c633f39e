# Turns h100/call1's erase_sweep outputs into the JSON and PNG of
# nvidia-h100-80gb-hbm3-2026-11-25-erase_if-resident-columns.{json,png}.
# Run from the repository root: python3 bench/results/raw-2026-11-25-resident-columns/summarize.py
# Another call's outputs: summarize.py SWEEP_DIR RESULTS_STEM (the H200 call: raw-2026-11-25-resident-columns-h200
# nvidia-h200-2026-11-25-erase_if-resident-columns).
import json, re, pathlib, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = pathlib.Path(sys.argv[1]) if len(sys.argv) > 2 else pathlib.Path(__file__).parent / "h100" / "call1"
out = pathlib.Path(__file__).parent.parent / (sys.argv[2] if len(sys.argv) > 2 else "nvidia-h100-80gb-hbm3-2026-11-25-erase_if-resident-columns")
rows = {}
pat = re.compile(r"(.+?)\s+(\d+) B/record\s+(\d+) leaves\s+n\s+(\d+)\s+removed\s+(\d+)%\s+([0-9.]+) ms\s+memcpy\s+([0-9.]+) ms\s+x memcpy ([0-9.]+)\s+(\S+)")
for run in ["old-1", "new-1", "old-2", "new-2"]:
    version, rep = run.split("-")
    for line in open(here / f"sweep-{run}.txt"):
        m = pat.match(line)
        if not m: continue
        key = (m.group(1).strip(), int(m.group(5)))
        r = rows.setdefault(key, {"record": key[0], "bytes_per_record": int(m.group(2)), "leaves": int(m.group(3)), "n": int(m.group(4)),
                                   "removed_percent": key[1], "old": [], "new": []})
        r[version].append({"ms": float(m.group(6)), "memcpy_ms": float(m.group(7)), "x_memcpy": float(m.group(8)), "check": m.group(9)})
doc = {"gpu": (here / "gpu.txt").read_text().strip(), "date": "2026-11-25",
       "old": "include/strata/algorithm/compact.hpp of 1f8e56e", "new": "compact.hpp of 38e346e (unchanged through ba5c89e): narrow columns kept in shared memory through the writing pass",
       "method": "erase_sweep.cu of raw-2026-11-25-erase_if-pass: median of 9 after 2 warm-ups, events, 256 MiB memset before each; x memcpy = "
                 "cudaMemcpy of the bytes read once and written once, same run; old and new alternated twice in one call",
       "rows": list(rows.values())}
out.with_suffix(".json").write_text(json.dumps(doc, indent=1))
names = list(dict.fromkeys(r["record"] for r in rows.values()))
fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
for ax, pct in zip(axes, [10, 50, 90]):
    xs = range(len(names))
    for off, v, c in [(-0.2, "old", "#999999"), (0.2, "new", "#1f77b4")]:
        ys = [sum(e["x_memcpy"] for e in rows[(n, pct)][v]) / len(rows[(n, pct)][v]) for n in names]
        ax.bar([x + off for x in xs], ys, 0.4, label=v, color=c)
    ax.set_xticks(list(xs)); ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.axhline(0.8, color="red", lw=0.8, ls="--"); ax.set_title(f"{pct}% removed")
axes[0].set_ylabel("cudaMemcpy time / erase_if time\n(same bytes, mean of 2 runs)"); axes[0].legend()
fig.suptitle(f"erase_if, {doc['gpu'].split(',')[0]}, 2026-11-25: old vs narrow columns kept in shared memory")
fig.tight_layout(); fig.savefig(out.with_suffix(".png"), dpi=90)
for (n, pct), r in rows.items():
    print(f"| {n} | {pct}% | " + ", ".join(f"{e['x_memcpy']:.3f}" for e in r["old"]) + " | " + ", ".join(f"{e['x_memcpy']:.3f}" for e in r["new"]) + " |")
