"""EmbeddingBagBackward0 against finite differences (weight and per-sample weights, every mode, padding and
include_last_offset), and the bag arithmetic against a direct sum over each bag's rows."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import embedding_bag as eb
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, gradcheck

_IDX = Tensor(np.array([1, 2, 4, 4, 0, 3, 1], dtype=np.int64))
_OFF = Tensor(np.array([0, 2, 2, 5], dtype=np.int64))


def _bag(mode, **kw):
    return lambda w: eb.embedding_bag(_IDX, w, _OFF, mode=mode, **kw)


FORWARD = {"raises_unimplemented": "_embedding_bag"}     # PyTorch has no forward-mode formula for it

# row -> list of (function of float64 leaves, input arrays, options)
CHECKS = {
    eb.EMBEDDING_BAG: [(_bag("sum"), (any_(5, 3),), FORWARD),
                       (_bag("mean", padding_idx=4), (any_(5, 3),), FORWARD),
                       (_bag("max"), (any_(5, 2),), FORWARD),
                       (lambda w: eb.embedding_bag(_IDX, w, Tensor(np.array([0, 3, 7])), mode="sum",
                                                   include_last_offset=True), (any_(5, 2),), FORWARD),
                       (lambda w, p: eb.embedding_bag(_IDX, w, _OFF, mode="sum", per_sample_weights=p, padding_idx=1),
                        (any_(5, 3), any_(7)), FORWARD)],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda r: r.node)
def test_rows_match_finite_differences(row):
    for fn, arrays, _ in CHECKS[row]:
        gradcheck(fn, *arrays)


def test_bags_are_sums_over_their_rows():
    w = np.arange(15.0).reshape(5, 3)
    out = eb.embedding_bag(_IDX, Tensor(w), _OFF, mode="sum")._a
    bounds = [0, 2, 2, 5, 7]
    for b in range(4):
        rows = _IDX._a[bounds[b]:bounds[b + 1]]
        np.testing.assert_array_equal(out[b], w[rows].sum(0))
    mean = eb.embedding_bag(_IDX, Tensor(w), _OFF, mode="mean")._a
    np.testing.assert_array_equal(mean[1], np.zeros(3))          # an empty bag is zero, not nan
    np.testing.assert_array_equal(mean[3], w[[3, 1]].mean(0))
