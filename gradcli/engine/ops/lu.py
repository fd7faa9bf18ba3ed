"""LU factors and the solvers built on factors: linalg.lu_factor(_ex), linalg.lu, linalg.lu_solve, lu_unpack, the
_ex forms of solve, inv and cholesky (their info tensors), cholesky_solve, the deprecated torch.lu and
torch.lu_solve, and the names PyTorch 2.13 removed (torch.solve, lstsq, symeig, eig), which raise its error."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, forward
from gradcli.engine.autograd import OutputGrads
from gradcli.engine.ops import linalg as la
from gradcli.engine.ops import reduce, shape
from gradcli.engine.recording import autocast_policy, Op, apply, tensor_arg, type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


# ------------------------------------------------------------------------------------------ factors as arrays

def permutation_array(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """P of A = P L U from LAPACK's pivots (1-based; row i swapped with row pivots[i] at step i), one matrix
    per batch element: P[perm[i], i] = 1 for the row order perm the swaps make."""
    batch = pivots.shape[:-1]
    count = int(np.prod(batch, dtype=np.int64))
    piv = pivots.reshape((count, pivots.shape[-1])).astype(np.int64) - 1
    perm = np.tile(np.arange(m), (count, 1))
    rows = np.arange(count)
    for i in range(piv.shape[1]):
        j = piv[:, i]
        kept = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = kept
    P = np.zeros((count, m, m), dtype=dtype)
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1
    return P.reshape(batch + (m, m))


def unpack_arrays(lu: np.ndarray) -> tuple:
    """L (unit lower, m x k) and U (upper, k x n) of a packed LU."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    U = np.triu(lu[..., :k, :])
    return L, U


