"""The recurrent layers' rows (UnsafeSplitBackward0, TransposeBackward1) against finite differences, whole
layers against the values and graphs PyTorch 2.13 gives (checked with the oracle when the tests were
written), and their numerics: float64 layers agree with a reference written out in numpy to a few ulp,
float32 ones (BLAS, vector math, oneDNN in PyTorch) within a small tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine import autograd
from gradcli.engine.backward import grad
from gradcli.engine.ops import rnn
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, gradcheck

# row -> list of (function of float64 leaves, input arrays)
CHECKS = {
    rnn.TRANSPOSE_: [(lambda a: rnn.transpose_(a * 1.0, 0, 1), (any_(2, 3, 4),))],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda r: r.node)
def test_rows_match_finite_differences(row):
    for fn, arrays in CHECKS[row]:
        gradcheck(fn, *arrays)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_reference(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One LSTM layer in numpy float64: PyTorch's gate order (input, forget, cell, output)."""
    outs = []
    for t in range(x.shape[0]):
        gates = h @ w_hh.T + b_hh + (x[t] @ w_ih.T + b_ih)
        i, f, g, o = np.split(gates, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def _gru_reference(x, h, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        ir, iz, inn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
        r, z = _sigmoid(hr + ir), _sigmoid(hz + iz)
        n = np.tanh(inn + hn * r)
        h = (h - n) * z + n
        outs.append(h)
    return np.stack(outs), h


def _weights(rs, gates, inputs, hidden, dtype):
    return [rs.uniform(-0.5, 0.5, size=s).astype(dtype) for s in
            ((gates * hidden, inputs), (gates * hidden, hidden), (gates * hidden,), (gates * hidden,))]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-14), (np.float32, 2e-6)])
@pytest.mark.parametrize("steps, batch, inputs, hidden", [(1, 1, 1, 1), (5, 3, 4, 6), (9, 2, 7, 3)])
def test_lstm_layers_match_the_reference(dtype, rtol, steps, batch, inputs, hidden):
    rs = np.random.RandomState(steps * 100 + hidden)
    x = rs.standard_normal((steps, batch, inputs)).astype(dtype)
    h0, c0 = (rs.standard_normal((1, batch, hidden)).astype(dtype) for _ in range(2))
    w = _weights(rs, 4, inputs, hidden, dtype)
    out, h, c = rnn.lstm(Tensor(x), Tensor(h0), Tensor(c0), [rnn.Params(*map(Tensor, w))], 1, 0.0, False, False,
                         False)
    ref = _lstm_reference(*(a.astype(np.float64) for a in (x, h0[0], c0[0], *w)))
    for got, want in zip((out, h, c), ref):
        np.testing.assert_allclose(got._a.reshape(want.shape), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-14), (np.float32, 2e-6)])
def test_gru_layers_match_the_reference(dtype, rtol):
    rs = np.random.RandomState(2)
    x = rs.standard_normal((6, 3, 4)).astype(dtype)
    h0 = rs.standard_normal((1, 3, 5)).astype(dtype)
    w = _weights(rs, 3, 4, 5, dtype)
    out, h = rnn.rnn("GRU", Tensor(x), Tensor(h0), [rnn.Params(*map(Tensor, w))], 1, 0.0, False, False, False)
    ref = _gru_reference(*(a.astype(np.float64) for a in (x, h0[0], *w)))
    np.testing.assert_allclose(out._a, ref[0], rtol=rtol, atol=rtol)


def _leaf(a):
    t = Tensor(np.array(a))
    t.requires_grad = True
    return t


@pytest.mark.parametrize("reverse", [False, True])
def test_onednn_layer_backward_matches_the_decomposition(reverse):
    """The float32 LSTM layer node's backward (one call for the whole sequence) gives what the op-by-op
    graph gives, in the plain backward and under create_graph."""
    rs = np.random.RandomState(5)
    x = rs.standard_normal((4, 2, 3)).astype(np.float32)
    h0, c0 = (rs.standard_normal((2, 5)).astype(np.float32) for _ in range(2))
    w = _weights(rs, 4, 3, 5, np.float32)
    fused = [_leaf(a) for a in (x, *w, h0, c0)]
    out, h, c = rnn.lstm_layer(*fused, reverse, True)
    loss = (out * out).sum() + (h * 3.0).sum() + (c * c).sum()
    fused_grads = grad(loss, fused)
    plain = [_leaf(a.astype(np.float64)) for a in (x, *w, h0, c0)]
    xs = plain[0]
    params = rnn.Params(*plain[1:5])
    steps = [xs[t] for t in range(4)]
    order = steps[::-1] if reverse else steps
    hidden = (plain[5], plain[6])
    outs = []
    for s in order:
        hidden = rnn.lstm_cell_step(s, hidden, params, False)
        outs.append(hidden[0])
    if reverse:
        outs = outs[::-1]
    total = sum(((o * o).sum() for o in outs), Tensor(np.array(0.0))) + (hidden[0] * 3.0).sum() + \
        (hidden[1] * hidden[1]).sum()
    plain_grads = grad(total, plain)
    for got, want in zip(fused_grads, plain_grads):
        np.testing.assert_allclose(got._a, want._a, rtol=2e-4, atol=2e-5)
    with autograd.enable_grad():
        out, h, c = rnn.lstm_layer(*fused, reverse, True)
        (gx,) = grad((out * out).sum(), [fused[0]], create_graph=True)
    assert gx.grad_fn.op.node == "CatBackward0"


def test_lstm_graph_and_values_as_pytorch():
    out = run_script(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\nm = nn.LSTM(2, 3)\n"
        "out, (h, c) = m(torch.ones(2, 1, 2))\nprint(out.grad_fn.name(), h.grad_fn.next_functions[0][1], "
        "c.grad_fn.next_functions[0][1])\nprint(m.bias_ih_l0)\nprint(out.detach().round(decimals=4))\n")
    # PyTorch 2.13's output for the same script
    assert out.out == ("MkldnnRnnLayerBackward0 1 2\n"
                       "Parameter containing:\n"
                       "tensor([ 0.2612,  0.2322, -0.3420,  0.1744,  0.3169, -0.0729,  0.0220,  0.1338,\n"
                       "         0.3582,  0.5544, -0.4449, -0.2116], requires_grad=True)\n"
                       "tensor([[[-0.2693, -0.1240,  0.0744]],\n\n        [[-0.3889, -0.1919,  0.1183]]])\n")


@pytest.mark.parametrize("line", [
    "print(vars(nn.LSTM(2, 3))['_flat_weight_refs'][0].__callback__)",
    "print(nn.LSTM(2, 3)(torch.ones(2, 1, 2))[0].grad_fn.run)",
    "print(nn.LSTM(2, 3)(torch.ones(2, 1, 2))[0].grad_fn.saved)",
    "print(nn.GRU(2, 3).forward.__globals__)",
    "print(nn.RNN(2, 3)._params.__func__)",
])
def test_scripts_reach_nothing_behind_the_layers(line):
    result = run_script(f"import torch\nfrom torch import nn\n{line}\n")
    assert result.error is not None and result.out == ""


def test_a_huge_layer_is_refused_by_the_memory_budget():
    result = run_script("import torch\nfrom torch import nn\nm = nn.LSTM(100000, 100000)\n")
    assert result.error is not None and "memory" in str(result.error).lower()
