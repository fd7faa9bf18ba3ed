"""Every op row's backward against central finite differences in float64, over broadcasting shapes.

CHECKS maps each row of the op table to a function of float64 leaf tensors that exercises it; a row
missing here fails `test_every_row_is_checked`, so a new op cannot land without a gradient check.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import check_each, in_groups
from gradcli.engine import autograd, ops, views
from gradcli.engine.ops import arith, elementwise, indexing, linalg, reduce, shape
from gradcli.engine.backward import grad
from gradcli.engine.factories import tensor
from gradcli.engine.tensor import Tensor
from gradcli.engine.state import STATE

EPS = 1e-6


def _leaf(a: np.ndarray) -> Tensor:
    t = Tensor(np.array(a, dtype=np.float64))
    t.requires_grad = True
    return t


def _value(fn, arrays):
    with autograd.no_grad():
        out = fn(*[Tensor(np.array(a, dtype=np.float64)) for a in arrays])
    return out._a.astype(np.float64)


def gradcheck(fn, *arrays, atol=1e-5, rtol=1e-3, eps=EPS):
    """Compare the analytic gradient of sum(fn(...) * w) (a random weighting, so every output element
    matters) with central differences."""
    rs = np.random.RandomState(0)
    leaves = [_leaf(a) for a in arrays]
    out = fn(*leaves)
    w = rs.uniform(0.5, 1.5, size=out._a.shape)
    (out * Tensor(w)).sum().backward()
    for i, a in enumerate(arrays):
        numeric = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus = [np.array(x, dtype=np.float64) for x in arrays]
            minus = [np.array(x, dtype=np.float64) for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = ((_value(fn, plus) * w).sum() - (_value(fn, minus) * w).sum()) / (2 * eps)
        analytic = leaves[i].grad._a if leaves[i].grad is not None else np.zeros_like(numeric)
        np.testing.assert_allclose(analytic, numeric, atol=atol, rtol=rtol, err_msg=f"input {i}")


R = np.random.RandomState(42)


def pos(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def any_(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


# row -> list of (function of leaves, input arrays); shapes broadcast where the op allows it
_NO_CDIST_TANGENT = {"raises_unimplemented": "_cdist_forward"}
_NO_EUCLID_TANGENT = {"raises_unimplemented": "_euclidean_dist"}
_NO_RESIZE_JVP = {"no_forward_gradcli": r"You must implement the jvp function for custom autograd\.Function to use "
                                        r"it with forward mode AD\."}

CHECKS = {
    arith.ADD: [(lambda a, b: a + b, (any_(2, 3), any_(3))), (lambda a: a + 2.5, (any_(2, 2),)),
              (lambda a, b: a.add(b, alpha=3), (any_(2, 1), any_(1, 3)))],
    arith.SUB: [(lambda a, b: a - b, (any_(3, 1), any_(1, 4))), (lambda a: a - 1, (any_(3),)),
              (lambda a, b: a.sub(b, alpha=2), (any_(2), any_(2)))],
    arith.RSUB: [(lambda a: 2 - a, (any_(2, 3),)), (lambda a: arith.rsub(a, 2, 1.5), (any_(3),))],
    arith.RSUB_TENSOR: [(lambda a, b: arith.rsub(a, b), (any_(2, 3), any_(3))),
                        (lambda a, b: arith.rsub(a, b, -2.5), (any_(3), any_(2, 3)))],
    arith.MUL: [(lambda a, b: a * b, (any_(2, 3), any_(2, 1))), (lambda a: a * 3, (any_(4),)),
              (lambda a, b: a * b, (any_(3), any_()))],
    arith.DIV: [(lambda a, b: a / b, (any_(2, 3), pos(3))), (lambda a: a / 4, (any_(3),))],
    arith.RECIPROCAL: [(lambda a: 2 / a, (pos(3),)), (lambda a: a.reciprocal(), (pos(2, 2),))],
    arith.NEG: [(lambda a: -a, (any_(2, 2),))],
    arith.POW_SCALAR: [(lambda a: a ** 2, (any_(3),)), (lambda a: a ** 3, (any_(2, 2),)),
                     (lambda a: a ** 0.5, (pos(3),)), (lambda a: a ** -1.5, (pos(3),)),
                     (lambda a: a ** 0, (any_(2),))],
    arith.POW_TENSOR: [(lambda a, b: a ** b, (pos(2, 3), any_(3)))],
    arith.POW_BASE: [(lambda a: 2 ** a, (any_(3),)), (lambda a: 0.5 ** a, (any_(2, 2),))],
    arith.ADDCMUL: [(lambda a, b, c: a.addcmul(b, c, value=0.5), (any_(2, 3), any_(3), any_(2, 1))),
                  (lambda a, b, c: a.addcmul(b, c), (any_(3), any_(3), any_()))],
    arith.ADDCDIV: [(lambda a, b, c: a.addcdiv(b, c, value=-1.5), (any_(2, 3), any_(3), pos(2, 1))),
                  (lambda a, b, c: a.addcdiv(b, c), (any_(3), any_(), pos(3)))],
    reduce.SUM: [(lambda a: a.sum(), (any_(2, 3),))],
    reduce.SUM_DIM: [(lambda a: a.sum(1), (any_(2, 3),)), (lambda a: a.sum((0, 2), keepdim=True), (any_(2, 3, 2),)),
                  (lambda a: a.sum(-1), (any_(4),))],
    reduce.MEAN: [(lambda a: a.mean(), (any_(3, 2),))],
    reduce.MEAN_DIM: [(lambda a: a.mean(0), (any_(3, 2),)), (lambda a: a.mean(1, keepdim=True), (any_(2, 3),))],
    reduce.NORM: [(lambda a: a.norm(), (any_(2, 3),)), (lambda a: a.norm(dim=1), (any_(2, 3),)),
               (lambda a: a.norm(dim=0, keepdim=True), (any_(3, 2),))],
    linalg.MM: [(lambda a, b: a.mm(b), (any_(2, 3), any_(3, 4))), (lambda a, b: a @ b, (any_(1, 2), any_(2, 2)))],
    # distinct rows, so no distance is 0 (where p < 2 and inf have kinks)
    # (forward mode: PyTorch has no tangent for either kernel, so the forward-mode check is the refusal)
    linalg.CDIST: [(lambda a, b: ops.linalg.cdist(a, b, p), (any_(3, 4), any_(5, 4)), _NO_CDIST_TANGENT)
                   for p in (1.0, 1.5, 2.0, 3.0)]
                  + [(lambda a, b: ops.linalg.cdist(a, b, 0.5), (any_(2, 1, 3, 2), any_(2, 4, 2)), _NO_CDIST_TANGENT)],
    linalg.EUCLIDEAN_DIST: [(lambda a, b: ops.linalg.cdist(a, b), (any_(30, 3), any_(4, 3)), _NO_EUCLID_TANGENT),
                            (lambda a, b: ops.linalg.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                             (any_(2, 3, 2), any_(1, 4, 2)), _NO_EUCLID_TANGENT)],
    # PyTorch has no derivative for _cdist_backward: the check is its refusal
    linalg.CDIST_BACKWARD: [(lambda a: _cdist_gradient(a), (any_(3, 2),),
                             {"raises_not_implemented": "_cdist_backward", **_NO_CDIST_TANGENT})],
    arith.EXP: [(lambda a: a.exp(), (any_(2, 3),))],
    arith.CLONE: [(lambda a: a.clone() * 2, (any_(3),))],
    # a round trip through float32: differences need a step float32 can resolve
    arith.TO_COPY: [(lambda a: a.float().double() * 1.5, (any_(3),), {"eps": 1e-2, "rtol": 1e-4})],
    arith.ZERO: [(lambda a: (a * 1).zero_() + a, (any_(3),))],
    arith.FILL: [(lambda a: (a * 1).fill_(2.5) * a, (any_(2, 2),))],
    arith.FILL_TENSOR: [(lambda a, b: (a * 1).fill_(b) * a, (any_(3), any_()))],
    arith.FILL_NEW: [(lambda a: arith.fill_function(a, 2.5) * a, (any_(2, 2),))],
    arith.FILL_NEW_TENSOR: [(lambda a, b: arith.fill_function(a, b) * a, (any_(3), any_()))],
    elementwise.LOG: [(lambda a: a.log(), (pos(2, 3),))],
    elementwise.SQRT: [(lambda a: a.sqrt(), (pos(3),))],
    elementwise.MASKED_FILL: [(lambda a: a.masked_fill(tensor([True, False, True]), 0.5) * a, (any_(3),))],
    elementwise.MASKED_FILL_TENSOR: [(lambda a, v: a.masked_fill(tensor([[True], [False]]), v) * a,
                                      (any_(2, 3), any_()))],
    shape.EXPAND: [(lambda a: a.expand(2, 3) * 2, (any_(3),)), (lambda a: a.expand(2, -1, 4), (any_(3, 1),))],
    shape.UNSQUEEZE: [(lambda a: a.unsqueeze(1) * a, (any_(3),))],
    shape.SQUEEZE: [(lambda a: a.squeeze(0), (any_(1, 3),))],
    shape.SQUEEZE_ALL: [(lambda a: a.squeeze(), (any_(1, 3, 1),))],
    shape.TRANSPOSE_T: [(lambda a: a.t() * a.t(), (any_(2, 3),))],
    shape.PAD: [(lambda a: shape.constant_pad(a, (1, 2), 0.5) * 2, (any_(2, 3),)),
                (lambda a: shape.constant_pad(a, (-1, 1, 1, 0), 0), (any_(2, 3),))],
    shape.VIEW: [(lambda a: a.view(3, 2), (any_(2, 3),)), (lambda a: a.view(-1), (any_(2, 2),))],
    # (PyTorch's Python Function Resize has no jvp: forward mode refuses it in PyTorch's words)
    shape.RESIZE: [(lambda a: a.resize(3, 2), (any_(2, 3),), _NO_RESIZE_JVP),
                   (lambda a: a.t().resize(6), (any_(2, 3),), _NO_RESIZE_JVP)],
    indexing.SELECT_BACKWARD: [(lambda a: _second(lambda x: (x[1] * x[1]).sum(), a), (any_(3),))],
    indexing.SLICE_BACKWARD: [(lambda a: _second(lambda x: (x[0:2] ** 2).sum(), a), (any_(3),))],
    # (reached by index_select of a 0-d tensor under create_graph: PyTorch records IndexAddBackward0 there)
    indexing.INDEX_PUT: [(lambda a: _second(lambda x: (x.index_select(0, tensor([0])) ** 2).sum(), a), (any_(),))],
    indexing.SELECT: [(lambda a: a[1], (any_(3, 2),)), (lambda a: a[:, -1] * a[0, 0], (any_(2, 3),))],
    indexing.SLICE: [(lambda a: a[1:3], (any_(4, 2),)), (lambda a: a[::2] + a[1:2], (any_(5),))],
    indexing.UNSQUEEZE: [(lambda a: a[:, None] * a[None], (any_(3),))],
    indexing.ALIAS: [(lambda a: a[:, :] * 2, (any_(2, 2),))],
    indexing.INDEX: [(lambda a: a[[0, 2, 0]], (any_(3, 2),)),
                (lambda a: a[tensor([True, False, True])], (any_(3),))],
    indexing.INDEX_PUT_: [(lambda a, b: _setitem(a * 1, ([2, 0],), b), (any_(3, 2), any_(2))),
                          (lambda a, b: _setitem(a * 1, (tensor([True, False, True]),), b * 2), (any_(3), any_(1)))],
}


def _second(f, a):
    """The gradient of f at a, as a differentiable function of a (exercises the backward-of-backward rows)."""
    from gradcli.engine.backward import grad
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        (g,) = grad(f(x * x), x, create_graph=True)
    return g


def _setitem(t, key, value):
    t[key] = value
    return t


def _cdist_gradient(a):
    """cdist's gradient taken with create_graph: recorded as _cdist_backward (CdistBackwardBackward0)."""
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        (g,) = grad(ops.linalg.cdist(x, x + 1.5, 1.5).sum(), x, create_graph=True)
    return g


