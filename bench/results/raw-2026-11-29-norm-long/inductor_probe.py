# Probe (not part of the library): torch.compile's layer and RMS norm at rows of 16384-262144
# elements, the shapes where issue 16's sweep has torch.compile ahead of strata or strata below
# 0.90 of a copy. Times each (do_bench, median, as bench/layer_norm_torch.py) and, with --ncu,
# runs each compiled kernel once between cudaProfilerStart/Stop for Nsight Compute.
# TORCH_LOGS=output_code on the command line prints the Triton source Inductor generated.
import sys
import torch
import torch.nn.functional as F
import torch._dynamo
from triton.testing import do_bench

torch._dynamo.config.cache_size_limit = 4096
if hasattr(torch._dynamo.config, "recompile_limit"):
    torch._dynamo.config.recompile_limit = 4096
ncu = "--ncu" in sys.argv
SHAPES = {torch.float32: [(2048, 16384), (1024, 32768), (512, 65536), (128, 262144)],
          torch.bfloat16: [(4096, 16384), (2048, 32768), (1024, 65536), (256, 262144)]}
cases = []
for kind in ("layer", "rms"):
    for dt, shapes in SHAPES.items():
        for rows, cols in shapes:
            x = torch.randn(rows, cols, device="cuda", dtype=dt)
            w = torch.randn(cols, device="cuda", dtype=dt)
            b = torch.randn(cols, device="cuda", dtype=dt)
            if kind == "layer":
                fn = torch.compile(lambda t, w=w, b=b, cols=cols: F.layer_norm(t, (cols,), w, b, 1e-5), dynamic=False)
            else:
                fn = torch.compile(lambda t, w=w, cols=cols: F.rms_norm(t, (cols,), w, 1e-6), dynamic=False)
            fn(x)
            torch.cuda.synchronize()
            cases.append((kind, str(dt).split(".")[1], rows, cols, fn, x))
if ncu:
    torch.cuda.profiler.start()
    for kind, dt, rows, cols, fn, x in cases:
        fn(x)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    for c in cases:
        print(c[:4])
else:
    for kind, dt, rows, cols, fn, x in cases:
        nbytes = 2 * x.numel() * x.element_size()
        ms = do_bench(lambda: fn(x), warmup=25, rep=200, return_mode="median")
        copy = do_bench(lambda: x.clone(), warmup=25, rep=200, return_mode="median")
        print(f"| {kind} | {dt} | {rows}x{cols} | {ms:.4f} | {nbytes / ms / 1e9:.0f} | {copy:.4f} | {copy / ms:.3f} |", flush=True)
