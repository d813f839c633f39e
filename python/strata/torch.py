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

Tensors: float32, bfloat16 or float16, on the GPU with the CUDA build of strata, in CPU memory with
the host build. Rows are the last dimension; the leading dimensions are flattened as a view (a
tensor whose leading dimensions cannot be flattened without a copy is refused with ValueError:
pass x.contiguous()). The gradient reaching the backward is made contiguous first when it is not.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from . import _strata

_DEVICE = "cuda" if _strata.backend == "cuda" else "cpu"

__all__ = ["layer_norm", "rms_norm", "LayerNorm", "RMSNorm"]


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


def _check_device(*ts: Optional[torch.Tensor]) -> None:
    for t in ts:
        if t is not None and t.device.type != _DEVICE:
            raise ValueError(f"strata: a tensor is on {t.device}; this build of strata ({_strata.backend} backend) works on {_DEVICE} tensors")


@torch.library.custom_op("strata::layer_norm", mutates_args=(), device_types=_DEVICE)
def _layer_norm(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _strata.normalize(False, _rows(x, "x"), _rows(out, "out"), weight, bias, eps, _stream(x))
    return out


@torch.library.custom_op("strata::rms_norm", mutates_args=(), device_types=_DEVICE)
def _rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _strata.normalize(True, _rows(x, "x"), _rows(out, "out"), weight, None, eps, _stream(x))
    return out


@torch.library.custom_op("strata::layer_norm_backward", mutates_args=(), device_types=_DEVICE)
def _layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor],
                         eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dy = dy.contiguous()
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    features = x.shape[-1]
    dweight = torch.empty(features, dtype=x.dtype, device=x.device)
    dbias = torch.empty(features, dtype=x.dtype, device=x.device)
    _strata.normalize_backward(False, _rows(x, "x"), _rows(dy, "dy"), weight, _rows(dx, "dx"), dweight, dbias, eps, _stream(x))
    return dx, dweight, dbias


@torch.library.custom_op("strata::rms_norm_backward", mutates_args=(), device_types=_DEVICE)
def _rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    dy = dy.contiguous()
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    dweight = torch.empty(x.shape[-1], dtype=x.dtype, device=x.device)
    _strata.normalize_backward(True, _rows(x, "x"), _rows(dy, "dy"), weight, _rows(dx, "dx"), dweight, None, eps, _stream(x))
    return dx, dweight


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
