#!/usr/bin/env python3
"""Summarize run.sh's strata_bench JSONs (old-1/2, new-1/2): per row the median aggregate of each
run, the mean of the two runs, GB/s and x cudaMemcpy D2D of the same run. Prints a markdown table. An argument names another directory of such JSONs."""
import json, os, re, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))  # or another call's directory

def rows(path):
    d = json.load(open(path))
    out = {}
    for b in d["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = re.sub(r"/iterations:.*", "", b["run_name"])
        out[name] = (b["real_time"], b["bytes"] / (b["real_time"] * 1e-3) / 1e9)
    return out

runs = {k: [rows(os.path.join(here, f"{k}-{r}.json")) for r in (1, 2)] for k in ("old", "new")}
def memcpy(k):
    return [r[n][1] for r in runs[k] for n in r if n.startswith("memcpy/d2d")]
mem = {k: sum(memcpy(k)) / len(memcpy(k)) for k in runs}
print(f"cudaMemcpy D2D: old {mem['old']:.1f} GB/s, new {mem['new']:.1f} GB/s (mean of the runs' medians)\n")
print("| row | old ms | new ms | new / old time | old x memcpy | new x memcpy |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
names = sorted(set(runs["new"][0]) | set(runs["old"][0]), key=lambda n: (n.split("/")[-1], n))
for n in names:
    if n.startswith("memcpy"):
        continue
    def stat(k):
        v = [r[n] for r in runs[k] if n in r]
        if not v:
            return None
        ms = sum(x[0] for x in v) / len(v)
        ratio = [x[1] / m for x, m in zip(v, memcpy(k))]
        return ms, ratio
    o, w = stat("old"), stat("new")
    fmt = lambda s: "" if s is None else f"{s[0]:.4f}"
    fr = lambda s: "" if s is None else " / ".join(f"{x:.3f}" for x in s[1])
    rel = f"{w[0] / o[0]:.3f}" if o and w else ""
    print(f"| {n} | {fmt(o)} | {fmt(w)} | {rel} | {fr(o)} | {fr(w)} |")
