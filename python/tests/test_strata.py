# SPDX-License-Identifier: Apache-2.0
"""strata's Python module against NumPy (and PyTorch where it is installed): normalization against
a float64 reference, to_soa / to_aos against the structured array's own fields, refusals."""
import os

import numpy as np
import pytest

import strata

SEED = int(os.environ.get("STRATA_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
print(f"STRATA_TEST_SEED={SEED}")

try:
    import torch
except ImportError:  # the module's tests need NumPy only
    torch = None

DEVICE = "cuda" if strata.backend == "cuda" else "cpu"


def rng(salt=0):
    return np.random.default_rng([SEED, salt])


def to_device(a):
    """On the CUDA build arrays must be GPU tensors; on the host build NumPy arrays serve."""
    if strata.backend == "cuda":
        return torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)
    return a


def to_numpy(a):
    return a.cpu().numpy() if torch is not None and isinstance(a, torch.Tensor) else np.asarray(a)


def reference(x, w, b, eps, rms):
    x = x.astype(np.float64)
    if rms:
        y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    else:
        y = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y


def relative_error(y, ref):
    scale = np.linalg.norm(ref)
    return np.linalg.norm(y.astype(np.float64) - ref) / (scale if scale > 0 else 1.0)


@pytest.mark.parametrize("rows,cols", [(7, 1000), (5, 1), (3, 4096), (33, 1025), (2, 5120), (64, 3)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 1e-2)])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("affine", [False, True])
def test_normalization_matches_a_float64_reference(rows, cols, dtype, tol, rms, affine):
    g = rng(rows * 7919 + cols)
    x = (g.standard_normal((rows, cols)) * 2 + 0.5).astype(dtype)
    w = (1 + 0.1 * g.standard_normal(cols)).astype(dtype) if affine else None
    b = (0.1 * g.standard_normal(cols)).astype(dtype) if affine and not rms else None
    args = [to_device(x), None if w is None else to_device(w)]
    if rms:
        y, path = strata.rms_norm(*args, eps=1e-5, return_path=True)
    else:
        y, path = strata.layer_norm(*args, None if b is None else to_device(b), eps=1e-5, return_path=True)
    assert path in ("vectorized", "scalar")
    y = to_numpy(y)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert np.isfinite(y).all()
    assert relative_error(y, reference(x, w, b, 1e-5, rms)) < tol


