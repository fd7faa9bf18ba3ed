"""Gradient checks of torch.fft's rows (gradcli.engine.ops.fft) by tests/test_gradcheck.py's finite differences;
their tangents are checked from the same cases by tests/test_forward_rows.py.

As in tests/test_ops_complexops.py, complex inputs are made from real float64 leaves (torch.complex) and complex
results read through view_as_real, so the differences check PyTorch's convention for complex gradients too.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import complexops as cx, fft
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, row_tests


def _z(re, im):
    return cx.complex_(re, im)


def _out(z):
    return cx.view_as_real(cx.resolve_conj(z))


# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    fft.C2C: [(lambda re, im: _out(fft.fft(_z(re, im))), (any_(5), any_(5))),
              (lambda re, im: _out(fft.ifft(_z(re, im), n=6, norm="ortho")), (any_(4), any_(4))),
              (lambda re, im: _out(fft.fft2(_z(re, im), s=(3, 2), norm="forward")), (any_(2, 3), any_(2, 3))),
              (lambda re, im: _out(fft.ifftn(_z(re, im), dim=0)), (any_(3, 2), any_(3, 2)))],
    fft.R2C: [(lambda x: _out(fft.rfft(x)), (any_(6),)),
              (lambda x: _out(fft.rfft(x, n=5, norm="ortho")), (any_(7),)),
              (lambda x: _out(fft.fft(x, norm="forward")), (any_(5),)),
              (lambda x: _out(fft.ifft(x)), (any_(4),)),
              (lambda x: _out(fft.rfft2(x)), (any_(3, 4),)),
              (lambda x: _out(fft.ihfft2(x, norm="ortho")), (any_(2, 5),)),
              (lambda x: _out(fft.ihfft(x, dim=0)), (any_(4, 2),))],
    fft.C2R: [(lambda re, im: fft.irfft(_z(re, im)), (any_(4), any_(4))),
              (lambda re, im: fft.irfft(_z(re, im), n=5, norm="ortho"), (any_(3), any_(3))),
              (lambda re, im: fft.hfft(_z(re, im), n=7), (any_(4), any_(4))),
              (lambda re, im: fft.irfft2(_z(re, im)), (any_(3, 3), any_(3, 3))),
              (lambda re, im: fft.hfftn(_z(re, im), s=(2, 4), norm="forward"), (any_(2, 3), any_(2, 3)))],
}

test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


def test_a_transform_and_its_inverse_give_the_input_back():
    x = Tensor(np.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(fft.irfft2(fft.rfft2(x), s=(3, 4))._a, x._a, atol=1e-12)
    np.testing.assert_allclose(fft.ifftn(fft.fftn(x))._a.real, x._a, atol=1e-12)
    np.testing.assert_allclose(fft.hfft(fft.ihfft(x), n=4)._a, x._a, atol=1e-12)


def test_two_sided_spectrum_of_a_real_signal_is_hermitian():
    x = Tensor(np.random.RandomState(0).standard_normal((2, 3, 6)))
    full = fft.fft(x)._a
    assert np.array_equal(full[..., 1:], np.conj(full[..., 1:][..., ::-1]))
    np.testing.assert_allclose(full, np.fft.fft(x._a), atol=1e-12)


def test_second_derivative_through_r2c_and_c2r():
    from gradcli.engine.backward import grad
    x = Tensor(np.array([1.0, -2.0, 0.5, 3.0, 1.5])).requires_grad_()
    y = fft.irfft(fft.rfft(x * x), n=5)
    (g,) = grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()
    # y is x*x itself (the round trip), so the loss is sum(x**4): its gradient 4x**3, and this 12x**2
    np.testing.assert_allclose(g._a, 4 * x._a ** 3, rtol=1e-12)
    np.testing.assert_allclose(x.grad._a, 12 * x._a ** 2, rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: fft.fft(Tensor(np.ones(4)), norm="Ortho"), 'Invalid normalization mode: "Ortho"'),
    (lambda: fft.rfft(Tensor(np.ones(4)), n=0), r"Invalid number of data points \(0\) specified"),
    (lambda: fft.fftn(Tensor(np.ones((2, 2))), dim=(0, 0)), "FFT dims must be unique"),
    (lambda: fft.fft(Tensor(np.ones((0, 4)))), "MKL FFT error"),
])
def test_errors_have_pytorchs_words(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


@pytest.mark.parametrize("fn", [
    lambda x: fft.irfft(fft.rfft(x * x), n=5),
    lambda x: cx.view_as_real(cx.resolve_conj(fft.ifft(x * x, norm="ortho"))),       # ConjBackward0, views
    lambda x: cx.view_as_real(fft.fft2(x.reshape(1, 5) * x, s=(2, 5), norm="forward")),
    lambda x: fft.hfft2(cx.view_as_complex(x[:4].reshape(2, 1, 2).repeat(1, 2, 1)), s=(2, 3)),
], ids=["r2c-c2r", "ifft-of-real", "fft2-of-real", "hfft2"])
def test_second_derivatives_match_finite_differences(fn):
    """gradgradcheck through the three rows and the conjugates and views around them (their formulas run on
    Tensors under create_graph)."""
    from gradcli.engine import gradcheck
    x = Tensor(np.array([1.0, -2.0, 0.5, 3.0, 1.5])).requires_grad_()
    assert gradcheck.gradgradcheck(fn, (x,))