def lu_solve_array(lu: np.ndarray, pivots: np.ndarray, B: np.ndarray, left=True, adjoint=False) -> np.ndarray:
    """X with A X = B (A^H X = B when `adjoint`; X A = B, X A^H = B for left=False) for A = P L U given packed
    with its 1-based pivots, as getrs substitutes (la._lu_solve); batches broadcast. A zero on U's diagonal
    gives infinities and NaNs, never an error."""
    batch = np.broadcast_shapes(lu.shape[:-2], B.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    piv = np.broadcast_to(np.asanyarray(pivots, np.int64) - 1, batch + pivots.shape[-1:])
    if not left:                                  # X op(A) = B  <=>  op(A)^T X^T = B^T
        B, adjoint = np.swapaxes(B, -1, -2), not adjoint
    B = np.broadcast_to(B, batch + B.shape[-2:])
    with np.errstate(all="ignore"):
        X = la._lu_solve(lu, piv, B, adjoint=adjoint)
    return X if left else np.swapaxes(X, -1, -2)


def _row_major(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x)


# ------------------------------------------------------------------------------------------ backward formulas

def _arr(x) -> np.ndarray:
    """The values of a saved tensor, whether a plain backward unpacked it or not."""
    return x._a if x.__class__ is Tensor else np.asanyarray(x)


def _arr_tensor(x) -> Tensor:
    return x if x.__class__ is Tensor else Tensor(np.asanyarray(x))


def _narrow(F, x, dim: int, start: int, length: int):
    return F.narrow(x, dim % x.ndim if not F.tensors else dim % x._a.ndim, start, length)


def _batched(F, x, like):
    """x with the batch dims of `like` (the broadcast batch of a solve), for the plain backward's matrix products,
    which do not broadcast; fits=True reduces the gradient to the input's shape afterwards."""
    if F.tensors:
        return x
    batch = np.broadcast_shapes(x.shape[:-2], like.shape[:-2])
    return np.broadcast_to(x, batch + x.shape[-2:])


def _shape(x) -> tuple:
    return x._a.shape if x.__class__ is Tensor else x.shape


def lu_backward(F, gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward for A = P L U (pivoting), gL or gU None where no gradient came."""
    m, n = _shape(L)[-2], _shape(U)[-1]
    k = min(m, n)
    if m == n:
        gA = F.tril(F.matmul(F.mT(L), gL), -1) if gL is not None else None
        if gU is not None:
            term = F.triu(F.matmul(gU, F.mT(U)))
            gA = term if gA is None else gA + term
        gA = F.solve_triangular(F.mT(U), gA, False, False, False)
        gA = F.solve_triangular(F.mT(L), gA, True, True, True)
        return F.matmul(P, gA)
    if m < n:
        U1 = _narrow(F, U, -1, 0, k)
        gA = F.matmul(F.mT(L), gL) if gL is not None else None
        if gU is not None:
            term = F.matmul(F.triu(gU), F.mT(U))
            gA = -term if gA is None else gA - term
        gA = F.solve_triangular(F.mT(U1), F.tril(gA, -1), False, False, False)
        if gU is not None:
            gA = F.cat([gA + F.triu(_narrow(F, gU, -1, 0, k)), _narrow(F, gU, -1, k, n - k)], -1)
        gA = F.solve_triangular(F.mT(L), gA, True, True, True)
        if gU is None:
            gA = F.cat([gA, F.zeros_like(_narrow(F, U, -1, k, n - k))], -1)
        return F.matmul(P, gA)
    L1 = _narrow(F, L, -2, 0, k)
    gA = F.matmul(gU, F.mT(U)) if gU is not None else None
    if gL is not None:
        term = F.matmul(F.mT(L), F.tril(gL, -1))
        gA = -term if gA is None else gA - term
    gA = F.solve_triangular(F.mT(L1), F.triu(gA), True, True, True)
    if gL is not None:
        gA = F.cat([gA + F.tril(_narrow(F, gL, -2, 0, k), -1), _narrow(F, gL, -2, k, m - k)], -2)
    gA = F.solve_triangular(F.mT(U), gA, False, False, False)
    if gL is None:
        gA = F.cat([gA, F.zeros_like(_narrow(F, L, -2, k, m - k))], -2)
    return F.matmul(P, gA)


def _factors(F, LU, pivots):
    """P (a constant), L and U of a packed LU, in F's kind of value (L and U differentiable under create_graph)."""
    lu = LU._a if F.tensors else LU
    m, n = lu.shape[-2:]
    k = min(m, n)
    P = permutation_array(_arr(pivots), m, lu.dtype)
    eye = np.eye(m, k, dtype=lu.dtype)
    L = F.tril(_narrow(F, LU, -1, 0, k), -1) + (Tensor(eye) if F.tensors else eye)
    U = F.triu(_narrow(F, LU, -2, 0, k))
    return (Tensor(P) if F.tensors else P), L, U


def _lu_factor_grad(F, g, pivot, result, pivots):
    """lu_factor_ex_backward: the packed gradient split into L's part (the first k columns) and U's (the first
    k rows), then linalg_lu_backward."""
    P, L, U = _factors(F, result, pivots)
    m, n = _shape(result)[-2:]
    k = min(m, n)
    return lu_backward(F, _narrow(F, g, -1, 0, k), _narrow(F, g, -2, 0, k), P, L, U)


def _lu_grad(F, g, pivot, P, L, U):
    """linalg_lu's backward: the gradients of L and U (the node's two differentiable outputs; a gradient reaching
    the node itself, through a saved L under create_graph, is L's)."""
    gL, gU = g.grads if g.__class__ is OutputGrads else (g, None)
    if F.tensors:       # the saved results as outputs 0 and 1 of the node, so gradients reaching them meet there
        L, U = la._as_output(L, 0, 2), la._as_output(U, 1, 2)
    if gL is None and gU is None:
        return None
    return lu_backward(F, gL, gU, P, L, U)


def _lu_solve_LU(F, g, LU, pivots, result, left, adjoint):
    """linalg_lu_solve_LU: the gradient of the packed factors."""
    LU = _batched(F, LU, g)
    pivots = _batched(F, _arr(pivots)[..., None], g)[..., 0] if not F.tensors else pivots
    P, L, U = _factors(F, LU, pivots)
    X = result
    if left != adjoint:
        gR = F.solve_triangular(F.mT(U), -F.matmul(g if left else F.mT(g), F.mT(X) if left else X),
                                False, True, False)
        gL = F.tril(F.solve_triangular(F.mT(L), F.matmul(gR, F.mT(U)), True, True, True), -1)
        return gL + F.triu(gR)
    gR = -F.matmul(F.matmul(F.matmul(F.mT(P), X if left else F.mT(X)), F.mT(g) if left else g), P)
    gR = F.solve_triangular(F.mT(L), gR, True, False, True)
    gU = F.triu(F.solve_triangular(F.mT(U), F.matmul(F.mT(L), gR), False, False, False))
    return F.tril(gR, -1) + gU


def _lu_solve_B(F, g, LU, pivots, result, left, adjoint):
    return F.lu_solve(LU, pivots, g, left, not adjoint)


def _lu_unpack_grad(F, g, m, n):
    """lu_unpack_backward: L's strictly lower part and U's upper part, put back in the packed shape."""
    gL, gU = g.grads if g.__class__ is OutputGrads else (g, None)
    k = min(m, n)
    if gL is not None and gU is not None:
        if m == n:
            return F.tril(gL, -1) + F.triu(gU)
        first = F.tril(_narrow(F, gL, -2, 0, k), -1) + F.triu(_narrow(F, gU, -1, 0, k))
        rest = _narrow(F, gL, -2, k, m - k) if m > n else _narrow(F, gU, -1, k, n - k)
        return F.cat([first, rest], -2 if m > n else -1)
    if gL is not None:
        if m >= n:
            return F.tril(gL, -1)
        return F.cat([F.tril(gL, -1), F.zeros(_shape(gL)[:-1] + (n - m,), gL)], -1)
    if gU is None:
        return None
    if n >= m:
        return F.triu(gU)
    return F.cat([F.triu(gU), F.zeros(_shape(gU)[:-2] + (m - n, n), gU)], -2)


def _cholesky_solve_self(F, g, self, input2, result, upper):
    return F.cholesky_solve(g, input2, upper)


def _cholesky_solve_input2(F, g, self, input2, result, upper):
    """cholesky_solve_backward's factor gradient: with gB = cholesky_solve(g), C = gB X^H + (gB X^H)^H,
    -C L (or -U C for an upper factor)."""
    input2 = _batched(F, input2, g)
    gB = F.cholesky_solve(g, input2, upper)
    common = F.matmul(gB, F.mT(result))
    common = common + F.mT(common)
    return -F.matmul(input2, common) if upper else -F.matmul(common, input2)


# ------------------------------------------------------------------------------------------ tangents

def _lu_tangents(dA, P, L, U):
    """linalg_lu_jvp: the tangents of L and U."""
    m, n = dA._a.shape[-2:]
    k = min(m, n)
    PdA = la.matmul(shape.transpose(P, -2, -1), dA)
    PdA1 = shape.narrow(shape.narrow(PdA, -2, 0, k), -1, 0, k)
    L1 = shape.narrow(shape.narrow(L, -2, 0, k), -1, 0, k)
    U1 = shape.narrow(shape.narrow(U, -2, 0, k), -1, 0, k)
    dK = la.solve_triangular(L1, PdA1, upper=False, left=True, unitriangular=True)
    dK = la.solve_triangular(U1, dK, upper=True, left=False)
    dL1 = la.matmul(L1, shape.tril(dK, -1))
    dU1 = la.matmul(shape.triu(dK), U1)
    if m == n:
        return dL1, dU1
    if m < n:
        dU2 = (la.solve_triangular(L1, shape.narrow(PdA, -1, k, n - k), upper=False, left=True, unitriangular=True)
               - la.matmul(shape.tril(dK, -1), shape.narrow(U, -1, k, n - k)))
        return dL1, shape.cat([dU1, dU2], -1)
    dL2 = (la.solve_triangular(U1, shape.narrow(PdA, -2, k, m - k), upper=True, left=False)
           - la.matmul(shape.narrow(L, -2, k, m - k), shape.triu(dK)))
    return shape.cat([dL1, dL2], -2), dU1


def _tensor_factors(LU: np.ndarray, pivots: np.ndarray) -> tuple:
    L, U = unpack_arrays(LU)
    return Tensor(permutation_array(pivots, LU.shape[-2], LU.dtype)), Tensor(L), Tensor(U)


def _lu_factor_jvp(F, ts, xs, result, pivot, pivots):
    """lu_factor_ex_jvp: dL and dU packed back into one matrix (dU added onto dL's first n rows, or dL onto
    dU's first m columns)."""
    P, L, U = _tensor_factors(result._a, _arr(pivots))
    dL, dU = _lu_tangents(ts[0], P, L, U)
    m, n = result._a.shape[-2:]
    if m >= n:
        return shape.cat([shape.narrow(dL, -2, 0, n) + dU, shape.narrow(dL, -2, n, m - n)], -2)
    return shape.cat([shape.narrow(dU, -1, 0, m) + dL, shape.narrow(dU, -1, m, n - m)], -1)


def _lu_jvp(F, ts, xs, result, output, pivot, P):
    lu_, _, _ = la.lu_factor(xs[0]._a)
    L, U = unpack_arrays(lu_)
    dL, dU = _lu_tangents(ts[0], _arr_tensor(P), Tensor(L), Tensor(U))
    return dL if output == 0 else dU


def _lu_solve_jvp(F, ts, xs, result, pivots, left, adjoint):
    """linalg_lu_solve_jvp, a missing tangent as zeros."""
    dLU = forward.tangent_or_zeros(ts, xs, 0)
    dB = forward.tangent_or_zeros(ts, xs, 1)
    LUt, X = xs[0], result
    piv = _arr_tensor(pivots)
    S = lu_solve(LUt, piv, dB, left=left, adjoint=adjoint)
    if left != adjoint:
        R = la.solve_triangular(LUt, shape.tril(dLU, -1), upper=False, left=True, unitriangular=True)
        U = shape.triu(LUt)
        R = -la.solve_triangular(U, shape.triu(dLU) + la.matmul(R, U), upper=True)
        return (la.matmul(R, X) if left else la.matmul(X, shape.transpose(R, -2, -1))) + S
    P, L, U = _tensor_factors(LUt._a, _arr(pivots))
    V = shape.transpose(X, -2, -1) if left else X
    R = la.solve_triangular(U, la.matmul(L, shape.triu(dLU)), upper=True, left=False) + shape.tril(dLU, -1)
    R = la.matmul(la.solve_triangular(L, -la.matmul(la.matmul(V, P), R), upper=False, left=False,
                                      unitriangular=True), shape.transpose(P, -2, -1))
    return (shape.transpose(R, -2, -1) if left else R) + S


def _lu_unpack_jvp(F, ts, xs, result, output, m, n):
    dLU = ts[0]
    if output == 0:
        return shape.tril(dLU if m >= n else shape.narrow(dLU, -1, 0, m), -1)
    return shape.triu(dLU if m <= n else shape.narrow(dLU, -2, 0, n))


def _cholesky_solve_jvp(F, ts, xs, result, upper):
    """cholesky_solve_jvp: dA = dK + dK^H with dK = dU^H U (or dL L^H), then X_t = cholesky_solve(dB - dA X)."""
    U = xs[1]
    dB = forward.tangent_or_zeros(ts, xs, 0)
    dU = forward.tangent_or_zeros(ts, xs, 1)
    dK = la.matmul(shape.transpose(dU, -2, -1), U) if upper else la.matmul(dU, shape.transpose(U, -2, -1))
    dA = dK + shape.transpose(dK, -2, -1)
    return cholesky_solve(dB - la.matmul(dA, result), U, upper)


# fmt: off
LU_FACTOR      = Op("LinalgLuFactorExBackward0", None, ("pivot", "result", "pivots"), (_lu_factor_grad,),
                    inputs=("A",), saves_tensors=True, quiet=True, jvp=_lu_factor_jvp)
LU             = Op("LinalgLuBackward0",         None, ("pivot", "P", "L", "U"), (_lu_grad,),
                    inputs=("A",), saves_tensors=True, quiet=True, jvp=_lu_jvp)
LU_SOLVE       = Op("LinalgLuSolveBackward0",    None, ("LU", "pivots", "result", "left", "adjoint"),
                    (_lu_solve_LU, _lu_solve_B), inputs=("LU", "B"), fits=True, quiet=True, versioned=("pivots",),
                    jvp=_lu_solve_jvp)
LU_UNPACK      = Op("LuUnpackBackward0",         None, ("LU_data_sym_argsize_minus_2", "LU_data_sym_argsize_minus_1"),
                    (_lu_unpack_grad,), inputs=("LU_data",), quiet=True, jvp=_lu_unpack_jvp)
CHOLESKY_SOLVE = Op("CholeskySolveBackward0",    None, ("self", "input2", "result", "upper"),
                    (_cholesky_solve_self, _cholesky_solve_input2), inputs=("self", "input2"), fits=True,
                    quiet=True, jvp=_cholesky_solve_jvp)
# fmt: on


# ------------------------------------------------------------------------------------------ checks

def _bool(value, name: str) -> bool:
    return la._bool_arg(value, name)


def _at_least_2d(x: np.ndarray, fn: str) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: Expected tensor with 2 or more dimensions. Got size: {la._size_list(x.shape)} "
                           "instead")


def _lu_kernel_dtype(x: np.ndarray) -> None:
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{type_word(x)}'")


def _first_failure(info: np.ndarray) -> tuple:
    """(batch index, info) of the first matrix whose info is not 0."""
    flat = info.reshape(-1)
    i = int(np.flatnonzero(flat)[0])
    return i, int(flat[i])


# ------------------------------------------------------------------------------------------ LU factorisation

def _factor(A: Tensor, pivot, fn: str, name: str) -> tuple:
    """The checks of linalg.lu_factor_ex and linalg.lu in PyTorch's order, then the factors: the packed LU
    (column-major, as getrf writes it), the 1-based int32 pivots, the int32 info."""
    tensor_arg(A, name, "A", 1)
    pivot = _bool(pivot, "pivot")
    x = A._a
    _at_least_2d(x, fn)
    _lu_kernel_dtype(x)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    budget.check_tensor(x.shape, x.dtype.itemsize)
    lu, pivots, info = la.lu_factor(x)
    return la._column_major(lu), (pivots + 1).astype(np.int32), info.astype(np.int32)


def _record_factor(A: Tensor, lu: np.ndarray, pivots: np.ndarray) -> Tensor:
    return apply(LU_FACTOR, lu, (A,), (True, Tensor(pivots)))


def lu_factor_ex(A: Tensor, *, pivot=True, check_errors=False) -> tuple:
    """torch.linalg.lu_factor_ex: torch.return_types.linalg_lu_factor_ex(LU, pivots, info)."""
    lu, pivots, info = _factor(A, pivot, "torch.lu_factor", "linalg_lu_factor_ex")
    if _bool(check_errors, "check_errors") and info.any():
        _singular_factor("torch.linalg.lu_factor_ex", lu, info)
    return reduce.ReturnTypes("linalg_lu_factor_ex", _record_factor(A, lu, pivots), Tensor(pivots), Tensor(info))


def _singular_factor(fn: str, lu: np.ndarray, info: np.ndarray):
    i, where = _first_failure(info)
    raise RuntimeError(f"{fn}: {la.batch_prefix(lu, i)}U[{where},{where}] is zero and using it on lu_solve would result "
                       "in a division by zero. If you still want to perform the factorization, consider calling "
                       "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Tensor, *, pivot=True) -> tuple:
    """torch.linalg.lu_factor: torch.return_types.linalg_lu_factor(LU, pivots); a zero pivot is PyTorch's error."""
    lu, pivots, info = _factor(A, pivot, "torch.lu_factor", "linalg_lu_factor")
    if info.any():
        _singular_factor("torch.linalg.lu_factor", lu, info)
    return reduce.ReturnTypes("linalg_lu_factor", _record_factor(A, lu, pivots), Tensor(pivots))


def lu(A: Tensor, *, pivot=True) -> tuple:
    """torch.linalg.lu: torch.return_types.linalg_lu(P, L, U), row-major; one LinalgLuBackward0 node for L and U
    (P has no gradient)."""
    lu_, pivots, _ = _factor(A, pivot, "linalg.lu", "linalg_lu")
    x = A._a
    budget.check_tensor(x.shape[:-2] + (x.shape[-2],) * 2, x.dtype.itemsize)
    L, U = unpack_arrays(lu_)
    P = permutation_array(pivots, x.shape[-2], x.dtype)
    L, U = _row_major(L), _row_major(U)
    outs = la._outputs(LU, None, (L, U), A, {"pivot": True, "P": Tensor(P)}, ("L", "U"))
    return reduce.ReturnTypes("linalg_lu", Tensor(P), *outs)


def _deprecated_lu_warning():
    STATE.warn_once("torch.lu", "UserWarning", _LU_DEPRECATED)


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in "
    "a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)")


def lu_legacy(A, pivot=True, get_infos=False):
    """torch.lu and Tensor.lu (deprecated, a warning once): the tuple (LU, pivots), or with get_infos
    torch.return_types._lu_with_info(LU, pivots, info); a zero pivot is no error (PyTorch's _lu_with_info
    checks nothing there, whatever check_errors says)."""
    _deprecated_lu_warning()
    tensor_arg(A, "_lu_with_info", "input", 1)
    if pivot.__class__ is not bool:     # (its words name the function it calls; get_infos is read for its truth)
        raise TypeError(f"_lu_with_info(): argument 'pivot' must be bool, not {type(pivot).__name__}")
    lu_, pivots, info = _factor(A, pivot, "torch.lu_factor", "_lu_with_info")
    LU_ = _record_factor(A, lu_, pivots)
    if get_infos.__class__ is Tensor:
        get_infos = get_infos._a.item() if get_infos._a.size == 1 else get_infos.__bool__()
    if get_infos:
        return reduce.ReturnTypes("_lu_with_info", LU_, Tensor(pivots), Tensor(info))
    return (LU_, Tensor(pivots))


# ------------------------------------------------------------------------------------------ solves with factors

def _pivots_in_range(pivots: np.ndarray, n: int, fn_min: str, fn_max: str) -> None:
    if pivots.size and pivots.min() < 1:
        raise RuntimeError(fn_min)
    if pivots.size and pivots.max() > n:
        raise RuntimeError(fn_max)


@autocast_policy("fp32")
def lu_solve(LU_: Tensor, pivots: Tensor, B: Tensor, *, left=True, adjoint=False) -> Tensor:
    """torch.linalg.lu_solve (LinalgLuSolveBackward0): the checks of PyTorch's meta function in its order."""
    tensor_arg(LU_, "linalg_lu_solve", "LU", 1)
    tensor_arg(pivots, "linalg_lu_solve", "pivots", 2)
    tensor_arg(B, "linalg_lu_solve", "B", 3)
    left, adjoint = _bool(left, "left"), _bool(adjoint, "adjoint")
    x, p, b = LU_._a, pivots._a, B._a
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got "
                           f"{type_word(x)}")
    if x.dtype != b.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{type_word(x)} and B of type {type_word(b)} instead")
    if p.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    la._square(LU_, "torch.linalg.lu_solve", floats=False)
    la._check_rhs("linalg.lu_solve", x, b, left)
    if p.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if p.shape[-1] != x.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if p.shape != x.shape[:-1]:
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {la._size_list(p.shape)} instead")
    batch = shape.broadcast_shapes(b.shape[:-2], x.shape[:-2])
    budget.check_tensor(batch + b.shape[-2:], b.dtype.itemsize)
    if x.dtype.char in "eE":
        raise NotImplementedError(f"\"linalg.lu_solve_cpu\" not implemented for '{type_word(x)}'")
    n = x.shape[-1]
    _pivots_in_range(p, n, "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the "
                           "result of lu_factor?",
                     "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly pass "
                     "the result of lu_factor?")
    out = lu_solve_array(x, p, b, left, adjoint)
    out = la._column_major(out) if left else _row_major(out)
    return apply(LU_SOLVE, out, (LU_, B), (pivots, left, adjoint), (x, b))


