"""LU factors and the solvers built on factors (gradcli/engine/ops/lu.py): every row's backward against finite
differences (and, through tests/test_forward_rows.py, its tangent), second derivatives under create_graph,
the factors' reconstruction (A = P L U), the info tensors of the _ex forms, and PyTorch's messages, each checked
against PyTorch 2.13 (the engine cases in tests/engine_cases/linalg_more.txt compare values and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import error_line
from gradcli.engine import ops
from gradcli.engine.ops import householder as householder_ops
from gradcli.engine.ops import lstsq as lstsq_ops
from gradcli.engine.ops import lu as lu_ops
from gradcli.engine.tensor import Tensor
from test_gradcheck import _leaf, any_, gradcheck

R = np.random.RandomState(11)


def invertible(*shape):
    """Matrices well away from singular, whose partial pivoting picks the diagonal: the pivot order, which
    finite differences cannot move, stays put."""
    return R.uniform(-0.5, 0.5, size=shape) + 3.0 * np.eye(shape[-1])


def _factored(a):
    return ops.lu.lu_factor(a)


def _spd_factor(a):
    """A Cholesky factor from the leaf a (so the gradient of the factor's triangle is exercised)."""
    return ops.linalg.cholesky(a @ a.mT + Tensor(np.eye(a._a.shape[-1])))


_NO_ORMQR_TANGENT = {"raises_unimplemented": "ormqr"}

# row -> list of (function of float64 leaves, input arrays); batches broadcast where the op allows it
CHECKS = {
    lu_ops.LU_FACTOR: [(lambda a: _factored(a).LU, (invertible(3, 3),)),
                       (lambda a: ops.lu.lu_factor_ex(a).LU * 2, (invertible(2, 3, 3),)),
                       (lambda a: _factored(a).LU, (np.eye(3, 5) * 3 + R.uniform(-0.3, 0.3, size=(3, 5)),)),
                       (lambda a: _factored(a).LU, (np.eye(5, 3) * 3 + R.uniform(-0.3, 0.3, size=(5, 3)),))],
    lu_ops.LU: [(lambda a: ops.lu.lu(a).L + ops.lu.lu(a).U, (invertible(3, 3),)),
                (lambda a: ops.lu.lu(a).U, (invertible(2, 3, 3),)),
                (lambda a: ops.lu.lu(a).L, (invertible(3, 3),)),
                (lambda a: ops.lu.lu(a).U.sum(-1) + ops.lu.lu(a).L.sum(-1), (np.eye(3, 5) * 3 + R.uniform(-0.3, 0.3, size=(3, 5)),)),
                (lambda a: ops.lu.lu(a).L.sum(-1) + ops.lu.lu(a).U.sum(), (np.eye(5, 3) * 3 + R.uniform(-0.3, 0.3, size=(5, 3)),)),
                (lambda a: ops.lu.lu(a).L, (np.eye(5, 3) * 3 + R.uniform(-0.3, 0.3, size=(5, 3)),)),
                (lambda a: ops.lu.lu(a).U, (np.eye(3, 5) * 3 + R.uniform(-0.3, 0.3, size=(3, 5)),))],
    lu_ops.LU_SOLVE: [(lambda a, b: ops.lu.lu_solve(*_factored(a), b), (invertible(3, 3), any_(3, 2))),
                      (lambda a, b: ops.lu.lu_solve(*_factored(a), b, adjoint=True), (invertible(3, 3), any_(3, 2))),
                      (lambda a, b: ops.lu.lu_solve(*_factored(a), b, left=False), (invertible(3, 3), any_(2, 3))),
                      (lambda a, b: ops.lu.lu_solve(*_factored(a), b, left=False, adjoint=True),
                       (invertible(3, 3), any_(2, 3))),
                      (lambda a, b: ops.lu.lu_solve(*_factored(a), b), (invertible(2, 3, 3), any_(2, 1, 3, 2)))],
    lu_ops.LU_UNPACK: [(lambda a: ops.lu.lu_unpack(*_factored(a)).L + ops.lu.lu_unpack(*_factored(a)).U,
                        (invertible(3, 3),)),
                       (lambda a: ops.lu.lu_unpack(a, Tensor(np.array([2, 3, 3], np.int32))).U, (any_(3, 3),)),
                       (lambda a: ops.lu.lu_unpack(a, Tensor(np.array([2, 3], np.int32))).L, (any_(4, 2),)),
                       (lambda a: ops.lu.lu_unpack(a, Tensor(np.array([1, 2], np.int32))).L.sum()
                        + ops.lu.lu_unpack(a, Tensor(np.array([1, 2], np.int32))).U.sum(-1), (any_(2, 4),)),
                       (lambda a: ops.lu.lu_unpack(a, Tensor(np.array([2, 2], np.int32))).U, (any_(4, 2),)),
                       (lambda a: ops.lu.lu_unpack(a, Tensor(np.array([2, 2], np.int32))).L, (any_(2, 4),))],
    # triangular_solve's forward-mode formula (PyTorch's, kept) uses A's whole tangent, so it is the derivative for
    # a tangent of A's triangle, and not transposed with transpose=True: the cases read A through triu/tril (and a
    # unit diagonal), a transposed solve through A's diagonal, as the forward-mode test runs them too
    lu_ops.TRIANGULAR_SOLVE: [
        (lambda b, a: ops.lu.triangular_solve(b, a.triu()).solution, (any_(3, 2), invertible(3, 3))),
        (lambda b, a: ops.lu.triangular_solve(b, a * Tensor(np.eye(3)), False, True).solution,
         (any_(3, 2), invertible(3, 3))),
        (lambda b, a: ops.lu.triangular_solve(b, a.triu(1) + Tensor(np.eye(3)), True, False, True).solution,
         (any_(3, 1), invertible(3, 3))),
        (lambda b, a: ops.lu.triangular_solve(b, a.tril(-1) + Tensor(np.eye(3)), False, False, True).solution * 2
         + ops.lu.triangular_solve(b, a.triu()).cloned_coefficient.sum(), (any_(3, 2), invertible(3, 3))),
        (lambda b, a: ops.lu.triangular_solve(b, a.triu()).solution, (any_(2, 1, 3, 2), invertible(2, 3, 3)))],
    lstsq_ops.LSTSQ: [(lambda a, b: ops.lstsq.lstsq(a, b).solution, (any_(5, 3), any_(5, 2))),
                      (lambda a, b: ops.lstsq.lstsq(a, b, driver="gelsd").residuals, (any_(5, 3), any_(5, 2))),
                      (lambda a, b: ops.lstsq.lstsq(a, b, driver="gels").solution
                       + ops.lstsq.lstsq(a, b, driver="gels").residuals, (any_(5, 3), any_(5, 3))),
                      (lambda a, b: ops.lstsq.lstsq(a, b).solution, (any_(3, 5), any_(3, 2))),
                      (lambda a, b: ops.lstsq.lstsq(a, b, driver="gelss").solution, (any_(5, 3), any_(5))),
                      (lambda a, b: ops.lstsq.lstsq(a, b, driver="gelsd").residuals.sum()
                       + ops.lstsq.lstsq(a, b).solution.sum(), (any_(1, 5, 3), any_(2, 5, 2)))],
    # householder_product: reflectors stored below the diagonal, tau their scales
    householder_ops.HOUSEHOLDER_PRODUCT: [
        (lambda h, t: ops.householder.householder_product(h, t), (any_(4, 3), R.uniform(0.5, 1.5, size=3))),
        (lambda h, t: ops.householder.householder_product(h, t), (any_(4, 3), R.uniform(0.5, 1.5, size=2))),
        (lambda h, t: ops.householder.householder_product(h, t) ** 2, (any_(2, 3, 3), R.uniform(0.5, 1.5, size=(2, 3))))],
    # ormqr (PyTorch has no forward-mode formula for it), each side and transpose, reflectors from geqrf's storage
    householder_ops.ORMQR: [
        (lambda h, t, c: ops.householder.ormqr(h, t, c), (any_(4, 3), R.uniform(0.5, 1.5, size=3), any_(4, 2)),
         _NO_ORMQR_TANGENT),
        (lambda h, t, c: ops.householder.ormqr(h, t, c, True, True), (any_(4, 3), R.uniform(0.5, 1.5, size=3),
                                                                       any_(4, 2)), _NO_ORMQR_TANGENT),
        (lambda h, t, c: ops.householder.ormqr(h, t, c, False) ** 2, (any_(4, 3), R.uniform(0.5, 1.5, size=3),
                                                                       any_(2, 4)), _NO_ORMQR_TANGENT),
        (lambda h, t, c: ops.householder.ormqr(h, t, c, False, True), (any_(2, 3, 3), R.uniform(0.5, 1.5, size=(2, 3)),
                                                                        any_(2, 2, 3)), _NO_ORMQR_TANGENT)],
    householder_ops.GEQRF: [(lambda a: ops.householder.geqrf(a).a, (any_(3, 3),),
                             {"raises_not_implemented": "geqrf", "raises_unimplemented": "geqrf"})],
    lu_ops.CHOLESKY_SOLVE: [(lambda b, a: ops.lu.cholesky_solve(b, _spd_factor(a)), (any_(3, 2), invertible(3, 3))),
                            (lambda b, a: ops.lu.cholesky_solve(b, _spd_factor(a).mT, upper=True),
                             (any_(3, 2), invertible(3, 3))),
                            (lambda b, a: b.cholesky_solve(_spd_factor(a)), (any_(2, 1, 3, 2), invertible(2, 3, 3)))],
}


# the functions PyTorch composes from other ops (gradcli/engine/ops/linalg_composed.py, and matrix_norm's orders):
# no rows of their own, but each is checked against finite differences as a whole
COMPOSED = [
    ("vecdot", lambda a, b: ops.linalg_composed.vecdot(a, b), (any_(3, 4), any_(4))),
    ("vecdot_vectors", lambda a, b: ops.linalg_composed.vecdot(a, b), (any_(4), any_(4))),
    ("vecdot_dim0", lambda a, b: ops.linalg_composed.vecdot(a, b, dim=0), (any_(3, 4), any_(3, 1))),
    ("vander", lambda a: ops.linalg_composed.vander(a, N=4), (any_(2, 3),)),
    ("tensorinv", lambda a: ops.linalg_composed.tensorinv(a), (invertible(6, 6).reshape(2, 3, 6),)),
    ("tensorinv_ind1", lambda a: ops.linalg_composed.tensorinv(a, 1), (invertible(4, 4).reshape(4, 2, 2),)),
    ("tensorsolve", lambda a, b: ops.linalg_composed.tensorsolve(a, b), (invertible(6, 6).reshape(2, 3, 6), any_(2, 3))),
    ("tensorsolve_dims", lambda a, b: ops.linalg_composed.tensorsolve(a, b, dims=(0, 2)),
     (invertible(6, 6).reshape(6, 2, 3).transpose(1, 0, 2), any_(6))),
    ("cond", lambda a: ops.linalg_composed.cond(a), (invertible(3, 3),)),
    ("cond_-2", lambda a: ops.linalg_composed.cond(a, -2), (any_(4, 3),)),
    ("cond_nuc", lambda a: ops.linalg_composed.cond(a, "nuc"), (invertible(2, 3, 3),)),
    ("matrix_norm_1", lambda a: ops.linalg.matrix_norm(a, 1), (any_(2, 3, 4),)),
    ("matrix_norm_-inf", lambda a: ops.linalg.matrix_norm(a, float("-inf"), dim=(2, 0), keepdim=True), (any_(2, 3, 4),)),
    ("matrix_norm_2", lambda a: ops.linalg.matrix_norm(a, 2), (any_(2, 3, 4),)),
    ("matrix_norm_nuc", lambda a: ops.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True), (any_(2, 3, 4),)),
]


