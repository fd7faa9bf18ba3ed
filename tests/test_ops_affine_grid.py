"""Gradient checks of affine_grid's row (gradcli.engine.ops.affine_grid) by tests/test_gradcheck.py's finite
differences; its tangents are checked from the same cases by tests/test_forward_rows.py."""

from __future__ import annotations

from gradcli.engine.ops import affine_grid
from test_gradcheck import any_, row_tests

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    affine_grid.AFFINE_GRID: [(lambda t: affine_grid.affine_grid(t, (2, 1, 3, 4), False), (any_(2, 2, 3),)),
                              (lambda t: affine_grid.affine_grid(t * t, [1, 2, 2, 3, 2], True), (any_(1, 3, 4),)),
                              (lambda t: affine_grid.affine_grid_generator(t, (1, 3, 1, 5), True), (any_(1, 2, 3),))],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