def _lu_solve_positional(LU_, pivots, B, left, adjoint):
    """lu_solve for the formulas under create_graph (backmath.TENSOR): pivots arrive as an array."""
    return lu_solve(LU_, _arr_tensor(pivots), B, left=left, adjoint=adjoint)


def _lu_solve_numpy(LU_, pivots, B, left, adjoint):
    return lu_solve_array(LU_, _arr(pivots), B, left, adjoint)


_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
    "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2230.)")


def lu_solve_legacy(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """torch.lu_solve(b, LU_data, LU_pivots) and Tensor.lu_solve (deprecated, a warning once): linalg.lu_solve."""
    tensor_arg(LU_data, "lu_solve", "LU_data", 2)
    tensor_arg(LU_pivots, "lu_solve", "LU_pivots", 3)
    STATE.warn_once("torch.lu_solve", "UserWarning", _LU_SOLVE_DEPRECATED)
    return lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data=True, unpack_pivots=True) -> tuple:
    """torch.lu_unpack: torch.return_types.lu_unpack(P, L, U), row-major, of any dtype; an output not asked for is
    an empty tensor. L and U share one LuUnpackBackward0 node."""
    tensor_arg(LU_data, "lu_unpack", "LU_data", 1)
    tensor_arg(LU_pivots, "lu_unpack", "LU_pivots", 2)
    unpack_data, unpack_pivots = _bool(unpack_data, "unpack_data"), _bool(unpack_pivots, "unpack_pivots")
    x, p = LU_data._a, LU_pivots._a
    _at_least_2d(x, "torch.lu_unpack")
    if p.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m, n = x.shape[-2:]
    k = min(m, n)
    empty = Tensor(np.zeros((0,), x.dtype))
    P = empty
    if unpack_pivots:
        if p.ndim == 0 or p.shape[-1] < k or (p.size and (p.min() < 1 or p.max() > m)):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?")
        budget.check_tensor(x.shape[:-2] + (m, m), x.dtype.itemsize)
        P = Tensor(permutation_array(_pivot_rows(p, x.shape[:-2], k), m, x.dtype))
    if not unpack_data:
        return reduce.ReturnTypes("lu_unpack", P, empty, Tensor(np.zeros((0,), x.dtype)))
    L, U = unpack_arrays(x)
    L, U = _row_major(L.astype(x.dtype)), _row_major(U)
    outs = la._outputs(LU_UNPACK, None, (L, U), LU_data,
                       {"LU_data_sym_argsize_minus_2": m, "LU_data_sym_argsize_minus_1": n}, ())
    return reduce.ReturnTypes("lu_unpack", P, *outs)


