"""The attention rows (ScaledDotProductFlashAttentionForCpuBackward0, SafeSoftmaxBackward0) against finite
differences, the flash kernel's pieces (exp_u20, the block loop) against float64 references, and the path
PyTorch's CPU takes for each kind of input. Values and messages against PyTorch 2.13 are the engine cases in
tests/engine_cases/attention.txt and transformer.txt."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine.ops import attention
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, gradcheck


def _mask(*shape):
    return Tensor(np.random.default_rng(3).normal(size=shape))


# PyTorch has no forward-mode formula for the flash kernel (its message; tests/test_forward_rows.py)
FLASH_FORWARD = {"raises_unimplemented": "_scaled_dot_product_flash_attention_for_cpu"}

# row -> list of (function of float64 leaves, input arrays[, forward-mode options])
CHECKS = {
    attention.FLASH: [
        (lambda q, k, v: attention.scaled_dot_product_attention(q, k, v), (any_(2, 2, 3, 4), any_(2, 2, 5, 4),
                                                                        any_(2, 2, 5, 4)), FLASH_FORWARD),
        (lambda q, k, v: attention.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
         (any_(1, 2, 6, 3), any_(1, 2, 4, 3), any_(1, 2, 4, 3)), FLASH_FORWARD),
        (lambda q, k, v: attention.scaled_dot_product_attention(q, k, v, attn_mask=_mask(3, 5)),
         (any_(1, 1, 3, 2), any_(1, 1, 5, 2), any_(1, 1, 5, 2)), FLASH_FORWARD),
        (lambda q, k, v: attention.scaled_dot_product_attention(q, k, v, enable_gqa=True),      # 2 heads a group
         (any_(1, 4, 3, 2), any_(1, 2, 5, 2), any_(1, 2, 5, 2)), FLASH_FORWARD),
    ],
    attention.SAFE_SOFTMAX: [
        (lambda a: attention.safe_softmax(a, -1), (any_(3, 4),)),
        (lambda a: attention.safe_softmax(a, 0) * 2.0, (any_(2, 3, 2),)),
    ],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda r: r.node)
def test_rows_match_finite_differences(row):
    for fn, arrays, *_ in CHECKS[row]:
        gradcheck(fn, *arrays)


def test_exp_u20_is_close_to_exp_and_exact_at_zero():
    # (below about -86.6 its 2^(n-1) has a zero exponent field: PyTorch's exp_u20 gives 0 there, as here)
    x = np.linspace(-86.5, 88, 200001, dtype=np.float32)
    got = attention.exp_u20(x).astype(np.float64)
    want = np.exp(x.astype(np.float64))
    assert np.max(np.abs(got - want) / want) < 25 * 2.0 ** -23       # PyTorch documents 20 ulp
    assert attention.exp_u20(np.float32([0.0]))[0] == 1.0
    assert attention.exp_u20(np.float32([-np.inf, -100.0, -87.0])).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("L, S, causal", [(3, 5, False), (70, 600, False), (45, 700, True), (200, 30, True)])
def test_flash_blocks_agree_with_plain_softmax(L, S, causal):
    """Query blocks of 32/64 and key blocks of 512 with the online softmax give the plain formula's values."""
    rng = np.random.default_rng(L + S)
    q, k, v = (rng.normal(size=(1, 2, n, 8)) for n in (L, S, S))
    out, lse = attention.flash_forward(q, k, v, None, causal, 8 ** -0.5)
    scores = q @ np.swapaxes(k, -1, -2) * 8 ** -0.5
    if causal:
        scores = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, scores)
    top = scores.max(-1, keepdims=True)
    e = np.exp(scores - top)
    want = e / e.sum(-1, keepdims=True) @ v
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse, (top + np.log(e.sum(-1, keepdims=True)))[..., 0], rtol=1e-12)
    g = rng.normal(size=out.shape)
    gq, gk, gv = attention.flash_backward(g, q, k, v, out, lse, None, causal, 8 ** -0.5)
    p = e / e.sum(-1, keepdims=True)
    gp = g @ np.swapaxes(v, -1, -2)
    gs = p * (gp - (gp * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(gv, np.swapaxes(p, -1, -2) @ g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gq, gs @ k * 8 ** -0.5, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gk, np.swapaxes(gs, -1, -2) @ q * 8 ** -0.5, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("source, node", [
    ("q = torch.randn(1, 2, 3, 4, requires_grad=True); o = F.scaled_dot_product_attention(q, q, q)",
     "ScaledDotProductFlashAttentionForCpuBackward0"),
    ("q = torch.randn(2, 3, 4, requires_grad=True); o = F.scaled_dot_product_attention(q, q, q)",
     "UnsafeViewBackward0"),
    ("q = torch.randn(3, 4, requires_grad=True); o = F.scaled_dot_product_attention(q, q, q)", "MmBackward0"),
    ("q = torch.randn(1, 2, 3, 4, requires_grad=True); o = F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)",
     "UnsafeViewBackward0"),
    ("q = torch.randn(1, 2, 3, 4, requires_grad=True); m = torch.zeros(2, 3, 3)\n"
     "o = F.scaled_dot_product_attention(q, q, q, attn_mask=m)", "UnsafeViewBackward0"),
    ("q = torch.randn(1, 2, 3, 4, requires_grad=True); v = torch.randn(1, 2, 3, 5)\n"
     "o = F.scaled_dot_product_attention(q, q, v)", "UnsafeViewBackward0"),
])
def test_the_path_taken(source, node):
    r = run_script("import torch\nimport torch.nn.functional as F\n" + source.replace("; ", "\n")
                   + "\nprint(o.grad_fn.name())\n")
    assert r.error is None, r.error
    assert r.out.strip() == node


def test_float16_is_refused_honestly():
    r = run_script("import torch\nimport torch.nn.functional as F\nq = torch.ones(1, 1, 2, 2, dtype=torch.float16)\n"
                   "F.scaled_dot_product_attention(q, q, q)\n")
    assert "gradcli does not implement scaled_dot_product_attention for float16" in str(r.error)
