"""Forward-mode tangents of the reduction, linear-algebra and random-fill rows (ops/reduce.py, ops/linalg.py,
factories.py) against central finite differences, one case or more per row; the printed results are
pinned byte for byte by tests/conformance/fwad_reduce.grad (which also has ties of max, amax and the inf
norm, where PyTorch's tangent is the average and a finite difference is one-sided)."""

from __future__ import annotations

import pytest

from forward_check import check
from gradcli.engine import factories
from gradcli.engine.ops import linalg, order, reduce
from gradcli.engine.recording import Op

X = "x = torch.randn(2, 3, dtype=torch.float64)"
S = "x = torch.randn((), dtype=torch.float64)"
XZ = X + "\nx[0, 1] = 0.0"                              # a zero: prod and cumprod take their other branch
XZZ = XZ + "\nx[0, 2] = 0.0"                            # two zeros in one slice
M = "x = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)"
MB = "x = torch.randn(2, 3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)"
MT = M + "\nx = x.t()"                                  # not contiguous: det factors A, not A^T
MY = M + "\ny = torch.randn(3, 2, dtype=torch.float64)"
MV = M + "\ny = torch.randn(3, dtype=torch.float64)"
B = "x = torch.randn(2, 3, 4, dtype=torch.float64)\ny = torch.randn(2, 4, 2, dtype=torch.float64)"
V = "x = torch.randn(4, dtype=torch.float64)\ny = torch.randn(4, dtype=torch.float64)"
XY = X + "\ny = torch.rand(2, 3, dtype=torch.float64) + 0.5"

