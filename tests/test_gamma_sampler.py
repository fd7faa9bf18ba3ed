"""torch._standard_gamma's gradient (StandardGammaBackward0: PyTorch's approximation of the implicit
reparameterisation gradient) against the exact implicit derivative -dP(a, x)/da / p(x; a), computed from the
incomplete gamma function's series; and the moments of the sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.engine import distributions, rng
from gradcli.engine.tensor import Tensor


def _lower_regularised(a: float, x: float) -> float:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a + 1) ... (a + k))."""
    term, total = 1.0, 1.0
    for k in range(1, 2000):
        term *= x / (a + k)
        total += term
        if term < 1e-17 * total:
            break
    return math.exp(a * math.log(x) - x - math.lgamma(a + 1)) * total


def _implicit_gradient(a: float, x: float) -> float:
    h = 1e-6 * a
    dp_da = (_lower_regularised(a + h, x) - _lower_regularised(a - h, x)) / (2 * h)
    density = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
    return -dp_da / density


@pytest.mark.parametrize("a, x", [(0.3, 0.05), (0.5, 0.7), (1.0, 1.0), (2.5, 0.5), (2.5, 4.0), (6.0, 3.0),
                                  (6.0, 9.5), (12.0, 11.5), (12.0, 20.0), (30.0, 25.0), (30.0, 31.0)])
def test_the_gradient_is_the_implicit_derivative(a, x):
    got = distributions.standard_gamma_grad_array(np.array([a]), np.array([x]))[0]
    assert got == pytest.approx(_implicit_gradient(a, x), rel=5e-3)


def test_the_samples_have_the_gammas_moments():
    g = rng.Generator().manual_seed(11)
    for a in (0.4, 1.0, 3.5):
        x = distributions.standard_gamma(Tensor(np.full(20000, a)), generator=g)._a
        assert abs(x.mean() - a) < 4 * math.sqrt(a / x.size)
        assert abs(x.var() - a) < 0.1 * a


def test_the_gradient_averages_to_the_means_derivative():
    # E[x] = a for Gamma(a, 1), so the mean of the reparameterised gradient is 1
    g = rng.Generator().manual_seed(12)
    a = np.full(20000, 2.0)
    x = distributions.standard_gamma(Tensor(a), generator=g)._a
    assert abs(distributions.standard_gamma_grad_array(a, x).mean() - 1.0) < 0.02


def test_the_dirichlet_gradient_averages_to_the_means_derivative():
    # x_0 of Dirichlet(a) has mean a_0 / sum(a): its reparameterised gradient averages to that derivative
    g = rng.Generator().manual_seed(13)
    alpha = np.array([1.5, 2.0, 3.5])
    a = Tensor(np.tile(alpha, (20000, 1)))
    x = distributions.sample_dirichlet(a, generator=g)._a
    total = np.full(x.shape, alpha.sum())
    grad = distributions.dirichlet_grad_array(x, a._a, total)
    upstream = np.zeros_like(x)
    upstream[:, 0] = 1.0
    d_alpha = grad * (upstream - (x * upstream).sum(-1, keepdims=True))
    expected = (alpha.sum() - alpha[0]) / alpha.sum() ** 2, -alpha[0] / alpha.sum() ** 2, -alpha[0] / alpha.sum() ** 2
    assert np.allclose(d_alpha.mean(0), expected, atol=0.01)
    assert np.allclose(x.sum(-1), 1.0)
