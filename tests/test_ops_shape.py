"""Shape ops and linear algebra: every row's backward against finite differences, second derivatives of the
smooth products, the node chains PyTorch records for matmul, reshape and einsum, views sharing their base, and
PyTorch's error messages word for word (each checked against PyTorch 2.13)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine import autograd, ops
from gradcli.engine.factories import tensor
from gradcli.engine.backward import grad
from gradcli.engine.ops import arith, linalg, shape
from gradcli.engine.tensor import Tensor
from test_gradcheck import _leaf, any_, first_derivative, gradcheck, recorded_names

R = np.random.RandomState(7)


CHOLESKY_FORWARD = {"raises_unimplemented": "cholesky"}    # torch.cholesky has no forward-mode formula in PyTorch


def invertible(*shape):
    """Matrices well away from singular: a dominant diagonal plus noise."""
    a = R.uniform(-0.5, 0.5, size=shape)
    n = shape[-1]
    return a + 2.0 * np.eye(n)


def _second(f, a):
    """The gradient of f at a, as a differentiable function of a (exercises backward-of-backward rows)."""
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        (g,) = grad(f(x * x), x, create_graph=True)
    return g


def _svd_invariants(r, k=None):
    """Functions of an SVD its singular vectors' signs do not change (k: the columns of U, rows of Vh paired)."""
    U, S, Vh = (r.U, r.S, r.Vh) if k is None else (r.U[..., :k], r.S, r.Vh[..., :k, :])
    return (U @ Vh) * 2 + U.abs().sum() + (U @ U.mT).sum() * S.sum() + (U * S.unsqueeze(-2)) @ Vh


def _eigh_invariants(r):
    L, V = r
    return V.abs() * L.unsqueeze(-2) + (V * L.unsqueeze(-2)) @ V.mT + V[..., :1] @ V[..., :1].mT


def _sum_of(outputs):
    total = outputs[0] * 1.0
    for k, t in enumerate(outputs[1:], 2):
        total = total + (t * float(k)).sum()
    return total


IDX = tensor([[0, 2, 2], [1, 0, 1]])


def _inplace_view(a, method: str, *args):
    y = a * 1
    getattr(y, method)(*args)
    return y * y                        # a product after it: the node's gradient is not all ones

# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    # advanced indexing's gradient under create_graph (IndexPutImplBackward0): repeated indices add up
    ops.indexing.INDEX_PUT_IMPL: [(first_derivative(lambda a: a[[0, 2, 0]] ** 2), (any_(3, 2),)),
                                  (first_derivative(lambda a, w: a[:, [1, 1]] * w), (any_(2, 3), any_(2, 2)))],
    shape.SQUEEZE_DIMS: [(lambda a: a.squeeze((0, 2)), (any_(1, 3, 1),)), (lambda a: a.squeeze([1]), (any_(2, 3),))],
    shape.SQUEEZE_: [(lambda a, b: a @ b, (any_(3), any_(3, 2))),
                     (lambda a, b: a @ b, (any_(2, 2, 3), any_(3)))],
    # the in-place view ops: the tensor takes the view's shape, its node the in-place row
    shape.TRANSPOSE_T_: [(lambda a: _inplace_view(a, "t_"), (any_(2, 3),))],
    shape.TRANSPOSE_: [(lambda a: _inplace_view(a, "transpose_", 0, -1), (any_(2, 3, 4),)),
                       (lambda a: _inplace_view(a, "swapdims_", 1, 0), (any_(2, 3),))],
    shape.SQUEEZE_ALL_: [(lambda a: _inplace_view(a, "squeeze_"), (any_(1, 3, 1),))],
    shape.UNSQUEEZE_: [(lambda a: _inplace_view(a, "unsqueeze_", -1), (any_(2, 3),))],
    shape.TRANSPOSE: [(lambda a: a.transpose(0, 2), (any_(2, 3, 4),)), (lambda a: a.mT * 2, (any_(2, 3),)),
                      (lambda a: a.swapaxes(-1, 0), (any_(3, 2),))],
    shape.PERMUTE: [(lambda a: a.permute(2, 0, 1), (any_(2, 3, 2),)), (lambda a: a.T, (any_(2, 3),)),
                    (lambda a: a.movedim(0, -1), (any_(2, 3, 4),))],
    shape.RESHAPE_ALIAS: [(lambda a: a.t().reshape(3, 2), (any_(2, 3),)),
                          (lambda a: a[:, :2].reshape(2, 1, 2), (any_(2, 3),))],
    shape.UNSAFE_VIEW: [(lambda a: a.t().reshape(6), (any_(2, 3),)), (lambda a: a.t().flatten(), (any_(3, 2),))],
    shape.VIEW: [(lambda a: a.reshape(3, 2), (any_(2, 3),)), (lambda a: a.flatten(1), (any_(2, 2, 3),)),
                 (lambda a: a.view_as(tensor([[0.0] * 3] * 2)), (any_(6),))],
    shape.EXPAND: [(lambda a: a.expand_as(tensor([[0.0] * 3] * 2)), (any_(3),))],
    shape.REPEAT: [(lambda a: a.repeat(2, 3), (any_(2, 2),)), (lambda a: a.repeat(2, 1, 2), (any_(3),)),
                   (lambda a: a.repeat(1, 1) * a, (any_(2, 3),)), (lambda a: a.repeat(0, 1), (any_(2, 2),))],
    shape.CAT: [(lambda a, b: ops.cat([a, b]), (any_(1, 2), any_(3, 2))),
                (lambda a, b: ops.cat((b, a, b), 1), (any_(2, 1), any_(2, 3))),
                (lambda a: ops.cat([tensor([]), a, tensor([[5.0, 6.0]])]), (any_(2, 2),))],
    shape.STACK: [(lambda a, b: ops.stack([a, b]), (any_(3), any_(3))),
                  (lambda a, b: ops.stack((a, b, a), -1), (any_(2, 2), any_(2, 2)))],
    shape.SPLIT: [(lambda a: _sum_of(a.split(2)), (any_(5, 2),)), (lambda a: _sum_of(a.chunk(2, 1)), (any_(2, 3),))],
    shape.SPLIT_SIZES: [(lambda a: _sum_of(a.split([1, 3], 1)), (any_(2, 4),))],
    shape.UNSAFE_SPLIT: [(lambda a: shape.unsafe_chunk(a, 2, 1)[1] * 2.0, (any_(3, 4),)),
                         (lambda a: shape.unsafe_chunk(a, 3, 0)[2].exp(), (any_(5, 2),)),
                         (lambda a: _sum_of(shape.unsafe_split(a, 2)), (any_(5, 2),))],
    shape.UNSAFE_SPLIT_SIZES: [(lambda a: _sum_of(shape.unsafe_split_with_sizes(a, [1, 3], 1)), (any_(2, 4),))],
    shape.NARROW_COPY: [(lambda a: shape.narrow_copy(a, 1, 1, 2) * a[:, :2], (any_(2, 4),))],
    shape.FLIP: [(lambda a: a.flip(0) * a, (any_(3, 2),)), (lambda a: a.flip((0, 1)), (any_(2, 3),)),
                 (lambda a: a.fliplr(), (any_(2, 3),))],
    shape.ROLL: [(lambda a: a.roll(1) * a, (any_(2, 3),)), (lambda a: a.roll((1, -2), (0, 1)), (any_(3, 3),))],
    shape.GATHER: [(lambda a: a.gather(1, IDX), (any_(2, 3),)),
                   (lambda a: a.gather(0, tensor([[1, 1, 0]])), (any_(2, 3),))],
    shape.GATHER_0D: [(lambda a: a.gather(0, tensor([0, 0, 0])) * a, (any_(),)),
                      (lambda a: a.gather(0, tensor(1)), (any_(3),))],
    shape.INDEX_SELECT: [(lambda a: a.index_select(1, tensor([2, 0, 2])), (any_(2, 3),)),
                         (lambda a: a.index_select(0, tensor([1])), (any_(3, 2),))],
    shape.UNFOLD: [(lambda a: a.unfold(0, 3, 1), (any_(5),)), (lambda a: a.unfold(1, 2, 2) * a.sum(), (any_(2, 5),)),
                   (lambda a: a.unfold(-1, 1, 1), (any_(),))],
    shape.UNFOLD_BACKWARD: [(lambda a: shape.unfold_backward(a, (6,), 0, 3, 2), (any_(2, 3),)),
                            (lambda a: shape.unfold_backward(a, (2, 4), 1, 2, 1) * 2, (any_(2, 3, 2),))],
    shape.TRIL: [(lambda a: a.tril(), (any_(3, 3),)), (lambda a: a.tril(-1) * a, (any_(2, 3, 3),))],
    shape.TRIU: [(lambda a: a.triu(1), (any_(3, 4),))],
    arith.UNBIND: [(lambda a: _sum_of(a.unbind(1)), (any_(2, 3),))],
    linalg.CROSS: [(lambda a, b: linalg.linalg_cross(a, b), (any_(2, 3), any_(2, 3))),
                   (lambda a, b: linalg.cross(a, b, 0), (any_(3, 4), any_(3, 1))),
                   (lambda a, b: linalg.linalg_cross(a * a, b, dim=1), (any_(2, 3, 2), any_(1, 3, 2)))],
    linalg.MM: [(lambda a, b: a @ b, (any_(2, 2, 3), any_(3, 2))),
                (lambda a, b: a @ b, (any_(2, 3), any_(2, 3, 2)))],
    linalg.BMM: [(lambda a, b: a.bmm(b), (any_(2, 2, 3), any_(2, 3, 2))),
                 (lambda a, b: ops.einsum("ij,jk->ik", a, b), (any_(2, 3), any_(3, 2))),
                 (lambda a, b: a @ b, (any_(2, 1, 2, 3), any_(3, 3, 2))),
                 (lambda a, b: ops.einsum("bij,bkj->bik", a, b), (any_(2, 2, 3), any_(2, 2, 3)))],
    linalg.MV: [(lambda a, b: a.mv(b), (any_(2, 3), any_(3))), (lambda a, b: a @ b, (any_(3), any_(2, 3, 2)))],
    linalg.DOT: [(lambda a, b: a.dot(b), (any_(3), any_(3))), (lambda a: a @ a, (any_(4),))],
    linalg.VDOT: [(lambda a, b: a.vdot(b), (any_(3), any_(3)))],
    linalg.DET: [(lambda a: a.det(), (invertible(3, 3),)), (lambda a: ops.det(a), (invertible(2, 2, 2),)),
                 (lambda a: a.t().det(), (invertible(2, 2),))],
    linalg.SOLVE: [(lambda a, b: ops.linalg.solve(a, b), (invertible(3, 3), any_(3, 2))),
                   (lambda a, b: ops.linalg.solve(a, b), (invertible(2, 2, 2), any_(2))),
                   (lambda a, b: ops.linalg.solve(a, b, left=False), (invertible(2, 2), any_(3, 2)))],
    linalg.INV: [(lambda a: a.inverse(), (invertible(3, 3),)), (lambda a: ops.inverse(a), (invertible(2, 2, 2),))],
    # logabsdet through the node's second output (the sign's gradient is ignored, as PyTorch ignores it), and
    # logdet's where over it; the matrix powers and chains are compositions of mm, inv, clone and copy
    # matrix_exp at each degree of its polynomial (by the norm: 1e-9 is degree 1 in float64, ..., 3 is degree 18
    # after scaling and squaring) and for a batch (always degree 18)
    linalg.MATRIX_EXP: [(lambda a: ops.matrix_exp(a * 1e-9), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a * 1e-5), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a * 0.01), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a * 0.05), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a * 0.2), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a * 2.0), (any_(3, 3),)),
                        (lambda a: ops.matrix_exp(a).sum(0), (any_(2, 3, 3),))],
    # svd through quantities its singular vectors' signs (LAPACK's choice) do not change: S, U Vh, U diag(S) Vh,
    # |U|, the projection U U^T; tall, wide, square, full_matrices, batched, torch.svd's V
    linalg.SVD: [(lambda a: ops.linalg.svdvals(a), (any_(4, 3),)),
                 (lambda a: _svd_invariants(ops.linalg.svd(a, full_matrices=False)), (any_(4, 3),)),
                 (lambda a: _svd_invariants(ops.linalg.svd(a, full_matrices=False)), (any_(3, 5),)),
                 (lambda a: _svd_invariants(ops.linalg.svd(a)), (any_(3, 3),)),
                 (lambda a: _svd_invariants(ops.linalg.svd(a), 4), (any_(5, 4),)),
                 (lambda a: _svd_invariants(ops.linalg.svd(a, full_matrices=False)), (any_(2, 3, 2),)),
                 (lambda a: (lambda r: r.U @ r.V.mT * r.S.sum())(a.svd()), (any_(3, 4),))],
    # eigh of a symmetric matrix (a + a^T: PyTorch's gradient is the symmetric one, not a triangle's) through
    # quantities the eigenvectors' signs do not change, from either triangle, batched, eigvalsh
    linalg.EIGH: [(lambda a: ops.linalg.eigvalsh(a + a.mT), (any_(3, 3),)),
                  (lambda a: _eigh_invariants(ops.linalg.eigh(a + a.mT)), (any_(3, 3),)),
                  (lambda a: _eigh_invariants(ops.linalg.eigh(a + a.mT, "U")), (any_(2, 3, 3),))],
    # qr: Q and R are determined (Householder signs); tall, wide, square complete, batched, torch.qr
    linalg.QR: [(lambda a: _sum_of(ops.linalg.qr(a)), (any_(4, 3),)),
                (lambda a: _sum_of(ops.linalg.qr(a)), (any_(3, 5),)),
                (lambda a: _sum_of(ops.linalg.qr(a, "complete")), (invertible(3, 3),)),
                (lambda a: _sum_of(ops.linalg.qr(a, "complete")), (any_(2, 4),)),
                (lambda a: ops.linalg.qr(a).Q * 2, (any_(2, 3, 2),)),
                (lambda a: a.qr().R, (any_(3, 3),))],
    linalg.PINV: [(lambda a: ops.linalg.pinv(a), (any_(4, 3),)), (lambda a: ops.linalg.pinv(a), (any_(2, 3),)),
                  (lambda a: ops.linalg.pinv(a + a.mT, hermitian=True), (invertible(3, 3),)),
                  (lambda a: a.pinverse(), (any_(2, 3, 2),))],
    linalg.SLOGDET: [(lambda a: ops.linalg.slogdet(a).logabsdet, (invertible(3, 3),)),
                     (lambda a: ops.linalg.slogdet(a.mT)[1] * 2, (invertible(2, 3, 3),)),
                     (lambda a: ops.logdet(a @ a.mT), (invertible(3, 3),)),
                     (lambda a: ops.matrix_power(a, 5) + ops.matrix_power(a, -2) + ops.matrix_power(a, 0),
                      (invertible(3, 3),)),
                     (lambda a, b, c: ops.linalg.multi_dot([a, b, c, a.mT]), (any_(2, 3), any_(3, 4), any_(4, 3)))],
    # cholesky reads one triangle and its gradient is symmetric: checked through A = a a^T, as PyTorch checks it
    linalg.CHOLESKY: [(lambda a: ops.linalg.cholesky(a @ a.mT), (invertible(3, 3),)),
                      (lambda a: ops.linalg.cholesky(a @ a.mT, upper=True), (invertible(2, 3, 3),))],
    linalg.CHOLESKY_LEGACY: [(lambda a: (a @ a.mT).cholesky(), (invertible(3, 3),), CHOLESKY_FORWARD),
                             (lambda a: (a @ a.mT).cholesky(upper=True), (invertible(2, 2),), CHOLESKY_FORWARD)],
    # cholesky_inverse reads one triangle of its factor, and PyTorch's forward-mode formula (which gradcli keeps) is
    # the derivative only for some tangents, diagonal ones among them: checked here on diagonal factors (the
    # forward-mode test runs these cases too), and on any triangular factor in SECOND below
    linalg.CHOLESKY_INVERSE: [(lambda a: ops.cholesky_inverse(ops.diag_embed(a)), (any_(3) + 3,)),
                              (lambda a: ops.diag_embed(a).cholesky_inverse(True), (any_(2, 3) + 3,))],
    linalg.SOLVE_TRIANGULAR: [
        (lambda a, b: ops.linalg.solve_triangular(a, b, upper=False), (invertible(3, 3), any_(3, 2))),
        (lambda a, b: ops.linalg.solve_triangular(a, b, upper=True, left=False), (invertible(3, 3), any_(2, 3))),
        (lambda a, b: ops.linalg.solve_triangular(a, b, upper=True, unitriangular=True), (invertible(2, 3, 3), any_(3, 1))),
        (lambda a, b: ops.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
         (invertible(2, 2), any_(2, 1, 2)))],
    linalg.TRACE: [(lambda a: a.trace(), (any_(3, 3),)), (lambda a: a.trace(), (any_(2, 3),))],
    linalg.DIAGONAL: [(lambda a: a.diagonal(), (any_(3, 3),)), (lambda a: a.diagonal(1, -1, 0), (any_(2, 3, 4),)),
                      (lambda a: ops.einsum("ii->i", a), (any_(3, 3),))],
    linalg.DIAG: [(lambda a: a.diag(), (any_(3, 3),)), (lambda a: a.diag(-1), (any_(3, 2),))],
    linalg.DIAG_EMBED: [(lambda a: a.diag(), (any_(3),)), (lambda a: a.diag(1), (any_(2),)),
                        (lambda a: a.diag_embed(-1), (any_(2, 2),))],
    linalg.DIAGONAL_BACKWARD: [(lambda a: _second(lambda x: (x.diagonal() ** 2).sum(), a), (any_(3, 3),)),
                               (lambda a: _second(lambda x: (x.trace() * x.sum()), a), (any_(2, 2),))],
}


