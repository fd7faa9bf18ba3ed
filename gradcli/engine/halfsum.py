"""PyTorch's CPU sum order for float16 and bfloat16 (SumKernel.cpp's cascade_sum with a float accumulator), on C-contiguous
arrays summed over trailing dims: every element, or each row of the last dims.

The kernel is the float32 one (engine/cascade.py) with three differences, read from SumKernel.cpp and checked
against PyTorch 2.13: a vector of the reduced row holds 16 halves, loaded as two float vectors of 8 and added
(InnerSumCastLoadPolicy), so the items the cascade sums are those pair sums; a row shorter than 16 takes the
scalar kernel (four interleaved accumulators, as row_sum); and every value is stored as a half
(CastStoreAccumulate), so with more than one thread each thread's sum of a full reduction is rounded to half
before the slots are summed as a float16 tensor. Other geometries keep numpy's sum, which accumulates in float
and agrees with PyTorch's nearly always (a half rounds most order differences away).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import cascade

_F32 = np.dtype(np.float32)


def row_sums(rows: np.ndarray) -> np.ndarray:
    """vectorized_inner_sum (or scalar_inner_sum below 16) of each row of a (k, n) float16 (bfloat16) array, in
    float."""
    v = rows.astype(_F32)
    k, n = v.shape
    if n < 16:
        return cascade.row_sum(v[:, :, None])[:, 0] if n else np.zeros(k, _F32)
    nv = n // 16
    pairs = v[:, :nv * 16].reshape(k, nv, 2, 8)
    items = pairs[:, :, 0, :] + pairs[:, :, 1, :]
    lanes = cascade.row_sum(items)                                  # (k, 8)
    return cascade._seq(np.concatenate((v[:, nv * 16:], lanes), axis=1), axis=-1)


def plan(x: np.ndarray, dims: tuple, out_shape: tuple, threads: int):
    """A function summing arrays like `x` (float16 or bfloat16, C-contiguous) over `dims` (sorted, trailing) as PyTorch
    does, or None for a geometry this module does not follow."""
    if not x.flags.c_contiguous or dims != tuple(range(x.ndim - len(dims), x.ndim)) or not x.size:
        return None
    half = x.dtype
    n = 1
    for d in dims:
        n *= x.shape[d]
    if n == x.size and n >= cascade.GRAIN and threads > 1:
        ranges = cascade.chunks(n, cascade.GRAIN, threads)

        def split(a):
            v = a.reshape(-1)
            slots = np.zeros(threads, half)
            for t, (b, e) in enumerate(ranges):
                slots[t] = row_sums(v[b:e][None])[0]
            return np.asanyarray(row_sums(slots[None]) + _F32.type(0)).astype(half).reshape(out_shape)
        return split
    shape2 = (x.size // n, n)
    return lambda a: (row_sums(a.reshape(shape2)) + _F32.type(0)).astype(half).reshape(out_shape)
