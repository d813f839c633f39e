# SPDX-License-Identifier: Apache-2.0
"""strata.to_arrow read by pyarrow, polars and pandas through the Arrow PyCapsule interface: every
leaf's values as NumPy has them, SoA columns shared in place (buffer addresses), bools and
sub-arrays copied into Arrow's layouts, the columns kept alive by the consumer's arrays, and what
Arrow cannot hold refused naming the field."""
import gc
import re
import weakref

import numpy as np
import pytest

import strata

pa = pytest.importorskip("pyarrow")

pytestmark = pytest.mark.skipif(strata.backend != "host", reason="the host build's columns are NumPy arrays")

NESTED = np.dtype([("pos", [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]), ("id", "<i8"), ("alive", "?"),
                   ("w", "<f8", (3,)), ("m", "<i2", (2, 3)), ("q", [("a", "<f4"), ("c", "<i2"), ("d", "u1")], (2,)),
                   ("h", "<f2"), ("u", "<u4"), ("flags", "u1"), ("raw", "V16")])


def random_records(dtype, n, seed=1):
    """n records of dtype with every byte random (bools 0 or 1, floats finite)."""
    g = np.random.default_rng(seed)
    out = np.zeros(n, dtype=dtype)
    for name, off, dt in strata.leaves(dtype):
        raw = out.view(np.uint8).reshape(n, dtype.itemsize)[:, off:off + dt.itemsize]
        if dt.kind == "b":
            raw[:] = g.integers(0, 2, size=(n, 1), dtype=np.uint8)
        elif dt.kind == "f":
            raw[:] = g.uniform(-1e3, 1e3, size=n).astype(dt).view(np.uint8).reshape(n, dt.itemsize)
        else:
            raw[:] = g.integers(0, 256, size=(n, dt.itemsize), dtype=np.uint8)
    return out


def leaf_of(records, path):
    """The values of leaf `path` ('q[1].a', 'm[1][2]') of records, as NumPy indexes them."""
    v = records
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        v = v[:, int(part[1:-1])] if part.startswith("[") else v[part]
    return v


def arrow_leaf(batch, path):
    """The values of leaf `path` of a pyarrow batch, one per record."""
    col = None
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            k = int(part[1:-1])
            col = col.flatten()[k::col.type.list_size] if isinstance(col, pa.FixedSizeListArray) else col.field(str(k))
        else:
            col = batch.column(part) if col is None else col.field(part)
    return col


def expect_values(batch, records):
    for name, _, dt in strata.leaves(records.dtype):
        got = arrow_leaf(batch, name)
        want = leaf_of(records, name)
        if dt.kind == "V":
            assert got.type == pa.binary(dt.itemsize), name
            assert [bytes(v) for v in got.to_pylist()] == [bytes(v) for v in want], name
        else:
            np.testing.assert_array_equal(got.to_numpy(zero_copy_only=False), want, err_msg=name)


@pytest.mark.parametrize("n", [0, 1, 17, 100_003])
def test_pyarrow_reads_every_leaf(n):
    records = random_records(NESTED, n, seed=n)
    batch = pa.record_batch(strata.to_arrow(records))
    assert batch.num_rows == n
    assert batch.schema.names == ["pos", "id", "alive", "w", "m", "q", "h", "u", "flags", "raw"]
    t = batch.schema
    assert t.field("pos").type == pa.struct([pa.field("x", pa.float32(), False), pa.field("y", pa.float32(), False),
                                             pa.field("z", pa.float32(), False)])
    assert t.field("alive").type == pa.bool_()
    assert t.field("w").type == pa.list_(pa.field("item", pa.float64(), False), 3)
    assert t.field("m").type.list_size == 2 and t.field("m").type.value_type.list_size == 3
    assert t.field("h").type == pa.float16()
    assert not any(f.nullable for f in t)
    expect_values(batch, records)
    assert batch.schema.metadata[b"strata.dtype"] == str(NESTED.descr).encode()


def test_soa_columns_are_shared_in_place_and_kept_alive():
    dtype = np.dtype([("pos", [("x", "<f4"), ("y", "<f4")]), ("k", "<i2"), ("w", "<f8", (2,)), ("ok", "?")])
    records = random_records(dtype, 1000, seed=3)
    cols = strata.to_soa(records)
    b = strata.to_arrow(cols, dtype)
    assert b.path == "partly shared"  # the bools and w's list elements are copied
    batch = pa.record_batch(b)
    assert batch.column("pos").field("x").buffers()[1].address == cols["pos.x"].ctypes.data
    assert batch.column("k").buffers()[1].address == cols["k"].ctypes.data
    assert batch.column("ok").buffers()[1].address != cols["ok"].ctypes.data
    s = strata.to_arrow(cols, dtype, arrays="struct")  # each array element a field: its column in place
    sb = pa.record_batch(s)
    assert sb.column("w").field("1").buffers()[1].address == cols["w[1]"].ctypes.data
    assert sb.schema.field("w").type == pa.struct([pa.field("0", pa.float64(), False), pa.field("1", pa.float64(), False)])
    expect_values(sb, records)
    # Shared: a write to a column shows; the columns outlive every Python reference but Arrow's.
    cols["k"][5] = 1234
    assert batch.column("k")[5].as_py() == 1234
    want = records["pos"]["y"].copy()
    del cols, b, s, sb
    gc.collect()
    np.testing.assert_array_equal(batch.column("pos").field("y").to_numpy(), want)
    all_shared = strata.to_arrow(strata.to_soa(records[["pos", "k"]].copy()), np.dtype([("pos", dtype["pos"]), ("k", "<i2")]))
    assert all_shared.path == "shared"


