"""Reads stagger-2.txt (stagger_probe's table) and writes ../nvidia-h200-2026-11-28-norm-stagger.{json,md,png}:
per shape, strata's rows kernel against the same kernel whose k-th block on an SM first waits k * D ns."""
import json
import os
import collections

here = os.path.dirname(os.path.abspath(__file__))
lines = open(os.path.join(here, "stagger-2.txt")).read().splitlines()
gpu, memcpy = lines[0].split(", cudaMemcpy D2D ")
memcpy = float(memcpy.split()[0])
rows = []
for l in lines:
    if not (l.startswith("| layer") or l.startswith("| rms")):
        continue
    c = [x.strip() for x in l.strip("|").split("|")]
    rows.append({"op": c[0], "dtype": c[1], "shape": c[2], "plan": c[3], "blocks_per_sm": int(c[4]), "waves": float(c[5]),
                 "delay_ns": int(c[6]), "library_ms": float(c[7]), "library_x_memcpy": float(c[8]), "staggered_ms": float(c[9]),
                 "staggered_x_memcpy": float(c[10]), "library_over_staggered": float(c[11]), "output": c[12]})
out = {"gpu": gpu, "date": "2026-11-28", "memcpy_gbps": memcpy, "probe": "raw-2026-11-28-norm-stagger/stagger_probe.cu", "results": rows}
base = os.path.join(here, "..", "nvidia-h200-2026-11-28-norm-stagger")
json.dump(out, open(base + ".json", "w"), indent=1)

by = collections.OrderedDict()
for r in rows:
    by.setdefault((r["op"], r["dtype"], r["shape"], r["plan"], r["blocks_per_sm"]), []).append(r)
delays = sorted({r["delay_ns"] for r in rows})
md = [f"{gpu}, cudaMemcpy D2D {memcpy:.1f} GB/s, 2026-11-28. Library / staggered time (above 1: staggering is faster); "
      "library x memcpy is the range over the shape's runs.", "",
      "| op | dtype | rows x hidden | plan | blocks/SM | library x memcpy | " + " | ".join(f"D = {d} ns" for d in delays) + " |",
      "| --- | --- | --- | --- | ---: | ---: | " + " | ".join("---:" for _ in delays) + " |"]
for k, rs in by.items():
    lib = [r["library_x_memcpy"] for r in rs]
    ratio = {r["delay_ns"]: r["library_over_staggered"] for r in rs}
    md.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {min(lib):.3f}-{max(lib):.3f} | " +
              " | ".join(f"{ratio[d]:.3f}" for d in delays) + " |")
assert all(r["output"] == "same" for r in rows)
md.append("")
md.append("Every staggered output equal bit for bit to the library's (all %d runs)." % len(rows))
open(base + ".md", "w").write("\n".join(md) + "\n")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, rs in by.items():
        rs = sorted(rs, key=lambda r: r["delay_ns"])
        ax.plot([r["delay_ns"] / 1000 for r in rs], [r["library_over_staggered"] for r in rs], marker="o", label=f"{k[0]} {k[1]} {k[2]}")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("delay of an SM's k-th block: k x D (us)")
    ax.set_ylabel("library time / staggered time")
    ax.set_title(f"Staggered start of wide-row normalization blocks, {gpu}")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=110)
except ImportError:
    pass
