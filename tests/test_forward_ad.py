"""Forward-mode AD (torch.autograd.forward_ad): the level API, dual tensors, and the arithmetic rows'
tangents against central finite differences (the other op areas have their own test_forward_*.py files).
The printed results are pinned byte for byte by the fwad_*.grad goldens in tests/conformance."""

from __future__ import annotations

import pytest

from forward_check import check
from gradcli.engine.ops import arith
from gradcli.engine.recording import Op
from tests.conftest import located_error

X = "x = torch.randn(2, 3, dtype=torch.float64)"
XY = X + "\ny = torch.rand(2, 3, dtype=torch.float64) + 0.5"
XB = X + "\ny = torch.rand(3, dtype=torch.float64) + 0.5"       # broadcasting

CASES = [
    (XY, "x + y", ("x", "y")), (XB, "x + y", ("x", "y")), (XY, "x.add(y, alpha=2.5)", ("x", "y")),
    (X, "x + 2", ("x",)), (XY, "x - y", ("x", "y")), (XB, "y.sub(x, alpha=-3)", ("x", "y")),
    (X, "3 - x", ("x",)), (XY, "x * y", ("x", "y")), (XB, "y * x", ("x", "y")), (X, "x * 2.5", ("x",)),
    (X, "x * x", ("x",)), (XY, "x / y", ("x", "y")), (XB, "y / x", ("x", "y")), (X, "x / 3", ("x",)),
    (XY, "x.reciprocal() + (-y)", ("x", "y")), (X, "x.exp()", ("x",)), (X, "x.clone()", ("x",)),
    (X, "x.t().contiguous()", ("x",)), (X, "x.t().clone()", ("x",)),
    (X, "x ** 3", ("x",)), (X, "(x * x + 1) ** 0.5", ("x",)), (XY, "y ** x", ("x", "y")), (X, "2 ** x", ("x",)),
    (X, "x.to(torch.float32).to(torch.float64)", ("x",), {"h": 0.5, "rtol": 1e-5}),
    (X, "(x * 1).zero_() + x", ("x",)), (X, "(x * 1).fill_(2.0) * x", ("x",)),
    (X + "\nz = torch.rand((), dtype=torch.float64)", "(x * 1).fill_(z)", ("x", "z")), (X, "x.unbind()[1]", ("x",)),
    (XB, "torch.rsub(x, y, alpha=2)", ("x", "y")), (XB, "torch.rsub(y, x)", ("x",)), (X, "torch.rsub(x, 3, 2)", ("x",)),
    (X, "torch.fill(x, 2.0) * x", ("x",)), (X + "\nz = torch.rand((), dtype=torch.float64)", "torch.fill(x, z)", ("x", "z")),
    (XY, "(x * 1).mul_(y).add_(y, alpha=2).div_(y).sub_(x)", ("x", "y")),
    (XY, "x.addcmul(y, x, value=0.5)", ("x", "y")), (XB, "torch.addcmul(x, y, y)", ("y",)),
    (XB, "torch.addcdiv(x, x, y, value=-1.5)", ("x", "y")), (XY, "(x * 1).addcdiv_(x, y)", ("y",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[1] for c in CASES])
def test_tangent_equals_finite_difference(case):
    ok, text, _ = check(*case[:3], **(case[3] if len(case) > 3 else {}))
    assert ok, text


def test_every_arithmetic_row_has_a_tangent_reached_by_a_case():
    rows = {v for v in vars(arith).values() if v.__class__ is Op}
    assert not [r.node for r in rows if r.jvp is None]
    seen = set()
    for case in CASES:
        seen |= check(*case[:3], **(case[3] if len(case) > 3 else {}))[2]
    # rows only formulas record (a tensor times a Python number inside a formula, ...) are reached there
    formula_only = {arith.MUL_SCALAR, arith.DIV_SCALAR, arith.ADD_SCALAR, arith.SUB_SCALAR}
    assert sorted(r.node for r in rows - seen - formula_only) == []


@pytest.mark.parametrize("source,expected", [
    ("fwAD.make_dual(x, x)",
     "4:1: RuntimeError: Trying to create a dual Tensor for forward AD but no level exists, make sure to "
     "enter_dual_level() first."),
    ("with fwAD.dual_level():\n    fwAD.make_dual(x, torch.ones(3))",
     "5:5: RuntimeError: Trying to set a forward gradient that has a different size than that of the original "
     "Tensor, this is not supported. Tensor is of size [2] while the given forward gradient is of size [3]."),
    ("with fwAD.dual_level():\n    fwAD.make_dual(torch.arange(2), x)",
     "5:5: ValueError: Expected primal to be floating point or complex, but got: torch.int64"),
    ("with fwAD.dual_level():\n    with fwAD.dual_level():\n        pass",
     "5:10: RuntimeError: Nested forward mode AD is not supported at the moment"),
    ("fwAD.exit_dual_level()", "4:1: RuntimeError: Dual level must be a positive number."),
])
def test_errors_name_the_line(source, expected):
    header = "import torch\nimport torch.autograd.forward_ad as fwAD\n"
    assert located_error(header + "x = torch.ones(2)\n" + source) == expected


def test_tangents_end_with_their_level_and_a_new_level_starts_clean():
    from tests.conftest import gradcli_output
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nx = torch.ones(2)\n"
              "with fwAD.dual_level():\n    d = fwAD.make_dual(x, x * 3)\n"
              "print(fwAD.unpack_dual(d).tangent)\n"
              "with fwAD.dual_level():\n    print(fwAD.unpack_dual(d).tangent, d * 2)\n")
    assert gradcli_output(source) == "None\nNone tensor([2., 2.])\n"


