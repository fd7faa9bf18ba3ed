"""Gradient checks of the fractional max pooling rows (finite differences in float64, with fixed random
samples; tests/test_forward_rows.py checks their tangents from the same cases), their second derivatives
through the backward kernels' rows, and the window starts against PyTorch's interval formula."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import fractional_pool as fp
from gradcli.engine.tensor import Tensor
from test_gradcheck import _gradcheck_row, any_, check_node_recorded, check_rows, first_derivative, gradcheck, row_params


def _samples(*shape):
    return Tensor(np.random.RandomState(5).uniform(size=shape))


S2, S2U, S3 = _samples(2, 3, 2), _samples(1, 3, 2), _samples(1, 2, 3)


def _indices(fn, shape):
    return fn(Tensor(np.random.RandomState(3).standard_normal(shape)))[1]


IDX2 = _indices(lambda x: fp.fractional_max_pool2d(x, 2, (3, 4), return_indices=True, _random_samples=S2),
                (2, 3, 5, 6))
IDX3 = _indices(lambda x: fp.fractional_max_pool3d(x, 2, (2, 3, 2), return_indices=True, _random_samples=S3),
                (1, 2, 4, 5, 4))


def _back2(g, x):
    return fp.fractional_backward(g, x, IDX2, fp.FRACTIONAL_BACKWARD2D)


def _back3(g, x):
    return fp.fractional_backward(g, x, IDX3, fp.FRACTIONAL_BACKWARD3D)


# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    fp.FRACTIONAL_MAX_POOL2D: [
        (lambda x: fp.fractional_max_pool2d(x, 2, (3, 4), _random_samples=S2), (any_(2, 3, 5, 6),)),
        (lambda x: fp.fractional_max_pool2d(x, (3, 2), output_ratio=(0.5, 0.6), _random_samples=S2U),
         (any_(3, 8, 7),))],
    fp.FRACTIONAL_MAX_POOL3D: [
        (lambda x: fp.fractional_max_pool3d(x, 2, (2, 3, 2), _random_samples=S3), (any_(1, 2, 4, 5, 4),)),
        (lambda x: fp.fractional_max_pool3d(x, (1, 2, 3), 2, _random_samples=S3), (any_(2, 3, 4, 5),))],
    fp.FRACTIONAL_BACKWARD2D: [(_back2, (any_(2, 3, 3, 4), any_(2, 3, 5, 6)))],
    fp.FRACTIONAL_BACKWARD3D: [(_back3, (any_(1, 2, 2, 3, 2), any_(1, 2, 4, 5, 4)))],
}


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


SECOND = [
    ("fractional_max_pool2d", lambda x: fp.fractional_max_pool2d(x, 2, (3, 4), _random_samples=S2U), (any_(3, 5, 6),)),
    ("fractional_max_pool3d", lambda x: fp.fractional_max_pool3d(x, 2, (2, 3, 2), _random_samples=S3),
     (any_(1, 2, 4, 5, 4),)),
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def _reference_starts(u, size: int, out: int, k: int, dtype) -> list:
    """generate_intervals written as PyTorch's C++ loop, one element at a time."""
    t = np.dtype(dtype).type
    if out == 0:
        return []
    seq = [0] * out
    if out > 1:
        alpha = t(t(size - k) / t(out - 1))
        for i in range(out - 1):
            seq[i] = int((t(i) + t(u)) * alpha) - int(t(u) * alpha)
    seq[-1] = size - k
    return seq


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_window_starts_follow_the_interval_formula(dtype):
    rs = np.random.RandomState(0)
    for _ in range(200):
        size = int(rs.randint(2, 400))
        k = int(rs.randint(1, size + 1))
        out = int(rs.randint(0, size - k + 2))
        u = rs.uniform(size=4).astype(dtype)
        got = fp._starts(u, size, out, k)
        for row, v in zip(got, u):
            assert row.tolist() == _reference_starts(v, size, out, k, dtype), (size, k, out, v)