def backward_reference(x, dy, w, eps, rms):
    """dx, dweight, dbias of the normalization in float64 (the formulas are checked against finite
    differences of the forward in the C++ tests)."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mean = 0.0 if rms else x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    g = dy * (w.astype(np.float64) if w is not None else 1.0)
    c_g = 0.0 if rms else g.mean(axis=1, keepdims=True)
    dx = rstd * (g - c_g - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


@pytest.mark.parametrize("rows,cols", [(37, 1), (33, 100), (9, 1000), (3, 4096), (2, 20000)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float16, 2e-2)])
@pytest.mark.parametrize("rms", [False, True])
def test_backward_matches_a_float64_reference(rows, cols, dtype, tol, rms):
    g = rng(rows * 104729 + cols)
    x = (g.standard_normal((rows, cols)) * 2 + 0.5).astype(dtype)
    dy = g.standard_normal((rows, cols)).astype(dtype)
    w = (1 + 0.2 * g.standard_normal(cols)).astype(dtype)
    if rms:
        dx, dw, path = strata.rms_norm_backward(to_device(x), to_device(dy), to_device(w), eps=1e-5, return_path=True)
        db = None
    else:
        dx, dw, db, path = strata.layer_norm_backward(to_device(x), to_device(dy), to_device(w), eps=1e-5, return_path=True)
    assert path.split(",")[0] in ("vectorized", "scalar")
    assert ("two passes" in path) == (cols > 16384)
    ref_dx, ref_dw, ref_db = backward_reference(x, dy, w, 1e-5, rms)
    # rows of one element: dx is a difference of terms that cancel; compare against their size
    terms = np.abs(dy.astype(np.float64) * w).max() * (1.0 / np.sqrt(1e-5) if cols == 1 else 3.0)
    assert np.abs(to_numpy(dx).astype(np.float64) - ref_dx).max() <= tol * max(terms, np.abs(ref_dx).max())
    assert relative_error(to_numpy(dw), ref_dw) < tol
    if db is not None:
        assert relative_error(to_numpy(db), ref_db) < tol


def test_backward_without_weight_gradients_and_refusals():
    x = to_device(np.ones((4, 8), np.float32))
    dx, dw, db = strata.layer_norm_backward(x, x, weight_grad=False, bias_grad=False)
    assert dw is None and db is None and to_numpy(dx).shape == (4, 8)
    with pytest.raises(ValueError, match="dy has shape"):
        strata.layer_norm_backward(x, to_device(np.ones((4, 9), np.float32)))
    with pytest.raises(TypeError, match="dy has dtype"):
        strata.layer_norm_backward(x, to_device(np.ones((4, 8), np.float16)))
    with pytest.raises(ValueError, match="weight"):
        strata.rms_norm_backward(x, x, to_device(np.ones(7, np.float32)))


def test_strided_rows_leave_the_rest_of_the_buffer_alone():
    g = rng(1)
    wide = g.standard_normal((50, 1013)).astype(np.float32)
    x = wide[:, :1000]  # row stride 1013, not 16-byte aligned rows
    if strata.backend == "cuda":
        x = to_device(wide)[:, :1000]
    y = to_numpy(strata.layer_norm(x))
    assert relative_error(y, reference(wide[:, :1000], None, None, 1e-5, False)) < 1e-5


def test_normalization_refusals():
    x = to_device(np.ones((4, 8), np.float32))
    with pytest.raises(ValueError, match=r"x has shape \(8,\).*2-D rows"):
        strata.layer_norm(to_device(np.ones(8, np.float32)))
    with pytest.raises(ValueError, match=r"weight has shape \(7,\)"):
        strata.layer_norm(x, to_device(np.ones(7, np.float32)))
    with pytest.raises(ValueError, match=r"bias has shape \(8, 1\)"):
        strata.layer_norm(x, None, to_device(np.ones((8, 1), np.float32)))
    with pytest.raises(TypeError, match="weight has dtype float16 and x float32"):
        strata.layer_norm(x, to_device(np.ones(8, np.float16)))
    with pytest.raises(TypeError, match="bias has dtype float16 and x float32"):
        strata.layer_norm(x, None, to_device(np.ones(8, np.float16)))
    with pytest.raises(TypeError, match="x has dtype float64; strata normalizes float32, float16 or bfloat16"):
        strata.layer_norm(to_device(np.ones((4, 8), np.float64)))
    with pytest.raises(TypeError, match="eps is a str"):
        strata.layer_norm(x, eps="1e-5")
    for eps in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="eps is"):
            strata.rms_norm(x, eps=eps)
    if strata.backend == "host" and torch is not None and torch.cuda.is_available():
        with pytest.raises(ValueError, match="not in CPU memory"):
            strata.layer_norm(torch.ones(4, 8, device="cuda"))


PARTICLE = np.dtype([("pos", [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]), ("vel", "<f4", (3,)), ("mass", "<f8"),
                     ("cell", "<i2", (2,)), ("flags", "u1")])  # packed: 43 bytes, unaligned fields
ALIGNED = np.dtype([("id", "<i8"), ("q", "<f2"), ("w", "<f4"), ("tag", "u1")], align=True)  # gaps between fields


def random_records(dtype, n, salt):
    raw = rng(salt).integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    a = raw.view(dtype).copy()
    # Keep floats free of NaN payloads so field comparisons are plain equality.
    for name, off, dt in strata.leaves(dtype):
        if dt.kind == "f" and n:
            view = np.ndarray(n, dtype=dt, buffer=a, offset=off, strides=(dtype.itemsize,))
            view[...] = rng(salt + off).standard_normal(n).astype(dt)
    return a


def field(a, name):
    """The values of leaf `name` of a structured array, through NumPy's own indexing."""
    out = a
    for part in name.replace("]", "").replace("[", ".").split("."):
        out = out[:, int(part)] if part.isdigit() else out[part]
    return out


