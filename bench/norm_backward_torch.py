#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata's layer and RMS normalization backward against PyTorch on the GPU machine.

    python3 bench/norm_backward_torch.py --library build/cuda/examples/libstrata_norm.so --bench --out results.json
    python3 bench/norm_backward_torch.py --table results.json > results.md

1. Correctness: strata (examples' libstrata_norm through ctypes) computes dx, dgamma and dbeta for
   PyTorch tensors; compared with float64 autograd of torch.nn.functional.layer_norm / rms_norm on
   the same inputs: relative error < 1e-4 (fp32), < 2e-2 (bf16, fp16) for dx (per row, scaled by
   the row's largest term) and for dgamma / dbeta; dense, strided slices, dx written over dy; guard
   elements after dx must stay NaN; dgamma and dbeta must keep their bits over two calls.
2. Timing (--bench): strata, torch eager (autograd.grad of the forward's graph, retained) and
   torch.compile (dynamic=False, the compiled graph's backward) at the issue's hidden sizes and
   per-head rows, as rows of strata's results format; GB/s counts x and dy read and dx written, the
   copy row (torch's copy_ of as many bytes) in the same run.
"""
import argparse, ctypes, json, os, sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # --table needs no torch
    torch = F = None

DTYPES = {"fp32": (torch.float32, 0), "bf16": (torch.bfloat16, 1), "fp16": (torch.float16, 2)} if torch else {}
TOL = {"fp32": 1e-4, "bf16": 2e-2, "fp16": 2e-2}
EPS = 1e-5
HIDDEN = [64, 100, 128, 256, 768, 1600, 2880, 4096, 5120, 7168, 8192, 18432]
CHECK_SHAPES = [(37, 1), (300, 3), (8192, 64), (1000, 100), (4096, 128), (256, 768), (99, 1600), (64, 2880), (33, 4096),
                (16, 5120), (8, 16384), (5, 16385), (4, 18432), (3, 70000), (2, 1 << 20)]


class Strata:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.strata_norm_backward
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 6 + [ctypes.c_longlong] * 5 + \
                     [ctypes.c_float, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

    def backward(self, kind, dtype, x, dy, w, dx, dw, db, eps=EPS):
        err = ctypes.create_string_buffer(512)
        ptr = lambda t: None if t is None else t.data_ptr()
        r = self.lib.strata_norm_backward(0 if kind == "layer" else 1, DTYPES[dtype][1], ptr(x), ptr(dy), ptr(w), ptr(dx), ptr(dw), ptr(db),
                                          x.shape[0], x.shape[1], x.stride(0), dy.stride(0), dx.stride(0), eps,
                                          torch.cuda.current_stream().cuda_stream, err, len(err))
        if r < 0:
            raise RuntimeError(err.value.decode())
        return ("vectorized" if r % 2 == 0 else "element") + (", two passes" if r >= 2 else "")


def reference(kind, x, dy, w, b):
    x64 = x.double().requires_grad_()
    w64 = w.double().requires_grad_()
    b64 = b.double().requires_grad_() if b is not None else None
    if kind == "layer":
        y = F.layer_norm(x64, (x.shape[1],), w64, b64, EPS)
    else:
        y = F.rms_norm(x64, (x.shape[1],), w64, EPS)
    grads = torch.autograd.grad(y, [t for t in (x64, w64, b64) if t is not None], dy.double())
    return grads + ((None,) if b is None else ())


def row_scaled_error(got, want, terms):
    # dx is a difference of terms that cancel in short rows: the error is scaled by the row's largest term.
    return ((got.double() - want).abs().amax(dim=1) / terms.clamp_min(1e-30)).max().item()


def check(strata, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    failures = 0
    for dtype in ("fp32", "bf16", "fp16"):
        tdt = DTYPES[dtype][0]
        for rows, cols in CHECK_SHAPES:
            for kind in ("layer", "rms"):
                for layout in ("dense", "strided", "dx_over_dy"):
                    if layout != "dense" and cols > 20000:
                        continue
                    wide = cols + 3 if layout == "strided" else cols
                    xw = (torch.randn(rows, wide, device="cuda", generator=g) * 2 + 0.5).to(tdt)
                    dyw = torch.randn(rows, wide, device="cuda", generator=g).to(tdt)
                    x, dy = xw[:, :cols], dyw[:, :cols]
                    w = (1 + 0.2 * torch.randn(cols, device="cuda", generator=g)).to(tdt)
                    b = torch.randn(cols, device="cuda", generator=g).to(tdt) if kind == "layer" else None
                    ref_dx, ref_dw, ref_db = reference(kind, x, dy, w, b)
                    big = torch.full((rows * cols + 64,), float("nan"), device="cuda", dtype=tdt)
                    dx = dy if layout == "dx_over_dy" else big[: rows * cols].view(rows, cols)
                    dy_in = dy.clone() if layout == "dx_over_dy" else dy
                    if layout == "dx_over_dy":
                        dy.copy_(dy_in)
                    dw = torch.full((cols,), float("nan"), device="cuda", dtype=tdt)
                    db = torch.full((cols,), float("nan"), device="cuda", dtype=tdt) if kind == "layer" else None
                    path = strata.backward(kind, dtype, x, dy, w, dx, dw, db)
                    torch.cuda.synchronize()
                    # the terms of dx's formula: rstd * |dy * gamma| bounds them within a factor of 3
                    x64 = x.double()
                    mean = x64.mean(1, keepdim=True) if kind == "layer" else 0
                    rstd = ((x64 - mean).pow(2).mean(1, keepdim=True) + EPS).rsqrt()
                    kappa = (mean.abs() * rstd).clamp_min(1.0) if kind == "layer" else 1.0
                    terms = (3 * kappa * rstd * (dy_in.double() * w.double()).abs()).amax(dim=1)
                    err_dx = row_scaled_error(dx, ref_dx, terms)
                    err_dw = ((dw.double() - ref_dw).abs() / (dy_in.double().abs().sum(0) * 3 + 1e-30)).max().item()
                    err_db = 0.0 if db is None else ((db.double() - ref_db).abs() / (dy_in.double().abs().sum(0) + 1e-30)).max().item()
                    guards = layout == "dx_over_dy" or torch.isnan(big[rows * cols:]).all().item()
                    dw1 = dw.clone()
                    strata.backward(kind, dtype, x, dy_in if layout == "dx_over_dy" else dy, w, torch.empty_like(dy_in), dw, db)
                    torch.cuda.synchronize()
                    same_bits = torch.equal(dw1.view(torch.int16 if tdt != torch.float32 else torch.int32),
                                            dw.view(torch.int16 if tdt != torch.float32 else torch.int32))
                    worst = max(err_dx, err_dw, err_db)
                    ok = worst == worst and worst < TOL[dtype] and guards and same_bits
                    failures += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} {kind}_norm backward {dtype} {rows}x{cols} {layout} ({path}): dx {err_dx:.1e} "
                          f"dgamma {err_dw:.1e} dbeta {err_db:.1e} (< {TOL[dtype]:g}), guards {'intact' if guards else 'WRITTEN'}, "
                          f"dgamma bits {'same' if same_bits else 'DIFFER'}", flush=True)
    return failures


def bench(strata, points, kinds, dtypes, save, compile_too=True):
    from triton.testing import do_bench
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 4096
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 4096
    out = []
    for dtype in dtypes:
        tdt = DTYPES[dtype][0]
        for rows, cols, label in points(dtype):
            x = torch.randn(rows, cols, device="cuda", dtype=tdt)
            dy = torch.randn(rows, cols, device="cuda", dtype=tdt)
            dx = torch.empty_like(x)
            nbytes = 3 * x.numel() * x.element_size()
            src = torch.empty(nbytes // 2, device="cuda", dtype=torch.uint8)
            dst = torch.empty_like(src)
            copy_ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=100, return_mode="median")
            out.append({"workload": "copy", "variant": "torch_copy", "dtype": dtype, "rows": rows, "hidden": cols, "shape": label,
                        "bytes": nbytes, "ms": round(copy_ms, 4), "gbps": round(nbytes / (copy_ms * 1e-3) / 1e9, 1)})
            del src, dst
            for kind in kinds:
                w = torch.ones(cols, device="cuda", dtype=tdt, requires_grad=True)
                b = torch.zeros(cols, device="cuda", dtype=tdt, requires_grad=True) if kind == "layer" else None
                dw = torch.empty(cols, device="cuda", dtype=tdt)
                db = torch.empty(cols, device="cuda", dtype=tdt) if kind == "layer" else None
                xg = x.detach().requires_grad_()
                fwd = (lambda t: F.layer_norm(t, (cols,), w, b, EPS)) if kind == "layer" else (lambda t: F.rms_norm(t, (cols,), w, EPS))
                params = [xg, w] + ([b] if b is not None else [])
                y_eager = fwd(xg)
                variants = [("strata", lambda: strata.backward(kind, dtype, x, dy, w.detach(), dx, dw, db)),
                            ("torch_eager", lambda: torch.autograd.grad(y_eager, params, dy, retain_graph=True))]
                if compile_too:
                    y_comp = torch.compile(fwd, dynamic=False)(xg)
                    variants.append(("torch_compile", lambda: torch.autograd.grad(y_comp, params, dy, retain_graph=True)))
                for variant, fn in variants:
                    ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
                    row = {"workload": f"{kind}_norm_backward", "variant": variant, "dtype": dtype, "rows": rows, "hidden": cols,
                           "shape": label, "bytes": nbytes, "ms": round(ms, 4), "gbps": round(nbytes / (ms * 1e-3) / 1e9, 1),
                           "of_copy": round(copy_ms / ms, 3)}
                    out.append(row)
                    print(f"{variant:14} {kind}_norm_backward {dtype} {label} {rows}x{cols}: {ms * 1e3:.1f} us, {row['gbps']} GB/s, "
                          f"{row['of_copy']} of copy", flush=True)
                save(out)
                del y_eager
            del x, dy, dx
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
    lines = [f"# Normalization backward on {d.get('device', 'the GPU')}: strata against torch {d['torch']}", "",
             "dx, dgamma (and dbeta) from x, dy and gamma; bytes = x and dy read, dx written. `of copy`: the ratio to torch's "
             "copy_ of as many bytes in the same run. `x compile` / `x eager`: torch's time over strata's (above 1: strata faster).",
             "", "| dtype | norm | rows x hidden | strata us | GB/s | of copy | torch.compile us | x compile | torch eager us | x eager |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (dtype, work, shape, hidden, rows), v in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "rows", kv[0][3])):
        s_, c, e = v.get("strata"), v.get("torch_compile"), v.get("torch_eager")
        if not s_:
            continue
        label = f"{rows} x {hidden}" + ("" if shape == "rows" else f" ({shape})")
        lines.append(f"| {dtype} | {work.split('_')[0]} | {label} | {s_['ms'] * 1e3:.1f} | {s_['gbps']:.0f} | {s_['of_copy']:.2f} | "
                     + (f"{c['ms'] * 1e3:.1f} | {c['ms'] / s_['ms']:.2f} | " if c else "- | - | ")
                     + (f"{e['ms'] * 1e3:.1f} | {e['ms'] / s_['ms']:.2f} |" if e else "- | - |"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", help="path to libstrata_norm.so (examples/layer_norm, CUDA build)")
    ap.add_argument("--out", help="results rows (JSON)")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--kinds", default="layer,rms")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--hidden", default=",".join(map(str, HIDDEN)))
    ap.add_argument("--table", metavar="RESULTS", help="print the markdown table of a results file and exit (no GPU needed)")
    args = ap.parse_args()
    if args.table:
        sys.stdout.write(table(args.table))
        return 0
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, seed {args.seed}")
    strata = Strata(args.library)
    failures = 0 if args.no_check else check(strata, args.seed)
    if args.bench:
        hidden = [int(h) for h in args.hidden.split(",") if h]

        def points(dtype):
            elem = 4 if dtype == "fp32" else 2
            pts = [(max(1, (384 << 20) // (3 * h * elem)), h, "rows") for h in hidden]  # about 384 MB moved a call
            return pts + [(8192 * 32, 64, "heads 8192x32x64"), (8192 * 32, 128, "heads 8192x32x128")]

        save = (lambda rows: json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": rows},
                                       open(args.out, "w"), indent=1)) if args.out else (lambda rows: None)
        bench(strata, points, args.kinds.split(","), args.dtypes.split(","), save, not args.no_compile)
    print(f"{failures} correctness failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
