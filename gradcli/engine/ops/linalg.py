"""Linear algebra: matrix products (matmul and its cases, einsum), det, inverse, solves, Cholesky factors, matrix
powers and chains, log-determinants, the matrix exponential, trace, diagonals."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, dtypes, elementary, forward, rng, workers
from gradcli.engine.cascade import sum_array
from gradcli.engine.fma import fma
from gradcli.engine.ops import arith, elementwise, reduce, shape
from gradcli.engine.recording import (autocast_policy, Op, Out, apply, given_dims, index_arg, int64_arg, int_param, tensor_arg, type_word,
                                      wrap_dim)
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.engine.autograd import Node, OutputGrads, OutputSlot


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a singular matrix. A traceback names it after PyTorch's C++ binding."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "torch._C._LinAlgError"


def _solve_A_grad(F, g, A, result, left, vector):
    return _solve_backward_A(F, _solve_backward_B(F, g, A, result, left, vector), result, left, vector)


def _solve_triangular_B(F, g, A, result, upper, left, unitriangular):
    """linalg_solve_triangular_backward's gB: the same triangular solve with A^H (the other triangle)."""
    return F.solve_triangular(F.mT(A), g, not upper, left, unitriangular)


def _solve_triangular_A(F, g, A, result, upper, left, unitriangular):
    """gA = -gB X^H (left) or -X^H gB, kept to A's triangle (without the diagonal when unitriangular)."""
    gB = _solve_triangular_B(F, g, A, result, upper, left, unitriangular)
    gA = -F.matmul(gB, F.mT(result)) if left else -F.matmul(F.mT(result), gB)
    return F.triu(gA, int(unitriangular)) if upper else F.tril(gA, -int(unitriangular))


def _solve_triangular_jvp(F, ts, xs, result, upper, left, unitriangular):
    """linalg_solve_triangular_forward_AD: X_t = A^-1 (B_t - proj(A_t) X), A_t kept to A's triangle."""
    At = forward.tangent_or_zeros(ts, xs, 0)
    Bt = forward.tangent_or_zeros(ts, xs, 1)
    At = shape.triu(At, int(unitriangular)) if upper else shape.tril(At, -int(unitriangular))
    rhs = Bt - (matmul(At, result) if left else matmul(result, At))
    return solve_triangular(xs[0], rhs, upper=upper, left=left, unitriangular=unitriangular)


def _cholesky_inverse_grad(F, g, L, upper, inverse):
    """cholesky_inverse_backward: -(inverse (g + g^H) inverse) L (L times it, for an upper factor)."""
    common = g + F.mT(g)
    common = F.matmul(inverse, F.matmul(common, inverse))
    return -F.matmul(L, common) if upper else -F.matmul(common, L)


def _cholesky_inverse_jvp(L, dL, inverse, upper):
    """PyTorch 2.13's cholesky_inverse_jvp, as the oracle computes it: with C = U (or L^H) and dC = dU^H (or dL),
    P = -X dC X C and the tangent P + P^H. (It is not the derivative of (L L^H)^-1, -X (dL L^H + L dL^H) X,
    except for a symmetric tangent: PyTorch's own values, kept.)"""
    C = L if upper else shape.transpose(L, -2, -1)
    dC = shape.transpose(dL, -2, -1) if upper else dL
    partial = -matmul(matmul(matmul(inverse, dC), inverse), C)
    return partial + shape.transpose(partial, -2, -1)


def cholesky_backward(F, gL, upper, L):
    """PyTorch's cholesky_backward: gA = L^-H sym((L^H gL).tril()) L^-1, with the two triangular solves, where
    sym(X) = (X + X.tril(-1)^H) / 2 (an upper factor is transposed first)."""
    if upper:
        L, gL = F.mT(L), F.mT(gL)
    gA = F.tril(F.matmul(F.mT(L), gL))
    gA = 0.5 * (gA + F.mT(F.tril(gA, -1)))
    gA = F.solve_triangular(F.mT(L), gA, True, True, False)
    return F.solve_triangular(L, gA, False, False, False)


def _cholesky_jvp(dA, L, upper):
    """cholesky_jvp: dL = L pi(L^-1 dA L^-H), pi(X) = X.tril() - diag(X) / 2 (for an upper factor, on L^H)."""
    if upper:
        L = shape.transpose(L, -2, -1)
    dL = solve_triangular(L, dA, upper=False, left=True)
    dL = solve_triangular(shape.transpose(L, -2, -1), dL, upper=True, left=False)
    dL = shape.tril(dL) - diag_embed(diagonal(dL, 0, -2, -1) * 0.5)
    dL = matmul(L, dL)
    return shape.transpose(dL, -2, -1) if upper else dL


# Forward-mode columns (gradcli.engine.forward): PyTorch's `result:` formulas. A product's formula adds
# both terms, the missing tangent as zeros (PyTorch materializes them for mm, bmm and mv: inf * 0 gives
# nan there; dot and vdot keep the one term).

def _product_jvp(product):
    def jvp(F, ts, xs, result):
        zeros = forward.tangent_or_zeros
        return product(zeros(ts, xs, 0), xs[1]) + product(xs[0], zeros(ts, xs, 1))
    return jvp


def _dot_jvp(row, product):
    """dot, vdot: self_t . other_p + self_p . other_t, where PyTorch's missing tangent is a zero tensor that
    costs nothing: its term is 0 without computing (no nan from inf * 0), yet recorded when its primal
    requires grad, and the sum is an AddBackward0 whenever either term requires grad. (`row` gives the row,
    declared below.)"""
    def jvp(F, ts, xs, result):
        st, ot = ts
        if st is not None and ot is not None:
            return product(st, xs[1]) + product(xs[0], ot)
        term = product(st, xs[1]) if ot is None else product(xs[0], ot)
        primal = xs[0] if ot is None else xs[1]
        if not primal.requires_grad and not term.requires_grad:
            return term                     # (the add records nothing: the sum is the term)
        zeros = Tensor(np.zeros_like(primal._a))
        zero = apply(row(), np.zeros((), dtype=result._a.dtype), (primal, zeros) if ot is None else (zeros, primal))
        return term + zero
    return jvp


def _det_jvp(F, ts, xs, result):
    """linalg_det_jvp: trace(A^-1 dA) * det, A^-1 dA solved with det's LU (zero pivots as epsilon)."""
    A = xs[0]._a
    _, lu, pivots, use_transpose = _det_factors(A)
    n = A.shape[-1]
    diag = np.diagonal(lu, 0, -2, -1)
    lu = lu + np.where(diag == 0, dtypes.finfo(A.dtype).eps, 0).astype(A.dtype)[..., None] * np.eye(n, dtype=A.dtype)
    dA = np.broadcast_to(ts[0]._a, A.shape)
    solved = Tensor(np.ascontiguousarray(_lu_solve(lu, pivots, dA, adjoint=use_transpose)))
    return reduce.reduce_sum(diagonal(solved, 0, -2, -1), -1) * result


def _inv_jvp(F, ts, xs, result):
    """-(inverse @ A_t) @ inverse, copied into the strides of LAPACK's (column-major) inverse (CopyBackwards)."""
    value = -F.matmul(F.matmul(result, ts[0]), result)
    return elementwise.copy(Tensor(np.empty_like(result._a)), value)


def _solve_jvp(F, ts, xs, result, left, vector):
    """linalg_solve_jvp: dX solves A dX = dB - dA X (X dA on the right for left=False), a missing tangent
    as zeros. (PyTorch solves with the forward's LU, a LinalgLuSolveBackward0 node; solve() factors A
    again, to the same LU, and records LinalgSolveExBackward0.)"""
    A = xs[0]
    X = F.unsqueeze_dims(result, (result._a.ndim,)) if vector else result
    At = forward.tangent_or_zeros(ts, xs, 0)
    Bt = forward.tangent_or_zeros(ts, xs, 1)
    R = F.matmul(At, X) if left else F.matmul(X, At)
    rhs = (F.unsqueeze_dims(Bt, (Bt._a.ndim,)) if vector else Bt) - R
    out = solve(A, rhs, left)
    return shape.squeeze(out, -1) if vector else out


# fmt: off
MM                = Op("MmBackward0",               None,    ("self", "mat2"),
                       (lambda F, g, self, mat2: F.matmul(g, F.t(mat2)),
                        lambda F, g, self, mat2: F.matmul(F.t(self), g)),
                       inputs=("self", "mat2"), needed_by={"self": "mat2", "mat2": "self"}, quiet=True,
                       jvp=_product_jvp(lambda a, b: mm(a, b)))
BMM               = Op("BmmBackward0",              None,    ("self", "mat2"),
                       (lambda F, g, self, mat2: F.bmm(g, F.mT(mat2)),
                        lambda F, g, self, mat2: F.bmm(F.mT(self), g)),
                       inputs=("self", "mat2"), needed_by={"self": "mat2", "mat2": "self"}, quiet=True,
                       jvp=_product_jvp(lambda a, b: bmm(a, b)))
MV                = Op("MvBackward0",               None,    ("self", "vec"),
                       (lambda F, g, self, vec: F.outer(g, vec),
                        lambda F, g, self, vec: F.mv(F.t(self), g)),
                       inputs=("self", "vec"), needed_by={"self": "vec", "vec": "self"}, quiet=True,
                       jvp=_product_jvp(lambda a, b: mv(a, b)))
DOT               = Op("DotBackward0",              None,    ("self", "tensor"),
                       (lambda F, g, self, tensor: g * tensor,
                        lambda F, g, self, tensor: g * self),
                       inputs=("self", "tensor"), needed_by={"self": "tensor", "tensor": "self"}, quiet=True,
                       jvp=_dot_jvp(lambda: DOT, lambda a, b: dot(a, b)))
VDOT              = Op("VdotBackward0",             None,    ("self", "other"),
                       (lambda F, g, self, other: g * other,
                        lambda F, g, self, other: g * self), needed_by={"self": "other", "other": "self"}, quiet=True,
                       jvp=_dot_jvp(lambda: VDOT, lambda a, b: vdot(a, b)))
DET               = Op("LinalgDetBackward0",        None,    ("A", "result"),
                       (lambda F, g, A, result: F.det_backward(g, A, result),), inputs=("A",), quiet=True,
                       jvp=_det_jvp)
INV               = Op("LinalgInvExBackward0",      None,    ("result",),
                       (lambda F, g, result: -F.matmul(F.mT(result), F.matmul(g, F.mT(result))),),
                       jvp=_inv_jvp)
SOLVE             = Op("LinalgSolveExBackward0",    None,    ("A", "result", "left", "vector"),
                       (_solve_A_grad,
                        lambda F, g, A, result, left, vector: _solve_backward_B(F, g, A, result, left, vector)),
                       inputs=("A", "B"), fits=True, quiet=True, jvp=_solve_jvp)
CHOLESKY          = Op("LinalgCholeskyExBackward0", None,    ("upper", "result"),
                       (lambda F, g, upper, result: cholesky_backward(F, g, upper, result),),
                       quiet=True, jvp=lambda F, ts, xs, result, upper: _cholesky_jvp(ts[0], result, upper))
CHOLESKY_LEGACY   = Op("CholeskyBackward0",         None,    ("upper", "result"),
                       (lambda F, g, upper, result: cholesky_backward(F, g, upper, result),),
                       quiet=True, jvp=forward.no_tangent("cholesky"))
CHOLESKY_INVERSE  = Op("CholeskyInverseBackward0",  None,    ("self", "upper", "result"),
                       (lambda F, g, self, upper, result: _cholesky_inverse_grad(F, g, self, upper, result),),
                       quiet=True, jvp=lambda F, ts, xs, result, upper: _cholesky_inverse_jvp(xs[0], ts[0], result, upper))
SOLVE_TRIANGULAR  = Op("LinalgSolveTriangularBackward0", None, ("self", "result", "upper", "left", "unitriangular"),
                       (_solve_triangular_A, _solve_triangular_B),
                       inputs=("self", "B"), fits=True, quiet=True, jvp=_solve_triangular_jvp)
TRACE             = Op("TraceBackward0",            None,    ("sizes",),
                       (lambda F, g, sizes: F.diagonal_scatter(F.expand(g, (min(sizes),)), sizes, 0, 0, 1),),
                       jvp=lambda F, ts, xs, result, sizes: trace(ts[0]))
DIAGONAL          = Op("DiagonalBackward0",         None,    ("sizes", "offset", "dim1", "dim2"),
                       (lambda F, g, sizes, offset, dim1, dim2: F.diagonal_scatter(g, sizes, offset, dim1, dim2),),
                       jvp=lambda F, ts, xs, result, sizes, offset, dim1, dim2: diagonal(ts[0], offset, dim1, dim2))
DIAG              = Op("DiagonalBackward0_copy",    None,    ("sizes", "offset", "dim1", "dim2"),
                       (lambda F, g, sizes, offset, dim1, dim2: F.diagonal_scatter(g, sizes, offset, dim1, dim2),),
                       jvp=lambda F, ts, xs, result, sizes, offset, dim1, dim2: diag(ts[0], offset))
DIAG_EMBED        = Op("DiagEmbedBackward0",        None,    ("offset", "dim1", "dim2"),
                       (lambda F, g, offset, dim1, dim2: F.diagonal(g, offset, dim1, dim2),),
                       jvp=lambda F, ts, xs, result, offset, dim1, dim2: diag_embed(ts[0], offset, dim1, dim2))
# the gradient of diagonal(), as an op of its own so create_graph can differentiate it again
DIAGONAL_BACKWARD = Op("DiagonalBackwardBackward0", None,    ("offset", "dim1", "dim2"),
                       (lambda F, g, offset, dim1, dim2: F.diagonal(g, offset, dim1, dim2),),
                       jvp=lambda F, ts, xs, result, offset, dim1, dim2:
                           diagonal_backward(ts[0], result._a.shape, offset, dim1, dim2))
# fmt: on