def _unbind_sum(a):
    rows = list(a)
    return rows[0] * 2 + rows[1] * rows[2]


def _inplace_on_view(a, b):
    y = a * 1
    y.view(-1)[1:3].mul_(b)          # CopySlices (saving: mul keeps b) on y, AsStrided on the view
    return y * y


def _inplace_on_select(a, b):
    y = a * 1
    r = y[0]
    r.add_(b)                       # CopySlices that frees nothing
    return y * r.sum()


CHECKS[views.COPY_SLICES_SAVE] = [(_inplace_on_view, (any_(2, 2), any_(2)))]
CHECKS[views.COPY_SLICES] = [(_inplace_on_select, (any_(2, 3), any_(3)))]
CHECKS[views.AS_STRIDED] = [(_inplace_on_select, (any_(3, 2), any_(2)))]

# tensor-and-number steps inside create_graph formulas: d/dx of (x ** 3 + 2 - 1).sum() records
# AddBackward1 / SubBackward1 only when the formula itself adds a number, so exercise them through
# the gradient of a function whose formula does (sqrt: grad / (2 * result), softplus-like chains).
CHECKS[arith.ADD_SCALAR] = [(lambda a: _formula_scalar_step(a, "add"), (pos(3),))]
CHECKS[arith.SUB_SCALAR] = [(lambda a: _formula_scalar_step(a, "sub"), (pos(3),))]


