"""nll_loss's cascade sums computed a segment at a time (ops.nn._segment_sums, the path without ignored
samples) equal, bit for bit, the sample-at-a-time loop that mirrors PyTorch's nll_loss_out_frame
(ops.nn.cascade_loop, the path with them), for batch sizes around the cascade's boundaries (16, 256, ...),
float32 and float64, with and without class weights."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import nn


@pytest.mark.parametrize("batch", [0, 1, 2, 15, 16, 17, 32, 33, 255, 256, 257, 513, 4097])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_segment_sums_equal_the_loop(batch, dtype, weighted):
    rs = np.random.RandomState(batch)
    classes = 5
    x = (rs.standard_normal((batch, classes)) * 1000).astype(dtype)
    t = rs.randint(0, classes, batch).astype(np.int64)
    w = rs.uniform(0.1, 2, classes).astype(dtype) if weighted else None
    dt = x.dtype.type
    picked_w = None if w is None else w[t]
    fast = nn._segment_sums(x, t, picked_w, dt)
    slow = nn.cascade_loop(x, t, w, -100, dt)
    assert [np.asarray(v, dtype).tobytes() for v in fast] == [np.asarray(v, dtype).tobytes() for v in slow]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("negate", [False, True])
def test_every_small_batch_sums_as_the_loop_signed_zeros_included(dtype, negate):
    """_cascade takes a shortcut below 2**(2*power) samples (ops.nn._small_cascade); every batch size up
    to past it, with zeros of both signs among the terms and whole runs of zeros, gives the loop's bits."""
    rs = np.random.RandomState(7)
    for batch in range(0, 300):
        for zeros in ("none", "some", "all", "negative"):
            terms = (rs.standard_normal(batch) * 100).astype(dtype)
            if zeros == "some":
                terms[rs.random_sample(batch) < 0.3] = 0.0
            elif zeros == "all":
                terms[:] = 0.0
            elif zeros == "negative":
                terms[:] = -0.0
                terms[rs.random_sample(batch) < 0.2] = 1.5
            dt = np.dtype(dtype).type
            rows = terms.reshape(-1, 1)
            t = np.zeros(batch, np.int64)
            power = nn._power(batch)
            slow = nn.cascade_loop(-rows if negate else rows, t, None, -100, dt)[0]
            fast = nn._cascade(terms, power, dt, negate=not negate)
            assert np.asarray(fast, dtype).tobytes() == np.asarray(slow, dtype).tobytes(), (batch, zeros)
