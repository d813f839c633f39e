#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two builds' benchmark rows from one session: the same rows of a BEFORE and an AFTER
binary, run alternately on one machine (Google Benchmark --benchmark_out files, one per run).

  compare.py --before a1.json [a2.json ...] --after b1.json [b2.json ...] --out PREFIX
      [--gpu NAME] [--before-commit SHA] [--after-commit SHA] [--command TEXT]

For each row, the median time of each run's repetitions, then the median over runs; x memcpy uses
the same build's memcpy row (device rows only: host transfers compare with their own pinned-copy
row). Writes PREFIX.json and PREFIX.md: after/before time per row (1.00 =
unchanged; below 1 = faster) and the rows only the after build has.
"""
import argparse, datetime, json, statistics


def medians(path):
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].split("/iterations")[0].split("/repeats")[0]
        rows[name] = (b["real_time"], b.get("time_unit", "ms"), b.get("bytes_per_second", 0.0) / 1e9)
    return rows


def combine(paths):
    runs = [medians(p) for p in paths]
    out = {}
    for name in set().union(*runs):
        vals = [r[name] for r in runs if name in r]
        out[name] = {"time": statistics.median(v[0] for v in vals), "unit": vals[0][1],
                     "gbps": statistics.median(v[2] for v in vals), "runs": len(vals)}
    return out


def memcpy_gbps(rows):
    m = [v["gbps"] for k, v in rows.items() if k.startswith("memcpy/")]
    return m[0] if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="unknown")
    ap.add_argument("--before-commit", default="unknown")
    ap.add_argument("--after-commit", default="unknown")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    before, after = combine(a.before), combine(a.after)
    mb, ma = memcpy_gbps(before), memcpy_gbps(after)
    rows = []
    for name in sorted(after):
        r = {"name": name, "after_time": after[name]["time"], "unit": after[name]["unit"], "after_gbps": round(after[name]["gbps"], 1),
             "after_x_memcpy": round(after[name]["gbps"] / ma, 3) if ma and after[name]["gbps"] and not name.startswith("host_") else None}
        if name in before:
            r["before_time"] = before[name]["time"]
            r["before_gbps"] = round(before[name]["gbps"], 1)
            r["after_over_before_time"] = round(after[name]["time"] / before[name]["time"], 3)
        rows.append(r)
    meta = {"gpu": a.gpu, "date": datetime.date.today().isoformat(), "before_commit": a.before_commit,
            "after_commit": a.after_commit, "command": a.command, "before_runs": len(a.before), "after_runs": len(a.after),
            "memcpy_gbps_before": mb, "memcpy_gbps_after": ma}
    json.dump({"meta": meta, "rows": rows}, open(a.out + ".json", "w"), indent=1)
    lines = [f"# {a.gpu}: {a.before_commit} (before) vs {a.after_commit} (after), one session, {meta['date']}", "",
             f"Runs alternate before/after ({len(a.before)} + {len(a.after)}); per row the median over runs of each run's median.",
             f"cudaMemcpy D2D: before {mb and round(mb, 1)} GB/s, after {ma and round(ma, 1)} GB/s.", ""]
    if a.command:
        lines += [f"Command: `{a.command}`", ""]
    lines += ["| row | before | after | unit | after / before time | after GB/s | after x memcpy |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "before_time" in r:
            lines.append(f"| {r['name']} | {r['before_time']:.4f} | {r['after_time']:.4f} | {r['unit']} | {r['after_over_before_time']} | "
                         f"{r['after_gbps'] or ''} | {r['after_x_memcpy'] or ''} |")
    lines += ["", "Rows only the after build has:", "", "| row | time | unit | GB/s | x memcpy |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        if "before_time" not in r:
            lines.append(f"| {r['name']} | {r['after_time']:.4f} | {r['unit']} | {r['after_gbps']} | {r['after_x_memcpy']} |")
    open(a.out + ".md", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
