"""nll_loss's cascade sums computed a segment at a time (ops.nn._segment_sums, the path without ignored
samples) equal, bit for bit, the sample-at-a-time loop that mirrors PyTorch's nll_loss_out_frame
(ops.nn.cascade_loop, the path with them), for batch sizes around the cascade's boundaries (16, 256, ...),
float32 and float64, with and without class weights."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.ops import nn


@pytest.mark.parametrize("batch", [1, 2, 15, 16, 17, 32, 33, 255, 256, 257, 513, 4097])
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
