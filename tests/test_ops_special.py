"""lgamma, digamma, polygamma, mvlgamma, erfinv and the Bessel functions: the rows without a forward of their
own against finite differences, second derivatives, the series' edge values, and mvlgamma's budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine.ops import igamma, normal, special
from gradcli.engine.tensor import Tensor
from test_gradcheck import _leaf, first_derivative, gradcheck, pos, recorded_names, row_tests


def _polygamma_inplace(a, n):
    b = a * 1
    b.polygamma_(n)
    return b


_NO_ZETA_TANGENT = {"raises_unimplemented": "special_zeta"}

CHECKS = {
    special.POLYGAMMA: [(lambda a: special.polygamma(2, a), (pos(2, 3),)),
                        (lambda a: special.polygamma(3, a * a), (pos(3),))],
    special.POLYGAMMA_: [(lambda a: _polygamma_inplace(a, 1), (pos(2, 3),))],
    special.MVLGAMMA: [(lambda a: special.mvlgamma(a + 2, 3), (pos(2, 3),)),
                       (lambda a: special.mvlgamma(a + 1, 1), (pos(4),))],
    # zeta's gradient for q only (PyTorch's derivative for the order is not implemented)
    special.ZETA: [(lambda q: special.special_zeta(Tensor(np.array([2.0, 3.5, 6.25])), q), (pos(2, 3),),
                    _NO_ZETA_TANGENT),
                   (lambda s, q: special.special_zeta(s + 1.5, q), (pos(3),) * 2,
                    {"raises_not_implemented": "zeta", **_NO_ZETA_TANGENT})],
    special.ZETA_SELF_NUMBER: [(lambda q: special.special_zeta(2.5, q), (pos(2, 3),), _NO_ZETA_TANGENT),
                               (lambda q: special.special_zeta(3, q * q), (pos(4),), _NO_ZETA_TANGENT)],
    special.ZETA_OTHER_NUMBER: [(lambda s: special.special_zeta(s + 1.5, 2.0), (pos(3),),
                                 {"raises_not_implemented": "zeta", **_NO_ZETA_TANGENT})],
    # the incomplete gamma functions' gradient for x only (for a, PyTorch's is not implemented)
    igamma.IGAMMA: [(lambda x: igamma.igamma(Tensor(np.array([0.5, 2.0, 3.5])), x), (pos(2, 3),),
                     {"raises_unimplemented": "igamma"}),
                    (lambda x: igamma.gammainc(Tensor(np.array([[30.0], [250.0]])), x * 30 + 200), (pos(2, 3),),
                     {"raises_unimplemented": "igamma"}),
                    (lambda a, x: igamma.igamma(a, x), (pos(3),) * 2,
                     {"raises_not_implemented": "igamma: input", "raises_unimplemented": "igamma"})],
    igamma.IGAMMAC: [(lambda x: igamma.igammac(Tensor(np.array([0.5, 2.0, 3.5])), x), (pos(2, 3),),
                      {"raises_unimplemented": "igammac"}),
                     (lambda x: igamma.gammaincc(Tensor(np.array([30.0])), x * 20 + 20), (pos(3),),
                      {"raises_unimplemented": "igammac"}),
                     (lambda a, x: igamma.igammac(a, x), (pos(3),) * 2,
                      {"raises_not_implemented": "igammac: input", "raises_unimplemented": "igammac"})],
}

test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)

SMOOTH = [
    ("lgamma", lambda a: special.lgamma(a), (pos(3),)),
    ("digamma", lambda a: special.digamma(a), (pos(3),)),
    ("polygamma", lambda a: special.polygamma(1, a), (pos(3),)),
    ("erfinv", lambda a: special.erfinv(a * 0.3), (pos(3),)),
    ("i0", lambda a: special.i0(a), (pos(3),)),
    ("i0e", lambda a: special.special_i0e(a), (pos(3),)),
    ("i1", lambda a: special.special_i1(a), (pos(3),)),
    ("i1e", lambda a: special.special_i1e(a), (pos(3),)),
    ("mvlgamma", lambda a: special.mvlgamma(a + 1, 2), (pos(3),)),
    ("ndtri", lambda a: normal.ndtri(a * 0.3), (pos(3),)),
    ("log_ndtr", lambda a: normal.log_ndtr(a - 2.5), (pos(3),)),
    ("erfcx", lambda a: normal.erfcx(a - 1.5), (pos(3),)),
    ("zeta", lambda a: special.special_zeta(Tensor(np.array([2.0, 3.5, 6.25])), a), (pos(3),)),
    ("zeta number", lambda a: special.special_zeta(2.5, a), (pos(3),)),
    ("igamma", lambda a: igamma.igamma(Tensor(np.array([0.5, 2.0, 3.5])), a), (pos(3),)),
    ("igammac", lambda a: igamma.igammac(Tensor(np.array([0.5, 2.0, 3.5])), a), (pos(3),)),
]


@pytest.mark.parametrize("name, fn, arrays", SMOOTH, ids=[c[0] for c in SMOOTH])
def test_second_derivatives_match_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_chains_are_pytorchs():
    a = _leaf(pos(3))
    assert recorded_names(special.mvlgamma(a, 2))[:1] == ["MvlgammaBackward0"]
    from gradcli.engine.backward import grad
    g, = grad(special.special_i1(a).sum(), a, create_graph=True)
    assert recorded_names(g)[:3] == ["MulBackward0", "WhereBackward0", "SubBackward0"]


def test_i1_gradient_at_zero_is_a_half():
    a = _leaf(np.array([0.0, 1e-300]))
    special.special_i1(a).sum().backward()
    assert a.grad._a.tolist() == [0.5, 0.5]


def test_the_series_against_known_values():
    x = np.array([1.0, 2.0, 0.5, 10.0])
    euler = 0.5772156649015329
    assert np.allclose(special.digamma_array(x), [-euler, 1 - euler, -euler - 2 * math.log(2), 2.251752589066721])
    assert np.allclose(special.polygamma_array(1, x[:1]), [math.pi ** 2 / 6])
    assert np.allclose(special.polygamma_array(2, x[:1]), [-2 * 1.2020569031595942])
    assert np.allclose(special.erfinv_array(np.array([math.erf(0.3), -math.erf(1.7)])), [0.3, -1.7], rtol=1e-15)
    assert special.erfinv_array(np.array([1.0, -1.0, 1.5]))[:2].tolist() == [math.inf, -math.inf]
    assert np.isnan(special.digamma_array(np.array([-2.0]))).all()
    assert special.lgamma_array(np.array([0.0, -3.0, 1.0])).tolist() == [math.inf, math.inf, 0.0]


def test_float32_digamma_rounds_in_float32():
    x = np.array([0.3, 5.5, 12.0, -2.7], np.float32)
    got = special.digamma_array(x)
    assert got.dtype == np.float32
    assert np.allclose(got, special.digamma_array(x.astype(np.float64)), rtol=2e-6)


def test_mvlgamma_copies_meet_the_budget(small_budget):
    result = run_script("import torch\ntorch.mvlgamma(torch.ones(1000) * 1e6, 10**7)\n")
    assert result.error.kind == "RuntimeError"
    assert "you tried to allocate 40000000000 bytes" in result.error.message
    assert special.mvlgamma(Tensor(np.array([3.0])), 2)._a.dtype == np.float64


def test_erfinv_on_whole_arrays_is_the_element_by_element_value():
    x = np.random.RandomState(5).uniform(-1, 1, 5000).astype(np.float32)
    x[:6] = [0.0, -1.0, 1.0, 0.99999994, 1e-30, np.nan]
    whole = special.erfinv_array(x)
    by_element = special._per_element(special._erfinv64, x).astype(np.float32)
    assert whole.tobytes() == by_element.tobytes()


def test_lgamma_near_its_zeros_keeps_its_relative_accuracy():
    # lgamma(1 + z) ~ -euler z and lgamma(2 + z) ~ (1 - euler) z: the series, not CPython's Lanczos sum
    z = np.array([1e-12, -3e-9, 2.0 ** -40, 0.2, -0.24])
    euler = 0.5772156649015329
    at_one = special.lgamma_array(1.0 + z)
    at_two = special.lgamma_array(2.0 + z)
    z1, z2 = (1.0 + z) - 1.0, (2.0 + z) - 2.0          # the offsets the doubles 1 + z and 2 + z hold
    assert np.allclose(at_one[:3], -euler * z1[:3], rtol=1e-8, atol=0)
    assert np.allclose(at_two[:3], (1 - euler) * z2[:3], rtol=1e-8, atol=0)
    assert np.allclose(at_one[3:], [math.lgamma(1.2), math.lgamma(0.76)], rtol=1e-14)
    assert special.lgamma_array(np.array([1.0, 2.0])).tolist() == [0.0, 0.0]


def test_polynomial_degrees_read_as_x86_64_converts_them():
    from gradcli.engine.ops import polynomials
    n = np.array([3.7, -0.5, np.nan, np.inf, -np.inf, 2.0 ** 63, -2.0 ** 64, 5.0])
    assert polynomials._degree(n).tolist() == [3, 0] + [np.iinfo(np.int64).min] * 5 + [5]
    assert polynomials._degree(np.array([7, -2], np.int32)).tolist() == [7, -2]


def test_polynomial_recurrences_past_the_step_limit_are_refused():
    from gradcli.engine.ops import polynomials
    x = Tensor(np.array([0.5, 3.0]))
    # Legendre polynomials of |x| < 1 have no closed form: n steps
    with pytest.raises(NotImplementedError, match="legendre_polynomial_p for degrees this high"):
        polynomials.legendre_polynomial_p(x, 10 ** 9)
    # x = 3 overflows within a few hundred steps and stops at nan; x = 0.5 takes the closed form cos(n acos x)
    big = polynomials.chebyshev_polynomial_t(Tensor(np.array([3.0, 0.5])), 10 ** 12)._a
    assert np.isnan(big[0]) and abs(big[1]) <= 1
    assert polynomials._fma_float(0.1, 10.0, -1.0) == 5.551115123125783e-17      # one rounding: not 0.0
    assert polynomials._fma_float(2.0, 1e308, -math.inf) == -math.inf


def test_bessel_and_polynomial_results_never_require_grad():
    from gradcli.engine.ops import bessel, polynomials
    a = _leaf(pos(3))
    for fn in (bessel.bessel_j0, bessel.airy_ai, bessel.modified_bessel_k1):
        r = fn(a)
        assert not r.requires_grad and r.grad_fn is None and r._a.dtype == np.float64
    assert not polynomials.hermite_polynomial_he(a, 3).requires_grad


def test_bessel_kernels_against_known_values():
    from gradcli.engine.ops import bessel
    x = np.array([1.0, 2.5, 10.0])
    assert np.allclose(bessel.j0_array(x), [0.7651976865579666, -0.048383776468197996, -0.2459357644513483], rtol=1e-14)
    assert np.allclose(bessel.y1_array(x), [-0.7812128213002887, 0.14591813796678577, 0.24901542420695388], rtol=1e-13)
    assert np.allclose(bessel.k0_array(x), [0.42102443824070834, 0.062347553200366, 1.778006231616918e-05], rtol=1e-14)
    assert np.allclose(bessel.airy_ai_array(np.array([0.0, -1.0, 3.0])),
                       [0.3550280538878172, 0.5355608832923521, 0.006591139357460719], rtol=1e-13)
    assert np.allclose(bessel.spherical_j0_array(np.array([0.1, 3.0])), [math.sin(0.1) / 0.1, math.sin(3.0) / 3.0])
