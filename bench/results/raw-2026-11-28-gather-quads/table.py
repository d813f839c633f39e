# Turns sweep-1.txt (quads_sweep's output) and library/bench.json into the committed results:
# ../nvidia-h200-2026-11-28-gather-quads.{json,md,png}.
import json, re, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = []
for line in open("sweep-1.txt"):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) == 9 and c[0] and c[0] != "record" and not c[0].startswith("-"):
        rows.append(dict(record=c[0], steps=c[1], far_share=float(c[2]), kernel=c[3], registers=int(c[4]), local_bytes=int(c[5]),
                         ms=float(c[6]), x_memcpy=float(c[7]), output=c[8]))
gpu = open("library/gpu.txt").read().strip()
bench = json.load(open("library/bench.json"))
lib = []
memcpy = None
for b in bench["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"]
    gbps = b["bytes_per_second"] / 1e9
    if name.startswith("memcpy/d2d"):
        memcpy = gbps
    elif name.startswith(("gather/", "permute/")):
        lib.append(dict(name=name.split("/iterations")[0], ms=b["real_time"], gbps=round(gbps, 1)))
for r in lib:
    r["x_memcpy"] = round(r["gbps"] / memcpy, 3)
default = "quads: held 448 (4 quads), min blocks 1"
out = dict(gpu=gpu, date="2026-11-28", commit="36da436", sweep=rows, library_bench=lib, library_memcpy_gbps=round(memcpy, 1),
           default_kernel=default)
json.dump(out, open("../nvidia-h200-2026-11-28-gather-quads.json", "w"), indent=1)

md = [f"# strata::gather, columns way: four destinations per access (gather_quads), {gpu}, 2026-11-28", "",
      "Sweep (`raw-2026-11-28-gather-quads/quads_sweep.cu`, 2^26 records, every output equal to a host reference):",
      "x memcpy of the record bytes read once and written once. The library runs held 448, min blocks 1.", "",
      "| record | steps | far share | one record at a time | quads (library) | ratio | best quads variant |",
      "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
keys = []
for r in rows:
    if (r["record"], r["steps"]) not in keys:
        keys.append((r["record"], r["steps"]))
for k in keys:
    rs = [r for r in rows if (r["record"], r["steps"]) == k]
    old = next(r for r in rs if r["kernel"].startswith("one record"))
    new = next(r for r in rs if r["kernel"].startswith(default))
    best = max((r for r in rs if r["kernel"].startswith("quads")), key=lambda r: r["x_memcpy"])
    md.append(f"| {k[0]} | {k[1]} | {old['far_share']:.3f} | {old['x_memcpy']:.3f} | {new['x_memcpy']:.3f} | {new['x_memcpy'] / old['x_memcpy']:.2f} | "
              f"{best['kernel'].split(', ', 1)[0].replace('quads: ', '')} {best['x_memcpy']:.3f} |")
md += ["", f"Library benchmarks (`strata_bench --benchmark_filter='memcpy|gather|permute'`, 7 fp32 columns, cudaMemcpy D2D {memcpy:.0f} GB/s):", "",
       "| benchmark | ms | GB/s | x memcpy |", "| --- | ---: | ---: | ---: |"]
md += [f"| {r['name']} | {r['ms']:.3f} | {r['gbps']} | {r['x_memcpy']} |" for r in lib]
open("../nvidia-h200-2026-11-28-gather-quads.md", "w").write("\n".join(md) + "\n")

fig, ax = plt.subplots(figsize=(7, 4))
ps = [r for r in rows if r["record"].startswith("particle") and r["steps"] != "random"]
steps = sorted({int(r["steps"]) for r in ps})
for label, pick in [("one record at a time (before)", "one record"), ("quads, library default", default)]:
    ys = [next(r["x_memcpy"] for r in ps if int(r["steps"]) == s and r["kernel"].startswith(pick)) for s in steps]
    fs = [next(r["far_share"] for r in ps if int(r["steps"]) == s) for s in steps]
    ax.plot(fs, ys, marker="o", label=label)
ax.set_xlabel("far share of consecutive indices (re-sort after 0, 5, 20, 50, 100 steps)")
ax.set_ylabel("x cudaMemcpy")
ax.set_title(f"gather of 2^26 particles (7 fp32) by the demo's re-sort, {gpu.split(',')[0]}")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig("../nvidia-h200-2026-11-28-gather-quads.png", dpi=110)
