# SPDX-License-Identifier: Apache-2.0
"""strata from Python: layer / RMS normalization over rows, and AoS <-> SoA conversion of records
described by a NumPy dtype (structured arrays from HDF5 / openPMD files, say).

Arrays are used in place through DLPack or the buffer protocol; outputs are allocated in the
caller's framework (NumPy arrays in -> NumPy arrays out; torch tensors in -> torch tensors out).
The host build (`strata.backend == "host"`) works on CPU memory; the CUDA build on GPU memory.
Nothing is copied behind the caller's back: an input whose strides strata cannot use (negative,
broadcast, gapped) is refused with a ValueError naming it, and the caller chooses to copy.
Errors are TypeError for a wrong type or dtype and ValueError for a wrong shape, stride or value;
each names the Python argument or the record field.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _strata

backend: str = _strata.backend

__all__ = ["__version__", "backend", "layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm", "layer_norm_backward", "rms_norm_backward", "to_soa", "to_aos", "leaves", "to_arrow", "ArrowBatch"]

DISTRIBUTION = "strata-soa"  # the name on PyPI; the import name is strata


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version(DISTRIBUTION)
    except (ImportError, PackageNotFoundError):  # run from a build tree: the library's own version
        return _strata.__version__


__version__: str = _version()


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _stream_of(x: Any) -> int:
    if _is_torch(x) and x.is_cuda:
        import torch
        return torch.cuda.current_stream(x.device).cuda_stream
    return 0


def _array(a: Any, name: str) -> Any:
    """a as a NumPy array or torch tensor, without a copy: DLPack producers through
    np.from_dlpack (host build) or torch.from_dlpack (CUDA build), buffers through memoryview."""
    if isinstance(a, np.ndarray) or _is_torch(a):
        return a
    if hasattr(a, "__dlpack__"):
        try:
            if backend == "cuda":
                import torch
                return torch.from_dlpack(a)
            if hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] != 1:  # kDLCPU
                raise ValueError(f"strata: {name} is not in CPU memory; this module was built for strata's host backend")
            return np.from_dlpack(a)
        except BufferError as e:
            raise TypeError(f"strata: {name} cannot be imported through DLPack: {e}") from e
    try:
        return np.asarray(memoryview(a))
    except TypeError:
        return np.asarray(a)


def _eps(eps: Any) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"strata: eps is a {type(eps).__name__}; a real number is needed")
    return float(eps)


def _new_like(x: Any, dtype: Any = None) -> Any:
    if _is_torch(x):
        return x.new_empty(x.shape) if dtype is None else x.new_empty(x.shape, dtype=dtype)
    return np.empty(x.shape, dtype=x.dtype if dtype is None else dtype)


def _normalize(rms: bool, x: Any, weight: Any, bias: Any, eps: Any, out_dtype: Any = None) -> Tuple[Any, str]:
    x = _array(x, "x")
    weight = None if weight is None else _array(weight, "weight")
    bias = None if bias is None else _array(bias, "bias")
    eps = _eps(eps)
    out = _new_like(x, out_dtype)
    if len(x.shape) == 3:
        path = _strata.normalize_heads(rms, x, out, weight, bias, eps, _stream_of(x))
    elif out_dtype is not None and out.dtype != x.dtype and len(x.shape) == 2:
        # rows into a narrower dtype: the per-head entry point with one head a token
        path = _strata.normalize_heads(rms, x[:, None, :], out[:, None, :], weight, bias, eps, _stream_of(x))
    else:
        path = _strata.normalize(rms, x, out, weight, bias, eps, _stream_of(x))
    return out, path


def layer_norm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5,
               return_path: bool = False, out_dtype: Any = None) -> Union[Any, Tuple[Any, str]]:
    """Layer normalization of each row of the 2-D array x: (x - mean) / sqrt(var + eps) * weight +
    bias, mean and variance over the row in float32.

    x: float32, float16 or bfloat16 (a torch tensor for bfloat16), shape (rows, features); its rows
    must be contiguous, at any row stride of at least a row (x[:, :k] is fine; x[:, ::2], x.T,
    x[::-1] and broadcast arrays are refused with ValueError). Or a 3-D array (tokens, heads,
    head_dim) of any token and head strides whose rows lie apart (the heads of a fused QKV
    projection, a transposed attention tensor): each (token, head) row is normalized over head_dim
    with one weight and bias of head_dim elements. Empty arrays ((0, k), (k, 0)) give empty
    results. weight, bias: None or 1-D contiguous arrays of `features` elements, x's dtype.
    eps: a finite real number >= 0. out_dtype: None (x's dtype), or float16 / bfloat16 for float32
    x. Returns a new array of x's shape in x's framework, and with return_path=True also the path
    taken ("vectorized" or "scalar", with ", two passes" for rows too long to hold and ", rows of
    one pitch" for per-head rows lying back to back).
    """
    out, path = _normalize(False, x, weight, bias, eps, out_dtype)
    return (out, path) if return_path else out


def rms_norm(x: Any, weight: Any = None, eps: float = 1e-6,
             return_path: bool = False, out_dtype: Any = None) -> Union[Any, Tuple[Any, str]]:
    """RMS normalization of each row of x: x / sqrt(mean(x^2) + eps) * weight. Takes x, weight,
    eps and out_dtype as layer_norm does, and returns as it does."""
    out, path = _normalize(True, x, weight, None, eps, out_dtype)
    return (out, path) if return_path else out


def _normalize_add(rms: bool, x: Any, residual: Any, weight: Any, bias: Any, eps: Any, in_place: bool, out_dtype: Any) -> Tuple[Any, Any, str]:
    x = _array(x, "x")
    residual = _array(residual, "residual")
    weight = None if weight is None else _array(weight, "weight")
    bias = None if bias is None else _array(bias, "bias")
    eps = _eps(eps)
    out = _new_like(x, out_dtype)
    total = residual if in_place else _new_like(x)
    path = _strata.normalize_add(rms, x, residual, total, out, weight, bias, eps, _stream_of(x))
    return out, total, path


def add_layer_norm(x: Any, residual: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5, in_place: bool = True,
                   return_path: bool = False, out_dtype: Any = None) -> Any:
    """Layer normalization with a residual added first, in one pass over the rows: h = x + residual
    (rounded to x's dtype, as x + residual would be), y = layer_norm(h). in_place=True stores h
    over the residual and returns y (vLLM's fused_add_rms_norm convention); in_place=False leaves
    the residual alone and returns (y, h). x, residual: 2-D arrays of one shape and dtype, as
    layer_norm takes x; weight, bias, eps and out_dtype as layer_norm takes them. With
    return_path=True the path taken comes last."""
    out, total, path = _normalize_add(False, x, residual, weight, bias, eps, in_place, out_dtype)
    result = (out,) if in_place else (out, total)
    if return_path:
        result += (path,)
    return result[0] if len(result) == 1 else result


def add_rms_norm(x: Any, residual: Any, weight: Any = None, eps: float = 1e-6, in_place: bool = True,
                 return_path: bool = False, out_dtype: Any = None) -> Any:
    """RMS normalization with a residual added first: as add_layer_norm, without bias."""
    out, total, path = _normalize_add(True, x, residual, weight, None, eps, in_place, out_dtype)
    result = (out,) if in_place else (out, total)
    if return_path:
        result += (path,)
    return result[0] if len(result) == 1 else result


def _normalize_backward(rms: bool, x: Any, dy: Any, weight: Any, eps: Any, weight_grad: bool, bias_grad: bool) -> Tuple[Any, Any, Any, str]:
    x = _array(x, "x")
    dy = _array(dy, "dy")
    weight = None if weight is None else _array(weight, "weight")
    eps = _eps(eps)
    features = x.shape[-1] if len(x.shape) > 0 else 0
    new = (lambda shape: x.new_empty(shape)) if _is_torch(x) else (lambda shape: np.empty(shape, dtype=x.dtype))
    dx = new(x.shape)
    dweight = new((features,)) if weight_grad else None
    dbias = new((features,)) if bias_grad else None
    path = _strata.normalize_backward(rms, x, dy, weight, dx, dweight, dbias, eps, _stream_of(x))
    return dx, dweight, dbias, path


def layer_norm_backward(x: Any, dy: Any, weight: Any = None, eps: float = 1e-5, weight_grad: bool = True, bias_grad: bool = True,
                        return_path: bool = False) -> Union[Tuple[Any, Any, Any], Tuple[Any, Any, Any, str]]:
    """The backward of layer_norm: from its input x, the gradient dy of the loss with respect to
    its output and its weight (None: 1), returns (dx, dweight, dbias) in x's framework and dtype;
    dweight = sum over rows of dy * xhat and dbias = sum over rows of dy (float32 sums, the same
    bits on every run on one device), None where weight_grad / bias_grad is False. The row
    statistics are computed again from x. x and dy: arrays as layer_norm takes x, of one shape.
    With return_path=True also the path taken ("vectorized" or "scalar", and ", two passes" for
    rows too long to hold in registers)."""
    dx, dw, db, path = _normalize_backward(False, x, dy, weight, eps, weight_grad, bias_grad)
    return (dx, dw, db, path) if return_path else (dx, dw, db)


def rms_norm_backward(x: Any, dy: Any, weight: Any = None, eps: float = 1e-6, weight_grad: bool = True,
                      return_path: bool = False) -> Union[Tuple[Any, Any], Tuple[Any, Any, str]]:
    """The backward of rms_norm: returns (dx, dweight) as layer_norm_backward returns (dx, dweight,
    dbias)."""
    dx, dw, _, path = _normalize_backward(True, x, dy, weight, eps, weight_grad, False)
    return (dx, dw, path) if return_path else (dx, dw)


def _dtype(dtype: Any) -> np.dtype:
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"strata: {dtype!r} is not a NumPy dtype: {e}") from e


def leaves(dtype: Any) -> List[Tuple[str, int, np.dtype]]:
    """The leaf fields of a structured dtype, in offset order: (name, offset, dtype). Nested
    structures are flattened with dotted names ('pos.x'), sub-arrays into one leaf per element
    ('pos[2]', 'm[1][0]'). TypeError for a dtype without fields, a field of a size other than
    1, 2, 4, 8 or 16 bytes, an object field, or two leaves of one name."""
    out: List[Tuple[str, int, np.dtype]] = []

    def walk(dt: np.dtype, prefix: str, base: int) -> None:
        if dt.names is not None:
            for name in dt.names:
                sub, off = dt.fields[name][:2]
                walk(sub, f"{prefix}.{name}" if prefix else name, base + off)
        elif dt.subdtype is not None:
            elem, shape = dt.subdtype
            if elem.hasobject:  # even an empty sub-array of them: the records hold references
                raise TypeError(f"strata: field '{prefix}' holds Python objects; strata moves plain data only")
            for i, idx in enumerate(np.ndindex(*shape)):
                walk(elem, prefix + "".join(f"[{k}]" for k in idx), base + i * elem.itemsize)
        else:
            if dt.hasobject:
                raise TypeError(f"strata: field '{prefix}' holds Python objects; strata moves plain data only")
            if dt.itemsize not in (1, 2, 4, 8, 16):
                raise TypeError(f"strata: field '{prefix}' ({dt}) is {dt.itemsize} bytes; fields of 1, 2, 4, 8 or 16 bytes are supported")
            out.append((prefix, base, dt))

    dtype = _dtype(dtype)
    if dtype.names is None:
        raise TypeError(f"strata: {dtype} is not a structured dtype (one with named fields)")
    walk(dtype, "", 0)
    if not out:
        raise TypeError(f"strata: the dtype {dtype} has no fields to convert")
    names = [name for name, _, _ in out]
    for name in names:
        if names.count(name) > 1:
            raise TypeError(f"strata: two leaves of the dtype are named '{name}'")
    return sorted(out, key=lambda leaf: leaf[1])


def _record_leaves(dtype: np.dtype) -> List[Tuple[str, int, np.dtype]]:
    fields = leaves(dtype)
    for name, _, dt in fields:
        if dt.byteorder == ">":
            raise TypeError(f"strata: field '{name}' is big-endian ({dt}); convert the records with "
                            ".astype(dtype.newbyteorder('<'))")
    return fields


def _bytes_of(a: np.ndarray) -> np.ndarray:
    """A uint8 view of a NumPy array's elements, one more axis of itemsize bytes, its strides kept
    (so strata's checks see them as they are)."""
    return a[..., None].view(np.uint8)


_COLUMN_ALIGN = 256  # every column starts on a 256-byte boundary of the one allocation

_TORCH_DTYPES = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8", "i2": "int16", "i4": "int32",
                 "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "b1": "bool",
                 "c8": "complex64", "c16": "complex128"}


def _torch_dtype(dt: np.dtype, name: str) -> Any:
    import torch
    found = getattr(torch, _TORCH_DTYPES.get(dt.str[1:], ""), None)
    if found is None:
        raise TypeError(f"strata: field '{name}' ({dt}) has no torch dtype")
    return found


def _torch_bytes(t: Any) -> int:
    return t.numel() * t.element_size()


def to_soa(records: Any, dtype: Any = None) -> Dict[str, Any]:
    """Records to a dict of leaf name -> 1-D column (leaves(dtype) gives the names, in offset
    order). All columns view one allocation, each on a 256-byte boundary; nothing is copied after
    the conversion.

    records: a NumPy structured array (any shape; dtype then defaults to its dtype), or with
    `dtype` the records' raw bytes: a uint8 array, bytes, bytearray, memoryview or, on the CUDA
    build, a device tensor such as a uint8 torch tensor, holding a whole number of records. The
    records must lie densely (records[::2], reversed or broadcast arrays are refused with
    ValueError). On the CUDA build, host records are copied to the GPU once and the columns are
    torch tensors there.
    """
    if not _is_torch(records):
        records = _array(records, "records")
    torch_in = _is_torch(records)
    if dtype is None:
        if torch_in:
            raise TypeError("strata: to_soa of a tensor needs the records' dtype")
        if records.dtype.names is None:
            raise TypeError(f"strata: records has dtype {records.dtype}, not a structured dtype; "
                            "pass the records' dtype to read them as raw bytes")
        dtype = records.dtype
    dtype = _dtype(dtype)
    fields = _record_leaves(dtype)
    stride = dtype.itemsize
    if torch_in:
        raw, nbytes = records, _torch_bytes(records)
    else:
        if records.dtype != dtype and records.dtype not in (np.uint8, np.int8):
            raise TypeError(f"strata: records has dtype {records.dtype}; to_soa takes records of dtype {dtype} "
                            "or their raw bytes (uint8)")
        raw = _bytes_of(records)
        nbytes = raw.size
    if nbytes % stride:
        raise ValueError(f"strata: records hold {nbytes} bytes, not a whole number of {stride}-byte records of {dtype}")
    n = nbytes // stride
    if backend == "cuda" and not torch_in:
        import torch
        _strata.dense_bytes(raw, "records")  # the host build's check, before the copy to the GPU
        raw, torch_in = torch.from_numpy(raw.reshape(-1)).cuda(), True
    offsets, total = [], 0
    for _, _, dt in fields:
        offsets.append(total)
        total += -(-max(n * dt.itemsize, 1) // _COLUMN_ALIGN) * _COLUMN_ALIGN
    if torch_in:
        import torch
        buf = torch.empty(total + _COLUMN_ALIGN, dtype=torch.uint8, device=raw.device)
        shift = (-buf.data_ptr()) % _COLUMN_ALIGN
        spans = [buf[shift + o: shift + o + n * dt.itemsize] for o, (_, _, dt) in zip(offsets, fields)]
        cols = [s.view(_torch_dtype(dt, name)) for s, (name, _, dt) in zip(spans, fields)]
    else:
        buf = np.empty(total + _COLUMN_ALIGN, dtype=np.uint8)
        shift = (-buf.ctypes.data) % _COLUMN_ALIGN
        spans = [buf[shift + o: shift + o + n * dt.itemsize] for o, (_, _, dt) in zip(offsets, fields)]
        cols = [s.view(dt) for s, (_, _, dt) in zip(spans, fields)]
    _strata.aos_to_soa(raw, n, stride, [(name, off, dt.itemsize) for name, off, dt in fields], spans, _stream_of(raw))
    return {name: col for (name, _, _), col in zip(fields, cols)}


def to_aos(columns: Mapping, dtype: Any) -> Any:
    """A dict of leaf name -> column (as to_soa gives) back to records of `dtype`: a NumPy
    structured array of n records, or a uint8 tensor of n * dtype.itemsize bytes when the columns
    are tensors. Bytes of a record that no field covers are zero.

    Every leaf of the dtype needs a 1-D column of its exact dtype (a column of another dtype is a
    TypeError even where the item size matches), all of one length n, lying densely (a strided,
    reversed or broadcast column is a ValueError). Keys that are no leaf are ignored. The dtype's
    fields must not overlap.
    """
    dtype = _dtype(dtype)
    fields = _record_leaves(dtype)
    if not isinstance(columns, Mapping):
        raise TypeError(f"strata: columns is a {type(columns).__name__}; a dict of leaf name -> column is needed")
    missing = [name for name, _, _ in fields if name not in columns]
    if missing:
        raise ValueError(f"strata: no column for {', '.join(missing)}")
    for (a, off_a, dt_a), (b, off_b, _) in zip(fields, fields[1:]):
        if off_a + dt_a.itemsize > off_b:
            raise ValueError(f"strata: fields '{a}' and '{b}' of the dtype overlap; to_aos cannot write both")
    cols, n, first, torch_cols = [], None, None, None
    for name, _, dt in fields:
        c = columns[name]
        if not _is_torch(c):
            c = _array(c, f"column '{name}'")
        if torch_cols is None:
            torch_cols = _is_torch(c)
        elif torch_cols != _is_torch(c):
            raise TypeError(f"strata: column '{name}' is a {type(c).__name__} and column '{first}' is not; "
                            "the columns must come from one framework")
        if c.ndim != 1:
            raise ValueError(f"strata: column '{name}' has shape {tuple(c.shape)}; columns are 1-D")
        if n is None:
            n, first = c.shape[0], name
        elif c.shape[0] != n:
            raise ValueError(f"strata: column '{name}' has {c.shape[0]} elements and column '{first}' {n}; "
                             "every column needs one per record")
        want = _torch_dtype(dt, name) if torch_cols else dt
        if c.dtype != want:
            raise TypeError(f"strata: column '{name}' has dtype {c.dtype}; the field '{name}' of the dtype is {want}")
        cols.append(c if torch_cols else _bytes_of(c))
    if torch_cols:
        import torch
        out = torch.empty(n * dtype.itemsize, dtype=torch.uint8, device=cols[0].device)
        raw_out = out
    else:
        out = np.empty(n, dtype=dtype)
        raw_out = _bytes_of(out)
    _strata.soa_to_aos(cols, [(name, off, dt.itemsize) for name, off, dt in fields], n, raw_out, dtype.itemsize,
                       _stream_of(cols[0]))
    return out


# ---- Arrow ----------------------------------------------------------------------------------------

_ARROW_FORMATS = {"b1": "b", "i1": "c", "u1": "C", "i2": "s", "u2": "S", "i4": "i", "u4": "I", "i8": "l", "u8": "L",
                  "f2": "e", "f4": "f", "f8": "g"}


def _arrow_tree(dtype: np.dtype, index: Dict[str, int], arrays: str) -> tuple:
    """The struct field of records of `dtype` as strata's C++ exporter takes it: (name, format,
    list_size, metadata, children, columns); a leaf reads the columns index[path] of its paths,
    one per element of the lists above it (row-major)."""

    def leaf(dt: np.dtype, name: str, paths: List[str]) -> tuple:
        fmt = _ARROW_FORMATS.get(dt.str[1:])
        meta = []
        if fmt is None and dt.kind == "V" and dt.names is None:
            fmt, meta = f"w:{dt.itemsize}", [("strata.type", f"opaque{dt.itemsize}")]
        if fmt is None:
            raise TypeError(f"strata: field '{paths[0]}' ({dt}) has no Arrow type strata exports; view it as an integer "
                            f"or as np.dtype('V{dt.itemsize}') bytes")
        return (name, fmt, 0, meta, [], [index[p] for p in paths])

    def walk(dt: np.dtype, name: str, paths: List[str]) -> tuple:
        if dt.names is not None:
            children = [walk(dt.fields[f][0], f, [f"{p}.{f}" if p else f for p in paths]) for f in dt.names]
            return (name, "+s", 0, [], children, [])
        if dt.subdtype is not None:
            elem, shape = dt.subdtype
            return dims(elem, shape, name, paths)
        return leaf(dt, name, paths)

    def dims(elem: np.dtype, shape: Tuple[int, ...], name: str, paths: List[str]) -> tuple:
        if not shape:
            return walk(elem, name, paths)
        k = shape[0]
        if k == 0:
            raise TypeError(f"strata: field '{paths[0]}' is an array of 0 elements, which has no leaves to export")
        if arrays == "struct":
            return (name, "+s", 0, [], [dims(elem, shape[1:], str(i), [f"{p}[{i}]" for p in paths]) for i in range(k)], [])
        child = dims(elem, shape[1:], "item", [f"{p}[{i}]" for p in paths for i in range(k)])
        return (name, f"+w:{k}", k, [], [child], [])

    return walk(dtype, "", [""])


class ArrowBatch:
    """Records as an Arrow record batch, through the Arrow PyCapsule interface: pyarrow.record_batch(b),
    pyarrow.array(b), polars.DataFrame(b) (and every consumer of __arrow_c_array__) read it without
    strata. Each export hands the consumer new C structs over the same columns.

    path: "shared" when every Arrow buffer is a column held here (nothing was copied), "partly
    shared" when bools (bit-packed by Arrow) or array elements (interleaved by Arrow's fixed-size
    lists) were copied, "copied" when nothing is shared. columns: the leaf columns (name -> array)
    the buffers come from; they are kept alive by every export until its consumer releases it.
    """

    def __init__(self, columns: Dict[str, Any], dtype: np.dtype, arrays: str, converted: bool):
        fields = _record_leaves(dtype)
        self.columns = columns
        self.dtype = dtype
        self._names = [name for name, _, _ in fields]
        self._tree = _arrow_tree(dtype, {name: i for i, name in enumerate(self._names)}, arrays)
        self._n = len(columns[self._names[0]])
        self._converted = converted
        self._meta = [("strata.version", __version__), ("strata.dtype", str(dtype.descr))]
        self.path = self._export()[2]

    def _export(self) -> Tuple[Any, Any, str]:
        cols = [_bytes_of(self.columns[name]) for name in self._names]  # uint8 views: void ('V16') columns too
        schema, array, path = _strata.to_arrow(self._tree, cols, self._n, self._meta)
        return schema, array, "copied" if self._converted else path

    def __len__(self) -> int:
        return self._n

    def __arrow_c_schema__(self) -> Any:
        return self._export()[0]

    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]:
        # The batch has one form; a consumer that asks for another casts what it gets.
        schema, array, _ = self._export()
        return schema, array

    def __repr__(self) -> str:
        return f"<strata.ArrowBatch of {self._n} records of {self.dtype}, {self.path}>"


def to_arrow(records: Any, dtype: Any = None, arrays: str = "list") -> ArrowBatch:
    """Records as an Arrow record batch (ArrowBatch: the Arrow PyCapsule interface), a struct
    column per field of the dtype and a struct per nested structure; names as the dtype's fields.

    records: a NumPy structured array (or raw bytes with `dtype`), converted to SoA columns by
    strata first (to_soa; the batch then holds those columns), or a dict of leaf name -> 1-D column
    as to_soa gives it, with `dtype`, exported in place: each Arrow buffer is the column itself
    (zero-copy), except bools (Arrow bit-packs them) and sub-array elements with arrays="list".
    arrays: "list" makes a sub-array field (shape (3,)) a fixed-size list (nested for more
    dimensions), "struct" a struct of fields "0" .. "N-1" whose buffers are the columns.
    Types: bool -> boolean, (u)int8..64, float16/32/64 as themselves, void fields ('V12') ->
    fixed-size binary; others (complex, datetime, strings) are a TypeError naming the field.
    Columns must be in host memory (on the CUDA build, copy them with .cpu()).
    """
    if arrays not in ("list", "struct"):
        raise ValueError(f"strata: arrays is {arrays!r}; 'list' or 'struct'")
    if not _strata.has_arrow:
        raise RuntimeError("strata: this build of strata has no Arrow export (pyarrow's headers were missing when it was built)")
    if isinstance(records, Mapping):
        if dtype is None:
            raise TypeError("strata: to_arrow of columns needs the records' dtype")
        dtype = _dtype(dtype)
        fields = _record_leaves(dtype)
        columns, n, first = {}, None, None
        for name, _, dt in fields:
            if name not in records:
                raise ValueError(f"strata: no column for '{name}'")
            c = records[name]
            if _is_torch(c):
                raise ValueError(f"strata: column '{name}' is a torch tensor; Arrow takes host memory: pass c.cpu().numpy()")
            c = _array(c, f"column '{name}'")
            if c.ndim != 1:
                raise ValueError(f"strata: column '{name}' has shape {tuple(c.shape)}; columns are 1-D")
            if c.dtype != dt:
                raise TypeError(f"strata: column '{name}' has dtype {c.dtype}; the field '{name}' of the dtype is {dt}")
            if n is None:
                n, first = c.shape[0], name
            elif c.shape[0] != n:
                raise ValueError(f"strata: column '{name}' has {c.shape[0]} elements and column '{first}' {n}; "
                                 "every column needs one per record")
            columns[name] = c
        return ArrowBatch(columns, dtype, arrays, converted=False)
    if backend == "cuda":  # to_soa would put the columns on the GPU: split them on the host here
        records = _array(records, "records")
        dtype = _dtype(records.dtype if dtype is None else dtype)
        raw = np.ascontiguousarray(_bytes_of(records)).reshape(-1)
        n = raw.size // dtype.itemsize
        cols = {name: np.ndarray((n,), dt, raw, off, (dtype.itemsize,)).copy() for name, off, dt in _record_leaves(dtype)}
        return ArrowBatch(cols, dtype, arrays, converted=True)
    if dtype is None:
        records = _array(records, "records")
        dtype = records.dtype
    dtype = _dtype(dtype)
    return ArrowBatch(to_soa(records, dtype), dtype, arrays, converted=True)
