# SPDX-License-Identifier: Apache-2.0
"""Times the Python module on the GPU against the copies and C++ calls it stands for, in one process:
- strata.to_soa of records already on the GPU (a uint8 torch tensor plus a NumPy dtype) against a
  device-to-device copy of the same bytes (torch's copy_, a cudaMemcpy), for the particle record
  (7 float32), a mixed record (float32[3], int32, float64, uint8 in 32 bytes, 7 of them gaps) and a
  packed 15-byte record (float64, float32, uint16, uint8 at unaligned offsets, NumPy's default);
- strata.layer_norm on torch tensors (bf16 and fp32, 16384 x 4096, weight and bias) per call, to
  set against the C++ benchmark's row of the same shape (strata_bench, same machine and run).
CUDA events around `reps` back-to-back calls, median of `trials`. Writes JSON (--out)."""
import argparse
import json
import statistics

import numpy as np
import torch

import strata


def timed(fn, reps=20, trials=7):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(trials):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / reps * 1e-3)
    return statistics.median(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, default=1 << 26)
    p.add_argument("--out")
    a = p.parse_args()
    assert strata.backend == "cuda", "the module was built for the host backend"
    res = {"gpu": torch.cuda.get_device_name(), "to_soa": [], "layer_norm": []}
    dtypes = {
        "particle": np.dtype([(f, "<f4") for f in ("x", "y", "z", "vx", "vy", "vz", "mass")]),
        "mixed": np.dtype({"names": ["pos", "id", "q", "flag"], "formats": [("<f4", 3), "<i4", "<f8", "u1"],
                           "offsets": [0, 12, 16, 24], "itemsize": 32}),
        # packed (NumPy's default, align=False): 15 bytes, fields at unaligned offsets
        "packed": np.dtype([("e", "<f8"), ("x", "<f4"), ("cell", "<u2"), ("flags", "u1")]),
    }
    for name, dt in dtypes.items():
        n = a.records
        raw = torch.randint(0, 255, (n * dt.itemsize,), dtype=torch.uint8, device="cuda")
        cols = strata.to_soa(raw, dt)
        # Correct against NumPy on a sample of records.
        host = raw[: 4096 * dt.itemsize].cpu().numpy().view(dt)
        for leaf, col in cols.items():
            want = strata_leaf(host, leaf)
            got = col[: len(host)].cpu().numpy().reshape(want.shape)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), f"{name}.{leaf} differs"
        data_bytes = sum(c.numel() * c.element_size() for c in cols.values())
        dst = torch.empty_like(raw)
        t_copy = timed(lambda: dst.copy_(raw))
        t_soa = timed(lambda: strata.to_soa(raw, dt))
        back = strata.to_aos(cols, dt)
        t_aos = timed(lambda: strata.to_aos(cols, dt))
        if dt.itemsize == sum(f.itemsize for f in [dt.fields[k][0] for k in dt.names]):
            assert torch.equal(back, raw), f"{name}: to_aos(to_soa(x)) != x"
        row = {"record": name, "records": n, "record_bytes": dt.itemsize, "data_bytes": data_bytes,
               "copy_ms": t_copy * 1e3, "to_soa_ms": t_soa * 1e3, "to_aos_ms": t_aos * 1e3,
               "to_soa_vs_copy": t_copy / t_soa, "to_aos_vs_copy": t_copy / t_aos,
               "to_soa_GBps": (raw.numel() + data_bytes) / t_soa / 1e9, "copy_GBps": 2 * raw.numel() / t_copy / 1e9}
        res["to_soa"].append(row)
        print(f"to_soa {name}: {row['to_soa_ms']:.3f} ms, copy of the records {row['copy_ms']:.3f} ms, "
              f"ratio {row['to_soa_vs_copy']:.3f}; to_aos {row['to_aos_ms']:.3f} ms ({row['to_aos_vs_copy']:.3f})", flush=True)
        del raw, cols, dst, back
        torch.cuda.empty_cache()
    for dtype, tname in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        rows, hidden = 16384, 4096
        x = torch.randn(rows, hidden, device="cuda", dtype=dtype)
        w = torch.randn(hidden, device="cuda", dtype=dtype)
        b = torch.randn(hidden, device="cuda", dtype=dtype)
        y, path = strata.layer_norm(x, w, b, return_path=True)
        ref = torch.nn.functional.layer_norm(x.float(), (hidden,), w.float(), b.float(), 1e-5)
        err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
        assert err < (1e-2 if tname == "bf16" else 1e-5), f"layer_norm {tname}: max error {err} of the largest output"
        t = timed(lambda: strata.layer_norm(x, w, b), reps=100)
        row = {"shape": f"{rows}x{hidden}", "dtype": tname, "path": str(path), "python_us": t * 1e6,
               "GBps": 2 * x.numel() * x.element_size() / t / 1e9, "max_error": err}
        res["layer_norm"].append(row)
        print(f"layer_norm {tname} {rows}x{hidden} from Python: {row['python_us']:.1f} us ({row['GBps']:.0f} GB/s), path {path}", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


def strata_leaf(host, leaf):
    """The NumPy values of leaf `leaf` ('pos.0' style names, as strata.leaves gives) of records."""
    for name, off, dt in strata.leaves(host.dtype):
        if name == leaf:
            raw = host.view(np.uint8).reshape(len(host), -1)[:, off:off + dt.itemsize]
            return np.ascontiguousarray(raw).view(dt).reshape(-1)
    raise KeyError(leaf)


if __name__ == "__main__":
    main()
