#!/usr/bin/env python3
"""Layer norm against PyTorch on the GPU machine.

1. Correctness: random inputs (fresh seed, printed) in fp32, bf16 and fp16 go through
   examples' layer_norm_check; its output is compared with torch.nn.functional.layer_norm:
   relative error ||y - ref|| / ||ref|| < 1e-5 (fp32), < 1e-2 (bf16, fp16); NaN never passes.
2. Timing: torch eager and torch.compile of layer_norm at the shapes strata_bench measures, as
   rows of strata's results format (variants torch_eager, torch_compile) for report.py --extra.
"""
import argparse, json, os, subprocess, sys, tempfile

import torch
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
TOL = {"fp32": 1e-5, "bf16": 1e-2, "fp16": 1e-2}
CHECK_SHAPES = [(37, 4099), (64, 1024), (16, 16384), (1000, 333), (3, 30000)]
BENCH_SHAPES = [(512, 4096), (16384, 1024), (16384, 4096), (65536, 4096), (4096, 16384)]
EPS = 1e-5


def check(example, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    failures = 0
    for dtype, tdt in DTYPES.items():
        for rows, cols in CHECK_SHAPES:
            x = (torch.randn(rows, cols, device="cuda", generator=g) * 2 + 0.5).to(tdt)
            w = (1 + 0.1 * torch.randn(cols, device="cuda", generator=g)).to(tdt)
            b = (0.1 * torch.randn(cols, device="cuda", generator=g)).to(tdt)
            with tempfile.TemporaryDirectory() as d:
                for name, t in (("x", x), ("gamma", w), ("beta", b)):
                    t.contiguous().view(torch.uint8).cpu().numpy().tofile(os.path.join(d, name + ".bin"))
                open(os.path.join(d, "meta.txt"), "w").write(f"{rows} {cols} {dtype} {EPS}\n")
                subprocess.run([example, d], check=True)
                raw = torch.from_numpy(__import__("numpy").fromfile(os.path.join(d, "y.bin"), dtype="uint8"))
                y = raw.view(tdt).reshape(rows, cols).cuda()
            ref = F.layer_norm(x, (cols,), w, b, EPS)
            err = ((y.double() - ref.double()).norm() / ref.double().norm()).item()
            ok = err == err and err < TOL[dtype]
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} layer_norm {dtype} {rows}x{cols}: relative error {err:.2e} (< {TOL[dtype]:g})")
    return failures


def bench(shapes):
    from triton.testing import do_bench
    rows_out = []
    for dtype in ("fp32", "bf16", "fp16"):
        tdt = DTYPES[dtype]
        for rows, cols in shapes if dtype != "fp16" else [(16384, 4096)]:
            x = torch.randn(rows, cols, device="cuda", dtype=tdt)
            w = torch.ones(cols, device="cuda", dtype=tdt)
            b = torch.zeros(cols, device="cuda", dtype=tdt)
            eager = lambda: F.layer_norm(x, (cols,), w, b, EPS)
            compiled_fn = torch.compile(lambda t: F.layer_norm(t, (cols,), w, b, EPS), dynamic=False)
            compiled = lambda: compiled_fn(x)
            nbytes = 2 * x.numel() * x.element_size()
            for variant, fn in (("torch_eager", eager), ("torch_compile", compiled)):
                ms = do_bench(fn, warmup=50, rep=200, return_mode="median")
                rows_out.append({"workload": "layer_norm", "variant": variant, "dtype": dtype, "rows": rows,
                                 "hidden": cols, "n": rows * cols, "bytes": nbytes, "ms": round(ms, 4),
                                 "gbps": round(nbytes / (ms * 1e-3) / 1e9, 1)})
                print(f"{variant:14} {dtype} {rows}x{cols}: {ms * 1e3:.1f} us, {rows_out[-1]['gbps']} GB/s", flush=True)
            del x
            torch.cuda.empty_cache()
    return rows_out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True, help="path to layer_norm_check")
    ap.add_argument("--out", required=True, help="results rows for report.py --extra")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    args = ap.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, seed {args.seed}")
    failures = check(args.example, args.seed)
    rows = bench(BENCH_SHAPES)
    json.dump({"torch": torch.__version__, "results": rows}, open(args.out, "w"), indent=1)
    print(f"{failures} correctness failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
