"""ops.indexed (index_fill, index_copy, index_put, take, put, masked_scatter, scatter_reduce, index_reduce,
fill_diagonal_): every row's backward and second derivative against finite differences, the in-place forms'
refusals, and the orders PyTorch's kernels write and reduce repeated positions in."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine import backmath
from gradcli.engine.factories import tensor
from gradcli.engine.ops import indexed
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, first_derivative, gradcheck, row_tests

_MASK = tensor([[True, False, True], [False, True, True]])
_SPREAD = tensor([[0, 1], [2, 1]])          # along dim 1 of a (2, 3): one repeat per row


def _index(*values):
    return tensor(list(values))


# row -> (function of float64 leaves, input arrays)
CHECKS = {
    indexed.INDEX_FILL: [(lambda a: a.index_fill(1, _index(0, 2), -1.5), (any_(2, 3),)),
                         (lambda a: (a * 1).index_fill_(0, _index(-1), 2), (any_(3, 2),))],
    indexed.INDEX_FILL_TENSOR: [(lambda a, v: a.index_fill(1, _index(2, 0, 2), v), (any_(2, 3), any_())),
                                (lambda a, v: indexed.index_fill(a, -1, _index(1), v * v), (any_(3), any_()))],
    indexed.INDEX_COPY: [(lambda a, s: a.index_copy(1, _index(2, 0), s), (any_(2, 3), any_(2, 2))),
                         (lambda a, s: (a * 1).index_copy_(0, _index(1), s), (any_(3), any_(1))),
                         (lambda a, s: indexed.index_copy(a, 0, _index(0), s), (any_(2), any_()))],
    indexed.TAKE: [(lambda a: a.take(_index(0, 5, -1, 2)), (any_(2, 3),)),
                   (lambda a: indexed.take(a, tensor([[1, 1], [0, -2]])), (any_(3),))],
    indexed.PUT: [(lambda a, s: a.put(_index(0, 5, 3), s), (any_(2, 3), any_(3))),
                  (lambda a, s: a.put(_index(1, 1, -1), s, accumulate=True), (any_(4), any_(3))),
                  (lambda a, s: (a * 1).put_(tensor([[2], [0]]), s), (any_(3), any_(1, 2)))],
    indexed.MASKED_SCATTER: [(lambda a, s: a.masked_scatter(_MASK, s), (any_(2, 3), any_(5))),
                             (lambda a, s: indexed.masked_scatter(a, _MASK, s), (any_(3), any_(2, 4))),
                             (lambda a, s: (a * 1).masked_scatter_(_MASK, s), (any_(2, 3), any_(6)))],
    indexed.MASKED_SCATTER_BACKWARD: [(lambda g: indexed._masked_source(backmath.TENSOR, g, _MASK, (5,)),
                                       (any_(2, 3),))],
    indexed.INDEX_PUT: [(lambda a, v: a.index_put((_index(1, 0), _index(2, 2)), v), (any_(2, 3), any_(2))),
                        (lambda a, v: a.index_put((_index(1, 1),), v, accumulate=True), (any_(2, 3), any_(1, 3))),
                        (lambda a, v: indexed.index_put(a, (_MASK,), v), (any_(2, 3), any_()))],
    # (forward mode: scatter_reduce's prod has no tangent formula, index_reduce none at all, as in PyTorch)
    indexed.SCATTER_REDUCE: [
        (lambda a, s, r=r, inc=inc: a.scatter_reduce(1, _SPREAD, s, r, include_self=inc), (any_(2, 3), any_(2, 2)),
         {"undefined_tangent": True} if r == "prod" else {})
        for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    indexed.INDEX_REDUCE: [
        (lambda a, s, r=r, inc=inc: a.index_reduce(0, _index(2, 0, 2), s, r, include_self=inc), (any_(3, 2), any_(3, 2)),
         {"raises_unimplemented": "index_reduce"})
        for r in ("prod", "mean", "amax", "amin") for inc in (True, False)],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


SECOND = [
    ("index_fill", lambda a, v: (a * a).index_fill(1, _index(0), v * v), (any_(2, 3), any_())),
    ("index_copy", lambda a, s: (a * a).index_copy(0, _index(1, 0), s * s), (any_(2, 3), any_(2, 3))),
    ("take", lambda a: (a * a).take(_index(0, 4, 4)), (any_(2, 3),)),
    ("put", lambda a, s: (a * a).put(_index(0, 4), s * s, True), (any_(2, 3), any_(2))),
    ("masked_scatter", lambda a, s: (a * a).masked_scatter(_MASK, s * s), (any_(2, 3), any_(5))),
    ("index_put", lambda a, v: (a * a).index_put((_index(1),), v * v), (any_(2, 3), any_(3))),
    *[(f"scatter_reduce_{r}", lambda a, s, r=r: (a * a).scatter_reduce(1, _SPREAD, s * s, r, include_self=False),
       (any_(2, 3), any_(2, 2))) for r in ("sum", "prod", "mean", "amax", "amin")],
    *[(f"index_reduce_{r}", lambda a, s, r=r: (a * a).index_reduce(1, _index(0, 2, 0), s * s, r),
       (any_(2, 3), any_(2, 3))) for r in ("prod", "mean", "amax", "amin")],
]


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_repeated_positions_are_written_and_reduced_in_index_order():
    x = Tensor(np.zeros(3, np.float32))
    assert x.index_copy(0, _index(1, 1, 2), tensor([1., 2., 3.])).tolist() == [0., 2., 3.]
    assert x.put(_index(0, 0), tensor([5., 6.])).tolist() == [6., 0., 0.]
    big = Tensor(np.array([1e8], np.float32))
    # float32 adds in index order: 1e8 + 3 + 3 rounds at each step, (3 + 3) + 1e8 would not
    for added in (big.put(_index(0, 0), tensor([3., 3.]), accumulate=True),
                  big.scatter_reduce(0, _index(0, 0), tensor([3., 3.]), "sum"),
                  big.index_put((_index(0, 0),), tensor([3., 3.]), accumulate=True)):
        assert added._a[0] == np.float32(np.float32(1e8 + 3) + 3)


@pytest.mark.parametrize("call", ["index_fill_(0, torch.tensor([1]), 2.)", "index_copy_(0, torch.tensor([1]), torch.ones(1))",
                                  "put_(torch.tensor([1]), torch.ones(1))", "index_put_((torch.tensor([1]),), torch.ones(()))",
                                  "masked_scatter_(torch.tensor([True, False]), torch.ones(2))",
                                  "scatter_reduce_(0, torch.tensor([1]), torch.ones(1), 'amax')",
                                  "index_reduce_(0, torch.tensor([1]), torch.ones(1), 'mean')"])
def test_an_in_place_write_into_a_leaf_that_requires_grad_is_refused(call):
    result = run_script(f"import torch\nx = torch.ones(2, requires_grad=True)\nx.{call}\n")
    assert result.error.message.startswith("a leaf Variable that requires grad is being used in an in-place operation")


def test_a_changed_index_fails_the_backward_pass():
    result = run_script("import torch\nx = torch.ones(3, requires_grad=True)\ni = torch.tensor([0, 2])\n"
                        "y = x.take(i)\ni.add_(0)\ny.sum().backward()\n")
    assert result.error.kind == "RuntimeError"
    assert "modified by an inplace operation" in result.error.message