def _pivot_rows(p: np.ndarray, batch: tuple, k: int) -> np.ndarray:
    """lu_unpack's pivots, one row of k per matrix of LU's batch, as PyTorch reads them: the first k of each row,
    one row for the whole batch when there is one (its kernel reads the data without checking the shape)."""
    rows = p.reshape((int(np.prod(p.shape[:-1], dtype=np.int64)), p.shape[-1]))[:, :k]
    count = int(np.prod(batch, dtype=np.int64))
    if rows.shape[0] == count:
        return rows.reshape(batch + (k,))
    if rows.shape[0] == 1:
        return np.broadcast_to(rows[0], batch + (k,))
    raise NotImplementedError(f"gradcli does not implement torch.lu_unpack with LU_pivots of shape "
                              f"{la._size_list(p.shape)} for LU_data of shape {la._size_list(batch)} + matrices")


# ------------------------------------------------------------------------------------------ the _ex forms

def solve_ex(A: Tensor, B: Tensor, *, left=True, check_errors=False) -> tuple:
    """torch.linalg.solve_ex: torch.return_types.linalg_solve_ex(result, info); a singular matrix gives getrs'
    infinities and NaNs and its info, or with check_errors PyTorch's LinAlgError."""
    tensor_arg(A, "linalg_solve_ex", "A", 1)
    tensor_arg(B, "linalg_solve_ex", "B", 2)
    left, check_errors = _bool(left, "left"), _bool(check_errors, "check_errors")
    x, b = A._a, B._a
    info = None
    if x.ndim >= 2 and x.shape[-1] == x.shape[-2] and x.dtype in (np.float32, np.float64):
        info = la.lu_factor(x)[2]
    if info is None or not info.any():
        result = la.solve(A, B, left)            # (its checks and messages, which solve_ex shares)
        return reduce.ReturnTypes("linalg_solve_ex", result, Tensor(_info_like(x, b, info)))
    if x.dtype != b.dtype:
        la.solve(A, B, left)                     # (its dtype message)
    vector = la._is_vector_rhs(x, b)
    b2 = b[..., None] if vector else b
    la._check_rhs("linalg.solve", x, b2, left)
    shape.broadcast_shapes(x.shape[:-2], b2.shape[:-2])
    if check_errors:
        raise la.LinAlgError("torch.linalg.solve_ex: The solver failed because the input matrix is singular.")
    lu_, piv, _ = la.lu_factor(x)
    out = lu_solve_array(lu_, piv + 1, b2, left, False)
    out = np.ascontiguousarray(out[..., 0] if vector else out)
    result = apply(la.SOLVE, out, (A, B), (left, vector), (x, b2))
    return reduce.ReturnTypes("linalg_solve_ex", result, Tensor(_info_like(x, b, info)))


