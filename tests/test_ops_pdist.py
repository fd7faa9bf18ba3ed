"""Gradient checks of pdist's rows (gradcli.engine.ops.pdist) by tests/test_gradcheck.py's finite differences, on
rows that are all distinct (no distance is 0, where p < 2 and inf have kinks). PyTorch has no forward-mode
formula for either kernel and no derivative for _pdist_backward: those checks are the refusals."""

from __future__ import annotations

from gradcli.engine import autograd
from gradcli.engine.backward import grad
from gradcli.engine.ops import pdist
from test_gradcheck import _leaf, any_, row_tests

_NO_TANGENT = {"raises_unimplemented": "_pdist_forward"}


def _pdist_gradient(a):
    """pdist's gradient taken with create_graph: recorded as _pdist_backward (PdistBackwardBackward0)."""
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        (g,) = grad(pdist.pdist(x, 1.5).sum(), x, create_graph=True)
    return g


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    pdist.PDIST: [(lambda a: pdist.pdist(a, p), (any_(4, 3),), _NO_TANGENT) for p in (1.0, 1.5, 2.0, 3.0)]
                 + [(lambda a: pdist.pdist(a * a, 2), (any_(3, 9),), _NO_TANGENT)],
    pdist.PDIST_BACKWARD: [(_pdist_gradient, (any_(3, 2),),
                            {"raises_not_implemented": "_pdist_backward", **_NO_TANGENT})],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
