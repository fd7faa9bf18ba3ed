"""Gradient checks of ctc_loss's row (gradcli.engine.ops.ctc) by tests/test_gradcheck.py's finite differences.
PyTorch's CTC gradient is the one of normalised log-probabilities (exp(lp) - ...: it takes their softmax
constraint for granted), so the checks go through log_softmax, as every real use does; PyTorch has no
forward-mode formula for the row (tests/test_forward_rows.py checks that refusal)."""

from __future__ import annotations

from gradcli.engine.factories import tensor
from gradcli.engine.ops import ctc, nn
from test_gradcheck import any_, row_tests

_PADDED = tensor([[1, 2, 2], [3, 1, 0]])
_JOINED = tensor([1, 3, 3, 4])
_NO_TANGENT = {"raises_unimplemented": "_ctc_loss"}

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    ctc.CTC_LOSS: [(lambda x: ctc.ctc_loss(nn.log_softmax(x, 2), _PADDED, (6, 5), (3, 2), reduction="none"),
                    (any_(6, 2, 5),), _NO_TANGENT),
                   (lambda x: ctc.ctc_loss(nn.log_softmax(x, 2), _JOINED, tensor([6, 4]), tensor([3, 1]), blank=2),
                    (any_(6, 2, 5),), _NO_TANGENT),
                   (lambda x: ctc.ctc_loss(nn.log_softmax(x, 1), _JOINED[:3], (5,), (3,), reduction="sum",
                                           zero_infinity=True), (any_(5, 5),), _NO_TANGENT)],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
