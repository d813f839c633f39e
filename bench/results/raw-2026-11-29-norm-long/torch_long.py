"""Summary of device call 16 or 21 (raw-2026-11-29-norm-long/call16/, call21/): strata against torch.compile
at rows of 16384-262144 elements, both timed twice in one call; writes the .md/.json/.png named by --out."""
import argparse, json, statistics as st

ap = argparse.ArgumentParser()
ap.add_argument("call", help="the call's folder")
ap.add_argument("--out", required=True)
ap.add_argument("--rev", default="44bb5d4", help="the strata commit the call ran")
ap.add_argument("--run", default="run16.sh", help="the call's script")
a = ap.parse_args()
S = [json.load(open(f"{a.call}/long4-new-{i}.json")) for i in (0, 1)]
T = {}
for i in (0, 1):
    for line in open(f"{a.call}/torch-time-{i}.md"):
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) == 7 and f[0] in ("layer", "rms"):
            dt = {"float32": "fp32", "bfloat16": "bf16"}[f[1]]
            T.setdefault((f[0] + "_norm", dt, int(f[2].split("x")[1])), []).append(float(f[3]))
rows = []
for r in S[0]["results"]:
    if r["variant"] != "strata":
        continue
    k = (r["workload"], r["dtype"], r["hidden"])
    ms = st.median([x["ms"] for s in S for x in s["results"] if x["variant"] == "strata" and (x["workload"], x["dtype"], x["hidden"]) == k])
    own = st.median([x["copy_ms"] for s in S for x in s["results"] if x["variant"] == "strata" and (x["workload"], x["dtype"], x["hidden"]) == k])
    t = st.median(T[k])
    rows.append({"workload": k[0], "dtype": k[1], "hidden": k[2], "rows": r["rows"], "plan": r["plan"], "strata_ms": ms,
                 "torch_compile_ms": t, "x_compile": round(t / ms, 3), "x_memcpy": round(r["bytes"] / ms / 1e6 / S[0]["memcpy_gbps"], 3),
                 "x_own_bytes_copy": round(own / ms, 3)})
json.dump({"memcpy_gbps": S[0]["memcpy_gbps"], "results": rows}, open(a.out + ".json", "w"), indent=1)
faster = sum(r["x_compile"] >= 1.0 for r in rows)
with open(a.out + ".md", "w") as f:
    f.write("NVIDIA H200 (driver 580.159.04, nvcc 13.0; torch 2.11.0+cu130), 2026-11-29. strata at " + a.rev + " (norm_sweep --hidden "
            "16384,32768,65536,262144) and torch.compile (dynamic=False, Inductor's autotuned configs; raw-2026-11-29-norm-long/"
            "inductor_probe.py, do_bench median), alternated twice in one call (raw-2026-11-29-norm-long/" + a.run + "); medians of the two. "
            "Both run the sweep's shapes (rows moving about 256 MB). x compile: torch.compile's time / strata's.\n\n")
    f.write(f"strata is as fast or faster at {faster} of {len(rows)} points.\n\n")
    f.write("| op | dtype | rows x hidden | plan | strata ms | torch.compile ms | x compile | x memcpy (1 GiB) | x copy of its bytes |\n")
    f.write("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
    for r in rows:
        f.write(f"| {r['workload']} | {r['dtype']} | {r['rows']}x{r['hidden']} | {r['plan']} | {r['strata_ms']:.4f} | "
                f"{r['torch_compile_ms']:.4f} | {r['x_compile']:.3f} | {r['x_memcpy']:.3f} | {r['x_own_bytes_copy']:.3f} |\n")
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(9, 4))
labels = [f"{r['workload'].split('_')[0]} {r['dtype']}\n{r['hidden']}" for r in rows]
ax.bar(range(len(rows)), [r["x_compile"] for r in rows], color=["tab:blue" if r["x_compile"] >= 1 else "tab:red" for r in rows])
ax.axhline(1.0, color="k", lw=0.8)
ax.set_xticks(range(len(rows)), labels, fontsize=6)
ax.set_ylabel("torch.compile time / strata time")
ax.set_title(f"H200, long rows: strata ({a.rev}) against torch.compile, same call")
fig.tight_layout()
fig.savefig(a.out + ".png", dpi=120)