def _info_like(x: np.ndarray, b: np.ndarray, info) -> np.ndarray:
    """solve_ex's info: one per matrix of A's batch (B's batch dims do not broadcast it)."""
    return np.zeros(x.shape[:-2], np.int32) if info is None else info.astype(np.int32)


@autocast_policy("fp32")
def inv_ex(A: Tensor, *, check_errors=False) -> tuple:
    """torch.linalg.inv_ex: torch.return_types.linalg_inv_ex(inverse, info)."""
    tensor_arg(A, "linalg_inv_ex", "A", 1)
    check_errors = _bool(check_errors, "check_errors")
    x = la._square(A, "linalg.inv")
    if x.dtype.char in "eE":
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {type_word(x)}")
    lu_, piv, info = la.lu_factor(x)
    info = info.astype(np.int32)
    eye = np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)
    if not info.any():
        out = la._column_major(la._solve_checked(x, eye)[0])
        return reduce.ReturnTypes("linalg_inv_ex", apply(la.INV, out, (A,)), Tensor(info))
    if check_errors:
        i, where = _first_failure(info)
        raise la.LinAlgError(f"linalg.inv_ex: {la.batch_prefix(x, i)}The diagonal element {where} is zero, the "
                             "inversion could not be completed because the input matrix is singular.")
    out = la._column_major(lu_solve_array(lu_, piv + 1, eye))
    return reduce.ReturnTypes("linalg_inv_ex", apply(la.INV, out, (A,)), Tensor(info))