CASES = [
    (X, "x.sum()"), (X, "x.sum(1)"), (X, "x.sum((0, 1), keepdim=True)"), (S, "x.sum(0)"),
    (X, "x.mean()"), (X, "x.mean(0)"), (X, "x.mean(1, keepdim=True)"),
    (X, "x.prod()"), (X, "x.prod(1)"), (XZ, "x.prod()"), (XZ, "x.prod(1)"), (XZZ, "x.prod(1, keepdim=True)"),
    (S, "x.prod()"), (S, "x.prod(0)"),
    (X, "x.max()"), (X, "x.min()"), (X, "x.max(1)"), (X, "x.min(0, keepdim=True)"), (S, "x.max(0)"),
    (X, "x.amax(1)"), (X, "x.amin((0, 1))"), (X, "x.amin(0, keepdim=True)"), (S, "x.amax()"),
    (X, "torch.renorm(x, 2, 0, 0.5)"), (X, "x.renorm(1, 1, 0.3)"), (X, "x.renorm(float('inf'), 0, 0.2)"),
    (XY, "torch.dist(x, y)", ("x", "y")), (XY, "x.dist(y, 1)", ("x",)), (XY, "torch.dist(x, y, float('inf'))", ("x", "y")),
    (XY, "torch.dist(y, x, 3)", ("x", "y")), (XY, "torch.dist(x, y, 0) + x", ("x",)),
    (X, "x.norm()"), (X, "x.norm(1)"), (X, "x.norm(float('inf'))"), (X, "x.norm(float('inf'), dim=1)"),
    (X, "x.norm(dim=1)"), (X, "torch.linalg.vector_norm(x, 3, dim=0)"), (X, "F.pairwise_distance(x, x.flip(0))"), (X, "torch.linalg.vector_norm(x, 0.5)"),
    (X, "torch.linalg.vector_norm(x, 1.5, dim=1, keepdim=True)"), (X, "x.norm(0) + x"), (S, "x.norm()"),
    (X, "x.std()"), (X, "x.var(1)"), (X, "x.std(0, keepdim=True)"), (X, "x.var(correction=0)"), (X, "x.var((0, 1))"),
    (X, "torch.var_mean(x)[0]"), (X, "torch.var_mean(x, 1)[1]"), (X, "torch.std_mean(x, 0, keepdim=True)[0]"),
    (X, "torch.std_mean(x)[1]"), (X, "x.nansum()"), (X, "x.nansum(1, keepdim=True)"), (X, "x.nanmean(0)"), (X, "x.logsumexp(1)"), (X, "x.logsumexp((0, 1), keepdim=True)"), (S, "x.logsumexp(0)"),
    (X, "x.cumsum(1)"), (X, "x.cumsum(0)"), (S, "x.cumsum(0)"),
    (X, "x.cumprod(1)"), (XZ, "x.cumprod(1)"), (XZZ, "x.cumprod(1)"), (XZ, "x.cumprod(0)"), (S, "x.cumprod(0)"),
    (X, "x.median()"), (X, "x.nanmedian()"), (X, "x.median(1)[0]"), (X, "x.nanmedian(0, keepdim=True)[0]"),
    (S, "x.median(0)[0]"), (X, "x.kthvalue(2, 1)[0]"), (X, "x.kthvalue(1, 0, True)[0]"), (X, "x.mode(0)[0]"),
    (X, "torch.aminmax(x)[0]"), (X, "torch.aminmax(x, dim=1)[1]"), (X, "x.aminmax(dim=0, keepdim=True)[0]"),
    (S, "torch.aminmax(x)[1]"), (X, "x.cummax(1)[0]"), (X, "x.cummin(0)[0]"), (S, "x.cummax(0)[0]"),
    (X, "x.logcumsumexp(1)"), (X, "torch.logcumsumexp(x, 0)"), (S, "x.logcumsumexp(0)"),
    (XY, "torch.linalg.cross(x, y)", ("x", "y")), (XY, "torch.cross(x, y, dim=1)", ("x",)),
    (XY, "torch.linalg.cross(x, y.flip(0))", ("y",)),
    (X, "torch.quantile(x, 0.3, dim=1)"), (X, "torch.nanquantile(x, torch.tensor([0.2, 0.9], dtype=torch.float64))"),
    (MY, "torch.mm(x, y)", ("x", "y")), (MY, "torch.mm(x, y)", ("y",)), (M, "x.mm(x)"),
    (B, "torch.bmm(x, y)", ("x", "y")), (B, "torch.bmm(x, y)", ("x",)),
    (MV, "torch.mv(x, y)", ("x", "y")), (MV, "torch.mv(x, y)", ("y",)),
    (V, "torch.dot(x, y)", ("x", "y")), (V, "torch.dot(x, y)", ("x",)), (V, "torch.vdot(x, y)", ("x", "y")),
    (M, "torch.linalg.det(x)"), (MB, "torch.det(x)"), (MT, "torch.linalg.det(x)"),
    (M, "torch.linalg.inv(x)"), (MV, "torch.linalg.solve(x, y)", ("x", "y")), (MY, "torch.linalg.solve(x, y)", ("x",)),
    (MY, "torch.linalg.solve(x, y)", ("y",)),
    (M, "torch.linalg.cholesky(x @ x.T + 3 * torch.eye(3, dtype=torch.float64))"),
    (M, "torch.linalg.cholesky(x @ x.T + torch.eye(3, dtype=torch.float64), upper=True)"),
    (MY, "torch.linalg.solve_triangular(torch.tril(x), y, upper=False)", ("x", "y")),
    (MY, "torch.linalg.solve_triangular(torch.triu(x), y.T, upper=True, left=False)", ("x", "y")),
    # (PyTorch's cholesky_inverse tangent is the derivative for diagonal or symmetric tangents only: docs/numerics.md)
    (M, "torch.cholesky_inverse(torch.diag(torch.diagonal(x)).abs() + torch.eye(3, dtype=torch.float64))"),
    (M, "torch.linalg.slogdet(x).logabsdet"), (MB, "torch.slogdet(x)[1]"), (MT, "torch.linalg.slogdet(x)[1]"),
    (M, "torch.linalg.slogdet(x).sign + x"), (M, "torch.logdet(x @ x.T)"),
    (M, "torch.linalg.matrix_power(x, 5)"), (M, "torch.linalg.matrix_power(x, -2)"), (MB, "torch.matrix_power(x, 0) + x"),
    (MY, "torch.linalg.multi_dot([y.T, x, x, y])", ("x", "y")),
    (M, "torch.linalg.matrix_exp(x)"), (M, "torch.matrix_exp(x * 0.01)"), (MB, "x.matrix_exp()"),
    (X, "torch.linalg.svdvals(x)"), (M, "torch.linalg.svd(x).S"), (X, "(lambda r: r.U @ r.Vh)(torch.linalg.svd(x, False))"),
    (X, "(lambda r: r.U[:, :2].abs() @ r.Vh.abs())(torch.linalg.svd(x.T))"), (MB, "(lambda r: r.U @ r.V.mT)(torch.svd(x))"),
    (M, "torch.linalg.eigvalsh(x + x.T)"), (M, "(lambda r: r.eigenvectors.abs() * r.eigenvalues)(torch.linalg.eigh(x + x.T))"),
    (MB, "(lambda r: r[1] @ r[1].mT.abs())(torch.linalg.eigh(x + x.mT, 'U'))"),
    (X, "torch.linalg.qr(x.T).Q"), (X, "torch.linalg.qr(x.T)[1]"), (X, "torch.linalg.qr(x).Q"), (X, "torch.linalg.qr(x).R"),
    (M, "torch.linalg.qr(x, 'complete').R"), (MB, "torch.linalg.qr(x)[0]"),
    (X, "torch.linalg.pinv(x)"), (X, "torch.linalg.pinv(x.T)"), (M, "torch.linalg.pinv(x + x.T, hermitian=True)"),
    (X, "torch.norm_except_dim(x, 2, -1)"), (X, "torch.norm_except_dim(x, 3, -1)"),
    (M, "torch.trace(x)"), (M, "torch.diagonal(x, 1)"), (M, "torch.diag(x)"), (V, "torch.diag(x)"),
    (V, "torch.diag_embed(x)"),
    (X, "(x * 1).uniform_() * 0 + x"), (X, "(x * 1).normal_() * 0 + x"), (X, "(x * 1).random_(0, 9) * 0 + x"),
    (X, "(x * 1).random_(9) * 0 + x"), (X, "(x * 1).random_() * 0 + x"),
    (X, "torch.normal(x, 1.0) * 0 + x"), (XY, "torch.normal(0.0, y) * 0 + y", ("y",)),
    (XY, "torch.normal(x, y) * 0 + x", ("x", "y")),
]


