#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata's layer and RMS normalization against PyTorch on the GPU machine.

1. Correctness: strata (examples' libstrata_norm through ctypes) normalizes PyTorch tensors in place
   of PyTorch: dense rows from torch.empty (hidden 4095 and 5120 among them), a strided slice of a
   wider tensor, outputs with guard elements after them; fp32, bf16, fp16; with and without
   gamma/beta. Compared with torch.nn.functional.layer_norm / rms_norm on the same tensors:
   relative error ||y - ref|| / ||ref|| < 1e-5 (fp32), < 1e-2 (bf16, fp16); NaN never passes; no
   guard element and no element outside a slice changes.
2. Timing: torch eager and torch.compile (dynamic=False, compiled per shape) at the shapes given,
   as rows of strata's results format (variants torch_eager, torch_compile) for report.py --extra.
"""
import argparse, ctypes, json, os, sys

import torch
import torch.nn.functional as F

DTYPES = {"fp32": (torch.float32, 0), "bf16": (torch.bfloat16, 1), "fp16": (torch.float16, 2)}
TOL = {"fp32": 1e-5, "bf16": 1e-2, "fp16": 1e-2}
CHECK_SHAPES = [(37, 4099), (64, 1024), (16, 16384), (1000, 333), (3, 30000), (256, 4095), (256, 5120), (7, 1), (5, 3),
                (4, 65536), (2, 262144), (33, 1025)]
BENCH_SHAPES = [(512, 4096), (16384, 1024), (16384, 4096), (65536, 4096), (4096, 16384)]
EPS = 1e-5


def sweep_hiddens(kind):
    extra = [1000, 1023, 1025, 3000, 4095, 4097, 5000, 12288, 32768, 65536, 262144]
    if kind == "every":
        return sorted(set(list(range(256, 16385, 256)) + extra))
    if kind == "coarse":
        return sorted(set(list(range(1024, 16385, 1024)) + [256, 512, 768] + extra))
    if kind == "sample":  # a few of each kind of point: exact, ragged, long (compiling every shape takes minutes)
        return [1024, 1025, 4095, 4096, 5120, 12288, 32768, 65536]
    return []


def rows_for(hidden, elem):  # each case moves about 256 MB (read once, written once)
    return max(1, (256 << 20) // (2 * hidden * elem))


class Strata:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.strata_norm
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_float,
                      ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

    def norm(self, kind, dtype, x, y, w, b, eps):
        err = ctypes.create_string_buffer(512)
        stream = torch.cuda.current_stream().cuda_stream
        ptr = lambda t: None if t is None else t.data_ptr()
        r = self.lib.strata_norm(0 if kind == "layer" else 1, DTYPES[dtype][1], ptr(x), ptr(y), ptr(w), ptr(b), x.shape[0],
                                 x.shape[1], x.stride(0), y.stride(0), eps, stream, err, len(err))
        if r < 0:
            raise RuntimeError(err.value.decode())
        return "vectorized" if r == 0 else "element"


def reference(kind, x, w, b, eps):
    if kind == "layer":
        return F.layer_norm(x.double(), (x.shape[1],), None if w is None else w.double(), None if b is None else b.double(), eps)
    return F.rms_norm(x.double(), (x.shape[1],), None if w is None else w.double(), eps)


def relative_error(y, ref):
    # A layer norm of rows of one element without beta is exactly zero: there the error is absolute.
    scale = ref.norm().item()
    return ((y.double() - ref).norm() / (scale if scale > 0 else 1.0)).item()


def check(strata, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    failures = 0
    for dtype, (tdt, _) in DTYPES.items():
        for rows, cols in CHECK_SHAPES:
            for kind in ("layer", "rms"):
                for affine in (True, False):
                    x = torch.empty(rows, cols, device="cuda", dtype=tdt)
                    x.copy_(torch.randn(rows, cols, device="cuda", generator=g) * 2 + 0.5)
                    w = (1 + 0.1 * torch.randn(cols, device="cuda", generator=g)).to(tdt) if affine else None
                    b = (0.1 * torch.randn(cols, device="cuda", generator=g)).to(tdt) if affine and kind == "layer" else None
                    # Dense output with 64 guard elements after it.
                    big = torch.full((rows * cols + 64,), float("nan"), device="cuda", dtype=tdt)
                    y = big[: rows * cols].view(rows, cols)
                    path = strata.norm(kind, dtype, x, y, w, b, EPS)
                    torch.cuda.synchronize()
                    ref = reference(kind, x, w, b, EPS)
                    err = relative_error(y, ref)
                    guards = torch.isnan(big[rows * cols:]).all().item()
                    ok = err == err and err < TOL[dtype] and guards
                    failures += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} {kind}_norm {dtype} {rows}x{cols} dense {'affine' if affine else 'plain'} "
                          f"({path}): relative error {err:.2e} (< {TOL[dtype]:g}), guards {'intact' if guards else 'WRITTEN'}")
        # A strided slice (pitch > cols, rows not 16-byte aligned) in and out: nothing outside it changes.
        rows, cols, wide = 50, 1000, 1013
        xw = torch.randn(rows, wide, device="cuda", generator=g).to(tdt)
        yw = torch.full((rows, wide), 7.0, device="cuda", dtype=tdt)
        x, y = xw[:, :cols], yw[:, :cols]
        path = strata.norm("layer", dtype, x, y, None, None, EPS)
        torch.cuda.synchronize()
        ref = reference("layer", x, None, None, EPS)
        err = relative_error(y, ref)
        untouched = (yw[:, cols:] == 7.0).all().item()
        ok = err == err and err < TOL[dtype] and untouched
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} layer_norm {dtype} {rows}x{cols} slice of {wide} ({path}): relative error {err:.2e}, "
              f"outside {'untouched' if untouched else 'WRITTEN'}")
    return failures


def bench(shapes, dtypes, kinds, save=lambda rows: None):
    from triton.testing import do_bench
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 4096  # one compilation per shape, as dynamic=False asks
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 4096
    rows_out = []
    for kind in kinds:
        for dtype in dtypes:
            tdt = DTYPES[dtype][0]
            for rows, cols in shapes(dtype):
                x = torch.randn(rows, cols, device="cuda", dtype=tdt)
                w = torch.ones(cols, device="cuda", dtype=tdt)
                b = torch.zeros(cols, device="cuda", dtype=tdt)
                if kind == "layer":
                    eager = lambda: F.layer_norm(x, (cols,), w, b, EPS)
                    compiled_fn = torch.compile(lambda t: F.layer_norm(t, (cols,), w, b, EPS), dynamic=False)
                else:
                    eager = lambda: F.rms_norm(x, (cols,), w, EPS)
                    compiled_fn = torch.compile(lambda t: F.rms_norm(t, (cols,), w, EPS), dynamic=False)
                compiled = lambda: compiled_fn(x)
                nbytes = 2 * x.numel() * x.element_size()
                for variant, fn in (("torch_eager", eager), ("torch_compile", compiled)):
                    ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
                    rows_out.append({"workload": f"{kind}_norm", "variant": variant, "dtype": dtype, "rows": rows, "hidden": cols,
                                     "n": rows * cols, "bytes": nbytes, "ms": round(ms, 4),
                                     "gbps": round(nbytes / (ms * 1e-3) / 1e9, 1)})
                    print(f"{variant:14} {kind}_norm {dtype} {rows}x{cols}: {ms * 1e3:.1f} us, {rows_out[-1]['gbps']} GB/s", flush=True)
                save(rows_out)
                del x
                torch.cuda.empty_cache()
    return rows_out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", required=True, help="path to libstrata_norm.so")
    ap.add_argument("--out", required=True, help="results rows for report.py --extra")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--sweep", choices=["none", "sample", "coarse", "every"], default="none",
                    help="also time the normalization sweep's hidden sizes (rows moving about 256 MB)")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, seed {args.seed}")
    failures = 0 if args.no_check else check(Strata(args.library), args.seed)
    # Rows are written after every shape, so a run stopped at a time limit keeps what it measured.
    save = lambda done: lambda more: json.dump({"torch": torch.__version__, "results": done + more}, open(args.out, "w"), indent=1)
    rows = bench(lambda dtype: BENCH_SHAPES if dtype != "fp16" else [(16384, 4096)], ("fp32", "bf16", "fp16"), ("layer",), save([]))
    hiddens = sweep_hiddens(args.sweep)
    if hiddens:
        rows += bench(lambda dtype: [(rows_for(h, 4 if dtype == "fp32" else 2), h) for h in hiddens], ("fp32", "bf16"), ("layer", "rms"),
                      save(rows))
    save(rows)([])
    print(f"{failures} correctness failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
