#!/usr/bin/env python3
"""Table and plot of a lib_probe call log (before / after rounds): median ratio to cudaMemcpy per
record and direction. Usage: summarize.py lib-call6.txt [out.png]"""
import re, statistics, sys
from collections import defaultdict

rows = defaultdict(list)  # (build, record, bytes, direction) -> ratios
pat = re.compile(r"^(before|after)\s+(\S+)\s+(\d+) B n=\d+ \| aos_to_soa [\d.]+ ms ([\d.]+) x memcpy \| soa_to_aos [\d.]+ ms ([\d.]+) x memcpy \| round trip words differing (\d+)(?:, column bytes differing (\d+))?")
bad = 0
order = []
for line in open(sys.argv[1]):
    m = pat.match(line.strip())
    if not m:
        continue
    b, rec, size, to_soa, to_aos, rt, col = m.groups()
    if (rec, int(size)) not in order:
        order.append((rec, int(size)))
    rows[(b, rec, "to_soa")].append(float(to_soa))
    rows[(b, rec, "to_aos")].append(float(to_aos))
    bad += int(rt) + int(col or 0)
med = lambda b, r, d: statistics.median(rows[(b, r, d)])
print("| record | bytes | AoS -> SoA before | after | SoA -> AoS before | after |")
print("| --- | --- | --- | --- | --- | --- |")
for rec, size in sorted(order, key=lambda x: x[1]):
    print(f"| {rec} | {size} | {med('before', rec, 'to_soa'):.3f} | {med('after', rec, 'to_soa'):.3f} | {med('before', rec, 'to_aos'):.3f} | {med('after', rec, 'to_aos'):.3f} |")
print(f"\nround-trip words and column bytes differing, all rows: {bad}")
if len(sys.argv) > 2:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    recs = sorted(order, key=lambda x: x[1])
    x = range(len(recs))
    fig, ax = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for a, d, title in ((ax[0], "to_soa", "AoS -> SoA"), (ax[1], "to_aos", "SoA -> AoS")):
        a.plot(x, [med("before", r, d) for r, _ in recs], "o--", label="before (d969b36)")
        a.plot(x, [med("after", r, d) for r, _ in recs], "o-", label="after")
        a.set_xticks(list(x)); a.set_xticklabels([f"{r}\n{s} B" for r, s in recs], fontsize=7)
        a.axhline(0.95, color="gray", lw=0.5); a.set_title(title); a.set_ylim(0, 1.05); a.grid(alpha=0.3)
    ax[0].set_ylabel("x cudaMemcpy D2D (same process)"); ax[0].legend()
    fig.suptitle("strata AoS <-> SoA transposes, records of 36-256 bytes, NVIDIA H200, 2026-11-27")
    fig.tight_layout(); fig.savefig(sys.argv[2], dpi=110)