def _case(case):
    setup, expr = case[:2]
    return check(setup, expr, case[2] if len(case) > 2 else ("x",))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_tangent_equals_finite_difference(case):
    ok, text, _ = _case(case)
    assert ok, text


def _rows(*modules) -> set:
    return {v for m in modules for v in vars(m).values() if v.__class__ is Op}


def test_every_row_has_a_tangent_reached_by_a_case():
    rows = _rows(reduce, linalg, factories, order)
    assert not [r.node for r in rows if r.jvp is None]
    seen = set()
    for case in CASES:
        seen |= _case(case)[2]
    # the gradient of diagonal(), recorded only by backward formulas under create_graph, and torch.scatter's node
    # (also max/min/sort/topk's gradient), whose tangent tests/test_forward_rows.py checks (test_ops_scatter.py)
    formula_only = {linalg.DIAGONAL_BACKWARD, reduce.SCATTER}
    refusing = {linalg.CDIST, linalg.CDIST_BACKWARD, linalg.EUCLIDEAN_DIST,   # test_cdist_refuses_tangents
                linalg.CHOLESKY_LEGACY}     # torch.cholesky: PyTorch's refusal (golden fwad_linalg_cholesky)
    assert sorted(r.node for r in rows - seen - formula_only - refusing) == []


@pytest.mark.parametrize("rows", [2, 30])
def test_cdist_refuses_tangents(rows):
    """PyTorch has no forward-mode formula for _cdist_forward or _euclidean_dist (more than 25 rows, p = 2)."""
    from tests.conftest import run_script
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n"
              "    d = fwAD.make_dual(torch.ones(3, 2), torch.ones(3, 2))\n"
              f"    torch.cdist(d, torch.zeros({rows}, 2))\n")
    name = "_euclidean_dist" if rows > 25 else "_cdist_forward"
    error = run_script(source).error
    assert error.kind == "NotImplementedError"
    assert error.message.startswith(f"Trying to use forward AD with {name} that does not support it")


def test_the_two_norm_of_a_wider_dtype_keeps_its_tangent_in_the_input_dtype():
    # PyTorch divides the tangent's sum by the norm in place (div_), so it stays float32
    from tests.conftest import gradcli_output
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n"
              "    d = fwAD.make_dual(torch.tensor([[3., 4.], [1., 0.]]), torch.tensor([[1., 1.], [2., 5.]]))\n"
              "    t = fwAD.unpack_dual(d.norm(dim=1, dtype=torch.float64)).tangent\n"
              "    print(t, t.dtype)\n")
    assert gradcli_output(source) == "tensor([1.4000, 2.0000]) torch.float32\n"
