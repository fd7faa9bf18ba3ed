"""Elementwise ops: every row's backward against finite differences, second and third derivatives of the smooth
ones, forward values of the kernels PyTorch computes its own way, and PyTorch's error messages word for word."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import error_line, run_script
from gradcli.engine import autograd, ops
from gradcli.engine.factories import tensor
from gradcli.engine.backward import grad
from gradcli.engine.ops import elementwise as ew
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _leaf, any_, check_node_recorded, check_rows, first_derivative, gradcheck, pos, row_params

F = TORCH.members["nn"].members["functional"].members
R = np.random.RandomState(7)


def unit(*shape):
    """Values inside (-1, 1), away from the ends: for asin, acos and friends."""
    return R.uniform(-0.8, 0.8, size=shape)


def away(*shape):
    """Values away from 0 and from the integers, where the piecewise ops are smooth."""
    return R.choice([-1, 1], size=shape) * R.uniform(0.2, 0.8, size=shape) + R.randint(-2, 3, size=shape)


def _d(f):
    """a -> df/da of sum(f(a)^2), itself differentiable (create_graph): its backward runs the rows that
    PyTorch records for backward formulas (TanhBackwardBackward0, ...)."""
    def first(a):
        with autograd.enable_grad():
            x = a if a.requires_grad else _leaf(a._a)
            y = f(x)
            (g,) = grad((y * y).sum(), x, create_graph=True)
        return g
    return first


def _copy(a, src):
    a.copy_(src)
    return a


COND = tensor([[True], [False]])

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    ew.ABS: [(lambda a: a.abs(), (away(2, 3),)), (lambda a: abs(a) * a, (away(3),))],
    ew.SIGN: [(lambda a: a.sign() * a, (away(3),))],
    ew.SGN: [(lambda a: a.sgn() * a, (away(3),))],
    ew.ANGLE: [(lambda a: a.angle() * a, (away(3),))],
    ew.EXP2: [(lambda a: a.exp2(), (any_(2, 3),))],
    ew.EXPM1: [(lambda a: a.expm1(), (any_(3),))],
    ew.LOG2: [(lambda a: a.log2(), (pos(3),))],
    ew.LOG10: [(lambda a: a.log10(), (pos(2, 2),))],
    ew.LOG1P: [(lambda a: a.log1p(), (pos(3),))],
    ew.RSQRT: [(lambda a: a.rsqrt(), (pos(3),))],
    ew.SIN: [(lambda a: a.sin(), (any_(2, 3),))],
    ew.COS: [(lambda a: a.cos(), (any_(3),))],
    ew.TAN: [(lambda a: a.tan(), (unit(3),))],
    ew.ASIN: [(lambda a: a.asin(), (unit(3),))],
    ew.ACOS: [(lambda a: a.acos(), (unit(2, 2),))],
    ew.ATAN: [(lambda a: a.atan(), (any_(3),))],
    ew.ATAN2: [(lambda a, b: a.atan2(b), (any_(2, 3), any_(3))), (lambda a, b: a.arctan2(b), (any_(1), pos(2, 2)))],
    ew.SINH: [(lambda a: a.sinh(), (any_(3),))],
    ew.COSH: [(lambda a: a.cosh(), (any_(3),))],
    ew.TANH: [(lambda a: a.tanh(), (any_(2, 3),))],
    ew.SIGMOID: [(lambda a: a.sigmoid(), (any_(2, 3),))],
    ew.ERF: [(lambda a: a.erf(), (any_(3),))],
    ew.RELU: [(lambda a: a.relu(), (away(2, 3),)), (lambda a: F["relu"](a * 1, inplace=True), (away(3),))],
    ew.CLAMP: [(lambda a: a.clamp(-0.5, 0.5), (away(2, 3) / 3,)), (lambda a: a.clamp(min=0.1), (away(4) / 3,)),
               (lambda a: a.clip(max=-0.1), (away(4) / 3,))],
    ew.CLAMP_TENSOR: [(lambda a, lo, hi: a.clamp(lo, hi), (away(2, 3), away(3) - 1, away(2, 1) + 1)),
                      (lambda a, lo: a.clamp(min=lo), (away(2, 3), away(3))),
                      (lambda a, hi: a.clamp(max=hi), (away(3), away(1))),
                      (lambda a, lo, hi: a.clamp(lo, hi), (away(3), away(3) + 1, away(3) - 1))],
    ew.CLAMP_MIN: [(lambda a: a.clamp_min(0.25), (away(3) / 3,))],
    ew.CLAMP_MIN_TENSOR: [(lambda a, b: a.clamp_min(b), (away(2, 3), away(3)))],
    ew.CLAMP_MAX: [(lambda a: a.clamp_max(0.25), (away(3) / 3,))],
    ew.CLAMP_MAX_TENSOR: [(lambda a, b: a.clamp_max(b), (away(3), away(2, 1)))],
    ew.MAXIMUM: [(lambda a, b: a.maximum(b), (away(2, 3), away(3)))],
    ew.MINIMUM: [(lambda a, b: a.minimum(b), (away(3), away(2, 1)))],
    ew.WHERE: [(lambda a, b: ops.where(COND, a, b), (any_(2, 3), any_(3))),
               (lambda a: ops.where(COND, a, 1.5), (any_(3),)), (lambda b: ops.where(COND, 2, b), (any_(2, 1),))],
    ew.FLOOR: [(lambda a: a.floor() * a, (away(3),))],
    ew.DIV_ROUNDING: [(lambda a, b: a.div(b, rounding_mode="trunc") * a, (away(2, 3), away(3))),
                      (lambda a: a.div(0.7, rounding_mode="floor") * a, (away(3),))],
    ew.CEIL: [(lambda a: a.ceil() * a, (away(3),))],
    ew.ROUND: [(lambda a: a.round() * a, (away(3),))],
    ew.ROUND_DECIMALS: [(lambda a: a.round(decimals=1) + a, (away(3),))],
    ew.TRUNC: [(lambda a: a.trunc() * a, (away(3),)), (lambda a: a.fix() * a, (away(2),))],
    ew.FRAC: [(lambda a: a.frac(), (away(2, 3),))],
    ew.LERP: [(lambda a, b: a.lerp(b, 0.3), (any_(2, 3), any_(3))), (lambda a, b: a.lerp(b, 0.8), (any_(3), any_(3)))],
    ew.LERP_TENSOR: [(lambda a, b, w: a.lerp(b, w), (any_(2, 3), any_(3), unit(2, 1))),
                     (lambda a, b, w: a.lerp(b, w), (any_(3), any_(3), any_()))],
    ew.REMAINDER: [(lambda a: a % 1.5, (away(2, 3),)), (lambda a: a.remainder(-2), (away(3),))],
    ew.FMOD: [(lambda a: ew.fmod(a, 1.5), (away(2, 3),)), (lambda a: a.fmod(-2), (away(3),))],
    ew.FMOD_TENSOR: [(lambda a, b: ew.fmod(a, b), (away(2, 3), np.array([0.7, -1.3, 2.9])))],
    ew.REMAINDER_TENSOR: [(lambda a, b: a % b, (away(2, 3), np.array([0.7, 1.3, 2.9])))],
    # PyTorch records a node without a derivative: the check is that backward fails with PyTorch's message
    ew.NOT_IMPLEMENTED: [(lambda a: a // 2, (any_(3),), {"raises": "aten::floor_divide"}),
                         (lambda a, b: a // b, (any_(3), pos(3)), {"raises": "aten::floor_divide"}),
                         (lambda a: 2 % a, (pos(3),), {"raises": "aten::remainder"})],
    ew.ACOSH: [(lambda a: a.acosh(), (pos(2, 3) + 1,))],
    ew.GLU: [(lambda a: ew.glu(a), (any_(3, 4),)), (lambda a: ew.glu(a, 0), (any_(2, 3),))],
    ew.HARDSHRINK: [(lambda a: ew.hardshrink(a, 0.3) * a, (away(2, 3),))],
    ew.THRESHOLD: [(lambda a: ew.torch_threshold(a, 0.1, 2.0) * a, (away(2, 3),))],
    ew.THRESHOLD_: [(lambda a: ew.torch_threshold_(a * 1, 0.1, 2.0) * a, (away(2, 3),))],
    ew.CELU: [(lambda a: ew.celu(a, 0.7), (any_(2, 3),)), (lambda a: ew.celu(a, 2.0), (any_(3),))],
    ew.CELU_: [(lambda a: ew.celu(a * 1, 0.5, inplace=True), (any_(2, 3),))],
    ew.SOFTSHRINK: [(lambda a: ew.softshrink(a, 0.3) * a, (away(2, 3),))],
    ew.HARDSHRINK_BACKWARD: [(lambda a, g: _shrink_grad(ew.hardshrink, a, g), (away(2, 3), any_(2, 3)))],
    ew.SOFTSHRINK_BACKWARD: [(lambda a, g: _shrink_grad(ew.softshrink, a, g), (away(2, 3), any_(2, 3)))],
    ew.GLU_BACKWARD: [(lambda a, g: _glu_grad(a, g, -1), (any_(3, 4), any_(3, 2))),
                      (lambda a, g: _glu_grad(a, g, 0), (any_(4, 2), any_(2, 2)))],
    # in-place asinh_ / acosh_ / atanh_: PyTorch records a node without a derivative
    ew.ASINH_: [(lambda a: _inplace(a, "asinh_"), (any_(3),), {"raises_inplace": "asinh"})],
    ew.ACOSH_: [(lambda a: _inplace(a, "acosh_"), (pos(3) + 1,), {"raises_inplace": "acosh"})],
    ew.ATANH_: [(lambda a: _inplace(a, "atanh_"), (unit(3),), {"raises_inplace": "atanh"})],
    ew.COPY: [(lambda a, b: _copy(a * 1, b), (any_(2, 3), any_(3))),
              (lambda b: _copy(Tensor(np.zeros((2, 2))), b), (any_(),))],
    ew.SOFTPLUS: [(lambda a: F["softplus"](a), (any_(2, 3),)),
                  (lambda a: F["softplus"](a, beta=2, threshold=1), (away(4) / 2,))],
    ew.GELU: [(lambda a: F["gelu"](a), (any_(2, 3),)), (lambda a: F["gelu"](a, approximate="tanh"), (any_(3),))],
    ew.LEAKY_RELU: [(lambda a: F["leaky_relu"](a), (away(3),)), (lambda a: F["leaky_relu"](a, 0.2), (away(2, 2),))],
    ew.LEAKY_RELU_: [(lambda a: F["leaky_relu"](a * 1, 0.3, True), (away(3),))],
    ew.ELU: [(lambda a: F["elu"](a), (away(2, 3),)), (lambda a: F["elu"](a, alpha=0.5), (away(3),))],
    ew.ELU_: [(lambda a: F["elu_"](a * 1, 2.0), (away(3),))],
    ew.HARDTANH: [(lambda a: F["hardtanh"](a), (away(2, 3),)), (lambda a: F["relu6"](a * 4), (away(4),))],
    ew.SILU: [(lambda a: F["silu"](a), (any_(2, 3),))],
    # the kinks at -3 and 3 are avoided: inputs stay within 2.9 of zero, or beyond 3.1
    ew.HARDSIGMOID: [(lambda a: F["hardsigmoid"](a * 2.5), (unit(2, 3),)),
                     (lambda a: F["hardsigmoid"](a + 5), (unit(3),))],
    ew.HARDSWISH: [(lambda a: F["hardswish"](a * 2.5), (unit(2, 3),)), (lambda a: F["hardswish"](a - 5), (unit(3),))],
    ew.HARDSWISH_BACKWARD: [(_d(lambda x: F["hardswish"](x * 2.5) * x), (unit(3),))],
    ew.LOG_SIGMOID: [(lambda a: F["logsigmoid"](a), (any_(2, 3),))],
    ew.TANH_BACKWARD: [(_d(lambda x: x.tanh()), (any_(3),))],
    ew.SIGMOID_BACKWARD: [(_d(lambda x: x.sigmoid()), (any_(3),))],
    ew.THRESHOLD_BACKWARD: [(_d(lambda x: x.relu() * x), (away(3),))],
    ew.SOFTPLUS_BACKWARD: [(_d(lambda x: F["softplus"](x, 2.0, 1.5)), (away(3) / 2,))],
    ew.GELU_BACKWARD: [(_d(lambda x: F["gelu"](x)), (any_(3),)),
                       (_d(lambda x: F["gelu"](x, approximate="tanh")), (any_(3),))],
    ew.LEAKY_RELU_BACKWARD: [(_d(lambda x: F["leaky_relu"](x, 0.2) * x), (away(3),))],
    ew.ELU_BACKWARD: [(_d(lambda x: F["elu"](x, 0.7)), (away(3),)), (_d(lambda x: F["elu_"](x * 1, 0.7)), (away(3),))],
    ew.HARDTANH_BACKWARD: [(_d(lambda x: F["hardtanh"](x * 2) * x), (away(3) / 3,))],
    ew.LOG_SIGMOID_BACKWARD: [(_d(lambda x: F["logsigmoid"](x)), (any_(3),))],
    # logit inside (0, 1), away from the clamp bounds where eps is given
    ew.LOGIT: [(lambda a: ew.logit(a), (R.uniform(0.1, 0.9, size=(2, 3)),)),
               (lambda a: a.logit(0.05), (R.uniform(0.1, 0.9, size=(3,)),))],
    ew.NAN_TO_NUM: [(lambda a: ew.nan_to_num(a * 2.0), (any_(2, 3),))],
    ew.XLOGY: [(lambda a, b: ew.xlogy(a, b), (any_(2, 3), pos(3)))],
    ew.XLOGY_SELF_NUMBER: [(lambda b: ew.xlogy(2.5, b), (pos(2, 3),))],
    ew.XLOGY_OTHER_NUMBER: [(lambda a: ew.xlogy(a, 1.5), (any_(2, 3),)), (lambda a: a.xlogy(3), (any_(3),))],
    ew.XLOG1PY: [(lambda a, b: ew.xlog1py(a, b), (any_(2, 3), pos(3)))],
    ew.XLOG1PY_SELF_NUMBER: [(lambda b: ew.xlog1py(2.5, b), (pos(2, 3),))],
    ew.XLOG1PY_OTHER_NUMBER: [(lambda a: ew.xlog1py(a, 0.5), (any_(2, 3),))],
    ew.COPYSIGN: [(lambda a, b: ew.copysign(a, b) * b, (away(2, 3), away(3)))],
    ew.COPYSIGN_NUMBER: [(lambda a: ew.copysign(a, -1.0), (away(2, 3),)), (lambda a: a.copysign(2), (away(3),))],
    ew.LDEXP: [(lambda a, b: ew.ldexp(a, b), (any_(2, 3), any_(3))), (lambda a: ew.ldexp(a, tensor([3, 1, 0])), (any_(2, 3),))],
    ew.FREXP: [(lambda a: ew.frexp(a).mantissa, (any_(2, 3),)), (lambda a: ew.frexp(a * 3)[0] * a, (any_(3),))],
    # the in-place comparisons: zero gradients (away from ties, the values do not move either)
    **{row: [(lambda a, name=name: getattr(a * 1, name)(0.25) * a, (away(2, 3),))]
       for row, name in ((ew.EQ_NUMBER, "eq_"), (ew.NE_NUMBER, "ne_"), (ew.LT_NUMBER, "lt_"), (ew.LE_NUMBER, "le_"),
                         (ew.GT_NUMBER, "gt_"), (ew.GE_NUMBER, "ge_"))},
    **{row: [(lambda a, b, name=name: getattr(a * 1, name)(b) * a + b, (away(2, 3), away(3)))]
       for row, name in ((ew.EQ_TENSOR, "eq_"), (ew.NE_TENSOR, "ne_"), (ew.LT_TENSOR, "lt_"), (ew.LE_TENSOR, "le_"),
                         (ew.GT_TENSOR, "gt_"), (ew.GE_TENSOR, "ge_"))},
}


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _check_backward)


def _shrink_grad(fn, a, g):
    """A shrink function's gradient with create_graph, a function of the incoming gradient (the input's
    part is zero)."""
    with autograd.enable_grad():
        x = a if a.requires_grad else Tensor(a._a.copy()).requires_grad_()
        (out,) = grad(fn(x, 0.3), x, g, create_graph=True)
    return out * g


def _glu_grad(a, g, dim):
    """glu's gradient with create_graph, a function of the input and the incoming gradient
    (GluBackwardBackward0's two formulas)."""
    with autograd.enable_grad():
        x = a if a.requires_grad else Tensor(a._a.copy()).requires_grad_()
        (out,) = grad(ew.glu(x, dim), x, g, create_graph=True)
    return out


def _inplace(a, method: str):
    y = a * 1
    getattr(y, method)()
    return y


def _check_backward(fn, arrays, options) -> None:
    if "raises_inplace" in options:
        out = fn(*[_leaf(a) for a in arrays])
        name = options["raises_inplace"]
        with pytest.raises(NotImplementedError, match=f"^the derivative for 'inplace version of {name}' is not "
                                                      r"implemented\.$"):
            out.sum().backward()
        return
    if "raises" in options:
        # PyTorch records a node for these but has no derivative: backward must fail with its message
        out = fn(*[_leaf(a) for a in arrays])
        with pytest.raises(RuntimeError, match=f"^derivative for {options['raises']} is not implemented$"):
            out.sum().backward()
        return
    gradcheck(fn, *arrays, **options)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


# Second derivatives of the smooth ops (and of the piecewise ones away from their kinks), checked like
# test_gradcheck.test_second_derivative_matches_finite_differences.
SECOND = [
    ("abs", lambda a: a.abs() * a, (away(3),)),
    ("exp2", lambda a: a.exp2(), (any_(3),)),
    ("expm1", lambda a: a.expm1(), (any_(3),)),
    ("log2", lambda a: a.log2(), (pos(3),)),
    ("log10", lambda a: a.log10(), (pos(3),)),
    ("log1p", lambda a: a.log1p(), (pos(3),)),
    ("rsqrt", lambda a: a.rsqrt(), (pos(3),)),
    ("sin", lambda a: a.sin(), (any_(3),)),
    ("cos", lambda a: a.cos(), (any_(3),)),
    ("tan", lambda a: a.tan(), (unit(3),)),
    ("asin", lambda a: a.asin(), (unit(3),)),
    ("acos", lambda a: a.acos(), (unit(3),)),
    ("atan", lambda a: a.atan(), (any_(3),)),
    ("atan2", lambda a, b: a.atan2(b), (any_(2, 3), any_(3))),
    ("sinh", lambda a: a.sinh(), (any_(3),)),
    ("cosh", lambda a: a.cosh(), (any_(3),)),
    ("tanh", lambda a: a.tanh(), (any_(3),)),
    ("sigmoid", lambda a: a.sigmoid(), (any_(3),)),
    ("erf", lambda a: a.erf(), (any_(3),)),
    ("relu", lambda a: a.relu() * a, (away(3),)),
    ("clamp", lambda a, lo: a.clamp(min=lo) * a, (away(3), away(3))),
    ("maximum", lambda a, b: a.maximum(b) * b, (away(3), away(3))),
    ("where", lambda a, b: ops.where(COND, a * a, b * a), (any_(2, 3), any_(3))),
    ("lerp", lambda a, b, w: a.lerp(b, w) * w, (any_(3), any_(3), unit(3))),
    ("lerp_scalar", lambda a, b: a.lerp(b, 0.75) * a, (any_(3), any_(3))),
    ("remainder", lambda a, b: (a % b) * b, (away(3), np.array([0.7, 1.3, 2.9]))),
    ("softplus", lambda a: F["softplus"](a, 1.5, 2.0), (away(3) / 2,)),
    ("gelu", lambda a: F["gelu"](a), (any_(3),)),
    ("gelu_tanh", lambda a: F["gelu"](a, approximate="tanh"), (any_(3),)),
    ("leaky_relu", lambda a: F["leaky_relu"](a, 0.1) * a, (away(3),)),
    ("elu", lambda a: F["elu"](a, 1.5), (away(3),)),
    ("elu_", lambda a: F["elu_"](a * 1, 1.5), (away(3),)),
    ("leaky_relu_", lambda a: F["leaky_relu_"](a * 1, 0.5) * a, (away(3),)),
    ("hardtanh", lambda a: F["hardtanh"](a * 2) * a, (away(3) / 3,)),
    ("silu", lambda a: F["silu"](a), (any_(3),)),
    ("logsigmoid", lambda a: F["logsigmoid"](a), (any_(3),)),
    ("softsign", lambda a: F["softsign"](a), (away(3),)),
    ("erfc", lambda a: a.erfc(), (any_(3),)),
    ("sinc", lambda a: a.sinc(), (away(3),)),
    ("logit", lambda a: a.logit(), (R.uniform(0.1, 0.9, size=(3,)),)),
    ("logit_eps", lambda a: a.logit(0.05), (R.uniform(0.1, 0.9, size=(3,)),)),
    ("xlogy", lambda a, b: ew.xlogy(a, b), (any_(2, 3), pos(3))),
    ("xlogy_numbers", lambda a, b: ew.xlogy(2.0, b) * ew.xlogy(a, 0.5), (any_(3), pos(3))),
    ("xlog1py", lambda a, b: ew.xlog1py(a, b), (any_(2, 3), pos(3))),
    ("logaddexp", lambda a, b: a.logaddexp(b), (any_(2, 3), any_(3))),
    ("logaddexp2", lambda a, b: a.logaddexp2(b), (any_(2, 3), any_(3))),
    ("hypot", lambda a, b: a.hypot(b), (any_(2, 3), any_(3))),
    ("copysign", lambda a, b: a.copysign(b) * a, (away(3), away(3))),
    ("nan_to_num", lambda a: (a * a).nan_to_num(), (any_(3),)),
]




@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


THIRD = ["tanh", "sigmoid", "softplus", "gelu", "gelu_tanh", "elu", "logsigmoid", "silu", "sin", "logit", "sinc",
         "logaddexp", "hypot"]


@pytest.mark.parametrize("name", THIRD)
def test_third_derivative_matches_finite_differences(name):
    """Differentiating twice with create_graph runs the *BackwardBackward rows' formulas on tensors."""
    _, fn, arrays = next(s for s in SECOND if s[0] == name)
    gradcheck(first_derivative(first_derivative(fn)), *arrays, atol=1e-3, rtol=1e-3)


# ------------------------------------------------------------------------------------------ forward kernels

def test_floor_division_and_remainder_follow_pythons_signs():
    a = np.array([-3.0, 3.0, -0.0, 5.5, -7.5, 7.0], dtype=np.float32)
    b = np.float32(-3)
    assert ew.div_floor_array(a, b).tolist() == [1.0, -1.0, 0.0, -2.0, 2.0, -3.0]
    assert np.signbit(ew.div_floor_array(np.float32([0.0]), b)).tolist() == [True]
    assert ew.remainder_array(a, np.float32(3)).tolist() == [-0.0, 0.0, -0.0, 2.5, 1.5, 1.0]
    assert np.signbit(ew.remainder_array(a, np.float32(3)))[:3].tolist() == [True, False, True]
    i = np.array([7, -7, 7, -7])
    j = np.array([2, 2, -2, -2])
    assert ew.div_floor_array(i, j).tolist() == [3, -4, -4, 3]
    assert ew.remainder_array(i, j).tolist() == [1, 1, -1, -1]


def test_sign_is_zero_at_nan_and_negative_zero():
    out = ew.sign_array(np.array([np.nan, -0.0, 0.0, -2.0, 3.0], dtype=np.float32))
    assert out.tolist() == [0.0, 0.0, 0.0, -1.0, 1.0]
    assert not np.signbit(out[1])


def test_relu_and_clamp_keep_negative_zero_and_nan():
    x = tensor([-0.0, float("nan"), -1.0, 2.0])
    for out in (x.relu(), x.clamp(min=0), x.clamp(0, 1)):
        assert np.signbit(out._a[0]) and np.isnan(out._a[1])


def test_maximum_returns_first_operand_on_ties_and_propagates_nan():
    a, b = tensor([-0.0, 0.0, 1.0]), tensor([0.0, -0.0, float("nan")])
    out = a.maximum(b)._a
    assert np.signbit(out[0]) and not np.signbit(out[1]) and np.isnan(out[2])
    assert np.signbit(a.minimum(b)._a[0])


def test_float32_stays_float32():
    x = tensor([0.5, -1.5])
    for out in (x.sin(), x.exp2(), x.sigmoid(), F["gelu"](x), F["softplus"](x), F["elu"](x), x.lerp(x * 2, 0.3),
                x % 0.7, x // 0.7, x.clamp(0, 1), F["logsigmoid"](x), F["silu"](x), x.round(decimals=1)):
        assert out._a.dtype == np.float32


def test_integer_inputs_promote_where_pytorch_does():
    i = tensor([3, -7, 2])
    assert i.sin().dtype.np == np.float32 and i.sigmoid().dtype.np == np.float32
    assert i.abs()._a.dtype == np.int64 and i.relu()._a.dtype == np.int64 and i.floor()._a.dtype == np.int64
    assert i.clamp(0.5, 1)._a.dtype == np.float32 and i.clamp(0, 1)._a.dtype == np.int64
    assert tensor([True, False]).square()._a.tolist() == [1, 0]


# ------------------------------------------------------------------------------------------ errors

PRE = ("import torch\nimport torch.nn.functional as F\nx = torch.tensor([0.3, -0.7, 1.2], requires_grad=True)\n"
       "v = torch.tensor([0.5, 0.2, -0.4], requires_grad=True)\ni = torch.tensor([3, -7, 2])\n"
       "b = torch.tensor([True, False, True])\n")

ERRORS = [
    ("b.abs()", "NotImplementedError: \"abs_cpu\" not implemented for 'Bool'"),
    ("b.relu()", "RuntimeError: Boolean inputs not supported for relu"),
    ("b.floor()", "NotImplementedError: \"floor_vml_cpu\" not implemented for 'Bool'"),
    ("b.round()", "NotImplementedError: \"round_vml_cpu\" not implemented for 'Bool'"),
    ("i.round(decimals=1)", "NotImplementedError: \"round_cpu\" not implemented for 'Long'"),
    ("x.round(decimals=2.5)", "TypeError: round(): argument 'decimals' must be int, not float"),
    ("i.frac()", "NotImplementedError: \"frac_cpu\" not implemented for 'Long'"),
    ("x.clamp()", "RuntimeError: torch.clamp: At least one of 'min' or 'max' must not be None"),
    ("torch.clamp(x, min=None, max=None)",
     "RuntimeError: torch.clamp: At least one of 'min' or 'max' must not be None"),
    ("x.clamp(min=torch.ones(2))",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("torch.maximum(x, 2)", "TypeError: maximum(): argument 'other' (position 2) must be Tensor, not int"),
    ("x.minimum(2.5)", "TypeError: minimum(): argument 'other' (position 1) must be Tensor, not float"),
    ("torch.atan2(x, 2)", "TypeError: atan2(): argument 'other' (position 2) must be Tensor, not int"),
    ("torch.logical_or(x, 0)", "TypeError: logical_or(): argument 'other' (position 2) must be Tensor, not int"),
    ("x.logical_and(1)", "TypeError: logical_and(): argument 'other' (position 1) must be Tensor, not int"),
    ("torch.abs(2)", "TypeError: abs(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.where(i, x, v)",
     "RuntimeError: where expected condition to be a boolean tensor, but got a tensor with dtype Long"),
    ("torch.where(b, x, torch.ones(2))",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("torch.lerp(i, i, 0.5)", "NotImplementedError: \"lerp_kernel_scalar\" not implemented for 'Long'"),
    ("torch.lerp(i, i, i)", "NotImplementedError: \"lerp_kernel_tensor\" not implemented for 'Long'"),
    ("torch.lerp(x, i, 0.5)", "RuntimeError: expected dtype float for `end` but got dtype long int"),
    ("x.lerp(v, torch.ones(3, dtype=torch.float64))",
     "RuntimeError: expected dtype float for `weight` but got dtype double"),
    ("torch.addcmul(x, v)", "TypeError: addcmul() received an invalid combination of arguments - got (Tensor, "
     "Tensor), but expected (Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None)"),
    ("torch.addcmul(1.0, x, v)", "TypeError: addcmul(): argument 'input' (position 1) must be Tensor, not float"),
    ("x.addcmul(v, 2)", "TypeError: addcmul(): argument 'tensor2' (position 2) must be Tensor, not int"),
    ("torch.addcdiv(x, v, 2)", "TypeError: addcdiv(): argument 'tensor2' (position 3) must be Tensor, not int"),
    ("torch.addcmul(x, v, x, value='s')", "TypeError: addcmul(): argument 'value' must be Number, not str"),
    ("torch.addcmul(x, v, x, 0.5)", "TypeError: addcmul() takes 3 positional arguments but 4 were given"),
    ("x.addcdiv_(v, x, 0.5)", "TypeError: addcdiv_() takes 2 positional arguments but 3 were given"),
    ("x.addcmul(v)", "TypeError: addcmul() received an invalid combination of arguments - got (Tensor), but "
     "expected (Tensor tensor1, Tensor tensor2, *, Number value = 1)"),
    ("torch.addcmul(x, torch.ones(2), x)",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("i.addcmul_(x, v)", "RuntimeError: result type Float can't be cast to the desired output type Long"),
    ("torch.addcdiv(x, i, i)", "RuntimeError: Integer division with addcdiv is no longer supported, and in a future  "
     "release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
     "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
     "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
     "implementation: (input + value * tensor1 / tensor2), for all dtypes."),
    ("i // torch.tensor([1, 0, 2])", "RuntimeError: ZeroDivisionError"),
    ("7 % torch.tensor([1, 0, 2])", "RuntimeError: ZeroDivisionError"),
    ("b // b", "NotImplementedError: \"div_floor_cpu\" not implemented for 'Bool'"),
    ("b % b", "NotImplementedError: \"remainder_cpu\" not implemented for 'Bool'"),
    ("(x // 2).sum().backward()", "RuntimeError: derivative for aten::floor_divide is not implemented"),
    ("(2 % x).sum().backward()", "RuntimeError: derivative for aten::remainder is not implemented"),
    ("y = x * 1\ny //= 2\ny.sum().backward()", "RuntimeError: derivative for aten::floor_divide_ is not implemented"),
    ("F.softplus(i)", "NotImplementedError: \"softplus_cpu\" not implemented for 'Long'"),
    ("F.gelu(i)", "NotImplementedError: \"GeluKernelImpl\" not implemented for 'Long'"),
    ("F.gelu(x, approximate='foo')", "RuntimeError: approximate argument must be either none or tanh."),
    ("F.gelu(x, 'tanh')", "TypeError: gelu() takes 1 positional argument but 2 were given"),
    ("F.leaky_relu(i)", "NotImplementedError: \"leaky_relu_cpu\" not implemented for 'Long'"),
    ("F.elu(b)", "NotImplementedError: \"elu_cpu\" not implemented for 'Bool'"),
    ("F.silu(i)", "NotImplementedError: \"silu_cpu\" not implemented for 'Long'"),
    ("F.logsigmoid(i)", "NotImplementedError: \"log_sigmoid_cpu\" not implemented for 'Long'"),
    ("F.logsigmoid(2.0)", "TypeError: log_sigmoid(): argument 'input' (position 1) must be Tensor, not float"),
    ("F.relu(2.0)", "TypeError: relu(): argument 'input' (position 1) must be Tensor, not float"),
    ("F.sigmoid(2.0)", "AttributeError: 'float' object has no attribute 'sigmoid'"),
    ("F.hardtanh(b)", "RuntimeError: Bool inputs not supported for hardtanh"),
    ("F.hardtanh(torch.tensor([1, 2], dtype=torch.uint8))",
     "RuntimeError: cannot do hardtanh on an unsigned type with negative limits"),
    ("F.hardtanh(x, 1, 0)", "ValueError: min_val cannot be greater than max_val"),
    ("F.leaky_relu(x, None)",
     "TypeError: leaky_relu(): argument 'negative_slope' (position 2) must be Number, not NoneType"),
    ("F.leaky_relu(x, 0.1, True)",
     "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."),
    ("x.relu_()", "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."),
    ("x.copy_(v)", "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."),
    ("torch.ones(3).copy_(torch.ones(2))",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("torch.ones(3).copy_(torch.ones(2, 3))",
     "RuntimeError: output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ("torch.ones(3).copy_('a')", "TypeError: copy_(): argument 'other' (position 1) must be Tensor, not str"),
    ("i.clone().clamp_(0.5, 1)", "RuntimeError: result type Float can't be cast to the desired output type long int"),
    ("y = x * 1\nF.leaky_relu_(y, -0.5)\ny.sum().backward()",
     "RuntimeError: In-place leakyReLu backward calculation is triggered with a negative slope which is not "
     "supported. This is caused by calling in-place forward function with a negative slope, please call "
     "out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require "
     "supporting in-place leakRelu backward calculation with negative slope"),
    ("y = x * 1\nF.elu_(y, -0.5)\ny.sum().backward()",
     "RuntimeError: In-place elu backward calculation is triggered with a negative slope which is not supported. "
     "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
     "version instead."),
    ("y = x.sigmoid()\ny.sum().backward()\ny.sum().backward()",
     "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after "
     "they have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
     "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
     "if you need to access saved tensors after calling backward."),
    ("y = x * 1\nz = y.sin()\ny.add_(1)\nz.sum().backward()",
     "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 "
     "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
     "torch.autograd.set_detect_anomaly(True, check_nan=False)."),
    ("~torch.ones(2)", "TypeError: ~ (operator.invert) is only implemented on integer and Boolean-type tensors"),
    ("torch.ones(2) & torch.ones(2)", "NotImplementedError: \"bitwise_and_cpu\" not implemented for 'Float'"),
]


@pytest.mark.parametrize("code, expected", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_are_pytorchs(code, expected):
    assert error_line(PRE + code + "\n") == expected


def test_saves_no_tensors_so_a_second_backward_works():
    """Nodes that keep only numbers (floor, lerp with a number weight, copy_) can be traversed again."""
    result = run_script(PRE + "y = x.floor() + x.lerp(v, 0.3) + torch.zeros(3).copy_(x) + x % 2\n"
                              "y.sum().backward()\ny.sum().backward()\nprint(x.grad, v.grad)\n")
    assert result.error is None
    assert result.out == "tensor([5.4000, 5.4000, 5.4000]) tensor([0.6000, 0.6000, 0.6000])\n"
