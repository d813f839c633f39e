#!/usr/bin/env python3
"""Tiled plans against the fastest row plan weighed, dense rows of 1-32 elements (call 2's
--dense --validate sweep): writes ../nvidia-h200-2026-11-29-norm-tiled.{md,json,png}."""
import json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
d = json.load(open(os.path.join(here, "call2", "dense-1.json")))
gbps = d["memcpy_gbps"]
rows = []
for r in d["results"]:
    size = 4 if r["dtype"] == "fp32" else 2
    bytes_ = r["bytes"]
    tiled = [p for p in r["considered"] if p["plan"].startswith("tiled")]
    other = [p for p in r["considered"] if not p["plan"].startswith("tiled")]
    if not tiled or not other:
        continue
    t, o = tiled[0], min(other, key=lambda p: p["ms"])
    row_bytes = r["hidden"] * size
    whole4 = row_bytes % 16 == 0 and row_bytes >= 64
    takes = "tiled" if row_bytes <= 64 and not whole4 else "rows"
    x = lambda ms: bytes_ / (ms * 1e-3) / 1e9 / gbps
    rows.append(dict(op=r["workload"], dtype=r["dtype"], hidden=r["hidden"], row_bytes=row_bytes, rows=r["rows"], tiled_ms=t["ms"],
                     tiled_x_memcpy=round(x(t["ms"]), 3), rows_plan=o["plan"], rows_ms=o["ms"], rows_x_memcpy=round(x(o["ms"]), 3),
                     speedup=round(o["ms"] / t["ms"], 2), chosen_now=takes))
out = os.path.join(here, "..", "nvidia-h200-2026-11-29-norm-tiled")
json.dump({"gpu": "NVIDIA H200", "date": "2026-11-29", "memcpy_gbps": gbps, "source": "raw-2026-11-29-norm-tiled/call2/dense-1.json",
           "results": rows}, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write("# Normalization of short dense rows: tiled plans against row plans, H200, 2026-11-29\n\n")
    f.write("NVIDIA H200, driver 580.159.04, nvcc 13.0. `norm_sweep --dense --validate` (rows back to back in plain device\n"
            "buffers, about 256 MB moved a point, median of 20 runs after a 256 MiB memset), every plan the chooser\n"
            "weighs timed in one run (`raw-2026-11-29-norm-tiled/call2/`). x memcpy: against a 1 GiB cudaMemcpy of\n"
            "the same run (%.1f GB/s). `rows plan`: the fastest row plan weighed, which the code before chose at best;\n"
            "`chosen now`: the plan the library takes for such rows (tiled up to 64 bytes a row, but for rows of 4 whole\n"
            "16-byte units).\n\n" % gbps)
    f.write("| op | dtype | hidden | row bytes | tiled ms | x memcpy | fastest row plan | ms | x memcpy | tiled speed-up | chosen now |\n")
    f.write("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |\n")
    for r in rows:
        f.write("| %s | %s | %d | %d | %.4f | %.3f | %s | %.4f | %.3f | %.2fx | %s |\n" % (
            r["op"], r["dtype"], r["hidden"], r["row_bytes"], r["tiled_ms"], r["tiled_x_memcpy"], r["rows_plan"], r["rows_ms"],
            r["rows_x_memcpy"], r["speedup"], r["chosen_now"]))
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
for ax, op in zip(axes, ["layer_norm", "rms_norm"]):
    for dtype, c in [("fp32", "tab:blue"), ("bf16", "tab:orange")]:
        pts = [r for r in rows if r["op"] == op and r["dtype"] == dtype]
        h = [r["hidden"] for r in pts]
        ax.plot(h, [r["tiled_x_memcpy"] for r in pts], "o-", color=c, label=dtype + " tiled")
        ax.plot(h, [r["rows_x_memcpy"] for r in pts], "x--", color=c, label=dtype + " fastest row plan")
    ax.set_title(op + ", dense rows")
    ax.set_xlabel("elements a row")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("x cudaMemcpy (1 GiB)")
axes[0].legend()
fig.suptitle("Short dense rows: tiled plans against the fastest row plan, H200, 2026-11-29")
fig.tight_layout()
fig.savefig(out + ".png", dpi=110)
print(len(rows), "points")
