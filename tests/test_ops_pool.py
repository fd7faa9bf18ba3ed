"""Gradient checks of the pooling rows (finite differences in float64, several kernels, strides, paddings,
dilations and ceil modes; tests/test_forward_rows.py checks their tangents from the same cases), and their
second derivatives through the backward kernels' own rows."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import pool
from gradcli.engine.tensor import Tensor
from test_gradcheck import _gradcheck_row, any_, check_node_recorded, check_rows, first_derivative, gradcheck, row_params


def _indices(fn, shape):
    """The indices a max pooling picks on fixed input, for the backward rows' checks."""
    return fn(Tensor(np.random.RandomState(3).standard_normal(shape)))[1]


MAX_IDX = _indices(lambda x: pool.max_pool2d(x, 2, 1, 1, return_indices=True), (2, 2, 4, 4))
AMAX_IDX = _indices(lambda x: pool.adaptive_max_pool2d(x, (2, 3), return_indices=True), (2, 5, 4))


def _max_back(g, x):
    return pool.max_pool_backward(g, x, MAX_IDX, pool.MAX_POOL_BACKWARD)


def _amax_back(g, x):
    return pool.max_pool_backward(g, x, AMAX_IDX, pool.ADAPTIVE_MAX_BACKWARD)


def _avg_back(g, x):
    return pool.avg_pool_backward(g, x, ((3, 2), (2, 1), (1, 1)), True, False, None, ((3, 2), (2, 1), (1, 1)))


def _aavg_back(g, x):
    return pool.adaptive_avg_backward(g, x)


MAX3_IDX = _indices(lambda x: pool.max_pool3d(x, 2, 1, 1, return_indices=True), (2, 3, 4, 4))
AMAX3_IDX = _indices(lambda x: pool.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True), (1, 2, 4, 5, 3))


def _max3_back(g, x):
    return pool.max_pool_backward(g, x, MAX3_IDX, pool.MAX_POOL3D_BACKWARD)


def _amax3_back(g, x):
    return pool.max_pool_backward(g, x, AMAX3_IDX, pool.ADAPTIVE_MAX3D_BACKWARD)


def _avg3_back(g, x):
    params = ((3, 2, 2), (2, 1, 2), (1, 1, 0))
    return pool.avg_pool_backward(g, x, params, True, False, None, params)


def _aavg3_back(g, x):
    return pool.adaptive_avg_backward(g, x, 3)


