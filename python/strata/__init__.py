"""strata from Python: layer / RMS normalization over rows, and AoS <-> SoA conversion of records
described by a NumPy dtype (structured arrays from HDF5 / openPMD files, say).

Arrays are used in place through DLPack or the buffer protocol; outputs are allocated in the
caller's framework (NumPy arrays in -> NumPy arrays out; torch tensors in -> torch tensors out).
The host build (`strata.backend == "host"`) works on CPU memory; the CUDA build on GPU memory.
"""
import numpy as np

from . import _strata

backend = _strata.backend

__all__ = ["backend", "layer_norm", "rms_norm", "to_soa", "to_aos", "leaves"]


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _stream_of(x):
    if _is_torch(x) and x.is_cuda:
        import torch
        return torch.cuda.current_stream(x.device).cuda_stream
    return 0


def _normalize(rms, x, weight, bias, eps):
    if _is_torch(x):
        out = x.new_empty((x.shape[0], x.shape[1]) if x.dim() == 2 else x.shape)
    else:
        x = np.asarray(x)
        out = np.empty(x.shape, dtype=x.dtype)
    path = _strata.normalize(rms, x, out, weight, bias, float(eps), _stream_of(x))
    return out, path


def layer_norm(x, weight=None, bias=None, eps=1e-5, return_path=False):
    """(x - mean) / sqrt(var + eps) * weight + bias over each row of the 2-D array x (float32,
    float16 or bfloat16 storage, float32 math; any row stride, unit column stride)."""
    out, path = _normalize(False, x, weight, bias, eps)
    return (out, path) if return_path else out


def rms_norm(x, weight=None, eps=1e-6, return_path=False):
    """x / sqrt(mean(x^2) + eps) * weight over each row of the 2-D array x."""
    out, path = _normalize(True, x, weight, None, eps)
    return (out, path) if return_path else out


def leaves(dtype):
    """The leaf fields of a structured dtype, in offset order: (name, offset, dtype). Nested
    structures are flattened with dotted names ('pos.x'), sub-arrays into one leaf per element
    ('pos[2]', 'm[1][0]')."""
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
            if dt.itemsize not in (1, 2, 4, 8, 16):
                raise ValueError(f"strata: field '{prefix}' of {dt.itemsize} bytes; fields of 1, 2, 4, 8 or 16 bytes are supported")
            out.append((prefix, base, dt))

    dtype = np.dtype(dtype)
    if dtype.names is None:
        raise ValueError("strata: a structured dtype (with named fields) is needed")
    walk(dtype, "", 0)
    return sorted(out, key=lambda leaf: leaf[1])


_COLUMN_ALIGN = 256  # every column starts on a 256-byte boundary of the one allocation


def _torch_dtype(dt):
    import torch
    table = {"f2": torch.float16, "f4": torch.float32, "f8": torch.float64, "i1": torch.int8, "i2": torch.int16,
             "i4": torch.int32, "i8": torch.int64, "u1": torch.uint8, "b1": torch.bool}
    for bits in (16, 32, 64):
        name = f"uint{bits}"
        if hasattr(torch, name):
            table[f"u{bits // 8}"] = getattr(torch, name)
    key = dt.str[1:]
    if key not in table:
        raise ValueError(f"strata: no torch dtype for {dt}")
    return table[key]


def to_soa(records, dtype=None):
    """Records (a NumPy structured array, or on the CUDA build a device buffer such as a uint8 torch
    tensor together with `dtype`) to a dict of leaf name -> 1-D column. All columns view one
    allocation (each on a 256-byte boundary); nothing is copied after the conversion."""
    torch_in = _is_torch(records)
    if dtype is None:
        if torch_in:
            raise ValueError("strata: to_soa of a tensor needs the records' dtype")
        records = np.ascontiguousarray(records)
        dtype = records.dtype
    if backend == "cuda" and not torch_in:
        # Host records on the CUDA build: their bytes go to the GPU once, the columns live there.
        import torch
        records = torch.from_numpy(np.ascontiguousarray(records).reshape(-1).view(np.uint8)).cuda()
        torch_in = True
    dtype = np.dtype(dtype)
    fields = leaves(dtype)
    stride = dtype.itemsize
    for name, _, dt in fields:
        if dt.byteorder == ">":
            raise ValueError(f"strata: field '{name}' is big-endian; convert the array with .astype(dtype.newbyteorder('<'))")
    if torch_in:
        n = records.numel() * records.element_size() // stride
        raw_records = records
    else:
        n = records.size
        raw_records = records.reshape(-1).view(np.uint8)
    offsets, total = [], 0
    for _, _, dt in fields:
        offsets.append(total)
        total += -(-max(n * dt.itemsize, 1) // _COLUMN_ALIGN) * _COLUMN_ALIGN
    if torch_in:
        import torch
        raw = torch.empty(total + _COLUMN_ALIGN, dtype=torch.uint8, device=records.device)
        shift = (-raw.data_ptr()) % _COLUMN_ALIGN
        cols = [raw[shift + o: shift + o + n * dt.itemsize].view(_torch_dtype(dt)) for o, (_, _, dt) in zip(offsets, fields)]
    else:
        raw = np.empty(total + _COLUMN_ALIGN, dtype=np.uint8)
        shift = (-raw.ctypes.data) % _COLUMN_ALIGN
        cols = [raw[shift + o: shift + o + n * dt.itemsize].view(dt) for o, (_, _, dt) in zip(offsets, fields)]
    _strata.aos_to_soa(raw_records, n, stride, [(off, dt.itemsize) for _, off, dt in fields], cols, _stream_of(records))
    return {name: col for (name, _, _), col in zip(fields, cols)}


def to_aos(columns, dtype):
    """A dict of leaf name -> column (as to_soa gives) back to records of `dtype`: a NumPy
    structured array, or a uint8 tensor of n * dtype.itemsize bytes when the columns are tensors.
    Bytes of a record that no field covers are zero."""
    dtype = np.dtype(dtype)
    fields = leaves(dtype)
    missing = [name for name, _, _ in fields if name not in columns]
    if missing:
        raise ValueError(f"strata: no column for {', '.join(missing)}")
    cols = [columns[name] for name, _, _ in fields]
    n = len(cols[0])
    if _is_torch(cols[0]):
        import torch
        out = torch.empty(n * dtype.itemsize, dtype=torch.uint8, device=cols[0].device)
    else:
        out = np.empty(n, dtype=dtype)
    raw_out = out if _is_torch(out) else out.view(np.uint8)
    _strata.soa_to_aos(cols, [(off, dt.itemsize) for _, off, dt in fields], n, raw_out, dtype.itemsize, _stream_of(cols[0]))
    return out
