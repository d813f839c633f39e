# SPDX-License-Identifier: Apache-2.0
"""strata's layer and RMS normalization as PyTorch operators, with their backward.

    import strata.torch as st
    y = st.layer_norm(x, weight, bias, eps=1e-5)   # x: (..., features); autograd and torch.compile work
    y = st.rms_norm(x, weight, eps=1e-6)

The forward and the backward are registered with torch.library as the custom operators
strata::layer_norm, strata::layer_norm_backward, strata::rms_norm and strata::rms_norm_backward
(with fake kernels for tracing), and the forward's autograd formula is the backward operator:
torch.compile traces through them (dynamic shapes too) without a graph break, and
torch.autograd.gradcheck can check them. The backward recomputes the row statistics from the saved
input (nothing else is saved) and returns weight and bias gradients as deterministic sums (the same
bits on every run on one device). The backward has no derivative of its own: double backward
(create_graph=True through these operators) is not supported. RMSNorm's eps defaults to
1e-6, where torch.nn.RMSNorm's default (None) takes the dtype's machine epsilon.

    y, h = st.add_rms_norm(x, residual, weight)     # y = rms_norm(x + residual), h = x + residual, one pass
    y = st.add_rms_norm_(x, residual, weight)       # the same with residual updated in place (inference)

Tensors: float32, bfloat16 or float16, on the GPU with the CUDA build of strata, in CPU memory with
the host build. Rows are the last dimension; the leading dimensions are flattened as a view. A
tensor whose leading dimensions do not flatten without a copy but whose last two keep their
strides (the query heads of a fused QKV projection, q = qkv[..., :h * d].view(..., h, d)) is
read as per-head rows (strata's heads_view) without a copy; its backward takes a
contiguous copy of x. Other layouts are refused with ValueError (pass x.contiguous()). The gradient
reaching the backward is made contiguous first when it is not. The add_ ops add a residual first
(strata::add_layer_norm / add_rms_norm return the sum; the trailing-underscore forms store it
over the residual and have no autograd).
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from . import _strata

_DEVICE = "cuda" if _strata.backend == "cuda" else "cpu"

__all__ = ["layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm", "add_layer_norm_", "add_rms_norm_", "LayerNorm", "RMSNorm"]


def _stream(t: torch.Tensor) -> int:
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else 0


def _rows(t: torch.Tensor, name: str) -> torch.Tensor:
    if t.dim() == 0:
        raise ValueError(f"strata: {name} is a 0-d tensor; normalization takes rows (the last dimension)")
    try:
        return t.view(math.prod(t.shape[:-1]), t.shape[-1]) if t.dim() != 2 else t
    except RuntimeError as e:
        raise ValueError(f"strata: {name} of shape {tuple(t.shape)} and strides {t.stride()} cannot be viewed as rows without "
                         f"a copy ({e}); pass {name}.contiguous()") from e


def _heads(t: torch.Tensor) -> Optional[torch.Tensor]:
    """t (3-D or more) as [tokens, heads, head_dim] without a copy (the last two dimensions kept,
    the leading ones flattened), or None where no such view exists."""
    if t.dim() < 3:
        return None
    try:
        return t.view(math.prod(t.shape[:-2]), t.shape[-2], t.shape[-1])
    except RuntimeError:
        return None


def _forward(rms: bool, x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    """Normalizes x into a new contiguous tensor: as rows where x's leading dimensions flatten
    without a copy, as per-head rows ([tokens, heads, head_dim], any token and head strides)
    where only the last two keep their strides (a head slice of a fused QKV tensor)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.dim() >= 3:
        try:
            rows = x.view(math.prod(x.shape[:-1]), x.shape[-1])
        except RuntimeError:
            rows = None
        heads = _heads(x) if rows is None else None
        if heads is not None:
            _strata.normalize_heads(rms, heads, out.view(heads.shape), weight, bias, eps, _stream(x))
            return out
    _strata.normalize(rms, _rows(x, "x"), _rows(out, "out"), weight, bias, eps, _stream(x))
    return out


def _saved_rows(x: torch.Tensor) -> torch.Tensor:
    """x as rows for the backward: a contiguous copy where its leading dimensions do not flatten."""
    try:
        return _rows(x, "x")
    except ValueError:
        return _rows(x.contiguous(), "x")