# (indices of windows that do not overlap: where two outputs share an index, unpooling keeps one value and
# finite differences see no derivative for the other, while the row, as PyTorch's, gathers for both)
UNPOOL_IDX = _indices(lambda x: pool.max_pool2d(x, 2, return_indices=True), (2, 3, 5, 4))
UNPOOL1_IDX = _indices(lambda x: pool.max_pool1d(x, 2, 3, return_indices=True), (3, 9))
UNPOOL3_IDX = _indices(lambda x: pool.max_pool3d(x, 2, return_indices=True), (1, 2, 4, 4, 4))


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    pool.MAX_POOL2D: [(lambda x: pool.max_pool2d(x, 2), (any_(2, 3, 4, 4),)),
                      (lambda x: pool.max_pool2d(x, (3, 2), (2, 1), (1, 1), ceil_mode=True), (any_(3, 5, 4),)),
                      (lambda x: pool.max_pool2d(x, 2, 1, 1, dilation=2), (any_(1, 2, 5, 5),)),
                      (lambda x: pool.max_pool1d(x, 3, 2, 1, ceil_mode=True), (any_(2, 3, 7),)),
                      (lambda x: pool.max_pool1d(x, 2), (any_(3, 6),))],
    pool.AVG_POOL2D: [(lambda x: pool.avg_pool2d(x, 2), (any_(2, 3, 4, 4),)),
                      (lambda x: pool.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                       (any_(2, 5, 6),)),
                      (lambda x: pool.avg_pool2d(x, (2, 3), 1, (1, 0), divisor_override=4), (any_(1, 2, 4, 5),)),
                      (lambda x: pool.avg_pool1d(x, 3, 2, 1, ceil_mode=True), (any_(2, 3, 8),))],
    pool.ADAPTIVE_AVG: [(lambda x: pool.adaptive_avg_pool2d(x, (3, 2)), (any_(2, 3, 5, 7),)),
                        (lambda x: pool.adaptive_avg_pool2d(x, (4, None)), (any_(2, 3, 3),)),
                        (lambda x: pool.adaptive_avg_pool1d(x, 4), (any_(2, 3, 7),))],
    pool.ADAPTIVE_MAX: [(lambda x: pool.adaptive_max_pool2d(x, (3, 2)), (any_(2, 3, 5, 7),)),
                        (lambda x: pool.adaptive_max_pool2d(x, 4), (any_(2, 3, 3),)),
                        (lambda x: pool.adaptive_max_pool1d(x, 3), (any_(2, 7),))],
    pool.MAX_POOL_BACKWARD: [(_max_back, (any_(2, 2, 5, 5), any_(2, 2, 4, 4)))],
    pool.ADAPTIVE_MAX_BACKWARD: [(_amax_back, (any_(2, 2, 3), any_(2, 5, 4)))],
    pool.AVG_POOL_BACKWARD: [(_avg_back, (any_(2, 3, 7), any_(2, 5, 6)))],
    pool.ADAPTIVE_AVG_BACKWARD: [(_aavg_back, (any_(2, 3, 2), any_(2, 5, 3)))],
    pool.MAX_POOL3D: [(lambda x: pool.max_pool3d(x, 2), (any_(1, 2, 4, 4, 4),)),
                      (lambda x: pool.max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 1, 0), ceil_mode=True),
                       (any_(2, 5, 4, 3),)),
                      (lambda x: pool.max_pool3d(x, 2, 1, 1, dilation=(1, 2, 2)), (any_(1, 2, 3, 5, 5),))],
    pool.AVG_POOL3D: [(lambda x: pool.avg_pool3d(x, 2), (any_(1, 2, 4, 4, 4),)),
                      (lambda x: pool.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                       (any_(2, 5, 4, 5),)),
                      (lambda x: pool.avg_pool3d(x, (2, 3, 2), 1, (1, 1, 0), divisor_override=4),
                       (any_(1, 2, 3, 4, 5),))],
    pool.ADAPTIVE_AVG3D: [(lambda x: pool.adaptive_avg_pool3d(x, (3, 2, 4)), (any_(1, 2, 5, 4, 7),)),
                          (lambda x: pool.adaptive_avg_pool3d(x, (2, None, 3)), (any_(2, 3, 3, 4),))],
    pool.ADAPTIVE_MAX3D: [(lambda x: pool.adaptive_max_pool3d(x, (3, 2, 4)), (any_(1, 2, 5, 4, 7),)),
                          (lambda x: pool.adaptive_max_pool3d(x, 2), (any_(2, 3, 3, 4),))],
    pool.MAX_POOL3D_BACKWARD: [(_max3_back, (any_(2, 4, 5, 5), any_(2, 3, 4, 4)))],
    pool.ADAPTIVE_MAX3D_BACKWARD: [(_amax3_back, (any_(1, 2, 2, 3, 2), any_(1, 2, 4, 5, 3)))],
    pool.AVG_POOL3D_BACKWARD: [(_avg3_back, (any_(2, 3, 5, 2), any_(2, 5, 4, 3)))],
    pool.ADAPTIVE_AVG3D_BACKWARD: [(_aavg3_back, (any_(2, 2, 3, 2), any_(2, 5, 4, 3)))],
    pool.MAX_UNPOOL2D: [(lambda v: pool.max_unpool2d(v, UNPOOL_IDX, 2, output_size=(5, 4)), (any_(2, 3, 2, 2),)),
                        (lambda v: pool.max_unpool1d(v, UNPOOL1_IDX, 2, 3), (any_(3, 3),))],
    pool.MAX_UNPOOL3D: [(lambda v: pool.max_unpool3d(v, UNPOOL3_IDX, 2), (any_(1, 2, 2, 2, 2),))],
}


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


