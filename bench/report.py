#!/usr/bin/env python3
"""Turns benchmark output into strata's results format, a markdown table and plots.

  report.py results RAW.json [--extra rows.json ...] --out DIR [--commit SHA]
      RAW.json is Google Benchmark's --benchmark_out; rows.json hold rows already in the results
      format (the PyTorch layer-norm script writes those). Writes DIR/<gpu>/<date>/strata_bench.json
      and its table, strata_bench.md (bench/results/INDEX.md: the layout). --gpus N (N > 1) files a
      run of several GPUs under <gpu>-xN.
  report.py readme RESULTS.json README.md
      Replaces the README's section between <!-- results:begin --> and <!-- results:end --> with
      the table and the plots of RESULTS.json.
  report.py render RESULTS.json [--png]
      Writes RESULTS.md (table) and, with --png, one plot a workload beside it: <workload>.png for
      strata_bench.json, NAME-<workload>.png for NAME.json (GB/s against size per variant, with the
      cudaMemcpy line). Tables and plots are only ever generated from results.
"""
import argparse, datetime, json, os, re, sys

# The peer each workload's variants are compared with (DESIGN.md's peer column).
PEERS = {
    "particle_advance": "thrust_zip",
    "aos_to_soa": "naive",
    "soa_to_aos": "naive",
    "host_aos_to_device_soa": "pinned_memcpy",
    "reduce_sum": "cub",
    "kinetic_energy": "thrust_zip",
    "statistics": "thrust",
    "mixed_sum": "thrust_zip",
    "layer_norm": "torch_eager",
    "rms_norm": "torch_eager",
    "transform_latency": "hand_float4",
    "sort_by_key": "thrust_zip",
    "erase_if": "thrust_zip",
    "permute": "column_gather",
}


DTYPES = {"fp32", "bf16", "fp16"}


def parse_name(name):
    """workload/variant/size[/dtype or record] -> fields; size is n or ROWSxHIDDEN."""
    parts = name.split("/")
    row = {"workload": parts[0], "variant": parts[1]}
    size = parts[2]
    m = re.fullmatch(r"(\d+)x(\d+)", size)
    if m:
        row["rows"], row["hidden"] = int(m.group(1)), int(m.group(2))
        row["n"] = row["rows"] * row["hidden"]
    else:
        row["n"] = int(size)
    if len(parts) > 3 and not parts[3].startswith(("iterations", "repeats", "manual")):
        row["dtype" if parts[3] in DTYPES else "record"] = parts[3]
    return row


def key(row):
    return (row["workload"], row["n"], row.get("dtype"), row.get("record"), row.get("rows"), row.get("hidden"))


def add_ratios(rows, memcpy_gbps):
    by_key = {}
    for r in rows:
        by_key.setdefault(key(r), {})[r["variant"]] = r
    for r in rows:
        r["ratio_memcpy"] = round(r["gbps"] / memcpy_gbps, 3) if memcpy_gbps else None
        peer = PEERS.get(r["workload"])
        p = by_key[key(r)].get(peer)
        if p and r["variant"] != peer:
            r["peer"] = peer
            r["ratio_peer"] = round(r["gbps"] / p["gbps"], 3)


def results(args):
    raw = json.load(open(args.raw))
    ctx = raw["context"]
    rows, memcpy_gbps = [], None
    for b in raw["benchmarks"]:
        # Runs are reported as aggregates over repetitions; the median is the figure we keep.
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median" or b.get("error_occurred"):
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        row = parse_name(name)
        ms = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        row.update(bytes=int(b["bytes"]), ms=round(ms, 4), gbps=round(b["bytes"] / (ms * 1e-3) / 1e9, 1))
        if "enqueue_us" in b:  # host time to issue one call (back-to-back benchmarks)
            row["enqueue_us"] = round(b["enqueue_us"], 2)
        if row["workload"] == "memcpy":
            memcpy_gbps = row["gbps"]
            continue
        rows.append(row)
    for extra in args.extra or []:
        rows += json.load(open(extra))["results"]
    add_ratios(rows, memcpy_gbps)
    date = datetime.date.today().isoformat()
    out = {"gpu": ctx.get("gpu", "unknown"), "date": date, "cuda": ctx.get("cuda", "unknown"),
           "commit": args.commit, "memcpy_gbps": memcpy_gbps, "results": rows}
    folder = os.path.join(args.out, gpu_folder(out["gpu"], args.gpus), date)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "strata_bench.json")
    json.dump(out, open(path, "w"), indent=1)
    open(os.path.join(folder, "strata_bench.md"), "w").write(table(out))
    print(path)