def test_the_tangent_of_a_leaf_that_requires_grad_is_differentiable():
    from tests.conftest import gradcli_output
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\n"
              "w = torch.tensor([1., 2.], requires_grad=True)\n"
              "with fwAD.dual_level():\n    t = fwAD.unpack_dual(fwAD.make_dual(w, torch.ones(2)) ** 3).tangent\n"
              "t.sum().backward()\nprint(t, w.grad)\n")
    # d/dw of sum(3 w^2 * 1) = 6 w
    assert gradcli_output(source) == "tensor([ 3., 12.], grad_fn=<MulBackward0>) tensor([ 6., 12.])\n"


@pytest.mark.parametrize("reach,expected", [
    ("d._fw", "AttributeError: 'Tensor' object has no attribute '_fw'"),
    ("fwAD.make_dual.__globals__", "AttributeError: 'function' object has no attribute '__globals__'"),
    ("type(p).__mro__", "AttributeError: type object 'UnpackedDualTensor' has no attribute '__mro__'"),
    ("fwAD.forward", "AttributeError: module 'torch.autograd.forward_ad' has no attribute 'forward'"),
    ("fwAD.STATE", "AttributeError: module 'torch.autograd.forward_ad' has no attribute 'STATE'"),
    ("fwAD.dual_level().__exit__", "AttributeError: 'torch.autograd.forward_ad.dual_level' object attribute "
                                   "'__exit__' is outside gradcli's language"),
    ("p._asdict", "AttributeError: 'torch.autograd.forward_ad.UnpackedDualTensor' object has no attribute "
                  "'_asdict'"),
])
def test_forward_ad_opens_no_way_out(reach, expected):
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nx = torch.ones(2)\n"
              "with fwAD.dual_level():\n    d = fwAD.make_dual(x, x)\n    p = fwAD.unpack_dual(d)\n"
              f"    print({reach})")
    assert located_error(source).split(": ", 1)[1] == expected


def test_an_op_on_tensors_without_tangents_inside_a_level_records_as_usual():
    # a row that saves its result (exp), on a tensor that requires grad but has no tangent
    from tests.conftest import gradcli_output
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nw = torch.ones(2, requires_grad=True)\n"
              "with fwAD.dual_level():\n    y = w.exp()\n    print(y)\ny.sum().backward()\nprint(w.grad)\n")
    assert gradcli_output(source) == ("tensor([2.7183, 2.7183], grad_fn=<ExpBackward0>)\n"
                                      "tensor([2.7183, 2.7183])\n")


def test_views_of_an_unpacked_primal_have_no_tangent():
    """unpack_dual's primal is a view forward mode does not see through, and so are views of it (and of a
    detached tensor); views of the dual tensor itself see their part of its tangent (PyTorch 2.13's
    printout)."""
    from tests.conftest import gradcli_output
    out = gradcli_output(
        "import torch\n"
        "import torch.autograd.forward_ad as fwAD\n"
        "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\n"
        "with fwAD.dual_level():\n"
        "    y = fwAD.make_dual(x, torch.ones(2, 2) * 0.5) * 3\n"
        "    p = fwAD.unpack_dual(y).primal\n"
        "    print(p[0], p.reshape(4)[1:], fwAD.unpack_dual(p[1]).tangent)\n"
        "    print(y[0])\n"
        "    print(y.detach()[0])\n"
        "    print(p[0] * fwAD.make_dual(torch.ones(2), torch.ones(2)))\n")
    assert out == ("tensor([3., 6.]) tensor([ 6.,  9., 12.]) None\n"
                   "tensor([3., 6.], tangent=tensor([1.5000, 1.5000]))\n"
                   "tensor([3., 6.])\n"
                   "tensor([3., 6.], tangent=tensor([3., 6.]))\n")