def test_leaves_flatten_nested_structs_and_subarrays():
    names = [name for name, _, _ in strata.leaves(PARTICLE)]
    assert names == ["pos.x", "pos.y", "pos.z", "vel[0]", "vel[1]", "vel[2]", "mass", "cell[0]", "cell[1]", "flags"]
    offsets = [off for _, off, _ in strata.leaves(PARTICLE)]
    assert offsets == [0, 4, 8, 12, 16, 20, 24, 32, 34, 36]


@pytest.mark.parametrize("dtype", [PARTICLE, ALIGNED], ids=["packed", "aligned"])
@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 1000, 99991])
def test_to_soa_and_back(dtype, n):
    a = random_records(dtype, n, n + dtype.itemsize)
    if strata.backend == "cuda":
        cols = strata.to_soa(to_device(a.view(np.uint8)), dtype)
    else:
        cols = strata.to_soa(a)
    assert list(cols) == [name for name, _, _ in strata.leaves(dtype)]
    bases = set()
    for name, col in cols.items():
        got = to_numpy(col)
        np.testing.assert_array_equal(got, field(a, name), err_msg=name)
        ptr = col.data_ptr() if strata.backend == "cuda" else col.__array_interface__["data"][0]
        assert n == 0 or ptr % 256 == 0, f"column {name} is not on a 256-byte boundary"
        if strata.backend == "host":
            bases.add(id(col.base.base if col.base is not None and col.base.base is not None else col.base))
    if strata.backend == "host":
        assert len(bases) == 1, "all columns view one allocation"
    back = strata.to_aos(cols, dtype)
    back = to_numpy(back).view(dtype) if strata.backend == "cuda" else back
    for name, _, _ in strata.leaves(dtype):
        np.testing.assert_array_equal(field(back, name), field(a, name), err_msg=name)
    if dtype is ALIGNED and n:
        covered = np.zeros(dtype.itemsize, bool)
        for _, off, dt in strata.leaves(dtype):
            covered[off:off + dt.itemsize] = True
        raw = back.view(np.uint8).reshape(n, dtype.itemsize)
        assert (raw[:, ~covered] == 0).all(), "bytes outside every field are zero"


def test_read_only_inputs_are_accepted():
    """Records from np.frombuffer or a read-only memory map, and read-only rows to normalize: strata
    only reads them."""
    a = random_records(PARTICLE, 1000, 77)
    ro = np.frombuffer(a.tobytes(), dtype=PARTICLE)
    assert not ro.flags.writeable
    if strata.backend == "host":
        cols = strata.to_soa(ro)
        for name, _, _ in strata.leaves(PARTICLE):
            np.testing.assert_array_equal(cols[name], field(a, name), err_msg=name)
            cols[name].flags.writeable = False
        back = strata.to_aos(cols, PARTICLE)
        for name, _, _ in strata.leaves(PARTICLE):
            np.testing.assert_array_equal(field(back, name), field(a, name), err_msg=name)
        x = rng(5).standard_normal((4, 300)).astype(np.float32)
        x.flags.writeable = False
        assert relative_error(strata.layer_norm(x), reference(x, None, None, 1e-5, False)) < 1e-5
    else:
        cols = strata.to_soa(ro)  # host records on the CUDA build go to the GPU first
        for name, _, _ in strata.leaves(PARTICLE):
            np.testing.assert_array_equal(to_numpy(cols[name]), field(a, name), err_msg=name)


