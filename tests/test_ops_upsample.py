"""Gradient checks of F.interpolate's rows (finite differences in float64, every mode and dimension, up and
down, with and without align_corners and given scales; tests/test_forward_rows.py checks their tangents from
the same cases) and of their backward rows (the second derivative). Their float32/float16 bits are checked
against PyTorch by the engine cases (tests/engine_cases/upsample.txt) and the golden nn_upsample."""

from __future__ import annotations

import pytest

from gradcli.engine.ops import upsample as up
from test_gradcheck import any_, check_node_recorded, gradcheck


def _interp(**kw):
    return lambda x: up.interpolate(x, **kw)


def _back(kind, nd, osz, scales, align, in_shape):
    return lambda g: up._record_backward(g, kind, nd, osz, scales, align, in_shape)


# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    up.UPSAMPLE_NEAREST1D: [(_interp(scale_factor=2), (any_(2, 3, 4),)), (_interp(size=3), (any_(1, 2, 7),))],
    up.UPSAMPLE_NEAREST2D: [(_interp(size=(5, 7)), (any_(1, 2, 3, 4),)),
                            (_interp(scale_factor=(0.6, 1.5)), (any_(2, 1, 5, 4),))],
    up.UPSAMPLE_NEAREST3D: [(_interp(scale_factor=(1.5, 2, 0.7)), (any_(1, 2, 2, 3, 4),))],
    up.UPSAMPLE_NEAREST_EXACT1D: [(_interp(size=3, mode="nearest-exact"), (any_(1, 2, 5),))],
    up.UPSAMPLE_NEAREST_EXACT2D: [(_interp(scale_factor=1.5, mode="nearest-exact"), (any_(1, 2, 3, 4),)),
                                  (_interp(size=(2, 3), mode="nearest-exact"), (any_(1, 1, 5, 7),))],
    up.UPSAMPLE_NEAREST_EXACT3D: [(_interp(size=(3, 2, 4), mode="nearest-exact"), (any_(1, 1, 2, 3, 2),))],
    up.UPSAMPLE_LINEAR1D: [(_interp(size=7, mode="linear"), (any_(2, 2, 5),)),
                           (_interp(scale_factor=0.6, mode="linear", align_corners=True), (any_(1, 2, 8),))],
    up.UPSAMPLE_BILINEAR2D: [(_interp(scale_factor=1.7, mode="bilinear", align_corners=True), (any_(1, 2, 3, 4),)),
                             (_interp(size=(2, 5), mode="bilinear"), (any_(2, 1, 5, 3),)),
                             (_interp(size=(60, 75), mode="bilinear"), (any_(1, 1, 3, 4),))],
    up.UPSAMPLE_TRILINEAR3D: [(_interp(size=(3, 4, 3), mode="trilinear"), (any_(1, 1, 2, 3, 2),))],
    up.UPSAMPLE_BICUBIC2D: [(_interp(size=(5, 6), mode="bicubic"), (any_(1, 2, 3, 4),)),
                            (_interp(scale_factor=0.6, mode="bicubic", align_corners=True), (any_(1, 1, 6, 5),))],
    up.UPSAMPLE_BICUBIC2D_BACKWARD: [(_back("cubic", 2, (5, 6), (None, None), False, (1, 2, 3, 4)),
                                      (any_(1, 2, 5, 6),))],
    up.UPSAMPLE_NEAREST1D_BACKWARD: [(_back("nearest", 1, (7,), (None,), False, (1, 2, 3)), (any_(1, 2, 7),))],
    up.UPSAMPLE_NEAREST2D_BACKWARD: [(_back("nearest", 2, (5, 4), (None, 2.0), False, (1, 2, 3, 2)),
                                      (any_(1, 2, 5, 4),))],
    up.UPSAMPLE_NEAREST3D_BACKWARD: [(_back("nearest", 3, (3, 2, 4), (None,) * 3, False, (1, 1, 2, 3, 2)),
                                      (any_(1, 1, 3, 2, 4),))],
    up.UPSAMPLE_NEAREST_EXACT1D_BACKWARD: [(_back("nearest-exact", 1, (3,), (None,), False, (1, 2, 5)),
                                            (any_(1, 2, 3),))],
    up.UPSAMPLE_NEAREST_EXACT2D_BACKWARD: [(_back("nearest-exact", 2, (4, 6), (1.5, 1.5), False, (1, 1, 3, 4)),
                                            (any_(1, 1, 4, 6),))],
    up.UPSAMPLE_NEAREST_EXACT3D_BACKWARD: [(_back("nearest-exact", 3, (3, 2, 4), (None,) * 3, False, (1, 1, 2, 3, 2)),
                                            (any_(1, 1, 3, 2, 4),))],
    up.UPSAMPLE_LINEAR1D_BACKWARD: [(_back("linear", 1, (7,), (None,), False, (1, 2, 5)), (any_(1, 2, 7),))],
    up.UPSAMPLE_BILINEAR2D_BACKWARD: [(_back("linear", 2, (5, 6), (1.7, 1.7), True, (1, 2, 3, 4)),
                                       (any_(1, 2, 5, 6),))],
    up.UPSAMPLE_TRILINEAR3D_BACKWARD: [(_back("linear", 3, (3, 4, 3), (None,) * 3, False, (1, 1, 2, 3, 2)),
                                        (any_(1, 1, 3, 4, 3),))],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda row: row.node)
