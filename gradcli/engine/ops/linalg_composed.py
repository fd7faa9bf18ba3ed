"""torch.linalg's functions that PyTorch composes from other ops (CompositeImplicitAutograd kernels): vecdot,
vander, cond, tensorinv, tensorsolve. Built here from the same ops in the same order, so their grad_fn chains,
errors and bits are PyTorch's."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget
from gradcli.engine.ops import arith, linalg as la, lu, reduce, shape
from gradcli.engine.recording import autocast_policy, index_arg, tensor_arg, type_word
from gradcli.engine.tensor import Tensor


def _int(value, fn: str, name: str) -> int:
    value = index_arg(value)
    if value.__class__ is not int:      # (a script's call gets the parser's message: engine/signatures.py)
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")
    return value


@autocast_policy("lower_precision_fp")
def vecdot(x: Tensor, y: Tensor, *, dim=-1) -> Tensor:
    """torch.linalg.vecdot: vdot for two vectors, else (x * y).sum(dim) with broadcasting (real tensors)."""
    tensor_arg(x, "linalg_vecdot", "x", 1)
    tensor_arg(y, "linalg_vecdot", "y", 2)
    dim = _int(dim, "linalg_vecdot", "dim")
    a, b = x._a, y._a
    if a.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {type_word(a)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{type_word(a)} and y of type {type_word(b)} instead")
    if a.ndim == 1 and b.ndim == 1:
        return la.vdot(x, y)
    return reduce.reduce_sum(arith.mul(x, y), dim)


def vander(x: Tensor, *, N=None) -> Tensor:
    """torch.linalg.vander: the increasing powers x^0 ... x^(N-1) along a new last dim, as PyTorch composes
    them: ones, then the running product of x expanded N - 1 times, concatenated (CatBackward0)."""
    tensor_arg(x, "linalg_vander", "x", 1)
    a = x._a
    if a.dtype == np.bool_ or a.dtype.char in "eE":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{type_word(a)}")
    n = a.shape[-1] if a.ndim else 1
    if N is not None:
        n = _int(N, "linalg_vander", "N")
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    dtype = np.int64 if a.dtype.kind in "iu" else a.dtype
    budget.check_tensor(a.shape + (n,), np.dtype(dtype).itemsize)
    column = shape.unsqueeze(x, -1)
    ones = Tensor(np.ones(a.shape + (1,), dtype))
    powers = reduce.cumprod(shape.expand(column, a.shape + (n - 1,)), -1)
    return shape.cat([ones, powers], -1)


_INF = float("inf")


@autocast_policy("fp32")
def cond(A: Tensor, p=None) -> Tensor:
    """torch.linalg.cond: by the singular values for p None, 2 and -2 (s_max / s_min, or its reciprocal), else
    norm(A) * norm(A^-1) with the inverse of a singular matrix taken as infinities and 0 * inf read as inf
    (in place: PyTorch's masked_fill_ and nan_to_num_, so a backward through them fails as PyTorch's does);
    'nuc' by the singular values' sum times the sum of their reciprocals."""
    tensor_arg(A, "linalg_cond", "input", 1)
    x = A._a
    if x.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    elif p is not None and abs(p) not in (1, 2, _INF):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_number(p)}")
    spectral = p is None or (not isinstance(p, str) and abs(p) == 2)
    if not spectral and x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={_number(p)}): A must be batches of square matrices, but they are "
                           f"{x.shape[-2]} by {x.shape[-1]} matrices")
    if x.size == 0:
        return Tensor(np.zeros(x.shape[:-2], x.dtype if x.dtype.kind in "fV" else np.float32))
    if spectral:
        S = la.svdvals(A)
        first, last = shape.narrow(S, -1, 0, 1), shape.narrow(S, -1, S._a.shape[-1] - 1, 1)
        ratio = arith.div(last, first) if p == -2 else arith.div(first, last)
        return shape.squeeze(ratio, -1)
    if p == "nuc":
        S = la.svdvals(A)
        return arith.mul(reduce.reduce_sum(S, -1), reduce.reduce_sum(arith.reciprocal(S), -1))
    inverse, info = lu.inv_ex(A)
    info = shape.unsqueeze(shape.unsqueeze(info, -1), -1)
    inverse.masked_fill_(arith.compare(np.greater, info, 0), _INF)
    result = arith.mul(la.matrix_norm(A, p), la.matrix_norm(inverse, p))
    return result.nan_to_num_(_INF, _INF, -_INF)


def _number(p) -> str:
    """p as PyTorch's messages print the Scalar (a double: 3, 1.5, inf)."""
    if isinstance(p, str):
        return p
    return f"{float(p):g}"          # C++'s ostream of a double: six significant digits, -0, nan, inf


@autocast_policy("fp32")
def tensorinv(A: Tensor, ind=2) -> Tensor:
    """torch.linalg.tensorinv: A reshaped to a square matrix (the first `ind` dims as rows), inverted, reshaped
    to A.shape[ind:] + A.shape[:ind]."""
    tensor_arg(A, "linalg_tensorinv", "input", 1)
    ind = _int(ind, "linalg_tensorinv", "ind")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    dims = A._a.shape
    rows, cols = math.prod(dims[:ind]), math.prod(dims[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse = la.inverse(shape.reshape(A, cols, cols), _singular="inv")
    return shape.reshape(inverse, *(dims[ind:] + dims[:ind]))


@autocast_policy("fp32")
def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """torch.linalg.tensorsolve: the dims in `dims` moved last, A reshaped to a square matrix whose rows are
    B's elements, linalg.solve with B flattened, the result reshaped to A's trailing dims."""
    tensor_arg(A, "linalg_tensorsolve", "input", 1)
    tensor_arg(B, "linalg_tensorsolve", "other", 2)
    ndim = A._a.ndim
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = shape.movedim(A, dims, list(range(ndim - len(dims), ndim)))
    result_shape = A._a.shape[B._a.ndim:]
    result_size, other_size = math.prod(result_shape), math.prod(B._a.shape)
    if result_size != other_size:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {result_size} != {other_size}")
    matrix = shape.reshape(A, result_size, result_size)
    return shape.reshape(la.solve(matrix, shape.flatten(B)), *result_shape)
