"""Tables, JSON and plot for the migrate-ahead probes: base = c354040's headers, new = 95d7ed6's
(call1, ahead.diff) or ahead2.diff's (call2), the same bench source, alternated in each call on
4 x H200. Run from this folder."""
import glob, json, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

runs = []
for call in ("call1", "call2"):
    for f in sorted(glob.glob(call + "/bench-*.json")):
        v, i = os.path.basename(f)[len("bench-"):-len(".json")].split("-")
        runs.append((call, v, int(i), json.load(open(f))))
runs.sort(key=lambda r: (r[0], r[2], r[1] != "base"))
out = {"gpu": runs[0][3]["gpu"], "date": runs[0][3]["date"], "records_per_gpu": runs[0][3]["records_per_gpu"], "runs": []}
lines = ["| call | variant | run | step ms 1 / 2 / 3 / 4 GPUs | efficiency 2 / 3 / 4 | steps that went ahead 2 / 3 / 4 | migrate, nothing moving, ms 2 / 3 / 4 GPUs | migrate 10% ms, 2 GPUs (NCCL raw) |",
         "| --- | --- | ---: | --- | --- | --- | --- | --- |"]
for call, v, i, d in runs:
    ws = d["weak_scaling"]
    mig = d["migrate"]
    idle = {m["gpus"]: m["nothing_moving_ms"] for m in mig}
    ten = [m for m in mig if m["gpus"] == 2 and m["moved_per_rank"] > 0.05 * d["records_per_gpu"]][0]
    lines.append("| %s | %s | %d | %s | %s | %s | %s | %.3f (%.3f) |" % (
        call, v, i, " / ".join("%.3f" % s["step_ms"] for s in ws), " / ".join("%.3f" % s["efficiency"] for s in ws[1:]),
        " / ".join("%.2f" % s.get("ahead_share", 0) for s in ws[1:]), " / ".join("%.3f" % idle[g] for g in (2, 3, 4)),
        ten["migrate_ms"], ten["nccl_raw_ms"]))
    out["runs"].append({"call": call, "variant": v, "run": i, "weak_scaling": ws, "migrate": mig})
open("tables.md", "w").write("\n".join(lines) + "\n")
json.dump(out, open("../nvidia-h200-x4-2026-11-27-ahead.json", "w"), indent=1)
fig, ax = plt.subplots(figsize=(6, 3.6))
colors = {("call1", "new"): "tab:red", ("call2", "new"): "tab:orange", ("call1", "base"): "tab:blue", ("call2", "base"): "tab:cyan"}
names = {("call1", "new"): "ahead, 2x slots for every pair", ("call2", "new"): "ahead, right-sized slots, used pairs",
         ("call1", "base"): "waiting path (c354040), call 1", ("call2", "base"): "waiting path (c354040), call 2"}
for call, v, i, d in runs:
    ws = d["weak_scaling"]
    ax.plot([s["gpus"] for s in ws], [s["efficiency"] for s in ws], "o-" if v == "new" else "s--",
            color=colors[(call, v)], label="%s, run %d" % (names[(call, v)], i))
ax.axhline(0.9, color="gray", lw=0.8, ls=":")
ax.set_xlabel("GPUs (H200, 2^26 particles each)"); ax.set_ylabel("weak-scaling efficiency of the demo step")
ax.set_xticks([1, 2, 3, 4]); ax.legend(fontsize=7); ax.set_title("migrate ahead of its counts: no gain", fontsize=9)
fig.tight_layout(); fig.savefig("../nvidia-h200-x4-2026-11-27-ahead.png", dpi=120)
print("\n".join(lines))