def test_each_row_records_its_node_and_matches_finite_differences(row):
    check_node_recorded(CHECKS, row)
    for fn, arrays in CHECKS[row]:
        gradcheck(fn, *arrays)


# ---------------------------------------------------------------------------- the language's walls
from conftest import error_line, run_script  # noqa: E402
from test_limits import budget  # noqa: E402,F401  -- the fixture setting --max-memory for one test

PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("source, expected", [
    ("nn.Upsample(scale_factor=2).__reduce__",
     "AttributeError: 'Upsample' object attribute '__reduce__' is outside gradcli's language"),
    ("F.interpolate.__globals__", "AttributeError: 'function' object has no attribute '__globals__'"),
    ("nn.Upsample(scale_factor=2).forward.__func__",
     "AttributeError: 'method' object attribute '__func__' is outside gradcli's language"),
    ("nn.UpsamplingBilinear2d.__init__.__globals__",
     "AttributeError: 'function' object attribute '__globals__' is outside gradcli's language"),
    ("F.interpolate(torch.ones(1, 1, 2, requires_grad=True), size=3).grad_fn._saved_output_size.__reduce__",
     "AttributeError: 'tuple' object attribute '__reduce__' is outside gradcli's language"),
    ("F.upsample_bilinear.__code__", "AttributeError: 'function' object has no attribute '__code__'"),
])
def test_no_escape_through_resampling(source, expected):
    assert error_line(PRELUDE + f"y = {source}") == expected


def test_outputs_past_the_budget_fail_before_numpy_allocates(budget):
    budget(64 << 20)
    line = error_line(PRELUDE + "y = F.interpolate(torch.zeros(1, 4, 100, 100), scale_factor=50)")
    assert line.endswith("(gradcli's --max-memory is 64.0 MiB)"), line
    line = error_line(PRELUDE + "y = F.interpolate(torch.zeros(1, 1, 10), scale_factor=1e15)")
    assert line.startswith("RuntimeError: "), line


def test_a_module_keeps_its_arguments_as_pytorch_does():
    out = run_script(PRELUDE + "m = nn.Upsample(scale_factor=(2, 3), mode='bilinear', align_corners=True)\n"
                               "print(m, m.scale_factor, m.mode, m.align_corners, m.size, m.name)\n"
                               "print(nn.UpsamplingNearest2d(size=4), list(m.parameters()), m.training)\n").out
    assert out == ("Upsample(scale_factor=(2.0, 3.0), mode='bilinear') (2.0, 3.0) bilinear True None Upsample\n"
                   "UpsamplingNearest2d(size=4, mode='nearest') [] True\n")


def test_deprecated_functions_warn_as_pytorch_does():
    result = run_script(PRELUDE + "x = torch.ones(1, 1, 2, 2)\ny = F.upsample(x, scale_factor=2)\n"
                                  "z = F.upsample_bilinear(x, size=3)\n")
    assert result.error is None
    assert "UserWarning: `nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead." in result.err
    assert "`nn.functional.upsample_bilinear` is deprecated." in result.err
