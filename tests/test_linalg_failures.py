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


def test_a_nan_fails_lstsq_pinv_and_matrix_rank_as_in_pytorch():
    # PyTorch 2.13 (MKL's LAPACK) prints these messages (checked with the oracle; MKL's own line on stdout,
    # "Intel oneMKL ERROR: Parameter 4 was incorrect on entry to DGELSY.", is not reproduced)
    source = """import torch
nan = float('nan')
A = torch.tensor([[1., 2.], [2., 3.], [0., 1.]], dtype=torch.float64)
B = torch.tensor([[1.], [nan], [2.]], dtype=torch.float64)
for f in [lambda: torch.linalg.lstsq(A, B), lambda: torch.linalg.lstsq(A, B, driver='gels'),
          lambda: torch.linalg.lstsq(torch.stack([A, A * nan]), torch.ones(2, 3, 1, dtype=torch.float64), driver='gelsd'),
          lambda: torch.linalg.pinv(A * nan), lambda: torch.linalg.matrix_rank(torch.stack([A, A * nan]))]:
    try:
        print(f())
    except RuntimeError as e:
        print(type(e).__name__, e)
"""
    result = run_script(source)
    assert result.error is None, result.error
    head = ('RuntimeError false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
            'BatchLinearAlgebra.cpp":1613, please report a bug to PyTorch. torch.linalg.lstsq: ')
    tail = "has illegal value. Most certainly there is a bug in the implementation calling the backend library."
    svd = "The algorithm failed to converge because the input matrix contained non-finite values."
    assert result.out.splitlines() == [
        f"{head}Argument 6 {tail}", f"{head}Argument 7 {tail}", f"{head}(Batch element 1): Argument 4 {tail}",
        f"_LinAlgError linalg.svd: {svd}", f"_LinAlgError linalg.svd: (Batch element 1): {svd}"]