_DTYPE_WORDS = {"int64": "long int", "int32": "int", "float32": "float", "float64": "double", "bool": "bool",
                "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def cxx_type(dtype) -> str:
    """The C++ name PyTorch's messages give a dtype ("float", "long int", "c10::Half")."""
    return _DTYPE_WORDS.get(np.dtype(dtype).name, np.dtype(dtype).name)


_tensor_arg = tensor_arg

def _not_for_bool(x: np.ndarray, kernel: str):
    if x.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _pair(a: Tensor, b: Tensor, row: Op, out: np.ndarray, x: np.ndarray, y: np.ndarray) -> Tensor:
    """Record a product of two tensors (each saves the other only when that other needs a gradient)."""
    return apply(row, out, (a, b), (), (x, y))


def _solve_backward_B(F, g, A, result, left, vector):
    """linalg_solve_backward's gradient for B: solve A^H gB = gX (a vector case solved as a column)."""
    g = F.unsqueeze_dims(g, (g.ndim,)) if vector else g
    gB = F.solve(F.mT(A), g, left) if F.tensors else _adjoint_solve_array(A, g, left)
    return F.squeeze(gB, -1) if vector else gB


def _adjoint_solve_array(A: np.ndarray, G: np.ndarray, left: bool) -> np.ndarray:
    """A^H X = G (or X A^H = G) in a plain backward, which PyTorch solves with the forward's LU and never
    refuses: a matrix the forward took gives NaNs or infinities here, never an error, even where A^H's own
    LU would find a zero pivot (a matrix with an infinity)."""
    if not left:
        return solve_array(np.swapaxes(A, -1, -2), G, left=False)
    return _transposed_solve(A, G, refuse=False)


def _solve_backward_A(F, gB, X, left, vector):
    if vector:
        gB, X = F.unsqueeze_dims(gB, (gB.ndim,)), F.unsqueeze_dims(X, (X.ndim,))
    return -F.matmul(gB, F.mT(X)) if left else -F.matmul(F.mT(X), gB)


# ------------------------------------------------------------------------------------- products

# Products up to this size (multiply-adds) are summed in numpy one rank-one update at a time.
SEQUENTIAL_WORK = 1 << 20
# MKL's fused order costs several numpy calls per inner index: it is followed up to this much work (or for k <= 16);
# bigger products in that region go to numpy's sgemm, whose kernel sums in the same order for most of them.
_FUSED_WORK = 1 << 15
# Bigger float32 products are summed in blocks of this many inner indices (numpy's sgemm each), the blocks added
# in order: shorter running sums than one sgemm over the whole inner dimension, and more accurate than MKL's.
_BLOCK = 128


def transposed(a: np.ndarray) -> bool:
    """A matrix laid out column by column (a transposed view), as BLAS is told with its trans flag."""
    return a.strides[0] < a.strides[1]


def mkl_order(x: np.ndarray, y: np.ndarray) -> str | None:
    """How PyTorch's mm (MKL's sgemm on x86-64) sums the float32 product x @ y (2-D, small), where the oracle
    showed it: "fma" (from zero, one fused multiply-add per inner index in order), "seq" (from zero, multiply then
    add, in order), "lanes4" (four partial sums, lane j taking the products of inner indices 4i + j in order,
    multiply then add, combined as (lane0 + lane2) + (lane1 + lane3): the kernels for a transposed second
    operand, as F.linear's weight is, on an inner size that is a multiple of 4), "columns" (the same layout and
    inner sizes with 2 to 11 columns, or any number of columns on up to three rows: each whole group of four
    columns as "lanes4", the last one to three columns in eight lanes, see `columns`), or None when its kernel sums
    otherwise (then gradcli rounds the float64 product once: at least as accurate). Measured for m up to 128, n and k up to 512 (work up to 2**20), every layout of the operands
    (docs/numerics.md)."""
    m, k = x.shape
    n = y.shape[1]
    if m >= 4 and n >= 16 and ((k <= 128 and (m in (4, 8) or m >= 12)) or (k <= 4 and n < 128)):
        return "fma"
    if k == 1 or (k <= 3 and (m < 4 or n < 12)):
        return "seq"
    if m == 1:          # MKL's matrix-vector kernels
        return None if transposed(y) else "seq"
    if n == 1 and (transposed(x) or k <= 4 or (m <= 3 and k <= 9)):
        return "seq"
    if transposed(y) and not transposed(x):      # only the second operand transposed (F.linear's weight): other kernels
        if k % 4 == 0 and n >= 2 and (n <= 11 or m <= 3):
            return "lanes4" if n % 4 == 0 else "columns"
        if m >= 4 and n >= 12 and (k <= 128 and (m in (4, 8) or m >= 12) or k <= (16 if n <= 16 else 4)):
            return "fma"
        return None
    if n in (2, 3, 4, 8) or (m <= 3 and (n == 5 or (n >= 16 and n % 2 == 0))):
        return "seq"
    return None


def affordable(order: str | None, m: int, k: int, n: int) -> str | None:
    """mkl_order's answer, or None where following it would cost too much (see _FUSED_WORK)."""
    if order == "fma" and k > 16 and m * k * n > _FUSED_WORK:
        return None
    return order


def sequential_guess(m: int, k: int) -> bool:
    """For a product whose MKL order is unknown: sum it in order anyway (short inner dimension, or up to three
    rows, where that agrees with MKL on 50-98% of elements, more often than the rounded float64 product does, at
    about MKL's accuracy), rather than rounding the float64 product once (more accurate, and agreeing more
    often than the sequential sum once k > 16). Measured on the grid of mkl_order (docs/numerics.md)."""
    return k <= 16 or m <= 3


def lanes4(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y (2-D float32, inner size a multiple of 4) as mkl_order's "lanes4" sums it: four partial sums, lane j
    adding the rounded products of inner indices j, j + 4, j + 8, ... in order, then (lane0 + lane2) +
    (lane1 + lane3)."""
    return np.ascontiguousarray(_lanes4(_lane_products(x, y)).T)


def _lanes4(products: np.ndarray) -> np.ndarray:
    """The "lanes4" sums of products[:, j, i] (see _lane_products), as an (n, m) array."""
    k, n, m = products.shape
    # numpy adds along the leading axis one slice after the other, in order: the lanes in one call
    lanes = np.add.reduce(products.reshape(k // 4, 4, n, m), axis=0)
    return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])


def columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y (2-D float32, inner size k a multiple of 4, y transposed) as mkl_order's "columns" sums it: each whole
    group of four columns as `lanes4`; the one to three columns left in eight lanes, lane j adding the rounded
    products of inner indices j, j + 8, ... in order, halved as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)),
    then the last four products (k not a multiple of 8) added one by one. The oracle agreed on every element for
    m from 2 to 256, n from 2 to 11 and k from 4 to 512 (docs/numerics.md)."""
    products = _lane_products(x, y)
    k, n, m = products.shape
    whole = n - n % 4
    out = np.empty((n, m), dtype=np.float32)
    if whole:
        out[:whole] = _lanes4(products[:, :whole])
    rest = products[:, whole:]
    body = k - k % 8
    if body:
        lanes = np.add.reduce(rest[:body].reshape(body // 8, 8, n - whole, m), axis=0)
        halves = lanes[0:4] + lanes[4:8]
        sums = (halves[0] + halves[2]) + (halves[1] + halves[3])
    else:
        sums = np.zeros((n - whole, m), dtype=np.float32)
    for p in range(body, k):
        sums += rest[p]
    out[whole:] = sums
    return np.ascontiguousarray(out.T)       # (a product's rows are contiguous, as PyTorch's are)


def _lane_products(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """products[p, j, i] = x[i, p] * y[p, j] in float32, each rounded once, laid out so that every multiply and
    every lane sum runs along a row of x's transpose (numpy's fast inner loops)."""
    xt, y = np.ascontiguousarray(x.T), np.ascontiguousarray(y)
    return np.multiply(y[:, :, None], xt[:, None, :])


def in_order(x: np.ndarray, y: np.ndarray, out: np.ndarray, fused: bool) -> np.ndarray:
    """out + x @ y summed one rank-one update per inner index, in order (fused: one rounding per update). All k
    products are formed by one numpy call into a reused buffer, then added one numpy call per step."""
    k = x.shape[-1]
    if k == 0:
        return out
    products = _products(x, y, out.shape, np.float64 if fused else out.dtype)
    if not fused:
        for p in range(k):
            out += products[p]
        return out
    sums = _scratch("sums", (k,) + out.shape, np.float32)
    previous = out
    for p in range(k):
        np.add(previous, products[p], out=sums[p], casting="unsafe")     # the float64 sum, rounded to float32
        previous = sums[p]
    if _fma_hazard(out, sums, products):
        for p in range(k):
            out = rng._fma32(x[..., :, p:p + 1], y[..., p:p + 1, :], out)
        return out
    return sums[-1].copy()


_SCRATCH: dict = {}


def _scratch(name: str, shape: tuple, dtype) -> np.ndarray:
    """A reused buffer (products of at most SEQUENTIAL_WORK multiply-adds): fresh big arrays cost page faults
    that outweigh the arithmetic of a small product."""
    size = int(np.prod(shape, dtype=np.int64))
    buf = _SCRATCH.get((name, np.dtype(dtype)))
    if buf is None or buf.size < size:
        buf = _SCRATCH[(name, np.dtype(dtype))] = np.empty(max(size, 1024), dtype=dtype)
    return buf[:size].reshape(shape)


def _products(x: np.ndarray, y: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    """products[p] = x[..., :, p] (outer) y[..., p, :], in `dtype` (float64: exact for float32 operands)."""
    columns, rows = np.moveaxis(x, -1, 0)[..., :, None], np.moveaxis(y, -2, 0)[..., None, :]
    products = _scratch("products", (x.shape[-1],) + shape, dtype)
    np.multiply(columns, rows, out=products, dtype=dtype)
    return products


def _fma_hazard(out: np.ndarray, sums: np.ndarray, products: np.ndarray) -> bool:
    """Whether a step's float64 sum fell on a float32 halfway point or below 2**-125 (nonzero), where rounding it
    to float32 may differ from the fma's single rounding."""
    exact = _scratch("exact", products.shape, np.float64)
    np.add(out, products[0], out=exact[0])
    np.add(sums[:-1], products[1:], out=exact[1:])
    bits = exact.view(np.uint64)
    if ((bits & rng._LOW29) == rng._HALF29).any():
        return True
    return bool(((np.abs(exact) < 2.0 ** -125) & (exact != 0)).any())


def _blocked(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    k = x.shape[-1]
    if x.dtype != np.float32 or y.dtype != np.float32 or k <= _BLOCK:
        return np.matmul(x, y)
    if x.ndim == 2 and y.ndim == 2:
        cuts = _row_cuts(x.shape[0], k, y.shape[1])
        if len(cuts) > 2:
            return _blocked_rows(x, y, cuts)
    out = np.matmul(x[..., :, :_BLOCK], y[..., :_BLOCK, :])
    block = _scratch("block", out.shape, np.float32)
    for start in range(_BLOCK, k, _BLOCK):
        np.matmul(x[..., :, start:start + _BLOCK], y[..., start:start + _BLOCK, :], out=block)
        out += block
    return out


# Big float32 products are split by rows over the worker threads (gradcli.engine.workers) when numpy's BLAS runs
# on one thread. A row's sums do not depend on the other rows as long as every sgemm call hands it to the same
# kernel, which holds only if:
# - every piece's every block stays above OpenBLAS's small-matrix kernels (calls of at most 100^3 multiply-adds,
#   which sum in another order);
# - every piece starts on a boundary of the kernel's tiles of rows: the rows left over after a call's last whole
#   tile go to narrower kernels, which also sum in another order. The tile depends on the kernel OpenBLAS picked
#   for this processor (12 rows on Haswell and Zen), so it is found by trying (_row_tile), and the last piece
#   ends where the product does, with the same leftover rows as the whole product.
# tests/test_workers.py checks both.
_SMALL_GEMM = 100 ** 3
_SPLIT_GEMM = 1 << 24           # multiply-adds: from here a split pays (about 0.3 ms of sgemm on one core)
_TILES = (4, 8, 12, 16, 24, 32, 48, 64, 96)
_tile: list = []                # [rows of sgemm's tile, or 0 when no candidate held], found once per process


def _row_tile() -> int:
    """The rows of numpy's sgemm tile: the first candidate t for which a product's rows from t on (and from 2t
    on), computed alone, are bit for bit the whole product's; 0 when none is (then products are not split)."""
    if not _tile:
        x = np.sin(np.arange((2 * _TILES[-1] + 64) * _BLOCK, dtype=np.float32)).reshape(-1, _BLOCK)
        y = np.cos(np.arange(_BLOCK * 256, dtype=np.float32) * np.float32(0.37)).reshape(_BLOCK, 256)
        whole = x @ y
        _tile.append(next((t for t in _TILES if np.array_equal(x[t:] @ y, whole[t:])
                           and np.array_equal(x[2 * t:] @ y, whole[2 * t:])), 0))
    return _tile[0]


def _row_cuts(m: int, k: int, n: int) -> list:
    """Where x @ y (m x k times k x n, in blocks of _BLOCK) is cut into pieces of rows: [0, ..., m], or [0, m]
    for no split. Inner cuts are multiples of sgemm's tile, and every piece has enough rows that its shortest
    block is above the small-matrix kernels."""
    if not workers.blas_alone() or not workers.worth(m * k * n, _SPLIT_GEMM):
        return [0, m]
    shortest = k % _BLOCK or _BLOCK
    least = _SMALL_GEMM // (shortest * n) + 1        # the fewest rows a piece may have
    tile = _row_tile() if m >= 2 * least else 0
    for parts in range(min(workers.threads() * workers.PIECES, m // least), 1, -1) if tile else ():
        cuts = [begin for begin, _ in workers.ranges(m, parts, tile)] + [m]
        if min(end - begin for begin, end in zip(cuts, cuts[1:])) >= least:
            return cuts
    return [0, m]


def _blocked_rows(x: np.ndarray, y: np.ndarray, cuts: list) -> np.ndarray:
    """_blocked(x, y) for 2-D operands, computed by pieces of rows (between `cuts`) on the worker threads."""
    k = x.shape[1]
    out = np.empty((x.shape[0], y.shape[1]), np.float32)
    scratch = np.empty_like(out)

    def pieces(first: int, last: int) -> None:
        for begin, end in zip(cuts[first:last], cuts[first + 1:last + 1]):
            rows, into, block = x[begin:end], out[begin:end], scratch[begin:end]
            np.matmul(rows[:, :_BLOCK], y[:_BLOCK], out=into)
            for start in range(_BLOCK, k, _BLOCK):
                np.matmul(rows[:, start:start + _BLOCK], y[start:start + _BLOCK], out=block)
                into += block
    workers.split(len(cuts) - 1, pieces, parts=len(cuts) - 1)
    return out


def matprod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y for (batches of) matrices, summed as PyTorch's CPU kernels sum them where that is known: bmm's own
    kernel (bit for bit) and float64 products (most bits) from zero, one rank-one update per inner index in order;
    float32 mm in MKL's order where mkl_order knows it and following it is affordable, else in order
    (sequential_guess) or as the float64 product rounded once (never less accurate than MKL); big products in
    blocks of the inner dimension (more accurate than MKL). docs/numerics.md has the measurements."""
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        return np.matmul(x, y)              # a meta operand: a shape and a dtype, nothing to sum
    k = x.shape[-1]
    shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) + (x.shape[-2], y.shape[-1])
    budget.check_tensor(shape, max(x.itemsize, y.itemsize))
    if x.dtype.char in "eE":
        if x.dtype.char == "E" and x.ndim == y.ndim == 2 and own_gemm(x, y):
            return bfloat16_small(x, y)
        return half_product(x, y)
    if k == 1 and shape[-2] > 1 and shape[-1] > 1 and x.dtype.kind in "fV" and (
            x.ndim == y.ndim == 2 or x.ndim == y.ndim == 3 and shape[0] == 1 and shape[1] * shape[2] >= 400):
        # one inner index: MKL's gemm (mm, and bmm of one matrix past bmm's own kernel) stores the products
        # themselves (a -0.0 product stays -0.0), where the matrix-vector paths (a single row or column) and the
        # batched kernels add them to zero
        return np.multiply(x, y)
    if x.dtype.kind not in "fV" or k * int(np.prod(shape, dtype=np.int64)) > SEQUENTIAL_WORK:
        return _blocked(x, y)
    dtype = np.result_type(x, y)
    out = np.zeros(shape, dtype=dtype)
    if dtype != np.float32 or x.ndim != y.ndim or x.ndim > 3 or out.size == 0:
        return in_order(x, y, out, False)
    if x.ndim == 3:
        if k * x.shape[1] * y.shape[2] < 400:       # bmm's own kernel below that size, MKL's above
            return in_order(x, y, out, False)
        order = mkl_order(x[0], y[0])
        if order in ("lanes4", "columns"):          # (measured on mm, not on bmm's batches)
            order = None
    else:
        order = mkl_order(x, y)
        if order == "lanes4":
            return lanes4(x, y)
        if order == "columns":
            return columns(x, y)
    fma = order == "fma"
    order = affordable(order, x.shape[-2], k, y.shape[-1] * (x.shape[0] if x.ndim == 3 else 1))
    if order is None and fma:
        return np.matmul(x, y)          # numpy's sgemm: the same fused order in most of this region, in one call
    if order is None and not sequential_guess(x.shape[-2], k):
        return np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    return in_order(x, y, out, order == "fma")


_F16 = np.dtype(np.float16)


def half_product(x: np.ndarray, y: np.ndarray, scale=1, c=None, beta=0) -> np.ndarray:
    """A float16 product (scale * (x @ y) + beta * c) as PyTorch's CPU computes it: in float, with the products
    and sums exact enough that the float64 result rounded to float, then to half, is what it gives (every
    element of the oracle's products, matrix-vector products and batches, addmm's beta and alpha included).
    bfloat16 alike."""
    out = np.matmul(x.astype(np.float64), y.astype(np.float64))
    if scale != 1:
        out *= float(np.float32(scale))
    if c is not None and beta != 0:
        out += float(np.float32(beta)) * c.astype(np.float64)
    return out.astype(np.float32).astype(x.dtype)


def own_gemm(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether a bfloat16 product runs PyTorch's own gemm loop: at most 16^3 multiply-adds (oneDNN above), not
    empty, and neither side a single row or column (the matrix-vector paths)."""
    m, k = x.shape
    n = y.shape[1]
    return m >= 2 and n >= 2 and k >= 1 and m * k * n <= 4096


def bfloat16_small(x: np.ndarray, y: np.ndarray, c=None, beta=0, alpha=1) -> np.ndarray:
    """beta * c + alpha * (x @ y) for bfloat16 matrices of at most 16^3 multiply-adds (both sides at least 2), as
    PyTorch's own gemm loop computes them below oneDNN's threshold, by the operands' layouts (measured on the
    oracle, every element of thousands of random products): untransposed operands (or both transposed) sum each
    dot in four interleaved float partial sums, then add them (its `sum` helper); a transposed second operand
    sums sixteen float lanes over whole blocks of 16, halves them pairwise, then adds the rest in order (its
    vectorised dot); each element then becomes beta * c + (alpha * dot) with the first product fused. A
    transposed first operand accumulates in order from beta * c, one fused product at a time."""
    f32 = np.float32
    a, b = x.astype(f32), y.astype(f32)
    m, k = a.shape
    n = b.shape[1]
    x_t = not x.flags.c_contiguous and x.flags.f_contiguous
    y_t = not y.flags.c_contiguous and y.flags.f_contiguous
    base = np.zeros((m, n), f32) if c is None or beta == 0 else (f32(beta) * c.astype(f32)).astype(f32)
    if x_t and not y_t:
        for l in range(k):
            fma(f32(alpha) * a[:, l:l + 1] if alpha != 1 else a[:, l:l + 1], b[l:l + 1, :], base, base)
        return base.astype(x.dtype)
    dot = _lanes(a, b) if y_t and not x_t else _partials(a, b)
    scaled = dot if alpha == 1 else (dot * f32(alpha)).astype(f32)
    if c is None or beta == 0:
        return scaled.astype(x.dtype)
    return fma(f32(beta), c.astype(f32), scaled).astype(x.dtype)


def _partials(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each dot of a @ b in float: four partial sums over the inner index by its remainder mod 4 (the tail
    into the first), then the first plus the second, third and fourth."""
    k = a.shape[1]
    parts = [np.zeros((a.shape[0], b.shape[1]), np.float32) for _ in range(4)]
    whole = k - k % 4
    for l in range(k):
        fma(a[:, l:l + 1], b[l:l + 1, :], parts[l % 4 if l < whole else 0], parts[l % 4 if l < whole else 0])
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total


def _lanes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each dot of a @ b in float as sixteen vector lanes sum it: lane j takes the products j, j + 16, ... of the
    whole blocks, the lanes are halved pairwise (8, 4, 2, 1), then the remaining products are added in order."""
    k = a.shape[1]
    whole = k - k % 16
    lanes = np.zeros((16, a.shape[0], b.shape[1]), np.float32)
    for l in range(whole):
        fma(a[:, l:l + 1], b[l:l + 1, :], lanes[l % 16], lanes[l % 16])
    width = 16
    while width > 1:
        width //= 2
        lanes = lanes[:width] + lanes[width:]
    total = lanes[0].copy()
    for l in range(whole, k):
        fma(a[:, l:l + 1], b[l:l + 1, :], total, total)
    return total


def matvec(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """x @ v for a vector v, summed as matprod sums."""
    return matprod(x, v[..., None])[..., 0]


@autocast_policy("lower_precision_fp")
def mm(a: Tensor, b: Tensor) -> Tensor:
    _tensor_arg(b, "mm", "mat2", 1)
    x, y = a._a, b._a
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if x.shape[1] != y.shape[0]:
        if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:     # PyTorch's meta kernel's words
            raise RuntimeError(f"a and b must have same reduction dim, but got {list(x.shape)} X {list(y.shape)}.")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({x.shape[0]}x{x.shape[1]} and {y.shape[0]}x{y.shape[1]})")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_DTYPE_WORDS[x.dtype.name]} != {_DTYPE_WORDS[y.dtype.name]}")
    if x.size and y.size:                   # an empty operand gives zeros before any kernel is chosen
        _not_for_bool(x, "addmm_impl_cpu_")
    return _pair(a, b, MM, matprod(x, y), x, y)


def check_batches(x: np.ndarray, y: np.ndarray) -> None:
    """bmm's (and baddbmm's) checks of its two batches of matrices, in PyTorch's words."""
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{x.shape[0]}, "
                           f"{x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")


@autocast_policy("lower_precision_fp")
def bmm(a: Tensor, b: Tensor) -> Tensor:
    _tensor_arg(b, "bmm", "mat2", 1)
    x, y = a._a, b._a
    check_batches(x, y)
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(y)}")
    _not_for_bool(x, "bmm")
    return _pair(a, b, BMM, matprod(x, y), x, y)


def mv(a: Tensor, vec: Tensor) -> Tensor:
    _tensor_arg(vec, "mv", "vec", 1)
    x, v = a._a, vec._a
    if x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {x.ndim}, {v.ndim}")
    if x.shape[1] != v.shape[0]:
        if x.__class__ is not np.ndarray or v.__class__ is not np.ndarray:     # PyTorch's meta kernel's words
            raise RuntimeError(f"size mismatch, got input ({x.shape[0]}x{x.shape[1]}), vec ({v.shape[0]})")
        raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
                           f"vec ({v.shape[0]})")
    if x.dtype != v.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {type_word(v)}, "
                           f"{type_word(x)}, and {type_word(v)}")
    if x.size and v.size:
        _not_for_bool(x, "addmv_impl_cpu")
    return _pair(a, vec, MV, matvec(x, v), x, v)


def vector_checks(x: np.ndarray, y: np.ndarray, name: str) -> None:
    """dot's and vdot's checks of their two arrays, in PyTorch's words (`name` in the dtype message)."""
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.dtype != y.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found {type_word(x)} and "
                           f"{type_word(y)}")
    if x.size != y.size:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.size}] and src [{y.size}] to have the "
                           f"same number of elements, but got {x.size} and {y.size} elements respectively")


def _dot(a: Tensor, b: Tensor, row: Op, name: str) -> Tensor:
    _tensor_arg(b, name, "tensor" if name == "dot" else "other", 1)
    x, y = a._a, b._a
    vector_checks(x, y, name)
    _not_for_bool(x, "dot")
    return _pair(a, b, row, np.asanyarray(dot_array(x, y), dtype=x.dtype), x, y)


def dot_array(x: np.ndarray, y: np.ndarray):
    """The dot product of two vectors of one dtype as PyTorch's CPU kernel (BLAS) computes it."""
    if x.dtype == np.float32 and (x.size <= 8 or x.size == 16):
        value = _sdot_small(x, y)      # MKL's order, where it is known
    elif x.dtype == np.float64 and x.size <= 8:
        value = _ddot_small(x, y)
    elif x.dtype == np.float32:        # MKL's sdot sums in its own order: round the exact sum once instead
        value = np.dot(x.astype(np.float64), y.astype(np.float64))
    else:
        value = np.dot(x, y)
    if x.dtype.kind in "fV":            # BLAS starts its sum at +0.0: products that are all -0.0 give +0.0
        value = value + x.dtype.type(0)
    return value


def _sdot_small(x: np.ndarray, y: np.ndarray) -> np.float32:
    """MKL's sdot of at most 8 (or exactly 16) float32 elements, as measured on the oracle: the products
    rounded, then summed in order below 4 elements; from 4 on, in four lanes (element i into lane i % 4,
    elements past the last whole group of four into lane 0, in order), the lanes added as (0 + 2) + (1 + 3)."""
    p = np.multiply(x, y)
    n = p.size
    if n < 4:
        total = np.float32(0)
        for v in p:
            total = total + v
        return total
    whole = n - n % 4
    lanes = p[:4].copy()
    for i in range(4, whole, 4):
        lanes += p[i:i + 4]
    for v in p[whole:]:
        lanes[0] += v
    return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])



