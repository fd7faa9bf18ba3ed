"""Elementwise math: logs, roots, masks and logical operators."""

from __future__ import annotations

import numpy as np

from gradcli.engine.recording import Op, Out, compute, floating, operands, record, saved_input, version_check
from gradcli.engine.tensor import Tensor

# fmt: off
LOG         = Op("LogBackward0",        True,  (lambda F, g, self: g / self,))
SQRT        = Op("SqrtBackward0",       True,  (lambda F, g, result: g / (2 * result),))
MASKED_FILL = Op("MaskedFillBackward0", True,  (lambda F, g, mask: F.masked_zero(g, mask),))
# fmt: on


def log(a: Tensor) -> Tensor:
    x = floating(a)
    return record(LOG, np.log(x), (a,), (saved_input(a, x),), (version_check(a),) if a.requires_grad else None)


def sqrt(a: Tensor) -> Tensor:
    out = np.sqrt(floating(a))
    return record(SQRT, out, (a,), (Out(out),))


def masked_fill(a: Tensor, mask, value) -> Tensor:
    if mask.__class__ is not Tensor or mask._a.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{'a non-tensor' if mask.__class__ is not Tensor else mask.dtype}")
    x, m = a._a, mask._a
    fill = value._a if value.__class__ is Tensor else value
    try:
        out = np.where(m, np.asarray(fill, dtype=x.dtype), x)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({x.shape[-1] if x.ndim else 1}) must match the size of "
                           f"tensor b ({m.shape[-1] if m.ndim else 1})") from None
    if out.shape != x.shape:
        raise RuntimeError(f"masked_fill: the mask of shape {list(m.shape)} cannot be broadcast to the tensor "
                           f"of shape {list(x.shape)} in place")
    return record(MASKED_FILL, out, (a,), (Tensor(np.broadcast_to(m, x.shape)),))


def _logical(fn, name):
    def op(a, b):
        x, y = operands(a, b)
        if x.dtype.kind == "f":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{'Float' if x.dtype == np.float32 else 'Double'}'")
        return Tensor(compute(fn, x, y))
    op.__name__ = name
    return op


bitwise_and = _logical(np.bitwise_and, "bitwise_and")
bitwise_or = _logical(np.bitwise_or, "bitwise_or")
bitwise_xor = _logical(np.bitwise_xor, "bitwise_xor")


def bitwise_not(a: Tensor) -> Tensor:
    x = a._a
    if x.dtype.kind == "f":
        raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{'Float' if x.dtype == np.float32 else 'Double'}'")
    return Tensor(np.logical_not(x) if x.dtype == np.bool_ else np.invert(x))
