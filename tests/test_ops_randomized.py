"""Gradient checks of rrelu's rows (gradcli.engine.ops.randomized): out of training, and in training with equal
bounds, where its slopes are fixed, so finite differences see the function the backward differentiates."""

from __future__ import annotations

from gradcli.engine import autograd
from gradcli.engine.backward import grad
from gradcli.engine.ops import randomized
from test_gradcheck import _leaf, any_, row_tests


def _rrelu_gradient(training: bool):
    """x -> the gradient of sum(rrelu(x) * x) with create_graph, itself differentiable: its backward runs
    RreluWithNoiseBackwardBackward0."""
    def first(x):
        with autograd.enable_grad():
            leaf = x if x.requires_grad else _leaf(x._a)
            out = randomized.torch_rrelu(leaf, 0.25, 0.25 if training else 0.5, training)
            (g,) = grad((out * leaf).sum(), leaf, create_graph=True)
        return g
    return first


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    randomized.RRELU: [(lambda x: randomized.torch_rrelu(x, 0.1, 0.3), (any_(3, 4),)),
                       (lambda x: randomized.torch_rrelu(x * x - 0.3, 0.2, 0.2, True), (any_(2, 3),))],
    randomized.RRELU_: [(lambda x: randomized.torch_rrelu_(x * 1, 0.1, 0.3), (any_(3, 4),)),
                        (lambda x: randomized.torch_rrelu_(x * 2, 0.3, 0.3, True), (any_(5),))],
    randomized.RRELU_BACKWARD: [(_rrelu_gradient(False), (any_(3, 4),)), (_rrelu_gradient(True), (any_(6),))],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