def gpu_folder(gpu, gpus=1):
    """"NVIDIA H100 80GB HBM3" -> nvidia-h100: the name without its memory size and what follows."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    slug = re.sub(r"-\d+gb(-.*)?$", "", slug)
    return slug + (f"-x{gpus}" if gpus > 1 else "")


def plot_prefix(results):
    """strata_bench.json's plots are <workload>.png; another NAME.json's NAME-<workload>.png."""
    stem = os.path.splitext(os.path.basename(results))[0]
    return os.path.join(os.path.dirname(results), "" if stem == "strata_bench" else stem + "-")


def table(res):
    lines = [f"GPU: {res['gpu']}, CUDA {res['cuda']}, {res['date']}, commit {res['commit']}; "
             f"cudaMemcpy D2D {res['memcpy_gbps']} GB/s (read + write)", "",
             "| workload | shape | variant | ms | GB/s | x memcpy | x peer (peer) |",
             "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in res["results"]:
        shape = (f"{r['rows']}x{r['hidden']}" if "rows" in r else str(r["n"])) + "".join(
            f" {r[k]}" for k in ("dtype", "record") if r.get(k))
        peer = f"{r['ratio_peer']} ({r['peer']})" if "peer" in r else ""
        ms = f"{r['ms']}" + (f" ({r['enqueue_us']} us host)" if "enqueue_us" in r else "")
        lines.append(f"| {r['workload']} | {shape} | {r['variant']} | {ms} | {r['gbps']} | "
                     f"{r['ratio_memcpy']} | {peer} |")
    return "\n".join(lines) + "\n"


def render(args):
    res = json.load(open(args.results))
    base = os.path.splitext(args.results)[0]
    open(base + ".md", "w").write(table(res))
    print(base + ".md")
    if not args.png:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    workloads = sorted({r["workload"] for r in res["results"]})
    for w in workloads:
        rows = [r for r in res["results"] if r["workload"] == w]
        fig, ax = plt.subplots(figsize=(7, 4))
        groups = sorted({(r["variant"], r.get("dtype") or r.get("record")) for r in rows}, key=str)
        for variant, kind in groups:
            pts = sorted((r["bytes"], r["gbps"]) for r in rows
                         if r["variant"] == variant and (r.get("dtype") or r.get("record")) == kind)
            label = variant + (f" {kind}" if kind else "")
            ax.plot([p[0] / 1e9 for p in pts], [p[1] for p in pts], marker="o", label=label)
        if res.get("memcpy_gbps"):
            ax.axhline(res["memcpy_gbps"], color="k", linestyle="--", label="cudaMemcpy D2D")
        ax.set_xscale("log")
        ax.set_xlabel("bytes moved per run (GB)")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{w} on {res['gpu']} ({res['date']})")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = f"{plot_prefix(args.results)}{w}.png"
        fig.savefig(path, dpi=110)
        print(path)


def readme(args):
    res = json.load(open(args.results))
    base = os.path.splitext(args.results)[0]
    rel = os.path.relpath(base, os.path.dirname(os.path.abspath(args.readme)) or ".")
    prefix = os.path.basename(plot_prefix(args.results))
    workloads = sorted({r["workload"] for r in res["results"]})
    plots = [(w, prefix + w + ".png") for w in workloads if os.path.exists(os.path.join(os.path.dirname(base) or ".", prefix + w + ".png"))]
    body = ["<!-- results:begin -->", f"Generated by `bench/report.py readme` from `{rel}.json`.", "", table(res)]
    if plots:
        body += ["Plots: " + ", ".join(f"[{w}]({os.path.join(os.path.dirname(rel), p)})" for w, p in plots), ""]
    body.append("<!-- results:end -->")
    text = open(args.readme).read()
    start, end = text.index("<!-- results:begin -->"), text.index("<!-- results:end -->") + len("<!-- results:end -->")
    open(args.readme, "w").write(text[:start] + "\n".join(body) + text[end:])
    print(f"{args.readme}: results section from {args.results}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("results")
    r.add_argument("raw")
    r.add_argument("--extra", action="append")
    r.add_argument("--out", required=True)
    r.add_argument("--commit", default="unknown")
    r.add_argument("--gpus", type=int, default=1, help="GPUs the run used (several: <gpu>-xN)")
    d = sub.add_parser("render")
    d.add_argument("results")
    d.add_argument("--png", action="store_true")
    m = sub.add_parser("readme")
    m.add_argument("results")
    m.add_argument("readme")
    args = ap.parse_args()
    {"results": results, "render": render, "readme": readme}[args.cmd](args)


if __name__ == "__main__":
    main()