def _params():
    out = []
    for row, cases in CHECKS.items():
        for i, (fn, arrays, *_) in enumerate(cases):      # (a third item: options for the forward-mode check)
            out.append(pytest.param(fn, arrays, id=f"{row.node}-{i}"))
    return out


@pytest.mark.parametrize("fn, arrays", _params())
def test_backward_matches_finite_differences(fn, arrays):
    gradcheck(fn, *arrays)


def _names(t) -> list:
    out, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            out.append(n.op.node)
            stack.extend(n.inputs)
    return out


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    fn, arrays = CHECKS[row][0][:2]
    out = fn(*[_leaf(a) for a in arrays])
    assert row.node in _names(out)


# Second derivatives of the smooth ops: the create_graph gradient against finite differences of the first.
SECOND = [
    ("matmul_2d", lambda a, b: a @ b, (any_(2, 3), any_(3, 2))),
    ("matmul_1d_2d", lambda a, b: a @ b, (any_(3), any_(3, 2))),
    ("matmul_batched", lambda a, b: a @ b, (any_(2, 2, 3), any_(2, 3, 2))),
    ("matmul_folded", lambda a, b: a @ b, (any_(2, 2, 3), any_(3))),
    ("matmul_transposed_fold", lambda a, b: a @ b, (any_(2, 3), any_(2, 3, 2))),
    ("dot", lambda a, b: a.dot(b) * a, (any_(3), any_(3))),
    ("mv", lambda a, b: a.mv(b), (any_(2, 3), any_(3))),
    ("outer", lambda a, b: ops.outer(a, b), (any_(3), any_(2))),
    ("einsum", lambda a, b: ops.einsum("ij,kj->ik", a, b), (any_(2, 3), any_(2, 3))),
    ("det", lambda a: a.det(), (invertible(3, 3),)),
    ("det_batched", lambda a: a.det(), (invertible(2, 2, 2),)),
    ("inverse", lambda a: a.inverse(), (invertible(3, 3),)),
    ("slogdet", lambda a: ops.linalg.slogdet(a).logabsdet, (invertible(3, 3),)),
    ("matrix_exp", lambda a: ops.matrix_exp(a), (any_(3, 3),)),
    ("svdvals", lambda a: ops.linalg.svdvals(a), (any_(4, 3),)),
    ("eigh", lambda a: _eigh_invariants(ops.linalg.eigh(a + a.mT)), (any_(3, 3),)),
    ("qr", lambda a: _sum_of(ops.linalg.qr(a)), (any_(4, 3),)),
    ("pinv", lambda a: ops.linalg.pinv(a), (any_(4, 3),)),
    ("pinv_wide", lambda a: ops.linalg.pinv(a), (any_(2, 4),)),
    ("qr_wide", lambda a: _sum_of(ops.linalg.qr(a)), (any_(2, 4),)),
    ("svd", lambda a: _svd_invariants(ops.linalg.svd(a, full_matrices=False)), (any_(3, 4),)),
    ("matrix_exp_batched", lambda a: ops.matrix_exp(a * 0.1), (any_(2, 3, 3),)),
    ("logdet_batched", lambda a: ops.logdet(a @ a.mT), (invertible(2, 3, 3),)),
    ("matrix_power", lambda a: ops.matrix_power(a, 6) + ops.matrix_power(a, -3), (invertible(3, 3),)),
    ("multi_dot", lambda a, b: ops.linalg.multi_dot([a, b, a, b]), (any_(2, 3), any_(3, 2))),
    ("solve", lambda a, b: ops.linalg.solve(a, b), (invertible(3, 3), any_(3))),
    ("cholesky", lambda a: ops.linalg.cholesky(a @ a.mT), (invertible(3, 3),)),
    ("cholesky_upper", lambda a: (a @ a.mT).cholesky(upper=True), (invertible(2, 3, 3),)),
    ("cholesky_inverse", lambda a: ops.cholesky_inverse(a.tril()), (invertible(3, 3),)),
    ("cholesky_inverse_upper", lambda a: a.triu().cholesky_inverse(True), (invertible(2, 3, 3),)),
    ("solve_triangular", lambda a, b: ops.linalg.solve_triangular(a, b, upper=False), (invertible(3, 3), any_(3, 2))),
    ("solve_triangular_right", lambda a, b: ops.linalg.solve_triangular(a, b, upper=True, left=False,
                                                                         unitriangular=True), (invertible(3, 3), any_(2, 3))),
    ("shapes", lambda a: (a.t().reshape(6) * a.T.flatten()).reshape(2, 3).permute(1, 0).flip(0).roll(1, 0),
     (any_(2, 3),)),
    ("joins", lambda a: ops.cat([a.repeat(2, 1), ops.stack([a[0], a[1]])]).tril() * a.triu().sum(), (any_(2, 2),)),
    ("gathers", lambda a: a.gather(1, IDX) * a.index_select(1, tensor([2, 1, 0])), (any_(2, 3),)),
    ("diagonals", lambda a: a.diag().diag() * a.diagonal(0, 0, 1).sum() + a.trace(), (any_(3, 3),)),
    ("splits", lambda a: _sum_of(a.split([1, 2], 1)) * _sum_of(a.unbind(1)).sum(), (any_(2, 3),)),
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


# --------------------------------------------------------------------------------- recorded structure

def _tree(t) -> str:
    """The grad_fn chain as PyTorch's names, nested: Mm(View(Acc), Acc)."""
    def walk(n):
        if n is None:
            return "None"
        name = n.name().replace("torch::autograd::AccumulateGrad", "Acc").replace("Backward0", "")
        kids = [walk(c) for c, _ in n.next_functions]
        return name + ("(" + ", ".join(kids) + ")" if kids else "")
    return walk(t.grad_fn)


def _leaves(*shapes):
    return [_leaf(np.ones(s)) for s in shapes]


# (expression on leaves a, b, trees PyTorch 2.13 records)
STRUCTURES = [
    ((3,), (3,), lambda a, b: a @ b, "Dot(Acc, Acc)"),
    ((2, 3), (3,), lambda a, b: a @ b, "Mv(Acc, Acc)"),
    ((3,), (3, 4), lambda a, b: a @ b, "SqueezeBackward4(Mm(Unsqueeze(Acc), Acc))"),
    ((5, 2, 3), (5, 3, 4), lambda a, b: a @ b, "UnsafeView(Bmm(View(Expand(Acc)), View(Expand(Acc))))"),
    ((5, 2, 3), (3, 4), lambda a, b: a @ b, "UnsafeView(Mm(View(Acc), Acc))"),
    ((2, 3), (5, 3, 4), lambda a, b: a @ b,
     "Clone(Transpose(UnsafeView(Mm(UnsafeView(Clone(Transpose(Acc))), T(Acc)))))"),
    ((3,), (5, 3, 4), lambda a, b: a @ b, "UnsafeView(Mv(UnsafeView(Clone(Transpose(Acc))), Acc))"),
    ((5, 2, 3), (3,), lambda a, b: a @ b, "UnsafeView(Mv(View(Acc), Acc))"),
    ((1, 2, 3), (4, 3, 2), lambda a, b: a @ b,
     "Clone(Transpose(UnsafeView(Mm(UnsafeView(Clone(Transpose(Acc))), T(SqueezeBackward1(Acc))))))"),
    ((2, 3), (3,), lambda a, b: ops.outer(a.flatten(), b), "Mul(View(View(Acc)), Acc)"),
    ((2, 3), (3, 4), lambda a, b: ops.einsum("ij,jk->ik", a, b),
     "View(Permute(View(Bmm(View(Permute(Permute(Unsqueeze(Acc)))), View(Permute(Permute(Unsqueeze(Acc))))))))"),
    ((2, 3), (3, 4), lambda a, b: ops.einsum("ij,jk->ki", a, b),
     "View(Permute(View(Bmm(ReshapeAlias(Permute(Permute(Unsqueeze(Acc)))), "
     "ReshapeAlias(Permute(Permute(Unsqueeze(Acc))))))))"),
    ((3,), (3,), lambda a, b: ops.einsum("i,j->ij", a, b), "Mul(Permute(Unsqueeze(Acc)), Permute(Unsqueeze(Acc)))"),
    ((3, 3), (1,), lambda a, b: ops.einsum("ii", a), "SumBackward1(Permute(Permute(Diagonal(Acc))))"),
    ((2, 3), (1,), lambda a, b: a.t().reshape(6), "UnsafeView(Clone(T(Acc)))"),
    ((2, 3), (1,), lambda a, b: a.t().reshape(3, 2), "ReshapeAlias(T(Acc))"),
    ((2, 3), (1,), lambda a, b: a.t().contiguous(), "Clone(T(Acc))"),
]


@pytest.mark.parametrize("sa, sb, fn, want", STRUCTURES, ids=[s[3][:40] for s in STRUCTURES])
def test_recorded_nodes_are_pytorchs(sa, sb, fn, want):
    a, b = _leaves(sa, sb)
    assert _tree(fn(a, b)) == want


def test_contiguous_and_flatten_return_the_tensor_itself():
    a = _leaf(np.ones((2, 3)))
    assert a.contiguous() is a and a.flatten(1, 1) is a and ops.reshape(a, 2, 3).grad_fn.op is shape.VIEW


def test_views_share_base_and_version():
    base = Tensor(np.ones((2, 3)))
    for v in (base.view(6), base.t().t(), base.T, base.reshape(3, 2), base.narrow(1, 0, 2), base.diagonal(),
              base.expand(2, 2, 3), base.split(1)[0], base.unbind(1)[2], base.squeeze(), base.unsqueeze(0), base[0]):
        assert v._base is base and v._version is base._version
    for copy in (base.t().reshape(6), base.flip(0), base.repeat(1, 1), ops.cat([base]), base.tril(), base.contiguous()):
        assert copy._base is None
    v = base.view(6)
    v.mul_(2)
    assert base._version[0] == 1 and float(base._a[1, 2]) == 2.0


def test_linalg_error_is_named_after_the_binding():
    assert linalg.LinAlgError.__name__ == "torch._C._LinAlgError" and issubclass(linalg.LinAlgError, RuntimeError)


def test_det_matches_pytorch_rounding_and_singular_gradient():
    # PyTorch's LU gives exactly 0 here (numpy's det does not), and a zero gradient for a singular matrix
    a = _leaf(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=np.float32))
    d = a.det()
    assert float(d._a) == 0.0
    d.backward()
    assert not a.grad._a.any()
    s = _leaf(np.array([[1.0, 2.0], [2.0, 4.0]], dtype=np.float32))
    d = s.det()
    d.backward()
    assert np.signbit(d._a) and np.signbit(s.grad._a).tolist() == [[False, True], [True, False]]


