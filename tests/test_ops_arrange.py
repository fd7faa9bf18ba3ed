"""rot90 and block_diag rows, and the ops PyTorch composes (meshgrid, cartesian_prod, diff, repeat_interleave,
take_along_dim): gradients and second derivatives against finite differences, the chains of nodes PyTorch
records, and the sizes a script gives checked against the memory budget before anything is allocated."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine.factories import tensor
from gradcli.engine.ops import arrange
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _leaf, any_, first_derivative, gradcheck, recorded_names, row_tests

T = TORCH.members
_MASK = Tensor(np.array([[True, False, True], [False, True, True]]))

CHECKS = {
    arrange.MASKED_SELECT: [(lambda a: arrange.masked_select(a, _MASK), (any_(2, 3),)),
                            (lambda a: arrange.masked_select(a, _MASK) * 2, (any_(3),)),
                            (lambda a: T["combinations"](a, 2), (any_(4),))],
    arrange.MASKED_SCATTER: [(lambda a: arrange.masked_scatter_zeros(a, _MASK, (2, 3)), (any_(4),))],
    arrange.ROT90: [(lambda a: arrange.rot90(a), (any_(2, 3),)), (lambda a: a.rot90(-3, (2, 0)), (any_(2, 3, 2),)),
                    (lambda a: arrange.rot90(a * a, 2, [-1, -2]), (any_(3, 2),))],
    arrange.BLOCK_DIAG: [(lambda a, b, c: arrange.block_diag(a, b, c), (any_(2, 3), any_(3), any_())),
                         (lambda a, b: arrange.block_diag(a * b[0], b), (any_(1, 2), any_(2, 2)))],
    arrange.PIXEL_SHUFFLE: [(lambda a: arrange.pixel_shuffle(a, 2), (any_(2, 8, 2, 3),)),
                            (lambda a: arrange.pixel_shuffle(a * a, 3), (any_(9, 1, 2),))],
    arrange.PIXEL_UNSHUFFLE: [(lambda a: arrange.pixel_unshuffle(a, 2), (any_(2, 1, 4, 6),)),
                              (lambda a: arrange.pixel_unshuffle(a * a, 3), (any_(2, 3, 3, 3),))],
    arrange.CHANNEL_SHUFFLE: [(lambda a: arrange.channel_shuffle(a, 2), (any_(2, 6, 3),)),
                              (lambda a: arrange.channel_shuffle(a * a, 3), (any_(1, 6, 2, 2),))],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


def _grid_product(a, b):
    x, y = arrange.meshgrid(a, b, indexing="xy")
    return x * y * y


COMPOSED = [
    ("meshgrid", _grid_product, (any_(3), any_(2))),
    ("cartesian_prod", lambda a, b: arrange.cartesian_prod(a, b) ** 2, (any_(2), any_(3))),
    ("diff", lambda a, p: arrange.diff(a, n=2, dim=0, prepend=p, append=a), (any_(3, 2), any_(1, 2))),
    ("repeat_interleave", lambda a: a.repeat_interleave(2, dim=1) * a.repeat_interleave(tensor([1, 0, 3]), 1)[:, :2].sum(),
     (any_(2, 3),)),
    ("take_along_dim", lambda a: arrange.take_along_dim(a, tensor([[2], [0]]), 1) * arrange.take_along_dim(a, tensor([5, 0])),
     (any_(2, 3),)),
    ("rot90_block_diag", lambda a, b: arrange.block_diag(arrange.rot90(a * a), b * b), (any_(2, 3), any_(2))),
]


@pytest.mark.parametrize("name, fn, arrays", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composed_gradients_match_finite_differences(name, fn, arrays):
    gradcheck(fn, *arrays)
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_chains_are_pytorchs():
    a, b = _leaf(any_(3)), _leaf(any_(2))
    assert recorded_names(arrange.meshgrid(a, b, indexing="ij")[0])[:2] == ["ExpandBackward0", "ViewBackward0"]
    assert recorded_names(a.repeat_interleave(2))[:4] == ["ViewBackward0", "CloneBackward0", "ExpandBackward0",
                                                         "UnsqueezeBackward0"]
    assert recorded_names(arrange.diff(a))[:2] == ["SubBackward0", "SliceBackward0"]


@pytest.mark.parametrize("code, allocated", [
    ("torch.repeat_interleave(torch.ones(3), 10**7)", 120000000),
    ("torch.repeat_interleave(torch.tensor([10**8]))", 800000000),
    ("torch.ones(2).repeat_interleave(torch.tensor([10**8, 1]))", 800000008),
    ("torch.block_diag(torch.ones(1, 6000), torch.ones(6000, 1))", 144048004),
    ("torch.logspace(0, 1, 10**8)", 400000000),
    ("torch.tril_indices(10**4, 10**4)", 800080000),
    ("torch.cartesian_prod(torch.arange(10000.), torch.arange(10000.))", 400000000),
])
def test_sizes_from_the_script_meet_the_budget_first(small_budget, code, allocated):
    result = run_script(f"import torch\n{code}\n")
    assert result.error.kind == "RuntimeError"
    assert f"you tried to allocate {allocated} bytes" in result.error.message
