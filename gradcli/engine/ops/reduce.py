"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, norms, std/var, logsumexp,
cumulative sums and products, all/any, and the torch.return_types pair that max(dim)/min(dim) return."""

from __future__ import annotations

import math
import operator

import numpy as np

from gradcli.display import return_fields_repr
# the package object only: ops/__init__ imports this module before the elementwise ops it finishes with
from gradcli.engine.layout import contiguous
from gradcli.engine import dtypes, elementary, forward, ops, signatures, vecorder
from gradcli.engine.cascade import sum_array
from gradcli.engine.recording import (autocast_policy, TYPE_WORDS, Op, apply, given_dims, int64_arg, needs_grad, reduction_dims, scalar_param,
                                      tensor_int, type_word, wrap_dim)
from gradcli.engine.autograd import Node, OutputGrads, OutputSlot, edge
from gradcli.engine.recording import INFERENCE_SAVED_ERROR, Out
from gradcli.engine.slim import slim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import ALL_DIMS, Tensor


def _expand_back(F, g, shape, dims, keepdim):
    """The gradient of a reduction over `dims`: put the reduced dims back, then broadcast."""
    if not keepdim and dims:
        g = F.unsqueeze_dims(g, dims)
    return F.expand(g, shape)


def _restore(F, g, dims, keepdim, ndim):
    """`unsqueeze_multiple(grad, dims)` when the reduction dropped dims (0-d inputs never do)."""
    return g if keepdim or not ndim or not dims else F.unsqueeze_dims(g, dims)


def _values(t) -> np.ndarray:
    """The numbers of a saved tensor, in a plain backward (an array) or under create_graph (a Tensor):
    for decisions that PyTorch takes on values (is there a zero?), never for recorded math."""
    return t._a if t.__class__ is Tensor else t


# ------------------------------------------------------------------------------------------- formulas

def _evenly_distribute(F, g, self, mask, count, result):
    """max()/min(): the gradient shared evenly between the elements equal to the result. Recorded as PyTorch's
    evenly_distribute_backward does it: zeros.masked_fill_(mask, grad / mask.sum()) (MaskedFillBackward1, with
    DivBackward0 below it)."""
    if F.tensors:
        share = g / Tensor(np.asanyarray(count, dtype=np.int64))
        return ops.masked_fill(Tensor(np.zeros(mask.shape, g._a.dtype)), mask, share)
    return F.masked_zero(F.expand(g / count, mask.shape), ~mask)


def _select_backward(F, g, shape, key, dim, keepdim):
    """max(dim)/min(dim), sort, topk: the gradient goes to the index returned (value_selecting_reduction_backward:
    zeros(shape).scatter(dim, indices, grad), ScatterBackward0 under create_graph=True)."""
    if not shape:
        return g
    return F.scatter_selected(g if keepdim else F.unsqueeze_dims(g, (dim,)), shape, key, dim)


def gather_src_backward(node: str):
    """The src gradient of a scatter (`node`: its node's name), grad.gather(dim, index): of the index's shape,
    which PyTorch's engine refuses for a src of another shape unless it broadcasts to the index's (the
    index then read only a corner of src)."""
    def formula(F, g, dim, index, src_shape):
        picked = F.gather(g, dim, index)
        shape = tuple(index.shape)
        if shape != src_shape:
            if len(src_shape) > len(shape) or not all(s in (n, 1) for s, n in zip(src_shape, shape)):
                raise RuntimeError(f"Function {node} returned an invalid gradient at index 1 - got "
                                   f"[{', '.join(map(str, shape))}] but expected shape compatible with "
                                   f"[{', '.join(map(str, src_shape))}]")
            picked = F.sum_to(picked, src_shape)
        return picked
    return formula


def scatter_self_backward(F, g, dim, index):
    """grad.scatter(dim, index, 0): nothing flows back to the elements the scatter overwrote."""
    return F.scatter_zero(g, dim, index)


def _scatter_jvp(F, ts, xs, result, dim, index, src_shape):
    """self_t.scatter(dim, index, src_t), a missing tangent as zeros (ops.scatter)."""
    return ops.scatter.scatter_tangent(ts, result, dim, index)


# torch.scatter's node (gradcli.engine.ops.scatter), here because the gradient of max(dim)/min(dim), sort and
# topk records it under create_graph=True (scatter_selected below: zeros, a constant, as `self`)
SCATTER = Op("ScatterBackward0", None, ("dim", "index", "src_shape"),
             (lambda F, g, dim, index, src_shape: scatter_self_backward(F, g, dim, index),
              gather_src_backward("ScatterBackward0")),
             inputs=("self", "src"), saves_tensors=True, quiet=True, jvp=_scatter_jvp, versioned=("index",))


def scatter_selected(g: Tensor, shape: tuple, key: tuple, dim: int) -> Tensor:
    """The recorded form of backmath's scatter_selected: g put at `key` in zeros of `shape`, as PyTorch's
    zeros.scatter(dim, indices, g) records it (the zeros are a constant)."""
    out = np.zeros(shape, dtype=g._a.dtype)
    out[key] = g._a
    index = Tensor(np.ascontiguousarray(np.broadcast_to(key[dim], g._a.shape)).astype(np.int64, copy=False))
    return apply(SCATTER, out, (None, g), (dim, index, g._a.shape))


def _amax_backward(F, g, self, mask, counts, dims, keepdim, result):
    """amax/amin: scale_grad_by_count, the gradient split between the tied extremes."""
    return (_restore(F, g, dims, keepdim, mask.ndim) / counts) * mask


def _prod_backward(F, g, self, result):
    if self.ndim == 0:
        return g
    x = _values(self)
    zeros = int(np.count_nonzero(x == 0))
    if zeros == 0:
        return g * (result / self)
    if zeros > 1 and not F.tensors:
        return F.zeros_like(self)
    flat = F.reshape(self, (x.size,))
    return F.reshape(_prod_safe_zeros(F, g, flat, 0), x.shape)


def _prod_dim_backward(F, g, self, result, dim, keepdim):
    if self.ndim == 0:
        return g
    dim %= self.ndim            # the dim as the script gave it (the node shows it so)
    if not keepdim:
        g = F.unsqueeze_dims(g, (dim,))
        result = F.unsqueeze_dims(result, (dim,))
    if not np.any(_values(self) == 0):
        return g * (result / self)
    return _prod_safe_zeros(F, g, self, dim)


def _prod_safe_zeros(F, g, inp, dim):
    """The product of all the other elements along `dim`, as exclusive cumulative products from both ends
    (safe when the input holds zeros)."""
    shape = _values(inp).shape
    n = shape[dim]
    if _values(inp).size == 0:
        return F.expand(g, shape)
    if n == 1:
        return g
    normal = F.cumprod(_cat_one(F, F.narrow(inp, dim, 0, n - 1), dim), dim)
    reverse = F.flip_dims(F.cumprod(_cat_one(F, F.flip_dims(F.narrow(inp, dim, 1, n - 1), (dim,)), dim), dim), (dim,))
    return g * (normal * reverse)


def _cat_one(F, x, dim):
    """cat([ones, x], dim): x shifted one place along `dim`, with ones in front. (The constant added holds -0.0 where
    x goes, which leaves every value of x as it is, a -0.0 too, as cat copies it.)"""
    shape = list(_values(x).shape)
    shape[dim] += 1
    key = tuple(slice(1, None) if i == dim else slice(None) for i in range(len(shape)))
    ones = np.full(shape, -0.0, dtype=_values(x).dtype)
    ones[tuple(slice(0, 1) if i == dim else slice(None) for i in range(len(shape)))] = 1
    return F.scatter(x, tuple(shape), key, "slice") + F.const(ones)


def _norm_backward(F, g, self, result, p, dims, keepdim, mask, counts):
    """linalg_vector_norm_backward, branch by branch in PyTorch's order of operations."""
    p = float(p)                # (saved as given: 2, 2.0, True)
    if not keepdim and self.ndim:
        g = F.unsqueeze_dims(g, dims) if dims else g
        result = F.unsqueeze_dims(result, dims) if dims else result
    if p == 0:
        return None
    if p == 1:
        return F.sgn(self) * g
    if p == 2:
        return g * F.masked_zero(self / result, result == 0)
    if math.isinf(p):
        return F.sgn(self) * ((g / counts) * mask)
    if p < 1:
        scaled = F.sgn(self) * F.masked_zero(F.pow(F.abs(self), p - 1), self == 0)
        return scaled * g * F.pow(result, 1 - p)
    if p < 2:
        scaled = F.sgn(self) * F.pow(F.abs(self), p - 1)
    else:
        scaled = self * F.pow(F.abs(self), p - 2)
    return scaled * F.masked_zero(g / F.pow(result, p - 1), result == 0)


def _dist_self(F, g, self, other, p, result, mask, counts):
    """dist: norm_backward(grad, self - other, p, result)."""
    return _norm_backward(F, g, self - other, result, p, None, False, mask, counts)


def _dist_other(F, g, self, other, p, result, mask, counts):
    """-norm_backward(...): for p = 0 PyTorch's norm_backward gives no tensor, and negating it fails."""
    if p == 0:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument "
                           "#0 'self'")
    return -_norm_backward(F, g, self - other, result, p, None, False, mask, counts)