# --------------------------------------------------------------------------------- error messages

ERRORS = [
    ("torch.ones(2, 3).reshape(2, -2)", "RuntimeError: invalid shape dimension -2 at index 1 of shape [2, -2]"),
    ("torch.ones(2, 3).view(-1, -1)", "RuntimeError: only one dimension can be inferred"),
    ("torch.ones(2, 3).reshape(4)", "RuntimeError: shape '[4]' is invalid for input of size 6"),
    ("torch.ones(2, 3).t().view(6)", "RuntimeError: view size is not compatible with input tensor's size and stride "
     "(at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."),
    ("torch.ones(0).view(-1, 0)", "RuntimeError: cannot reshape tensor of 0 elements into shape [-1, 0] because the "
     "unspecified dimension size -1 can be any value and is ambiguous"),
    ("torch.ones(2, 3).flatten(1, 0)", "RuntimeError: flatten() has invalid args: start_dim cannot come after end_dim"),
    ("torch.ones(1, 2).squeeze((0, 0))", "RuntimeError: dim 0 appears multiple times in the list of dims"),
    ("torch.ones(2, 3, dtype=torch.float64).expand(3)", "RuntimeError: expand(torch.DoubleTensor{[2, 3]}, size=[3]): "
     "the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)"),
    ("torch.ones(2, 3).repeat(2)", "RuntimeError: Number of dimensions of repeat dims can not be smaller than number "
     "of dimensions of tensor"),
    ("torch.ones(2, 3).repeat(-1, 1)", "RuntimeError: Trying to create tensor with negative dimension -2: [-2, 3]"),
    ("torch.ones(2, 3).permute(0)", "RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does "
     "not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1"),
    ("torch.ones(2, 3).permute(0, 0)", "RuntimeError: permute(): duplicate dims are not allowed."),
    ("torch.ones(2, 3).transpose(0, 2)", "IndexError: Dimension out of range (expected to be in range of [-2, 1], "
     "but got 2)"),
    ("torch.ones(3).mT", "RuntimeError: tensor.mT is only supported on matrices or batches of matrices. Got 1-D "
     "tensor."),
    ("torch.ones(2, 3, 3).H", "RuntimeError: tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. "
     "For batches of matrices, consider using tensor.mH"),
    ("torch.ones(2, 3).movedim((0, 0), (0, 1))", "RuntimeError: movedim: repeated dim in `source` ([0, 0])"),
    ("torch.cat([torch.ones(2, 3), torch.ones(2, 4)])", "RuntimeError: Sizes of tensors must match except in "
     "dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list."),
    ("torch.cat([torch.ones(2, 3), torch.ones(3)])", "RuntimeError: Tensors must have same number of dimensions: "
     "got 2 and 1"),
    ("torch.cat([])", "ValueError: torch.cat(): expected a non-empty list of Tensors"),
    ("torch.cat(torch.ones(2))", "TypeError: cat(): argument 'tensors' (position 1) must be tuple of Tensors, "
     "not Tensor"),
    ("torch.cat([torch.tensor(1.), torch.tensor(2.)])", "RuntimeError: zero-dimensional tensor (at position 0) cannot "
     "be concatenated"),
    ("torch.stack([torch.ones(2), torch.ones(3)])", "RuntimeError: stack expects each tensor to be equal size, but got "
     "[2] at entry 0 and [3] at entry 1"),
    ("torch.stack([])", "RuntimeError: stack expects a non-empty TensorList"),
    ("torch.ones(2, 3).split(0)", "RuntimeError: split_size can only be 0 if dimension size is 0, but got dimension "
     "size of 2"),
    ("torch.ones(2, 3).split([1, 3], 1)", "RuntimeError: split_with_sizes expects split_sizes to sum exactly to 3 "
     "(input tensor's size at dimension 1), but got split_sizes=[1, 3]"),
    ("torch.ones(2, 3).chunk(0)", "RuntimeError: chunk expects `chunks` to be greater than 0, got: 0"),
    ("torch.tensor(1.).unbind()", "IndexError: Dimension specified as 0 but tensor has no dimensions"),
    ("torch.ones(2, 3).flip(0, 0)", "RuntimeError: dim 0 appears multiple times in the list of dims"),
    ("torch.ones(2, 3).roll((1, 2), 0)", "RuntimeError: shifts and dimensions must align. shifts: 2, dims:1"),
    ("torch.ones(2, 3).narrow(1, 2, 2)", "RuntimeError: start (2) + length (2) exceeds dimension size (3)."),
    ("torch.ones(2, 3).narrow(1, -4, 1)", "IndexError: start out of range (expected to be in range of [-3, 3], "
     "but got -4)"),
    ("torch.ones(2, 3).gather(1, torch.tensor([[0, 3]]))", "RuntimeError: index 3 is out of bounds for dimension 1 "
     "with size 3"),
    ("torch.ones(2, 3).gather(0, torch.tensor([[0, 1, 1, 0]]))", "RuntimeError: Size does not match at dimension 1 "
     "expected index [1, 4] to be no larger than self [2, 3] apart from dimension 0"),
    ("torch.ones(2, 3).index_select(1, torch.tensor([3]))", "RuntimeError: INDICES element is out of DATA bounds, "
     "id=3 axis_dim=3"),
    ("torch.ones(2, 3).index_select(1, torch.tensor([[0]]))", "IndexError: index_select(): Index is supposed to be "
     "a vector"),
    ("torch.ones(3).tril()", "RuntimeError: tril: input tensor must have at least 2 dimensions"),
    ("torch.ones(2, 3) @ torch.ones(2, 3)", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ("torch.ones(2, 3) @ torch.ones(4)", "RuntimeError: size mismatch, got input (2), mat (2x3), vec (4)"),
    ("torch.ones(4) @ torch.ones(3, 2)", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x4 and 3x2)"),
    ("torch.ones(3) @ torch.ones(4)", "RuntimeError: inconsistent tensor size, expected tensor [3] and src [4] to have "
     "the same number of elements, but got 3 and 4 elements respectively"),
    ("torch.ones(5, 2, 3) @ torch.ones(5, 4, 2)", "RuntimeError: Expected size for first two dimensions of batch2 "
     "tensor to be: [5, 3] but got: [5, 4]."),
    ("torch.tensor(1.) @ torch.ones(3)", "RuntimeError: both arguments to matmul need to be at least 1D, but they are "
     "0D and 1D"),
    ("torch.ones(5, 2, 3) @ torch.ones(4, 3, 2)", "RuntimeError: The size of tensor a (5) must match the size of "
     "tensor b (4) at non-singleton dimension 0"),
    ("torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.long)", "RuntimeError: expected m1 and m2 to have the same "
     "dtype, but got: float != long int"),
    ("torch.ones(2, 3) @ torch.ones(3, dtype=torch.float64)", "RuntimeError: addmv input tensors must have the same "
     "dtype, but got Double, Float, and Double"),
    ("torch.ones(2, 3, 3) @ torch.ones(2, 3, 3, dtype=torch.float64)", "RuntimeError: expected scalar type Float but "
     "found Double"),
    ("torch.ones(3, dtype=torch.bool) @ torch.ones(3, dtype=torch.bool)", "NotImplementedError: \"dot\" not "
     "implemented for 'Bool'"),
    ("torch.ones(2, 2) @ 2", "TypeError: unsupported operand type(s) for @: 'Tensor' and 'int'"),
    ("torch.matmul(torch.ones(2, 2), 2)", "TypeError: matmul(): argument 'other' (position 2) must be Tensor, not int"),
    ("torch.mv(torch.ones(3), torch.ones(3))", "RuntimeError: vector + matrix @ vector expected, got 1, 1, 1"),
    ("torch.dot(torch.ones(2, 2), torch.ones(2, 2))", "RuntimeError: 1D tensors expected, but got 2D and 2D tensors"),
    ("torch.bmm(torch.ones(5, 2, 3), torch.ones(3, 2))", "RuntimeError: batch2 must be a 3D tensor"),
    ("torch.outer(torch.ones(2, 2), torch.ones(2))", "RuntimeError: outer: Expected 1-D argument self, but got 2-D"),
    ("torch.det(torch.ones(2, 3))", "RuntimeError: linalg.det: A must be batches of square matrices, but they are "
     "2 by 3 matrices"),
    ("torch.det(torch.ones(3))", "RuntimeError: linalg.det: The input tensor A must have at least 2 dimensions."),
    ("torch.det(torch.ones(2, 2, dtype=torch.long))", "RuntimeError: linalg.det: Expected a floating point or complex "
     "tensor as input. Got Long"),
    ("torch.inverse(torch.tensor([[1., 2.], [2., 4.]]))", "torch._C._LinAlgError: linalg.inv: The diagonal element 2 "
     "is zero, the inversion could not be completed because the input matrix is singular."),
    ("torch.linalg.inv(torch.zeros(2, 3, 3))", "torch._C._LinAlgError: linalg.inv: (Batch element 0): The diagonal "
     "element 1 is zero, the inversion could not be completed because the input matrix is singular."),
    ("torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))", "torch._C._LinAlgError: torch.linalg.solve: The solver "
     "failed because the input matrix is singular."),
    ("torch.linalg.solve(torch.ones(2, 2), torch.ones(3))", "RuntimeError: linalg.solve: Incompatible shapes of A and "
     "B for the equation AX = B (2x2 and 3x1)"),
    ("torch.trace(torch.ones(2, 2, 2))", "RuntimeError: trace: expected a matrix, but got tensor with dim 3"),
    ("torch.diag(torch.ones(2, 2, 2))", "RuntimeError: diag(): Supports 1D or 2D tensors. Got 3D"),
    ("torch.diagonal(torch.ones(3, 3), 0, 0, 0)", "RuntimeError: diagonal dimensions cannot be identical 0, 0"),
    ("torch.einsum('ij,jk->ik', torch.ones(2, 3), torch.ones(2, 2))", "RuntimeError: einsum(): subscript j has size 2 "
     "for operand 1 which does not broadcast with previously seen size 3"),
    ("torch.einsum('ij->ii', torch.ones(2, 3))", "RuntimeError: einsum(): output subscript i appears more than once "
     "in the output"),
    ("torch.einsum('ijk->', torch.ones(2, 3))", "RuntimeError: einsum(): the number of subscripts in the equation (3) "
     "does not match the number of dimensions (2) for operand 0 and no ellipsis was given"),
    ("torch.linalg.norm(torch.ones(2, 3, 4), 'fro')", "RuntimeError: linalg.norm: If dim is not specified but ord is, "
     "the input must be 1D or 2D. Got 3D."),
    ("torch.linalg.norm(torch.ones(2, 3), 'fro', dim=1)", "RuntimeError: linalg.matrix_norm: dim must be a 2-tuple. "
     "Got 1"),
    ("x = torch.ones(2, 3, requires_grad=True)\nx.view(6).mul_(2)", "RuntimeError: a view of a leaf Variable that "
     "requires grad is being used in an in-place operation."),
    ("x = torch.ones(2, 3, requires_grad=True)\nx.split(1)[1].mul_(2)", "RuntimeError: Output 1 of Split is a view and "
     "is being modified inplace. This view is the output of a function that returns multiple views. Such functions "
     "do not allow the output views to be modified inplace. You should replace the inplace operation by an "
     "out-of-place one."),
    ("x = torch.ones(2, 3, requires_grad=True)\nx.unbind(1)[2].add_(1)", "RuntimeError: Output 2 of Unbind is a view "
     "and is being modified inplace. This view is the output of a function that returns multiple views. Such "
     "functions do not allow the output views to be modified inplace. You should replace the inplace operation by an "
     "out-of-place one."),
    ("x = torch.ones(2, 3, requires_grad=True)\nwith torch.no_grad():\n    v = x.view(6)\nv.mul_(2)",
     "RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
     "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
     "view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
     "outside (if you want the inplace to be tracked)."),
    ("x = torch.ones(2, 2, requires_grad=True)\ny = x * 2\nwith torch.no_grad():\n    v = y.view(4)\nv.mul_(2)",
     "RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
     "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
     "view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
     "outside (if you want the inplace to be tracked)."),
    ("torch.ones(2, 3).view(torch.float64)", "RuntimeError: self.size(-1) must be divisible by 2 to view Float as "
     "Double (different element sizes), but got 3"),
    ("torch.ones(2, 3).reshape(2.0, 3)", "TypeError: reshape() takes 1 positional argument but 2 were given"),
    ("torch.vstack([])", "RuntimeError: vstack expects a non-empty TensorList"),
    ("torch.ones(3).expand(2, 3).add_(1)", "RuntimeError: unsupported operation: more than one element of the "
     "written-to tensor refers to a single memory location. Please clone() the tensor before performing the "
     "operation."),
]


@pytest.mark.parametrize("code, want", ERRORS, ids=[e[0].splitlines()[-1][:50] for e in ERRORS])
def test_error_messages_are_pytorchs(code, want):
    result = run_script("import torch\n" + code + "\n")
    assert result.error is not None, f"expected {want}"
    assert f"{result.error.kind}: {result.error.message}" == want


@pytest.mark.parametrize("call, expected", [
    ("F.pad(torch.ones(1), (10**12, 0))", "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. "
     "DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000004 bytes. Error code 12 "
     "(Cannot allocate memory)"),
    ("F.pad(torch.ones(3), (1, 1), mode='reflect')",
     "NotImplementedError: Padding size 2 is not supported for 1D input tensor.\nSupported combinations for "
     "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
     "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"),
    ("F.pad(torch.ones(1, 3), (10**12, 0), mode='replicate')", "RuntimeError: [enforce fail at alloc_cpu.cpp:127] "
     "err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000012 bytes. Error code 12 "
     "(Cannot allocate memory)"),
    ("F.pad(torch.ones(1, 3), (0, 10**12), mode='circular')", "RuntimeError: Padding value causes wrapping around "
     "more than once."),
    ("F.pad(torch.ones(3), 1)", "TypeError: pad(): argument 'pad' (position 2) must be tuple of ints, not int"),
])
def test_pad_is_bounded_and_refuses_what_it_lacks(call, expected):
    result = run_script("import torch\nimport torch.nn.functional as F\n" + call + "\n")
    assert f"{result.error.kind}: {result.error.message}" == expected


# An int past 64 bits inside an int-list argument: PyTorch's parser refuses it while unpacking the list, its
# message the first line of PyTorch 2.13's (which goes on with a C++ backtrace that gradcli leaves out).
INT_LIST_OVERFLOWS = [
    ('x.view(10**20, -1)', 'TypeError: view(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.view((10**20, -1))', 'TypeError: view(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.view(-1, 10**20)', 'TypeError: view(): argument \'size\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.reshape(10**20, -1)', 'TypeError: reshape(): argument \'shape\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.reshape((-1, 10**20))', 'TypeError: reshape(): argument \'shape\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('torch.reshape(x, (10**20,))', 'TypeError: reshape(): argument \'shape\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.expand(10**20, 3)', 'TypeError: expand(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.expand(2, 10**20)', 'TypeError: expand(): argument \'size\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.repeat(10**20, 1)', 'TypeError: repeat(): argument \'repeats\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.flip(10**20)', 'TypeError: flip(): argument \'dims\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.flip((0, 10**20))', 'TypeError: flip(): argument \'dims\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('torch.flip(x, [10**20])', 'TypeError: flip(): argument \'dims\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.permute(0, 10**20)', 'TypeError: permute(): argument \'dims\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.permute((10**20, 0))', 'TypeError: permute(): argument \'dims\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.split([10**20, 1], 1)', 'TypeError: split_with_sizes(): argument \'split_sizes\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.unflatten(1, (10**20, 3))', 'TypeError: unflatten(): argument \'sizes\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.sum((0, 10**20))', 'TypeError: sum(): argument \'dim\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('torch.sum(x, (10**20,))', 'TypeError: sum(): argument \'dim\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.amax((10**20,))', 'TypeError: amax(): argument \'dim\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.mean((0, 10**20))', 'TypeError: mean(): argument \'dim\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.std((0, 10**20))', 'TypeError: std(): argument \'dim\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.logsumexp((0, 10**20))', 'TypeError: logsumexp(): argument \'dim\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('x.squeeze((0, 10**20))', 'TypeError: squeeze(): argument \'dim\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('F.pad(x, (10**20, 0))', 'TypeError: pad(): argument \'pad\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.movedim((0, 10**20), (1, 0))', 'TypeError: movedim(): argument \'source\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('F.adaptive_avg_pool2d(torch.ones(1, 1, 2, 2), (10**20, 1))', 'TypeError: adaptive_avg_pool2d(): argument \'output_size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.permute(0, 10**20)', 'TypeError: permute(): argument \'dims\' failed to unpack the object at pos 2 with error "Overflow when unpacking long long"'),
    ('torch.broadcast_to(x, (10**20, 3))', 'TypeError: broadcast_to(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.new_ones((10**20,))', 'TypeError: new_ones(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
    ('x.view(-2**63 - 1, 1)', 'TypeError: view(): argument \'size\' failed to unpack the object at pos 1 with error "Overflow when unpacking long long"'),
]


@pytest.mark.parametrize("expression, message", INT_LIST_OVERFLOWS)
def test_an_int_past_64_bits_in_an_int_list_is_the_parsers_error(expression, message):
    result = run_script(f"import torch\nimport torch.nn.functional as F\nx = torch.ones(2, 3)\n{expression}\n")
    assert result.error is not None, expression
    assert f"{result.error.kind}: {result.error.message}" == message
