"""F.unfold and F.fold (gradcli.engine.ops.fold): each row's backward against finite differences, second
derivatives, and the identities that hold whatever the input (tests/engine_cases/im2col.txt compares them with
PyTorch, messages included)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import fold
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, any_, check_node_recorded, check_rows, first_derivative, gradcheck, row_params

F = TORCH.members["nn"].members["functional"].members

CHECKS = {
    fold.IM2COL: [(lambda a: F["unfold"](a, 2), (any_(1, 2, 3, 3),)),
                  (lambda a: F["unfold"](a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (any_(2, 1, 4, 5),)),
                  (lambda a: F["unfold"](a, 2, stride=2), (any_(2, 4, 4),))],
    fold.COL2IM: [(lambda a: F["fold"](a, 3, 2), (any_(1, 4, 4),)),
                  (lambda a: F["fold"](a, (4, 5), (2, 3), padding=1, stride=(2, 1)), (any_(1, 6, 15),)),
                  (lambda a: F["fold"](a, 4, 2, dilation=2), (any_(8, 4),))],
}

SECOND = [
    ("unfold", lambda a: F["unfold"](a, 2) * F["unfold"](a, 2), (any_(1, 1, 3, 3),)),
    ("fold", lambda a: F["fold"](a * a, 3, 2), (any_(1, 4, 4),)),
]


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("k, d, p, s", [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (1, 2), (1, 0), (2, 1)),
                                        ((1, 1), (1, 1), (2, 2), (3, 3))])
def test_fold_of_unfold_counts_each_pixel_once_per_window_holding_it(k, d, p, s):
    x = np.random.RandomState(3).randn(2, 3, 6, 7)
    cols = fold.im2col_array(x, k, d, p, s)
    ones = fold.im2col_array(np.ones_like(x), k, d, p, s)
    back = fold.col2im_array(cols, (6, 7), k, d, p, s)
    counts = fold.col2im_array(ones, (6, 7), k, d, p, s)
    assert np.allclose(back, x * counts)


def test_unfold_is_the_im2col_a_convolution_multiplies():
    rng = np.random.RandomState(4)
    x, w = rng.randn(2, 3, 5, 5), rng.randn(4, 3, 3, 3)
    cols = fold.im2col_array(x, (3, 3), (1, 1), (1, 1), (1, 1))
    out = (w.reshape(4, -1) @ cols).reshape(2, 4, 5, 5)
    conv = TORCH.members["conv2d"](Tensor(x), Tensor(w), padding=1)._a
    assert np.allclose(out, conv)
