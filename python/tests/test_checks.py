# SPDX-License-Identifier: Apache-2.0
"""Arrays strata cannot use as they lie (negative, broadcast, gapped strides; misaligned, read-only,
overlapping) are refused with a ValueError naming the argument or field, and nothing is written
outside an output; empty inputs give empty results; raw record bytes are counted in records; a
column of another dtype is a TypeError (issues 66 items 7 and 9, 67's Python bugs). The host
build runs these against NumPy; the checks are C++ shared with the CUDA build."""
import re

import numpy as np
import pytest

import strata
from strata import _strata

host_only = pytest.mark.skipif(strata.backend != "host", reason="NumPy arrays are host memory")
pytestmark = host_only

RECORD = np.dtype([("a", "<f4"), ("b", "<i4"), ("c", "<f4")])  # 12 bytes, the record
GAPPY = np.dtype({"names": ["id", "q"], "formats": ["<i8", "<f2"], "offsets": [0, 12], "itemsize": 16})
INTERNALS = re.compile(r"strata::|column \d|gamma|beta|make_matrix_view|runtime fields")


def records(n, dtype=RECORD, seed=0):
    g = np.random.default_rng(seed)
    out = np.zeros(n, dtype)
    for name in dtype.names:
        out[name] = g.integers(-1000, 1000, n).astype(dtype[name])
    return out


def refused(exc, pattern, f, *args, **kwargs):
    """f(*args) raises exc whose message matches pattern and names no C++ internals."""
    with pytest.raises(exc, match=pattern) as info:
        f(*args, **kwargs)
    assert not INTERNALS.search(str(info.value)), str(info.value)


# ---- normalization ------------------------------------------------------------------------------

def strided_inputs():
    base = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    return {
        "column stride 2": base[:, ::2],
        "transposed": base[:, :4].T,
        "reversed rows": base[::-1],
        "reversed columns": base[:, ::-1],
        "broadcast rows": np.broadcast_to(base[0], (4, 16)),
        "broadcast columns": np.broadcast_to(base[:, :1], (4, 16)),
        "overlapping rows": np.lib.stride_tricks.as_strided(base, (4, 8), (16, 4)),
    }


@pytest.mark.parametrize("case", list(strided_inputs()))
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_x_with_unusable_strides_is_refused(case, op):
    x = strided_inputs()[case]
    refused(ValueError, r"^strata: x('s| is)", getattr(strata, op), x)


def test_row_strides_of_at_least_a_row_are_used_in_place():
    wide = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    for x in (wide[:, :33], wide[::2, :40], wide[1:5, 3:20]):
        got = strata.layer_norm(x)
        ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["weight", "bias"])
def test_weight_and_bias_with_unusable_strides_are_refused(name):
    x = np.ones((3, 8), np.float32)
    for bad in (np.ones(16, np.float32)[::2], np.ones(8, np.float32)[::-1], np.broadcast_to(np.float32(1), (8,))):
        kwargs = {name: bad}
        refused(ValueError, rf"^strata: {name} is not contiguous", strata.layer_norm, x, **kwargs)


def test_misaligned_x_is_refused():
    raw = np.zeros(4 * 8 * 4 + 1, np.uint8)
    x = np.frombuffer(raw.data, np.float32, 32, offset=1).reshape(4, 8)
    assert not x.flags.aligned
    refused(ValueError, r"x at 0x[0-9a-f]+ is not aligned to its 4-byte elements", strata.layer_norm, x)


