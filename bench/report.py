#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns benchmark output into strata's results format, a markdown table and plots.

  report.py results RAW.json [--extra rows.json ...] --out DIR [--commit SHA]
      RAW.json is Google Benchmark's --benchmark_out; rows.json hold rows already in the results
      format (the PyTorch layer-norm script writes those). Writes DIR/<gpu>/<date>/strata_bench.json
      and its table, strata_bench.md (bench/results/INDEX.md: the layout). --gpus N (N > 1) files a
      run of several GPUs under <gpu>-xN.
  report.py readme RESULTS.json README.md
      Replaces the README's section between <!-- results:begin --> and <!-- results:end --> with
      the table and the plots of RESULTS.json.
  report.py render RESULTS.json [--png] [--out DIR]
      Writes RESULTS.md (table) and, with --png, one plot a workload (<workload>.png for
      strata_bench.json, NAME-<workload>.png for NAME.json): each variant's speed as a
      share of the same run's cudaMemcpy (a bar per variant where each was run at one size, a line
      against the bytes moved where at several; time per call for latency workloads), into DIR
      (default: beside RESULTS.json). Tables and plots are only ever generated from results.
"""
import argparse, datetime, json, os, re, sys

# The peer each workload's variants are compared with (DESIGN.md's peer column).
PEERS = {
    "particle_advance": "thrust_zip",
    "aos_to_soa": "naive",
    "soa_to_aos": "naive",
    "columnar_convert": "naive",
    "host_aos_to_device_soa": "pinned_memcpy",
    "reduce_sum": "cub",
    "kinetic_energy": "thrust_zip",
    "statistics": "thrust",
    "mixed_sum": "thrust_zip",
    "layer_norm": "torch_eager",
    "rms_norm": "torch_eager",
    "transform_latency": "hand_float4",
    "sort_by_key": "thrust_zip",
    "lennard_jones": "hand_cells",
    "erase_if": "thrust_zip",
    "permute": "column_gather",
}


DTYPES = {"fp32", "fp64", "bf16", "fp16"}


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


# Variants that are not strata's: the peers it is measured against, and hand-written baselines.
PEER_VARIANTS = set(PEERS.values()) | {"thrust", "thrust_zip", "cub", "hand_float4", "hand_float4_stream", "aos_plain",
                                       "naive", "torch_eager", "torch_compile", "pinned_memcpy", "pageable_memcpy"}


def series_of(rows):
    """(variant, dtype or record) -> that series' rows, sorted by size; series grouped by dtype or
    record, strata's variants before the peers in each group."""
    out = {}
    for r in rows:
        out.setdefault((r["variant"], r.get("dtype") or r.get("record")), []).append(r)
    order = lambda kv: (str(kv[0][1] or ""), kv[0][0] in PEER_VARIANTS, kv[0][0])
    return {k: sorted(v, key=lambda r: r["bytes"]) for k, v in sorted(out.items(), key=order)}


def label_of(variant, kind):
    return f"{kind} · {variant}" if kind else variant


def distinct_colours(count):
    """count colours, no two alike: tab10, then tab20's lighter halves, then evenly spaced hues."""
    import matplotlib
    base = list(matplotlib.colormaps["tab10"].colors) + list(matplotlib.colormaps["tab20"].colors[1::2])
    if count <= len(base):
        return base[:count]
    return [matplotlib.colormaps["hsv"](i / count) for i in range(count)]


def measure_of(workload, res):
    """What a workload's plot shows: time per call for latency workloads (lower is better), speed as
    a fraction of the same run's cudaMemcpy otherwise (GB/s where the run has no copy)."""
    if workload.endswith("latency"):
        return "ms", "ms per call (lower is better)"
    if res.get("memcpy_gbps"):
        return "ratio_memcpy", "speed / cudaMemcpy D2D speed (higher is better)"
    return "gbps", "GB/s (higher is better)"


def plot_bars(ax, series, field):
    """One point per series: a horizontal bar each, named on the axis, strata's variants in one
    colour and the peers and baselines they are measured against in another."""
    names = [label_of(*k) for k in series]
    values = [v[0].get(field) or 0 for v in series.values()]
    ours = [k[0] not in PEER_VARIANTS for k in series]
    colours = distinct_colours(2)
    ys = range(len(names))
    ax.barh(ys, values, color=[colours[0] if o else colours[1] for o in ours])
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.invert_yaxis()
    for y, v in zip(ys, values):
        ax.text(v, y, f" {v:.2f}" if v < 100 else f" {v:.0f}", va="center", fontsize=7)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=colours[0], label="strata"), Patch(color=colours[1], label="peer or baseline")],
              loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)