@autocast_policy("fp32")
def cholesky_ex(A: Tensor, *, upper=False, check_errors=False) -> tuple:
    """torch.linalg.cholesky_ex: torch.return_types.linalg_cholesky_ex(L, info); a matrix that is not positive-
    definite leaves potrf's partial factor (the columns before the failing one factored, the failing pivot's
    value on the diagonal, the rest of its triangle as given) and its info."""
    tensor_arg(A, "linalg_cholesky_ex", "A", 1)
    upper, check_errors = _bool(upper, "upper"), _bool(check_errors, "check_errors")
    x = la._square(A, "linalg.cholesky")
    la._cholesky_dtype(x)
    L, info = la.cholesky_array(np.swapaxes(x, -1, -2) if upper else x)
    info = info.astype(np.int32)
    if info.any():
        if check_errors:
            i, where = _first_failure(info)
            raise la.LinAlgError(f"linalg.cholesky_ex: {la.batch_prefix(x, i)}The factorization could not be "
                                 "completed because the input is not positive-definite (the leading minor of order "
                                 f"{where} is not positive-definite).")
        L = _partial_cholesky(np.swapaxes(x, -1, -2) if upper else x, L, info)
    out = la._column_major(np.swapaxes(L, -1, -2) if upper else L)
    return reduce.ReturnTypes("linalg_cholesky_ex", apply(la.CHOLESKY, out, (A,), (upper,)), Tensor(info))


