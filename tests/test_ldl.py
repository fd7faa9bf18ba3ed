"""torch.linalg.ldl_factor's packed output read back: P L D L^T P^T rebuilds A (1 x 1 and 2 x 2 pivots alike),
and ldl_solve's X solves A X = B (the bits against PyTorch: tests/engine_cases/ldl.txt)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops.ldl import sytf2, sytrs


def _rebuild(ld: np.ndarray, ipiv: np.ndarray) -> np.ndarray:
    """A from sytf2's LD and pivots, by LAPACK's description of the lower factorisation: A = P1 L1 D ... applied
    as the sequence of interchanges and unit lower block columns."""
    n = ld.shape[0]
    D = np.zeros((n, n))
    k = 0
    steps = []
    while k < n:
        if ipiv[k] > 0:
            steps.append((k, 1, ipiv[k] - 1))
            D[k, k] = ld[k, k]
            k += 1
        else:
            steps.append((k, 2, -ipiv[k] - 1))
            D[k:k + 2, k:k + 2] = [[ld[k, k], ld[k + 1, k]], [ld[k + 1, k], ld[k + 1, k + 1]]]
            k += 2
    # A = U_1 ... U_m D U_m^T ... U_1^T with U_k = P_k L_k (LAPACK's dsytrf documentation, uplo 'L')
    M = D.copy()
    for k, s, kp in reversed(steps):
        Lk = np.eye(n)
        Lk[k + s:, k:k + s] = ld[k + s:, k:k + s]
        Pk = np.eye(n)
        Pk[[k + s - 1, kp]] = Pk[[kp, k + s - 1]]
        U = Pk @ Lk
        M = U @ M @ U.T
    return M


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_the_factors_rebuild_the_matrix_and_solve_it(n):
    rs = np.random.RandomState(n)
    blocks = 0
    for trial in range(6):
        A = rs.standard_normal((n, n))
        if trial % 2:
            A[np.diag_indices(n)] *= 0.01            # small pivots: 2 x 2 blocks
        A = A + A.T
        ld, ipiv, info = sytf2(A)
        assert info == 0
        np.testing.assert_allclose(_rebuild(ld, ipiv), A, atol=1e-10)
        B = rs.standard_normal((n, 3))
        np.testing.assert_allclose(A @ sytrs(ld, ipiv, B), B, atol=1e-8)
        blocks += int((ipiv < 0).any())
    assert blocks > 0 or n == 1             # the small diagonals gave 2 x 2 pivots
