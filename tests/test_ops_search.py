"""unique, unique_consecutive, bincount, searchsorted and bucketize: the nodes PyTorch records without a
derivative, the order of equal values and NaNs, PyTorch's binary search against numpy's, and the budget."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine.factories import tensor
from gradcli.engine.ops import search
from gradcli.engine.tensor import Tensor
from test_gradcheck import _leaf, any_

# row -> cases; each row's backward (and tangent: tests/test_forward_rows.py) is PyTorch's refusal
CHECKS = {
    search.UNIQUE: [(lambda a: search.unique(a), (any_(4),), {"raises_unimplemented": "_unique2"})],
    search.UNIQUE_DIM: [(lambda a: search.unique(a, dim=1), (any_(2, 3),), {"raises_unimplemented": "unique_dim"})],
    search.UNIQUE_CONSECUTIVE: [(lambda a: a.unique_consecutive(return_counts=True)[0], (any_(2, 2),),
                                 {"raises_unimplemented": "unique_consecutive"})],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda row: row.node)
def test_backward_is_pytorchs_refusal(row):
    for fn, arrays, options in CHECKS[row]:
        out = fn(*[_leaf(a) for a in arrays])
        assert out.grad_fn.op is row
        name = options["raises_unimplemented"]
        with pytest.raises(NotImplementedError, match=f"^the derivative for '{name}' is not implemented\\.$"):
            out.sum().backward()


def test_unique_keeps_the_first_of_equal_values_and_every_nan():
    x = Tensor(np.array([np.nan, 0.0, 2.0, -0.0, np.nan, 2.0], np.float32))
    values, inverse, counts = search.unique(x, return_inverse=True, return_counts=True)
    assert str(values._a.tolist()) == "[0.0, 2.0, nan, nan]"
    assert inverse.tolist() == [2, 0, 1, 0, 3, 1] and counts.tolist() == [2, 2, 1, 1]


def test_the_binary_search_agrees_with_numpy_on_sorted_boundaries():
    rs = np.random.RandomState(3)
    b = np.sort(rs.randint(0, 20, size=50)).astype(np.float32)
    v = rs.randint(-2, 22, size=200).astype(np.float32)
    for side in ("left", "right"):
        got = search.searchsorted(Tensor(b), Tensor(v), side=side)._a
        assert (got == np.searchsorted(b, v, side=side)).all()


def test_bincount_and_unique_sizes_meet_the_budget(small_budget):
    result = run_script("import torch\ntorch.bincount(torch.tensor([10**9]))\n")
    assert "you tried to allocate 8000000008 bytes" in result.error.message
    assert search.bincount(tensor([0, 3]), minlength=2).tolist() == [1, 0, 0, 1]
