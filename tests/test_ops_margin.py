"""Gradient checks of the margin-loss rows (gradcli.engine.ops.margin) by tests/test_gradcheck.py's finite
differences; their tangents are checked from the same cases by tests/test_forward_rows.py."""

from __future__ import annotations

import pytest

from gradcli.engine import dtypes
from gradcli.engine.factories import tensor
from gradcli.engine.ops import margin
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, any_, check_node_recorded, check_rows, row_params

F = TORCH.members["nn"].members["functional"].members
SIGNS = tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=dtypes.float64)
CLASSES = tensor([2, 0, 3])
LABELS = tensor([[3, 0, -1, 2], [1, -1, 0, 0], [0, 1, 2, 3]])
WEIGHTS = tensor([0.5, 2.0, 1.5, 0.25], dtype=dtypes.float64)
# PyTorch has no forward-mode formula for these two
_NO_MULTI_TANGENT = {"raises_unimplemented": "multi_margin_loss"}
_NO_LABEL_TANGENT = {"raises_unimplemented": "multilabel_margin_loss_forward"}

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    margin.SOFT_MARGIN: [(lambda x: F["soft_margin_loss"](x, SIGNS), (any_(2, 3),)),
                         (lambda x: F["soft_margin_loss"](x, SIGNS * 0.5, reduction="none"), (any_(2, 3),)),
                         (lambda x: F["soft_margin_loss"](x, SIGNS[0], reduction="sum"), (any_(2, 3),))],
    margin.MULTI_MARGIN: [(lambda x: F["multi_margin_loss"](x, CLASSES), (any_(3, 4),), _NO_MULTI_TANGENT),
                          (lambda x: F["multi_margin_loss"](x, CLASSES, p=2, margin=0.7, reduction="none"),
                           (any_(3, 4),), _NO_MULTI_TANGENT),
                          (lambda x: F["multi_margin_loss"](x, CLASSES, weight=WEIGHTS, reduction="sum"),
                           (any_(3, 4),), _NO_MULTI_TANGENT)],
    margin.MULTILABEL_MARGIN: [(lambda x: F["multilabel_margin_loss"](x, LABELS), (any_(3, 4),), _NO_LABEL_TANGENT),
                               (lambda x: F["multilabel_margin_loss"](x, LABELS, reduction="none"), (any_(3, 4),),
                                _NO_LABEL_TANGENT),
                               (lambda x: F["multilabel_margin_loss"](x[1], LABELS[1], reduction="sum"),
                                (any_(3, 4),), _NO_LABEL_TANGENT)],
}


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)
