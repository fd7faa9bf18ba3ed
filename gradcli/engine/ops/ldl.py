"""torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve: the Bunch-Kaufman factorisation A = P L D L^T P^T of a
symmetric matrix (LAPACK's sytrf with uplo 'L') and its solves (sytrs).

The factor is sytf2's column loop as the oracle's MKL rounds it: a 1 x 1 pivot's rank-one update of the lower
triangle one fused multiply-add per element (dsyr's x_i * (-x_j / d) added), its column then scaled by 1 / d; a
2 x 2 pivot's multipliers fused too (d21 * fma(d11, a_jk, -a_jk1), its 1 / fma(d11, d22, -1)), each element of
the trailing triangle less two fused products. That is bit for bit PyTorch's result up to order 65 or so (MKL
factors larger matrices in blocks, dlasyf, to the same figures but other last bits). The pivot search is
sytf2's: alpha = (1 + sqrt(17)) / 8, the column's and the row's largest entries; a zero column (max(|a_kk|, the
column's largest) zero, NaN counting as the smaller) gives info and no elimination. LD is column-major, the
upper triangle zero, pivots int32 (1-based, negative pairs for 2 x 2 blocks). No derivative: a result that
requires grad carries PyTorch's NotImplemented node.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget
from gradcli.engine.fma import fma
from gradcli.engine.ops import elementwise, reduce
from gradcli.engine.ops import linalg as la
from gradcli.engine.recording import needs_grad, type_word
from gradcli.engine.tensor import Tensor

_INTERNAL = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":1642, '
             "please report a bug to PyTorch. {}: Unknown error code: {}.")


# ----------------------------------------------------------------------------------------------- sytf2

def _amax(v: np.ndarray) -> int:
    """i?amax: the first largest magnitude (a NaN first)."""
    return int(np.argmax(np.abs(v)))


def _max(a, b):
    """Fortran's MAX(a, b) as x86's maxsd takes it: b when either is NaN."""
    return b if (a != a or b != b) else max(a, b)


def sytf2(matrix: np.ndarray):
    """One matrix's LD (the lower triangle), 1-based pivots and info."""
    a = np.array(matrix, copy=True)
    n = a.shape[0]
    t = a.dtype.type
    alpha = t((1 + math.sqrt(17.0)) / 8)
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + _amax(a[k + 1:, k])
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, t(0)
        if _max(absakk, colmax) == 0:
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                jmax = k + _amax(a[imax, k:imax])
                rowmax = abs(a[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + _amax(a[imax + 1:, imax])
                    rowmax = _max(rowmax, abs(a[jmax, imax]))
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _interchange(a, k, kk, kp, kstep)
            if kstep == 1:
                _eliminate_one(a, k)
            else:
                _eliminate_two(a, k)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _interchange(a: np.ndarray, k: int, kk: int, kp: int, kstep: int) -> None:
    """Rows and columns kk and kp of the trailing lower triangle swapped (and a 2 x 2 block's subdiagonal)."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    column = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = column
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _eliminate_one(a: np.ndarray, k: int) -> None:
    """A 1 x 1 pivot: A22 -= x x^T / d (dsyr, fused), then the column scaled by 1 / d."""
    n = a.shape[0]
    if k == n - 1:
        return
    t = a.dtype.type
    d11 = t(1) / a[k, k]
    x = a[k + 1:, k].copy()
    temp = -d11 * x
    with np.errstate(all="ignore"):
        a[k + 1:, k + 1:] = fma(x[:, None], np.broadcast_to(temp[None, :], (n - k - 1, n - k - 1)),
                                a[k + 1:, k + 1:])
        a[k + 1:, k] = x * d11


def _eliminate_two(a: np.ndarray, k: int) -> None:
    """A 2 x 2 pivot: each later row's two multipliers, and the trailing triangle less both products (fused)."""
    n = a.shape[0]
    if k >= n - 2:
        return
    t = a.dtype.type
    with np.errstate(all="ignore"):
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        tt = t(1) / fma(np.asanyarray(d11), np.asanyarray(d22), np.asanyarray(t(-1)))
        d21 = tt / d21
        ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
        wk = d21 * fma(np.full_like(ck, d11), ck, -ck1)
        wkp1 = d21 * fma(np.full_like(ck, d22), ck1, -ck)
        m = n - k - 2
        block = fma(-ck[:, None], np.broadcast_to(wk[None, :], (m, m)), a[k + 2:, k + 2:])
        a[k + 2:, k + 2:] = fma(-ck1[:, None], np.broadcast_to(wkp1[None, :], (m, m)), block)
        a[k + 2:, k] = wk
        a[k + 2:, k + 1] = wkp1


# ------------------------------------------------------------------------------------------ the ops

def _square_floats(x: np.ndarray, fn: str) -> None:
    """squareCheckInputs and checkFloatingOrComplex, as both ops' meta functions run them."""
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")
    if x.dtype.kind != "f":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {type_word(x)}")


def _args(A, name: str, hermitian) -> np.ndarray:
    if A.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    la._bool_arg(hermitian, "hermitian")
    x = A._a
    _square_floats(x, "torch.linalg.ldl_factor_ex")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{type_word(x)}'")
    return x


def _factor(A: Tensor, hermitian, name: str):
    x = _args(A, name, hermitian)
    budget.check_tensor(x.shape, x.dtype.itemsize)
    n = x.shape[-1]
    batch = x.shape[:-2]
    flat = x.reshape((int(np.prod(batch, dtype=np.int64)), n, n))
    ld = np.zeros_like(flat)
    piv = np.zeros((flat.shape[0], n), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for b in range(flat.shape[0]):
        ld[b], piv[b], info[b] = sytf2(flat[b])
    ld = la._column_major(ld.reshape(x.shape))
    out = elementwise.not_implemented(ld, (A,), "linalg_ldl_factor_ex") if needs_grad(A) else Tensor(ld)
    return out, Tensor(piv.reshape(batch + (n,))), info.reshape(batch)


def _check(info: np.ndarray, fn: str) -> None:
    """PyTorch's check of sytrf's info: any positive code is an internal assert (a zero pivot)."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        raise RuntimeError(_INTERNAL.format(fn, int(flat[bad[0]])))


def ldl_factor_ex(input, *, hermitian=False, check_errors=False):
    """torch.linalg.ldl_factor_ex: torch.return_types.linalg_ldl_factor_ex(LD, pivots, info)."""
    LD, pivots, info = _factor(input, hermitian, "linalg_ldl_factor_ex")
    if la._bool_arg(check_errors, "check_errors"):
        _check(info, "torch.linalg.ldl_factor_ex")
    return reduce.ReturnTypes("linalg_ldl_factor_ex", LD, pivots, Tensor(info))


def ldl_factor(input, *, hermitian=False):
    """torch.linalg.ldl_factor: torch.return_types.linalg_ldl_factor(LD, pivots); a zero pivot is PyTorch's
    internal assert (its message names the error code)."""
    LD, pivots, info = _factor(input, hermitian, "linalg_ldl_factor")
    _check(info, "torch.linalg.ldl_factor")
    return reduce.ReturnTypes("linalg_ldl_factor", LD, pivots)


# ----------------------------------------------------------------------------------------------- sytrs

def _lane_dot(rows: np.ndarray, col: np.ndarray) -> np.ndarray:
    """sum_i col[i] * rows[i] as the oracle's vector kernel adds it: one fused accumulator per lane (8 for
    float64, 16 for float32; element i into lane i mod L), the lanes then added pairwise, halves first."""
    lanes = 8 if rows.dtype == np.float64 else 16
    acc = [np.zeros(rows.shape[1:], dtype=rows.dtype) for _ in range(min(lanes, max(rows.shape[0], 1)))]
    width = len(acc)
    for i in range(rows.shape[0]):
        acc[i % width] = fma(np.full_like(acc[0], col[i]), rows[i], acc[i % width])
    while len(acc) & (len(acc) - 1):        # (a lane count below L: the empty lanes add zeros)
        acc.append(np.zeros_like(acc[0]))
    while len(acc) > 1:
        half = len(acc) // 2
        acc = [acc[j] + acc[j + half] for j in range(half)]
    return acc[0]


def _rank_one(rows: np.ndarray, col: np.ndarray, src: np.ndarray) -> np.ndarray:
    """dger: rows -= col src^T, one fused multiply-add per element."""
    return fma(-col[:, None], np.broadcast_to(src[None, :], rows.shape), rows)


def _outside(ipiv: np.ndarray) -> bool:
    """Pivots no factorisation gives: a 2 x 2 block that runs past the matrix (sytrs would read outside it)."""
    n = ipiv.shape[0]
    k = 0
    while k < n:
        if ipiv[k] < 0 and k == n - 1:
            return True
        k += 1 if ipiv[k] > 0 else 2
    k = n - 1
    while k >= 0:
        if ipiv[k] < 0 and k == 0:
            return True
        k -= 1 if ipiv[k] > 0 else 2
    return False


def sytrs(ld: np.ndarray, ipiv: np.ndarray, B: np.ndarray) -> np.ndarray:
    """One system's X from LD and its 1-based pivots (sytrs, uplo 'L'): L D L^T X = P^T B."""
    if _outside(ipiv):
        raise NotImplementedError("gradcli does not implement torch.linalg.ldl_solve with pivots that put a 2 x 2 "
                                  "block past the matrix (LAPACK's sytrs reads outside it there; ldl_factor never "
                                  "gives such pivots)")
    a, b = ld, np.array(B, copy=True)
    n = a.shape[0]
    t = a.dtype.type
    k = 0
    with np.errstate(all="ignore"):
        while k < n:                    # L D Y = P^T B
            if ipiv[k] > 0:
                kp = ipiv[k] - 1
                if kp != k:
                    b[[k, kp]] = b[[kp, k]]
                if k < n - 1:
                    b[k + 1:] = _rank_one(b[k + 1:], a[k + 1:, k], b[k])
                b[k] = b[k] * (t(1) / a[k, k])
                k += 1
            else:
                kp = -ipiv[k] - 1
                if kp != k + 1:
                    b[[k + 1, kp]] = b[[kp, k + 1]]
                if k < n - 2:
                    b[k + 2:] = _rank_one(b[k + 2:], a[k + 2:, k], b[k])
                    b[k + 2:] = _rank_one(b[k + 2:], a[k + 2:, k + 1], b[k + 1])
                akm1k = a[k + 1, k]
                akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
                denom = akm1 * ak - t(1)
                bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
                b[k] = (ak * bkm1 - bk) / denom
                b[k + 1] = (akm1 * bk - bkm1) / denom
                k += 2
        k = n - 1
        while k >= 0:                   # L^T X = Y, then the rows put back
            if ipiv[k] > 0:
                if k < n - 1:
                    b[k] = b[k] - _lane_dot(b[k + 1:], a[k + 1:, k])
                kp = ipiv[k] - 1
                if kp != k:
                    b[[k, kp]] = b[[kp, k]]
                k -= 1
            else:
                if k < n - 1:
                    b[k] = b[k] - _lane_dot(b[k + 1:], a[k + 1:, k])
                    b[k - 1] = b[k - 1] - _lane_dot(b[k + 1:], a[k + 1:, k - 1])
                kp = -ipiv[k] - 1
                if kp != k:
                    b[[k, kp]] = b[[kp, k]]
                k -= 2
    return b


def _solve_args(LD, pivots, B) -> None:
    """linalg_ldl_solve's checks in PyTorch's order (its meta function's, then the kernel's pivots)."""
    for value, name, position in ((LD, "LD", 1), (pivots, "pivots", 2), (B, "B", 3)):
        if value.__class__ is not Tensor:
            raise TypeError(f"linalg_ldl_solve(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    x, p, b = LD._a, pivots._a, B._a
    _square_floats(x, "torch.linalg.ldl_solve")
    if b.dtype != x.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {type_word(b)} and A of "
                           f"type {type_word(x)} instead.")
    B.size(-2)                          # (a 1-d B: PyTorch's IndexError)
    if x.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {x.shape[-1]} by "
                           f"{x.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    if p.shape != x.shape[:-1]:
        raise RuntimeError("torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {la._size_list(p.shape)} instead")
    if p.dtype.kind not in "iu":
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {type_word(p)}")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"ldl_solve_kernel_cpu\" not implemented for '{type_word(x)}'")
    magnitude = np.abs(p.astype(np.int64))
    if (magnitude < 1).any():
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the "
                           "result of ldl_factor?")
    if (magnitude > x.shape[-2]).any():
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly pass "
                           "the result of ldl_factor?")


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """torch.linalg.ldl_solve: X with A X = B from ldl_factor's LD and pivots (batches broadcast with B's);
    column-major, as sytrs leaves it."""
    _solve_args(LD, pivots, B)
    la._bool_arg(hermitian, "hermitian")
    x, p, b = LD._a, pivots._a, B._a
    n = x.shape[-1]
    batch = np.broadcast_shapes(x.shape[:-2], b.shape[:-2])
    budget.check_tensor(batch + b.shape[-2:], b.dtype.itemsize)
    count = int(np.prod(batch, dtype=np.int64))
    lds = np.broadcast_to(x, batch + x.shape[-2:]).reshape((count, n, n))
    pivs = np.broadcast_to(p.astype(np.int64), batch + (n,)).reshape((count, n))
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((count,) + b.shape[-2:])
    X = np.empty(bs.shape, dtype=b.dtype)
    for i in range(bs.shape[0]):
        X[i] = sytrs(lds[i], pivs[i], bs[i])
    X = la._column_major(X.reshape(batch + b.shape[-2:]))
    if needs_grad(LD, B):
        return elementwise.not_implemented(X, (LD, B), "linalg_ldl_solve")
    return Tensor(X)
