#!/usr/bin/env python3
"""Probe: strata's normalization on dense torch tensors (torch.empty, pitch = width: rows of odd
width start at every offset from a 16-byte boundary, the general code), timed with do_bench
against a device copy of the same bytes in the same process. One library per run; run.sh
alternates the library before and after a change."""
import argparse, json, sys
import torch
from triton.testing import do_bench

sys.path.insert(0, "bench")
from layer_norm_torch import Strata, rows_for, DTYPES, EPS

ap = argparse.ArgumentParser()
ap.add_argument("--library", required=True)
ap.add_argument("--out", required=True)
args = ap.parse_args()
s = Strata(args.library)
out = []
for width in (1000, 1023, 1024, 1025, 3000, 4095, 4096, 4097, 5000, 5120, 12287, 12288):
    for dtype in ("fp32", "bf16"):
        tdt = DTYPES[dtype][0]
        rows = rows_for(width, 4 if dtype == "fp32" else 2)
        x = torch.randn(rows, width, device="cuda", dtype=tdt)
        y = torch.empty_like(x)
        w = torch.ones(width, device="cuda", dtype=tdt)
        b = torch.zeros(width, device="cuda", dtype=tdt)
        copy_ms = do_bench(lambda: y.copy_(x), warmup=25, rep=100, return_mode="median")
        for kind in ("layer", "rms"):
            ms = do_bench(lambda: s.norm(kind, dtype, x, y, w, b if kind == "layer" else None, EPS), warmup=25, rep=100, return_mode="median")
            out.append({"kind": kind, "dtype": dtype, "rows": rows, "hidden": width, "ms": ms, "copy_ms": copy_ms, "x_copy": copy_ms / ms})
            print(f"{kind}_norm {dtype} {rows}x{width}: {ms * 1e3:.1f} us, {copy_ms / ms:.3f} x copy", flush=True)
        del x, y
json.dump(out, open(args.out, "w"), indent=1)