def _formula_scalar_step(a, kind):
    """Run arith.add/sub with a number inside the formula context, as a create_graph backward does."""
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        inside, STATE.in_formula = STATE.in_formula, True
        try:
            y = arith.add(x * x, 2.0) if kind == "add" else arith.sub(x * x, 2.0)
        finally:
            STATE.in_formula = inside
    assert y.grad_fn.op.node == ("AddBackward1" if kind == "add" else "SubBackward1")
    return y


def _dual_primal(a):
    """forward_ad.unpack_dual(...).primal of a tensor that requires grad (an Identity node)."""
    from gradcli.engine import forward
    if STATE.fw_level is not None:          # tests/test_forward_rows.py: `a` is dual already
        return forward.unpack_dual(a).primal
    forward.enter_dual_level()
    try:
        return forward.unpack_dual(forward.make_dual(a, Tensor(np.ones_like(a._a)))).primal
    finally:
        forward.exit_dual_level()


CHECKS_BY_NAME = {"UnbindBackward0": [(_unbind_sum, (any_(3, 2),))], "Identity": [(_dual_primal, (any_(3, 2),))]}


def _rows():
    return [v for group in ops.GROUPS for v in vars(group).values() if v.__class__.__name__ == "Op"]


def _group_checks() -> dict:
    """CHECKS tables of the per-group test modules (tests/test_ops_*.py), which use gradcheck() above."""
    import importlib
    from pathlib import Path
    found = {}
    for path in sorted(Path(__file__).parent.glob("test_ops_*.py")):
        found.update(getattr(importlib.import_module(path.stem), "CHECKS", {}))
    return found


