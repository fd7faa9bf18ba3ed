"""The vocabulary backward formulas are written in, twice: on numpy arrays, and on Tensors for create_graph.

A formula `lambda F, g, self, other: g * other` runs on numpy arrays in an ordinary backward pass
(fast, nothing recorded) and on Tensors when `create_graph=True`, where every step is itself a
recorded op, so the gradient can be differentiated again. Operators (+ - * / ** @, unary -,
comparisons) work on both; everything else a formula needs is a method of these two classes.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import autograd, dtypes, ops
from gradcli.engine.ops import arith, elementwise, indexing, linalg, reduce, shape
from gradcli.engine.recording import Out
from gradcli.engine.tensor import Tensor


class NumpyMath:
    """Formulas on numpy arrays: a plain backward pass."""

    tensors = False

    @staticmethod
    def unpack(saved: tuple, node) -> list:
        return [s._a if s.__class__ is Tensor else (s.a if s.__class__ is Out else s) for s in saved]

    zeros_like = staticmethod(np.zeros_like)
    expand = staticmethod(np.broadcast_to)
    unsqueeze_dims = staticmethod(np.expand_dims)
    squeeze = staticmethod(np.squeeze)
    log = staticmethod(np.log)
    sum_to = staticmethod(autograd.sum_to)

    @staticmethod
    def pow(x, e):
        return arith.scalar_power(x, e) if not isinstance(e, np.ndarray) else np.power(x, e)

    @staticmethod
    def log_scalar(base, like):
        return np.log(like.dtype.type(base))

    @staticmethod
    def masked_zero(x, mask):
        return np.where(mask, x.dtype.type(0), x)

    @staticmethod
    def mm(a, b):
        return a @ b

    @staticmethod
    def t(a):
        return a.T

    @staticmethod
    def reshape(g, shape):
        return g.reshape(shape)

    @staticmethod
    def sum(g):
        return np.asarray(g.sum())

    @staticmethod
    def cast(g, dtype):
        return g.astype(dtype)

    @staticmethod
    def scatter(g, shape, key, kind):
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out

    @staticmethod
    def index_add(g, shape, key):
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, key, g)
        return out

    @staticmethod
    def zero_at(g, key):
        g = g.copy()
        g[key] = 0
        return g

    @staticmethod
    def getitem(g, key):
        return g[key]

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def ones(shape, dtype):
        return np.ones(shape, dtype=dtype)

    # numpy group: elementwise
    # numpy group: reduce
    # numpy group: shape
    # numpy group: creation


class TensorMath:
    """Formulas on Tensors, each step recorded: create_graph=True."""

    tensors = True

    @staticmethod
    def unpack(saved: tuple, node) -> list:
        out = []
        for s in saved:
            if s.__class__ is Out:
                # the node's own result, as a tensor whose grad_fn is the node (made afresh, never stored,
                # so no cycle between the node and its output)
                t = Tensor(s.a)
                t.grad_fn = node
                t.requires_grad = True
                out.append(t)
            else:
                out.append(s)
        return out

    @staticmethod
    def zeros_like(g):
        return Tensor(np.zeros_like(g._a))

    @staticmethod
    def expand(g, shape_):
        return shape.expand(g, tuple(shape_))

    @staticmethod
    def unsqueeze_dims(g, dims):
        for d in sorted(dims):
            g = shape.unsqueeze(g, d)
        return g

    @staticmethod
    def squeeze(g, dim):
        return shape.squeeze(g, dim)

    log = staticmethod(elementwise.log)

    @staticmethod
    def pow(x, e):
        return arith.power(x, e)

    @staticmethod
    def log_scalar(base, like):
        return math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)

    @staticmethod
    def masked_zero(x, mask):
        return elementwise.masked_fill(x, mask, 0)

    mm = staticmethod(linalg.mm)
    t = staticmethod(shape.t)

    @staticmethod
    def reshape(g, shape_):
        return shape.view(g, shape_) if g._a.flags.c_contiguous else shape.view(arith.clone(g), shape_)

    @staticmethod
    def sum(g):
        return reduce.reduce_sum(g)

    @staticmethod
    def sum_to(g, shape_):
        """Sum a broadcast gradient back to `shape_`, as PyTorch's sum_to does: sum over the broadcast
        dims keeping them, then view away the leading ones."""
        gs = g._a.shape
        if gs == tuple(shape_):
            return g
        lead = len(gs) - len(shape_)
        dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape_) if n == 1 and gs[i + lead] != 1)
        if dims:
            g = reduce.reduce_sum(g, dims, keepdim=True)
        if lead:
            g = shape.view(g, tuple(shape_))
        return g

    @staticmethod
    def cast(g, dtype):
        return arith.to_dtype(g, dtypes.by_name(np.dtype(dtype).name))

    scatter = staticmethod(indexing.scatter)
    index_add = staticmethod(indexing.index_add)

    @staticmethod
    def zero_at(g, key):
        c = arith.clone(g)
        indexing.setitem(c, key, 0)
        return c

    getitem = staticmethod(indexing.getitem)

    @staticmethod
    def add(a, b):
        return ops.add(a, b)

    @staticmethod
    def ones(shape_, dtype):
        return Tensor(np.ones(shape_, dtype=dtype))

    # tensor group: elementwise
    # tensor group: reduce
    # tensor group: shape
    # tensor group: creation


NUMPY = NumpyMath()
TENSOR = TensorMath()
