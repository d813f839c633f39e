# SPDX-License-Identifier: Apache-2.0
"""Layer and RMS normalization of a torch tensor from Python, through strata's module.

The tensor is read and the result written where they lie (DLPack): on the GPU with the CUDA build,
in CPU memory with the host build. Without PyTorch the same calls take NumPy arrays. Each result is
checked against torch.nn.functional (or a NumPy formula); the exit status says whether they agree.

    pip install .            # from the repository root: the module, host backend
    python3 examples/torch_normalize/normalize.py
"""
import sys

try:
    import numpy as np
    import strata
    strata.layer_norm  # another package named strata would lack it
except (ImportError, AttributeError) as e:
    print(f"normalize.py: {e}: install NumPy and strata's module (`pip install .` in the repository root)", file=sys.stderr)
    sys.exit(77)  # "skipped" for CTest

try:
    import torch
except ImportError:
    torch = None

ROWS, HIDDEN = 64, 1000  # rows of 4000 bytes: not a multiple of 16 elements, any length works


def with_torch():
    device = "cuda" if strata.backend == "cuda" else "cpu"
    g = torch.Generator(device="cpu").manual_seed(0)
    x = (torch.randn(ROWS, HIDDEN, generator=g) * 3 + 1).to(device)
    w = torch.rand(HIDDEN, generator=g).to(device) + 0.5
    b = torch.randn(HIDDEN, generator=g).to(device)
    checks = []
    y, path = strata.layer_norm(x, w, b, eps=1e-5, return_path=True)
    checks.append((f"layer_norm fp32 ({path})", y, torch.nn.functional.layer_norm(x, (HIDDEN,), w, b, eps=1e-5), 1e-5))
    ref = x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-6) * w
    checks.append(("rms_norm fp32", strata.rms_norm(x, w, eps=1e-6), ref, 1e-5))
    xb, wb, bb = x.bfloat16(), w.bfloat16(), b.bfloat16()  # bf16 storage, fp32 arithmetic
    want = torch.nn.functional.layer_norm(xb.float(), (HIDDEN,), wb.float(), bb.float(), eps=1e-5)
    checks.append(("layer_norm bf16", strata.layer_norm(xb, wb, bb, eps=1e-5).float(), want, 1e-2))
    return [(name, float((got - want).norm() / want.norm()), tol) for name, got, want, tol in checks]


def with_numpy():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((ROWS, HIDDEN)) * 3 + 1).astype(np.float32)
    w = (rng.random(HIDDEN) + 0.5).astype(np.float32)
    b = rng.standard_normal(HIDDEN).astype(np.float32)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=1, keepdims=True), x64.var(axis=1, keepdims=True)
    checks = []
    y, path = strata.layer_norm(x, w, b, eps=1e-5, return_path=True)
    checks.append((f"layer_norm fp32 ({path})", y, (x64 - mean) / np.sqrt(var + 1e-5) * w + b, 1e-5))
    ref = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6) * w
    checks.append(("rms_norm fp32", strata.rms_norm(x, w, eps=1e-6), ref, 1e-5))
    return [(name, float(np.linalg.norm(got - want) / np.linalg.norm(want)), tol) for name, got, want, tol in checks]


if torch is None and strata.backend == "cuda":
    print("normalize.py: the CUDA build of strata works on GPU tensors; install PyTorch", file=sys.stderr)
    sys.exit(77)
results = with_torch() if torch is not None else with_numpy()
ok = True
print(f"strata {strata.backend} backend, {'torch ' + torch.__version__ if torch else 'NumPy (no torch)'}, {ROWS} x {HIDDEN}:")
for name, err, tol in results:
    ok = ok and err < tol
    print(f"  {name}: relative error {err:.2e} (limit {tol:.0e}) {'ok' if err < tol else 'WRONG'}")
sys.exit(0 if ok else 1)
