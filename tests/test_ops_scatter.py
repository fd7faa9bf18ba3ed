"""scatter, scatter_add and index_add: every row's backward and second derivative against finite differences,
the in-place forms, a repeated index's order, and the sizes of nonzero's results against the memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine.factories import tensor
from gradcli.engine.ops import reduce, scatter
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, first_derivative, gradcheck, row_tests

IDX = tensor([[1, 0], [0, 2]])          # along dim 1 of a (2, 3): each row's two columns
REPEATED = tensor([[2, 2], [0, 0]])     # both to one column (scatter's src gradient then is PyTorch's gather,
                                        # not the derivative: the first write is lost, yet gets a gradient)


def _index(*values):
    return tensor(list(values))


# row -> (function of float64 leaves, input arrays)
CHECKS = {
    scatter.SELECT_SCATTER: [(lambda a, b: scatter.select_scatter(a, b, 0, 1), (any_(3, 2), any_(2))),
                             (lambda a, b: scatter.select_scatter(a * a, b, -1, -1), (any_(2, 3), any_(2)))],
    scatter.SLICE_SCATTER: [(lambda a, b: scatter.slice_scatter(a, b, 0, 1, None, 2), (any_(5, 2), any_(2, 2))),
                            (lambda a, b: scatter.slice_scatter(a, b, 1, -2), (any_(2, 4), any_(2, 2)))],
    scatter.DIAGONAL_SCATTER: [(lambda a, b: scatter.diagonal_scatter(a, b, 1), (any_(3, 3), any_(2))),
                               (lambda a, b: scatter.diagonal_scatter(a, b, 0, 1, 2), (any_(2, 2, 3), any_(2, 2)))],
    reduce.SCATTER: [(lambda a, s: a.scatter(1, IDX, s), (any_(2, 3), any_(2, 2))),
                     (lambda a, s: scatter.scatter(a, 0, tensor([[1, 0, 1]]), s), (any_(2, 3), any_(1, 3))),
                     (lambda a, s: a.scatter(-1, tensor([[2], [0]]), s), (any_(2, 3), any_(2, 1)))],
    scatter.SCATTER_VALUE: [(lambda a: a.scatter(1, IDX, 2.5), (any_(2, 3),)),
                            (lambda a: (a * 1).scatter_(0, tensor([[1, 1, 0]]), -1), (any_(2, 3),))],
    scatter.SCATTER_ADD: [(lambda a, s: a.scatter_add(1, REPEATED, s), (any_(2, 3), any_(2, 2))),
                          (lambda a, s: (a * 1).scatter_add_(0, tensor([[1, 1, 0], [1, 0, 0]]), s),
                           (any_(2, 3), any_(2, 3)))],
    scatter.INDEX_ADD: [(lambda a, s: a.index_add(1, _index(2, 2, 0), s, alpha=-1.5), (any_(2, 3), any_(2, 3))),
                        (lambda a, s: scatter.index_add(a, 0, _index(1), s), (any_(2, 3), any_(1, 3))),
                        (lambda a, s: (a * 1).index_add_(0, _index(3, 0, 3), s, alpha=2), (any_(4), any_(3)))],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


SECOND = [
    ("scatter", lambda a, s: (a * a).scatter(1, IDX, s * s), (any_(2, 3), any_(2, 2))),
    ("scatter_value", lambda a: (a * a).scatter(1, REPEATED, 0.5), (any_(2, 3),)),
    ("scatter_add", lambda a, s: (a * a).scatter_add(1, REPEATED, s * a[:, :2]), (any_(2, 3), any_(2, 2))),
    ("index_add", lambda a, s: (a * a).index_add(1, _index(2, 0, 2), s * s, alpha=0.5), (any_(2, 3), any_(2, 3))),
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_a_repeated_position_takes_the_last_write_and_adds_in_index_order():
    x = Tensor(np.zeros(4, np.float32))
    assert x.scatter(0, _index(3, 1, 3, 3), tensor([1., 2., 3., 4.])).tolist() == [0., 2., 0., 4.]
    big = Tensor(np.array([1e8], np.float32))
    # float32 adds in index order: 1e8 + 3 + 3 rounds each step, (3 + 3) + 1e8 would not
    added = big.scatter_add(0, _index(0, 0), tensor([3., 3.]))
    assert added._a[0] == np.float32(np.float32(1e8 + 3) + 3)


def test_scatter_on_a_leaf_that_requires_grad_is_refused_in_place():
    result = run_script("import torch\nx = torch.ones(2, requires_grad=True)\nx.scatter_(0, torch.tensor([1]), 2.)\n")
    assert result.error.message.startswith("a leaf Variable that requires grad is being used in an in-place operation")


def test_nonzero_results_are_held_to_the_memory_budget(small_budget):
    # a bool input of 9 MB holds 9,000,000 positions of 2 int64 coordinates: 144 MB
    result = run_script("import torch\nx = torch.ones(3000, 3000, dtype=torch.bool)\ntorch.nonzero(x)\n")
    assert result.error.kind == "RuntimeError"
    assert "you tried to allocate 144000000 bytes" in result.error.message