# Rows whose `forward` numpy computes (their op functions made by recording.unary / recording.binary)
# are checked from the row itself, on inputs in (0.2, 0.9) and, where the op is finite there, in
# (-0.9, -0.2) (in (1.2, 1.9) for a row finite in neither): a new such row needs no test code of its own.
DOMAINS = ((0.2, 0.9), (-0.9, -0.2))


def _row_functions() -> list:
    """(row, op function) for every op function made from a row's `forward`."""
    found = []
    for group in ops.GROUPS:
        for fn in vars(group).values():
            op = getattr(fn, "op", None)
            if op.__class__.__name__ == "Op" and op.forward is not None:
                found.append((op, fn))
    return found


def _generated_checks() -> dict:
    rs = np.random.RandomState(7)
    checks = {}
    for row, fn in _row_functions():
        shapes = ((2, 3),) if len(row.backward) == 1 else ((2, 3), (3,))    # a binary row broadcasts
        for lo, hi in DOMAINS + ((1.2, 1.9),):
            if lo > 1 and row in checks:
                break                   # (1.2, 1.9): only for a row finite in neither, acosh's
            arrays = tuple(rs.uniform(lo, hi, size=s) for s in shapes)
            with np.errstate(all="ignore"):
                finite = np.isfinite(row.forward(*arrays)).all()
            if finite:
                checks.setdefault(row, []).append((fn, arrays))
    return checks