# The create_graph gradient of sum(pool(x)^2) checked against finite differences: the backward kernels'
# own rows (MaxPool2DWithIndicesBackwardBackward0, ...) carry the second derivative.
SECOND = [
    ("max_pool2d", lambda x: pool.max_pool2d(x, 2, 1, 1), (any_(2, 4, 4),)),
    ("avg_pool2d", lambda x: pool.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (any_(2, 5, 5),)),
    ("adaptive_avg_pool2d", lambda x: pool.adaptive_avg_pool2d(x, (2, 3)), (any_(2, 5, 4),)),
    ("adaptive_max_pool2d", lambda x: pool.adaptive_max_pool2d(x, (2, 3)), (any_(2, 5, 4),)),
    ("max_pool1d", lambda x: pool.max_pool1d(x, 3, 1, 1), (any_(2, 6),)),
    ("max_pool3d", lambda x: pool.max_pool3d(x, 2, 1, 1), (any_(2, 3, 4, 3),)),
    ("avg_pool3d", lambda x: pool.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (any_(2, 4, 5, 4),)),
    ("adaptive_avg_pool3d", lambda x: pool.adaptive_avg_pool3d(x, (2, 3, 2)), (any_(2, 5, 4, 3),)),
    ("adaptive_max_pool3d", lambda x: pool.adaptive_max_pool3d(x, (2, 3, 2)), (any_(2, 5, 4, 3),)),
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("source, expected", [
    # dilation 2 over a one-row input padded by 1: each window's two rows (-1 and 1) both miss the input
    ("x = torch.tensor([[[[0., -1., 0., -2.]]]])\n"
     "print(F.max_pool2d(x, 2, stride=1, padding=1, dilation=(2, 1), return_indices=True))",
     "(tensor([[[[-inf, -inf, -inf, -inf, -inf]]]]), tensor([[[[4, 4, 5, 6, 7]]]]))\n"),
    ("x = torch.tensor([-1, 2, 1, 2, -1, 0, -3]).reshape(1, 1, 7, 1)\n"
     "print(F.max_pool2d(x, (1, 2), stride=(2, 2), padding=(0, 1), dilation=(1, 2), return_indices=True)[1].tolist())",
     "[[[[1], [3], [5], [7]]]]\n"),
])
def test_a_window_with_nothing_inside_keeps_its_first_position_at_or_past_zero(source, expected):
    """PyTorch's kernel starts each window at its first row and column at or past 0 (stepping by the
    dilation) with the lowest value; when no element of the window lies inside the input, that position
    is the index it returns (values from PyTorch 2.13)."""
    from conftest import gradcli_output
    assert gradcli_output("import torch\nimport torch.nn.functional as F\n" + source) == expected


# lp_pool1d/2d/3d add no rows (PyTorch composes them of pow, avg_pool, sign, relu, abs and mul): their
# gradients through that composition, away from zero sums (where the p-th root is not differentiable)
LP = [
    ("lp_pool1d", lambda x: pool.lp_pool1d(x.abs() + 0.5, 2.5, 3, 2), (any_(2, 3, 9),)),
    ("lp_pool2d", lambda x: pool.lp_pool2d(x.abs() + 0.5, 3, (2, 3), 1, True), (any_(2, 5, 6),)),
    ("lp_pool3d", lambda x: pool.lp_pool3d(x.abs() + 0.5, 2, 2, ceil_mode=True), (any_(1, 2, 3, 5, 4),)),
    ("lp_pool2d_inf", lambda x: pool.lp_pool2d(x, float("inf"), 2), (any_(2, 4, 4),)),
]


@pytest.mark.parametrize("name, fn, arrays", LP, ids=[c[0] for c in LP])
def test_lp_pool_gradient_matches_finite_differences(name, fn, arrays):
    gradcheck(fn, *arrays)
