"""Gradient checks of the margin-loss rows (gradcli.engine.ops.margin) by tests/test_gradcheck.py's finite
differences; their tangents are checked from the same cases by tests/test_forward_rows.py."""

from __future__ import annotations

import pytest

from gradcli.engine import autograd, dtypes
from gradcli.engine.backward import grad
from gradcli.engine.factories import tensor
from gradcli.engine.ops import margin
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, _leaf, any_, check_node_recorded, check_rows, row_params

F = TORCH.members["nn"].members["functional"].members
SIGNS = tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=dtypes.float64)
CLASSES = tensor([2, 0, 3])
LABELS = tensor([[3, 0, -1, 2], [1, -1, 0, 0], [0, 1, 2, 3]])
WEIGHTS = tensor([0.5, 2.0, 1.5, 0.25], dtype=dtypes.float64)
# PyTorch has no forward-mode formula for these two
_NO_MULTI_TANGENT = {"raises_unimplemented": "multi_margin_loss"}
_NO_LABEL_TANGENT = {"raises_unimplemented": "multilabel_margin_loss_forward"}
_NO_SOFT_BACKWARD_TANGENT = {"raises_unimplemented": "soft_margin_loss_backward"}


def _d_soft_margin(target, reduction):
    """x -> x's gradient of soft_margin_loss(x, target) times a factor that depends on x (so the incoming gradient
    requires grad too), itself differentiable: its backward runs SoftMarginLossBackwardBackward0's two formulas."""
    def first(a):
        with autograd.enable_grad():
            x = a if a.requires_grad else _leaf(a._a)
            loss = F["soft_margin_loss"](x, target, reduction=reduction)
            total = (loss * x).sum() if reduction == "none" else loss * (x * x).sum()
            (g,) = grad(total, x, create_graph=True)
        return g
    return first


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    margin.SOFT_MARGIN: [(lambda x: F["soft_margin_loss"](x, SIGNS), (any_(2, 3),)),
                         (lambda x: F["soft_margin_loss"](x, SIGNS * 0.5, reduction="none"), (any_(2, 3),)),
                         (lambda x: F["soft_margin_loss"](x, SIGNS[0], reduction="sum"), (any_(2, 3),))],
    # (a target of -1 and 1, and one scaled: the formulas square it)
    margin.SOFT_MARGIN_BACKWARD: [(_d_soft_margin(t, r), (any_(2, 3),), _NO_SOFT_BACKWARD_TANGENT)
                                  for r in ("mean", "sum", "none") for t in (SIGNS, SIGNS * 0.5)],
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
