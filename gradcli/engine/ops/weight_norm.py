"""torch._weight_norm and torch.norm_except_dim: w = v * (g / ||v||), the norm taken over every dim but one.

For the first or the last dim PyTorch runs its fused CPU kernel (one node, WeightNormInterfaceBackward0,
saving v, g, the norms and dim); for any other dim, and for dim=-1 (the whole tensor), it composes
`v * (g / norm_except_dim(v, 2, dim))` from recorded ops. The kernel's sums are reproduced in its order:
per row of the first-dim kernel vec::map_reduce_all's lanes over the squares (vecorder.lane_sum); per
column of the last-dim kernel a running fused multiply-add down each thread's range of rows, the threads'
sums then added to 0 in thread order. Its backward computes grad_g = sum(grad_w * v) / norm and
grad_v = fma(-b, v, a * grad_w) with a = g / norm, b = a * grad_g / norm (checked bit for bit against
PyTorch on an AVX2 machine; the lane width is vecorder's).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import ops
from gradcli.engine.ops import reduce
from gradcli.engine.cascade import chunks
from gradcli.engine.forward import no_tangent
from gradcli.engine.recording import Op, apply
from gradcli.engine.rng import _fma32, _fma64
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.engine.vecorder import lane_sum


def norm_except_dim(v, pow=2, dim=0) -> Tensor:
    """The `pow`-norm of v over every dim but `dim`, kept as size-1 dims (dim=-1: of the whole tensor, 0-d),
    composed as PyTorch composes it (views around a norm over one dim)."""
    nd = v._a.ndim
    if dim == -1:
        return reduce.vector_norm(v, pow, None, False, node=reduce.NORM_WHOLE)
    if dim == 0:
        size = [1] * nd
        size[0] = v._a.shape[0]
        return ops.view(_norm_dim(ops.view(ops.contiguous(v), (v._a.shape[0], -1)), pow, 1), tuple(size))
    if dim == nd - 1:
        size = [1] * nd
        size[-1] = v._a.shape[-1]
        return ops.view(_norm_dim(ops.view(ops.contiguous(v), (-1, v._a.shape[-1])), pow, 0), tuple(size))
    return ops.transpose(norm_except_dim(ops.transpose(v, 0, dim), pow, 0), 0, dim)


def _norm_dim(x: Tensor, p, dim: int) -> Tensor:
    """ATen's Tensor::norm(p, dim) (NormBackward1), which C++ calls directly."""
    return reduce.vector_norm(x, p, dim, False, node=reduce.NORM_LEGACY)


def weight_norm(v, g, dim=0) -> Tensor:
    """torch._weight_norm(v, g, dim): the fused kernel's node for the first and last dim, else the
    composition."""
    v = ops.contiguous(v)
    g = ops.contiguous(g)
    nd = v._a.ndim
    if dim != 0 and dim != nd - 1:
        return ops.mul(v, ops.div(g, norm_except_dim(v, 2, dim)))
    x, gx = v._a, g._a
    first = dim == 0
    rows = _rows(x, first)
    if x.size == 0:
        norm = np.zeros(gx.shape, gx.dtype)
        return apply(WEIGHT_NORM, np.empty(x.shape, x.dtype), (v, g), (Tensor(norm), dim))
    gflat = gx.reshape(-1)
    if first:
        norms = np.sqrt(lane_sum(rows * rows))
        out = rows * (gflat / norms)[:, None]
    else:
        norms = np.sqrt(_column_fma_sums(rows, rows))
        out = rows * (gflat / norms)
    return apply(WEIGHT_NORM, out.reshape(x.shape), (v, g), (Tensor(norms.reshape(gx.shape)), dim))


def _rows(x: np.ndarray, first: bool) -> np.ndarray:
    """The kernel's M x N view of v: rows along the first dim, or columns along the last."""
    if first:
        return x.reshape(x.shape[0], -1) if x.ndim else x.reshape(1, 1)
    return x.reshape(-1, x.shape[-1])


def _column_fma_sums(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per column, the last-dim kernels' sum of a * b: each thread's rows fused-multiply-added into its own
    buffer row in order, then the buffers added to 0 in thread order."""
    fma = _fma32 if a.dtype == np.float32 else _fma64
    threads = max(STATE.threads, 1)
    total = np.zeros(a.shape[1], a.dtype)
    for begin, end in chunks(a.shape[0], 1, threads):
        acc = np.zeros(a.shape[1], a.dtype)
        for i in range(begin, end):
            acc = fma(a[i], b[i], acc)
        total = total + acc
    return total


def _backward(which: int):
    """The gradient of input `which` (0: v, 1: g): the CPU kernel's in a plain backward, PyTorch's
    differentiable composition (_weight_norm_differentiable_backward) under create_graph."""
    def formula(F, grad, g, v, norms, dim):
        if F.tensors:
            return _differentiable(grad, v, g, norms, dim)[which]
        first = dim == 0
        gw = _rows(np.ascontiguousarray(grad), first)
        rows = _rows(v, first)
        gflat, nflat = g.reshape(-1), norms.reshape(-1)
        if first:
            sums = lane_sum(gw * rows)
        else:
            sums = _column_fma_sums(gw, rows)
        grad_g = sums / nflat
        if which == 1:
            return grad_g.reshape(g.shape)
        a = gflat / nflat
        b = a * grad_g / nflat
        fma = _fma32 if rows.dtype == np.float32 else _fma64
        if first:
            a, b = a[:, None], b[:, None]
        return fma(-b, rows, a * gw).reshape(v.shape)
    return formula


def _differentiable(grad, v, g, norms, dim):
    """(grad_v, grad_g) from recorded ops, as PyTorch's double-differentiable path composes them."""
    shape = v._a.shape
    bcast = [1] * len(shape)
    if dim == 0:
        bcast[0] = shape[0]
        sums = ops.view(ops.reduce_sum(ops.view(ops.mul(grad, v), (shape[0], -1)), 1), tuple(bcast))
    else:
        bcast[-1] = shape[-1]
        sums = ops.view(ops.reduce_sum(ops.view(ops.mul(grad, v), (-1, shape[-1])), 0), tuple(bcast))
    grad_v = ops.mul(ops.div(g, norms), ops.sub(grad, ops.mul(v, ops.div(sums, ops.mul(norms, norms)))))
    return grad_v, ops.div(sums, norms)


# fmt: off
WEIGHT_NORM = Op("WeightNormInterfaceBackward0", None, ("g", "v", "result1", "dim"), (_backward(0), _backward(1)),
                 inputs=("v", "g"), saves_tensors=True, quiet=True, jvp=no_tangent("_weight_norm_interface"))
# fmt: on
