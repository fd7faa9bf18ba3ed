"""Forward-mode AD through the elementwise and torch.nn.functional rows: tangents against central finite
differences (scripts run by gradcli), the refusals PyTorch makes, and the zero-tangent helpers' exact
values. The printed results and grad_fn names are pinned by the fwad_elementwise and fwad_nn goldens."""

from __future__ import annotations

import re

import numpy as np
import pytest

from forward_check import check
from gradcli.engine.ops import elementwise, nn
from gradcli.engine.forward import DROPPED, add_tangents, dropped, sub_tangents
from gradcli.engine.recording import Op
from gradcli.engine.tensor import Tensor
from tests.conftest import gradcli_output

X = "x = torch.randn(2, 3, dtype=torch.float64)"
P = "x = torch.rand(2, 3, dtype=torch.float64) + 0.5"                       # positive
U = "x = torch.rand(2, 3, dtype=torch.float64) * 1.6 - 0.8"                 # inside (-1, 1)
# values away from the integers and from 0, where the piecewise ops are smooth
A = "x = (torch.randint(-3, 3, (2, 3)) + 0.2 + torch.rand(2, 3) * 0.6).to(torch.float64)"
XY = X + "\ny = torch.randn(2, 3, dtype=torch.float64)"
XB = X + "\ny = torch.randn(3, dtype=torch.float64)"
AB = A + "\ny = (torch.randint(1, 3, (3,)) + 0.3).to(torch.float64)"
LERP = X + "\ny = torch.randn(2, 3, dtype=torch.float64)\nw = torch.rand(3, dtype=torch.float64)"
CLAMP = A + "\nlo = torch.full((3,), -1.5, dtype=torch.float64)\nhi = torch.full((2, 1), 1.5, dtype=torch.float64)"
COND = "c = torch.tensor([[True, False, True], [False, True, True]])"
PRELU = A + "\nw = torch.tensor([0.3, -0.7, 1.5], dtype=torch.float64)"
PR = "x = torch.rand(2, 3, dtype=torch.float64) * 0.8 + 0.1"                 # inside (0.1, 0.9)
XP = X + "\ny = torch.rand(3, dtype=torch.float64) + 0.5"                      # y positive
GO = "\ng = torch.randn(2, 3, dtype=torch.float64)"                            # a grad_output
BCE = "x = torch.rand(2, 3, dtype=torch.float64) * 0.8 + 0.1\nt = torch.rand(2, 3, dtype=torch.float64)"
NLL = X + "\nlabels = torch.tensor([2, 0])\nwt = torch.tensor([1., 2., 3.], dtype=torch.float64)"
NLL4 = ("x = torch.randn(2, 3, 2, 2, dtype=torch.float64)\nlabels = torch.tensor([[[0, 2], [1, -100]], [[2, 0], [1, 1]]])"
        "\nwt = torch.tensor([1., 2., 3.], dtype=torch.float64)")
LIN = (X + "\nb = torch.randn(4, dtype=torch.float64)"
       "\nweight = torch.tensor([[1., 2., 0.], [0.5, -1., 1.], [0., 0., 2.], [1., 1., 1.]], dtype=torch.float64)")


def _grad_of(call: str) -> str:
    """The gradient of `call` (an op of `x`) with respect to x, with create_graph: forward-over-reverse
    through the op's backward kernel, the incoming gradient `g` dual too."""
    call = re.sub(r"\bx\b", "x.requires_grad_()", call, count=1)
    return f"torch.autograd.grad({call}, x, g, create_graph=True)[0]"


