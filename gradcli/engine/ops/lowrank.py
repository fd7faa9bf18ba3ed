"""torch.svd_lowrank and torch.pca_lowrank: Halko, Martinsson and Tropp's randomized range finder and the SVD of
the projected matrix, in the calls (and the random draws) of PyTorch 2.13's torch/_lowrank.py."""

from __future__ import annotations

import sys

from gradcli.engine import dtypes, factories
from gradcli.engine.ops import linalg
from gradcli.engine.tensor import Tensor

# Why compositions: PyTorch's functions are Python over randn, matmul, linalg.qr and linalg.svd, so the graph
# they record and the random stream they draw from are those ops'; the same calls here give the same. The
# singular vectors' signs are the engine's SVD's (docs/numerics.md: LAPACK implementations choose them
# differently), so U and V may differ from PyTorch's by the sign of a column pair.


def _floating(A: Tensor):
    """The dtype the random matrix is drawn in: A's when it is floating, else float32."""
    return A.dtype if A.is_floating_point() else dtypes.float32


def _matmul(A, B):
    """PyTorch's _linalg_utils.matmul for dense operands (a sparse A is refused on entry)."""
    return linalg.matmul(A, B)


def _dense(A, fn: str) -> None:
    """A sparse tensor (which only a script that made one has loaded the module of) is refused."""
    sparse = sys.modules.get("gradcli.engine.sparse")
    if sparse is not None and A.__class__ is sparse.SparseTensor:
        raise NotImplementedError(f"gradcli does not implement torch.{fn} of a sparse tensor")


def _basis(A, q: int, niter, M) -> Tensor:
    """An orthonormal Q whose range approximates A's (minus M's): QR of A R for a normal R (A.shape[-1] by q), then
    niter rounds of QR through A^H and A."""
    niter = 2 if niter is None else niter
    R = factories.randn(A.shape[-1], q, dtype=_floating(A) if not A.is_complex() else A.dtype)
    X = _matmul(A, R)
    if M is not None:
        X = X - _matmul(M, R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = _matmul(A.mH, Q)
        if M is not None:
            X = X - _matmul(M.mH, Q)
        Q = linalg.qr(X).Q
        X = _matmul(A, Q)
        if M is not None:
            X = X - _matmul(M, Q)
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None) -> tuple:
    _dense(A, "svd_lowrank")
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _basis(A, q, niter, M)
    B = _matmul(Q.mH, A)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2) -> tuple:
    _dense(A, "pca_lowrank")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