def _ddot_small(x: np.ndarray, y: np.ndarray) -> np.float64:
    """MKL's ddot of at most 8 float64 elements, as measured on the oracle: the products rounded, the even
    and the odd ones each summed in order, then the two sums added."""
    p = np.multiply(x, y)
    even, odd = np.float64(0), np.float64(0)
    for v in p[0::2]:
        even = even + v
    for v in p[1::2]:
        odd = odd + v
    return even + odd


def dot(a: Tensor, b: Tensor) -> Tensor:
    return _dot(a, b, DOT, "dot")


def vdot(a: Tensor, b: Tensor) -> Tensor:
    return _dot(a, b, VDOT, "vdot")


def outer(a: Tensor, vec2: Tensor) -> Tensor:
    """PyTorch composes it: self.reshape(n, 1) * vec2 (MulBackward0 over ViewBackward0)."""
    _tensor_arg(vec2, "outer", "vec2", 1)
    for t, name in ((a, "self"), (vec2, "vec2")):
        if t._a.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._a.ndim}-D")
    return arith.mul(shape.reshape(a, a._a.shape[0], 1), vec2)


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """PyTorch's choice (LinearAlgebra.cpp `should_fold`) of folding the batch of the larger operand
    into the rows of one mm/mv instead of a bmm."""
    larger = t1._a.ndim >= t2._a.ndim
    big = t1._a if larger else np.swapaxes(t2._a, -1, -2)
    small = t2 if larger else t1
    if not (big.ndim >= 3 and small._a.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if t1._a.ndim == 2:
        return False
    if big.size == 0:
        return True
    strides = [s // big.itemsize for s in big.strides]
    return all(strides[i] == strides[i + 1] * big.shape[i + 1] for i in range(big.ndim - 2))


@autocast_policy("lower_precision_fp")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """`@`, composed as PyTorch composes it, so the recorded nodes are PyTorch's: dot, mv, mm,
    unsqueeze-mm-squeeze_, a folded mm/mv under an _unsafe_view, or expand-reshape-bmm."""
    _tensor_arg(b, "matmul", "other", 1)
    d1, d2 = a._a.ndim, b._a.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(a, b)
    if d1 == 2 and d2 == 1:
        return mv(a, b)
    if d1 == 1 and d2 == 2:
        return shape.squeeze_(mm(shape.unsqueeze(a, 0), b), 0)
    if d1 == 2 and d2 == 2:
        return mm(a, b)
    if _should_fold(a, b):
        transpose = d2 > d1
        t1 = shape.transpose(b, -2, -1) if transpose else a
        t2 = (shape.t(a) if d1 == 2 else a) if transpose else b
        sizes = t1._a.shape
        out_shape = list(sizes[:-1])
        folded = 1
        for s in out_shape:
            folded *= s
        t1_folded = shape.reshape(t1, folded, sizes[-1])
        if t2._a.ndim == 2:
            output = shape.unsafe_view(mm(t1_folded, t2), out_shape + [t2._a.shape[1]])
            return shape.contiguous(shape.transpose(output, -2, -1)) if transpose else output
        return shape.unsafe_view(mv(t1_folded, t2), out_shape)
    sa, sb = a._a.shape, b._a.shape
    n = sa[-2] if d1 > 1 else 1
    m1 = sa[-1]
    batch1 = sa[:max(d1 - 2, 0)]
    m2 = sb[-2] if d2 > 1 else sb[0]
    p = sb[-1] if d2 > 1 else 1
    batch2 = sb[:max(d2 - 2, 0)]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a.requires_grad:
            return matmul(shape.squeeze(a, 0), b)
        if batch2[0] == 1 and b.requires_grad:
            return matmul(a, shape.squeeze(b, 0))
    batch = list(shape.broadcast_shapes(batch1, batch2))
    count = 1
    for s in batch:
        count *= s
    t1 = shape.reshape(shape.expand(a, batch + [n, m1]), count, n, m1)
    if d2 == 1:
        t2 = shape.unsqueeze(shape.reshape(shape.expand(b, batch + [m2]), count, m2), 2)
    else:
        t2 = shape.reshape(shape.expand(b, batch + [m2, p]), count, m2, p)
    out_shape = batch + ([n] if d1 > 1 else []) + ([p] if d2 > 1 else [])
    product = bmm(t1, t2)
    return shape.unsafe_view(shape.squeeze_(product, -1) if d2 == 1 else product, out_shape)


# ------------------------------------------------------------------------------------------ einsum

_ELLIPSIS = 52        # labels are 0..25 for A-Z, 26..51 for a-z


def _subscript(c: str) -> int:
    return ord(c) - ord("A") if c <= "Z" else ord(c) - ord("a") + 26


def _label(s: int) -> str:
    return chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)


def _is_label(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _einsum_inputs(lhs: str, count: int) -> list:
    labels = [[] for _ in range(count)]
    cur, i, seen_ellipsis = 0, 0, False
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if seen_ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of any ellipsis")
            labels[cur].append(_ELLIPSIS)
            seen_ellipsis = True
            i += 2
        elif c == ",":
            cur += 1
            if cur >= count:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            seen_ellipsis = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            labels[cur].append(_subscript(c))
        i += 1
    if cur != count - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def einsum(*args) -> Tensor:
    """PyTorch's einsum (Linear.cpp), step for step: diagonals for repeated labels, unsqueeze and permute
    every operand to one layout, then contract left to right with sums and bmm, so the recorded nodes
    are PyTorch's. (Positional arguments only, as torch.einsum takes them.)"""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    equation, operands = args[0], args[1:]
    if equation.__class__ is not str:
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, t in enumerate(operands):
        if t.__class__ is not Tensor:
            raise TypeError(f"einsum(): argument 'operands' must be tuple of Tensors, but found element of type "
                            f"{type(t).__name__} at pos {i}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _einsum_inputs(lhs, len(operands))

    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        ndims = t._a.ndim
        nlabels = len(labels)
        has_ellipsis = _ELLIPSIS in labels
        if has_ellipsis:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, ndims - nlabels)
        for s in labels:
            if s != _ELLIPSIS:
                label_count[s] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}) "
                               + ("is more than" if has_ellipsis else "does not match")
                               + f" the number of dimensions ({ndims}) for operand {i}"
                               + ("" if has_ellipsis else " and no ellipsis was given"))

    # every operand is aligned to (output dims, then contracted dims): label -> index in that layout
    perm_of = [-1] * _ELLIPSIS
    perm = ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm = ell_num_dim
        ell_in_output = True
        for s in range(_ELLIPSIS):
            if label_count[s] == 1:
                perm_of[s] = perm
                perm += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm
                perm += ell_num_dim
                ell_in_output = True
            elif c != " ":
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                                       "equation string, subscripts must be in [a-zA-Z]")
                s = _subscript(c)
                if label_count[s] == 0 or perm_of[s] != -1:
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if perm_of[s] != -1
                        else " does not appear in the equation for any input operand"))
                perm_of[s] = perm
                perm += 1
            i += 1
    out_num_dim = perm
    if not ell_in_output:
        ell_index = perm
        perm += ell_num_dim
    for s in range(_ELLIPSIS):
        if label_count[s] > 0 and perm_of[s] == -1:
            perm_of[s] = perm
            perm += 1

    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm
    ops = []
    for i, t in enumerate(operands):
        op = t
        permutation = [-1] * perm
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = t._a.ndim - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op._a.shape[dim]
                    if size != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != size:
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                               f"size {size} which does not broadcast with previously seen "
                                               f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[s]] == -1:
                size = op._a.shape[dim]
                if size != 1:
                    if label_size[s] != 1 and label_size[s] != size:
                        raise RuntimeError(f"einsum(): subscript {_label(s)} has size {size} for operand {i} which "
                                           f"does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_of[s]] += 1
                permutation[perm_of[s]] = dim
                dim += 1
            else:
                prev = permutation[perm_of[s]]
                sizes = op._a.shape
                if sizes[dim] != sizes[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {sizes[dim]} != {sizes[prev]}")
                op = shape.movedim(diagonal(op, 0, prev, dim), -1, prev)
        for k in range(perm):
            if permutation[k] == -1:
                op = shape.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(shape.permute(op, permutation))

    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims, a_dims, b_dims = [], [], []
        for dim in range(out_num_dim, perm):
            if a._a.shape[dim] != 1 and b._a.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a._a.shape[dim] != 1:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif b._a.shape[dim] != 1:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = reduce.reduce_sum(a, a_dims, keepdim=True)
        if b_dims:
            b = reduce.reduce_sum(b, b_dims, keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    result = ops[0]
    if perm > out_num_dim:
        if len(operands) > 1:
            return shape.view(result, result._a.shape[:out_num_dim])
        return reduce.reduce_sum(result, tuple(range(out_num_dim, perm)))
    return result


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """Multiply two aligned operands and sum `sum_dims` (kept as size 1): permute each to
    (batch, rows, summed) x (batch, summed, cols), one bmm, then view and permute back."""
    if not sum_dims:
        return arith.mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left._a.ndim):
        sl, sr = left._a.shape[i] != 1, right._a.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left._a.shape[i] != right._a.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._a.shape[i]
            elif sl:
                left = reduce.reduce_sum(left, (i,), keepdim=True)
            elif sr:
                right = reduce.reduce_sum(right, (i,), keepdim=True)
        elif sl and sr:
            if left._a.shape[i] != right._a.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._a.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._a.shape[i]
        else:
            ro.append(i)
            ro_size *= right._a.shape[i]
    if lo and ro and ro[-1] < lo[0]:
        # PyTorch swaps the operands when that lets bmm write the output in order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left._a.shape[d] for d in lro] + [left._a.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right._a.shape[d] for d in ro])
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = shape.reshape(shape.permute(left, lro + lo + sum_dims + ro), lro_size, lo_size, sum_size)
    right = shape.reshape(shape.permute(right, lro + sum_dims + ro + lo), lro_size, sum_size, ro_size)
    return shape.permute(shape.view(bmm(left, right), out_size), operm)


# ------------------------------------------------------------------------------------ determinants

def _square(a: Tensor, fn: str, floats=True) -> np.ndarray:
    """The array of a batch of square float matrices, with PyTorch's checks in PyTorch's order (without
    the dtype's when not `floats`: torch.cholesky leaves it to its kernel)."""
    x = a._a
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")
    if floats and x.dtype.kind not in "fV":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    return x


def lu_factor(a: np.ndarray):
    """LU factorisation with partial pivoting of a batch of m x n matrices, as LAPACK's getrf computes it: the
    factors packed in one array (unit L below the diagonal, U on and above), the row swapped with row j at
    step j (k = min(m, n) steps), and `info`, the 1-based index of the first zero pivot (0 when none).

    The column below a pivot is scaled by the pivot's reciprocal, except that square matrices of order 4 or
    less divide the last one-element column: the rounding of PyTorch's CPU LAPACK (MKL), checked bit for bit
    up to order 16 and on rectangular matrices up to 10 x 3 (beyond, MKL's blocked kernels round otherwise)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    b = int(np.prod(a.shape[:-2], dtype=np.int64))
    lu = np.array(a, copy=True).reshape((b, m, n))
    pivots = np.zeros((b, k), dtype=np.int64)
    info = np.zeros(b, dtype=np.int64)
    batch = np.arange(b)
    for j in range(k):
        p = j + _pivot_rows(np.abs(lu[:, j:, j]))
        pivots[:, j] = p
        swap = batch[p != j]
        if swap.size:
            row = lu[swap, j].copy()
            lu[swap, j] = lu[swap, p[swap]]
            lu[swap, p[swap]] = row
        pivot = lu[:, j, j]
        info[(info == 0) & (pivot == 0)] = j + 1
        live = batch[pivot != 0]
        if j + 1 < m and live.size:
            if m == n <= 4 and j == n - 2:
                lu[live, j + 1:, j] /= pivot[live, None]
            else:
                lu[live, j + 1:, j] *= (lu.dtype.type(1) / pivot[live])[:, None]
            lu[live, j + 1:, j + 1:] -= lu[live, j + 1:, j, None] * lu[live, None, j, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(a.shape[:-2] + (k,)), info.reshape(a.shape[:-2])


def _pivot_rows(magnitudes: np.ndarray) -> np.ndarray:
    """LAPACK's idamax on each row: the first largest magnitude, by a running maximum that a NaN never replaces
    (a NaN first stays chosen)."""
    nan = np.isnan(magnitudes)
    if not nan.any():
        return np.argmax(magnitudes, axis=1)
    p = np.argmax(np.where(nan, -1.0, magnitudes), axis=1)
    return np.where(nan[:, 0], 0, p)


def _lu_solve(lu: np.ndarray, pivots: np.ndarray, rhs: np.ndarray, adjoint: bool) -> np.ndarray:
    """Solve M X = B (or M^T X = B) for M = P L U factored by lu_factor (same batch shape as B), in the
    order of operations of PyTorch's CPU LAPACK, checked bit for bit for matrices up to order 7: each row's
    products are summed first (L's from the left, U's from the right) and then subtracted, and U's
    diagonal divides by multiplying with its reciprocal. The transposed solve is only close."""
    n = lu.shape[-1]
    b = int(np.prod(lu.shape[:-2], dtype=np.int64))
    lu = lu.reshape((b, n, n))
    pivots = pivots.reshape((b, n))
    x = np.array(rhs, copy=True).reshape(lu.shape[:1] + rhs.shape[-2:])
    one = lu.dtype.type(1)
    diag = np.diagonal(lu, 0, -2, -1)
    if not adjoint:
        for j in range(n):                        # row swaps, in order
            _swap_rows(x, j, pivots[..., j])
        for i in range(n):                        # L (unit lower), forward
            acc = np.zeros_like(x[:, i])
            for k in range(i):
                acc = acc + lu[:, i, k:k + 1] * x[:, k]
            x[:, i] = x[:, i] - acc
        for i in range(n - 1, -1, -1):            # U (upper), backward
            acc = np.zeros_like(x[:, i])
            for k in range(n - 1, i, -1):
                acc = acc + lu[:, i, k:k + 1] * x[:, k]
            x[:, i] = (x[:, i] - acc) * (one / diag[:, i:i + 1])
        return x.reshape(rhs.shape)
    for i in range(n):                            # U^T (lower), forward
        acc = np.zeros_like(x[:, i])
        for k in range(i):
            acc = acc + lu[:, k, i:i + 1] * x[:, k]
        x[:, i] = (x[:, i] - acc) * (one / diag[:, i:i + 1])
    for i in range(n - 1, -1, -1):                # L^T (unit upper), backward
        acc = np.zeros_like(x[:, i])
        for k in range(n - 1, i, -1):
            acc = acc + lu[:, k, i:i + 1] * x[:, k]
        x[:, i] = x[:, i] - acc
    for j in range(n - 1, -1, -1):                # row swaps, undone in reverse order
        _swap_rows(x, j, pivots[..., j])
    return x.reshape(rhs.shape)


# Beyond this order LAPACK switches to blocked kernels: numpy's solver is as close as anything then.
_EMULATED_ORDER = 16


def _solve_checked(M: np.ndarray, B: np.ndarray):
    """X with M X = B for batches of matrices (broadcast), as PyTorch's solver computes it, and the LU's
    `info` of each matrix (0, or the 1-based index of the first zero pivot: M singular)."""
    batch = np.broadcast_shapes(M.shape[:-2], B.shape[:-2])
    M = np.broadcast_to(M, batch + M.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    lu, pivots, info = lu_factor(M)
    if info.any():
        return None, info
    if M.shape[-1] > _EMULATED_ORDER:
        return np.linalg.solve(M, B), info
    return _lu_solve(lu, pivots, B, adjoint=False), info


def _swap_rows(x: np.ndarray, j: int, p: np.ndarray) -> None:
    """Swap row j with row p[b] of each matrix b of a batch (b, n, m), in place."""
    batch = np.arange(x.shape[0])
    row_j = x[:, j].copy()
    x[:, j] = x[batch, p]
    x[batch, p] = row_j


def _det_lu(x: np.ndarray):
    """PyTorch's det's LU: of A^T when A is row-major (det(A^T) = det(A)), else of A; with the sign of its row
    permutation and whether it factored A^T."""
    use_transpose = bool(x.flags.c_contiguous)
    lu, pivots, _ = lu_factor(np.swapaxes(x, -1, -2) if use_transpose else x)
    swaps = (pivots != np.arange(pivots.shape[-1])).sum(-1)
    parity = np.where(swaps % 2 == 1, x.dtype.type(-1), x.dtype.type(1))
    return lu, pivots, parity, use_transpose


def _diagonal_product(d: np.ndarray, dtype) -> np.ndarray:
    """The product of the last dim's elements, in order from the first (ones where it is empty)."""
    prod = np.ones(d.shape[:-1], dtype=dtype)
    if d.shape[-1]:
        prod = d[..., 0].copy()
        for k in range(1, d.shape[-1]):
            prod = prod * d[..., k]
    return prod


def _det_factors(x: np.ndarray):
    """PyTorch's det: the sign of the row permutation times the product of U's diagonal, with the LU."""
    lu, pivots, parity, use_transpose = _det_lu(x)
    prod = _diagonal_product(np.diagonal(lu, 0, -2, -1), x.dtype)
    return np.asanyarray(parity * prod, dtype=x.dtype), lu, pivots, use_transpose


def _no_half_lu(x: np.ndarray) -> NotImplementedError:
    """PyTorch's LU kernel has no float16 nor bfloat16: det and solve fail in it."""
    return NotImplementedError(f"\"lu_cpu\" not implemented for '{type_word(x)}'")


def det(a: Tensor) -> Tensor:
    x = _square(a, "linalg.det")
    if x.dtype.char in "eE":
        raise _no_half_lu(x)
    out = _det_factors(x)[0]
    return apply(DET, out, (a,), (), (x,))


@autocast_policy("fp32")
def inverse(a: Tensor, _singular: str = "linalg.inv") -> Tensor:
    """linalg.inv: PyTorch solves A X = I; the inverse column-major, as LAPACK writes it. (`_singular` names the
    function in the singular matrix's message: tensorinv's at::inverse says "inv".)"""
    x = _square(a, "linalg.inv")
    if x.dtype.char in "eE":
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {type_word(x)}")
    out, info = _solve_checked(x, np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape))
    if out is None:
        info = info.reshape(-1)
        i = int(np.flatnonzero(info)[0])
        where = batch_prefix(x, i)
        raise LinAlgError(f"{_singular}: {where}The diagonal element {int(info[i])} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")
    return apply(INV, _column_major(out), (a,))


def det_backward_array(g: np.ndarray, A: np.ndarray, result: np.ndarray) -> np.ndarray:
    """PyTorch's linalg_det_backward outside create_graph: solve A^T X = (grad * det) I with A's LU,
    whose zero pivots are replaced by the dtype's epsilon (so a singular A gets det's zero gradient)."""
    _, lu, pivots, use_transpose = _det_factors(A)
    n = A.shape[-1]
    diag = np.diagonal(lu, 0, -2, -1)
    lu = lu + np.where(diag == 0, dtypes.finfo(A.dtype).eps, 0).astype(A.dtype)[..., None] * np.eye(n, dtype=A.dtype)
    rhs = np.zeros(A.shape, dtype=A.dtype)
    diagonal_view(rhs, 0, -2, -1)[...] = (g * result)[..., None]
    return _lu_solve(lu, pivots, rhs, adjoint=not use_transpose)


def det_backward(g: Tensor, A: Tensor, result: Tensor) -> Tensor:
    """The same from recorded ops, for create_graph, as PyTorch records it: solve(A^H, diag_embed(grad * det))
    (A must be invertible)."""
    d = shape.unsqueeze(arith.mul(g, result), -1)
    d = shape.transpose(diag_embed(shape.expand(d, result._a.shape + (A._a.shape[-1],))), -2, -1)
    return solve(shape.transpose(A, -2, -1), d)


def _is_vector_rhs(A: np.ndarray, B: np.ndarray) -> bool:
    return B.ndim == 1 or (A.ndim - 1 == B.ndim and B.shape == A.shape[:-1])


_SINGULAR = "torch.linalg.solve: The solver failed because the input matrix is singular."


def solve_array(A: np.ndarray, B: np.ndarray, left=True) -> np.ndarray:
    """X with A X = B (left) or X A = B; B a matrix or a batch of them."""
    if not left:
        return np.swapaxes(_transposed_solve(A, np.swapaxes(B, -1, -2), refuse=True), -1, -2)
    out, _ = _solve_checked(A, B)
    if out is None:
        raise LinAlgError(_SINGULAR)
    return out


def _transposed_solve(A: np.ndarray, G: np.ndarray, refuse: bool) -> np.ndarray:
    """A^T X = G as PyTorch solves it, with A's own LU (an adjoint solve): refused, when `refuse`, only if
    that LU has a zero pivot. Where A^T's LU has none either, the same values as solving A^T directly."""
    try:
        return solve_array(np.swapaxes(A, -1, -2), G)
    except LinAlgError:
        pass
    batch = np.broadcast_shapes(A.shape[:-2], G.shape[:-2])
    lu, pivots, info = lu_factor(np.broadcast_to(A, batch + A.shape[-2:]))
    if refuse and info.any():
        raise LinAlgError(_SINGULAR)
    with np.errstate(all="ignore"):
        return _lu_solve(lu, pivots, np.broadcast_to(G, batch + G.shape[-2:]), adjoint=True)


def _check_rhs(fn: str, x: np.ndarray, b: np.ndarray, left: bool) -> None:
    """PyTorch's checks of a solver's right-hand side B against the square A."""
    if b.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    n = x.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")


@autocast_policy("fp32")
def solve(A: Tensor, B: Tensor, left=True) -> Tensor:
    """torch.linalg.solve (LinalgSolveExBackward0)."""
    _tensor_arg(B, "linalg_solve", "B", 2)
    x, b = A._a, B._a
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.solve: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    if x.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{type_word(x)} and B of type {type_word(b)} instead")
    _square(A, "linalg.solve")
    vector = _is_vector_rhs(x, b)
    b2 = b[..., None] if vector else b
    _check_rhs("linalg.solve", x, b2, left)
    shape.broadcast_shapes(x.shape[:-2], b2.shape[:-2])
    if x.dtype.char in "eE":
        raise _no_half_lu(x)
    out = solve_array(x, b2, left)
    out = np.ascontiguousarray(out[..., 0] if vector else out)
    return apply(SOLVE, out, (A, B), (left, vector), (x, b2))


# --------------------------------------------------------------------------------------- triangular

# Cholesky factors and triangular solves come from LAPACK/MKL in PyTorch (potrf, trsm), whose blocking and
# order of operations are the library's own: gradcli computes them in float64 and rounds float32 results once
# (at least as accurate as the library; docs/numerics.md).

def _column_major(x: np.ndarray) -> np.ndarray:
    """Each matrix of a batch in column-major order, as LAPACK writes its results (strides (1, n))."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


def cholesky_array(x: np.ndarray):
    """The lower Cholesky factor of each matrix of a batch, from its lower triangle alone (LAPACK's potrf
    with uplo 'L'), computed column by column in float64; and `info`, the order of the first leading minor
    that is not positive-definite (a pivot <= 0 or NaN), 0 when none. A float32 matrix's `info` comes from
    spotrf's own steps (_potrf32), so a matrix on the edge of singular is refused as LAPACK refuses it (and
    one float64 would refuse factored as spotrf factors it)."""
    n = x.shape[-1]
    count = int(np.prod(x.shape[:-2], dtype=np.int64))
    a = np.tril(np.asanyarray(x, dtype=np.float64)).reshape((count, n, n))
    info = np.zeros(a.shape[0], dtype=np.int64)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = a[:, j, j] - np.einsum("bk,bk->b", a[:, j, :j], a[:, j, :j])
            info[(info == 0) & ~(d > 0)] = j + 1
            root = np.sqrt(d)
            a[:, j, j] = root
            if j + 1 < n:
                below = a[:, j + 1:, j] - np.einsum("bik,bk->bi", a[:, j + 1:, :j], a[:, j, :j])
                a[:, j + 1:, j] = below / root[:, None]
    if x.dtype == np.float32:
        a32, info32 = _potrf32(np.tril(np.asanyarray(x)).reshape((count, n, n)).copy())
        passed = (info32 == 0) & (info != 0)        # factored in float32 only: its float32 factor
        a[passed] = a32[passed]
        info = info32
    return a.reshape(x.shape).astype(x.dtype), info.reshape(x.shape[:-2])


def pivot32(a_jj, row: np.ndarray):
    """A float32 pivot as spotrf takes it: a_jj less the squares of the row's factor entries, one fused
    multiply-add at a time."""
    from gradcli.engine.fma import fma
    d = np.asanyarray([a_jj], dtype=np.float32)
    for v in row:
        d = fma(np.float32(-v), np.float32(v), d)
    return d[0]


def _potrf32(a: np.ndarray):
    """spotrf on float32 matrices (a: (batch, n, n), overwritten): the factor and info, by LAPACK's unblocked
    steps as the oracle's library rounds them: each pivot a_jj less the squares of the row's factor entries,
    taken off one fused multiply-add at a time in float32 (pivot32), and the column below scaled by the
    pivot's reciprocal (spotf2's SSCAL by ONE / AJJ). A plain float32 product, a division, or float64
    throughout each call some matrices on the edge of singular the other way ([[2.0292315, 1.0937096],
    [1.0937096, 0.58948457]] is refused, its float64 pivot positive; [[3.4940963, -3.7877328], [-3.7877328,
    4.1060462]] passes, its plain float32 one zero). MKL's column is not always that product (one or two
    ulps off in about a quarter of 2 x 2 cases), so a verdict can still differ on such a matrix."""
    from gradcli.engine.fma import fma
    n = a.shape[-1]
    info = np.zeros(a.shape[0], dtype=np.int64)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = a[:, j, j].copy()
            for k in range(j):
                d = fma(-a[:, j, k], a[:, j, k], d)
            info[(info == 0) & ~(d > 0)] = j + 1
            root = np.sqrt(d)
            a[:, j, j] = root
            if j + 1 < n:
                below = a[:, j + 1:, j].copy()
                for k in range(j):
                    below = fma(-a[:, j + 1:, k], a[:, j, k][:, None], below)
                a[:, j + 1:, j] = below * (np.float32(1) / root)[:, None]
    return a, info


def _cholesky(a: Tensor, upper, fn: str, row: Op) -> Tensor:
    upper = _bool_arg(upper, "upper")
    if row is CHOLESKY_LEGACY:     # the kernel's dtype dispatch, then torch.cholesky's warning, then its checks
        _cholesky_dtype(a._a)
        STATE.warn_once("torch.cholesky", "UserWarning", _CHOLESKY_DEPRECATED)
    x = _square(a, fn, floats=row is CHOLESKY)
    _cholesky_dtype(x)
    L, info = cholesky_array(np.swapaxes(x, -1, -2) if upper else x)
    if info.any():
        flat = info.reshape(-1)
        i = int(np.flatnonzero(flat)[0])
        where = batch_prefix(x, i)
        raise LinAlgError(f"{fn}: {where}The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {int(flat[i])} is not positive-definite).")
    out = _column_major(np.swapaxes(L, -1, -2) if upper else L)
    return apply(row, out, (a,), (upper,))


def _cholesky_dtype(x: np.ndarray) -> None:
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{type_word(x)}'")


@autocast_policy("fp32")
def cholesky(A: Tensor, upper=False) -> Tensor:
    """torch.linalg.cholesky (LinalgCholeskyExBackward0)."""
    return _cholesky(A, upper, "linalg.cholesky", CHOLESKY)


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)")


@autocast_policy("fp32")
def cholesky_legacy(a: Tensor, upper=False) -> Tensor:
    """torch.cholesky and Tensor.cholesky (CholeskyBackward0), deprecated with a warning PyTorch gives once."""
    return _cholesky(a, upper, "cholesky", CHOLESKY_LEGACY)


def _bool_arg(value, name: str) -> bool:
    if value.__class__ is not bool:     # (the script's call gets PyTorch's message: engine/signatures.py)
        raise TypeError(f"argument '{name}' must be bool, not {type(value).__name__}")
    return value


def cholesky_inverse_array(x: np.ndarray, upper: bool):
    """(L L^T)^-1 (or (U^T U)^-1) from a triangular factor, as LAPACK's potri computes it: the factor inverted
    in place column by column (trti2), then the product of the inverse with its transpose (lauu2), in float64;
    the other triangle a reflection of the computed one. Also the 1-based index of the first zero on the
    diagonal of each matrix (0 when none)."""
    n = x.shape[-1]
    count = int(np.prod(x.shape[:-2], dtype=np.int64))
    a = np.asanyarray(x, dtype=np.float64).reshape((count, n, n))
    if not upper:                                 # the lower case is the upper one transposed
        a = np.swapaxes(a, -1, -2)
    a = np.triu(a).copy()
    diag = np.diagonal(a, 0, -2, -1)
    info = np.where((diag == 0).any(-1), np.argmax(diag == 0, -1) + 1, 0) if n else np.zeros(count, np.int64)
    with np.errstate(all="ignore"):
        for j in range(n):                        # trti2, upper: column j of the inverse from the columns before
            a[:, j, j] = 1 / a[:, j, j]
            if j:
                a[:, :j, j] = np.einsum("bik,bk->bi", a[:, :j, :j], a[:, :j, j]) * -a[:, j, j, None]
        for i in range(n):                        # lauu2, upper: U U^T, row by row
            if i + 1 < n:
                a[:, :i + 1, i] = np.einsum("bik,bk->bi", a[:, :i + 1, i:], a[:, i, i:])
            else:
                a[:, :i + 1, i] = a[:, :i + 1, i] * a[:, i, i, None]
    full = np.where(np.triu(np.ones((n, n), dtype=bool)), a, np.swapaxes(a, -1, -2))
    return full.reshape(x.shape).astype(x.dtype), info.reshape(x.shape[:-2])


@autocast_policy("fp32")
def cholesky_inverse(L: Tensor, upper=False) -> Tensor:
    """torch.cholesky_inverse (CholeskyInverseBackward0): the inverse of L L^T from its factor."""
    upper = _bool_arg(upper, "upper")
    x = _square(L, "cholesky_inverse", floats=False)
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{type_word(x)}'")
    out, info = cholesky_inverse_array(x, upper)
    if info.any():
        flat = info.reshape(-1)
        i = int(np.flatnonzero(flat)[0])
        where = batch_prefix(x, i)
        raise LinAlgError(f"cholesky_inverse: {where}The diagonal element {int(flat[i])} is zero, the inversion "
                          "could not be completed because the input matrix is singular.")
    return apply(CHOLESKY_INVERSE, _column_major(out), (L,), (upper,))


def solve_triangular_array(A: np.ndarray, B: np.ndarray, upper: bool, left=True, unitriangular=False) -> np.ndarray:
    """X with A X = B (left) or X A = B for triangular A (batches broadcast), read from A's `upper` or lower
    triangle, its diagonal taken as ones when `unitriangular`. Substitution in float64, rounded once to A's
    dtype; a zero on the diagonal gives infinities and NaNs, as trsm does (it never refuses)."""
    dtype = A.dtype
    if not left:                                  # X A = B  <=>  A^T X^T = B^T
        A, B, upper = np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2), not upper
    batch = np.broadcast_shapes(B.shape[:-2], A.shape[:-2])
    n, m = A.shape[-1], B.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    a = np.broadcast_to(A, batch + (n, n)).astype(np.float64).reshape((count, n, n))
    x = np.broadcast_to(B, batch + (n, m)).astype(np.float64).reshape((count, n, m))
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for i in order:
            done = slice(i + 1, n) if upper else slice(0, i)
            row = x[:, i] - np.einsum("bk,bkm->bm", a[:, i, done], x[:, done])
            x[:, i] = row if unitriangular else row / a[:, i, i, None]
    out = x.reshape(batch + (n, m)).astype(dtype)
    return np.swapaxes(out, -1, -2) if not left else out


def solve_triangular(A: Tensor, B: Tensor, *, upper, left=True, unitriangular=False) -> Tensor:
    """torch.linalg.solve_triangular (LinalgSolveTriangularBackward0): the result has A's dtype."""
    _tensor_arg(A, "linalg_solve_triangular", "input", 1)
    _tensor_arg(B, "linalg_solve_triangular", "B", 2)
    x, b = _square(A, "linalg.solve_triangular", floats=False), B._a
    _check_rhs("linalg.solve_triangular", x, b, left)
    batch = shape.broadcast_shapes(b.shape[:-2], x.shape[:-2])
    budget.check_tensor(batch + b.shape[-2:], 8)          # (the substitution works in float64)
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{type_word(x)}'")
    upper, left = _bool_arg(upper, "upper"), _bool_arg(left, "left")
    unitriangular = _bool_arg(unitriangular, "unitriangular")
    b = b.astype(x.dtype, copy=False)
    out = _column_major(solve_triangular_array(x, b, upper, left, unitriangular))
    return apply(SOLVE_TRIANGULAR, out, (A, B), (upper, left, unitriangular), (x, b))