def test_records_are_converted_by_strata_and_each_export_is_fresh():
    records = random_records(NESTED, 50, seed=4)
    b = strata.to_arrow(records)
    assert b.path == "copied"
    assert len(b) == 50
    first, second = pa.record_batch(b), pa.record_batch(b)
    assert first.equals(second)
    assert pa.array(b).type == pa.struct(list(first.schema))  # pyarrow.array takes it as one struct array
    schema = pa.schema(b)
    assert schema.names == first.schema.names
    raw = records.view(np.uint8)
    expect_values(pa.record_batch(strata.to_arrow(raw, NESTED)), records)


def test_capsules_hold_the_columns_until_released():
    records = random_records(NESTED, 10, seed=5)
    b = strata.to_arrow(records)
    owner = weakref.ref(b.columns["id"].base)  # the one allocation to_soa's columns view
    schema, array = b.__arrow_c_array__()
    del b, records
    gc.collect()
    assert owner() is not None  # the array capsule's struct holds it
    del schema
    gc.collect()
    assert owner() is not None
    del array  # the capsule releases the struct it holds, and with it the columns
    gc.collect()
    assert owner() is None


def test_polars_and_pandas_read_it():
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    dtype = np.dtype([("pos", [("x", "<f4"), ("y", "<f4")]), ("id", "<i8"), ("alive", "?"), ("w", "<f8", (3,))])
    records = random_records(dtype, 200, seed=6)
    b = strata.to_arrow(records)
    df = pl.DataFrame(b)  # polars takes the PyCapsule interface itself
    assert df.equals(pl.from_arrow(pa.record_batch(b)))
    np.testing.assert_array_equal(df["id"].to_numpy(), records["id"])
    np.testing.assert_array_equal(df["pos"].struct.field("y").to_numpy(), records["pos"]["y"])
    np.testing.assert_array_equal(np.stack(df["w"].to_list()), records["w"])
    np.testing.assert_array_equal(df["alive"].to_numpy(), records["alive"])
    frame = pa.record_batch(b).to_pandas()
    assert isinstance(frame, pd.DataFrame)
    np.testing.assert_array_equal(frame["id"].to_numpy(), records["id"])
    np.testing.assert_array_equal(np.stack(frame["w"].to_numpy()), records["w"])
    assert [p["x"] for p in frame["pos"]] == records["pos"]["x"].tolist()


@pytest.mark.parametrize("bad,message", [
    (np.dtype([("z", "<c8")]), re.escape("field 'z' (complex64) has no Arrow type")),
    (np.dtype([("t", "<M8[s]")]), re.escape("field 't' (datetime64[s]) has no Arrow type")),
    (np.dtype([("e", "<f4", (0,)), ("k", "<i4")]), "no fields to convert|array of 0 elements"),
])
def test_what_arrow_cannot_hold_is_refused(bad, message):
    with pytest.raises(TypeError, match=message):
        strata.to_arrow(np.zeros(3, dtype=bad))


def test_columns_that_do_not_fit_are_refused():
    dtype = np.dtype([("a", "<f4"), ("b", "<i8")])
    with pytest.raises(TypeError, match="needs the records' dtype"):
        strata.to_arrow({"a": np.zeros(3, "f4"), "b": np.zeros(3, "i8")})
    with pytest.raises(ValueError, match="no column for 'b'"):
        strata.to_arrow({"a": np.zeros(3, "f4")}, dtype)
    with pytest.raises(TypeError, match="column 'b' has dtype int32"):
        strata.to_arrow({"a": np.zeros(3, "f4"), "b": np.zeros(3, "i4")}, dtype)
    with pytest.raises(ValueError, match="column 'b' has 2 elements and column 'a' 3"):
        strata.to_arrow({"a": np.zeros(3, "f4"), "b": np.zeros(2, "i8")}, dtype)
    with pytest.raises(ValueError, match="not contiguous"):
        strata.to_arrow({"a": np.zeros(6, "f4")[::2], "b": np.zeros(3, "i8")}, dtype)
    with pytest.raises(ValueError, match="'list' or 'struct'"):
        strata.to_arrow(np.zeros(3, dtype), arrays="tuple")


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

SCALARS = ["?", "i1", "u1", "<i2", "<u2", "<f2", "<i4", "<u4", "<f4", "<i8", "<u8", "<f8", "V8", "V16"]


@st.composite
def dtypes(draw, depth=0):
    fields = []
    for k in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 2 if depth < 2 else 0))
        if kind == 0:
            sub = np.dtype(draw(st.sampled_from(SCALARS)))
        elif kind == 1:
            sub = draw(dtypes(depth + 1))
        else:
            sub = np.dtype((draw(st.sampled_from(SCALARS)), tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))))
        fields.append((f"f{k}", sub))
    return np.dtype(fields)


@given(dtypes(), st.integers(0, 40), st.sampled_from(["list", "struct"]), st.booleans())
def test_random_dtypes_round_trip_through_pyarrow(dtype, n, arrays, as_columns):
    records = random_records(dtype, n, seed=n)
    b = strata.to_arrow(strata.to_soa(records), dtype, arrays=arrays) if as_columns else strata.to_arrow(records, arrays=arrays)
    expect_values(pa.record_batch(b), records)
