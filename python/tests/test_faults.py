# SPDX-License-Identifier: Apache-2.0
"""Allocation-failure sweeps of the Python entry points (issue 66, SQLite's malloc tests the model):
for k = 0, 1, 2, ... the k-th allocation strata's library makes in the call fails, until the call
succeeds. Each failure must raise MemoryError, leave the inputs byte-for-byte as they were, leak
nothing, and the next call must give the same result as an undisturbed one."""
import itertools

import numpy as np
import pytest

import strata
from strata import _testing

pytestmark = pytest.mark.skipif(strata.backend != "host", reason="NumPy arrays are host memory")

DEFAULT_AFFINE_COPY_BYTES = 32 << 20


@pytest.fixture(autouse=True)
def small_affine_copies():
    """Normalization copies weight and bias per row offset into scratch for inputs of 32 MiB and
    more; the sweeps lower that so small inputs allocate too."""
    _testing.set_affine_copy_bytes(0)
    yield
    _testing.set_affine_copy_bytes(DEFAULT_AFFINE_COPY_BYTES)
    _testing.fail_allocation(-1)


def raw(value):
    if isinstance(value, dict):
        return {k: raw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(raw(v) for v in value)
    return np.ascontiguousarray(value).reshape(-1).view(np.uint8).copy() if value is not None else None


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    return (a is None and b is None) or np.array_equal(a, b)


def sweep(call, inputs):
    """Fails each allocation of call() in turn; returns how many it makes."""
    before = raw(inputs)
    _testing.fail_allocation(-1)
    reference = raw(call())
    needed = _testing.allocations()
    failures = 0
    for k in itertools.count():
        live = _testing.live_allocations()
        _testing.fail_allocation(k)
        try:
            result = call()
        except MemoryError as e:
            _testing.fail_allocation(-1)
            failures += 1
            assert "out of" in str(e) and "injected failure" in str(e), str(e)
            assert same(raw(inputs), before), f"allocation {k} failed and an input changed"
            assert _testing.live_allocations() == live, f"allocation {k} failed and memory leaked"
            assert same(raw(call()), reference), f"the call after failing allocation {k} differs"
        else:
            _testing.fail_allocation(-1)
            assert same(raw(result), reference)
            break
        assert k <= needed, "more failures than the call makes allocations"
    assert failures == needed, f"{needed} allocations, {failures} failures"
    assert same(raw(inputs), before)
    return needed


def rng(seed):
    return np.random.default_rng(seed)


def normalization_cases():
    g = rng(1)
    out = {}
    for dtype in (np.float16, np.float32):
        for cols in (1, 7, 1001, 4096):
            x = g.standard_normal((33, cols)).astype(dtype)
            w = (1 + 0.1 * g.standard_normal(cols)).astype(dtype)
            b = (0.1 * g.standard_normal(cols)).astype(dtype)
            name = f"{np.dtype(dtype).name} x {cols}"
            out[f"layer_norm {name}"] = (lambda x=x, w=w, b=b: strata.layer_norm(x, w, b), (x, w, b))
            out[f"layer_norm {name}, strided rows"] = (lambda x=x, w=w, b=b: strata.layer_norm(x[::2], w, b), (x, w, b))
            out[f"rms_norm {name}"] = (lambda x=x, w=w: strata.rms_norm(x, w), (x, w))
    return out


PARTICLE = np.dtype([("pos", [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]), ("vel", "<f4", (3,)), ("mass", "<f8"),
                     ("cell", "<i2", (2,)), ("flags", "u1")])


def conversion_cases():
    out = {}
    for n in (0, 1, 33, 4099):
        a = rng(n).integers(0, 256, n * PARTICLE.itemsize, dtype=np.uint8).view(PARTICLE)
        cols = strata.to_soa(a)
        out[f"to_soa n={n}"] = (lambda a=a: strata.to_soa(a), (a,))
        out[f"to_soa of bytes n={n}"] = (lambda a=a: strata.to_soa(a.tobytes(), PARTICLE), (a,))
        out[f"to_aos n={n}"] = (lambda cols=cols: strata.to_aos(cols, PARTICLE), (cols,))
    return out


CASES = {**normalization_cases(), **conversion_cases()}


@pytest.mark.parametrize("case", list(CASES))
def test_every_allocation_failure_is_a_memory_error_that_changes_nothing(case):
    call, inputs = CASES[case]
    sweep(call, inputs)


def test_the_sweeps_reach_allocations():
    """At least the normalizations that copy weight and bias into scratch allocate, so the sweep
    above fails real allocations (dense float16 rows of an odd length: their offsets from 16-byte
    boundaries vary per row)."""
    counts = {case: sweep(*CASES[case]) for case in CASES}
    assert counts["layer_norm float16 x 1001"] >= 1, counts


def test_fault_injection_is_off_after_a_sweep():
    _testing.fail_allocation(0)
    _testing.fail_allocation(-1)
    x = np.ones((4, 1001), np.float16)
    w = np.ones(1001, np.float16)
    assert strata.layer_norm(x, w, w).shape == (4, 1001)