GENERATED = _generated_checks()


def test_every_row_is_checked():
    checked = {**CHECKS, **_group_checks(), **GENERATED}
    missing = [r.node for r in _rows() if r not in checked and r.node not in CHECKS_BY_NAME]
    assert len(_rows()) > 30
    assert missing == []


def test_rows_with_a_forward_are_checked_from_the_row():
    rows = [row for row, _ in _row_functions()]
    assert len(rows) > 30
    assert [r.node for r in rows if r not in GENERATED] == []


def row_params(labelled) -> list:
    """pytest params of CHECKS-style cases in groups (conftest.in_groups), `labelled` as (label, cases) pairs;
    a case is (fn, arrays) or (fn, arrays, gradcheck options), and becomes (id, fn, arrays, options). The
    test_ops_*.py modules share it, and run a group with check_rows."""
    rows = []
    for label, cases in labelled:
        for i, case in enumerate(cases):
            fn, arrays, options = case if len(case) == 3 else (*case, {})
            rows.append((f"{label}-{i}", fn, arrays, options))
    return in_groups(rows, _row_id)


def _row_id(case) -> str:
    return case[0]


def check_rows(cases, check) -> None:
    """check(fn, arrays, options) on each case of a row_params group."""
    check_each(cases, lambda case: check(*case[1:]), _row_id)


def _gradcheck_row(fn, arrays, options) -> None:
    if "raises_gradcli" in options:        # a derivative gradcli leaves out: its honest refusal
        out = fn(*[_leaf(a) for a in arrays])
        with pytest.raises(NotImplementedError, match=f"^gradcli does not implement {options['raises_gradcli']}"):
            out.sum().backward()
        return
    if "raises_not_implemented" in options:
        out = fn(*[_leaf(a) for a in arrays])
        with pytest.raises(NotImplementedError, match=f"^the derivative for '{options['raises_not_implemented']}' "
                                                      r"is not implemented\.$"):
            out.sum().backward()
        return
    gradcheck(fn, *arrays, **{k: v for k, v in options.items() if k not in ("raises_unimplemented", "undefined_tangent", "no_forward_gradcli")})


def check_node_recorded(checks: dict, row) -> None:
    """The first case of `row` records the row's node."""
    fn, arrays = checks[row][0][:2]
    assert row.node in recorded_names(fn(*[_leaf(a) for a in arrays]))


def row_tests(checks: dict) -> tuple:
    """The two tests of a test_ops_*.py module's CHECKS table (row -> cases), to assign to module names:
    each case's gradient against finite differences, and each row's node recorded by its first case."""
    @pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in checks.items()))
    def test_backward_matches_finite_differences(cases):
        check_rows(cases, _gradcheck_row)

    @pytest.mark.parametrize("row", list(checks), ids=lambda row: row.node)
    def test_node_name_is_recorded(row):
        check_node_recorded(checks, row)

    return test_backward_matches_finite_differences, test_node_name_is_recorded


def gradcheck_params() -> list:
    """This module's cases (CHECKS, CHECKS_BY_NAME and those generated from the rows) as pytest params."""
    return row_params([(r.node, c) for r, c in CHECKS.items()] + list(CHECKS_BY_NAME.items())
                      + [(f"{r.node}-generated", c) for r, c in GENERATED.items()])