def _check_device(*ts: Optional[torch.Tensor]) -> None:
    for t in ts:
        if t is not None and t.device.type != _DEVICE:
            raise ValueError(f"strata: a tensor is on {t.device}; this build of strata ({_strata.backend} backend) works on {_DEVICE} tensors")


@torch.library.custom_op("strata::layer_norm", mutates_args=(), device_types=_DEVICE)
def _layer_norm(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    return _forward(False, x, weight, bias, eps)


@torch.library.custom_op("strata::rms_norm", mutates_args=(), device_types=_DEVICE)
def _rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    return _forward(True, x, weight, None, eps)


@torch.library.custom_op("strata::layer_norm_backward", mutates_args=(), device_types=_DEVICE)
def _layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor],
                         eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dy = dy.contiguous()
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    features = x.shape[-1]
    dweight = torch.empty(features, dtype=x.dtype, device=x.device)
    dbias = torch.empty(features, dtype=x.dtype, device=x.device)
    _strata.normalize_backward(False, _saved_rows(x), _rows(dy, "dy"), weight, _rows(dx, "dx"), dweight, dbias, eps, _stream(x))
    return dx, dweight, dbias


@torch.library.custom_op("strata::rms_norm_backward", mutates_args=(), device_types=_DEVICE)
def _rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    dy = dy.contiguous()
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    dweight = torch.empty(x.shape[-1], dtype=x.dtype, device=x.device)
    _strata.normalize_backward(True, _saved_rows(x), _rows(dy, "dy"), weight, _rows(dx, "dx"), dweight, None, eps, _stream(x))
    return dx, dweight


def _add_forward(rms: bool, x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                 eps: float, total: torch.Tensor) -> torch.Tensor:
    """y = norm(x + residual), x + residual stored into `total` (a new tensor, or the residual itself)."""
    if residual.shape != x.shape:
        raise ValueError(f"strata: residual has shape {tuple(residual.shape)} and x {tuple(x.shape)}; they must match")
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    r = _rows(residual, "residual")
    _strata.normalize_add(rms, _rows(x, "x"), r, r if total is residual else _rows(total, "sum"), _rows(out, "out"), weight, bias, eps,
                          _stream(x))
    return out


@torch.library.custom_op("strata::add_layer_norm", mutates_args=(), device_types=_DEVICE)
def _add_layer_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                    eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    total = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return _add_forward(False, x, residual, weight, bias, eps, total), total


@torch.library.custom_op("strata::add_rms_norm", mutates_args=(), device_types=_DEVICE)
def _add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    total = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return _add_forward(True, x, residual, weight, None, eps, total), total


@torch.library.custom_op("strata::add_layer_norm_", mutates_args=("residual",), device_types=_DEVICE)
def _add_layer_norm_(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                     eps: float) -> torch.Tensor:
    return _add_forward(False, x, residual, weight, bias, eps, residual)


