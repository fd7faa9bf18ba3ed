"""F.pad's reflect, replicate and circular modes: gradient checks of their rows (and, through
tests/test_forward_rows.py, their tangents), the create_graph rows, and the gradient's summation order."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import padding
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _leaf, any_, first_derivative, gradcheck, recorded_names

F = TORCH.members["nn"].members["functional"].members


def _pad(pad, mode):
    return lambda x: F["pad"](x, pad, mode=mode)


def _backward(pad, mode):
    """The create_graph row itself, as a function of (grad_output, self)."""
    return lambda g, x: padding.pad_backward(g, x, pad, mode)


# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    padding.REFLECTION_PAD1D: [(_pad((2, 1), "reflect"), (any_(2, 4),)), (_pad((-1, 3), "reflect"), (any_(1, 2, 5),))],
    padding.REFLECTION_PAD2D: [(_pad((2, 1, 1, 2), "reflect"), (any_(1, 2, 3, 4),))],
    padding.REFLECTION_PAD3D: [(_pad((1, 0, 1, 1, 0, 1), "reflect"), (any_(1, 2, 2, 3),))],
    padding.REPLICATION_PAD1D: [(_pad((3, 1), "replicate"), (any_(2, 2, 3),))],
    padding.REPLICATION_PAD2D: [(_pad((2, 2, 0, 3), "replicate"), (any_(2, 3, 2),)),
                                (_pad((-1, 2, 1, -1), "replicate"), (any_(1, 1, 3, 4),))],
    padding.REPLICATION_PAD3D: [(_pad((1, 1, 2, 0, 1, 1), "replicate"), (any_(1, 1, 2, 2, 2),))],
    padding.REFLECTION_PAD1D_BACKWARD: [(_backward((2, 1), "reflect"), (any_(2, 7), any_(2, 4)))],
    padding.REFLECTION_PAD2D_BACKWARD: [(_backward((1, 1, 2, 0), "reflect"), (any_(1, 5, 5), any_(1, 3, 3)))],
    padding.REFLECTION_PAD3D_BACKWARD: [(_backward((1, 0, 0, 1, 1, 1), "reflect"), (any_(1, 4, 3, 3), any_(1, 2, 2, 2)))],
    padding.REPLICATION_PAD1D_BACKWARD: [(_backward((3, 1), "replicate"), (any_(1, 1, 6), any_(1, 1, 2)))],
    padding.REPLICATION_PAD2D_BACKWARD: [(_backward((0, 2, 1, 1), "replicate"), (any_(2, 4, 4), any_(2, 2, 2)))],
    padding.REPLICATION_PAD3D_BACKWARD: [(_backward((1, 1, 1, 1, 1, 1), "replicate"),
                                         (any_(1, 1, 3, 3, 4), any_(1, 1, 1, 1, 2)))],
}


@pytest.mark.parametrize("case", [c for cases in CHECKS.values() for c in cases])
def test_backward_matches_finite_differences(case):
    fn, arrays = case
    gradcheck(fn, *arrays)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    fn, arrays = CHECKS[row][0]
    assert row.node in recorded_names(fn(*[_leaf(a) for a in arrays]))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_circular_and_the_others_against_numpy_pad(mode):
    x = np.arange(60.0).reshape(1, 3, 4, 5)
    numpy_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    want = np.pad(x, ((0, 0), (0, 0), (1, 3), (2, 1)), mode=numpy_mode)
    assert np.array_equal(F["pad"](Tensor(x), (2, 1, 1, 3), mode=mode)._a, want)


def test_circular_gradient_and_second_derivative():
    gradcheck(_pad((1, 2, 2, 0), "circular"), any_(1, 2, 3, 3))
    gradcheck(first_derivative(lambda x: F["pad"](x, (2, 1), mode="reflect") ** 2), any_(1, 1, 4), atol=1e-4)


def test_gradient_adds_in_output_order():
    """float32: each input element's gradient sums its copies' gradients in the order of the output, as
    PyTorch's CPU kernel does (a plain sum of the same terms rounds differently)."""
    g = np.array([[[1e8, 1.0, -1e8, 1.0, 3.0]]], dtype=np.float32)
    got = padding.scatter_array(g, np.zeros((1, 1, 2), np.float32), (2, 1), "replicate")
    assert got.tolist() == [[[np.float32(np.float32(np.float32(1e8) + 1) - np.float32(1e8)), 4.0]]]