@pytest.mark.parametrize("name, fn, arrays", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_functions_match_finite_differences(name, fn, arrays):
    gradcheck(fn, *arrays)


def _params():
    return [pytest.param(fn, arrays, rest[0] if rest else {}, id=f"{row.node}-{i}") for row, cases in CHECKS.items()
            for i, (fn, arrays, *rest) in enumerate(cases)]


@pytest.mark.parametrize("fn, arrays, options", _params())
def test_backward_matches_finite_differences(fn, arrays, options):
    if "raises_not_implemented" in options:         # geqrf: PyTorch has no derivative for it
        with pytest.raises(NotImplementedError, match=f"^the derivative for '{options['raises_not_implemented']}'"):
            fn(*[_leaf(a) for a in arrays]).sum().backward()
        return
    gradcheck(fn, *arrays)


def _second(f, a):
    from gradcli.engine import autograd
    from gradcli.engine.backward import grad
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        (g,) = grad(f(x * x), x, create_graph=True)
    return g


# second derivatives: the create_graph formulas are differentiable compositions of recorded ops
SECOND = [
    ("lu_factor", lambda a: _second(lambda x: (_factored(x).LU ** 2).sum(), a), (invertible(3, 3) * 0.6,)),
    ("lu", lambda a: _second(lambda x: (ops.lu.lu(x).U ** 2).sum() + ops.lu.lu(x).L.sum(), a), (invertible(3, 3) * 0.6,)),
    ("lu_solve", lambda a: _second(lambda x: (ops.lu.lu_solve(*_factored(x), x[:, :2]) ** 2).sum(), a),
     (invertible(3, 3) * 0.6,)),
    ("cholesky_solve", lambda a: _second(lambda x: (ops.lu.cholesky_solve(x[:, :2], _spd_factor(x)) ** 2).sum(), a),
     (invertible(3, 3) * 0.6,)),
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(fn, *arrays, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (2, 3, 3), (1, 1), (0, 0), (3, 0)])
def test_the_factors_rebuild_the_matrix(shape):
    a = Tensor(R.standard_normal(shape))
    P, L, U = ops.lu.lu(a)
    np.testing.assert_allclose((P @ L @ U)._a, a._a, atol=1e-12)
    LU, pivots = ops.lu.lu_factor(a) if 0 not in shape else (None, None)
    if LU is not None:
        P2, L2, U2 = ops.lu.lu_unpack(LU, pivots)
        assert np.array_equal(P2._a, P._a) and np.array_equal(L2._a, L._a) and np.array_equal(U2._a, U._a)


def test_lu_solve_agrees_with_solve_and_its_adjoint_forms():
    a, b = Tensor(invertible(4, 4)), Tensor(R.standard_normal((4, 3)))
    LU, pivots = ops.lu.lu_factor(a)
    np.testing.assert_allclose(ops.lu.lu_solve(LU, pivots, b)._a, np.linalg.solve(a._a, b._a), atol=1e-12)
    np.testing.assert_allclose(ops.lu.lu_solve(LU, pivots, b, adjoint=True)._a, np.linalg.solve(a._a.T, b._a),
                               atol=1e-12)
    bt = Tensor(b._a.T.copy())
    np.testing.assert_allclose(ops.lu.lu_solve(LU, pivots, bt, left=False)._a, np.linalg.solve(a._a.T, b._a).T,
                               atol=1e-12)
    np.testing.assert_allclose(ops.lu.lu_solve(LU, pivots, bt, left=False, adjoint=True)._a,
                               np.linalg.solve(a._a, b._a).T, atol=1e-12)


def test_the_info_tensors_mark_the_failing_matrix():
    singular = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
    assert ops.lu.lu_factor_ex(Tensor(singular)).info._a.tolist() == [0, 2]
    assert ops.lu.inv_ex(Tensor(singular)).info._a.tolist() == [0, 2]
    assert ops.lu.solve_ex(Tensor(singular), Tensor(np.ones((2, 2)))).info._a.tolist() == [0, 2]
    assert ops.lu.cholesky_ex(Tensor(singular)).info._a.tolist() == [0, 2]
    assert ops.lu.cholesky_ex(Tensor(-singular)).info._a.tolist() == [1, 1]


@pytest.mark.parametrize("code, want", [
    ("torch.linalg.lu_factor(torch.tensor([[1., 2.], [2., 4.]]))",
     "RuntimeError: torch.linalg.lu_factor: U[2,2] is zero and using it on lu_solve would result in a division by "
     "zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
     "linalg.lu_factor_ex(A, pivot)"),
    ("torch.linalg.lu_factor(torch.ones(3))",
     "RuntimeError: torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    ("torch.linalg.lu(torch.ones(2, 2).long())", "NotImplementedError: \"lu_cpu\" not implemented for 'Long'"),
    ("torch.linalg.lu(torch.eye(2), pivot=False)",
     "RuntimeError: linalg.lu_factor: LU without pivoting is not implemented on the CPU"),
    ("torch.linalg.lu_factor_ex(torch.eye(2), check_errors=1)",
     "TypeError: linalg_lu_factor_ex(): argument 'check_errors' must be bool, not int"),
    ("torch.linalg.lu_solve(torch.eye(2), torch.tensor([1, 2]), torch.eye(2))",
     "RuntimeError: linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"),
    ("torch.linalg.lu_solve(torch.eye(2), torch.tensor([0, 2], dtype=torch.int32), torch.eye(2))",
     "RuntimeError: Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the result of "
     "lu_factor?"),
    ("torch.lu_unpack(torch.eye(2), torch.tensor([1, 2]))",
     "RuntimeError: torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
     "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor"),
    ("torch.cholesky_solve(torch.ones(2, 2), torch.eye(3))",
     "RuntimeError: Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b matrix is 2 by 2"),
    ("torch.cholesky_solve(torch.ones(3, 2), torch.eye(3), upper=1)",
     "TypeError: cholesky_solve(): argument 'upper' must be bool, not int"),
    ("torch.symeig(torch.eye(2))",
     "RuntimeError: This function was deprecated since version 1.9 and is now removed. The default behavior has "
     "changed from using the upper triangular portion of the matrix by default to using the lower triangular "
     "portion."),
])
def test_error_messages_are_pytorchs(code, want):
    assert error_line(f"import torch\n{code}\n").startswith(want)