def _partial_cholesky(x: np.ndarray, L: np.ndarray, info: np.ndarray) -> np.ndarray:
    """Where a factorisation failed at column j (info j + 1), potrf's leftovers: columns before j factored,
    column j's diagonal holding the pivot it rejected, the lower triangle from there on the input's."""
    n = x.shape[-1]
    count = int(np.prod(x.shape[:-2], dtype=np.int64))
    out = L.reshape((count, n, n)).copy()
    src = np.tril(x).reshape((count, n, n))
    for b, failed in enumerate(info.reshape(-1)):
        if failed:
            j = int(failed) - 1
            if x.dtype == np.float32:       # as spotrf rounds it (la.cholesky_array's verdict)
                pivot = la.pivot32(src[b, j, j], out[b, j, :j])
            else:
                row = out[b, j, :j].astype(np.float64)
                pivot = np.float64(src[b, j, j]) - row @ row
            out[b, j:, j:] = src[b, j:, j:]
            out[b, j, j] = pivot
    return out.reshape(x.shape)


# ------------------------------------------------------------------------------------------ cholesky_solve

def cholesky_solve_array(B: np.ndarray, L: np.ndarray, upper: bool) -> np.ndarray:
    """X with (L L^H) X = B (or (U^H U) X = B), potrs' two triangular solves in float64, rounded once."""
    A = np.asanyarray(L, np.float64)
    low = np.swapaxes(A, -1, -2) if upper else A
    with np.errstate(all="ignore"):
        y = la.solve_triangular_array(low, np.asanyarray(B, np.float64), upper=False)
        x = la.solve_triangular_array(np.swapaxes(low, -1, -2), y, upper=True)
    return x.astype(B.dtype)


def _linear_solve_checks(b: np.ndarray, x: np.ndarray, fn: str) -> tuple:
    """linearSolveCheckInputs, shared by cholesky_solve and triangular_solve: the same dtype, square A, B's
    rows A's order, batches that broadcast; the broadcast batch."""
    if b.dtype != x.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {type_word(b)} and A of "
                           f"type {type_word(x)} instead.")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {x.shape[-2]} by {x.shape[-1]} "
                           "matrices")
    if x.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is {x.shape[-1]} by "
                           f"{x.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    batch = shape.broadcast_shapes(b.shape[:-2], x.shape[:-2])
    budget.check_tensor(batch + b.shape[-2:], 8)
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{fn}_cpu\" not implemented for '{type_word(x)}'")
    return batch


@autocast_policy("fp32")
def cholesky_solve(B: Tensor, L: Tensor, upper=False) -> Tensor:
    """torch.cholesky_solve and Tensor.cholesky_solve (CholeskySolveBackward0); batches broadcast, column-major."""
    tensor_arg(B, "cholesky_solve", "input", 1)
    tensor_arg(L, "cholesky_solve", "input2", 2)
    upper = _bool(upper, "upper")
    b, x = B._a, L._a
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead")
    if x.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {x.ndim} dimensions instead")
    _linear_solve_checks(b, x, "cholesky_solve")
    out = la._column_major(cholesky_solve_array(b, x, upper))
    return apply(CHOLESKY_SOLVE, out, (B, L), (upper,))


# ------------------------------------------------------------------------------------------ triangular_solve

_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one "
    "of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)")


def _op_triangle(A, upper: bool, transpose: bool, F=None):
    """(M, upper) with op(A) X = B  <=>  M X = B, M = A or A^T (whose triangle is the other one)."""
    if not transpose:
        return A, upper
    return (F.mT(A) if F is not None else shape.transpose(A, -2, -1)), not upper