@torch.library.custom_op("strata::add_rms_norm_", mutates_args=("residual",), device_types=_DEVICE)
def _add_rms_norm_(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    return _add_forward(True, x, residual, weight, None, eps, residual)


@_add_layer_norm.register_fake
def _(x, residual, weight, bias, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(x, memory_format=torch.contiguous_format)


@_add_rms_norm.register_fake
def _(x, residual, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(x, memory_format=torch.contiguous_format)


@_add_layer_norm_.register_fake
def _(x, residual, weight, bias, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_add_rms_norm_.register_fake
def _(x, residual, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_layer_norm.register_fake
def _(x, weight, bias, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_layer_norm_backward.register_fake
def _(dy, x, weight, eps):
    f = x.shape[-1]
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(f), x.new_empty(f)


@_rms_norm_backward.register_fake
def _(dy, x, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(x.shape[-1])


def _layer_setup(ctx, inputs, output):
    x, weight, bias, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps, ctx.has_bias = eps, bias is not None


def _layer_backward(ctx, dy):
    x, weight = ctx.saved_tensors
    dx, dweight, dbias = _layer_norm_backward(dy, x, weight, ctx.eps)
    return dx, dweight if weight is not None else None, dbias if ctx.has_bias else None, None


def _rms_setup(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _rms_backward(ctx, dy):
    x, weight = ctx.saved_tensors
    dx, dweight = _rms_norm_backward(dy, x, weight, ctx.eps)
    return dx, dweight if weight is not None else None, None


def _add_layer_setup(ctx, inputs, output):
    x, residual, weight, bias, eps = inputs
    ctx.save_for_backward(output[1], weight)
    ctx.eps, ctx.has_bias = eps, bias is not None


def _add_layer_backward(ctx, dy, dh):
    h, weight = ctx.saved_tensors
    dx, dweight, dbias = _layer_norm_backward(dy, h, weight, ctx.eps)
    if dh is not None:
        dx = dx + dh
    return dx, dx, dweight if weight is not None else None, dbias if ctx.has_bias else None, None


def _add_rms_setup(ctx, inputs, output):
    x, residual, weight, eps = inputs
    ctx.save_for_backward(output[1], weight)
    ctx.eps = eps


def _add_rms_backward(ctx, dy, dh):
    h, weight = ctx.saved_tensors
    dx, dweight = _rms_norm_backward(dy, h, weight, ctx.eps)
    if dh is not None:
        dx = dx + dh
    return dx, dx, dweight if weight is not None else None, None


_add_layer_norm.register_autograd(_add_layer_backward, setup_context=_add_layer_setup)
_add_rms_norm.register_autograd(_add_rms_backward, setup_context=_add_rms_setup)
_layer_norm.register_autograd(_layer_backward, setup_context=_layer_setup)
_rms_norm.register_autograd(_rms_backward, setup_context=_rms_setup)


def layer_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
               eps: float = 1e-5) -> torch.Tensor:
    """Layer normalization over x's last dimension, as torch.nn.functional.layer_norm(x, (x.shape[-1],),
    weight, bias, eps) computes it (fp32 arithmetic), differentiable in x, weight and bias."""
    _check_device(x, weight, bias)
    return _layer_norm(x, weight, bias, float(eps))


def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: float = 1e-6) -> torch.Tensor:
    """RMS normalization over x's last dimension: x / sqrt(mean(x^2) + eps) * weight, differentiable
    in x and weight."""
    _check_device(x, weight)
    return _rms_norm(x, weight, float(eps))


def add_layer_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
                   eps: float = 1e-5) -> Tuple[torch.Tensor, torch.Tensor]:
    """(layer_norm(x + residual), x + residual) in one pass over the rows, the sum rounded to x's
    dtype as x + residual is; differentiable in x, residual, weight and bias (the backward is
    layer_norm's backward at the sum, plus the sum's own gradient)."""
    _check_device(x, residual, weight, bias)
    return _add_layer_norm(x, residual, weight, bias, float(eps))


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None,
                 eps: float = 1e-6) -> Tuple[torch.Tensor, torch.Tensor]:
    """(rms_norm(x + residual), x + residual) in one pass over the rows; differentiable as
    add_layer_norm is."""
    _check_device(x, residual, weight)
    return _add_rms_norm(x, residual, weight, float(eps))


def add_layer_norm_(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
                    eps: float = 1e-5) -> torch.Tensor:
    """residual += x, then returns layer_norm(residual): the in-place form inference code uses
    (vLLM's fused_add_rms_norm). No autograd (the residual is overwritten): use add_layer_norm to
    train."""
    _check_device(x, residual, weight, bias)
    return _add_layer_norm_(x, residual, weight, bias, float(eps))


def add_rms_norm_(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: float = 1e-6) -> torch.Tensor:
    """residual += x, then returns rms_norm(residual), in place as add_layer_norm_."""
    _check_device(x, residual, weight)
    return _add_rms_norm_(x, residual, weight, float(eps))


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm over the last dimension, computed by strata."""

    def __init__(self, features: int, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.features, self.eps = features, eps
        kw = {"device": device, "dtype": dtype}
        self.weight = torch.nn.Parameter(torch.ones(features, **kw)) if elementwise_affine else None
        self.bias = torch.nn.Parameter(torch.zeros(features, **kw)) if elementwise_affine and bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight, self.bias, self.eps)


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm over the last dimension, computed by strata."""

    def __init__(self, features: int, eps: float = 1e-6, elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.features, self.eps = features, eps
        self.weight = torch.nn.Parameter(torch.ones(features, device=device, dtype=dtype)) if elementwise_affine else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)
