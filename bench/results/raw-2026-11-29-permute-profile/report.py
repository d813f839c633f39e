"""Summary of the span counter's effect on strata::gather (H200): call4/choice.txt (14d744b) against
raw-2026-11-28-gather-quads/choice-1.txt (the quads with a fixed stride), both choice_probe.cu runs
with a memcpy in the same run. Writes nvidia-h200-2026-11-29-gather-spans.{md,json,png}."""
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = pathlib.Path(__file__).resolve().parent
results = here.parent


def rows(path):
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and (cells[0].isdigit() or cells[0] == "random"):
            out[cells[0]] = {"far_share": float(cells[1]), "count_ms": float(cells[2]), "columns_ms": float(cells[3]),
                             "records_ms": float(cells[4]), "count_x": float(cells[5]), "columns_x": float(cells[6]),
                             "records_x": float(cells[7]), "count_took": cells[8], "outputs": cells[9]}
    return out


after = rows(here / "call4" / "choice.txt")
before = rows(results / "raw-2026-11-28-gather-quads" / "choice-1.txt")
steps = [s for s in after if s in before]
md = ["# strata::gather, columns way: blocks take their spans in turn (span counter), NVIDIA H200, 580.159.04, 2026-11-29", "",
      "`choice_probe.cu` (`raw-2026-11-28-gather-quads/`), 2^26 particles of 7 fp32 leaves gathered by the demo's re-sort after",
      "0-150 steps and a random permutation; x memcpy of the record bytes read once and written once, memcpy in the same run.",
      "Before: 36da436's quads with a fixed stride (`raw-2026-11-28-gather-quads/choice-1.txt`, 2026-11-28). After: 14d744b",
      "(`raw-2026-11-29-permute-profile/call4/choice.txt`). Every output equal to the other ways' in both runs.", "",
      "| steps | far share | columns way before | columns way after | ratio | records way after | count's way after | count took |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
for s in steps:
    a, b = after[s], before[s]
    md.append(f"| {s} | {a['far_share']:.4f} | {b['columns_x']:.3f} | {a['columns_x']:.3f} | {b['columns_ms'] / a['columns_ms']:.2f} | "
              f"{a['records_x']:.3f} | {a['count_x']:.3f} | {a['count_took']} |")
md += ["", "DRAM reads of the re-sort after 50 steps (Nsight Compute, `call1/ncu-resort.txt`, `call4/ncu-resort.txt`): 4.53 GB before,",
       "3.22 GB after, against 2.15 GB for a copy of the columns and indices.", ""]
(results / "nvidia-h200-2026-11-29-gather-spans.md").write_text("\n".join(md))
(results / "nvidia-h200-2026-11-29-gather-spans.json").write_text(json.dumps({"gpu": "NVIDIA H200", "driver": "580.159.04", "date": "2026-11-29",
                                                                              "before": before, "after": after}, indent=1))
x = [after[s]["far_share"] for s in steps if s != "random"]
fig, ax = plt.subplots(figsize=(7, 4))
for label, data, key, style in [("columns way, fixed stride (2026-11-28)", before, "columns_x", "o--"), ("columns way, span counter", after, "columns_x", "o-"),
                                ("records way", after, "records_x", "s:"), ("count's choice, span counter", after, "count_x", "^-")]:
    ax.plot(x, [data[s][key] for s in steps if s != "random"], style, label=label)
ax.axhline(0.80, color="grey", lw=0.8)
ax.set_xlabel("far share of the re-sort's indices (0-150 steps of drift)")
ax.set_ylabel("x cudaMemcpy")
ax.set_title("strata::gather of 2^26 particles by re-sorts, H200")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(results / "nvidia-h200-2026-11-29-gather-spans.png", dpi=110)
