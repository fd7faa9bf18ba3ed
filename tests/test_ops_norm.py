"""The normalisation rows (batch_norm, layer_norm, group_norm): gradient checks in float64 (their tangents are
checked from the same cases by tests/test_forward_rows.py), second derivatives through create_graph, and the
float32 results against PyTorch's, bit for bit, from stored oracle data (tests/data/norm_oracle.npz, written by
tools/norm_oracle.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradcli.engine.factories import tensor
from gradcli.engine.ops import normalization as norm
from gradcli.language.stdlib import TORCH
from test_gradcheck import _leaf, any_, first_derivative, gradcheck, recorded_names

F = TORCH.members["nn"].members["functional"].members
RM, RV = tensor([0.3, -0.2, 0.1]).double(), tensor([0.7, 1.3, 2.0]).double()


def _bn_train(x, w=None, b=None):
    return F["batch_norm"](x, None, None, w, b, training=True)


def _bn_eval(x, w=None, b=None):
    return F["batch_norm"](x, RM, RV, w, b, training=False)


def _twice(fn):
    """The create_graph gradient of sum(fn(x)^3) with respect to x, as a function: it records the backward
    nodes' own rows (NativeBatchNormBackwardBackward0, NativeLayerNormBackwardBackward0)."""
    from gradcli.engine import autograd
    from gradcli.engine.backward import grad

    def first(x, *rest):
        with autograd.enable_grad():        # finite differences call it under no_grad
            x = x if x.requires_grad else _leaf(x._a)
            return grad((fn(x, *rest) ** 3).sum(), x, create_graph=True)[0]
    return first


# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    norm.BATCH_NORM: [(_bn_train, (any_(4, 3), any_(3), any_(3))),
                      (_bn_train, (any_(3, 3, 5),)),
                      (_bn_train, (any_(2, 3, 2, 3), any_(3), any_(3))),
                      (lambda x, w: _bn_train(x, w), (any_(5, 3), any_(3))),
                      (_bn_eval, (any_(4, 3), any_(3), any_(3))),
                      (_bn_eval, (any_(2, 3, 4),))],
    norm.LAYER_NORM: [(lambda x, w, b: F["layer_norm"](x, (3,), w, b), (any_(4, 3), any_(3), any_(3))),
                      (lambda x: F["layer_norm"](x, (2, 5)), (any_(3, 2, 5),)),
                      (lambda x, w: F["layer_norm"](x, [20], w), (any_(2, 20), any_(20))),
                      (lambda x, b: F["layer_norm"](x, 4, None, b), (any_(3, 4), any_(4)))],
    norm.GROUP_NORM: [(lambda x, w, b: F["group_norm"](x, 2, w, b), (any_(3, 4, 5), any_(4), any_(4))),
                      (lambda x: F["group_norm"](x, 1), (any_(2, 3, 2, 2),)),
                      (lambda x, w: F["group_norm"](x, 3, w), (any_(2, 6), any_(6)))],
    norm.BATCH_NORM_BACKWARD: [(_twice(_bn_train), (any_(4, 3), any_(3), any_(3))),
                               (_twice(_bn_eval), (any_(3, 3, 2), any_(3), any_(3)))],
    norm.LAYER_NORM_BACKWARD: [(_twice(lambda x, w: F["layer_norm"](x, (4,), w)), (any_(3, 4), any_(4)))],
}


def _params(rows=None):
    for row, cases in CHECKS.items():
        if rows is not None and row not in rows:
            continue
        for i, case in enumerate(cases):
            fn, arrays = case
            yield pytest.param(fn, arrays, id=f"{row.node}-{i}")


@pytest.mark.parametrize("fn, arrays", list(_params()))
def test_backward_matches_finite_differences(fn, arrays):
    gradcheck(fn, *arrays)


# the backward nodes' own rows differentiate once more (a third derivative gradcli refuses, test below)
@pytest.mark.parametrize("fn, arrays", list(_params((norm.BATCH_NORM, norm.LAYER_NORM, norm.GROUP_NORM))))
def test_second_derivative_matches_finite_differences(fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


# group_norm's create_graph gradient is PyTorch's composite over the node's own mean and rstd (outputs 1 and 2 of
# NativeGroupNormBackward0, whose gradients come back to it): it differentiates a third time
@pytest.mark.parametrize("fn, arrays", list(_params((norm.GROUP_NORM,))))
def test_group_norm_third_derivative_matches_finite_differences(fn, arrays):
    gradcheck(first_derivative(first_derivative(fn)), *arrays, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    fn, arrays = CHECKS[row][0]
    assert row.node in recorded_names(fn(*[_leaf(a) for a in arrays]))


def _oracle_cases():
    import importlib.util
    from conftest import ROOT
    spec = importlib.util.spec_from_file_location("norm_oracle", ROOT / "tools" / "norm_oracle.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool, tool.cases_of(str(Path(__file__).parent / "norm_bits.npz"))


def test_float32_results_equal_pytorchs_bit_for_bit():
    """Outputs, saved statistics, running statistics and gradients of 75 random cases PyTorch computed
    (tests/norm_bits.npz, from tools/norm_oracle.py): 2-d and image batch norm in training and eval mode,
    layer norm rows of one and of several Welford chunks, group norm with one and many channels per group."""
    tool, cases = _oracle_cases()
    assert len(cases) == 75
    differing = [(op, case["x"].shape, tool.mismatches(op, case)) for op, case in cases]
    assert [d for d in differing if d[2]] == []


def test_the_kernels_double_precision_copies_stay_inside_the_memory_budget():
    """A 4 MB float32 input fits a 6 MB budget, the kernels' 8 MB double-precision copy does not: PyTorch's
    allocator message, with the script's line, before any work (the budget set in-process, as
    tests/test_limits.py does: the `gradcli` command would also cap this whole process)."""
    from conftest import run_script
    from gradcli.engine import budget
    before = budget.max_memory()
    budget.set_max_memory(6 << 20)
    try:
        result = run_script("import torch\nimport torch.nn.functional as F\nx = torch.ones(1000, 1000)\n"
                            "y = F.layer_norm(x, (1000,))\n", "<norm>")
    finally:
        budget.set_max_memory(before)
    assert "you tried to allocate 8000000 bytes" in str(result.error)
    assert "(gradcli's --max-memory is 6.0 MiB)" in str(result.error)



def test_a_third_derivative_stops_with_a_clear_error():
    fn, arrays = CHECKS[norm.BATCH_NORM_BACKWARD][0]
    with pytest.raises(NotImplementedError, match="^gradcli cannot differentiate NativeBatchNormBackwardBackward0 "
                                                  r"again \(a third derivative of a normalisation layer\)$"):
        first_derivative(fn)(*[_leaf(a) for a in arrays])