def plot_lines(ax, series, field):
    """Several sizes per series: a line each against the bytes it moves, every series its own
    colour, the legend beside the axes."""
    for (k, pts), colour in zip(series.items(), distinct_colours(len(series))):
        ax.plot([p["bytes"] / 1e9 for p in pts], [p.get(field) for p in pts], marker="o", color=colour, label=label_of(*k))
    ax.set_xscale("log")
    ax.set_xlabel("bytes moved per call (GB)")
    if field == "ms":
        ax.set_yscale("log")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)


def plot_shapes(ax, series, field):
    """Row workloads (rows x hidden): a group of bars per shape, one bar per series in its own
    colour, the legend beside the axes. Shapes of equal bytes stay apart, as a line would not."""
    shapes = sorted({(r["rows"], r["hidden"]) for pts in series.values() for r in pts}, key=lambda s: (s[0] * s[1], s))
    width = 0.8 / len(series)
    for i, ((k, pts), colour) in enumerate(zip(series.items(), distinct_colours(len(series)))):
        at = {(r["rows"], r["hidden"]): r.get(field) for r in pts}
        xs = [j + (i - (len(series) - 1) / 2) * width for j, sh in enumerate(shapes) if sh in at]
        ax.bar(xs, [at[sh] for sh in shapes if sh in at], width, color=colour, label=label_of(*k))
    ax.set_xticks(range(len(shapes)), [f"{r} x {h}" for r, h in shapes], fontsize=8)
    ax.set_xlabel("rows x hidden")
    if field == "ms":
        ax.set_yscale("log")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)


def render(args):
    res = json.load(open(args.results))
    stem = os.path.splitext(os.path.basename(args.results))[0]
    out_dir = args.out or os.path.dirname(args.results) or "."
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, stem)
    open(base + ".md", "w").write(table(res))
    print(base + ".md")
    if not args.png:
        return
    try:
        import matplotlib
    except ImportError:
        sys.exit("report.py: --png needs matplotlib (pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # One plot per workload, answering one question: how fast is each variant of it, as a share of a
    # copy of the same bytes (or, for latency workloads, how long does one call take)?
    for w in sorted({r["workload"] for r in res["results"]}):
        series = series_of([r for r in res["results"] if r["workload"] == w])
        field, what = measure_of(w, res)
        one_point = all(len(v) == 1 for v in series.values())
        shaped = not one_point and all("rows" in r for pts in series.values() for r in pts)
        height = max(2.5, 0.28 * len(series) + 1.2) if one_point else 4
        fig, ax = plt.subplots(figsize=(8, height))
        (plot_bars if one_point else plot_shapes if shaped else plot_lines)(ax, series, field)
        if field == "ratio_memcpy":  # a copy of the same bytes
            (ax.axvline if one_point else ax.axhline)(1.0, color="0.3", linestyle="--", linewidth=1)
        (ax.set_xlabel if one_point else ax.set_ylabel)(what)
        ax.set_title(f"{w}: {'time per call' if field == 'ms' else 'speed'} of each variant, {res['gpu']} ({res['date']})", fontsize=10)
        fig.tight_layout()
        path = os.path.join(out_dir, os.path.basename(plot_prefix(args.results)) + f"{w}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("results")
    r.add_argument("raw")
    r.add_argument("--extra", action="append")
    r.add_argument("--out", required=True)
    r.add_argument("--commit", default="unknown")
    r.add_argument("--gpus", type=int, default=1, help="GPUs the run used (several: <gpu>-xN)")
    d = sub.add_parser("render")
    d.add_argument("results")
    d.add_argument("--png", action="store_true", help="also write a PNG plot per workload (needs matplotlib)")
    d.add_argument("--out", help="folder for the table and plots (default: beside RESULTS.json)")
    m = sub.add_parser("readme")
    m.add_argument("results")
    m.add_argument("readme")
    args = ap.parse_args()
    {"results": results, "render": render, "readme": readme}[args.cmd](args)


if __name__ == "__main__":
    main()
