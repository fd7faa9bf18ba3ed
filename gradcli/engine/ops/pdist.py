"""torch.pdist / F.pdist: the p-norm distance of every pair of rows (i < j, in row-major pair order), PyTorch's
_pdist_forward with its node PdistBackward0, and under create_graph the gradient's PdistBackwardBackward0, which
PyTorch cannot differentiate again.

The kernel (ATen's cpu/DistanceOpsKernel.cpp, its AVX2 build) maps |x_i - x_j| by p and reduces each pair with
vec::map2_reduce_all over 8 float (4 double) lanes: lane l sums columns l, l + 8, ... from the first vector on,
a ragged tail adds into the low lanes, then the lanes are combined (float: the halving shuffle tree; double:
left to right); a row shorter than a vector is reduced left to right. The backward walks the pairs in order,
adding each pair's term to row i and taking it from row j, column by column.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, elementary, signatures
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import shape
from gradcli.engine.recording import Op, apply, type_word
from gradcli.engine.tensor import Tensor


def _no_derivative(F, g):
    raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")


def _pdist_grad(F, g, self, p, result):
    """_pdist_backward(grad, self, p, result): under create_graph a node of its own (PdistBackwardBackward0)."""
    arrays = [v._a if v.__class__ is Tensor else v for v in (g, self, result)]
    out = pdist_backward_array(np.ascontiguousarray(arrays[0]), arrays[1], float(p), arrays[2])
    if F.tensors:
        return apply(PDIST_BACKWARD, out, (g, self, result))
    return out


# fmt: off
PDIST          = Op("PdistBackward0",         None, ("self", "p", "result"), (_pdist_grad,), quiet=True,
                    jvp=no_tangent("_pdist_forward"))
PDIST_BACKWARD = Op("PdistBackwardBackward0", None, (), (_no_derivative,) * 3, inputs=("grad", "self", "pdist"),
                    quiet=True, jvp=no_tangent("_pdist_backward"))
# fmt: on


def pdist(*args, **kwargs) -> Tensor:
    """torch.pdist(input, p=2) (F.pdist is the same function)."""
    v = signatures.parsed("torch.pdist", args, kwargs, {"p": 2.0})
    a, p = v["input"], v["p"]
    p = float(p._a.item() if p.__class__ is Tensor else p)
    x = a._a
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if x.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    a = shape.contiguous(a)
    n, m = a._a.shape
    if n > 1 and m > 0 and x.dtype.char in "eE":
        raise NotImplementedError(f"\"pdist\" not implemented for '{type_word(x)}'")
    pairs = n * (n - 1) // 2
    budget.check_tensor((pairs, m), x.itemsize * 3)     # the kernel's per-pair work, laid out at once here
    out = pdist_array(a._a, p) if n > 1 and m > 0 else np.zeros(pairs, x.dtype)
    return apply(PDIST, out, (a,), (p, ))


def _pairs(n: int):
    """(i, j) of every pair i < j, in the result's order."""
    i, j = np.triu_indices(n, 1)
    return i, j


def _lanes(dtype) -> int:
    return 8 if dtype == np.float32 else 4       # AVX2's 256-bit vectors


def _reduce(values: np.ndarray, op, float_tree: bool) -> np.ndarray:
    """map2_reduce_all's reduction of each row of `values` (pairs, m) with `op` (np.add or the max)."""
    m = values.shape[1]
    v = _lanes(values.dtype)
    if m < v:           # vec_reduce_all over the first m lanes, left to right
        acc = values[:, 0]
        for k in range(1, m):
            acc = op(acc, values[:, k])
        return acc
    acc = values[:, :v].copy()
    whole = m - m % v
    for start in range(v, whole, v):
        acc = op(acc, values[:, start:start + v])
    if whole < m:
        acc[:, :m - whole] = op(acc[:, :m - whole], values[:, whole:])
    if float_tree:
        while v > 1:
            v //= 2
            acc = op(acc[:, :v], acc[:, v:2 * v])
        return acc[:, 0]
    out = acc[:, 0]
    for k in range(1, v):
        out = op(out, acc[:, k])
    return out


def _max(a, b):
    """vec::maximum: the larger, NaN if either is."""
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b)).astype(a.dtype)


def pdist_array(x: np.ndarray, p: float) -> np.ndarray:
    t = x.dtype.type
    i, j = _pairs(x.shape[0])
    diff = np.abs(x[i] - x[j])
    tree = x.dtype == np.float32
    if p == 0:
        return _reduce(np.minimum(np.ceil(diff), t(1)), np.add, tree)
    if p == 1:
        return _reduce(diff, np.add, tree)
    if p == 2:
        return np.sqrt(_reduce(diff * diff, np.add, tree))
    if np.isinf(p):
        return _reduce(diff, _max, tree)
    agg = _reduce(elementary.pow(diff, np.full(diff.shape, t(p))), np.add, tree)
    return np.power(agg.astype(np.float64), 1.0 / float(t(p))).astype(x.dtype)


def _sign(v: np.ndarray) -> np.ndarray:
    t = v.dtype.type
    return np.minimum(np.maximum(t(0), np.ceil(v)), t(1)) + np.minimum(np.maximum(t(-1), np.floor(v)), t(0))


def _term(diff: np.ndarray, g: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """Each pair's term of the backward (diff: (pairs, m); g, dist: (pairs, 1))."""
    t = diff.dtype.type
    pv = t(p)
    if p == 1:
        return g * _sign(diff)
    if p == 2:
        return np.where(dist == 0, t(0), g * diff / dist)
    if np.isinf(p):
        return g * _sign(diff) * (t(1) - np.minimum(t(1), np.ceil(np.abs(np.abs(diff) - dist))))
    with np.errstate(divide="ignore", invalid="ignore"):
        if p < 2:
            term = (_sign(diff) * elementary.pow(np.abs(diff), np.full(diff.shape, pv - t(1))) * g
                    / elementary.pow(dist, np.full(dist.shape, pv - t(1))))
        else:
            term = (diff * elementary.pow(np.abs(diff), np.full(diff.shape, pv - t(2))) * g
                    / elementary.pow(dist, np.full(dist.shape, pv - t(1))))
    return np.where(dist == 0, t(0), term)


def pdist_backward_array(g: np.ndarray, x: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    """_pdist_backward's kernel: for i in order, row i gains the terms of its pairs with j = i+1, ... one after
    another, and each row j loses its pair's term."""
    n, m = x.shape
    res = np.zeros(x.shape, x.dtype)
    if p == 0 or n < 2 or m == 0:
        return res
    k = 0
    for i in range(n - 1):
        count = n - 1 - i
        terms = _term(x[i] - x[i + 1:], g[k:k + count, None], dist[k:k + count, None], p)
        row = res[i]
        for r in terms:
            row = row + r
        res[i] = row
        res[i + 1:] -= terms
        k += count
    return res
