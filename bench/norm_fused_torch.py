#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata's fused residual + normalization and per-head normalization against PyTorch on the GPU.

    python3 bench/norm_fused_torch.py --bench --out results.json      # strata's CUDA wheel installed
    python3 bench/norm_fused_torch.py --table results.json > results.md

1. Correctness: y = rms_norm(x + r) (and layer norm) and h = x + r from strata's module against
   float64 PyTorch on the same inputs: h bit for bit equal to torch's x + r, y within 1e-5 (fp32)
   / 2e-2 (bf16) relative error; dense and sliced rows, h in place over r, fp32 rows into bf16
   output; per-head rows of a fused QKV projection (tokens strided) and of a transposed tensor.
2. Timing (--bench): at the issue's hidden sizes, (y, h) = (rms_norm(x + r), x + r) by strata
   (one kernel), torch eager (an add and F.rms_norm) and torch.compile (dynamic=False) of the same
   function; per-head RMS norm of q = qkv[:, :heads * head_dim] at 8192 tokens x 32 heads of 64 and
   128 (strata's heads_view, eager F.rms_norm on the strided view, torch.compile of it). Bytes:
   x and r read, y and h written (per-head: q read, y written); the copy row (torch's copy_ of as
   many bytes) in the same run. Every time is triton's do_bench median.
"""
import argparse, json, os, sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # --table needs no torch
    torch = F = None

EPS = 1e-5
HIDDEN = [64, 100, 128, 256, 768, 1600, 2880, 4096, 5120, 7168, 8192, 18432]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16} if torch else {}
TOL = {"fp32": 1e-5, "bf16": 2e-2}


def rel(a, b):
    scale = b.norm().item()
    return ((a.double() - b).norm() / (scale if scale > 0 else 1.0)).item()


def check(seed):
    import strata
    g = torch.Generator(device="cpu").manual_seed(seed)
    failures = 0
    for dtype, tdt in DTYPES.items():
        for rows, cols in [(37, 1), (300, 3), (8192, 64), (1000, 100), (4096, 128), (256, 768), (33, 4096), (8, 16384), (4, 18432),
                           (2, 70000)]:
            for layout in ("dense", "sliced", "in place", "bf16 out"):
                if layout == "bf16 out" and dtype != "fp32":
                    continue
                base = (torch.randn(rows, cols + (5 if layout == "sliced" else 0), generator=g) * 2 + 0.5).to("cuda", tdt)
                x = base[:, :cols]
                r = torch.randn(rows, cols, generator=g).to("cuda", tdt)
                w = (1 + 0.2 * torch.randn(cols, generator=g)).to("cuda", tdt)
                want_h = x + r
                want_y = F.rms_norm(want_h.double(), (cols,), w.double(), EPS)
                out_dtype = torch.bfloat16 if layout == "bf16 out" else None
                if layout == "in place":
                    r_in = r.clone()
                    y = strata.add_rms_norm(x, r_in, w, eps=EPS, in_place=True)
                    h = r_in
                else:
                    y, h = strata.add_rms_norm(x, r, w, eps=EPS, in_place=False, out_dtype=out_dtype)
                tol = TOL["bf16" if out_dtype is not None else dtype]
                ok = torch.equal(h, want_h) and rel(y, want_y) < tol
                if not ok:
                    failures += 1
                    print(f"FAIL add_rms_norm {dtype} {rows}x{cols} {layout}: h equal {torch.equal(h, want_h)}, y error {rel(y, want_y):.2e}")
        for dim in (64, 128, 100):
            qkv = torch.randn(500, 3 * 8 * dim, generator=g).to("cuda", tdt)
            w = (1 + 0.2 * torch.randn(dim, generator=g)).to("cuda", tdt)
            q = qkv[:, :8 * dim].view(500, 8, dim)
            k = qkv[:, 8 * dim:16 * dim].view(500, 8, dim).transpose(0, 1)
            for name, t in (("qkv slice", q), ("transposed", k)):
                y = strata.rms_norm(t, w, eps=EPS)
                err = rel(y, F.rms_norm(t.double(), (dim,), w.double(), EPS))
                if err >= TOL[dtype]:
                    failures += 1
                    print(f"FAIL per-head rms_norm {dtype} {name} head_dim {dim}: error {err:.2e}")
    return failures


def bench(points, dtypes, save, compile_too=True):
    from triton.testing import do_bench
    import torch._dynamo
    import strata
    from strata import _strata
    torch._dynamo.config.cache_size_limit = 4096
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 4096
    stream = lambda: torch.cuda.current_stream().cuda_stream
    out = []

    def record(workload, variant, dtype, rows, cols, label, nbytes, ms, copy_ms):
        row = {"workload": workload, "variant": variant, "dtype": dtype, "rows": rows, "hidden": cols, "shape": label, "bytes": nbytes,
               "ms": round(ms, 4), "gbps": round(nbytes / (ms * 1e-3) / 1e9, 1)}
        if copy_ms is not None:
            row["of_copy"] = round(copy_ms / ms, 3)
        out.append(row)
        print(f"{variant:14} {workload} {dtype} {label} {rows}x{cols}: {ms * 1e3:.1f} us, {row['gbps']} GB/s"
              + (f", {row['of_copy']} of copy" if copy_ms is not None else ""), flush=True)

    def copy_time(nbytes):
        src = torch.empty(nbytes // 2, device="cuda", dtype=torch.uint8)
        dst = torch.empty_like(src)
        return do_bench(lambda: dst.copy_(src), warmup=25, rep=100, return_mode="median")

    for dtype in dtypes:
        tdt = DTYPES[dtype]
        for rows, cols, label in points(dtype):
            if label == "rows":
                x = torch.randn(rows, cols, device="cuda", dtype=tdt)
                r = torch.randn(rows, cols, device="cuda", dtype=tdt)
                w = torch.rand(cols, device="cuda", dtype=tdt) + 0.5
                y, h = torch.empty_like(x), torch.empty_like(x)
                nbytes = 4 * x.numel() * x.element_size()
                copy_ms = copy_time(nbytes)
                record("copy", "torch_copy", dtype, rows, cols, label, nbytes, copy_ms, None)

                def eager(a, b, wt):
                    s = a + b
                    return F.rms_norm(s, (cols,), wt, EPS), s

                variants = [("strata", lambda: _strata.normalize_add(True, x, r, h, y, w, None, EPS, stream())),
                            ("torch_eager", lambda: eager(x, r, w))]
                if compile_too:
                    comp = torch.compile(eager, dynamic=False)
                    variants.append(("torch_compile", lambda: comp(x, r, w)))
                for variant, fn in variants:
                    record("add_rms_norm", variant, dtype, rows, cols, label, nbytes, do_bench(fn, warmup=25, rep=100, return_mode="median"),
                           copy_ms)
                del x, r, y, h
            else:
                tokens, heads = rows // 32, 32
                qkv = torch.randn(tokens, 3 * heads * cols, device="cuda", dtype=tdt)
                q = qkv[:, :heads * cols].view(tokens, heads, cols)
                w = torch.rand(cols, device="cuda", dtype=tdt) + 0.5
                y = torch.empty(q.shape, device="cuda", dtype=tdt)
                nbytes = 2 * q.numel() * q.element_size()
                copy_ms = copy_time(nbytes)
                record("copy", "torch_copy", dtype, rows, cols, label, nbytes, copy_ms, None)
                fwd = lambda t, wt: F.rms_norm(t, (cols,), wt, EPS)
                variants = [("strata", lambda: _strata.normalize_heads(True, q, y, w, None, EPS, stream())),
                            ("torch_eager", lambda: fwd(q, w))]
                if compile_too:
                    comp = torch.compile(fwd, dynamic=False)
                    variants.append(("torch_compile", lambda: comp(q, w)))
                for variant, fn in variants:
                    record("heads_rms_norm", variant, dtype, rows, cols, label, nbytes,
                           do_bench(fn, warmup=25, rep=100, return_mode="median"), copy_ms)
                del qkv, q, y
            save(out)
            torch.cuda.empty_cache()
    return out


def table(path):
    """The markdown table of a results file: per point, strata's fraction of a copy and its speed-up
    over torch.compile and torch eager (time ratios)."""
    d = json.load(open(path))
    by = {}
    for r in d["results"]:
        if r["workload"] != "copy":
            by.setdefault((r["dtype"], r["workload"], r["shape"], r["hidden"], r["rows"]), {})[r["variant"]] = r
    lines = [f"# Fused residual + RMS norm and per-head RMS norm on {d.get('device', 'the GPU')}: strata against torch {d['torch']}", "",
             "add_rms_norm: (rms_norm(x + r), x + r), bytes = x and r read, y and h written. heads_rms_norm: RMS norm over head_dim of "
             "q = qkv[:, :32 * head_dim] (tokens strided), bytes = q read, y written. `of copy`: the ratio to torch's copy_ of as many "
             "bytes in the same run. `x compile` / `x eager`: torch's time over strata's (above 1: strata faster).",
             "", "| dtype | workload | rows x hidden | strata us | GB/s | of copy | torch.compile us | x compile | torch eager us | x eager |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (dtype, work, shape, hidden, rows), v in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3])):
        s_, c, e = v.get("strata"), v.get("torch_compile"), v.get("torch_eager")
        if not s_:
            continue
        label = f"{rows} x {hidden}" + ("" if shape == "rows" else f" ({shape})")
        lines.append(f"| {dtype} | {work} | {label} | {s_['ms'] * 1e3:.1f} | {s_['gbps']:.0f} | {s_['of_copy']:.2f} | "
                     + (f"{c['ms'] * 1e3:.1f} | {c['ms'] / s_['ms']:.2f} | " if c else "- | - | ")
                     + (f"{e['ms'] * 1e3:.1f} | {e['ms'] / s_['ms']:.2f} |" if e else "- | - |"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="results rows (JSON)")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--hidden", default=",".join(map(str, HIDDEN)))
    ap.add_argument("--no-heads", action="store_true")
    ap.add_argument("--table", metavar="RESULTS", help="print the markdown table of a results file and exit (no GPU needed)")
    args = ap.parse_args()
    if args.table:
        sys.stdout.write(table(args.table))
        return 0
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, seed {args.seed}")
    failures = 0 if args.no_check else check(args.seed)
    if args.bench:
        hidden = [int(h) for h in args.hidden.split(",") if h]

        def points(dtype):
            elem = 4 if dtype == "fp32" else 2
            pts = [(max(1, (384 << 20) // (4 * h * elem)), h, "rows") for h in hidden]  # about 384 MB moved a call
            return pts + ([] if args.no_heads else [(8192 * 32, 64, "heads 8192x32x64, qkv slice"), (8192 * 32, 128, "heads 8192x32x128, qkv slice")])

        save = (lambda rows: json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": rows},
                                       open(args.out, "w"), indent=1)) if args.out else (lambda rows: None)
        bench(points, args.dtypes.split(","), save, not args.no_compile)
    print(f"{failures} correctness failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
