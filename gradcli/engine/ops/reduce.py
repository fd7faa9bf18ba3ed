"""Reductions: sum, mean, norm."""

from __future__ import annotations

import numpy as np

from gradcli.engine.recording import Op, Out, record, reduction_dims, saved_input, type_word, version_check
from gradcli.engine.tensor import Tensor


def _expand_back(F, g, shape, dims, keepdim):
    """The gradient of a reduction over `dims`: put the reduced dims back, then broadcast."""
    if not keepdim and dims:
        g = F.unsqueeze_dims(g, dims)
    return F.expand(g, shape)


def _norm_backward(F, g, self, result, dims, keepdim):
    if dims is not None and not keepdim:
        g = F.unsqueeze_dims(g, dims)
        result = F.unsqueeze_dims(result, dims)
    return self * F.masked_zero(g / result, result == 0)


# fmt: off
SUM      = Op("SumBackward0",  False, (lambda F, g, shape: F.expand(g, shape),))
SUM_DIM  = Op("SumBackward1",  False, (_expand_back,))
MEAN     = Op("MeanBackward0", False, (lambda F, g, shape, n: F.expand(g, shape) / n,))
MEAN_DIM = Op("MeanBackward1", False, (lambda F, g, shape, dims, keepdim, n: _expand_back(F, g, shape, dims, keepdim) / n,))
NORM     = Op("LinalgVectorNormBackward0", True, (_norm_backward,))
# fmt: on


def _sum_dtype(a: np.ndarray):
    # PyTorch sums integers and bools as int64
    return np.int64 if a.dtype.kind in "iub" else a.dtype


def reduce_sum(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    x = a._a
    out_dtype = dtype.np if dtype is not None else _sum_dtype(x)
    if dim is None:
        return record(SUM, np.asarray(x.sum(dtype=out_dtype)), (a,), (x.shape,))
    dims = reduction_dims(dim, x.ndim)
    out = np.asarray(x.sum(axis=dims, keepdims=keepdim, dtype=out_dtype))
    return record(SUM_DIM, out, (a,), (x.shape, dims, keepdim))


def mean(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    x = a._a if dtype is None else a._a.astype(dtype.np)
    if x.dtype.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {type_word(x)}")
    if dim is None:
        n = x.size
        out = np.asarray(x.sum(dtype=x.dtype) / x.dtype.type(n) if n else np.nan, dtype=x.dtype)
        return record(MEAN, out, (a,), (x.shape, n))
    dims = reduction_dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    s = x.sum(axis=dims, keepdims=keepdim)
    out = np.asarray(s / x.dtype.type(n) if n else s * np.nan, dtype=x.dtype)
    return record(MEAN_DIM, out, (a,), (x.shape, dims, keepdim, n))


def norm(a: Tensor, p=2, dim=None, keepdim=False) -> Tensor:
    x = a._a
    if x.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {type_word(x)}")
    dims = None if dim is None else (reduction_dims(dim, x.ndim))
    keep = keepdim and dims is not None
    if p == 2 or p == "fro":
        out = np.sqrt(np.sum(x * x, axis=dims, keepdims=keep))
    elif p == 1:
        out = np.sum(np.abs(x), axis=dims, keepdims=keep)
    elif p == float("inf"):
        out = np.max(np.abs(x), axis=dims, keepdims=keep)
    else:
        raise NotImplementedError(f"norm with p={p!r} is not available yet in gradcli")
    out = np.asarray(out, dtype=x.dtype)
    if p != 2 and p != "fro" and a.requires_grad:
        raise NotImplementedError(f"the gradient of norm with p={p!r} is not available yet in gradcli")
    return record(NORM, out, (a,), (saved_input(a, x), Out(out), dims, keep), (version_check(a),))
