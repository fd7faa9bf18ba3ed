"""Every op row's forward-mode tangent against central finite differences in float64.

The cases are the gradient checks' (tests/test_gradcheck.py: CHECKS, the per-group CHECKS of
tests/test_ops_*.py, and the checks generated from rows with a numpy `forward`): each function runs on
dual tensors whose tangents are random, and the result's tangent must equal the central difference
(f(x + eps v) - f(x - eps v)) / 2 eps. A row without a forward-mode column fails
`test_every_row_has_a_forward_column`.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import forward
from gradcli.engine.recording import Op
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from test_gradcheck import EPS, _dual_primal, _group_checks, _rows, _value, check_rows, gradcheck_params, row_params


def jvp_check(fn, arrays, atol=1e-5, rtol=1e-3, eps=EPS, raises=None, raises_inplace=None,
              raises_unimplemented=None, raises_not_implemented=None, undefined_tangent=False, raises_gradcli=None,
              no_forward_gradcli=None):
    # (raises_not_implemented, raises_gradcli: the gradient checks' refusals of a backward formula, not forward mode's;
    # undefined_tangent: a formula PyTorch leaves out silently, scatter_reduce's prod: no tangent at all)
    if no_forward_gradcli is not None:  # forward mode gradcli leaves out (sparse tensors): its honest refusal
        with pytest.raises(NotImplementedError, match=f"^{no_forward_gradcli}$"):
            jvp_check(fn, arrays, atol, rtol, eps)
        return
    if raises is not None:              # an op PyTorch has no derivative for refuses forward mode too
        with pytest.raises(NotImplementedError, match=f"^Trying to use forward AD with {raises} that does not "
                                                      "support it.$"):
            jvp_check(fn, arrays, atol, rtol, eps)
        return
    if raises_inplace is not None:      # asinh_ and its kin: PyTorch's message for an unimplemented formula
        with pytest.raises(NotImplementedError, match=f"^Trying to use forward AD with {raises_inplace}_ that does "
                                                      "not support it because it has not been implemented yet"):
            jvp_check(fn, arrays, atol, rtol, eps)
        return
    if raises_unimplemented is not None:    # unique and its kin: the formula's own refusal
        with pytest.raises(NotImplementedError, match=f"^Trying to use forward AD with {raises_unimplemented} that "
                                                      "does not support it because it has not been implemented yet"):
            jvp_check(fn, arrays, atol, rtol, eps)
        return
    rs = np.random.RandomState(1)
    tangents = [rs.standard_normal(np.shape(a)) for a in arrays]
    level = forward.enter_dual_level()
    try:
        # leaves that require grad, as the gradient checks' functions expect (the formula steps among
        # them differentiate their input): the tangents are then computed on the graph too
        duals = [forward.make_dual(Tensor(np.array(a, dtype=np.float64)).requires_grad_(),
                                   Tensor(np.array(v, dtype=np.float64))) for a, v in zip(arrays, tangents)]
        out = fn(*duals)
        tangent = forward.tangent_of(out)
        if undefined_tangent:
            assert tangent is None
            return
        assert tangent is not None, "the result has no tangent"
        analytic = np.broadcast_to(tangent._a, out._a.shape).astype(np.float64)
    finally:
        forward.exit_dual_level(level=level)
    plus = [np.asarray(a, dtype=np.float64) + eps * v for a, v in zip(arrays, tangents)]
    minus = [np.asarray(a, dtype=np.float64) - eps * v for a, v in zip(arrays, tangents)]
    numeric = (_value(fn, plus) - _value(fn, minus)) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, atol=atol, rtol=rtol)


def _all_cases() -> list:
    """The gradient checks' cases, and those of the per-group test modules."""
    return gradcheck_params() + row_params((f"{row.node}-group", cases) for row, cases in _group_checks().items())


@pytest.mark.parametrize("cases", _all_cases())
def test_tangent_matches_finite_differences(cases):
    check_rows(cases, _check_tangent)


def _check_tangent(fn, arrays, options) -> None:
    assert STATE.fw_level is None
    if fn is _dual_primal:              # unpack_dual's primal is the dual tensor without its tangent
        level = forward.enter_dual_level()
        try:
            x = Tensor(np.array(arrays[0]))
            assert forward.tangent_of(fn(forward.make_dual(x, x))) is None
        finally:
            forward.exit_dual_level(level=level)
        return
    jvp_check(fn, arrays, **options)


def test_every_row_has_a_forward_column():
    from gradcli.engine import distributions, factories, views
    rows = set(_rows()) | {v for m in (factories, views, distributions) for v in vars(m).values() if v.__class__ is Op}
    assert len(rows) > 150
    assert sorted(r.node for r in rows if r.jvp is None) == []