def _solve_triangular_positional(A: Tensor, B: Tensor, upper, left, unitriangular) -> Tensor:
    """solve_triangular for the formulas under create_graph (backmath.TENSOR), which pass flags by position."""
    return solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


# ---------------------------------------------------------------------------------------- diagonals

def diagonal_view(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """numpy's diagonal, writable as PyTorch's diagonal view is. An offset past the matrix (any int64)
    gives the same empty diagonal as the nearest one that is past it (numpy's C int would overflow)."""
    v = np.diagonal(x, max(min(offset, x.shape[dim2]), -x.shape[dim1]), dim1, dim2)
    if x.flags.writeable:
        v.flags.writeable = True
    return v


def diagonal_scatter_array(g: np.ndarray, sizes: tuple, offset: int, dim1: int, dim2: int) -> np.ndarray:
    out = np.zeros(sizes, dtype=g.dtype)
    diagonal_view(out, offset, dim1, dim2)[...] = g
    return out


def _diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(a: Tensor, offset=0, dim1=0, dim2=1) -> Tensor:
    x = a._a
    offset, dim1, dim2 = index_arg(offset), index_arg(dim1), index_arg(dim2)
    if not all(v.__class__ is int or isinstance(v, np.integer) for v in (offset, dim1, dim2)):
        raise TypeError("diagonal() takes ints")      # (the call's argument check words it as PyTorch's parser)
    int64_arg(offset)
    d1, d2 = _diagonal_dims(x.ndim, dim1, dim2)
    sizes = given_dims(x.shape, {"dim1": dim1, "dim2": dim2})
    return shape._view_of(a, diagonal_view(x, offset, d1, d2), DIAGONAL, (sizes, offset, d1, d2))


def diagonal_backward(g: Tensor, sizes: tuple, offset: int, dim1: int, dim2: int) -> Tensor:
    """Zeros of `sizes` with `g` on the diagonal: the gradient of diagonal(), recorded."""
    out = diagonal_scatter_array(g._a, sizes, offset, dim1, dim2)
    return apply(DIAGONAL_BACKWARD, out, (g,), (offset, dim1, dim2))


def _embedded(x: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """Zeros with `x`'s last dim on the diagonal `offset` of dims d1, d2 (checked for size first)."""
    n = (x.shape[-1] if x.ndim else 1) + abs(int64_arg(offset))
    sizes = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        sizes.insert(d, n)
    budget.check_tensor(sizes, x.itemsize)
    out = np.zeros(sizes, dtype=x.dtype)
    diagonal_view(out, offset, d1, d2)[...] = x
    return out


def diag_embed(a: Tensor, offset=0, dim1=-2, dim2=-1) -> Tensor:
    x = a._a
    offset, dim1, dim2 = index_arg(offset), index_arg(dim1), index_arg(dim2)
    int_param(offset, dim1, dim2)       # a bool or a float: the call's argument check words it
    d1, d2 = _diagonal_dims(x.ndim + 1, dim1, dim2)
    return apply(DIAG_EMBED, _embedded(x, offset, d1, d2), (a,), (offset, d1, d2))


def diag(a: Tensor, diagonal=0) -> Tensor:
    """A vector's diagonal matrix (DiagEmbedBackward0), or a matrix's diagonal as a copy."""
    x = a._a
    diagonal = index_arg(diagonal)
    int_param(diagonal)                 # a bool or a float: the call's argument check words it
    if x.ndim == 1:
        return apply(DIAG_EMBED, _embedded(x, diagonal, 0, 1), (a,), (diagonal, 0, 1))
    if x.ndim == 2:
        return apply(DIAG, diagonal_view(x, diagonal, 0, 1).copy(), (a,), (x.shape, diagonal, 0, 1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


@autocast_policy("fp32")
def trace(a: Tensor) -> Tensor:
    x = a._a
    _not_for_bool(x, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype.kind in "iu":
        out = np.asanyarray(np.trace(x, dtype=np.int64))
    else:
        # PyTorch's trace_cpu: one running sum along the diagonal in the accumulation type (double for float,
        # float for half), rounded once; numpy's add.accumulate adds in that order (its sum would pair)
        diagonal = np.diagonal(x).astype(np.float32 if x.dtype.char in "eE" else np.float64)
        total = np.add.accumulate(diagonal)[-1] if diagonal.size else diagonal.dtype.type(0)
        out = np.asanyarray(total.astype(x.dtype))
    return apply(TRACE, out, (a,), (x.shape,))


# ---------------------------------------------------------------------------------------- torch.linalg

def _size_list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _bool_keepdim(keepdim) -> None:
    if keepdim.__class__ is not bool:   # (the script's call gets PyTorch's message: engine/signatures.py)
        raise TypeError(f"argument 'keepdim' must be bool, not {type(keepdim).__name__}")


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim=False, dtype=None) -> Tensor:
    _bool_keepdim(keepdim)
    if A._a.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    if ord == "fro":
        if A._a.dtype.kind not in "fcV":
            raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                               f"Got {type_word(A._a)}")
        # PyTorch's matrix_norm wraps the dims before its vector norm (its node shows them so)
        return reduce.vector_norm(A, 2, tuple(wrap_dim(d, A._a.ndim) for d in dims), keepdim, dtype)
    if not (ord == "nuc" or (not isinstance(ord, str) and ord in (2, -2, 1, -1, float("inf"), float("-inf")))):
        shown = ord if isinstance(ord, str) else f"{float(ord):g}"      # the order as a double, as C++ prints it
        raise RuntimeError(f"linalg.matrix_norm: Order {shown} not supported.")
    if A._a.dtype.kind not in "fcV":
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                           f"Got {type_word(A._a)}")
    d0, d1 = (wrap_dim(d, A._a.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if A._a.size == 0 and (ord == "nuc" or ord > 0):      # (a negative order's amin refuses the empty dim)
        kept = [1 if k in (d0, d1) else n for k, n in enumerate(A._a.shape) if keepdim or k not in (d0, d1)]
        return Tensor(np.zeros(tuple(kept), np.dtype(dtype.name) if dtype is not None else A._a.dtype))
    if ord == "nuc" or abs(ord) == 2:
        return _spectral_norm(A, ord, d0, d1, keepdim, dtype)
    if abs(ord) == float("inf"):            # the largest row sum: the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    column_sums = reduce.vector_norm(A, 1.0, (d0,), keepdim, dtype)
    return (reduce.amax if ord > 0 else reduce.amin)(column_sums, d1, keepdim)


def _spectral_norm(A: Tensor, ord, d0: int, d1: int, keepdim: bool, dtype) -> Tensor:
    """matrix_norm for ord 2, -2 and 'nuc', from the singular values of A with the two dims moved last (PyTorch's
    permute, recorded even when it moves nothing), put back in place when keepdim."""
    permutation = [k for k in range(A._a.ndim) if k not in (d0, d1)] + [d0, d1]
    if dtype is not None:
        A = A.to(dtype)
    S = svdvals(shape.permute(A, permutation))
    if ord == "nuc":
        result = reduce.reduce_sum(S, -1, keepdim)
    else:
        result = (reduce.amax if ord > 0 else reduce.amin)(S, -1, keepdim)
    if keepdim:
        reverse = [permutation.index(k) for k in range(len(permutation))]
        result = shape.permute(shape.unsqueeze(result, -1), reverse)
    return result


def norm(A: Tensor, ord=None, dim=None, keepdim=False, dtype=None) -> Tensor:
    """torch.linalg.norm: a vector norm, or a matrix norm when `ord` is given for two dims."""
    _bool_keepdim(keepdim)
    x = A._a
    dims = None if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if isinstance(ord, str):
        if dims is not None and len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {_size_list(dims)}")
        if dims is None and x.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {x.ndim}D.")
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype)
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {_size_list(dims)}")
    elif ord is not None and x.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {x.ndim}D.")
    if ord is not None and (len(dims) == 2 if dims is not None else x.ndim == 2):
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype)
    return reduce.vector_norm(A, 2.0 if ord is None else ord, dims, keepdim, dtype)


# ------------------------------------------------------------------------------------- tensordot, kron
# Both are compositions in PyTorch (C++ CompositeImplicitAutograd kernels), built here from the same ops in
# the same order, so their grad_fn chains and bits are PyTorch's: tensordot permutes each input (contracted
# dims last in the first, first in the second), reshapes both to matrices, mm, reshapes the result; kron
# multiplies size-1-interleaved views of its inputs and views the product as the result.

_TENSORDOT_DIMS = ("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                   "containing two lists, but got dims={}")


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """torch.tensordot (Python in PyTorch: its argument handling, then the C++ contraction)."""
    if out is not None:     # given by position: where the compiler sends a keyword out= (gradcli.engine.outarg)
        from gradcli.engine import outarg
        return outarg.call("torch.tensordot", "tensordot", "tensor", tensordot, (a, b, dims), {}, out)
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(_TENSORDOT_DIMS.format(dims))
    if isinstance(dims, (tuple, list)):
        if len(dims) != 2:
            raise ValueError(f"{'too many' if len(dims) > 2 else 'not enough'} values to unpack (expected 2"
                             f"{'' if len(dims) > 2 else f', got {len(dims)}'})")
        dims_a, dims_b = dims
    elif dims.__class__ is Tensor:
        if dims._a.size > 1:
            if dims._a.shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims._a.shape[0]}")
            dims_a, dims_b = dims._a[0].tolist(), dims._a[1].tolist()
        else:
            count = int(dims._a.reshape(-1)[0])
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    else:
        ndims = []
        for x in (a, b):
            if x.__class__ is not Tensor:
                raise AttributeError(f"'{type(x).__name__}' object has no attribute 'dim'")
            ndims.append(x._a.ndim)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndims):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    return _tensordot(a, b, _dim_list(dims_a, "dims_self", 3), _dim_list(dims_b, "dims_other", 4))


def _dim_list(dims, arg: str, position: int) -> list:
    """An int list argument of the C++ tensordot, as its parser reads one."""
    if isinstance(dims, int) and not isinstance(dims, bool) or not isinstance(dims, (tuple, list)):
        from gradcli.engine.signatures import type_name
        raise TypeError(f"tensordot(): argument '{arg}' (position {position}) must be tuple of ints, not "
                        f"{type_name(dims)}")
    out = []
    for d in dims:
        d = index_arg(d)
        if not isinstance(d, int):
            from gradcli.engine.signatures import type_name
            if out:         # the parser took the list for an int list by its first element: later ones fail to unpack
                raise TypeError(f"tensordot(): argument '{arg}' failed to unpack the object at pos {len(out) + 1} "
                                f"with error \"type must be tuple of ints,but got {type_name(d)}\"")
            raise TypeError(f"tensordot(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type_name(d)} at pos 0")
        out.append(int(d))
    return out


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    for name, x, position in (("self", a, 1), ("other", b, 2)):
        if x.__class__ is not Tensor:
            raise TypeError(f"tensordot(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(x).__name__}")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._a.dtype != b._a.dtype:
        raise RuntimeError("both inputs should have same dtype")
    contracted = 1
    t1, t2 = a, b
    for da, db in zip(dims_a, dims_b):
        s1 = a._a.shape[wrap_dim(da, a._a.ndim)]
        s2 = b._a.shape[wrap_dim(db, b._a.ndim)]
        if s2 == 1:                 # a broadcast dim is summed right away
            t1 = reduce.reduce_sum(t1, da, True, _dtype_of(t1))
        elif s1 == 1:
            t2 = reduce.reduce_sum(t2, db, True, _dtype_of(t2))
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {da} and "
                                   f"second has size {s2} in dim {db}")
            contracted *= s1
    kept_a = _kept_dims(dims_a, a._a.ndim)
    kept_b = _kept_dims(dims_b, b._a.ndim)
    size_a = int(np.prod([t1._a.shape[i] for i in kept_a], dtype=np.int64))
    size_b = int(np.prod([t2._a.shape[i] for i in kept_b], dtype=np.int64))
    sizes = [t1._a.shape[i] for i in kept_a] + [t2._a.shape[i] for i in kept_b]
    m1 = shape.reshape(shape.permute(t1, *kept_a, *dims_a), size_a, contracted)
    m2 = shape.reshape(shape.permute(t2, *dims_b, *kept_b), contracted, size_b)
    return shape.reshape(mm(m1, m2), *sizes)