@pytest.mark.parametrize("cases", gradcheck_params())
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


# Second derivatives: the gradient computed with create_graph=True is itself checked against finite
# differences of the first gradient, for the smooth ops.
SECOND = [
    ("mul", lambda a, b: a * b * a, (any_(3), any_(3))),
    ("div", lambda a, b: a / b, (any_(3), pos(3))),
    ("pow", lambda a: a ** 3, (any_(2, 2),)),
    ("pow_tensor", lambda a, b: a ** b, (pos(3), any_(3))),
    ("pow_base", lambda a: 2 ** a, (any_(3),)),
    ("addcmul", lambda a, b, c: a.addcmul(b, c, value=0.5) * b, (any_(3), any_(3), any_(3))),
    ("addcdiv", lambda a, b, c: a.addcdiv(b, c, value=0.5) * b, (any_(3), any_(3), pos(3))),
    ("exp", lambda a: (a * 0.5).exp(), (any_(3),)),
    ("log", lambda a: a.log() * a, (pos(3),)),
    ("sqrt", lambda a: a.sqrt(), (pos(3),)),
    ("reciprocal", lambda a: 1 / a, (pos(3),)),
    ("norm", lambda a: a.norm(), (any_(3),)),
    ("mean_dim", lambda a: (a * a).mean(0), (any_(2, 3),)),
    ("mm", lambda a, b: a.mm(b) * a.sum(), (any_(2, 2), any_(2, 2))),
    ("broadcast", lambda a, b: a * b * b, (any_(2, 3), any_(3))),
    ("index", lambda a: a[1:] * a[0] + a[[0, 2]].sum(), (any_(3),)),
    ("inplace_view", _inplace_on_view, (any_(2, 2), any_(2))),
    ("tensordot", lambda a, b: ops.linalg.tensordot(a, b, ([0, 2], [2, 1])) * a.sum(), (any_(2, 3, 2), any_(4, 2, 2))),
    ("kron", lambda a, b: ops.linalg.kron(a, b) * a.sum(), (any_(2, 3), any_(3, 1, 2))),
]

# Ops PyTorch composes from other ops (no rows of their own): first derivatives through the composition.
COMPOSED = [
    ("tensordot", lambda a, b: ops.linalg.tensordot(a, b, 1), (any_(2, 3), any_(3, 4))),
    ("tensordot_dims", lambda a, b: ops.linalg.tensordot(a, b, ([1, 2], [1, 0])), (any_(2, 3, 4), any_(4, 3, 2))),
    ("tensordot_broadcast", lambda a, b: ops.linalg.tensordot(a, b, ([1], [0])), (any_(2, 3), any_(1, 4))),
    ("tensordot_outer", lambda a, b: ops.linalg.tensordot(a, b, 0), (any_(2), any_(3))),
    ("kron", lambda a, b: ops.linalg.kron(a, b), (any_(2, 3), any_(3, 2))),
    ("kron_ranks", lambda a, b: ops.linalg.kron(a, b), (any_(3), any_(2, 1, 2))),
]


@pytest.mark.parametrize("name, fn, arrays", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_backward_matches_finite_differences(name, fn, arrays):
    gradcheck(fn, *arrays)


def first_derivative(fn):
    """x -> the create_graph gradient of sum(fn(x)^2), as a differentiable function: checking it against
    finite differences checks second derivatives (and, applied twice, third)."""
    from gradcli.engine.backward import grad

    def first(*xs):
        with autograd.enable_grad():
            leaves = [x if x.requires_grad else _leaf(x._a) for x in xs]
            out = fn(*leaves)
            gs = grad((out * out).sum(), leaves, create_graph=True)
            total = gs[0]
            for extra in gs[1:]:
                total = total + extra.sum()
        return total
    return first


def recorded_names(out) -> list:
    """Node names of every node reachable from `out` (iterative walk)."""
    names, stack = [], [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            names.append(n.op.node)
            stack.extend(n.inputs)
    return names


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)
