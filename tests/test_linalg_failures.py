"""LAPACK failures reach a script as PyTorch's torch._C._LinAlgError, never as numpy's own exception."""

from __future__ import annotations

from conftest import run_script

# A covariance matrix whose last row and column are NaN (a column scaled by 1e308 overflowed): PyTorch 2.13's
# LAPACK call fails on it for eigvalsh, eigh of a batch holding it (naming the element) and pinv(hermitian=True)
SCRIPT = """import torch
C = torch.eye(4, dtype=torch.float64) + 0.1
C[3, :] = float('nan')
C[:, 3] = float('nan')
for f in [lambda: torch.linalg.eigvalsh(C, UPLO='U'), lambda: torch.linalg.eigh(torch.stack([torch.eye(4, dtype=torch.float64), C])),
          lambda: torch.linalg.pinv(C, hermitian=True), lambda: torch.linalg.eigh(C.float())]:
    try:
        print(f())
    except torch.linalg.LinAlgError as e:
        print(type(e).__name__, e)
"""


def test_eigh_that_does_not_converge_is_pytorchs_linalg_error():
    result = run_script(SCRIPT)
    assert result.error is None, result.error
    lines = result.out.splitlines()
    assert len(lines) == 4
    words = ("The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
             "repeated eigenvalues (error code: LAPACK's info, which gradcli cannot read).")
    assert lines[0] == f"_LinAlgError linalg.eigh: {words}"
    assert lines[1] == f"_LinAlgError linalg.eigh: (Batch element 1): {words}"
    assert lines[2] == lines[3] == lines[0]
