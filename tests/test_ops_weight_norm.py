"""Gradient checks of torch._weight_norm's fused row (gradcli.engine.ops.weight_norm) by tests/test_gradcheck.py's
finite differences: the first-dim and last-dim kernels, on matrices and 3-d weights, with g of both signs.
PyTorch has no forward-mode formula for _weight_norm_interface: that check is the refusal."""

from __future__ import annotations

from gradcli.engine.ops import weight_norm
from test_gradcheck import any_, row_tests

_NO_TANGENT = {"raises_unimplemented": "_weight_norm_interface"}

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    weight_norm.WEIGHT_NORM: [
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(3, 4), any_(3, 1)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 1), (any_(5, 2), any_(1, 2)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(2, 3, 20), any_(2, 1, 1)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 2), (any_(2, 3, 4), any_(1, 1, 4)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(4,), any_(4,)), _NO_TANGENT),
    ],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
