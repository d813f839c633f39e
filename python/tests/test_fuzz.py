# SPDX-License-Identifier: Apache-2.0
"""Property tests (hypothesis) for every entry point: random shapes, strides (dense, gapped,
negative, zero, not a multiple of the item size), misaligned data, dtypes (structured, padded,
nested, with sub-arrays, unions, unsupported and mismatching fields) and sizes (0, 1, primes).
Each call either raises the TypeError / ValueError the rules predict or returns what a NumPy
reference computes, and leaves every input buffer byte-for-byte as it was (nothing is written
outside an output). conftest.py bounds the examples per property."""
import re

import numpy as np
import pytest

import strata
from strata import _strata

pytest.importorskip("hypothesis")
from hypothesis import assume, given, note  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.skipif(strata.backend != "host", reason="NumPy arrays are host memory")

SIZES = st.one_of(st.sampled_from([0, 1, 2, 3, 5, 7, 8, 9, 13, 31, 32, 33, 97, 127, 257]), st.integers(0, 300))
COLS = st.one_of(st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 97, 257, 1031]), st.integers(0, 600))


class Strided:
    """An array of `shape` over a buffer of its own, at byte strides drawn per dimension (dense,
    gapped, reversed, broadcast or a non-multiple of the item size) and possibly misaligned;
    `base` is the whole buffer, to check that nothing outside the array changed."""

    def __init__(self, draw, shape, dtype, rng, odd=True):
        item = np.dtype(dtype).itemsize
        strides, dense = [0] * len(shape), item
        for d in reversed(range(len(shape))):
            kinds = ["dense"] * 4 + ["gapped", "reversed", "broadcast"] + (["odd"] if odd else [])
            kind = draw(st.sampled_from(kinds))
            strides[d] = {"dense": dense, "gapped": dense + item * draw(st.integers(1, 3)), "reversed": -dense,
                          "broadcast": 0, "odd": dense + draw(st.integers(1, item - 1)) if item > 1 else dense}[kind]
            dense *= max(shape[d], 1)
        lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
        hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0) + item
        shift = draw(st.sampled_from([0] * 5 + [1, 2, item // 2])) if odd else 0
        self.base = rng.integers(0, 256, hi - lo + 160, dtype=np.uint8)  # bytes on both sides: a guard
        start = 32 + (-self.base.ctypes.data - 32) % 64 + shift  # the array's lowest byte: 64-byte aligned, plus the shift
        self.array = np.ndarray(shape, dtype, buffer=self.base, offset=start - lo, strides=strides)

    def fill(self, values):
        self.array[...] = values  # broadcast elements share memory: the last write holds
        self.values = np.array(self.array)  # the logical values, as the array reads them
        self.before = self.base.copy()
        return self

    def unchanged(self):
        return np.array_equal(self.base, self.before)


def normalization_usable(a):
    """Whether strata takes a as x / out rows (a ValueError otherwise)."""
    item = a.dtype.itemsize
    if a.size == 0:
        return True  # strides of an empty array, or of a dimension of one, are never used
    if any(s % item for s, n in zip(a.strides, a.shape) if n > 1):
        return False
    rows, cols = a.shape
    return a.ctypes.data % item == 0 and (cols <= 1 or a.strides[1] == item) and (rows <= 1 or a.strides[0] >= cols * item)


def vector_usable(v, cols):
    item = v.dtype.itemsize
    if any(s % item for s, n in zip(v.strides, v.shape) if n > 1):
        return False
    if v.ndim != 1 or v.shape[0] != cols:
        return False
    return cols == 0 or (v.ctypes.data % item == 0 and (cols <= 1 or v.strides[0] == item))


def reference(x, w, b, eps, rms):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    if rms:
        y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    else:
        y = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y


def normalization_case(data, rng):
    dtype = data.draw(st.sampled_from([np.float32, np.float16]), label="dtype")
    rms = data.draw(st.booleans(), label="rms")
    rows, cols = data.draw(SIZES.filter(lambda r: r <= 64), label="rows"), data.draw(COLS, label="cols")
    x = Strided(data.draw, (rows, cols), dtype, rng).fill(rng.standard_normal((rows, cols)) * 2 + 0.5)
    vectors = []
    for name in ("weight",) if rms else ("weight", "bias"):
        if data.draw(st.booleans(), label=f"{name} given"):
            n = data.draw(st.sampled_from([cols] * 6 + [cols + 1, max(cols - 1, 0)]), label=f"{name} length")
            vectors.append(Strided(data.draw, (n,), dtype, rng).fill(1 + 0.1 * rng.standard_normal(n)))
        else:
            vectors.append(None)
    eps = data.draw(st.sampled_from([1e-5, 1e-3, 0.5]), label="eps")
    usable = normalization_usable(x.array) and all(v is None or vector_usable(v.array, cols) for v in vectors)
    return dtype, rms, x, vectors, eps, usable


def check_normalization(call, dtype, rms, x, vectors, eps, usable):
    w = vectors[0].values if vectors[0] is not None else None
    b = vectors[1].values if len(vectors) > 1 and vectors[1] is not None else None
    if usable:
        y = call()
        assert y.shape == x.array.shape and y.dtype == dtype
        tol = 2e-4 if dtype == np.float32 else 1.5e-2
        np.testing.assert_allclose(y.astype(np.float64), reference(x.values, w, b, eps, rms), rtol=tol, atol=tol)
    else:
        with pytest.raises(ValueError, match=r"^strata: (x|weight|bias)\b"):
            call()
    assert x.unchanged() and all(v is None or v.unchanged() for v in vectors), "an input's buffer changed"


@given(st.data())
def test_normalization_either_refuses_or_matches_numpy(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    dtype, rms, x, vectors, eps, usable = normalization_case(data, rng)
    args = [v.array if v is not None else None for v in vectors]
    call = (lambda: strata.rms_norm(x.array, args[0], eps=eps)) if rms else (lambda: strata.layer_norm(x.array, *args, eps=eps))
    check_normalization(call, dtype, rms, x, vectors, eps, usable)


class Producer:
    """A DLPack producer that is not a NumPy array: strata imports it through DLPack."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@given(st.data())
def test_dlpack_imports_either_refuse_or_match_numpy(data):
    """x as a DLPack producer (through the public API) or as a raw capsule (the module's own
    entry point), at any strides."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    dtype, rms, x, vectors, eps, usable = normalization_case(data, rng)
    exportable = x.array.size == 0 or not any(s % x.array.dtype.itemsize for s, n in zip(x.array.strides, x.array.shape) if n > 1)
    args = [v.array if v is not None else None for v in vectors]
    if data.draw(st.booleans(), label="raw capsule"):
        assume(exportable)

        def call():
            out = np.empty(x.array.shape, dtype)
            _strata.normalize(rms, x.array.__dlpack__(), out, *(args + [None] * (2 - len(args))), eps)
            return out
    else:
        if not exportable:
            with pytest.raises(TypeError, match="x cannot be imported through DLPack"):
                strata.layer_norm(Producer(x.array))
            return
        call = (lambda: strata.rms_norm(Producer(x.array), args[0], eps=eps)) if rms else (
            lambda: strata.layer_norm(Producer(x.array), *args, eps=eps))
    check_normalization(call, dtype, rms, x, vectors, eps, usable)


@given(st.data())
def test_mismatching_normalization_dtypes_are_type_errors(data):
    dtypes = [np.float32, np.float16, np.float64, np.int32, np.int16, np.uint8, np.bool_, np.complex64]
    tx, tw = data.draw(st.sampled_from(dtypes)), data.draw(st.sampled_from(dtypes))
    cols = data.draw(COLS)
    x, w = np.ones((3, cols), tx), np.ones(cols, tw)
    if tx not in (np.float32, np.float16):
        with pytest.raises(TypeError, match=f"x has dtype {np.dtype(tx).name}"):
            strata.layer_norm(x, w)
    elif tw != tx:
        with pytest.raises(TypeError, match=f"weight has dtype {np.dtype(tw).name}"):
            strata.rms_norm(x, w)
    else:
        assert strata.layer_norm(x, w, w).shape == (3, cols)


# ---- conversion ---------------------------------------------------------------------------------

GOOD_LEAVES = ["<f4", "<f8", "<f2", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8", "?", "<c8", "<c16", "S1", "S2",
               "S4", "S8", "S16", "V1", "V4", "V8", "V16", "<M8[s]", "<m8[ms]", "<U1", "<U4"]
BAD_LEAVES = ["S3", "S5", "V3", "V12", "<U3", ">f4", ">i8", "O"]  # sizes strata does not move, big-endian, objects
NAMES = st.sampled_from(["x", "y", "z", "pos", "vel", "m", "id", "q", "flags", "t0", "_w"])


@st.composite
def record_dtypes(draw, depth=2, usable_only=False):
    """Structured dtypes: packed, aligned or with gaps and padding, nested, with sub-arrays; unless
    usable_only, also with fields strata refuses, unions and records past its limits."""
    def member():
        options = [st.sampled_from(GOOD_LEAVES).map(np.dtype)] * 4
        if not usable_only:
            options.append(st.sampled_from(BAD_LEAVES).map(np.dtype))
        if depth > 0:
            options.append(record_dtypes(depth - 1, usable_only))
        sub = draw(st.one_of(*options))
        if draw(st.integers(0, 5)) == 0:  # a sub-array, sometimes empty or long (past 64 leaves)
            sub = np.dtype((sub, draw(st.sampled_from([(1,), (3,), (2, 2)] if usable_only else [(0,), (1,), (3,), (2, 2), (17,), (70,)]))))
        return sub

    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    formats = [member() for _ in names]
    layout = draw(st.sampled_from(["packed", "aligned", "gaps"]))
    try:
        if layout != "gaps":
            return np.dtype(list(zip(names, formats)), align=layout == "aligned")
    except (TypeError, ValueError):  # a layout NumPy refuses (aligned fields past a record's fixed size, say)
        assume(False)
    offsets, at = [], 0
    for f in formats:
        at = max(0, at + draw(st.sampled_from([0, 0, 1, 3, 8] + ([] if usable_only else [-2]))))  # -2: overlapping fields
        offsets.append(at)
        at += f.itemsize
    pad = draw(st.sampled_from([0, 1, 5, 16]))
    try:
        return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": at + pad})
    except (TypeError, ValueError):  # overlapping object fields, say
        assume(False)


def flat_leaves(dtype):
    """(name, offset, dtype) of every leaf, as NumPy lays the dtype out, without strata's checks."""
    out = []

    def walk(dt, prefix, base):
        if dt.names is not None:
            for name in dt.names:
                sub, off = dt.fields[name][:2]
                walk(sub, f"{prefix}.{name}" if prefix else name, base + off)
        elif dt.subdtype is not None:
            elem, shape = dt.subdtype
            for i, idx in enumerate(np.ndindex(*shape)):
                walk(elem, prefix + "".join(f"[{k}]" for k in idx), base + i * elem.itemsize)
        else:
            out.append((prefix, base, dt))

    walk(dtype, "", 0)
    return sorted(out, key=lambda leaf: leaf[1])


def dtype_outcome(dtype):
    """None where strata converts records of dtype, else the exception it raises."""
    leaves = flat_leaves(dtype)
    if not leaves or any(dt.hasobject or dt.itemsize not in (1, 2, 4, 8, 16) or dt.byteorder == ">" for _, _, dt in leaves):
        return TypeError
    if dtype.itemsize > 1536 or len(leaves) > 64:
        return ValueError
    return None


def records_case(data, dtype, n, rng):
    """Records of dtype in one of the ways a caller holds them: (records, the dtype argument,
    whether they lie densely, their logical values, the buffer under them)."""
    raw = rng.integers(0, 256, (2 * n + 1) * dtype.itemsize, dtype=np.uint8)
    a = raw[: n * dtype.itemsize].view(dtype)
    how = data.draw(st.sampled_from(["array", "2-D", "every other", "reversed", "broadcast", "bytes", "uint8 at an odd address",
                                     "strided memoryview"]), label="records")
    note(f"records: {how}, n={n}, dtype={dtype}")
    if how == "array":
        return a, None, True, a, raw
    if how == "2-D":
        return a.reshape(1, n) if n % 2 else a.reshape(-1, 2) if n else a.reshape(0, 3), None, True, a, raw
    if how == "every other":
        r = raw[: 2 * n * dtype.itemsize].view(dtype)[::2]
        return r, dtype, n <= 1, np.array(r), raw
    if how == "reversed":
        return a[::-1], dtype, n <= 1, a[::-1].copy(), raw
    if how == "broadcast":
        r = np.broadcast_to(raw[: dtype.itemsize].view(dtype), (n,))
        return r, None, n <= 1, np.array(r), raw
    if how == "bytes":
        extra = data.draw(st.sampled_from([e for e in (0, 0, 1, dtype.itemsize - 1) if e == 0 or e % dtype.itemsize]), label="extra bytes")
        return a.tobytes() + b"\x07" * extra, dtype, extra == 0, a, raw
    if how == "uint8 at an odd address":
        r = raw[1: 1 + n * dtype.itemsize]
        return r, dtype, True, r.copy().view(dtype), raw
    doubled = np.repeat(a.view(np.uint8), 2).tobytes()
    return memoryview(doubled)[::2], dtype, n * dtype.itemsize <= 1, a, raw


def leaf_bytes(records, off, dt):
    n = records.size
    return np.ascontiguousarray(records.reshape(-1)).view(np.uint8).reshape(n, records.dtype.itemsize)[:, off: off + dt.itemsize]


@given(st.data(), record_dtypes(), SIZES)
def test_conversion_either_refuses_or_matches_numpy(data, dtype, n):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    if dtype.hasobject or dtype.itemsize == 0:  # NumPy cannot view raw bytes as these
        with pytest.raises(TypeError, match="^strata: "):
            strata.to_soa(np.zeros(n, dtype))
        return
    records, dtype_arg, dense, logical, raw = records_case(data, dtype, n, rng)
    before = raw.copy()
    expected = dtype_outcome(dtype) or (None if dense else ValueError)
    if expected is not None:
        with pytest.raises(expected, match="^strata: "):
            strata.to_soa(records, dtype_arg if dtype_arg is not None else dtype)
        assert np.array_equal(raw, before), "to_soa changed its input"
        return
    cols = strata.to_soa(records, dtype_arg)
    leaves = flat_leaves(dtype)
    assert list(cols) == [name for name, _, _ in leaves]
    for name, off, dt in leaves:
        col = cols[name]
        assert col.shape == (n,) and col.dtype == dt and (n == 0 or col.ctypes.data % 256 == 0)
        np.testing.assert_array_equal(col.view(np.uint8).reshape(n, dt.itemsize), leaf_bytes(logical, off, dt), err_msg=name)
    assert np.array_equal(raw, before), "to_soa changed its input"

    overlap = any(a_off + a_dt.itemsize > b_off for (_, a_off, a_dt), (_, b_off, _) in zip(leaves, leaves[1:]))
    if overlap:
        with pytest.raises(ValueError, match="of the dtype overlap"):
            strata.to_aos(cols, dtype)
        return
    back = strata.to_aos(cols, dtype)
    assert back.dtype == dtype and back.shape == (n,)
    covered = np.zeros(dtype.itemsize, bool)
    for _, off, dt in leaves:
        covered[off: off + dt.itemsize] = True
    got = back.view(np.uint8).reshape(n, dtype.itemsize)
    want = np.ascontiguousarray(logical.reshape(-1)).view(np.uint8).reshape(n, dtype.itemsize)
    np.testing.assert_array_equal(got[:, covered], want[:, covered])
    assert (got[:, ~covered] == 0).all(), "bytes no field covers are zero"


SAME_SIZE = {1: ["u1", "i1", "?", "S1", "V1"], 2: ["<i2", "<f2", "<u2", "S2"], 4: ["<f4", "<i4", "<u4", "<U1", "V4"],
             8: ["<f8", "<i8", "<c8", "<M8[s]", "S8"], 16: ["<c16", "V16", "S16", "<U4"]}


@given(st.data(), record_dtypes(depth=1, usable_only=True), SIZES)
def test_to_aos_refuses_columns_that_do_not_fit_the_dtype(data, dtype, n):
    assume(dtype_outcome(dtype) is None)
    leaves = flat_leaves(dtype)
    assume(not any(a_off + a_dt.itemsize > b_off for (_, a_off, a_dt), (_, b_off, _) in zip(leaves, leaves[1:])))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    cols = strata.to_soa(a)
    name, _, dt = data.draw(st.sampled_from(leaves), label="leaf")
    kinds = ["dtype", "missing", "2-D"] + (["shorter"] if n >= 1 else []) + (["every other", "reversed", "broadcast"] if n > 1 else [])
    how = data.draw(st.sampled_from(kinds), label="mutation")
    col = cols[name]
    if how == "dtype":
        other = np.dtype(data.draw(st.sampled_from([t for t in SAME_SIZE[dt.itemsize] if np.dtype(t) != dt])))
        cols[name], error = col.view(other), TypeError
    elif how == "missing":
        del cols[name]
        error = ValueError
    elif how == "2-D":
        cols[name], error = col.reshape(n, 1), ValueError
    elif how == "shorter":
        cols[name], error = col[:-1], ValueError
    elif how == "every other":
        cols[name], error = np.repeat(col, 2)[::2], ValueError
    elif how == "reversed":
        cols[name], error = col[::-1], ValueError
    else:
        cols[name], error = np.broadcast_to(col[:1], (n,)), ValueError
    before = {k: np.array(v) for k, v in cols.items()}
    if how == "shorter" and len(leaves) == 1:  # one shorter column is n - 1 records
        assert strata.to_aos(cols, dtype).shape == (n - 1,)
    else:
        with pytest.raises(error, match=f"'{re.escape(name)}'|no column for {re.escape(name)}"):
            strata.to_aos(cols, dtype)
    for k, v in cols.items():
        assert np.array_equal(before[k].view(np.uint8), np.array(v).view(np.uint8)), f"to_aos changed column {k}"