def test_conversion_refusals():
    with pytest.raises(TypeError, match="float32 is not a structured dtype"):
        strata.leaves(np.float32)
    with pytest.raises(TypeError, match="field 'name' .* is 3 bytes; fields of 1, 2, 4, 8 or 16 bytes"):
        strata.leaves(np.dtype([("name", "S3"), ("x", "<f4")]))
    with pytest.raises(TypeError, match="field 'o' holds Python objects"):
        strata.leaves(np.dtype([("x", "<f4"), ("o", "O")]))
    with pytest.raises(TypeError, match="no fields"):
        strata.leaves(np.dtype([("e", "<f4", (0,))]))
    with pytest.raises(TypeError, match="field 'x' is big-endian"):
        strata.to_soa(np.zeros(4, np.dtype([("x", ">f4")])))
    with pytest.raises(TypeError, match="records has dtype float32; to_soa takes records of dtype"):
        strata.to_soa(np.zeros(12, np.float32), np.dtype([("x", "<f4")]))
    cols = strata.to_soa(random_records(PARTICLE, 10, 3)) if strata.backend == "host" else None
    if cols is not None:
        del cols["mass"]
        with pytest.raises(ValueError, match="no column for mass"):
            strata.to_aos(cols, PARTICLE)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_torch_tensors_in_torch_tensors_out():
    x = torch.randn(16, 4096, device=DEVICE)
    y = strata.layer_norm(x, torch.ones(4096, device=DEVICE), torch.zeros(4096, device=DEVICE))
    assert isinstance(y, torch.Tensor) and y.device == x.device
    ref = torch.nn.functional.layer_norm(x.double(), (4096,), eps=1e-5)
    assert ((y.double() - ref).norm() / ref.norm()).item() < 1e-5
    if hasattr(torch, "bfloat16"):
        xb = x.to(torch.bfloat16)
        yb = strata.rms_norm(xb)
        refb = torch.nn.functional.rms_norm(xb.double(), (4096,), eps=1e-6)
        assert ((yb.double() - refb).norm() / refb.norm()).item() < 1e-2


# ---- a residual added first, per-head rows, a narrower output ---------------------------------

def rounded_sum(x, r):
    """x + r as x's dtype holds it (float32 arithmetic, then rounded)."""
    return (x.astype(np.float32) + r.astype(np.float32)).astype(x.dtype)


@pytest.mark.parametrize("rows,cols", [(7, 1000), (5, 1), (3, 4096), (33, 1025), (2, 20000)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 1e-2)])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_add_normalization_matches_a_float64_reference(rows, cols, dtype, tol, rms, in_place):
    g = rng(rows * 31 + cols)
    x = (g.standard_normal((rows, cols)) * 2 + 0.5).astype(dtype)
    r = (g.standard_normal((rows, cols)) + 0.2).astype(dtype)
    w = (1 + 0.1 * g.standard_normal(cols)).astype(dtype)
    b = (0.1 * g.standard_normal(cols)).astype(dtype)
    want_h = rounded_sum(x, r)
    x, r = x.copy(), r.copy()  # to_device gives the host build the arrays themselves
    xd, rd = to_device(x.copy()), to_device(r.copy())
    if rms:
        got = strata.add_rms_norm(xd, rd, to_device(w), eps=1e-5, in_place=in_place, return_path=True)
    else:
        got = strata.add_layer_norm(xd, rd, to_device(w), to_device(b), eps=1e-5, in_place=in_place, return_path=True)
    y, path = got[0], got[-1]
    h = to_numpy(rd) if in_place else to_numpy(got[1])
    assert path.startswith(("vectorized", "scalar")) and (", two passes" in path) == (cols > 16384)
    np.testing.assert_array_equal(h, want_h)  # the sum bit for bit
    if not in_place:
        np.testing.assert_array_equal(to_numpy(rd), r)  # the residual untouched
    np.testing.assert_array_equal(to_numpy(xd), x)
    y = to_numpy(y)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert relative_error(y, reference(want_h, w, None if rms else b, 1e-5, rms)) < tol


def heads_layouts(tokens, heads, dim, dtype, g):
    """x as [tokens, heads, dim] views: back to back, a slice of a fused QKV array (tokens strided),
    a transposed [heads, tokens, dim] array."""
    dense = (g.standard_normal((tokens, heads, dim)) * 2 + 0.5).astype(dtype)
    qkv = np.zeros((tokens, 3 * heads * dim), dtype=dtype)
    qkv[:, heads * dim:2 * heads * dim] = dense.reshape(tokens, heads * dim)
    sliced = qkv[:, heads * dim:2 * heads * dim].reshape(tokens, heads, dim)
    transposed = np.ascontiguousarray(dense.transpose(1, 0, 2)).transpose(1, 0, 2)
    return dense, {"dense": dense, "qkv slice": sliced, "transposed": transposed}


