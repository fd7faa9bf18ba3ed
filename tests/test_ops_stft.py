"""torch.stft and torch.istft (gradcli.engine.ops.stft): their gradients against central finite differences in
float64 (gradcheck, backward and forward mode, and gradgradcheck), the round trip, and the frames they are made
of. Values, chains, errors and gradients are compared with PyTorch by tests/engine_cases/stft.txt."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import gradcheck
from gradcli.engine.ops import complexops as cx, stft
from gradcli.engine.tensor import Tensor
from gradcli.engine.windows import hann_window

R = np.random.RandomState(7)


def _leaf(*shape) -> Tensor:
    return Tensor(R.standard_normal(shape)).requires_grad_()


def _hann(n: int) -> Tensor:
    return hann_window(n, dtype=Tensor(np.zeros(0)).dtype)


def _real(z: Tensor) -> Tensor:
    return cx.view_as_real(z)


# each: a function of float64 leaves giving a real tensor, and the leaves' shapes
CASES = {
    "centred, hann": (lambda x: _real(stft.stft(x, 8, window=_hann(8), return_complex=True)), [(20,)]),
    "hop, short window": (lambda x: _real(stft.stft(x, 8, hop_length=3, win_length=6, window=_hann(6),
                                                    return_complex=True)), [(21,)]),
    "no window, normalized": (lambda x: _real(stft.stft(x, 6, return_complex=True, normalized=True)), [(15,)]),
    "two-sided, not centred": (lambda x: _real(stft.stft(x, 8, window=_hann(8), return_complex=True, center=False,
                                                         onesided=False)), [(19,)]),
    "batch, replicate pad": (lambda x: _real(stft.stft(x, 8, window=_hann(8), return_complex=True,
                                                       pad_mode="replicate")), [(2, 17)]),
    "circular pad": (lambda x: _real(stft.stft(x, 8, window=_hann(8), return_complex=True, pad_mode="circular")),
                     [(17,)]),
    "aligned window": (lambda x: _real(stft.stft(x, 8, win_length=5, window=_hann(5), return_complex=True,
                                                 center=False, align_to_window=True)), [(18,)]),
    "window too": (lambda x, w: _real(stft.stft(x, 8, win_length=6, window=w, return_complex=True)), [(20,), (6,)]),
    "complex signal": (lambda re, im: _real(stft.stft(cx.complex_(re, im), 8, window=_hann(8))), [(16,), (16,)]),
    "real view output": (lambda x: stft.stft(x, 8, window=_hann(8), return_complex=False), [(16,)]),
    "istft": (lambda re, im: stft.istft(cx.complex_(re, im), 8, window=_hann(8)), [(5, 6), (5, 6)]),
    "istft, window and length": (lambda re, im, w: stft.istft(cx.complex_(re, im), 8, win_length=6, window=w + 1,
                                                              length=13), [(5, 6), (5, 6), (6,)]),
    "istft, two-sided, batch": (lambda re, im: stft.istft(cx.complex_(re, im), 6, hop_length=2, window=_hann(6),
                                                          onesided=False, normalized=True), [(2, 6, 5), (2, 6, 5)]),
    "istft to complex": (lambda re, im: _real(stft.istft(cx.complex_(re, im), 4, window=_hann(4) + 0.5,
                                                         return_complex=True, center=False,
                                                         length=12)), [(4, 5), (4, 5)]),     # (zeros past 8)
    "round trip": (lambda x: stft.istft(stft.stft(x, 8, hop_length=2, window=_hann(8), return_complex=True), 8,
                                        hop_length=2, window=_hann(8), length=19), [(19,)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_finite_differences(name):
    fn, shapes = CASES[name]
    inputs = tuple(_leaf(*s) for s in shapes)
    assert gradcheck.gradcheck(fn, inputs, check_forward_ad=True)


@pytest.mark.parametrize("fn, shapes", [
    CASES["centred, hann"], CASES["window too"],
    (lambda x, w: stft.istft(cx.view_as_complex(x), 8, win_length=6, window=w + 1, length=13), [(5, 6, 2), (6,)]),
], ids=["stft", "stft-window", "istft-window"])
def test_second_derivatives_match_finite_differences(fn, shapes):
    """gradgradcheck through the pads, frames, window products, transforms and the overlap-add (a complex input
    made by view_as_complex: gradcli refuses create_graph through torch.complex)."""
    inputs = tuple(_leaf(*s) for s in shapes)
    assert gradcheck.gradgradcheck(fn, inputs)


def test_istft_inverts_stft():
    x = Tensor(R.standard_normal((3, 40)))
    for hop, center in ((4, True), (2, True), (5, False)):
        window = _hann(16) + (0 if center else 0.1)        # (not centred: the ends must not vanish)
        spec = stft.stft(x, 16, hop_length=hop, window=window, return_complex=True, center=center)
        y = stft.istft(spec, 16, hop_length=hop, window=window, center=center, length=None if center else 36)
        np.testing.assert_allclose(y._a, x._a[:, :y._a.shape[1]], atol=1e-12)


def test_each_frame_is_the_transform_of_the_windowed_slice():
    x = R.standard_normal(30)
    window = np.hanning(10)
    spec = stft.stft(Tensor(x), 10, hop_length=3, window=Tensor(window), return_complex=True, center=False)._a
    for m in range(spec.shape[1]):
        np.testing.assert_allclose(spec[:, m], np.fft.rfft(x[3 * m:3 * m + 10] * window), atol=1e-12)


def test_a_frame_gradient_lands_on_the_samples_it_covers():
    """AsStridedBackward0 over overlapping frames: each sample gets the sum over the frames that hold it."""
    from gradcli.engine.ops import arith
    x = Tensor(np.zeros(12)).requires_grad_()
    spec = stft.stft(x, 4, hop_length=2, window=Tensor(np.ones(4)), return_complex=True, center=False)
    arith.mul(cx.real(spec), 1.0).sum().backward()
    # the real parts of a frame's three frequencies sum to 3, 0, 1, 0 times its samples; frames overlap by 2
    np.testing.assert_allclose(x.grad._a, [3, 0, 4, 0, 4, 0, 4, 0, 4, 0, 1, 0])


def test_the_overlap_add_refuses_a_vanishing_envelope():
    spec = Tensor(np.ones((5, 11), np.complex64))
    with pytest.raises(RuntimeError, match=r"window overlap add min: 1\n\[ CPUBoolType\{\} \]$"):
        stft.istft(spec, 8, window=Tensor(np.zeros(8, np.float32)))