def _dtype_of(t: Tensor):
    from gradcli.engine import dtypes
    return dtypes.of_array(t._a)


def _kept_dims(dims: list, ndim: int) -> list:
    """The dims not contracted, in order (dim_list_to_bitset: each contracted dim once)."""
    seen = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return [i for i in range(ndim) if i not in seen]


def kron(input, other, _first: int = 1) -> Tensor:
    """torch.kron: a's dims interleaved with size-1 dims, b's likewise the other way, multiplied (a broadcast
    product) and viewed as the result: UnsafeViewBackward0 over MulBackward0 over two UnsafeViewBackward0.
    `_first`: the input's position in PyTorch's argument errors (0 for the method)."""
    for name, x, position in (("input", input, _first), ("other", other, _first + 1)):
        if x.__class__ is not Tensor:
            raise TypeError(f"kron(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")
    a, b = input, other
    x, y = a._a, b._a
    n = max(x.ndim, y.ndim)
    xs = (1,) * (n - x.ndim) + x.shape
    ys = (1,) * (n - y.ndim) + y.shape
    a_shape = tuple(v for s in xs for v in (s, 1))
    b_shape = tuple(v for s in ys for v in (1, s))
    product = arith.mul(_unsafe_view(a, a_shape), _unsafe_view(b, b_shape))
    return _unsafe_view(product, tuple(p * q for p, q in zip(xs, ys)))


def _unsafe_view(a: Tensor, size: tuple) -> Tensor:
    """at::_unsafe_view: view's strides (and its error where there are none), recorded as UnsafeViewBackward0."""
    out = shape._nocopy_reshape(a._a, size)
    if out is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(shape.UNSAFE_VIEW, out, (a,), (a._a.shape,))


# ------------------------------------------------------------------------------------------------ cdist
# torch.cdist: PyTorch's own distance kernel (_cdist_forward, CdistBackward0) for every p, except p = 2 with
# more than 25 rows on a side (or compute_mode='use_mm_for_euclid_dist'), where it computes the distances
# from one matrix product (_euclidean_dist, EuclideanDistBackward0) as PyTorch does.

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}
_no_tangent = forward.no_tangent

def _no_derivative(F, g):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


def _cdist_rows(x: np.ndarray, y: np.ndarray, p: float) -> np.ndarray:
    """The kernel's distances of every row of x (b, r1, m) to every row of y (b, r2, m), in x's dtype: per
    pair a running sum over the m features from 0 (|a - b| mapped by p), then finished. As the compiler
    builds it, the squares of p = 2 are added unfused in groups of 4 floats (2 doubles) and the last
    m % 4 (m % 2) fused into the sum."""
    t = x.dtype.type
    m = x.shape[-1]
    agg = np.zeros((x.shape[0], x.shape[1], y.shape[1]), x.dtype)
    pv = np.full(agg.shape, t(p)) if p not in (0, 1, 2, np.inf) else None
    unfused = m - m % (4 if x.dtype == np.float32 else 2)
    for k in range(m):          # one feature at a time: (b, r1, r2) arrays, never (b, r1, r2, m)
        v = np.abs(x[:, :, None, k] - y[:, None, :, k])
        if p == 2:
            agg = agg + v * v if k < unfused else fma(v, v, agg)
        elif p == np.inf:
            agg = np.where(agg < v, v, agg)         # std::max(agg, v) from 0: a nan difference is passed over
        elif p == 0:
            agg = agg + np.minimum(np.ceil(v), t(1))
        elif p == 1:
            agg = agg + v
        else:
            agg = agg + elementary.pow(v, pv)
    if p == 2:
        return np.sqrt(agg)
    if p == 0 or p == 1 or p == np.inf:
        return agg
    # pow(agg, 1.0 / p): a double exponent, so the float result comes from double pow
    return np.power(agg.astype(np.float64), 1.0 / float(t(p))).astype(x.dtype)