def _renorm_self(F, g, self, p, dim, maxnorm, norm, mask, counts):
    """renorm_backward: where the slice's norm exceeded maxnorm, maxnorm / norm' * (grad - nb / norm'), nb the
    norm's own gradient of sum(self * grad) over the slice (norm' = norm + 1e-7)."""
    dim %= self.ndim            # (saved as given)
    dims = tuple(d for d in range(self.ndim) if d != dim)
    if F.tensors:               # PyTorch's formula computes the norm from self again: a double backward
        norm = vector_norm(self, p, dims, True, dtypes.float32 if self._a.dtype == np.float16 else dtypes.float64)
    grad_output = F.sum_to(F.cast(self * g, _values(norm).dtype), norm.shape)
    nb = _norm_backward(F, grad_output, self, norm, p, dims, True, mask, counts)
    invnorm = 1 / (norm + 1e-7)
    # the scaled branch in the accumulate type, cast to the gradient's before the where (ToCopyBackward0)
    return F.where(norm > maxnorm, F.cast(F.times(invnorm, maxnorm) * (g - invnorm * nb), _values(g).dtype), g)


def _renorm_jvp(F, t, x, p, dim, maxnorm):
    """renorm_jvp: where the norm (in the forward's type) exceeds maxnorm,
    factor * (t - x * invnorm * norm_jvp), factor = invnorm * maxnorm, invnorm = 1 / (norm + 1e-7)."""
    dim %= x.ndim               # (saved as given)
    dims = tuple(d for d in range(x.ndim) if d != dim)
    norm = vector_norm(x, p, dims, True, dtypes.float32 if x._a.dtype == np.float16 else None)
    invnorm = ops.reciprocal(ops.add(norm, 1e-7))
    nj = _norm_jvp(F, (t,), (x,), norm, p, dims, True, None, None)
    return ops.where(ops.compare(np.greater, norm, maxnorm),
                     ops.mul(ops.mul(invnorm, maxnorm), ops.sub(t, ops.mul(ops.mul(x, invnorm), nj))), t)


