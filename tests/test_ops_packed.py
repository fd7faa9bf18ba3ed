"""torch.nn.utils.rnn's row (PackPaddedSequenceBackward0) and the packed recurrent layers against finite
differences, and the packing arithmetic against a direct reading of the padded batch."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import packed
from gradcli.engine.ops import rnn
from gradcli.engine.tensor import Tensor
from test_gradcheck import any_, gradcheck

_LENGTHS = Tensor(np.array([3, 2, 2, 1], dtype=np.int64))


def _pack(a, batch_first):
    data, _ = packed.pack_padded(a * 1.0, _LENGTHS, batch_first)
    return data


FORWARD = {"raises_unimplemented": "_pack_padded_sequence"}     # PyTorch has no forward-mode formula for it

# row -> list of (function of float64 leaves, input arrays, options)
CHECKS = {
    packed.PACK_PADDED: [(lambda a: _pack(a, False), (any_(3, 4, 2),), FORWARD),
                         (lambda a: _pack(a, True), (any_(4, 3),), FORWARD),
                         (lambda a: packed.pack_padded_sequence(a, [5, 2], enforce_sorted=False).data.exp(),
                          (any_(3, 2, 2),), FORWARD)],
}


@pytest.mark.parametrize("row", list(CHECKS), ids=lambda r: r.node)
def test_rows_match_finite_differences(row):
    for fn, arrays, _ in CHECKS[row]:
        gradcheck(fn, *arrays)


def test_padding_composes_with_the_gradient():
    seqs = lambda a, b: [a, b]          # noqa: E731
    gradcheck(lambda a, b: packed.pad_sequence(seqs(a, b), batch_first=True, padding_value=3.0,
                                               padding_side="left").sin(), any_(3, 2), any_(1, 2))
    gradcheck(lambda a: packed.pad_packed_sequence(
        packed.pack_padded_sequence(a, [1, 3, 2], batch_first=True, enforce_sorted=False), batch_first=True,
        total_length=4)[0] ** 2, any_(3, 3, 2))


def _params(w_ih, w_hh, b_ih, b_hh):
    return [rnn.Params(w_ih, w_hh, b_ih, b_hh)]


@pytest.mark.parametrize("mode,gates", [("RNN_TANH", 1), ("GRU", 3), ("LSTM", 4)])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_layers_match_finite_differences(mode, gates, bidirectional):
    sizes = Tensor(np.array([3, 2, 2, 1], dtype=np.int64))
    hidden = 2
    directions = 2 if bidirectional else 1

    def run(x, w_ih, w_hh, b_ih, b_hh, h0):
        params = [rnn.Params(w_ih, w_hh, b_ih, b_hh)] * directions
        if mode == "LSTM":
            out, h, c = rnn.lstm_packed(x, sizes, h0, h0 * 0.5, params, 1, 0.0, False, bidirectional)
            return (out.sum(1) + h.sum() + c.sum()).tanh()
        out, h = rnn.rnn_packed(mode, x, sizes, h0, params, 1, 0.0, False, bidirectional)
        return out.sum(1) * h.sum()

    gradcheck(run, any_(8, 3), any_(gates * hidden, 3), any_(gates * hidden, hidden), any_(gates * hidden),
              any_(gates * hidden), any_(directions, 3, hidden))


def test_packed_rows_are_the_padded_batch_read_step_by_step():
    x = np.arange(24.0).reshape(4, 3, 2)       # (time, batch, feature)
    lengths = Tensor(np.array([4, 2, 1], dtype=np.int64))
    data, sizes = packed.pack_padded(Tensor(x), lengths, False)
    expected = [x[t, b] for t in range(4) for b in range(3) if t < [4, 2, 1][b]]
    np.testing.assert_array_equal(data._a, np.array(expected))
    assert sizes._a.tolist() == [3, 2, 1, 1]
    padded, lens = packed.pad_packed(data, sizes, False, -1.0, 5)
    assert lens._a.tolist() == [4, 2, 1]
    back = np.full((5, 3, 2), -1.0)
    for b, n in enumerate([4, 2, 1]):
        back[:n, b] = x[:n, b]
    np.testing.assert_array_equal(padded._a, back)