def _cdist_backward_array(g: np.ndarray, x: np.ndarray, y: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    """_cdist_backward's kernel: for each row of x, the sum over y's rows (in order, from 0) of p's term."""
    t = x.dtype.type
    out = np.zeros(x.shape, x.dtype)
    if p == 0 or not x.size or not y.size:
        return out
    pv = t(p)
    for j in range(y.shape[-2]):
        diff = x - y[:, j:j + 1, :]                     # (b, r1, m)
        gj = g[:, :, j:j + 1]
        dj = dist[:, :, j:j + 1]
        if p == 1:
            term = gj * np.sign(diff)
        elif p == 2:
            term = np.where(dj == 0, t(0), gj * diff / dj)
        elif p == np.inf:
            term = gj * np.sign(diff) * (t(1) - np.minimum(t(1), np.ceil(np.abs(np.abs(diff) - dj))))
        elif p < 2:
            term = np.where(dj == 0, t(0), np.sign(diff) * elementary.pow(np.abs(diff), np.full(diff.shape, pv - t(1)))
                            * gj / elementary.pow(dj, np.full(dj.shape, pv - t(1))))
            if p < 1:
                term = np.where(diff == 0, t(0), term)
        else:
            term = np.where(dj == 0, t(0), diff * elementary.pow(np.abs(diff), np.full(diff.shape, pv - t(2))) * gj
                            / elementary.pow(dj, np.full(dj.shape, pv - t(1))))
        out = out + term
    return out


def _batched(x: np.ndarray, batch: tuple) -> np.ndarray:
    """x with its batch dims broadcast to `batch` and folded into one, as a contiguous (b, r, m) array."""
    return np.ascontiguousarray(np.broadcast_to(x, batch + x.shape[-2:]).reshape((-1,) + x.shape[-2:]))


def _cdist_grad(g, x, y, p, dist):
    """_cdist_backward(grad, x, y, p, dist): the gradient for x, with the broadcast batch dims (the engine sums
    them back to x's shape)."""
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    xb, yb = _batched(x, batch), _batched(y, batch)
    shape = batch + x.shape[-2:]
    if not xb.size or not yb.size or not x.shape[-1]:
        return np.zeros(shape, x.dtype)
    gb = np.ascontiguousarray(g).reshape(xb.shape[0], xb.shape[1], yb.shape[1])
    db = np.ascontiguousarray(dist).reshape(gb.shape)
    return _cdist_backward_array(gb, xb, yb, p, db).reshape(shape)


def _cdist_x1(F, g, x1, x2, p, result):
    if not F.tensors:
        return _cdist_grad(g, x1, x2, p, result)
    return apply(CDIST_BACKWARD, _cdist_grad(g._a, x1._a, x2._a, p, result._a), (g, x1, x2, result))


def _cdist_x2(F, g, x1, x2, p, result):
    """_cdist_backward(grad.mT().contiguous(), x2, x1, p, result.mT().contiguous())."""
    if not F.tensors:
        return _cdist_grad(np.swapaxes(g, -1, -2), x2, x1, p, np.swapaxes(result, -1, -2))
    gt = shape.contiguous(shape.transpose(g, -1, -2))
    rt = shape.contiguous(shape.transpose(result, -1, -2))
    return apply(CDIST_BACKWARD, _cdist_grad(gt._a, x2._a, x1._a, p, rt._a), (gt, x2, x1, rt))


def _euclidean_ratio(F, g, result):
    """grad / res, 0 where res is 0 (masked_fill_)."""
    return F.masked_zero(g / result, result == 0)


def _euclidean_x1(F, g, x1, x2, result):
    """x1 * ratio.sum(-1, true) - ratio.matmul(x2)."""
    ratio = _euclidean_ratio(F, g, result)
    nd = (x1._a if F.tensors else x1).ndim
    return x1 * F.sum_dims(ratio, nd - 1, True) - F.matmul(ratio, x2)


def _euclidean_x2(F, g, x1, x2, result):
    """x2 * ratio.sum(-2, false).unsqueeze(-1) - ratio.mT().matmul(x1)."""
    ratio = _euclidean_ratio(F, g, result)
    nd = (x1._a if F.tensors else x1).ndim
    return x2 * F.unsqueeze_dims(F.sum_dims(ratio, nd - 2, False), (nd - 1,)) - F.matmul(F.mT(ratio), x1)


# fmt: off
CDIST          = Op("CdistBackward0",          None, ("x1", "x2", "p", "result"), (_cdist_x1, _cdist_x2),
                    inputs=("x1", "x2"), fits=True, quiet=True, jvp=_no_tangent("_cdist_forward"))
CDIST_BACKWARD = Op("CdistBackwardBackward0",  None, (), (_no_derivative,) * 4,
                    inputs=("grad", "x1", "x2", "cdist"), quiet=True, jvp=_no_tangent("_cdist_backward"))
EUCLIDEAN_DIST = Op("EuclideanDistBackward0",  None, ("x1", "x2", "result"), (_euclidean_x1, _euclidean_x2),
                    inputs=("x1", "x2"), quiet=True, jvp=_no_tangent("_euclidean_dist"))
# fmt: on


@autocast_policy("fp32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """torch.cdist: the p-norm distance between each row of x1 and each row of x2 (batch dims broadcast)."""
    _tensor_arg(x1, "cdist", "x1", 1)
    _tensor_arg(x2, "cdist", "x2", 2)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    from gradcli.engine.recording import number_arg
    p = float(number_arg(p, "cdist", "p", 3, word="float"))
    mode = _CDIST_MODES[compute_mode]
    a, b = x1._a, x2._a
    for name, x in (("X1", a), ("X2", b)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    for name, x in (("X1", a), ("X2", b)):
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {type_word(x)}")
    if not p >= 0:                      # (NaN too)
        raise RuntimeError("cdist only supports non-negative p values")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({a.shape[-3]}) must match the size of tensor b ({b.shape[-3]}) at "
                           f"non-singleton dimension {len(np.broadcast_shapes(a.shape[:-3], b.shape[:-3]))}") from None
    r1, r2, m = a.shape[-2], b.shape[-2], a.shape[-1]
    out_shape = batch + (r1, r2)
    budget.check_tensor(out_shape, a.itemsize)
    product = int(np.prod(batch, dtype=np.int64))
    if a.size and b.size and p == 2 and (mode == 1 or mode == 0 and (r1 > 25 or r2 > 25)):
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cxx(a)} != {_cxx(b)}")
        if product != 1:        # expand, contiguous, view: PyTorch's steps
            x1 = shape.view(shape.contiguous(shape.expand(x1, *batch, r1, m)), product, r1, m)
            x2 = shape.view(shape.contiguous(shape.expand(x2, *batch, r2, m)), product, r2, m)
        return shape.view(_euclidean_dist(x1, x2), *out_shape)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_word(a)} but found {_word(b)}")
    if a.dtype.char in "eE":
        raise NotImplementedError(f"\"cdist\" not implemented for '{type_word(a)}'")
    if not r1 or not r2 or not product:
        out = np.empty(out_shape, a.dtype)
    elif not m:
        out = np.zeros(out_shape, a.dtype)
    else:
        out = _cdist_rows(_batched(a, batch), _batched(b, batch), p).reshape(out_shape)
    return apply(CDIST, out, (x1, x2), (p,))


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    """_euclidean_dist: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped to 0 (a rounding below it), square-rooted."""
    a, b = x1._a, x2._a
    t = a.dtype.type
    na = sum_array(a * a, (a.ndim - 1,), True)
    nb = sum_array(b * b, (b.ndim - 1,), True)
    left = np.concatenate([a * t(-2), na, np.ones_like(na)], -1)
    right = np.concatenate([b, np.ones_like(nb), nb], -1)
    out = matprod(left, np.swapaxes(right, -1, -2))
    out = np.sqrt(np.maximum(out, t(0)))
    return apply(EUCLIDEAN_DIST, np.ascontiguousarray(out), (x1, x2))


def _word(x: np.ndarray) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}[x.dtype.name]


def _cxx(x: np.ndarray) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}[x.dtype.name]


# ------------------------------------------------------------------------------------ matrix powers, chains
# matrix_power, multi_dot and chain_matmul are compositions in PyTorch (C++ CompositeImplicitAutograd),
# built here from the same ops in the same order, so their grad_fn chains and bits are PyTorch's.

def _int_arg(value, fn: str, name: str, position: int) -> int:
    if value.__class__ is not int and not isinstance(value, np.integer):
        from gradcli.engine.signatures import type_name
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not {type_name(value)}")
    return int(value)


def matrix_power(A: Tensor, n) -> Tensor:
    """torch.linalg.matrix_power: the identity copied into a clone for n = 0, a clone for n = 1; else A (its
    inverse for n < 0) multiplied by matmul: A A, (A A) A, then square-and-multiply over n's bits from the
    lowest (result @ z where a bit is set, z @ z at each step)."""
    _tensor_arg(A, "linalg_matrix_power", "input", 1)
    n = _int_arg(n, "linalg_matrix_power", "n", 2)
    x = _square(A, "linalg.matrix_power", floats=False)
    if n == 0:
        eye = Tensor(np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape))
        return elementwise.copy(arith.contiguous_clone(A), eye)
    if n == 1:
        return arith.contiguous_clone(A)
    if n < 0:
        A, n = inverse(A), -n
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def multi_dot(tensors) -> Tensor:
    """torch.linalg.multi_dot: a first 1-D tensor as a row, a last as a column (unsqueezed), the chain
    multiplied with mm in the cheapest order (PyTorch's cost comparison for three, (A B) C on a tie; its
    dynamic programme for more, the first split winning a tie), viewed as the result's shape (ViewBackward0)."""
    tensors = shape._tensor_list(tensors, "linalg_multi_dot")
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    chain, out_shape = list(tensors), []
    first, last = tensors[0]._a.ndim, tensors[-1]._a.ndim
    if first == 1:
        chain[0] = shape.unsqueeze(tensors[0], 0)
    elif first == 2:
        out_shape.append(tensors[0]._a.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last == 1:
        chain[-1] = shape.unsqueeze(tensors[-1], -1)
    elif last == 2:
        out_shape.append(tensors[-1]._a.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if tensors[i]._a.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i]._a.ndim}D")
    dtype = chain[0]._a.dtype
    for i in range(1, n):
        if chain[i]._a.dtype != dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{cxx_type(dtype)} and tensor {i} {cxx_type(chain[i]._a.dtype)}")
        if chain[i - 1]._a.shape[-1] != chain[i]._a.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {_size_list(tensors[i - 1]._a.shape)}"
                               f" and {_size_list(tensors[i]._a.shape)} cannot be multiplied")
    if n == 2:
        out = mm(chain[0], chain[1])
    elif n == 3:
        a, b = chain[0]._a.shape
        c, d = chain[2]._a.shape[0], chain[2]._a.shape[1]
        if b * d * (a + c) < a * c * (b + d):       # A (B C) only when strictly cheaper
            out = mm(chain[0], mm(chain[1], chain[2]))
        else:
            out = mm(mm(chain[0], chain[1]), chain[2])
    else:
        out = _chain_product(chain, _chain_order(chain), 0, n - 1)
    return shape.view(out, *out_shape)


def _chain_order(chain: list) -> list:
    """The matrix-chain dynamic programme: split[i][j], where the product of chain[i..j] is cut."""
    n = len(chain)
    p = [chain[0]._a.shape[0]] + [t._a.shape[1] for t in chain]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(chain: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return chain[i]
    k = split[i][j]
    return mm(_chain_product(chain, split, i, k), _chain_product(chain, split, k + 1, j))


_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use torch.linalg.multi_dot "
    "instead, which accepts a list of two or more tensors rather than multiple parameters. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1102.)")


def chain_matmul(*matrices) -> Tensor:
    """torch.chain_matmul (deprecated, warned once per process): multi_dot of two or more matrices, a clone of one."""
    for i, t in enumerate(matrices):
        if t.__class__ is not Tensor:
            from gradcli.engine.signatures import type_name
            raise TypeError(f"chain_matmul(): argument 'matrices' (position 1) must be tuple of Tensors, not "
                            f"{type_name(t)}")
    STATE.warn_once("torch.chain_matmul", "UserWarning", _CHAIN_MATMUL_DEPRECATED)
    for t in matrices:
        if t._a.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._a.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return arith.clone(matrices[0])
    return multi_dot(list(matrices))


# ------------------------------------------------------------------------------------------ slogdet, logdet

def _slogdet_grads(F, g, A, LU, pivots, sign, transposed):
    """slogdet_backward: the sign's gradient is ignored (real input); logabsdet's is g A^-T, solved with the
    forward's LU (a zero pivot gives infinities, as LAPACK's solve does), or, under create_graph, as
    linalg.solve(A^T, diag_embed(g))."""
    g = g.grads[1] if g.__class__ is OutputGrads else None
    if g is None:
        return None
    if F.tensors:
        n = A._a.shape[-1]
        d = diag_embed(shape.expand(shape.unsqueeze(g, -1), *(g._a.shape + (n,))))
        return solve(shape.transpose(A, -2, -1), d)
    rhs = np.zeros(A.shape, dtype=A.dtype)
    diagonal_view(rhs, 0, -2, -1)[...] = np.asanyarray(g)[..., None]
    with np.errstate(all="ignore"):
        return _lu_solve(LU, np.asanyarray(pivots, np.int64) - 1, rhs, adjoint=not transposed)


def _slogdet_jvp(F, ts, xs, result, output, LU, pivots, transposed):
    """slogdet_jvp: the sign's tangent is zeros; logabsdet's is trace(A^-1 A_t), solved with the forward's LU."""
    if output == 0:
        return Tensor(np.zeros_like(result._a))
    A = xs[0]._a
    dA = np.broadcast_to(ts[0]._a, A.shape)
    with np.errstate(all="ignore"):
        solved = Tensor(np.ascontiguousarray(_lu_solve(LU, np.asanyarray(pivots, np.int64) - 1, dA, adjoint=transposed)))
    return reduce.reduce_sum(diagonal(solved, 0, -2, -1), -1)


# fmt: off
SLOGDET = Op("LinalgSlogdetBackward0", None, ("A", "LU", "pivots", "sign", "transposed"), (_slogdet_grads,),
             inputs=("A",), quiet=True, jvp=_slogdet_jvp)
# fmt: on


def _check_lapack_float(x: np.ndarray, fn: str) -> None:
    """checkFloatingOrComplex without low precision: PyTorch's words for an integer or a half tensor."""
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    if x.dtype.char in "eE":
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {type_word(x)}")


def slogdet(A: Tensor, _name: str = "linalg_slogdet") -> tuple:
    """torch.linalg.slogdet (and torch.slogdet, `_name` its result's kind): the sign of det(A) and log|det(A)|
    from det's LU (of A^T when A is row-major): the product of the signs of U's diagonal times the
    permutation's sign, and the sum of the logs of its magnitudes. One node, two outputs."""
    x = _square(A, "linalg.slogdet", floats=False)
    _check_lapack_float(x, "linalg.slogdet")
    lu, pivots, parity, transposed = _det_lu(x)
    d = np.diagonal(lu, 0, -2, -1)
    signs = np.where(np.isnan(d), x.dtype.type(0), np.sign(d))       # (PyTorch's sgn of NaN is 0)
    sign = np.asanyarray(_diagonal_product(signs, x.dtype) * parity, dtype=x.dtype)
    with np.errstate(divide="ignore"):
        logs = elementary.log(np.abs(d))
    logabsdet = np.asanyarray(sum_array(logs, (logs.ndim - 1,), False), dtype=x.dtype)
    pivots32 = (pivots + 1).astype(np.int32)
    return _outputs(SLOGDET, _name, (sign, logabsdet), A, {"LU": lu, "pivots": pivots32, "transposed": transposed},
                    ("sign", "logabsdet"))


def _outputs(op: Op, kind: str, outs: tuple, a: Tensor, args: dict, fields: tuple) -> tuple:
    """The results of a one-input node with several outputs, as torch.return_types.<kind> (or the tuple of them
    when `kind` is None): one node when grad mode records and `a` requires grad, saving by the row's names `a`,
    the results named in `fields` (version-checked) and the forward's other values in `args`; each result's
    tangent in forward mode (the row's jvp receives the output's number, then `args` in the row's order)."""
    results = tuple(Tensor(o) for o in outs)
    rest = tuple(args[name] for name in op.saves if name not in fields and name not in op.inputs)
    if STATE.recording and a.requires_grad:
        saved = tuple(a if name in op.inputs else Out(outs[fields.index(name)]) if name in fields else args[name]
                      for name in op.saves)
        reduce.record_outputs(op, results, a, saved, tuple(fields.index(n) for n in op.saves if n in fields))
    if STATE.fw_level is not None:
        for k, r in enumerate(results):
            forward.propagate(op, r, (a,), (k, *rest))
    return results if kind is None else reduce.ReturnTypes(kind, *results)


def logdet(A: Tensor) -> Tensor:
    """torch.logdet: slogdet's logabsdet, NaN where the sign is -1 (WhereBackward0)."""
    x = A._a
    if x.ndim < 2:
        raise RuntimeError("logdet: The input tensor A must have at least 2 dimensions.")
    _square(A, "logdet", floats=False)
    _check_lapack_float(x, "logdet")
    sign, logabsdet = slogdet(A)
    return elementwise.where(arith.compare(np.equal, sign, -1.0), float("nan"), logabsdet)


# ------------------------------------------------------------------------------------------------ matrix_exp
# PyTorch's mexp (Bader, Blanes and Casas 2019): a Taylor polynomial of degree 1, 2, 4, 8 or 12 chosen by
# the 1-norm of a single matrix, else degree 18 after scaling by 2^-s and squaring s times (always for a
# batch of several). Each step is the same array operation in the same order as PyTorch's: the powers by
# matprod (its products), the linear combinations as its kernel sums them (term by term from zero, unfused), the sums over the powers by PyTorch's sum. The choice depends on the norm alone, so the
# result is reproducible; float16 is refused (PyTorch reads its coefficients there as the wrong type).

_MEXP_THETAS = {np.dtype(np.float32): (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                       5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00),
                np.dtype(np.float64): (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                       4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00)}
_T12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))
_T18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def _mexp_powers(a: np.ndarray, count: int) -> list:
    """The first `count` of I, A, A^2, A^3 = A A^2, A^6 = A^3 A^3."""
    powers = [np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy(), a]
    if count > 2:
        powers.append(matprod(a, a))
    if count > 3:
        powers.append(matprod(a, powers[2]))
    if count > 4:
        powers.append(matprod(powers[3], powers[3]))
    return powers


def _mexp_combination(powers: list, coefficients) -> np.ndarray:
    """sum_j c_j P_j as PyTorch's kernel computes it: out += P_j * c_j from zero, c_j in the dtype."""
    t = powers[0].dtype.type
    out = np.zeros_like(powers[0])
    for p, c in zip(powers, coefficients):
        out = out + p * t(c)
    return out


def _mexp_sum(powers: list) -> np.ndarray:
    return np.asanyarray(sum_array(np.stack(powers), (0,), False), dtype=powers[0].dtype)


def _mexp_t1(a):
    return _mexp_sum(_mexp_powers(a, 2))


def _mexp_t2(a):
    powers = _mexp_powers(a, 3)
    powers[2] = powers[2] / powers[2].dtype.type(2)
    return _mexp_sum(powers)


def _mexp_t4(a):
    powers = _mexp_powers(a, 3)
    powers.append(matprod(powers[2], _mexp_combination(powers, (1 / 2.0, 1 / 6.0, 1 / 24.0))))
    return _mexp_combination(powers, (1.0, 1.0, 0.0, 1.0))


def _mexp_t8(a):
    t = a.dtype.type
    sqrt_177 = t(0.1330413469565007072504e+2)
    x3 = t(2. / 3.)
    # each constant a double expression of the dtype's sqrt_177 and x3, rounded to the dtype
    x1 = t(float(x3) * ((1. + float(sqrt_177)) / 88.))
    x2 = t(float(x3) * ((1. + float(sqrt_177)) / 352.))
    x4 = t((-271. + 29. * float(sqrt_177)) / (315. * float(x3)))
    x5 = t((-11. + 11. * float(sqrt_177)) / (1260. * float(x3)))
    x6 = t((-99. + 11. * float(sqrt_177)) / (5040. * float(x3)))
    x7 = t((89. - float(sqrt_177)) / (5040. * float(x3)))
    y2 = t((857. - 58. * float(sqrt_177)) / 630.)
    powers = _mexp_powers(a, 3)
    powers.append(matprod(powers[2], _mexp_combination(powers[1:3], (x1, x2))))
    powers.append(matprod(_mexp_combination(powers[2:4], (x3, 1.0)), _mexp_combination(powers[0:4], (x4, x5, x6, x7))))
    return _mexp_combination(powers, (1.0, 1.0, y2, 0.0, 1.0))


def _mexp_t12(a):
    powers = _mexp_powers(a, 4)
    b = [_mexp_combination(powers, row) for row in _T12]
    b[2] = b[2] + matprod(b[3], b[3])
    b[1] = b[1] + b[2]
    return b[0] + matprod(b[1], b[2])


def _mexp_t18(a):
    powers = _mexp_powers(a, 5)
    b = [_mexp_combination(powers, row) for row in _T18]
    b[3] = b[3] + matprod(b[0], b[4])
    b[2] = b[2] + b[3]
    return b[1] + matprod(b[2], b[3])


def _mexp_scale_square(a: np.ndarray, norm: np.ndarray, theta) -> np.ndarray:
    """Degree 18 of A 2^-s, squared s times, s = ceil(log2(norm / theta)) clamped at 0 (NaN where s is not
    finite, which PyTorch's int64 conversion of it leaves meaningless)."""
    t = a.dtype.type
    with np.errstate(all="ignore"):
        s = np.maximum(np.ceil(np.log2(norm / t(theta))), t(0))
        finite = np.isfinite(s)
        s = np.where(finite, s, 0)
        scaled = a * np.power(t(2), -s)[:, None, None]
        out = _mexp_t18(scaled)
    for i in range(out.shape[0]):
        if not finite[i]:
            out[i] = np.nan
            continue
        m = out[i]
        for _ in range(int(s[i])):
            m = matprod(m, m)
        out[i] = m
    return out


def matrix_exp_array(x: np.ndarray) -> np.ndarray:
    """exp of each square matrix of a batch, as PyTorch's linalg_matrix_exp computes it."""
    n = x.shape[-1]
    if n == 0:
        return x.copy()
    if n == 1:
        return elementary.exp(x)
    a = np.ascontiguousarray(x).reshape((-1, n, n))
    thetas = _MEXP_THETAS[a.dtype]
    t = a.dtype.type
    norm = np.asanyarray(sum_array(np.abs(a), (1,), False), dtype=a.dtype).max(-1)
    if a.shape[0] > 1:
        return _mexp_scale_square(a, norm, thetas[-1]).reshape(x.shape)
    out = np.full(a.shape, np.nan, dtype=a.dtype)
    degrees = (_mexp_t1, _mexp_t2, _mexp_t4, _mexp_t8, _mexp_t12)
    with np.errstate(invalid="ignore"):
        for i, compute in enumerate(degrees):
            lower = t(-1) if i == 0 else t(thetas[i - 1])
            chosen = np.flatnonzero((lower < norm) & (norm <= t(thetas[i])))
            if chosen.size:
                out[chosen] = compute(a[chosen])
        large = np.flatnonzero(norm >= t(thetas[-2]))
    if large.size:
        out[large] = _mexp_scale_square(a[large], norm[large], thetas[-1])
    return out.reshape(x.shape)


