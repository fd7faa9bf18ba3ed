"""Gradient checks of grid_sample's rows (gradcli.engine.ops.grid_sample) by tests/test_gradcheck.py's finite
differences (PyTorch has no forward-mode formula for them: tests/test_forward_rows.py checks that refusal)."""

from __future__ import annotations

from gradcli.engine import backward, dtypes
from gradcli.engine.factories import tensor
from gradcli.engine.ops import grid_sample as gs
from test_gradcheck import any_, row_tests

_POINTS = tensor([[[[0.3, -0.2], [-0.9, 0.45]], [[0.1, 0.7], [1.4, -0.6]]]], dtype=dtypes.float64)
_NO_TANGENT_2D = {"raises_unimplemented": "grid_sampler_2d"}
_NO_TANGENT_3D = {"raises_unimplemented": "grid_sampler_3d"}


def _sample(mode, padding, align):
    return lambda x, g: gs.grid_sample(x, g * 0.6, mode, padding, align)


def _second(dims):
    """The input's gradient under create_graph: a GridSampler{2,3}DBackwardBackward0 node."""
    def fn(x, g):
        y = gs.grid_sample(x, g * 0.6, "bilinear", "zeros", False)
        return backward.grad((y * y).sum(), (x,), create_graph=True)[0]
    options = {"raises_unimplemented": f"grid_sampler_{dims}d",
               "raises_gradcli": f"the derivative of grid_sampler_{dims}d_backward"}
    return fn, options


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    gs.GRID_SAMPLER_2D: [(_sample("bilinear", "zeros", False), (any_(2, 3, 4, 5), any_(2, 3, 2, 2)), _NO_TANGENT_2D),
                         (_sample("bilinear", "border", True), (any_(1, 2, 3, 3), any_(1, 4, 3, 2) * 2),
                          _NO_TANGENT_2D),
                         (_sample("bilinear", "reflection", False), (any_(1, 2, 3, 4), any_(1, 3, 3, 2) * 2),
                          _NO_TANGENT_2D),
                         (_sample("bicubic", "zeros", True), (any_(1, 2, 4, 4), any_(1, 2, 3, 2)), _NO_TANGENT_2D),
                         (_sample("bicubic", "reflection", False), (any_(1, 1, 3, 5), any_(1, 3, 2, 2) * 2),
                          _NO_TANGENT_2D),
                         (lambda x: gs.grid_sample(x, _POINTS, "nearest", "zeros", False), (any_(1, 2, 3, 4),),
                          _NO_TANGENT_2D)],
    gs.GRID_SAMPLER_3D: [(_sample("bilinear", "zeros", False), (any_(1, 2, 2, 3, 4), any_(1, 2, 2, 2, 3)),
                          _NO_TANGENT_3D),
                         (_sample("bilinear", "reflection", True), (any_(1, 1, 3, 3, 2), any_(1, 2, 1, 2, 3) * 2),
                          _NO_TANGENT_3D),
                         (_sample("nearest", "border", False), (any_(1, 2, 2, 3, 2), any_(1, 2, 2, 1, 3)),
                          _NO_TANGENT_3D)],
    gs.GRID_SAMPLER_2D_BACKWARD: [(*_second(2)[:1], (any_(1, 2, 3, 3), any_(1, 2, 2, 2)), _second(2)[1])],
    gs.GRID_SAMPLER_3D_BACKWARD: [(*_second(3)[:1], (any_(1, 1, 2, 3, 3), any_(1, 2, 1, 2, 3)), _second(3)[1])],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)