@pytest.mark.parametrize("dim", [1, 64, 100, 128])
@pytest.mark.parametrize("rms", [False, True])
def test_per_head_rows_of_any_strides(dim, rms):
    if strata.backend == "cuda":
        pytest.skip("NumPy views; the CUDA build's per-head rows are tested through strata.torch")
    g = rng(dim)
    w = (1 + 0.1 * g.standard_normal(dim)).astype(np.float32)
    b = (0.1 * g.standard_normal(dim)).astype(np.float32)
    dense, layouts = heads_layouts(9, 4, dim, np.float32, g)
    want = reference(dense.reshape(-1, dim), w, None if rms else b, 1e-5, rms).reshape(dense.shape)
    for name, x in layouts.items():
        if rms:
            y, path = strata.rms_norm(x, w, eps=1e-5, return_path=True)
        else:
            y, path = strata.layer_norm(x, w, b, eps=1e-5, return_path=True)
        assert (", rows of one pitch" in path) == (name == "dense"), (name, path)
        assert y.shape == x.shape
        assert relative_error(y, want) < 1e-5, name


def test_narrower_output():
    g = rng(5)
    x = (g.standard_normal((17, 256)) * 2).astype(np.float32)
    r = g.standard_normal((17, 256)).astype(np.float32)
    w = (1 + 0.1 * g.standard_normal(256)).astype(np.float32)
    y = strata.rms_norm(to_device(x), to_device(w), eps=1e-5, out_dtype=np.float16 if strata.backend != "cuda" else torch.float16)
    y = to_numpy(y)
    assert y.dtype == np.float16
    assert relative_error(y, reference(x, w, None, 1e-5, True)) < 1e-3
    y, h = strata.add_rms_norm(to_device(x), to_device(r), to_device(w), eps=1e-5, in_place=False,
                               out_dtype=np.float16 if strata.backend != "cuda" else torch.float16)
    assert to_numpy(y).dtype == np.float16 and to_numpy(h).dtype == np.float32
    assert relative_error(to_numpy(y), reference(x + r, w, None, 1e-5, True)) < 1e-3


def test_add_normalization_with_x_as_the_residual():
    r = (rng(9).standard_normal((6, 64)) + 1).astype(np.float32)
    want = reference(r + r, None, None, 1e-5, True)
    rd = to_device(r.copy())
    y = strata.add_rms_norm(rd, rd, eps=1e-5)  # residual += residual
    np.testing.assert_array_equal(to_numpy(rd), r + r)
    assert relative_error(to_numpy(y), want) < 1e-5


def test_add_normalization_refusals():
    x = to_device(np.ones((4, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="residual"):
        strata.add_rms_norm(x, to_device(np.ones((4, 9), dtype=np.float32)))
    with pytest.raises(TypeError, match="dtype"):
        strata.add_rms_norm(x, to_device(np.ones((4, 8), dtype=np.float16)))
    with pytest.raises(TypeError, match="out"):
        strata.add_rms_norm(to_device(np.ones((4, 8), dtype=np.float16)), to_device(np.ones((4, 8), dtype=np.float16)),
                            out_dtype=np.float32 if strata.backend != "cuda" else torch.float32)
    with pytest.raises(TypeError, match="bias"):
        strata._strata.normalize_add(True, x, x, None, x, None, x, 1e-5)
    with pytest.raises(ValueError, match="same array"):
        r = to_device(np.ones((4, 8), dtype=np.float32))
        out = to_device(np.ones((4, 8), dtype=np.float32))
        strata._strata.normalize_add(True, x, r, out, out, None, None, 1e-5)
    with pytest.raises(ValueError, match="overlap"):  # out over part of the residual
        big = to_device(np.ones((5, 8), dtype=np.float32))
        strata._strata.normalize_add(True, x, big[:4], None, big[1:], None, None, 1e-5)
    if strata.backend != "cuda":
        base = np.ones((4, 32), dtype=np.float32)
        with pytest.raises(ValueError, match="overlap"):  # heads that run into each other
            strata.rms_norm(np.lib.stride_tricks.as_strided(base, (4, 3, 8), (128, 16, 4)))