def _triangular_solve_grads(F, g, self, A, result, upper, transpose, unitriangular):
    """triangular_solve_backward: gb = op(A)^-T gx (the other transpose), gA = -gb X^T (X gb^T when transpose)
    kept to A's triangle, plus the cloned coefficient's gradient."""
    gx, gm = g.grads if g.__class__ is OutputGrads else (g, None)
    if F.tensors:       # the saved solution as output 0 of the node, so gradients reaching it meet there
        result = la._as_output(result, 0, 2)
    gb = gA = None
    if gx is not None:
        M, up = _op_triangle(A, upper, not transpose, F)
        gb = F.solve_triangular(M, gx, up, True, unitriangular)
        gA = -F.matmul(result, F.mT(gb)) if transpose else -F.matmul(gb, F.mT(result))
        gA = F.triu(gA, int(unitriangular)) if upper else F.tril(gA, -int(unitriangular))
    if gm is not None:
        gA = gm if gA is None else gA + gm
        if gb is None:                  # (PyTorch's zeros for b when only the coefficient has a gradient)
            gb = F.zeros_like(self)
    return gb, gA


def _triangular_solve_b(F, g, self, A, result, upper, transpose, unitriangular):
    return _triangular_solve_grads(F, g, self, A, result, upper, transpose, unitriangular)[0]


def _triangular_solve_A(F, g, self, A, result, upper, transpose, unitriangular):
    return _triangular_solve_grads(F, g, self, A, result, upper, transpose, unitriangular)[1]


def _triangular_solve_jvp(F, ts, xs, result, upper, transpose, unitriangular, output=0):
    """triangular_solve_jvp (generic_solve_jvp): X_t solves op(A) X_t = B_t - A_t X, with A_t as given (not
    transposed, nor kept to the triangle: PyTorch's formula); the cloned coefficient's tangent is A's."""
    if output == 1:
        return forward.tangent_or_zeros(ts, xs, 1)
    dB = forward.tangent_or_zeros(ts, xs, 0)
    dA = forward.tangent_or_zeros(ts, xs, 1)
    M, up = _op_triangle(xs[1], upper, transpose)
    return la.solve_triangular(M, dB - la.matmul(dA, result), upper=up, unitriangular=unitriangular)


# fmt: off
TRIANGULAR_SOLVE = Op("TriangularSolveBackward0", None, ("self", "A", "result", "upper", "transpose", "unitriangular"),
                      (_triangular_solve_b, _triangular_solve_A),
                      inputs=("self", "A"), fits=True, quiet=True, jvp=_triangular_solve_jvp)
# fmt: on


@autocast_policy("fp32")
def triangular_solve(b: Tensor, A: Tensor, upper=True, transpose=False, unitriangular=False) -> tuple:
    """torch.triangular_solve and Tensor.triangular_solve (deprecated, a warning once):
    torch.return_types.triangular_solve(solution, cloned_coefficient), both outputs of one
    TriangularSolveBackward0 node; batches broadcast, both results column-major."""
    STATE.warn_once("torch.triangular_solve", "UserWarning", _TRIANGULAR_SOLVE_DEPRECATED)
    tensor_arg(b, "triangular_solve", "input", 1)
    tensor_arg(A, "triangular_solve", "A", 2)
    upper, transpose = _bool(upper, "upper"), _bool(transpose, "transpose")
    unitriangular = _bool(unitriangular, "unitriangular")
    y, x = b._a, A._a
    if y.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {y.ndim} "
                           "dimensions instead")
    if x.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {x.ndim} "
                           "dimensions instead")
    batch = _linear_solve_checks(y, x, "triangular_solve")
    M, up = (np.swapaxes(x, -1, -2), not upper) if transpose else (x, upper)
    solution = la._column_major(la.solve_triangular_array(M, y, up, True, unitriangular))
    out = apply(TRIANGULAR_SOLVE, solution, (b, A), (upper, transpose, unitriangular))
    cloned = Tensor(la._column_major(np.broadcast_to(x, batch + x.shape[-2:])))
    la.two_outputs(out, cloned)
    if STATE.fw_level is not None:
        forward.propagate(TRIANGULAR_SOLVE, cloned, (b, A), (upper, transpose, unitriangular, 1))
    return reduce.ReturnTypes("triangular_solve", out, cloned)


def _cholesky_solve_positional(B, L, upper):
    return cholesky_solve(B, L, upper)


# ------------------------------------------------------------------------------------------ removed names

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def solve_removed(input, A, *, out=None):
    """torch.solve and Tensor.solve: PyTorch 2.13's Python function, which only raises."""
    raise RuntimeError(_REMOVED + (
        "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
        "reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which can "
        "be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced "
        "with:\nX = torch.linalg.solve(A, B)"))


def lstsq_removed(input, A, *, out=None):
    """torch.lstsq and Tensor.lstsq: PyTorch 2.13's Python function, which only raises."""
    raise RuntimeError(_REMOVED + (
        "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments "
        "and does not return the QR decomposition in the returned tuple (although it returns other information "
        "about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
        "solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the returned "
        "value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned "
        "named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution"))


def symeig_removed(input, eigenvectors=False, upper=True, *, out=None):
    """torch.symeig and Tensor.symeig: PyTorch 2.13's Python function (_symeig), which only raises."""
    raise RuntimeError(_REMOVED + (
        "The default behavior has changed from using the upper triangular portion of the matrix by default to "
        "using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"))


def eig_removed(self, eigenvectors=False, *, e=None, v=None):
    """torch.eig and Tensor.eig: PyTorch 2.13's Python function, which only raises."""
    raise RuntimeError(_REMOVED + (
        "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced "
        "with:\nL_complex, V_complex = torch.linalg.eig(A)"))