def _matrix_exp_differential(F, A, E, adjoint: bool):
    """PyTorch's linalg_matrix_exp_differential: exp of the block matrix [[B, E], [0, B]] (B = A^T for the
    adjoint, A otherwise), its top-right block. Recorded (create_graph, tangents) as PyTorch builds it: zeros,
    the three blocks copied into narrowed views, matrix_exp, two narrows."""
    if not F.tensors:
        B = np.swapaxes(A, -1, -2) if adjoint else A
        n = B.shape[-1]
        meta = np.zeros(B.shape[:-2] + (2 * n, 2 * n), dtype=E.dtype)
        meta[..., :n, :n] = B
        meta[..., n:, n:] = B
        meta[..., :n, n:] = E
        return np.ascontiguousarray(matrix_exp_array(meta)[..., :n, n:])
    B = shape.transpose(A, -2, -1) if adjoint else A
    n = B._a.shape[-1]
    meta = Tensor(np.zeros(B._a.shape[:-2] + (2 * n, 2 * n), dtype=E._a.dtype))
    for rows, cols, block in ((0, 0, B), (n, n, B), (0, n, E)):
        meta.narrow(-2, rows, n).narrow(-1, cols, n).copy_(block)
    return matrix_exp(meta).narrow(-2, 0, n).narrow(-1, n, n)


# fmt: off
MATRIX_EXP = Op("LinalgMatrixExpBackward0", None, ("self",),
                (lambda F, g, self: _matrix_exp_differential(F, self, g, True),), quiet=True,
                jvp=lambda F, ts, xs, result: _matrix_exp_differential(F, xs[0], ts[0], False))
# fmt: on


def matrix_exp(A: Tensor) -> Tensor:
    """torch.linalg.matrix_exp, torch.matrix_exp, Tensor.matrix_exp (LinalgMatrixExpBackward0)."""
    _tensor_arg(A, "linalg_matrix_exp", "input", 1)
    x = _square(A, "linalg.matrix_exp")
    if x.dtype.char in "eE":
        raise NotImplementedError(f"gradcli does not implement torch.linalg.matrix_exp for {x.dtype.name} tensors "
                                  "(PyTorch 2.13 reads its float64 coefficients in that type there)")
    budget.check_tensor(x.shape, 6 * x.itemsize)        # the powers and combinations it keeps
    return apply(MATRIX_EXP, np.ascontiguousarray(matrix_exp_array(x)), (A,))


# ------------------------------------------------------------------------------------------------------ svd
# PyTorch's SVD is LAPACK's gesdd (MKL): its singular values are correct to rounding, and its singular vectors
# are unique only up to the sign of each pair (u_i, v_i), which MKL chooses. gradcli computes the SVD in float64
# (numpy's LAPACK) and rounds once: the singular values are as accurate as LAPACK's, and U S Vh, U^T U, the
# projections U U^T agree with PyTorch's; the signs of the vectors are numpy's LAPACK's, the same as PyTorch's for
# about 70% of random matrices (docs/numerics.md).

class _SvdMath:
    """The products and transposes of svd's and eigh's backward and tangent formulas, on arrays (matprod) or
    recorded tensors."""

    def __init__(self, tensors: bool):
        self.tensors = tensors

    def mm(self, x, y):
        return matmul(x, y) if self.tensors else matprod(x, y)

    def mT(self, x):
        return shape.transpose(x, -2, -1) if self.tensors else np.swapaxes(x, -1, -2)

    def row(self, s):       # s.unsqueeze(-2)
        return shape.unsqueeze(s, -2) if self.tensors else s[..., None, :]

    def col(self, s):       # s.unsqueeze(-1)
        return shape.unsqueeze(s, -1) if self.tensors else s[..., :, None]

    def diag_embed(self, s):
        return diag_embed(s) if self.tensors else _embedded(s, 0, s.ndim - 1, s.ndim)

    def narrow(self, x, dim, length):
        return shape.narrow(x, dim, 0, length) if self.tensors else (x[..., :length] if dim == -1 else x[..., :length, :])

    def triu(self, x):
        return shape.triu(x) if self.tensors else np.triu(x)

    def tril(self, x):
        return shape.tril(x) if self.tensors else np.tril(x)

    def halve_diagonal(self, x):
        """x with its diagonal times 0.5."""
        n = (x._a if self.tensors else x).shape[-1]
        half = np.where(np.eye(n, dtype=bool), 0.5, 1.0)
        return x * Tensor(half.astype((x._a if self.tensors else x).dtype)) if self.tensors else x * half.astype(x.dtype)

    def cat_zeros(self, x, count):
        """x with `count` columns of zeros after its last."""
        a = x._a if self.tensors else x
        zeros = np.zeros(a.shape[:-1] + (count,), a.dtype)
        return shape.cat([x, Tensor(zeros)], -1) if self.tensors else np.concatenate([x, zeros], -1)

    def gap(self, S, squared=True):
        """E: S_j^2 - S_i^2 (S_j - S_i unless `squared`), ones on the diagonal."""
        S2 = S * S if squared else S
        E = self.row(S2) - self.col(S2)
        n = (S._a if self.tensors else S).shape[-1]
        eye = np.eye(n, dtype=bool)
        if self.tensors:
            return elementwise.where(Tensor(eye), 1.0, E)
        return np.where(eye, S.dtype.type(1), E)


def _svd_backward(F, g, full_matrices, U, S, Vh, S_sym_argsize_minus_1):
    """PyTorch's svd_backward (real case): gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] V^T, plus
    (I - U U^T) gU S^-1 V^T when m > n (U S^-1 gV^T (I - V V^T) when m < n); only U S V^T for gS alone. With
    full_matrices, the first k columns of U (rows of Vh) and of their gradients."""
    gU, gS, gVh = g.grads
    M = _SvdMath(F.tensors)
    if F.tensors:       # the saved results as outputs 0, 1, 2 of the node, so gradients reaching them meet there
        U, S, Vh = (_as_output(t, k, 3) for k, t in enumerate((U, S, Vh)))
    k = S_sym_argsize_minus_1
    if full_matrices:
        U, Vh = M.narrow(U, -1, k), M.narrow(Vh, -2, k)
        gU = None if gU is None else M.narrow(gU, -1, k)
        gVh = None if gVh is None else M.narrow(gVh, -2, k)
    m = (U._a if F.tensors else U).shape[-2]
    n = (Vh._a if F.tensors else Vh).shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return M.mm(U, M.col(gS) * Vh) if m >= n else M.mm(U * M.row(gS), Vh)
    skew = lambda X: X - M.mT(X)
    E = M.gap(S)
    if gU is not None and gVh is not None:
        ret = (skew(M.mm(M.mT(U), gU)) * M.row(S) + M.col(S) * skew(M.mm(Vh, M.mT(gVh)))) / E
    elif gU is not None:
        ret = (skew(M.mm(M.mT(U), gU)) / E) * M.row(S)
    else:
        ret = M.col(S) * (skew(M.mm(Vh, M.mT(gVh))) / E)
    if gS is not None:
        ret = ret + M.diag_embed(gS)
    if m > n and gU is not None:
        gA = M.mm(U, ret)
        gUSinv = gU / M.row(S)
        gA = gA + gUSinv - M.mm(U, M.mm(M.mT(U), gUSinv))
        return M.mm(gA, Vh)
    if m < n and gVh is not None:
        gA = M.mm(ret, Vh)
        SinvgVh = gVh / M.col(S)
        gA = gA + SinvgVh - M.mm(M.mm(SinvgVh, M.mT(Vh)), Vh)
        return M.mm(U, gA)
    return M.mm(U, M.mm(ret, Vh)) if m >= n else M.mm(M.mm(U, ret), Vh)


def two_outputs(first: Tensor, second: Tensor) -> None:
    """Make `second` the other output of the node `apply` recorded for `first` (a row of two inputs, as apply
    records them, with two results: lstsq, triangular_solve), each result holding an OutputSlot of it."""
    node = first.grad_fn
    if node is not None:
        first.grad_fn = OutputSlot(node, 0, 2)
        second.grad_fn = OutputSlot(node, 1, 2)
        second.requires_grad = True


def _as_output(t: Tensor, index: int, count: int) -> Tensor:
    """A saved result (a tensor whose grad_fn is its node) as output `index` of that node (an OutputSlot)."""
    node = t.grad_fn
    if node.__class__ is not Node:
        return t
    out = reduce._output_of(t)
    out.grad_fn = OutputSlot(node, index, count)
    return out


def _svd_jvp(F, ts, xs, result, output, full_matrices, k):
    """PyTorch's svd_jvp (real case): dP = U^T dA V, dS = diag(dP), dU = U (sym(dP S) / E) (+ (I - U U^T) dA V S^-1),
    dVh = -(sym(S dP) / E) Vh (+ S^-1 U^T dA (I - V V^T)); zeros for the extra columns of full_matrices."""
    M = _SvdMath(True)
    node_out = result
    dA = ts[0]
    A = xs[0]
    U, S, Vh = _svd_parts(A, full_matrices)
    if full_matrices:
        U, Vh = M.narrow(U, -1, k), M.narrow(Vh, -2, k)
    m, n = A._a.shape[-2], A._a.shape[-1]
    V = M.mT(Vh)
    dP = M.mm(M.mT(U), M.mm(dA, V)) if m >= n else M.mm(M.mm(M.mT(U), dA), V)
    dS = diagonal(dP, 0, -2, -1)
    if output == 1:
        return dS
    dP = dP - M.diag_embed(dS)
    E = M.gap(S)
    sym = lambda X: X + M.mT(X)
    if output == 0:
        dU = M.mm(U, sym(dP * M.row(S)) / E)
        if m > k:
            dAVSinv = M.mm(dA, V / M.row(S))
            dU = dU + dAVSinv - M.mm(U, M.mm(M.mT(U), dAVSinv))
            if full_matrices:
                dU = shape.cat([dU, Tensor(np.zeros(dU._a.shape[:-1] + (m - k,), dU._a.dtype))], -1)
        return dU
    dVh = -M.mm(sym(M.col(S) * dP) / E, Vh)
    if n > k:
        SinvUhdA = M.mm(M.mT(U) / M.col(S), dA)
        dVh = dVh + SinvUhdA - M.mm(M.mm(SinvUhdA, V), Vh)
        if full_matrices:
            dVh = shape.cat([dVh, Tensor(np.zeros(dVh._a.shape[:-2] + (n - k, n), dVh._a.dtype))], -2)
    return dVh


def _svd_parts(A: Tensor, full_matrices: bool) -> tuple:
    """U, S, Vh of a tensor's values (no node), for the tangent formulas."""
    u, s, vh = svd_arrays(A._a, full_matrices)
    return Tensor(u), Tensor(s), Tensor(vh)


# fmt: off
SVD = Op("LinalgSvdBackward0", None, ("full_matrices", "U", "S", "Vh", "S_sym_argsize_minus_1"), (_svd_backward,),
         inputs=("A",), saves_tensors=True, quiet=True, jvp=_svd_jvp)
# fmt: on


def svd_arrays(x: np.ndarray, full_matrices: bool, values_only: bool = False) -> tuple:
    """U, S, Vh of each matrix of a batch: numpy's LAPACK in float64, rounded once; U and Vh column-major as
    LAPACK writes them. An empty matrix has no singular values (U and Vh identities with full_matrices).
    A matrix with a NaN fails as PyTorch's LAPACK call fails; one with an infinity but no NaN has NaN singular
    values in PyTorch (its U and Vh are what LAPACK leaves behind, not reproduced: `values_only` says that only
    S is shown, and gradcli's U and Vh of such a matrix are NaN)."""
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    if k == 0:
        u = np.broadcast_to(np.eye(m, m if full_matrices else 0, dtype=x.dtype), batch + (m, m if full_matrices else 0))
        vh = np.broadcast_to(np.eye(n if full_matrices else 0, n, dtype=x.dtype), batch + (n if full_matrices else 0, n))
        return _column_major(u.copy()), np.zeros(batch + (0,), x.dtype), _column_major(vh.copy())
    infinite = None
    if not np.isfinite(x).all():
        _refuse_nan_svd(x)
        if not values_only:
            raise NotImplementedError("gradcli does not implement the singular vectors of a matrix with an infinite "
                                      "element (PyTorch's are what LAPACK leaves behind; torch.linalg.svdvals gives "
                                      "its NaN singular values)")
        infinite = np.isinf(x).any(axis=(-2, -1))
        x = np.where(infinite[..., None, None], 0, x)
    u, s, vh = np.linalg.svd(x.astype(np.float64), full_matrices=full_matrices)
    if infinite is not None:
        u[infinite], s[infinite], vh[infinite] = np.nan, np.nan, np.nan
    return _column_major(u.astype(x.dtype)), np.ascontiguousarray(s.astype(x.dtype)), _column_major(vh.astype(x.dtype))


def _svd_input(A: Tensor, fn: str) -> np.ndarray:
    _tensor_arg(A, fn.replace(".", "_"), "A", 1)
    x = A._a
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    if x.dtype.char in "eE":
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor(x.shape[:-2] + (max(x.shape[-2:]),) * 2, 16)
    return x


@autocast_policy("fp32")
def svd(A: Tensor, full_matrices=True, *, driver=None) -> tuple:
    """torch.linalg.svd: torch.return_types.linalg_svd(U, S, Vh), one LinalgSvdBackward0 node for the three."""
    x = _svd_input(A, "linalg.svd")
    full_matrices = _bool_arg(full_matrices, "full_matrices")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    u, s, vh = svd_arrays(x, full_matrices)
    return _outputs(SVD, "linalg_svd", (u, s, vh), A, {"full_matrices": full_matrices,
                    "S_sym_argsize_minus_1": s.shape[-1]}, ("U", "S", "Vh"))


@autocast_policy("fp32")
def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """torch.linalg.svdvals: S alone (with LinalgSvdBackward0, which also computed U and Vh, when A requires grad)."""
    x = _svd_input(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    u, s, vh = svd_arrays(x, False, values_only=True)
    outs = _outputs(SVD, None, (u, s, vh), A, {"full_matrices": False, "S_sym_argsize_minus_1": s.shape[-1]},
                    ("U", "S", "Vh"))
    return outs[1]


@autocast_policy("fp32")
def svd_legacy(A: Tensor, some=True, compute_uv=True) -> tuple:
    """torch.svd / Tensor.svd: torch.return_types.svd(U, S, V), V = Vh^T (a transposed view, TransposeBackward0);
    with compute_uv=False, zero U and V of the full shapes and svdvals' S."""
    x = _svd_input(A, "linalg.svd")
    some, compute_uv = _bool_arg(some, "some"), _bool_arg(compute_uv, "compute_uv")
    m, n = x.shape[-2:]
    if not compute_uv:
        S = svdvals(A)
        return reduce.ReturnTypes("svd", Tensor(np.zeros(x.shape[:-2] + (m, m), x.dtype)), S,
                                  Tensor(np.zeros(x.shape[:-2] + (n, n), x.dtype)))
    U, S, Vh = svd(A, full_matrices=not some)
    return reduce.ReturnTypes("svd", U, S, shape.transpose(Vh, -2, -1))


def _complex_results(name: str):
    """torch.linalg.eig and eigvals: a general matrix's eigenvalues are complex, and gradcli has no complex dtypes."""
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"gradcli does not implement torch.linalg.{name}: its results are complex tensors "
                                  "(complex64/complex128), and gradcli has no complex dtypes")
    refuse.__name__ = f"linalg_{name}"
    return refuse


eig = _complex_results("eig")
eigvals = _complex_results("eigvals")


# ----------------------------------------------------------------------------------------------------- eigh
# torch.linalg.eigh is LAPACK's syevd (MKL) in PyTorch: eigenvalues ascending, correct to rounding; each
# eigenvector unique only up to its sign (for distinct eigenvalues), which the library chooses. gradcli computes
# it with numpy's LAPACK in float64 from the UPLO triangle and rounds once (docs/numerics.md: the signs are not
# reproducible).

def _eigh_backward(F, g, eigenvalues, eigenvectors, UPLO):
    """PyTorch's linalg_eig_backward for a symmetric input: gA = V ((skew(V^T gV) / 2) / E, its diagonal gL) V^T
    with E_ij = L_j - L_i (ones on the diagonal; repeated eigenvalues give PyTorch's infinities and NaNs), or
    V diag(gL) V^T for the eigenvalues alone."""
    gL, gV = g.grads
    M = _SvdMath(F.tensors)
    L, V = eigenvalues, eigenvectors
    if F.tensors:
        L, V = _as_output(L, 0, 2), _as_output(V, 1, 2)
    if gV is None:
        if gL is None:
            return None
        return M.mm(V * M.row(gL), M.mT(V))
    VhgV = M.mm(M.mT(V), gV)
    VhgV = 0.5 * (VhgV - M.mT(VhgV))
    ret = VhgV / M.gap(L, squared=False)
    if gL is not None:
        n = (L._a if F.tensors else L).shape[-1]
        eye = np.eye(n, dtype=bool)
        ret = elementwise.where(Tensor(eye), M.diag_embed(gL), ret) if F.tensors else np.where(eye, M.diag_embed(gL), ret)
    return M.mm(V, M.mm(ret, M.mT(V)))


def _eigh_jvp(F, ts, xs, result, output, UPLO):
    """PyTorch's linalg_eig_jvp for a symmetric input: dP = V^T dA V, dL = diag(dP), dV = V (dP / E, zero diagonal)."""
    M = _SvdMath(True)
    lam, vec = eigh_arrays(xs[0]._a, UPLO)
    L, V = Tensor(lam), Tensor(vec)
    dP = M.mm(M.mm(M.mT(V), ts[0]), V)
    if output == 0:
        return diagonal(dP, 0, -2, -1)
    dX = dP / M.gap(L, squared=False)
    n = lam.shape[-1]
    dX = elementwise.where(Tensor(np.eye(n, dtype=bool)), 0.0, dX)
    return M.mm(V, dX)


# fmt: off
EIGH = Op("LinalgEighBackward0", None, ("eigenvalues", "eigenvectors", "UPLO"), (_eigh_backward,),
          inputs=("A",), saves_tensors=True, quiet=True, jvp=_eigh_jvp)
# fmt: on