@pytest.mark.parametrize("shape", [(0, 8), (0, 1), (0, 0), (5, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_empty_rows_give_empty_results(shape, dtype):
    x = np.ones(shape, dtype)
    w = np.ones(shape[1], dtype)
    for y in (strata.layer_norm(x), strata.layer_norm(x, w, w), strata.rms_norm(x), strata.rms_norm(x, w)):
        assert y.shape == shape and y.dtype == x.dtype


def test_the_module_refuses_a_read_only_or_overlapping_out():
    x = np.ones((4, 8), np.float32)
    out = np.empty((4, 8), np.float32)
    out.flags.writeable = False
    refused(ValueError, "out is read-only", _strata.normalize, False, x, out, None, None, 1e-5)
    buf = np.ones((5, 8), np.float32)
    refused(ValueError, "out overlaps x", _strata.normalize, False, buf[:4], buf[1:], None, None, 1e-5)
    w = np.ones(40, np.float32)
    refused(ValueError, "out overlaps weight", _strata.normalize, False, x, w[:32].reshape(4, 8), w[:8], None, 1e-5)


def test_non_arrays_and_odd_strides_are_clean_errors():
    refused(TypeError, "x is a <class 'str'>", _strata.normalize, False, "rows", np.empty((1, 1), np.float32), None, None, 1e-5)
    packed = np.zeros(4, np.dtype([("v", "<f4", (3,)), ("t", "u1")]))  # 13-byte records: strides not whole floats
    refused(ValueError, r"x has strides \(13, 4\) bytes, not whole 4-byte elements", strata.layer_norm, packed["v"])
    refused(TypeError, "x has dtype", strata.layer_norm, np.zeros((2, 2), "S4"))


# ---- conversion ---------------------------------------------------------------------------------

def test_raw_bytes_are_counted_in_records():
    """Issue 67: 120 records of 12 bytes given as bytes were counted as 1440 records."""
    a = records(120)
    for raw in (a.tobytes(), bytearray(a.tobytes()), memoryview(a.tobytes()), np.frombuffer(a.tobytes(), np.uint8),
                a.view(np.uint8), a.view(np.int8)):
        cols = strata.to_soa(raw, RECORD)
        for name in RECORD.names:
            np.testing.assert_array_equal(cols[name], a[name], err_msg=f"{type(raw).__name__} {name}")
    refused(ValueError, r"records hold 1441 bytes, not a whole number of 12-byte records", strata.to_soa, a.tobytes() + b"x", RECORD)


def unusable_records():
    a = records(20)
    u8 = a.view(np.uint8)
    return {
        "every other record": a[::2],
        "reversed": a[::-1],
        "broadcast": np.broadcast_to(a[:1], (20,)),
        "reversed bytes": u8[::-1],
        "every other byte": np.ascontiguousarray(np.repeat(u8, 2))[::2],
        "broadcast bytes": np.broadcast_to(u8[:1], (240,)),
        "2-D with gaps": a.reshape(4, 5)[:, :4],
        "strided memoryview": memoryview(np.repeat(u8, 2).tobytes())[::2],
    }


@pytest.mark.parametrize("case", list(unusable_records()))
def test_records_that_do_not_lie_densely_are_refused(case):
    """Issue 66 item 7: a broadcast input crashed the process, a stride-2 input was read as if dense."""
    refused(ValueError, r"^strata: records is not contiguous", strata.to_soa, unusable_records()[case], RECORD)


def test_dense_multi_dimensional_records_are_read_in_order():
    a = records(24).reshape(2, 3, 4)
    cols = strata.to_soa(a)
    for name in RECORD.names:
        np.testing.assert_array_equal(cols[name], a[name].reshape(-1))


@pytest.mark.parametrize("case", ["every other", "reversed", "broadcast"])
def test_columns_that_do_not_lie_densely_are_refused(case):
    cols = strata.to_soa(records(20))
    b = np.repeat(cols["b"], 2)
    cols["b"] = {"every other": b[::2], "reversed": cols["b"][::-1], "broadcast": np.broadcast_to(cols["b"][:1], (20,))}[case]
    refused(ValueError, r"^strata: column 'b' is not contiguous", strata.to_aos, cols, RECORD)


def test_a_column_of_another_dtype_is_refused_even_at_the_same_item_size():
    """Issue 66 item 9: an int32 column for a float32 field was copied as raw bits."""
    cols = strata.to_soa(records(10))
    cols["a"] = cols["a"].view(np.int32)
    refused(TypeError, r"column 'a' has dtype int32; the field 'a' of the dtype is float32", strata.to_aos, cols, RECORD)
    cols = strata.to_soa(records(10))
    cols["b"] = cols["b"].astype(">i4")
    refused(TypeError, r"column 'b' has dtype >i4", strata.to_aos, cols, RECORD)


def test_column_shapes_are_checked_by_field_name():
    cols = strata.to_soa(records(10))
    cols["c"] = cols["c"][:9]
    refused(ValueError, r"column 'c' has 9 elements and column 'a' 10", strata.to_aos, cols, RECORD)
    cols = strata.to_soa(records(10))
    cols["b"] = cols["b"].reshape(2, 5)
    refused(ValueError, r"column 'b' has shape \(2, 5\); columns are 1-D", strata.to_aos, cols, RECORD)
    cols["b"] = list(range(10))
    refused(TypeError, r"column 'b' has dtype int64", strata.to_aos, cols, RECORD)
    refused(TypeError, "columns is a list", strata.to_aos, [cols["a"]], RECORD)


def test_overlapping_fields_are_read_but_not_written():
    union = np.dtype({"names": ["i", "f"], "formats": ["<i4", "<f4"], "offsets": [0, 0], "itemsize": 4})
    a = np.zeros(8, union)
    a["i"] = np.arange(8)
    cols = strata.to_soa(a)
    np.testing.assert_array_equal(cols["i"], np.arange(8))
    np.testing.assert_array_equal(cols["f"].view(np.int32), np.arange(8))
    refused(ValueError, "fields 'i' and 'f' of the dtype overlap", strata.to_aos, cols, union)


def test_the_module_checks_what_it_is_handed_directly():
    """The checks hold for _strata's own entry points, whatever the Python wrapper passes."""
    fields = [("a", 0, 4), ("b", 4, 4), ("c", 8, 4)]
    a = records(8)
    cols = [np.zeros(8, np.float32) for _ in fields]
    out = np.zeros(8 * 12, np.uint8)
    # Negative-stride output records: were written past their end.
    refused(ValueError, "out is not contiguous", _strata.soa_to_aos, cols, fields, 8, np.zeros(8 * 12 * 2, np.uint8)[::-2], 12)
    refused(ValueError, "records is not contiguous", _strata.aos_to_soa, np.broadcast_to(a.view(np.uint8)[:12], (8, 12)), 8, 12, fields, cols)
    refused(ValueError, r"records holds 96 bytes; 9 records of 12 bytes need 108", _strata.aos_to_soa, a.view(np.uint8), 9, 12, fields, cols)
    refused(ValueError, r"column 'b' holds 28 bytes; 8 elements of 4 bytes need 32", _strata.soa_to_aos,
            [cols[0], cols[1][:7], cols[2]], fields, 8, out, 12)
    refused(ValueError, r"column 'c' at 0x[0-9a-f]+ is not aligned to its 4-byte elements", _strata.aos_to_soa, a.view(np.uint8), 8, 12,
            fields, [cols[0], cols[1], np.zeros(33, np.uint8)[1:]])
    refused(ValueError, "field 'c' \\(offset 10, 4 bytes\\) ends past the 12-byte record", _strata.aos_to_soa, a.view(np.uint8), 8, 12,
            [("a", 0, 4), ("b", 4, 4), ("c", 10, 4)], cols)
    refused(ValueError, "field 'c' \\(offset 18446744073709551612", _strata.aos_to_soa, a.view(np.uint8), 8, 12,
            [("a", 0, 4), ("b", 4, 4), ("c", 2**64 - 4, 4)], cols)
    refused(TypeError, "field 'b' is 3 bytes", _strata.aos_to_soa, a.view(np.uint8), 8, 12, [("a", 0, 4), ("b", 4, 3), ("c", 8, 4)], cols)
    refused(ValueError, "records of 0 bytes", _strata.aos_to_soa, a.view(np.uint8), 8, 0, fields, cols)
    refused(ValueError, "records of 2000 bytes", _strata.aos_to_soa, np.zeros(2000, np.uint8), 1, 2000, fields, cols)
    refused(ValueError, "2 columns for 3 fields", _strata.aos_to_soa, a.view(np.uint8), 8, 12, fields, cols[:2])
    refused(ValueError, "column 'a' overlaps records", _strata.aos_to_soa, a.view(np.uint8), 8, 12, fields,
            [a.view(np.uint8)[:32], cols[1], cols[2]])
    ro = np.zeros(8, np.float32)
    ro.flags.writeable = False
    refused(ValueError, "column 'b' is read-only", _strata.aos_to_soa, a.view(np.uint8), 8, 12, fields, [cols[0], ro, cols[2]])
    refused(ValueError, "the dtype has 65 leaf fields", _strata.aos_to_soa, np.zeros(65, np.uint8), 1, 65,
            [(f"f{k}", k, 1) for k in range(65)], [np.zeros(1, np.uint8)] * 65)


def test_dlpack_capsules_are_checked_like_arrays():
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    out = np.empty_like(x)
    assert _strata.normalize(False, x.__dlpack__(), out, None, None, 1e-5) in ("vectorized", "scalar")
    np.testing.assert_allclose(out, strata.layer_norm(x), rtol=1e-6)
    refused(ValueError, "x's elements within a row are 8 bytes apart", _strata.normalize, False,
            np.ones((3, 16), np.float32)[:, ::2].__dlpack__(), out, None, None, 1e-5)

    class Producer:  # a DLPack producer that is not a NumPy array
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    np.testing.assert_allclose(strata.layer_norm(Producer(x)), strata.layer_norm(x), rtol=1e-6)
    refused(ValueError, r"^strata: x's rows are -32 bytes apart", strata.layer_norm, Producer(x[::-1]))


def test_errors_name_python_arguments_not_internals():
    x = np.ones((2, 4), np.float32)
    for f, args in [(strata.layer_norm, (x, np.ones(3, np.float32))), (strata.layer_norm, (x, None, np.ones(5, np.float32))),
                    (strata.rms_norm, (x, np.ones((4, 1), np.float32)))]:
        with pytest.raises(ValueError) as info:
            f(*args)
        assert re.match(r"strata: (weight|bias) has shape", str(info.value)) and not INTERNALS.search(str(info.value))
