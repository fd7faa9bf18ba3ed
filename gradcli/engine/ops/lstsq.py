"""torch.linalg.lstsq: least-squares solutions with the fields each LAPACK driver fills (residuals, rank, singular
values), one LinalgLstsqBackward0 node for the solution and the residuals."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, dtypes, forward
from gradcli.engine.autograd import OutputGrads
from gradcli.engine.ops import linalg as la
from gradcli.engine.ops import reduce, shape
from gradcli.engine.recording import autocast_policy, Op, apply, tensor_arg, type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


# ------------------------------------------------------------------------------------------ the derivative
# linalg_lstsq_backward: the solution is pinv(A) B, so its gradient goes through pinv's (gA = pinv_backward(gX B^H),
# gB = pinv(A)^H gX); a residual |A x_j - B_j|^2, at the least-squares optimum (A^H r = 0), adds 2 r_j x_j^H to A's
# gradient and -2 r_j to B's.

def _pinv(F, A):
    if F.tensors:
        return la.pinv(A)
    return la.pinv(Tensor(A))._a


def _grads(F, g, A, B, X):
    gX, gL = g.grads if g.__class__ is OutputGrads else (g, None)
    if F.tensors:       # the saved solution as output 0 of the node, so gradients reaching it meet there
        X = la._as_output(X, 0, 2)
    vector = _ndim(B) == _ndim(A) - 1
    if not F.tensors:           # (the plain backward's products do not broadcast batches)
        batch = X.shape[:-2] if not vector else X.shape[:-1]
        A = np.broadcast_to(A, batch + A.shape[-2:])
        B = np.broadcast_to(B, batch + B.shape[-1 if vector else -2:])
    if vector:
        B, X = F.unsqueeze_dims(B, (_ndim(B),)), F.unsqueeze_dims(X, (_ndim(X),))
        gX = F.unsqueeze_dims(gX, (_ndim(gX),)) if gX is not None else None
    gA = gB = None
    if gX is not None:
        P = _pinv(F, A)
        gA = la._pinv_backward(F, F.matmul(gX, F.mT(B)), A, P)
        gB = F.matmul(F.mT(P), gX)
    if gL is not None and _shape(gL)[-1]:
        r = F.matmul(A, X) - B
        weighted = r * F.unsqueeze_dims(gL, (_ndim(gL) - 1,))
        extra_A = 2 * F.matmul(weighted, F.mT(X))
        gA = extra_A if gA is None else gA + extra_A
        gB = -2 * weighted if gB is None else gB - 2 * weighted
    if vector and gB is not None:
        gB = F.squeeze(gB, -1)
    return gA, gB


def _ndim(x) -> int:
    return x._a.ndim if x.__class__ is Tensor else x.ndim


def _shape(x) -> tuple:
    return x._a.shape if x.__class__ is Tensor else x.shape


def _grad_A(F, g, self, b, result):
    return _grads(F, g, self, b, result)[0]


def _grad_B(F, g, self, b, result):
    return _grads(F, g, self, b, result)[1]


def _lstsq_jvp(F, ts, xs, result, solution=None):
    """linalg_lstsq_solution_jvp (the solution's tangent), or, given the solution, linalg_lstsq_residuals_jvp
    (the residuals' tangent: 2 sum_i r_ij dr_ij with r = A X - B, dr = A_t X + A X_t - B_t)."""
    if solution is None:
        return _solution_jvp(ts, xs)
    if result._a.size == 0:
        return Tensor(np.zeros_like(result._a))
    A, B = xs
    dA, dB = forward.tangent_or_zeros(ts, xs, 0), forward.tangent_or_zeros(ts, xs, 1)
    dX = _solution_jvp(ts, xs)
    X = solution
    if B._a.ndim == A._a.ndim - 1:
        B, dB, X, dX = (shape.unsqueeze(t, -1) for t in (B, dB, X, dX))
    r = la.matmul(A, X) - B
    dr = la.matmul(dA, X) + la.matmul(A, dX) - dB
    return reduce.reduce_sum(r * dr, -2) * 2


def _solution_jvp(ts, xs):
    """linalg_lstsq_solution_jvp: dX = dpinv(A) B + pinv(A) dB (pinv_jvp for dpinv), a missing tangent as zeros."""
    from gradcli.engine.backmath import TENSOR as F
    A, B = xs
    dA, dB = forward.tangent_or_zeros(ts, xs, 0), forward.tangent_or_zeros(ts, xs, 1)
    vector = B._a.ndim == A._a.ndim - 1
    if vector:
        B, dB = shape.unsqueeze(B, -1), shape.unsqueeze(dB, -1)
    P = la.pinv(A)
    dP = la._pinv_jvp(F, (dA,), (A,), P)
    dX = la.matmul(dP, B) + la.matmul(P, dB)
    return shape.squeeze(dX, -1) if vector else dX


# fmt: off
LSTSQ = Op("LinalgLstsqBackward0", None, ("self", "b", "result"), (_grad_A, _grad_B), inputs=("self", "b"), fits=True,
           quiet=True, jvp=_lstsq_jvp)
# fmt: on


# ------------------------------------------------------------------------------------------ the forward

def _solve(a: np.ndarray, b: np.ndarray, rcond) -> tuple:
    """The minimum-norm least-squares solution of each matrix of a batch (the singular values below rcond times
    the largest dropped), in float64; the ranks and the singular values."""
    m, n = a.shape[-2:]
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    top = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    keep = s > rcond * top
    with np.errstate(divide="ignore"):
        inverse = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    x = np.matmul(np.swapaxes(vh, -1, -2) * inverse[..., None, :], np.matmul(np.swapaxes(u, -1, -2), b))
    return x, keep.sum(-1).astype(np.int64), s


def _refuse_nan(a: np.ndarray, b: np.ndarray, driver: str) -> None:
    """A NaN in a matrix of A or B: PyTorch's LAPACK (MKL) rejects that argument of the driver's call, and
    PyTorch reports it as an internal assert, naming the argument (A is the driver's 4th, B its 6th; gels' 5th
    and 7th) and the first batch element that has one."""
    a_nan = np.isnan(a).any(axis=(-2, -1)).reshape(-1)
    b_nan = np.isnan(b).any(axis=(-2, -1)).reshape(-1)
    bad = a_nan | b_nan
    if not bad.any():
        return
    i = int(np.argmax(bad))
    where = la.batch_prefix(a, i)
    argument = (4 if a_nan[i] else 6) + (driver == "gels")
    raise RuntimeError('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                       'BatchLinearAlgebra.cpp":1613, please report a bug to PyTorch. torch.linalg.lstsq: '
                       f"{where}Argument {argument} has illegal value. Most certainly there is a bug in the "
                       "implementation calling the backend library.")


@autocast_policy("fp32")
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None) -> tuple:
    """torch.linalg.lstsq: torch.return_types.linalg_lstsq(solution, residuals, rank, singular_values), with the
    checks of PyTorch's in its order. gradcli solves by the SVD in float64 (every driver: the minimum-norm
    solution LAPACK's gelsy, gelsd and gelss compute, and gels' for a matrix of full rank), rounded once; the rank
    counts the singular values above rcond (default: the dtype's eps times max(m, n)) times the largest. Each
    driver's fields: gelsy the rank; gelsd and gelss the rank and the singular values; gels neither; the residuals
    (|A x_j - B_j|^2 per column) for a tall A, except with gelsy and with a rank-deficient matrix."""
    tensor_arg(A, "linalg_lstsq", "input", 1)
    tensor_arg(B, "linalg_lstsq", "b", 2)
    a, b = A._a, B._a
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {type_word(a)} and other's dtype {type_word(b)}")
    diff = a.ndim - b.ndim
    if not 0 <= diff <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    b2 = b[..., None] if diff else b
    batch = shape.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    if a.shape[-2] != b2.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if diff else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if rcond is not None and rcond.__class__ not in (int, float):
        raise TypeError(f"argument 'rcond' must be float, not {type(rcond).__name__}")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = a.shape[-2:]
    k = b2.shape[-1]
    budget.check_tensor(batch + (max(m, n), max(m, n)), 16)
    if rcond is None:
        rcond = float(dtypes.finfo(a.dtype).eps) * max(m, n)
    a64 = np.broadcast_to(a, batch + (m, n)).astype(np.float64)
    b64 = np.broadcast_to(b2, batch + (m, k)).astype(np.float64)
    _refuse_nan(a64, b64, driver)
    if min(m, n) == 0:
        x, rank, s = np.zeros(batch + (n, k)), np.zeros(a.shape[:-2], np.int64), np.zeros(a.shape[:-2] + (0,))
    else:
        x = _solve(a64, b64, rcond)[0]
        rank, s = _solve(a.astype(np.float64), np.zeros(a.shape[:-1] + (0,)), rcond)[1:]  # (A's own batch)
    # LAPACK's output buffer: max(m, n) x k per matrix, column-major; the solution is its first n rows
    buffer = np.swapaxes(np.empty(batch + (k, max(m, n)), a.dtype), -1, -2)
    buffer[..., :n, :] = x
    solution = buffer[..., :n, :]
    if diff:
        solution = solution[..., 0]
    residuals = np.zeros((0,), a.dtype)
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        r = np.matmul(a64, x) - b64
        residuals = np.asanyarray((r * r).sum(-2), a.dtype)
    rank_out = np.zeros((0,), np.int64) if driver == "gels" else rank
    values = s.astype(a.dtype) if driver in ("gelsd", "gelss") else np.zeros((0,), a.dtype)
    out = apply(LSTSQ, solution, (A, B), (), (a, b))
    res = Tensor(residuals)
    la.two_outputs(out, res)
    if STATE.fw_level is not None:
        forward.propagate(LSTSQ, res, (A, B), (Tensor(solution),))
    return reduce.ReturnTypes("linalg_lstsq", out, res, Tensor(np.asanyarray(rank_out)), Tensor(values))