def _double_div(a: float, b: float) -> float:
    """a / b with IEEE semantics (C++ double division), where Python would raise."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _var_backward(F, g, self, dims, correction, keepdim):
    correction = 1 if correction is None else correction
    ndim = self.ndim
    if ndim == 0 or dims is None:
        dof = _values(self).size - correction
        if dof <= 0:
            # 2 / dof is infinite: NaN where self equals its mean (inf * 0), inf elsewhere
            x = _values(self)
            return g * F.const(np.where(x == mean_array(x), np.nan, np.inf).astype(x.dtype))
        centred = self - F.mean(self)       # (PyTorch's C++ product evaluates its right side first)
        return (2.0 / dof) * g * centred
    if not keepdim and ndim > 1:
        g = F.unsqueeze_dims(g, dims)
    shape = _values(self).shape
    rnumel = math.prod(shape[d] for d in dims)
    centred = self - F.mean(self, dims, True)
    return _double_div(2.0, rnumel - correction) * g * centred


def _std_backward(F, g, self, result, dims, correction, keepdim):
    grad_var = F.masked_zero(g / (result * 2), result == 0)
    return _var_backward(F, grad_var, self, dims, correction, keepdim)


def _logsumexp_backward(F, g, self, result, dims, keepdim):
    if not keepdim and self.ndim:
        g = F.unsqueeze_dims(g, dims)
        result = F.unsqueeze_dims(result, dims)
    return g * F.exp_rounded(self - result)


def _cumsum_backward(F, g, dim, size):
    if size <= 1 or _values(g).shape[dim] == 1:
        return g
    dim %= _values(g).ndim      # the dim as the script gave it (the node shows it so)
    return F.flip_dims(F.cumsum(F.flip_dims(g, (dim,)), dim), (dim,))


def _cumprod_backward(F, g, self, result, dim):
    x = _values(self)
    if x.size <= 1 or x.shape[dim] == 1:
        return g
    dim %= x.ndim               # the dim as the script gave it (the node shows it so)
    w = result * g
    zero = x == 0
    if not zero.any():
        return F.flip_dims(F.cumsum(F.flip_dims(w, (dim,)), dim), (dim,)) / self
    if F.tensors:
        return _cumprod_backward_graph(F, g, self, dim)
    return _cumprod_backward_zeros(g, x, result, w, zero, dim)


def _cumprod_backward_graph(F, g, self, dim):
    """Under create_graph with zeros in the input (PyTorch's O(n^2) branch): dy_j/dx_k is the product of
    x_i for i <= j, i != k, one k at a time."""
    x = _values(self)
    n = x.shape[dim]
    total = None
    for k in range(n):
        at_k = np.zeros(x.shape, dtype=x.dtype)
        at_k[(slice(None),) * dim + (k,)] = 1
        from_k = np.zeros(x.shape, dtype=x.dtype)
        from_k[(slice(None),) * dim + (slice(k, None),)] = 1
        omitted = F.cumprod(self * F.const(1 - at_k) + F.const(at_k), dim)
        term = F.sum_dims(g * omitted * F.const(from_k), (dim,), True) * F.const(at_k)
        total = term if total is None else total + term
    return total


def _cumprod_backward_zeros(g, x, out, w, zero, dim):
    """PyTorch's O(n) mask gymnastics for slices holding zeros (plain backward only)."""
    grad_input = np.zeros(x.shape, dtype=g.dtype)
    count = np.cumsum(zero, axis=dim)
    mask = count == 0                                   # before the first zero
    with np.errstate(divide="ignore", invalid="ignore"):     # the zeros' own quotients are masked out
        before = _flip_cumsum(np.where(mask, w, w.dtype.type(0)), dim) / x
    grad_input[mask] = before[mask]
    mask = count == 1                                   # from the first zero to the second
    first = np.argmax(mask, axis=dim)
    first_keep = np.expand_dims(first, dim)
    first_mask = np.zeros(x.shape, dtype=bool)
    np.put_along_axis(first_mask, first_keep, True, axis=dim)
    first_mask &= mask
    mask &= ~first_mask
    prods = cumprod_array(np.where(mask, x, x.dtype.type(1)), dim)
    value = (prods * np.where(count != 1, g.dtype.type(0), g)).sum(axis=dim, keepdims=True, dtype=g.dtype)
    before_zero = np.take_along_axis(out, np.maximum(first_keep - 1, 0), axis=dim)
    value = value * np.where(first_keep == 0, out.dtype.type(1), before_zero)
    grad_input[first_mask] = np.broadcast_to(value, x.shape)[first_mask]
    return grad_input


# Forward-mode columns (gradcli.engine.forward): (F, tangents, inputs, result, *args) -> the result's tangent,
# PyTorch's derivatives.yaml `result:` formulas step for step. Masks and counts, which carry no gradient,
# are constants; every step on a primal or the result is a recorded op, so a tangent of a primal that
# requires grad has PyTorch's grad_fn.

def _dtype_of(result, t, x=None):
    """The op's dtype= (PyTorch passes it to auto_linear): the result's dtype where the op made it another than its
    input's (`sum(dtype=torch.float64)` of a float32 tensor), else none, so a tangent of another dtype than its
    primal (a float64 tangent of a float32 tensor) keeps its own, as PyTorch's tangent sum does."""
    if result._a.dtype == t._a.dtype or (x is not None and result._a.dtype == x._a.dtype):
        return None
    return dtypes.of_array(result._a)


def _keep_dims(dims):
    """`dim.value_or({})` as a reduction's dims: () is every dim."""
    return () if dims is None else dims


def _sum_jvp(F, ts, xs, result, shape):
    return reduce_sum(ts[0], dtype=_dtype_of(result, ts[0], xs[0]))


def _sum_dim_jvp(F, ts, xs, result, shape, dims, keepdim):
    return reduce_sum(ts[0], dims, keepdim, _dtype_of(result, ts[0], xs[0]))


def _mean_jvp(F, ts, xs, result, shape, n):
    return mean(ts[0], dtype=_dtype_of(result, ts[0], xs[0]))


def _mean_dim_jvp(F, ts, xs, result, shape, dims, keepdim, n):
    return mean(ts[0], dims, keepdim, _dtype_of(result, ts[0], xs[0]))


def _as_result(x, result):
    """self_p.to(result.scalar_type())."""
    return x if x._a.dtype == result._a.dtype else ops.to_dtype(x, dtypes.of_array(result._a))


def _ones_like_result(result):
    """at::ones({}, result.options()).expand_as(result)."""
    return ops.expand(Tensor(np.ones((), dtype=result._a.dtype)), result._a.shape)


def _prod_jvp(F, ts, xs, result):
    """(prod_backward(ones, self_p, result) * self_t).sum()."""
    return reduce_sum(_prod_backward(F, _ones_like_result(result), _as_result(xs[0], result), result) * ts[0])


def _prod_dim_jvp(F, ts, xs, result, dim, keepdim):
    grad = _prod_dim_backward(F, _ones_like_result(result), _as_result(xs[0], result), result, dim, keepdim)
    return reduce_sum(grad * ts[0], dim, keepdim)


def _evenly_read_jvp(F, ts, xs, result, *_):
    """max()/min(): the tangent averaged over the elements equal to the result."""
    mask = xs[0]._a == result._a
    count = Tensor(np.asanyarray(np.count_nonzero(mask), dtype=np.int64))
    return reduce_sum(Tensor(mask) * (ts[0] / count))


def _gather_kept_jvp(F, ts, xs, result, shape, key, dim, keepdim):
    """max(dim)/min(dim): the tangent at the index returned (gather_with_keepdimed_indices)."""
    if not shape:
        return ts[0]
    out = ops.gather(ts[0], dim, Tensor(key[dim]))
    return out if keepdim else ops.squeeze(out, dim)


def _amax_jvp(F, ts, xs, result, mask, counts, dims, keepdim):
    """amax/amin: where(mask, self_t, 0.).sum(dim, keepdim) / mask.sum(dim, keepdim)."""
    x = xs[0]._a
    kept = result._a if keepdim or not x.ndim else np.expand_dims(result._a, dims)
    hit = x == kept
    count = Tensor(hit.sum(axis=dims, keepdims=keepdim) if x.ndim else np.asanyarray(hit, dtype=np.int64))
    return reduce_sum(ops.where(Tensor(hit), ts[0], 0.), dims, keepdim) / count


def _norm_jvp(F, ts, xs, result, p, dims, keepdim, mask, counts):
    """linalg_vector_norm_jvp (norm_jvp), branch by branch."""
    p = float(p)                # (saved as given: 2, 2.0, True)
    x, t = xs[0], ts[0]
    dim = _keep_dims(dims)
    if p == 0:
        return F.zeros_like(result)
    if p == 1:
        return reduce_sum(ops.sgn(x) * t, dim, keepdim)
    if p == 2:
        part = reduce_sum(x * t, dim, keepdim)
        out = part / result
        if out._a.dtype != part._a.dtype:       # PyTorch divides in place (div_): the sum's dtype stays
            out = ops.to_dtype(out, dtypes.of_array(part._a))
        return ops.masked_fill(out, Tensor(result._a == 0), 0)
    if math.isinf(p):
        norm = result
        if not keepdim and x.ndim and dims:
            norm = F.unsqueeze_dims(result, dims)
        a, n = np.abs(x._a), norm._a
        is_max = ((a == n) | (np.isnan(x._a) & np.isnan(n))).astype(n.dtype)
        nb = np.asanyarray(np.count_nonzero(is_max, axis=dims if dims else None), dtype=np.int64)
        if x.ndim and dims:
            nb = np.expand_dims(nb, dims)
        return reduce_sum(ops.sgn(x) * t * Tensor(is_max) / Tensor(nb), dim, keepdim)
    zero = Tensor(result._a == 0)
    if p < 1:
        scaled = ops.masked_fill(ops.power(ops.abs(x), p - 1), Tensor(x._a == 0), 0)
        return reduce_sum(scaled * (ops.sgn(x) * t), dim, keepdim) * ops.power(result, 1 - p)
    if p < 2:
        part = reduce_sum(ops.power(ops.abs(x), p - 1) * (ops.sgn(x) * t), dim, keepdim)
    else:
        part = reduce_sum(ops.power(ops.abs(x), p - 2) * (x * t), dim, keepdim)
    return ops.masked_fill(part / ops.power(result, p - 1), zero, 0)


def _var_jvp(F, ts, xs, result, dims, correction, keepdim):
    """var: var_backward(self_t, self_p, dim, correction, keepdim=True).sum(dim, keepdim)."""
    x = xs[0]
    return reduce_sum(_var_backward(F, ts[0], x, dims, correction, True), _keep_dims(dims), keepdim)


def _std_jvp(F, ts, xs, result, dims, correction, keepdim):
    """std: var's tangent over 2 * result, zero where the result is."""
    out = _var_jvp(F, ts, xs, result, dims, correction, keepdim) / (2. * result)
    return ops.masked_fill(out, Tensor(result._a == 0), 0)


def _logsumexp_jvp(F, ts, xs, result, dims, keepdim):
    """logsumexp: sum(exp(self_p - amax) * self_t) / sum(exp(self_p - amax)) (the exp-normalize trick)."""
    x = xs[0]
    if x._a.dtype != result._a.dtype:
        x = _as_result(x, result)
    shifted = x - amax(x, dims, True) if x._a.size else x
    e = apply(ops.arith.EXP, elementary.exp(shifted._a), (shifted,))
    total = reduce_sum(e, dims, keepdim)
    product = e * ts[0]
    if product._a.dtype != e._a.dtype:      # (`self_p_exp *= self_t`: in place, so in the primal's dtype)
        product = ops.to_dtype(product, dtypes.of_array(e._a))
    return reduce_sum(product, dims, keepdim) / total


def _cumsum_jvp(F, ts, xs, result, dim, size):
    return cumsum(ts[0], dim, _dtype_of(result, ts[0], xs[0]))


def _cumprod_jvp(F, ts, xs, result, dim):
    """cumprod_jvp: cumsum(self_t / self_p) * result, and past each slice's first zero, the cumulative
    product with that zero's tangent in its place."""
    t, x = ts[0], xs[0]
    gradient = cumsum(t / x, dim) * result
    zeros = x._a == 0
    if x._a.ndim == 0:
        out = ops.where(Tensor(zeros), t, gradient)
    else:
        first = zeros & (np.cumsum(zeros, axis=dim) == 1)
        new_grad = cumprod(ops.where(Tensor(first), t, x), dim)
        out = ops.where(Tensor(np.cumsum(first, axis=dim) != 0), new_grad, gradient)
    return _as_result(out, result)


# Formulas receive (F, g, *saved), the saved values in the row's `saves` order (see recording.Op). Rows
# that take a dtype= fit each gradient back to the input's dtype (`fits`).
# fmt: off
#              node                         forward  saves
SUM       = Op("SumBackward0",              None,    ("shape",),
               (lambda F, g, shape: F.expand(g, shape),), fits="dtype", jvp=_sum_jvp)
SUM_DIM   = Op("SumBackward1",              None,    ("shape", "dims", "keepdim"),
               (_expand_back,), fits="dtype", jvp=_sum_dim_jvp)
MEAN      = Op("MeanBackward0",             None,    ("shape", "n"),
               (lambda F, g, shape, n: F.expand(g, shape) / n,), fits="dtype", jvp=_mean_jvp)
MEAN_DIM  = Op("MeanBackward1",             None,    ("shape", "dims", "keepdim", "n"),
               (lambda F, g, shape, dims, keepdim, n: _expand_back(F, g, shape, dims, keepdim) / n,), fits="dtype",
               jvp=_mean_dim_jvp)
PROD      = Op("ProdBackward0",             None,    ("self", "result"),
               (_prod_backward,), fits="dtype", quiet=True, jvp=_prod_jvp)
PROD_DIM  = Op("ProdBackward1",             None,    ("self", "result", "dim", "keepdim"),
               (_prod_dim_backward,), fits="dtype", quiet=True, jvp=_prod_dim_jvp)
MAX       = Op("MaxBackward1",              None,    ("self", "mask", "count", "result"),
               (_evenly_distribute,), quiet=True, jvp=_evenly_read_jvp)
MIN       = Op("MinBackward1",              None,    ("self", "mask", "count", "result"),
               (_evenly_distribute,), quiet=True, jvp=_evenly_read_jvp)
MAX_DIM   = Op("MaxBackward0",              None,    ("shape", "key", "dim", "keepdim"),
               (_select_backward,), saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
MIN_DIM   = Op("MinBackward0",              None,    ("shape", "key", "dim", "keepdim"),
               (_select_backward,), saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
AMAX      = Op("AmaxBackward0",             None,    ("self", "mask", "counts", "dims", "keepdim", "result"),
               (_amax_backward,), quiet=True, jvp=_amax_jvp)
AMIN      = Op("AminBackward0",             None,    ("self", "mask", "counts", "dims", "keepdim", "result"),
               (_amax_backward,), quiet=True, jvp=_amax_jvp)
NORM      = Op("LinalgVectorNormBackward0", None,    ("self", "result", "p", "dims", "keepdim", "mask", "counts"),
               (_norm_backward,), fits="dtype", quiet=True, jvp=_norm_jvp)
# C++'s at::norm(self, p, dim, keepdim) (pairwise_distance's) and at::norm(self, p) (norm_except_dim's with dim -1):
# the same kernel and formula, nodes of their own
NORM_LEGACY = Op("NormBackward1",           None,    ("self", "result", "p", "dims", "keepdim", "mask", "counts"),
               (_norm_backward,), fits="dtype", quiet=True, jvp=_norm_jvp)
NORM_WHOLE = Op("NormBackward0",            None,    ("self", "result", "p", "dims", "keepdim", "mask", "counts"),
               (_norm_backward,), fits="dtype", quiet=True, jvp=_norm_jvp)
DIST      = Op("DistBackward0",             None,    ("self", "other", "p", "result", "mask", "counts"),
               (_dist_self, _dist_other), fits=True, saves_tensors=True, quiet=True,
               jvp=lambda F, ts, xs, result, p, mask, counts: _norm_jvp(
                   F, (forward.sub_tangents(ts[0], ts[1]),), (xs[0] - xs[1],), result, p, None, False, mask,
                   counts))
RENORM    = Op("RenormBackward0",           None,    ("self", "p", "dim", "maxnorm", "norm", "mask", "counts"),
               (_renorm_self,), fits="dtype", saves_tensors=True, quiet=True,
               jvp=lambda F, ts, xs, result, p, dim, maxnorm, norm, mask, counts: _renorm_jvp(
                   F, ts[0], xs[0], p, dim, maxnorm))
STD       = Op("StdBackward0",              None,    ("self", "result", "dims", "correction", "keepdim"),
               (_std_backward,), quiet=True, jvp=_std_jvp)
VAR       = Op("VarBackward0",              None,    ("self", "dims", "correction", "keepdim"),
               (_var_backward,), quiet=True, jvp=_var_jvp)
LOGSUMEXP = Op("LogsumexpBackward0",        None,    ("self", "result", "dims", "keepdim"),
               (_logsumexp_backward,), quiet=True, jvp=_logsumexp_jvp)
CUMSUM    = Op("CumsumBackward0",           None,    ("dim", "size"),
               (_cumsum_backward,), fits="dtype", jvp=_cumsum_jvp)
CUMPROD   = Op("CumprodBackward0",          None,    ("self", "result", "dim"),
               (_cumprod_backward,), fits="dtype", quiet=True, jvp=_cumprod_jvp)
# fmt: on


# ----------------------------------------------------------------------------------------- helpers

_REQUIRED = object()


def _plain(a: Tensor) -> bool:
    """Neither a node nor a tangent to give the result: forwards that compute masks or keys only for
    those skip them (a meta tensor's result goes through apply, which puts it on the meta device)."""
    return not needs_grad(a) and (STATE.fw_level is None or not forward.is_dual(a)) and a._a.__class__ is np.ndarray


def _require_dim(dim, fn: str):
    if dim is _REQUIRED:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')


def _sum_dtype(a: np.ndarray):
    # PyTorch sums integers and bools as int64
    return np.int64 if a.dtype.kind in "iub" else a.dtype


def _reduce_dims(dim, ndim: int) -> tuple:
    """The dims of a `dim=` that may be None or empty, both meaning every dim (sum, mean, amax, ...)."""
    if dim is None:
        return tuple(range(ndim))
    dims = reduction_dims(dim, ndim)
    return dims if dims or not isinstance(dim, (tuple, list)) else tuple(range(ndim))


def _int_dim(dim, fn: str, position: int = 1) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        value = tensor_int(dim)
        if value is not None:
            return value
        raise TypeError(f"{fn}(): argument 'dim' (position {position}) must be int, not {type(dim).__name__}")
    return dim


def _cum_array(fn, x: np.ndarray, axis: int) -> np.ndarray:
    """A cumulative sum or product as PyTorch's CPU kernel runs it: accumulated in double for
    float32/float16/bfloat16 (acc_type), each partial result rounded to the tensor's dtype."""
    if x.dtype == np.float32 or x.dtype.char in "eE":          # (bfloat16 as float16)
        return fn(x.astype(np.float64), axis=axis).astype(x.dtype)
    return fn(x, axis=axis, dtype=x.dtype)


def cumsum_array(x, axis):
    """(cumsum and cumprod write a contiguous result, whatever the input's layout). PyTorch's running sum
    starts from 0, so a prefix of negative zeros sums to 0, where numpy's starts from the first element: adding
    0 makes the same change (-0 + 0 is 0) and leaves every other value as it is."""
    out = _cum_array(np.cumsum, x, axis)
    if out.dtype.kind in "fV":
        out += 0.0
    return contiguous(out)


def cumprod_array(x, axis):
    return contiguous(_cum_array(np.cumprod, x, axis))


def _flip_cumsum(x, axis):
    return np.flip(cumsum_array(np.flip(x, axis), axis), axis)


def _float_result(x: np.ndarray, fn: str) -> np.ndarray:
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    return x


# ------------------------------------------------------------------------------------------ sum, mean

def _check_keepdim(fn: str, keepdim) -> None:
    """PyTorch takes only a bool for keepdim (its parser's message is made in signatures.py)."""
    if keepdim.__class__ is not bool:
        raise TypeError(f"{fn}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")


def reduce_sum(a: Tensor, dim=ALL_DIMS, keepdim=False, dtype=None) -> Tensor:
    """sum(): over everything without a dim (SumBackward0), over the dims given otherwise, `dim=None`
    included (PyTorch's dim overload: SumBackward1)."""
    if keepdim is not False:
        _check_keepdim("sum", keepdim)
    x = a._a
    out_dtype = dtype.np if dtype is not None else _sum_dtype(x)
    if dim is ALL_DIMS:
        if not keepdim:
            return apply(SUM, sum_array(x, None, False, out_dtype), (a,), (x.shape,))
        dim = None
    dims = _reduce_dims(dim, x.ndim)
    out = sum_array(x, dims, keepdim, out_dtype)
    return apply(SUM_DIM, out, (a,), (x.shape, given_dims(dims, dim), keepdim))


def mean(a: Tensor, dim=ALL_DIMS, keepdim=False, dtype=None) -> Tensor:
    if keepdim is not False:
        _check_keepdim("mean", keepdim)
    x = a._a if dtype is None else a._a.astype(dtype.np)
    if x.dtype.kind not in "fcV":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {type_word(x)}")
    if dim is ALL_DIMS:
        if not keepdim:
            return apply(MEAN, mean_array(x), (a,), (x.shape, x.size))
        dim = None
    dims = _reduce_dims(dim, x.ndim)
    n = math.prod(x.shape[d] for d in dims)
    return apply(MEAN_DIM, mean_array(x, dims, keepdim), (a,), (x.shape, given_dims(dims, dim), keepdim, n))


def mean_array(x: np.ndarray, dims=None, keepdim=False) -> np.ndarray:
    """The mean of a float array over `dims` (None: all of it) as PyTorch's CPU kernel makes it: the sum in
    its order, divided by the count in the array's dtype; NaN when the count is zero. The backward formulas
    of std/var recompute it with this too."""
    if x.dtype.char in "eE":
        # mean_out's half (and bfloat16) path: a float sum of the input cast to float, divided in float, then
        # cast back
        wide = mean_array(x.astype(np.float32, order="K"), dims, keepdim)
        return wide.astype(x.dtype)
    if dims is None:
        return np.asanyarray(sum_array(x) / x.dtype.type(x.size) if x.size else np.nan, dtype=x.dtype)
    dims = dims or tuple(range(x.ndim))         # mean(dim=[]) is over everything, as in PyTorch
    n = math.prod(x.shape[d] for d in dims)
    s = sum_array(x, dims, keepdim)
    return np.asanyarray(s / x.dtype.type(n) if n else s * np.nan, dtype=x.dtype)


# ------------------------------------------------------------------------------------------------ prod

@autocast_policy("fp32")
def prod(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    _check_keepdim("prod", keepdim)
    x = a._a
    if dtype is not None:
        x = x.astype(dtype.np)
    elif x.dtype.kind in "iub":
        x = x.astype(np.int64)
    if dim is None:
        out = np.asanyarray(_prod_array(x, tuple(range(x.ndim)), False))
        return apply(PROD, out, (a,), (), (x,))
    given = _int_dim(dim, "prod")
    d = wrap_dim(given, x.ndim)
    out = np.asanyarray(_prod_array(x, (d,) if x.ndim else (), keepdim and x.ndim > 0))
    return apply(PROD_DIM, out, (a,), (given, keepdim), (x,))


def _prod_array(x: np.ndarray, axis: tuple, keepdim: bool) -> np.ndarray:
    """The product over `axis`, float32/float64 in PyTorch's kernel order (vecorder.product_rows)."""
    if x.dtype.kind not in "fV" or x.dtype.itemsize < 4 or not x.size or not axis:
        return np.prod(x, axis=axis or None, keepdims=keepdim, dtype=x.dtype)
    if len(axis) == x.ndim:
        out = np.asanyarray(vecorder.product_all(x))
    else:
        rows, lastdim = vecorder.reduced_rows(x, axis)
        out = vecorder.product_rows(rows, lastdim)
    return out.reshape(tuple(1 if d in axis else n for d, n in enumerate(x.shape)) if keepdim else tuple(
        n for d, n in enumerate(x.shape) if d not in axis))


# ------------------------------------------------------------------------------------------- max, min

class ReturnTypes(tuple):
    """torch.return_types.<name>: the (values, indices) pair of max(dim), min(dim), sort, topk, ..., and the
    named results of the linear algebra functions (slogdet's sign and logabsdet, ...).

    A tuple, so it unpacks, indexes and has a length; its fields read by name; it prints as PyTorch prints it.
    """

    def __new__(cls, name: str, *items: Tensor):
        result = tuple.__new__(RETURN_KINDS[name], items)
        result.name = name
        return result

    def __repr__(self) -> str:
        return return_fields_repr(self.name, RETURN_FIELDS[self.name], tuple(repr(t) for t in self))

    __str__ = __repr__


RETURN_FIELDS = {"max": ("values", "indices"), "min": ("values", "indices"), "sort": ("values", "indices"),
                 "topk": ("values", "indices"), "linalg_slogdet": ("sign", "logabsdet"),
                 "slogdet": ("sign", "logabsdet"), "linalg_svd": ("U", "S", "Vh"), "svd": ("U", "S", "V"),
                 "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_qr": ("Q", "R"), "qr": ("Q", "R"),
                 **{name: ("values", "indices") for name in ("median", "nanmedian", "kthvalue", "mode", "cummax",
                                                             "cummin")},
                 "aminmax": ("min", "max"), "linalg_lu_factor": ("LU", "pivots"),
                 "linalg_lu_factor_ex": ("LU", "pivots", "info"), "linalg_ldl_factor": ("LD", "pivots"),
                 "linalg_ldl_factor_ex": ("LD", "pivots", "info"), "_lu_with_info": ("LU", "pivots", "info"),
                 "linalg_lu": ("P", "L", "U"), "lu_unpack": ("P", "L", "U"), "linalg_solve_ex": ("result", "info"),
                 "linalg_inv_ex": ("inverse", "info"), "linalg_cholesky_ex": ("L", "info"),
                 "triangular_solve": ("solution", "cloned_coefficient"), "geqrf": ("a", "tau"),
                 "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
                 "frexp": ("mantissa", "exponent"), "histogram": ("hist", "bin_edges"),
                 "histogramdd": ("hist", "bin_edges")}


def out_return(result, outs: tuple):
    """What a call with out=(a, b, ...) returns: the out tensors as torch.return_types.<name>_out, the kind
    PyTorch gives the out= overload (its fields those of the result's kind); a plain tuple for a plain one."""
    name = getattr(result, "name", None)
    return tuple(outs) if name is None else ReturnTypes(name + "_out", *outs)


def _return_kind(name: str, fields: tuple) -> type:
    return type(f"torch.return_types.{name}", (ReturnTypes,),
                {"__module__": "torch.return_types", "__qualname__": name,
                 **{field: property(operator.itemgetter(i)) for i, field in enumerate(fields)}})


# One class per kind, named as PyTorch's structseq types are, so that CPython's own messages name it as
# PyTorch's do ("unsupported operand type(s) for -: 'Tensor' and 'torch.return_types.max'")
RETURN_FIELDS.update({name + "_out": fields for name, fields in RETURN_FIELDS.items()})   # out= calls' kinds
RETURN_KINDS = {name: _return_kind(name, fields) for name, fields in RETURN_FIELDS.items()}


def reduce_max(a: Tensor, dim=None, keepdim=False, *, other=None):
    """Tensor.max / torch.max: the largest element, max along a dim (values and indices), or maximum(a, b)."""
    return _extreme(a, dim, keepdim, other, "max")


def reduce_min(a: Tensor, dim=None, keepdim=False, *, other=None):
    return _extreme(a, dim, keepdim, other, "min")


def _extreme(a: Tensor, dim, keepdim, other, name: str):
    _check_keepdim(name, keepdim)
    if other is not None or dim.__class__ is Tensor:
        b = other if other is not None else dim
        return ops.maximum(a, b) if name == "max" else ops.minimum(a, b)
    x = a._a
    largest = name == "max"
    if x.dtype.kind == "c":         # (numpy would order complex values; PyTorch refuses them)
        from gradcli.engine.ops import complexops
        raise complexops.refusal(name if dim is None else name + "_dim", x.dtype)
    if dim is None:
        if x.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        out = np.asanyarray(x.max() if largest else x.min())
        if _plain(a):
            return Tensor(out)      # no node: the mask is not worth computing
        mask = np.isnan(x) if np.isnan(out) else x == out
        return apply(MAX if largest else MIN, out, (a,), (Tensor(mask), int(np.count_nonzero(mask))))
    given = _int_dim(dim, name)
    d = wrap_dim(given, x.ndim)
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if x.ndim == 0:
        values, idx = x.copy(), np.zeros((), dtype=np.int64)
    else:
        idx = np.expand_dims((np.argmax if largest else np.argmin)(x, axis=d), d)
        values = np.take_along_axis(x, idx, axis=d)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
    indices = Tensor(idx.astype(np.int64, copy=False))
    if _plain(a):
        return ReturnTypes(name, Tensor(values), indices)     # no node: the key is not worth computing
    key = _index_key(x.shape, d, idx if keepdim else np.expand_dims(idx, d)) if x.ndim else ()
    row = MAX_DIM if largest else MIN_DIM
    # the node keeps dim as given (PyTorch's _saved_dim), negative or not
    return ReturnTypes(name, apply(row, values, (a,), (x.shape, key, given, keepdim)), indices)


def _index_key(shape: tuple, dim: int, idx: np.ndarray) -> tuple:
    """An advanced-indexing key that addresses, in an array of `shape`, the element `idx` (keepdim shaped)
    picks along `dim`."""
    key = []
    for i, n in enumerate(shape):
        if i == dim:
            key.append(idx)
        else:
            key.append(np.arange(n).reshape(tuple(n if j == i else 1 for j in range(len(shape)))))
    return tuple(key)


def amax(a: Tensor, dim=(), keepdim=False) -> Tensor:
    return _amax(a, dim, keepdim, True)


def amin(a: Tensor, dim=(), keepdim=False) -> Tensor:
    return _amax(a, dim, keepdim, False)


def _amax(a: Tensor, dim, keepdim, largest: bool) -> Tensor:
    _check_keepdim("amax" if largest else "amin", keepdim)
    x = a._a
    name = "amax" if largest else "amin"
    dims = _reduce_dims(dim, x.ndim)
    empty = [d for d in dims if x.shape[d] == 0]
    if empty and (dim is None or isinstance(dim, (tuple, list)) and not dim):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if empty:       # the dim as the script gave it (PyTorch names it unwrapped)
        given = next((d for d in (dim if isinstance(dim, (tuple, list)) else (dim,))
                      if d.__class__ is int and d % max(x.ndim, 1) == empty[0]), empty[0])
        raise IndexError(f"{name}(): Expected reduction dim {given} to have non-zero size.")
    fn = np.max if largest else np.min
    out = contiguous(fn(x, axis=dims, keepdims=keepdim)) if x.ndim else x.copy()
    if _plain(a):
        return Tensor(out)      # no node: the mask is not worth computing
    kept = out if keepdim or not x.ndim else np.expand_dims(out, dims)
    mask = (x == kept).astype(x.dtype)
    counts = mask.sum(axis=dims, keepdims=True) if x.ndim else mask
    return apply(AMAX if largest else AMIN, out, (a,), (Tensor(mask), Tensor(counts), given_dims(dims, dim), keepdim))


def argmax(a: Tensor, dim=None, keepdim=False) -> Tensor:
    return _arg(a, dim, keepdim, True)


def argmin(a: Tensor, dim=None, keepdim=False) -> Tensor:
    return _arg(a, dim, keepdim, False)


def _arg(a: Tensor, dim, keepdim, largest: bool) -> Tensor:
    _check_keepdim("argmax" if largest else "argmin", keepdim)
    x = a._a
    if x.dtype.kind == "c":
        raise RuntimeError(f"{'argmax' if largest else 'argmin'}(): does not support complex input")
    name = "argmax" if largest else "argmin"
    if x.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    fn = np.argmax if largest else np.argmin
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        out = np.asanyarray(fn(x), dtype=np.int64)
        return Tensor(out.reshape((1,) * x.ndim) if keepdim else out)
    d = wrap_dim(_int_dim(dim, name), x.ndim)
    if x.ndim == 0:
        return Tensor(np.zeros((), dtype=np.int64))
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return Tensor(np.asanyarray(fn(x, axis=d, keepdims=keepdim), dtype=np.int64))


# ------------------------------------------------------------------------------------------------ norms

def norm(a: Tensor, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:
    """torch.norm / Tensor.norm: a vector norm, except 'nuc' (and 'fro' over more than two dims). PyTorch's
    torch.norm passes an int dim on as a list of one, and any dim positionally."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(a, 2, dim, keepdim, dtype)
        return _matrix_norm(a, p, dim, keepdim)
    scalar_param(p)
    return vector_norm(a, 2.0 if p is None else p, dim, keepdim, dtype)


def vector_norm(a: Tensor, ord=2, dim=None, keepdim=False, dtype=None, node=None) -> Tensor:
    x = _float_result(a._a, "linalg.vector_norm")
    if dim is not None:
        if not isinstance(dim, (int, tuple, list)) or dim.__class__ is bool:     # (a script's call: its words)
            raise TypeError(f"linalg_vector_norm(): argument 'dim' (position 3) must be tuple of ints, not "
                            f"{type(dim).__name__}")
        if not isinstance(dim, int):      # the parser's rules for an int list
            dim = ops.shape.int_list((dim,), "linalg_vector_norm", "dim", 3)
    if keepdim.__class__ is not bool:     # (torch.norm passes it on by position)
        raise TypeError(f"linalg_vector_norm(): argument 'keepdim' (position 4) must be bool, not "
                        f"{type(keepdim).__name__}")
    if dtype is not None:
        if dtype.np.kind not in "fV":
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{TYPE_WORDS[dtype.np.name]}")
        if dtype.np.itemsize < x.itemsize:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({type_word(x)}) should be "
                               f"convertible without narrowing to the specified dtype ({TYPE_WORDS[dtype.np.name]})")
        x = x.astype(dtype.np)
    p = float(ord)
    dims = None if dim is None else _reduce_dims(dim, x.ndim)
    axis = dims if dims is not None else tuple(range(x.ndim))
    if math.isinf(p) and x.size == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                           "operation does not have an identity")
    ax = np.abs(x)
    one = x.dtype.type(1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if not math.isinf(p) and p != 0 and x.dtype.itemsize >= 4 and x.size:
            out = _norm_in_kernel_order(x, ax, p, axis, keepdim)
        elif not math.isinf(p) and p != 0 and x.size:
            # float16: PyTorch accumulates in float32 and rounds the norm once (a sum of squares past 65504
            # is no overflow: the norm of [300, 300] is 424.25, not inf)
            x32 = x.astype(np.float32)
            out = _norm_in_kernel_order(x32, np.abs(x32), p, axis, keepdim).astype(x.dtype)
        elif p == 2:
            out = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim, dtype=x.dtype))
        elif p == 1:
            out = np.sum(ax, axis=axis, keepdims=keepdim, dtype=x.dtype)
        elif p == 0:
            out = np.sum(x != 0, axis=axis, keepdims=keepdim).astype(x.dtype)
        elif p == math.inf:
            out = np.max(ax, axis=axis, keepdims=keepdim)
        elif p == -math.inf:
            out = np.min(ax, axis=axis, keepdims=keepdim)
        else:
            s = np.sum(np.power(ax, x.dtype.type(p)), axis=axis, keepdims=keepdim, dtype=x.dtype)
            out = np.power(s, one / x.dtype.type(p))
    if dims is None and keepdim:
        out = np.reshape(out, (1,) * x.ndim)
    out = np.asanyarray(out, dtype=x.dtype)
    if _plain(a):
        return Tensor(out)      # no node: the mask is not worth computing
    mask = counts = None
    if math.isinf(p):
        kept = out if keepdim or not x.ndim else np.expand_dims(out, axis)
        m = (ax == kept) | np.isnan(ax)
        mask, counts = Tensor(m.astype(x.dtype)), Tensor(m.sum(axis=axis, keepdims=True).astype(x.dtype))
    saved = dims if dims is None else given_dims(dims, dim)
    return apply(node or NORM, out, (a,), (ord, saved, keepdim, mask, counts), (x,))      # ord as given


def dist(input, other, p=2) -> Tensor:
    """torch.dist: the p-norm of input - other (broadcast), with its own node."""
    from gradcli.engine.recording import compute, number_arg, operands
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if value.__class__ is not Tensor:
            raise TypeError(f"dist(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    p = number_arg(p, "dist", "p", 3)
    x, y = operands(input, other)
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {type_word(x)} "
                           "instead.")
    diff = Tensor(np.asanyarray(compute(np.subtract, x, y)))
    norm = vector_norm(diff, p)
    mask = counts = None
    if math.isinf(p) and needs_grad(input, other):
        d = np.abs(diff._a)
        m = (d == norm._a) | np.isnan(d)
        mask, counts = Tensor(m.astype(x.dtype)), Tensor(np.asanyarray(m.sum(), x.dtype))
    return apply(DIST, norm._a, (input, other), (p, mask, counts), (x, y))


def renorm(input, p, dim, maxnorm) -> Tensor:
    """torch.renorm: each slice along `dim` whose p-norm exceeds maxnorm scaled by maxnorm / (norm + 1e-7),
    the norm and the factor in float for float16 (PyTorch's accumulate type)."""
    from gradcli.engine.recording import index_arg, number_arg, wrap_dim
    if input.__class__ is not Tensor:
        raise TypeError(f"renorm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    p = number_arg(p, "renorm", "p", 2)             # (saved as given: RenormBackward0._saved_p)
    maxnorm = number_arg(maxnorm, "renorm", "maxnorm", 4)
    x = input._a
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    d = wrap_dim(index_arg(dim), x.ndim)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    _float_result(x, "linalg.vector_norm")
    dims = tuple(i for i in range(x.ndim) if i != d)
    acc = dtypes.float32 if x.dtype == np.float16 else None
    norm = vector_norm(Tensor(x), p, dims, True, acc)._a
    t = norm.dtype.type
    with np.errstate(all="ignore"):
        factor = np.where(norm > t(maxnorm), t(maxnorm) / (norm + t(1e-7)), t(1)).astype(norm.dtype)     # (floats)
    out = np.asanyarray(x * factor.astype(x.dtype), x.dtype)
    if _plain(input):
        return Tensor(out)
    # the backward's norm is in the CPU accumulate type (double for float32, float for float16)
    acc = dtypes.float32 if x.dtype == np.float16 else dtypes.float64
    norm = vector_norm(Tensor(x), p, dims, True, acc)._a
    mask = counts = None
    if math.isinf(p):
        ax = np.abs(x).astype(norm.dtype)
        m = (ax == norm) | np.isnan(ax)
        mask, counts = Tensor(m.astype(norm.dtype)), Tensor(m.sum(axis=dims, keepdims=True).astype(norm.dtype))
    return apply(RENORM, out, (input,), (p, index_arg(dim), maxnorm, Tensor(norm), mask, counts))     # dim as given


def _norm_in_kernel_order(x: np.ndarray, ax: np.ndarray, p: float, axis: tuple, keepdim: bool) -> np.ndarray:
    """The p-norms (p finite, not 0) of float32/float64 arrays as PyTorch's norm kernel sums them
    (vecorder)."""
    shape = tuple(1 if d in axis else n for d, n in enumerate(x.shape)) if keepdim else tuple(
        n for d, n in enumerate(x.shape) if d not in axis)
    if x.__class__ is not np.ndarray:       # a meta array: the norm's shape and dtype
        return np.sum(ax, axis=axis, keepdims=keepdim)
    if all(x.shape[d] == 1 for d in axis):
        return ax.reshape(shape)        # a reduction over size-1 dims: PyTorch returns abs(x)
    rows, lastdim = vecorder.reduced_rows(x, axis)
    if p == 2:
        out = np.sqrt(vecorder.norm2_squares(rows, lastdim))
    elif p == 1:
        out = vecorder.serial_sum(np.abs(rows))
    else:       # NormOps: pow in the tensor's dtype (float32's powf: double pow rounded once), 1/p likewise
        t = x.dtype.type
        out = _rounded_pow(vecorder.serial_sum(_rounded_pow(np.abs(rows), t(p))), t(1) / t(p))
    return out.reshape(shape)


_LIBM_POW = np.frompyfunc(math.pow, 2, 1)


def _rounded_pow(a: np.ndarray, p) -> np.ndarray:
    """std::pow as the kernel calls it: float32 through double (rounded once, as glibc's powf is), float64
    through the C library's pow (math.pow; numpy's own vector pow rounds differently)."""
    if a.dtype == np.float32:
        return np.power(a.astype(np.float64), np.float64(p)).astype(np.float32)
    return _LIBM_POW(a, float(p)).astype(np.float64)


def _matrix_norm(a: Tensor, p, dim, keepdim) -> Tensor:
    """torch.norm's matrix norms, which it computes as torch.linalg.matrix_norm(input, p, dims, keepdim,
    dtype=dtype)."""
    x = a._a
    if keepdim.__class__ is not bool:
        from gradcli.engine import signatures
        dims = list(range(x.ndim)) if dim is None else dim
        raise TypeError(signatures.check("torch.linalg.matrix_norm", (a, p, dims, keepdim), {"dtype": None}))
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    dims = tuple(range(x.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    x = _float_result(x, "linalg.matrix_norm")
    if needs_grad(a):
        raise NotImplementedError("the gradient of norm(p='nuc') goes through an SVD, which gradcli does not have")
    d0, d1 = (wrap_dim(d, x.ndim) for d in dims)
    moved = np.moveaxis(x, (d0, d1), (-2, -1))
    out = np.linalg.svd(moved, compute_uv=False).sum(axis=-1).astype(x.dtype)
    if keepdim:
        out = np.expand_dims(out, tuple(sorted((d0, d1))))
    return Tensor(np.asanyarray(out))


# -------------------------------------------------------------------------------------------- std, var

def _std_var_args(key: str, args: tuple, kwargs: dict):
    """(dims or None, correction, keepdim) from PyTorch's three overloads of std/var (and std_mean/var_mean):
    (dim, unbiased=True, keepdim=False), (dim=None, *, correction=None, keepdim=False), (unbiased=True).
    The correction is as the node saves it: 1 or 0 from `unbiased`, else as given (None: 1)."""
    _, values = signatures.bound(key, args, kwargs)
    correction = values.get("correction")
    scalar_param(correction)
    dim = values.get("dim")
    for d in (dim if dim.__class__ in (tuple, list) else (dim,)):     # read before the dtype is looked at
        if d.__class__ is int:
            int64_arg(d)
    if "unbiased" in values:
        correction = 0 if values["unbiased"] is False else 1
    elif correction is None:
        # an explicit dim=None without a correction takes PyTorch's (dim, unbiased=True) overload
        at = 1 if key.startswith("torch.") else 0
        if kwargs.get("dim", 0) is None or len(args) > at and args[at] is None:
            correction = 1
    return values.get("dim"), correction, values.get("keepdim") or False


def _correction(correction):
    """A saved correction as a number: None (not given) is 1."""
    return 1 if correction is None else correction


def std(a: Tensor, *args, **kwargs) -> Tensor:
    dim, correction, keepdim = _std_var_args("Tensor.std", args, kwargs)
    return _std_var(a, dim, correction, keepdim, True)


def var(a: Tensor, *args, **kwargs) -> Tensor:
    dim, correction, keepdim = _std_var_args("Tensor.var", args, kwargs)
    return _std_var(a, dim, correction, keepdim, False)


def _warn_dof(name: str, n: int, correction) -> None:
    """PyTorch's warning (TORCH_WARN: once per script line) when the correction leaves no degrees of freedom
    (the result is nan or inf): the std of one element, as a tutorial's statistics of a batch of one meet it."""
    if n - correction <= 0:
        STATE.warn("UserWarning", f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
                   "the reduction factor (input numel divided by output numel). (Triggered internally at "
                   "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")


def _std_var(a: Tensor, dim, saved_correction, keepdim: bool, take_sqrt: bool) -> Tensor:
    x = a._a
    correction = _correction(saved_correction)
    if x.dtype.kind not in "fV":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = None if dim is None else reduction_dims(dim, x.ndim)
    axis = tuple(range(x.ndim)) if not dims else dims
    n = math.prod(x.shape[d] for d in axis)
    _warn_dof("std" if take_sqrt else "var", n, correction)
    with np.errstate(divide="ignore", invalid="ignore"):
        if not x.size:
            m2 = np.sum(x.astype(np.float64), axis=axis, keepdims=keepdim) * np.nan
        elif dims is None or n == x.size:
            m2 = vecorder.centred_square_sum(x, mean_array(x))
            if keepdim:
                m2 = np.reshape(m2, (1,) * x.ndim)
            elif dims:                  # the dims left are all of length 1: they stay (shape [1], not [])
                m2 = np.reshape(m2, tuple(size for d, size in enumerate(x.shape) if d not in axis))
        elif x.dtype == np.float64:
            m2 = vecorder.welford_m2(x, axis, keepdim)
        else:
            # float32: the double Welford's M2, rounded to float32 at the end, is the double two-pass
            # result rounded (both within a few double ulps: tools/reduce_bits.py finds no difference)
            x64 = x.astype(np.float64)
            m2 = np.sum((x64 - x64.mean(axis=axis, keepdims=True)) ** 2, axis=axis, keepdims=keepdim)
        v = m2 / np.float64(n - correction if n - correction > 0 else 0)
        out = np.sqrt(v) if take_sqrt else v
    if dims is None and keepdim:
        out = np.reshape(out, (1,) * x.ndim)
    out = contiguous(np.asanyarray(out).astype(x.dtype))      # a reduction's result is contiguous
    saved = dims if dims is None else given_dims(dims, dim)
    return apply(STD if take_sqrt else VAR, out, (a,), (saved, saved_correction, keepdim), (x,))


# ------------------------------------------------------------------------------------------- logsumexp

def logsumexp(a: Tensor, dim=_REQUIRED, keepdim=False) -> Tensor:
    _check_keepdim("logsumexp", keepdim)
    _require_dim(dim, "logsumexp")
    x = a._a
    if x.dtype.kind not in "fV":
        x = x.astype(np.float32)
    dims = reduction_dims(dim, x.ndim)
    if not dims and x.ndim and not keepdim:
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * x.ndim}")
    axis = dims if dims else tuple(range(x.ndim))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if x.ndim == 0:
            out = x + x.dtype.type(0)      # log(exp(x - x)) + x: -0. comes out as 0., as in PyTorch
        elif x.size:
            maxes = np.max(x, axis=axis, keepdims=True)
            maxes[np.abs(maxes) == np.inf] = 0
            s = sum_array(elementary.exp(x - maxes), axis, keepdim)      # at::sum_out: the cascade
            out = elementary.log(s) + (maxes if keepdim else np.squeeze(maxes, axis))
        else:
            out = elementary.log(np.sum(elementary.exp(x), axis=axis, keepdims=keepdim, dtype=x.dtype))
    out = np.asanyarray(out, dtype=x.dtype)
    return apply(LOGSUMEXP, out, (a,), (given_dims(axis, dim), keepdim), (x,))


# ------------------------------------------------------------------------------------ cumsum, cumprod

def _cum_input(a: Tensor, dtype) -> np.ndarray:
    x = a._a
    if dtype is not None:
        return x.astype(dtype.np)
    return x.astype(np.int64) if x.dtype.kind in "iub" else x


def cumsum(a: Tensor, dim=_REQUIRED, dtype=None) -> Tensor:
    _require_dim(dim, "cumsum")
    x = _cum_input(a, dtype)
    given = _int_dim(dim, "cumsum")
    d = wrap_dim(given, x.ndim)
    out = cumsum_array(x, d) if x.ndim else x.copy()
    return apply(CUMSUM, out, (a,), (given, x.size))


def cumprod(a: Tensor, dim=_REQUIRED, dtype=None) -> Tensor:
    _require_dim(dim, "cumprod")
    x = _cum_input(a, dtype)
    given = _int_dim(dim, "cumprod")
    d = wrap_dim(given, x.ndim)
    out = cumprod_array(x, d) if x.ndim else x.copy()
    return apply(CUMPROD, out, (a,), (given,), (x,))


# ---------------------------------------------------------------------------------------------- all, any

def reduce_all(a: Tensor, dim=None, keepdim=False) -> Tensor:
    _check_keepdim("all", keepdim)
    return _logical_reduce(a, dim, keepdim, np.all)


def reduce_any(a: Tensor, dim=None, keepdim=False) -> Tensor:
    _check_keepdim("any", keepdim)
    return _logical_reduce(a, dim, keepdim, np.any)


def _logical_reduce(a: Tensor, dim, keepdim, fn) -> Tensor:
    x = a._a
    if dim.__class__ in (tuple, list) and not dim:      # no dims: each element's own truth, as in PyTorch
        out = np.array(x != 0)
        return Tensor(out.astype(np.uint8) if x.dtype == np.uint8 else out)
    dims = _reduce_dims(dim, x.ndim)
    out = contiguous(fn(x, axis=dims, keepdims=keepdim)) if x.ndim else np.asanyarray(fn(x))
    if dim is None and keepdim:
        out = out.reshape((1,) * x.ndim)
    # uint8 tensors keep their dtype (0/1), as in PyTorch; everything else gives bool
    return Tensor(out.astype(np.uint8) if x.dtype == np.uint8 else out)


# ------------------------------------------------------------------------------------ nansum, nanmean

def _nansum_self(F, g, self, dim, keepdim):
    """nansum_backward: the gradient put back over the reduced dims, times self.isnan().logical_not()."""
    x = self._a if F.tensors else self
    kept = ~np.isnan(x) if x.dtype.kind in "fV" else np.ones(x.shape, np.bool_)
    return _expand_back(F, g, x.shape, _reduce_dims(dim, x.ndim), keepdim) * F.const(kept)


def _nansum_jvp(F, ts, xs, result, dim, keepdim):
    """where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)."""
    x = xs[0]._a
    return reduce_sum(ops.where(Tensor(np.isnan(x)), 0, ts[0]), _reduce_dims(dim, x.ndim), keepdim,
                      _dtype_of(result, ts[0], xs[0]))


# saves `dim` as the script gave it (None, or a tuple of ints), as PyTorch shows it
NANSUM = Op("NansumBackward0", None, ("self", "dim", "keepdim"), (_nansum_self,), fits="dtype", quiet=True,
            jvp=_nansum_jvp)


def _copy_with_strides(x: np.ndarray) -> np.ndarray:
    """A copy of x with x's own strides (a stepped or transposed view summed as PyTorch sums the view)."""
    strides = x.strides
    if x.flags.c_contiguous or x.flags.f_contiguous or not x.size or min(strides) < 0:
        return x.copy(order="K")
    span = 1 + sum((n - 1) * s for n, s in zip(x.shape, strides)) // x.itemsize
    out = np.lib.stride_tricks.as_strided(np.empty(span, x.dtype), x.shape, strides)
    np.copyto(out, x)
    return out


def nansum(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    """The sum with NaN counted as 0, in sum's order (PyTorch's cascade skips them: the same bits); one node
    type for every dim (NansumBackward0)."""
    if keepdim is not False:
        _check_keepdim("nansum", keepdim)
    x = a._a
    out_dtype = dtype.np if dtype is not None else _sum_dtype(x)
    dims = _reduce_dims(dim, x.ndim)
    values = x
    if x.dtype.kind in "fV":
        values = _copy_with_strides(x)      # the input's layout, which decides the sum's order
        values[np.isnan(values)] = 0
    out = sum_array(values, dims if dim is not None or keepdim else None, keepdim, out_dtype)
    given = None if dim is None else (dim,) if isinstance(dim, int) else tuple(int(d) for d in dim)
    return apply(NANSUM, np.asanyarray(out), (a,), (given, keepdim))


def nanmean(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    """PyTorch's composition: nansum(...) / (the count of non-NaN elements), DivBackward0 over NansumBackward0."""
    x = a._a if dtype is None else a._a.astype(dtype.np)
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{type_word(x)}")
    total = nansum(a, dim, keepdim, dtype)
    count = sum_array(~np.isnan(x), _reduce_dims(dim, x.ndim) if dim is not None or keepdim else None, keepdim,
                      np.int64)
    return ops.div(total, Tensor(np.asanyarray(count)))


# ----------------------------------------------------------------------------------- var_mean, std_mean
# One node, two outputs (VarMeanBackward0, StdMeanBackward0): each result holds an OutputSlot of it, and
# the node runs once with both outputs' gradients (autograd.OutputGrads). Both come from PyTorch's Welford
# kernel (WelfordOps in double: vecorder.welford), not from var's two-pass sum and mean's cascade.

def _var_mean_backward(F, gvar, gmean, self, result0, dim, correction, keepdim, take_sqrt):
    """var_mean_backward / std_mean_backward: var's (std's) gradient, then mean's added to it."""
    x = self._a if F.tensors else self
    dims = None if dim is None or not x.ndim else reduction_dims(dim, x.ndim) or None
    gself = None
    if gvar is not None:
        gself = _std_backward(F, gvar, self, result0, dims, correction, keepdim) if take_sqrt else \
            _var_backward(F, gvar, self, dims, correction, keepdim)
    if gmean is not None:
        every = dims is None or len(dims) == x.ndim
        n = x.size if every else math.prod(x.shape[d] for d in dims)
        aux = _expand_back(F, gmean, x.shape, () if dims is None else dims, keepdim) / n
        gself = aux if gself is None else gself + aux
    return gself


def _var_mean_jvp(F, ts, xs, result, output, dim, correction, keepdim, take_sqrt):
    """result0: var's (std's) tangent; result1: mean(self_t, dim, keepdim)."""
    x = xs[0]._a
    dims = None if dim is None or not x.ndim else reduction_dims(dim, x.ndim) or None
    if output == 1:
        return mean(ts[0], _keep_dims(dims), keepdim)
    return (_std_jvp if take_sqrt else _var_jvp)(F, ts, xs, result, dims, correction, keepdim)


def _both(g) -> tuple:
    """The gradients of the two outputs: a node with several outputs receives them as OutputGrads (a
    gradient reaching the node itself, through std_mean's saved result0 under create_graph, is output 0's)."""
    return tuple(g.grads) if g.__class__ is OutputGrads else (g, None)


def _var_mean_formula(F, g, self, dim, correction, keepdim):
    return _var_mean_backward(F, *_both(g), self, None, dim, correction, keepdim, False)


def _std_mean_formula(F, g, self, result0, dim, correction, keepdim):
    if F.tensors and result0.grad_fn.__class__ is Node:
        # the saved result as output 0 of its node (an OutputSlot), so that a gradient reaching it under
        # create_graph meets the other outputs' as PyTorch's engine gathers them
        node, result0 = result0.grad_fn, _output_of(result0)
        result0.grad_fn = OutputSlot(node, 0, 2)
    return _var_mean_backward(F, *_both(g), self, result0, dim, correction, keepdim, True)


def _output_of(t: Tensor) -> Tensor:
    out = Tensor(t._a)
    out.requires_grad = True
    fw = getattr(t, "_fw", None)
    if fw is not None:
        out._fw = fw
    return out


VAR_MEAN = Op("VarMeanBackward0", None, ("self", "dim", "correction", "keepdim"), (_var_mean_formula,),
              quiet=True, jvp=_var_mean_jvp)
STD_MEAN = Op("StdMeanBackward0", None, ("self", "result0", "dim", "correction", "keepdim"), (_std_mean_formula,),
              quiet=True, jvp=_var_mean_jvp)


def _var_mean(name: str, take_sqrt: bool):
    key = f"torch.{name}"

    def function(input, *args, **kwargs):
        dim, saved_correction, keepdim = _std_var_args(key, (input, *args), kwargs)
        x = input._a
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"{name} only support floating point and complex dtypes")
        correction = _correction(saved_correction)
        dims = None if dim is None else reduction_dims(dim, x.ndim)
        axis = tuple(range(x.ndim)) if not dims else dims
        n = math.prod(x.shape[d] for d in axis)
        _warn_dof(name, n, correction)
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.size == 0 or n == 0:
                shape = np.sum(x, axis=axis, keepdims=keepdim).shape
                m, m2 = np.full(shape, np.nan), np.full(shape, np.nan)
            else:
                m, m2 = vecorder.welford(x, axis, keepdim, STATE.threads)
            v = m2 / np.float64(n - correction if n - correction > 0 else 0)
            first = np.sqrt(v) if take_sqrt else v
        # (float16: the double results through float, as PyTorch computes a reduced type in float)
        wide = np.float32 if x.dtype == np.float16 else x.dtype
        outs = [contiguous(np.asanyarray(r).astype(wide).astype(x.dtype)) for r in (first, m)]
        given = None if dim is None else (dim,) if isinstance(dim, int) else tuple(int(d) for d in dim)
        return _two_outputs(STD_MEAN if take_sqrt else VAR_MEAN, outs, input, (given, saved_correction, keepdim),
                            take_sqrt)
    function.__name__ = function.__qualname__ = name
    return function


def _two_outputs(op: Op, outs: list, a: Tensor, args: tuple, take_sqrt: bool) -> tuple:
    """The two results as tensors, sharing one node when grad mode records and `a` requires grad; their
    tangents in forward mode."""
    results = tuple(Tensor(o) for o in outs)
    if STATE.recording and a.requires_grad:
        # std_mean saves its first result: changing it in place fails the backward
        saved = (a, Out(outs[0]), *args) if take_sqrt else (a, *args)
        record_outputs(op, results, a, saved, (0,) if take_sqrt else ())
    if STATE.fw_level is not None:
        for k, r in enumerate(results):
            forward.propagate(op, r, (a,), (k, *args, take_sqrt))
    return results


def record_outputs(op: Op, results: tuple, a: Tensor, saved: tuple, kept: tuple) -> None:
    """One node of `op` over input `a` for several results, each holding an OutputSlot of it; `saved` its
    saved tuple, with the results numbered in `kept` in it (as Out), which are version-checked too."""
    if a._inference and STATE.inference_seen:
        raise RuntimeError(INFERENCE_SAVED_ERROR)
    source = a.grad_fn or edge(a)
    if source.checks.__class__ is tuple:
        slim(source, source.checks)
    checks = [(a, a._version, a._version[0], a._a.shape, dtypes.of_array(a._a).message, None)]
    for k in kept:
        r = results[k]
        checks.append((None, r._version, 0, r._a.shape, dtypes.of_array(r._a).message, (op.node, k)))
    node = Node(op, (source,), saved, tuple(checks))
    for k, r in enumerate(results):
        r.grad_fn = OutputSlot(node, k, len(results))
        r.requires_grad = True
    if STATE.saved_hooks is not None:
        STATE.saved_hooks.pack_node(node)
    if STATE.observer is not None:
        for r in results:
            STATE.observer.op(op, r, (a,))


var_mean = _var_mean("var_mean", False)
std_mean = _var_mean("std_mean", True)
