"""Gradient checks of the complex rows (gradcli.engine.ops.complexops) by tests/test_gradcheck.py's finite
differences; their tangents are checked from the same cases by tests/test_forward_rows.py.

The checks run on real float64 leaves: torch.complex(re, im) makes the complex inputs, view_as_real (or a real
result) the real outputs. The gradient reaching `re` and `im` is then the real and imaginary part of the complex
input's gradient, so central differences in `re` and `im` check PyTorch's convention itself: for a real loss L of
z = x + iy, z.grad = dL/dx + i dL/dy (the conjugate Wirtinger derivative, times 2).
"""

from __future__ import annotations

from gradcli.engine.ops import complexops as cx
from gradcli.engine.ops.arith import add, div, mul, power
from gradcli.engine.ops.indexing import select
from test_gradcheck import any_, pos, row_tests


def _z(re, im):
    return cx.complex_(re, im)


def _out(z):
    """A complex result as the real tensor finite differences can read."""
    return cx.view_as_real(z)


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    cx.COMPLEX: [(lambda re, im: _out(_z(re, im) * _z(im, re)), (any_(3), any_(3)))],
    cx.VIEW_AS_REAL: [(lambda re, im: cx.view_as_real(_z(re, im)) * 2, (any_(2, 3), any_(2, 3)))],
    cx.VIEW_AS_CPLX: [(lambda x: _out(cx.view_as_complex(x * 1) * _z(x[:, 0], x[:, 1])), (any_(3, 2),))],
    cx.CONJ: [(lambda re, im: cx.real(cx.conj(_z(re, im)) * _z(re, im * re)), (any_(3), any_(3)))],
    cx.CONJ_PHYS: [(lambda re, im: _out(cx.conj_physical(_z(re, im)) * _z(im, re)), (any_(3), any_(3)))],
    cx.NEG_VIEW: [(lambda re, im: cx.imag(cx.conj(_z(re, im) * _z(im, re))), (any_(3), any_(3)))],
    cx.ABS: [(lambda re, im: cx.abs_(_z(re, im)), (pos(4), any_(4)))],
    cx.ANGLE: [(lambda re, im: cx.angle(_z(re, im)), (pos(4), any_(4)))],
    cx.POLAR: [(lambda r, t: _out(cx.polar(r, t)), (pos(4), any_(4)))],
    cx.MUL: [(lambda a, b, c, d: _out(mul(_z(a, b), _z(c, d))), (any_(3), any_(3), any_(3), any_(3))),
             (lambda a, b, x: _out(mul(_z(a, b), x)), (any_(3), any_(3), any_(2, 3))),
             (lambda a, b: _out(mul(_z(a, b), 1.5 - 2j)), (any_(3), any_(3)))],
    cx.DIV: [(lambda a, b, c, d: _out(div(_z(a, b), _z(c, d))), (any_(3), any_(3), pos(3), pos(3))),
             (lambda x, c, d: _out(div(x, _z(c, d))), (any_(3), pos(3), any_(3)))],
    cx.RECIPROCAL: [(lambda a, b: _out(cx.reciprocal(_z(a, b))), (pos(3), any_(3)))],
    cx.EXP: [(lambda a, b: _out(cx.exp(_z(a, b))), (any_(3), any_(3)))],
    cx.LOG: [(lambda a, b: _out(cx.log(_z(a, b))), (pos(3), any_(3)))],
    cx.SQRT: [(lambda a, b: _out(cx.sqrt(_z(a, b))), (pos(3), any_(3)))],
    cx.POW: [(lambda a, b: _out(power(_z(a, b), 3)), (any_(3), any_(3))),
             (lambda a, b: _out(power(_z(a, b), 0.5)), (pos(3), any_(3))),
             (lambda a, b: _out(power(_z(a, b), -1.5)), (pos(3), any_(3)))],
    cx.MM: [(lambda a, b, c, d: _out(cx.mm(_z(a, b), _z(c, d))), (any_(2, 3), any_(2, 3), any_(3, 2), any_(3, 2)))],
    cx.DOT: [(lambda a, b, c, d: _out(cx.dot(_z(a, b), _z(c, d))), (any_(3), any_(3), any_(3), any_(3)))],
    cx.VDOT: [(lambda a, b, c, d: _out(cx.vdot(_z(a, b), _z(c, d))), (any_(3), any_(3), any_(3), any_(3)))],
}

# (add and select carry complex values through their real rows: checked here too, as complex inputs meet them)
CARRIED_CHECKS = [
    (lambda a, b, x: _out(add(_z(a, b), x)), (any_(3), any_(3), any_(3))),
    (lambda a, b: select(cx.view_as_real(_z(a, b)), -1, 1), (any_(2, 3), any_(2, 3))),
]


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


def test_carried_rows_match_finite_differences():
    from test_gradcheck import gradcheck
    for fn, arrays in CARRIED_CHECKS:
        gradcheck(fn, *arrays)