CASES = [
    (P, "x.log()"), (P, "x.sqrt()"), (A, "x.abs()"), (A, "x.sign() + x"), (A, "x.sgn() * x"), (A, "x.angle() * x"), (X, "x.exp2()"),
    (X, "x.expm1()"), (P, "x.log2()"), (P, "x.log10()"), (P, "x.log1p()"), (P, "x.rsqrt()"), (X, "x.sin()"),
    (X, "x.cos()"), (U, "x.tan()"), (U, "x.asin()"), (U, "x.acos()"), (X, "x.atan()"),
    (X, "x.asinh()"), (P, "(x + 1).acosh()"), (U, "x.atanh()"), (X, "F.mish(x)"), (X, "F.glu(x, 0) * x[:1]"), (A, "F.selu(x)"), (A, "F.celu(x, 0.7)"),
    (A, "F.celu(x * 1, 0.5, inplace=True)"), (A, "F.selu(x * 1, inplace=True)"), (A, "F.hardshrink(x, 0.3) * x"), (A, "F.threshold(x, 0.1, 2.0) * x"),
    (A, "F.threshold(x * 1, 0.1, 2.0, inplace=True) * x"), (A, "F.softshrink(x, 0.3) * x"),
    (A + GO, "torch.autograd.grad(F.hardshrink(x.requires_grad_(), 0.3), x, g, create_graph=True)[0]", ("x", "g")),
    (A + GO, "torch.autograd.grad(F.softshrink(x.requires_grad_(), 0.3), x, g, create_graph=True)[0]", ("x", "g")),
    (X + GO, "torch.autograd.grad(F.glu(x.requires_grad_(), 0), x, g[:1], create_graph=True)[0]", ("x", "g")), (X, "x.sinh()"),
    (X, "x.cosh()"), (X, "x.tanh()"), (X, "x.sigmoid()"), (X, "x.erf()"), (A, "x.relu()"), (X, "F.silu(x)"),
    (A, "x.floor() + x"), (A, "x.ceil() + x"), (A, "x.round() + x"), (A, "x.trunc() + x"),
    (A, "x.round(decimals=1) + x"), (A, "x.frac()"),
    (XY, "torch.atan2(x, y)", ("x", "y")), (XB, "torch.atan2(y, x)", ("x", "y")),
    (X, "x.deg2rad()"), (X, "torch.rad2deg(x)"),
    (X, "x.erfc()"), (A, "x.sinc()"), (PR, "x.logit()"), (PR, "torch.logit(x, 0.05)"), (X, "torch.nan_to_num(x * 2)"),
    (XP, "torch.xlogy(x, y)", ("x", "y")), (XP, "torch.xlogy(x, y)", ("y",)), (XP, "torch.xlogy(2.5, y)", ("y",)),
    (X, "torch.xlogy(x, 1.5)"), (XP, "torch.special.xlog1py(x, y)", ("x", "y")),
    (XP, "torch.special.xlog1py(3, y)", ("y",)), (X, "torch.special.xlog1py(x, 0.5)"),
    (XB, "torch.logaddexp(x, y)", ("x", "y")), (XB, "torch.logaddexp2(y, x)", ("x", "y")),
    (XB, "torch.logaddexp2(x, y)", ("y",)), (XB, "torch.hypot(x, y)", ("x", "y")), (XB, "torch.hypot(x, y)", ("y",)),
    (AB, "torch.copysign(x, y) * y", ("x", "y")), (AB, "torch.copysign(x, y)", ("y",)), (A, "torch.copysign(x, -2.0)"),
    (XY, "torch.maximum(x, y)", ("x", "y")), (XB, "torch.minimum(y, x)", ("x", "y")),
    (X, "torch.maximum(x, x * 2)"),
    (XB, "torch.ldexp(x, y)", ("x", "y")), (X, "torch.ldexp(x, torch.tensor([2, 1, 0]))"), (X, "torch.frexp(x * 3).mantissa"),
    (XB, "torch.nextafter(x, y)", ("x", "y")),
    (XY, "torch.fmax(x, y)", ("x", "y")), (XB, "torch.fmin(y, x)", ("x", "y")), (XB, "x.fmax(y)", ("y",)),
    # the in-place comparisons: a zero tangent
    *[(AB, f"(x * 1).{name}_(0.5) + x") for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[(AB, f"(x * 1).{name}_(y) * y", ("x", "y")) for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    (A, "x.masked_fill(x > 0, 2.)"), (A + "\nv = torch.randn((), dtype=torch.float64)", "x.masked_fill(x > 0, v)",
                                        ("x", "v")),
    (CLAMP, "x.clamp(-1.5, 1.5)"), (CLAMP, "x.clamp(lo, hi)", ("x", "lo", "hi")),
    (CLAMP, "x.clamp(min=lo)", ("x", "lo")), (CLAMP, "x.clamp(max=hi)", ("x", "hi")),
    (CLAMP, "x.clamp_min(0.5)"), (CLAMP, "x.clamp_max(0.5)"),
    (CLAMP, "x.clamp_min(lo)", ("x", "lo")), (CLAMP, "x.clamp_max(hi)", ("x", "hi")),
    (COND + "\n" + XB, "torch.where(c, x, y)", ("x", "y")), (COND + "\n" + X, "torch.where(c, x, 0.5)"),
    (LERP, "torch.lerp(x, y, 0.3)", ("x", "y")), (LERP, "torch.lerp(x, y, w)", ("x", "y", "w")),
    (AB, "x % y", ("x", "y")), (A, "x % 1.5"), (AB, "torch.fmod(x, y)", ("x", "y")), (A, "x.fmod(-1.5)"), (AB, "torch.div(x, y, rounding_mode='floor') + x", ("x", "y")),
    (XY, "torch.zeros(2, 3, dtype=torch.float64).copy_(x) * y", ("x", "y")),
    (XB, "(x * 1).copy_(y)", ("x", "y")), (X, "(x * 1).copy_(torch.ones(3)) + x"),
    (A, "F.softplus(x, beta=2, threshold=1)"), (X, "F.gelu(x)"), (X, "F.gelu(x, approximate='tanh')"),
    (A, "F.leaky_relu(x, 0.2)"), (A, "F.leaky_relu_(x * 1, 0.2)"), (A, "F.elu(x)"), (A, "F.elu_(x * 1, 0.5)"),
    (A, "F.hardtanh(x, -1.5, 1.5)"), (X, "F.logsigmoid(x)"),
    (X, "F.hardsigmoid(x * 1.2)"), (X, "F.hardswish(x * 1.2)"), (X + GO, _grad_of("F.hardswish(x * 1.2)"), ("x", "g")),
    (X + GO, _grad_of("x.tanh()"), ("x", "g")), (X + GO, _grad_of("x.sigmoid()"), ("x", "g")),
    (A + GO, _grad_of("F.relu(x)"), ("x", "g")), (X + GO, _grad_of("F.softplus(x)"), ("x", "g")),
    (X + GO, _grad_of("F.gelu(x)"), ("x", "g")), (X + GO, _grad_of("F.gelu(x, approximate='tanh')"), ("x", "g")),
    (A + GO, _grad_of("F.leaky_relu(x)"), ("x", "g")), (A + GO, _grad_of("F.elu(x)"), ("x", "g")),
    (A + GO, _grad_of("F.hardtanh(x, -1.5, 1.5)"), ("x", "g")), (X + GO, _grad_of("F.logsigmoid(x)"), ("x", "g")),
    (X + GO, _grad_of("F.softmax(x, 1)"), ("x", "g")), (X + GO, _grad_of("F.log_softmax(x, 0)"), ("x", "g")),
    (X, "F.softmax(x, 1)"), (X, "F.log_softmax(x, 0)"),
    (XY, "F.mse_loss(x, y, reduction='none')", ("x", "y")), (XY, "F.mse_loss(x, y)", ("x", "y")),
    (XY, "F.mse_loss(x, y, reduction='sum')", ("x",)),
    # mse_loss's gradient under create_graph (MseLossBackwardBackward0): tangents of grad_output, self and target
    (XY + GO, _grad_of("F.mse_loss(x, y, reduction='none')"), ("x", "y", "g")),
    (XY + "\ng = torch.tensor(0.7, dtype=torch.float64)", _grad_of("F.mse_loss(x, y)"), ("x", "y", "g")),
    # smooth_l1_loss's and huber_loss's gradients under create_graph (SmoothL1LossBackwardBackward0,
    # HuberLossBackwardBackward0): tangents of grad_output, self and target
    (XY + GO, _grad_of("F.smooth_l1_loss(x, y, reduction='none', beta=0.5)"), ("x", "y", "g")),
    (XY + "\ng = torch.tensor(0.7, dtype=torch.float64)", _grad_of("F.smooth_l1_loss(x, y)"), ("x", "y", "g")),
    (XY + GO, _grad_of("F.huber_loss(x, y, reduction='none', delta=0.7)"), ("x", "y", "g")),
    # binary_cross_entropy's gradient under create_graph (BinaryCrossEntropyBackwardBackward0)
    (BCE + GO, _grad_of("F.binary_cross_entropy(x, t, reduction='none')"), ("x", "t", "g")),
    (BCE + "\ng = torch.tensor(0.7, dtype=torch.float64)",
     _grad_of("F.binary_cross_entropy(x, t, weight=torch.tensor([1., 2., .5], dtype=torch.float64))"),
     ("x", "t", "g")),
    (XY + "\ng = torch.tensor(0.7, dtype=torch.float64)", _grad_of("F.huber_loss(x, y, reduction='sum')"),
     ("x", "y", "g")),
    # nll_loss's gradient under create_graph (NllLossBackwardBackward0, NllLoss2DBackwardBackward0): the tangent
    # of grad_output (self gives none)
    (NLL + "\ng = torch.randn(2, dtype=torch.float64)", _grad_of("F.nll_loss(x, labels, weight=wt, reduction='none')"),
     ("x", "g")),
    (NLL + "\ng = torch.tensor(0.7, dtype=torch.float64)", _grad_of("F.nll_loss(x, labels)"), ("x", "g")),
    (NLL4 + "\ng = torch.tensor(0.7, dtype=torch.float64)", _grad_of("F.nll_loss(x, labels, weight=wt)"), ("x", "g")),
    (NLL4 + "\ng = torch.randn(2, 2, 2, dtype=torch.float64)", _grad_of("F.nll_loss(x, labels, reduction='none')"),
     ("x", "g")),
    (BCE, "F.binary_cross_entropy(x, t, reduction='none')", ("x", "t")),
    (BCE, "F.binary_cross_entropy(x, t, weight=torch.tensor([1., 2., .5], dtype=torch.float64))", ("x", "t")),
    (BCE, "F.binary_cross_entropy_with_logits(x, t, reduction='sum')", ("x", "t")),
    (BCE, "F.binary_cross_entropy_with_logits(x, t, pos_weight=torch.tensor([2., 1., 3.], dtype=torch.float64))",
     ("x", "t")),
    (NLL, "F.nll_loss(x, labels)"), (NLL, "F.nll_loss(x, labels, weight=wt, reduction='none')"),
    (NLL, "F.nll_loss(x, torch.tensor([2, -100]), weight=wt, reduction='sum')"), (NLL, "F.cross_entropy(x, labels)"),
    (LIN, "F.linear(x, weight, b)", ("x", "b")), (LIN, "F.linear(x, weight, b)", ("b",)),
    (XY, "F.smooth_l1_loss(x, y, beta=0.5)", ("x", "y")), (XY, "F.smooth_l1_loss(x, y, reduction='sum')", ("x",)),
    (XY, "F.huber_loss(x, y, reduction='none', delta=0.7)", ("x", "y")), (XY, "F.huber_loss(x, y)", ("y",)),
    (NLL4, "F.nll_loss(x, labels, weight=wt)"), (NLL4, "F.nll_loss(x, labels, reduction='none')"),
    (NLL4 + "\nx = x.view(2, 3, 4)\nlabels = labels.view(2, 4)", "F.cross_entropy(x, labels, label_smoothing=0.2)"),
    (X, "F.embedding(torch.tensor([[0, 1], [1, 1]]), x)"),
    (X + "\ng = torch.randn(2, 2, 3, dtype=torch.float64)",
     "torch.autograd.grad(F.embedding(torch.tensor([[0, 1], [1, 1]]), x.requires_grad_(), scale_grad_by_freq=True),"
     " x, g, create_graph=True)[0]", ("x", "g")),
    (XY + "\nw = torch.randn(2, 3, 3, dtype=torch.float64)", "F.bilinear(x, y, w)", ("x", "y", "w")),
    # native_dropout: the generator seeded inside the expression, so every evaluation draws the same mask
    (X, "(torch.manual_seed(0), torch.native_dropout(x, 0.4, True)[0])[1]"), (X, "torch.native_dropout(x, 0.4, False)[0]"),
    (PRELU, "F.prelu(x, w)", ("x", "w")), (PRELU, "F.prelu(x, w[:1])", ("w",)),
    (PRELU + GO, "torch.autograd.grad(F.prelu(x.requires_grad_(), w), x, g, create_graph=True)[0]", ("x", "g", "w")),
    (PRELU + GO, "torch.autograd.grad(F.prelu(x, w.requires_grad_()), w, g, create_graph=True)[0]", ("x", "g", "w")),
]


def _id(case) -> str:
    return f"{case[1]} [{','.join(case[2]) if len(case) > 2 else 'x'}]"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_tangent_equals_finite_difference(case):
    ok, text, _ = check(*case[:3])
    assert ok, text


def _rows(module) -> set:
    return {v for v in vars(module).values() if v.__class__ is Op}


def test_every_row_has_a_tangent_reached_by_a_case():
    rows = _rows(elementwise) | _rows(nn)
    assert not [r.node for r in rows if r.jvp is None]
    seen = set()
    for case in CASES:
        seen |= check(*case[:3])[2]
    # the refusing row is reached by test_floor_division_refuses
    # (the in-place asinh_ / acosh_ / atanh_ rows refuse tangents: test_inplace_inverse_hyperbolic_refuses)
    refusing = {elementwise.NOT_IMPLEMENTED, elementwise.ASINH_, elementwise.ACOSH_, elementwise.ATANH_}
    assert sorted(r.node for r in rows - seen - refusing) == []


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh"])
def test_inplace_inverse_hyperbolic_refuses(name):
    """PyTorch has no derivative, forward or backward, for the in-place forms: its NotImplementedErrors."""
    script = ("import torch\nimport torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n"
              "    d = fwAD.make_dual(torch.tensor([1.5, 2.]), torch.ones(2)) * 1.0\n    try:\n"
              f"        d.{name}_()\n    except NotImplementedError as err:\n        print(err)\n")
    assert gradcli_output(script).startswith(f"Trying to use forward AD with {name}_ that does not support it "
                                             "because it has not been implemented yet.\n")


@pytest.mark.parametrize("expr, aten", [("d // 2", "floor_divide"), ("2 // d", "floor_divide"),
                                        ("torch.floor_divide(d, d)", "floor_divide"), ("3 % d", "remainder")])
def test_floor_division_refuses(expr, aten):
    script = ("import torch\nimport torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n"
              f"    d = fwAD.make_dual(torch.tensor([1.5, 2.]), torch.ones(2))\n    try:\n        {expr}\n"
              "    except NotImplementedError as err:\n        print(err)\n")
    out = gradcli_output(script)
    assert out == f"Trying to use forward AD with aten::{aten} that does not support it.\n"


def _bits(t: Tensor) -> list:
    return [np.signbit(v) for v in np.atleast_1d(t._a)]


def test_zero_tangent_terms_keep_signed_zeros():
    """PyTorch's zero tensor adds by copying the other term: x + 0 keeps -0.0, 0 - x is -x."""
    a = Tensor(np.array([0.0, -0.0, 1.5], dtype=np.float32))
    assert add_tangents(a, None) is a and add_tangents(None, a) is a
    assert _bits(sub_tangents(None, a)) == [True, False, True]
    a.requires_grad_()
    summed = add_tangents(None, a)
    assert summed.grad_fn.name() == "AddBackward0" and _bits(summed) == [False, True, False]
    assert sub_tangents(a, None).grad_fn.name() == "SubBackward0"
    negated = sub_tangents(None, a)
    assert negated.grad_fn.name() == "SubBackward0" and _bits(negated) == [True, False, True]


def test_a_dropped_term_that_requires_grad_records_the_add():
    leaf = Tensor(np.ones(3)).requires_grad_()
    plain = Tensor(np.array([0.0, -0.0, 2.0]))
    assert dropped(plain) is None and dropped(leaf, plain) is DROPPED
    summed = add_tangents(plain, dropped(leaf))
    assert summed.grad_fn.name() == "AddBackward0" and _bits(summed) == [False, True, False]
    assert add_tangents(None, DROPPED) is None