def eigh_arrays(x: np.ndarray, UPLO: str) -> tuple:
    """Eigenvalues (ascending) and eigenvectors (column-major) of each symmetric matrix, read from its UPLO
    triangle: numpy's LAPACK in float64, rounded once."""
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1], x.dtype), _column_major(np.zeros(x.shape, x.dtype))
    lam, vec = _lapack_eigh(x.astype(np.float64), UPLO)
    return np.ascontiguousarray(lam.astype(x.dtype)), _column_major(vec.astype(x.dtype))


def _lapack_eigh(x64: np.ndarray, UPLO: str = "L") -> tuple:
    """numpy's LAPACK eigh; where it does not converge (a matrix with a NaN can make it fail, as PyTorch's call
    fails), PyTorch's error, naming the first batch element that fails. numpy does not hand back LAPACK's
    info, the number PyTorch prints as the error code: the message says so."""
    try:
        with np.errstate(all="ignore"):
            return np.linalg.eigh(x64, UPLO=UPLO)
    except np.linalg.LinAlgError:
        pass
    where = ""
    if x64.ndim > 2:
        flat = x64.reshape((-1,) + x64.shape[-2:])
        for i in range(flat.shape[0]):
            try:
                with np.errstate(all="ignore"):
                    np.linalg.eigh(flat[i], UPLO=UPLO)
            except np.linalg.LinAlgError:
                where = batch_prefix(x64, i)
                break
    raise LinAlgError(f"linalg.eigh: {where}The algorithm failed to converge because the input matrix is "
                      "ill-conditioned or has too many repeated eigenvalues (error code: LAPACK's info, which "
                      "gradcli cannot read).")


def _eigh_input(A: Tensor, UPLO, fn: str) -> tuple:
    _tensor_arg(A, fn.replace(".", "_"), "input", 1)
    if UPLO.__class__ is not str:
        from gradcli.engine.signatures import type_name
        raise TypeError(f"{fn.replace('.', '_')}(): argument 'UPLO' (position 2) must be str, not {type_name(UPLO)}")
    uplo = UPLO.upper()
    if len(UPLO) != 1 or uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    x = _square(A, "linalg.eigh", floats=False)
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor(x.shape, 16)
    return x, uplo


@autocast_policy("fp32")
def eigh(A: Tensor, UPLO="L") -> tuple:
    """torch.linalg.eigh: torch.return_types.linalg_eigh(eigenvalues, eigenvectors), one LinalgEighBackward0 node."""
    x, uplo = _eigh_input(A, UPLO, "linalg.eigh")
    lam, vec = eigh_arrays(x, uplo)
    return _outputs(EIGH, "linalg_eigh", (lam, vec), A, {"UPLO": uplo}, ("eigenvalues", "eigenvectors"))


@autocast_policy("fp32")
def eigvalsh(A: Tensor, UPLO="L") -> Tensor:
    """torch.linalg.eigvalsh: the eigenvalues (LinalgEighBackward0, which also computed the vectors, with grad)."""
    x, uplo = _eigh_input(A, UPLO, "linalg.eigvalsh")
    lam, vec = eigh_arrays(x, uplo)
    return _outputs(EIGH, None, (lam, vec), A, {"UPLO": uplo}, ("eigenvalues", "eigenvectors"))[0]


# ------------------------------------------------------------------------------------------------------- qr
# torch.linalg.qr is LAPACK's geqrf/orgqr (Householder reflections): R's diagonal has the sign the reflections
# give, a convention numpy's LAPACK shares, so Q and R are determined (checked: every random matrix agrees in
# sign with PyTorch's). gradcli computes them in float64 and rounds once.

_QR_MODES = ("reduced", "complete", "r")


def _qr_backward(F, g, mode, Q, R):
    """PyTorch's linalg_qr_backward (real case): M = gR R^T - Q^T gQ; for m >= n gA = (Q syminvadj(triu(M)) + gQ) R^-T,
    for m < n gA = [Q tril(-M + M^T) R1^-T, 0] + Q gR; refused for mode='r' and for a tall complete QR."""
    gQ, gR = g.grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    M = _SvdMath(F.tensors)
    if F.tensors:
        Q, R = _as_output(Q, 0, 2), _as_output(R, 1, 2)
    m = (Q._a if F.tensors else Q).shape[-2]
    n = (R._a if F.tensors else R).shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        gA = M.mm(gR, M.mT(R)) - M.mm(M.mT(Q), gQ) if gR is not None else -M.mm(M.mT(Q), gQ)
    else:
        gA = M.mm(gR, M.mT(R))
    solve = (lambda A, B: solve_triangular(A, B, upper=False, left=False)) if F.tensors else \
        (lambda A, B: solve_triangular_array(A, B, False, left=False))
    if m >= n:
        X = M.triu(gA)
        X = X + M.mT(X)
        X = M.halve_diagonal(X)
        gA = M.mm(Q, X)
        if gQ is not None:
            gA = gA + gQ
        return solve(M.mT(R), gA)
    X = -gA
    gA = M.mm(Q, M.tril(X - M.mT(X)))
    gA = solve(M.mT(M.narrow(R, -1, m)), gA)
    gA = M.cat_zeros(gA, n - m)
    if gR is not None:
        gA = gA + M.mm(Q, gR)
    return gA


def _qr_jvp(F, ts, xs, result, output, mode):
    """The tangents of Q and R from A = Q R: for m >= n, X = dA R^-1, dR' = triu(X' + X'^T) with its diagonal
    halved (X' = Q^T X), dQ = X - Q dR', dR = dR' R; for m < n the same for the first m columns, and
    dR2 = Q^T (dA2 - dQ R2) for the rest."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    A, dA = xs[0], ts[0]
    m, n = A._a.shape[-2:]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    M = _SvdMath(True)
    q, r = qr_arrays(A._a, mode)
    Q, R = Tensor(q), Tensor(r)
    k = min(m, n)
    R1, dA1 = M.narrow(R, -1, k), M.narrow(dA, -1, k)
    X = solve_triangular(R1, dA1, upper=True, left=False)
    QhX = M.mm(M.mT(Q), X)
    dR1 = M.halve_diagonal(M.triu(QhX + M.mT(QhX)))
    dQ = X - M.mm(Q, dR1)
    if output == 0:
        return dQ
    dR = M.mm(dR1, R1)
    if n > k:
        dR2 = M.mm(M.mT(Q), shape.narrow(dA, -1, k, n - k) - M.mm(dQ, shape.narrow(R, -1, k, n - k)))
        dR = shape.cat([dR, dR2], -1)
    return dR


# fmt: off
QR = Op("LinalgQrBackward0", None, ("mode", "Q", "R"), (_qr_backward,), inputs=("A",), saves_tensors=True,
        quiet=True, jvp=_qr_jvp)
# fmt: on


def qr_arrays(x: np.ndarray, mode: str) -> tuple:
    """Q and R of each matrix (numpy's LAPACK, float64, rounded once; column-major as LAPACK writes them); Q an
    empty vector for mode='r'."""
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    if k == 0:
        q = np.broadcast_to(np.eye(m, m if mode == "complete" else 0, dtype=x.dtype), batch + (m, m if mode == "complete" else 0)).copy()
        r = np.zeros(batch + ((m if mode == "complete" else 0), n), x.dtype)
    else:
        with np.errstate(all="ignore"):
            q, r = np.linalg.qr(x.astype(np.float64), mode="complete" if mode == "complete" else "reduced")
        q, r = q.astype(x.dtype), r.astype(x.dtype)
    if mode == "r":
        return np.zeros((0,), x.dtype), _column_major(r)
    return _column_major(q), _column_major(r)


@autocast_policy("fp32")
def qr(A: Tensor, mode="reduced", _kind: str = "linalg_qr") -> tuple:
    """torch.linalg.qr: torch.return_types.linalg_qr(Q, R), one LinalgQrBackward0 node."""
    _tensor_arg(A, "linalg_qr", "A", 1)
    if mode.__class__ is not str:
        from gradcli.engine.signatures import type_name
        raise TypeError(f"linalg_qr(): argument 'mode' (position 2) must be str, not {type_name(mode)}")
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    x = A._a
    if x.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.qr: Expected a floating point or complex tensor as input. Got {type_word(x)}")
    if x.dtype.char in "eE":
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor(x.shape[:-2] + (max(x.shape[-2:]),) * 2, 16)
    q, r = qr_arrays(x, mode)
    return _outputs(QR, _kind, (q, r), A, {"mode": mode}, ("Q", "R"))


_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete') (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)")


@autocast_policy("fp32")
def qr_legacy(A: Tensor, some=True) -> tuple:
    """torch.qr / Tensor.qr (deprecated, warned once): linalg.qr in mode 'reduced' or 'complete'."""
    some = _bool_arg(some, "some")
    STATE.warn_once("torch.qr", "UserWarning", _QR_DEPRECATED)
    return qr(A, "reduced" if some else "complete", "qr")


# --------------------------------------------------------------------------------------- pinv, matrix_rank
# PyTorch's pinv and matrix_rank: the singular values (absolute eigenvalues for hermitian=True) above
# max(atol, rtol * the largest), rtol defaulting to eps * max(m, n) unless atol > 0 is given; pinv is
# V diag(1/s) U^T over those, computed here in float64 from the decomposition and rounded once (its own node,
# LinalgPinvBackward0, with PyTorch's pinv_backward and pinv_jvp).

def _pinv_backward(F, g, self, result):
    """PyTorch's pinv_backward (real case), arranged for the smaller of m and n."""
    M = _SvdMath(F.tensors)
    A, P = self, result
    m, n = (A._a if F.tensors else A).shape[-2:]
    Ph, gh = M.mT(P), M.mT(g)
    if m <= n:
        K = M.mm(gh, P)
        KPh = M.mm(K, Ph)
        return -M.mT(M.mm(P, K)) + KPh - M.mm(M.mm(A, P), KPh) + M.mm(M.mm(Ph, P), gh - M.mm(K, A))
    K = M.mm(P, gh)
    PhK = M.mm(Ph, K)
    return -M.mT(M.mm(K, P)) + M.mm(M.mm(gh - M.mm(A, K), P), Ph) + PhK - M.mm(M.mm(PhK, P), A)


def _pinv_jvp(F, ts, xs, result):
    """PyTorch's pinv_jvp (real case)."""
    M = _SvdMath(True)
    A, P, dA = xs[0], result, ts[0]
    m, n = A._a.shape[-2:]
    dAh, Ph = M.mT(dA), M.mT(P)
    if m <= n:
        K = M.mm(Ph, dAh)
        return M.mm(P, K - M.mT(K) - M.mm(K, M.mm(A, P))) + M.mm(dAh - M.mm(P, M.mm(A, dAh)), M.mm(Ph, P))
    K = M.mm(P, dA)
    Kh = M.mT(K)
    return M.mm(Kh - K - M.mm(M.mm(P, A), Kh), P) + M.mm(M.mm(P, Ph), dAh - M.mm(M.mm(dAh, A), P))


# fmt: off
PINV = Op("LinalgPinvBackward0", None, ("self", "result"), (_pinv_backward,), quiet=True, jvp=_pinv_jvp)
# fmt: on


def _tolerances(x: np.ndarray, atol, rtol, fn: str) -> tuple:
    """PyTorch's get_atol_rtol: atol 0 unless given; rtol given, else 0 where a given atol is positive, else
    eps * max(m, n); numbers or tensors (broadcast over the batch), as arrays of the dtype."""
    def value(v):
        if v.__class__ is Tensor:
            return v._a.astype(x.dtype)
        return np.asanyarray(float(v), dtype=x.dtype)
    a = value(atol) if atol is not None else np.asanyarray(0.0, dtype=x.dtype)
    if rtol is not None:
        r = value(rtol)
    else:
        default = np.asanyarray(dtypes.finfo(x.dtype).eps * max(x.shape[-2], x.shape[-1]), dtype=x.dtype)
        r = np.where(a > 0, x.dtype.type(0), default) if atol is not None else default
    return a, r


def _spectrum(x: np.ndarray, hermitian: bool) -> tuple:
    """Singular values (or |eigenvalues|, with the eigenvalues) of each matrix, float64, and the factors."""
    x64 = x.astype(np.float64)
    if hermitian:
        lam, vec = _lapack_eigh(x64)
        return np.abs(lam), lam, vec, None
    _refuse_nan_svd(x64)
    u, s, vh = np.linalg.svd(x64, full_matrices=False)
    return s, s, u, vh


def batch_prefix(x: np.ndarray, i: int) -> str:
    """PyTorch's prefix naming the batch element a linear-algebra error is about (none for one matrix)."""
    return f"(Batch element {i}): " if x.ndim > 2 else ""


def _refuse_nan_svd(x: np.ndarray) -> None:
    """PyTorch's LAPACK SVD fails on a matrix with a NaN (numpy's would say 'SVD did not converge')."""
    nan = np.isnan(x).any(axis=(-2, -1)).reshape(-1)
    if nan.any():
        raise LinAlgError(f"linalg.svd: {batch_prefix(x, int(np.argmax(nan)))}The algorithm failed to converge because the input matrix "
                          "contained non-finite values.")


def _kept(x: np.ndarray, s64: np.ndarray, atol, rtol, fn: str) -> np.ndarray:
    """Which singular values are above PyTorch's tolerance, compared in the dtype."""
    s = s64.astype(x.dtype)
    a, r = _tolerances(x, atol, rtol, fn)
    top = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), x.dtype)
    tol = np.maximum(a[..., None], r[..., None] * top)
    return s > tol


def pinv(A: Tensor, rcond=None, hermitian=False, *, atol=None, rtol=None) -> Tensor:
    """torch.linalg.pinv and torch.pinverse (rcond: the old name of rtol, with atol 0)."""
    _tensor_arg(A, "linalg_pinv", "input", 1)
    x = A._a
    if x.ndim < 2 or x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"linalg.pinv({type_word(x)}{{{_size_list(x.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    hermitian = _bool_arg(hermitian, "hermitian")
    if rcond is not None:
        atol, rtol = 0.0, rcond
    if hermitian:
        _square(A, "linalg.eigh", floats=False)
    m, n = x.shape[-2:]
    budget.check_tensor(x.shape[:-2] + (max(m, n),) * 2, 16)
    if min(m, n) == 0:
        return apply(PINV, np.zeros(x.shape[:-2] + (n, m), x.dtype), (A,))
    s, values, left, right = _spectrum(x, hermitian)
    keep = _kept(x, s, atol, rtol, "linalg.pinv")
    with np.errstate(divide="ignore"):
        inverse = np.where(keep, 1.0 / values, 0.0)
    if hermitian:
        out = np.matmul(left * inverse[..., None, :], np.swapaxes(left, -1, -2))
    else:
        out = np.matmul(np.swapaxes(right, -1, -2) * inverse[..., None, :], np.swapaxes(left, -1, -2))
    return apply(PINV, np.ascontiguousarray(out.astype(x.dtype)), (A,))


@autocast_policy("fp32")
def matrix_rank(A: Tensor, tol=None, hermitian=False, *, atol=None, rtol=None) -> Tensor:
    """torch.linalg.matrix_rank: the number of singular values above PyTorch's tolerance (int64, no gradient);
    tol: the old name of atol, with rtol 0."""
    _tensor_arg(A, "linalg_matrix_rank", "input", 1)
    x = A._a
    if x.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    hermitian = _bool_arg(hermitian, "hermitian")
    if tol is not None:
        atol, rtol = tol, 0.0
    if hermitian:
        _square(A, "linalg.eigh", floats=False)
    if min(x.shape[-2:]) == 0:
        return Tensor(np.zeros(x.shape[:-2], np.int64))
    s = _spectrum(x, hermitian)[0]
    return Tensor(np.asanyarray(_kept(x, s, atol, rtol, "linalg.matrix_rank").sum(-1), dtype=np.int64))


# ------------------------------------------------------------------------------------------------ cross

def _cross_jvp(F, ts, xs, result, dim):
    """linalg_cross(self_t, other_p, dim) + linalg_cross(self_p, other_t, dim), a missing tangent dropped."""
    parts = []
    if ts[0] is not None:
        parts.append(linalg_cross(ts[0], xs[1], dim=dim))
    if ts[1] is not None:
        parts.append(linalg_cross(xs[0], ts[1], dim=dim))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


# fmt: off
CROSS = Op("LinalgCrossBackward0", None, ("self", "other", "dim"),
           (lambda F, g, self, other, dim: F.cross(other, g, dim), lambda F, g, self, other, dim: F.cross(g, self, dim)),
           fits=True, quiet=True, jvp=_cross_jvp)
# fmt: on


def cross_array(a: np.ndarray, b: np.ndarray, d: int) -> np.ndarray:
    """The cross product along dim d of two arrays of one shape: r0 = a1 b2 - a2 b1 and so on, as PyTorch's
    kernel (compiled with contraction) rounds it: the first product fused with the difference,
    fma(a1, b2, -(a2 b1)); integers exactly."""
    a0, a1, a2 = (np.take(a, i, axis=d) for i in range(3))
    b0, b1, b2 = (np.take(b, i, axis=d) for i in range(3))
    if a.dtype.kind in "fV" and a.dtype.itemsize >= 4:
        parts = (fma(a1, b2, -(a2 * b1)), fma(a2, b0, -(a0 * b2)), fma(a0, b1, -(a1 * b0)))
    else:
        parts = (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)
    return np.ascontiguousarray(np.stack(parts, axis=d))


def linalg_cross(input, other, *, dim=-1) -> Tensor:
    """torch.linalg.cross: the cross product of 3-vectors along dim, the operands broadcast (LinalgCrossBackward0)."""
    tensor_arg(input, "linalg_cross", "input", 1)
    tensor_arg(other, "linalg_cross", "other", 2)
    x, y = input._a, other._a
    if x.ndim != y.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    given = index_arg(dim)
    d = wrap_dim(given, x.ndim)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {given} must have length 3. Got {x.shape[d]} and "
                           f"{y.shape[d]}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(y)}")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    shape = np.broadcast_shapes(x.shape, y.shape)
    out = cross_array(np.broadcast_to(x, shape), np.broadcast_to(y, shape), d)
    return apply(CROSS, out, (input, other), (given,))


def cross(input, other, dim=None) -> Tensor:
    """torch.cross / Tensor.cross: linalg.cross along dim, or (deprecated, with PyTorch's warning) along the first
    dim of length 3."""
    if dim is None:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                       "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
                       "change to agree with that of linalg.cross in a future release. (Triggered internally at "
                       "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
        shape = input._a.shape if input.__class__ is Tensor else ()
        sizes = [n for n in shape]
        if other.__class__ is Tensor and input.__class__ is Tensor and input._a.ndim == other._a.ndim:
            sizes = list(np.broadcast_shapes(input._a.shape, other._a.shape))
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim=dim)


def _cross_recorded(a: Tensor, b: Tensor, dim) -> Tensor:
    return linalg_cross(a, b, dim=dim)
