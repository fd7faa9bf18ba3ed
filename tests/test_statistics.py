"""histc, cov, corrcoef, the trapezoid rules and isin (gradcli.engine.ops.statistics) beyond the engine cases
(tests/engine_cases/statistics.txt compares them with PyTorch): gradients of the composed ones against finite
differences, and values against numpy's own definitions."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import statistics
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import any_, gradcheck

T = TORCH.members
R = np.random.RandomState(7)


@pytest.mark.parametrize("fn, arrays", [
    (lambda a: T["cov"](a), (any_(3, 5),)),
    (lambda a: T["cov"](a, correction=0), (any_(6),)),
    (lambda a: T["cov"](a, fweights=Tensor(np.array([1, 3, 2, 1]))), (any_(2, 4),)),
    (lambda a, w: T["cov"](a, aweights=w * w + 0.5), (any_(2, 4), any_(4))),
    (lambda a, w: T["cov"](a, fweights=Tensor(np.array([2, 1, 1, 3])), aweights=w * w + 0.5, correction=2),
     (any_(3, 4), any_(4))),
    (lambda a: T["corrcoef"](a), (any_(3, 6),)),
    (lambda a: T["trapezoid"](a), (any_(2, 5),)),
    (lambda a: T["trapz"](a, dx=0.3, dim=0), (any_(4, 2),)),
    (lambda a, x: T["trapezoid"](a, x), (any_(3, 4), any_(4))),
    (lambda a, x: T["cumulative_trapezoid"](a, x, dim=0), (any_(4, 2), any_(4, 2))),
    (lambda a: T["cumulative_trapezoid"](a, dx=2), (any_(5),)),
], ids=["cov", "cov_1d", "cov_fweights", "cov_aweights", "cov_both", "corrcoef", "trapezoid", "trapz_dx",
        "trapezoid_x", "cumulative_x", "cumulative_dx"])
def test_composed_gradients_match_finite_differences(fn, arrays):
    gradcheck(fn, *arrays)


def test_cov_and_corrcoef_agree_with_numpy():
    x = R.randn(4, 9)
    f = R.randint(1, 4, size=9)
    a = R.uniform(0.2, 2.0, size=9)
    assert np.allclose(statistics.cov(Tensor(x))._a, np.cov(x), rtol=1e-12, atol=1e-12)
    assert np.allclose(statistics.cov(Tensor(x), correction=0, fweights=Tensor(f), aweights=Tensor(a))._a,
                       np.cov(x, ddof=0, fweights=f, aweights=a), rtol=1e-12, atol=1e-12)
    assert np.allclose(statistics.corrcoef(Tensor(x))._a, np.corrcoef(x), rtol=1e-12, atol=1e-12)


def test_trapezoid_rules_agree_with_numpy():
    y, x = R.randn(3, 8), np.sort(R.rand(8))
    assert np.allclose(statistics.trapezoid(Tensor(y), Tensor(x))._a, np.trapezoid(y, x))
    assert np.allclose(statistics.trapezoid(Tensor(y), dx=0.25, dim=0)._a, np.trapezoid(y, dx=0.25, axis=0))
    running = statistics.cumulative_trapezoid(Tensor(y), Tensor(x))._a
    assert np.allclose(running[:, -1], np.trapezoid(y, x)) and running.shape == (3, 7)


@pytest.mark.parametrize("bins, low, high", [(10, 0, 0), (7, -1, 1), (1, 0, 0), (64, -3, 0.5)])
def test_histc_counts_every_element_in_range_once(bins, low, high):
    x = R.randn(2000).astype(np.float32)
    counts = statistics.histc(Tensor(x), bins, low, high)._a
    lo, hi = (x.min(), x.max()) if low == high else (low, high)
    assert counts.dtype == np.float32 and counts.shape == (bins,)
    assert counts.sum() == np.count_nonzero((x >= np.float32(lo)) & (x <= np.float32(hi)))
    reference, _ = np.histogram(x, bins, (lo, hi))
    assert np.abs(counts - reference).sum() <= 2        # only elements within an ulp of an edge may move


def test_isin_is_numpys_membership_with_invert():
    a, b = R.randint(0, 6, size=(3, 4)), R.randint(0, 6, size=5)
    assert np.array_equal(statistics.isin(Tensor(a), Tensor(b))._a, np.isin(a, b))
    assert np.array_equal(statistics.isin(Tensor(a), Tensor(b), invert=True)._a, ~np.isin(a, b))
