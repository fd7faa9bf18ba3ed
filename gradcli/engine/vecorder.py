"""PyTorch's CPU reduction orders other than its cascade sum: vec::reduce_all's lane accumulators (the
softmax kernels' row sums) and the sequential loops of its non-last-dim kernels (docs/numerics.md,
"Reductions other than sum")."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine.rng import _fma32 as fma32, _fma64 as fma64

# The vector width of the AVX512 kernels PyTorch runs on this machine, in bytes: 16 float32 or 8 float64
# lanes. (An AVX2-only CPU runs 8 and 4 lanes and gets other last bits from these kernels.)
_VECTOR_BYTES = 64

# at::internal::GRAIN_SIZE: the element count above which ATen's CPU loops split the work between threads
GRAIN_SIZE = 32768


def lanes_of(dtype) -> int:
    return _VECTOR_BYTES // np.dtype(dtype).itemsize


def lane_sum(a: np.ndarray) -> np.ndarray:
    """vec::reduce_all(+) over the last axis of `a` (any leading shape): lane j of a vector accumulator adds
    elements j, j+V, j+2V, ... in order, starting from the first vector (no zero); the ragged tail adds into
    the low lanes; then the lanes are combined: float32 by halving (lane i + lane i+V/2, ... down to one,
    the AVX512 shuffle tree), float64 left to right. A row shorter than V is summed left to right."""
    n = a.shape[-1]
    v = lanes_of(a.dtype)
    if n < v:
        if n <= 2:
            return a[..., 0] + a[..., 1] if n == 2 else a[..., 0].copy()
        return np.add.accumulate(a, axis=-1)[..., -1]
    whole = n - n % v
    lead = a.shape[:-1]
    # a reduction over a non-innermost axis: numpy walks it in order, one running sum per lane
    acc = np.add.reduce(a[..., :whole].reshape(lead + (whole // v, v)), axis=-2)
    if whole < n:
        acc[..., :n - whole] += a[..., whole:]
    if a.dtype == np.float32:
        while v > 1:
            v //= 2
            acc = acc[..., :v] + acc[..., v:]
        return acc[..., 0]
    return np.add.accumulate(acc, axis=-1)[..., -1]


def lane_sum_along(a: np.ndarray, axis: int) -> np.ndarray:
    """lane_sum along `axis`, keeping it as a dim of size 1."""
    if axis == a.ndim - 1 or a.ndim == 0:
        return lane_sum(a.reshape(a.shape or (1,)))[..., None].reshape(a.shape[:-1] + (1,) if a.ndim else ())
    return np.expand_dims(lane_sum(np.moveaxis(a, axis, -1)), axis)


def seq_sum(a: np.ndarray, axis: int) -> np.ndarray:
    """A left-to-right sum along `axis` (kept, size 1): the non-last-dim kernels' one accumulator per
    position, from zero (0 + x is x for the sums here, which never meet -0)."""
    if a.shape[axis] == 1:
        return a.copy()
    return np.take(np.add.accumulate(a, axis=axis), [-1], axis=axis)


def seq_fma_sum(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """sum += a * b along `axis` (kept, size 1), each step a fused multiply-add from zero: the non-last-dim
    softmax backward's accumulator (GCC contracts its vector and scalar loops alike)."""
    fma = fma32 if a.dtype == np.float32 else fma64
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    acc = a[0] * b[0]
    for k in range(1, a.shape[0]):
        acc = fma(a[k], b[k], acc)
    return np.expand_dims(np.asarray(acc, dtype=a.dtype), axis)


def memory_order(a: np.ndarray) -> np.ndarray:
    """The elements of `a` as TensorIterator visits them: its dims sorted by stride, innermost last."""
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    return np.transpose(a, order).reshape(-1)


def centred_square_sum(x: np.ndarray, mean) -> np.float64:
    """std_var_all_cpu's sum of (x - mean)**2 in double, a running sum over the elements in memory order;
    above GRAIN_SIZE elements the two threads of at::parallel_reduce take one half each (the first
    ceil(n/2) and the rest) and their sums are added to zero in thread order."""
    dx = memory_order(x).astype(np.float64) - np.float64(mean)
    sq = dx * dx
    if sq.size <= GRAIN_SIZE:
        return np.add.accumulate(sq)[-1]
    half = -(-sq.size // 2)
    return (np.float64(0) + np.add.accumulate(sq[:half])[-1]) + np.add.accumulate(sq[half:])[-1]


def welford_m2(x: np.ndarray, axis: tuple, keepdim: bool) -> np.ndarray:
    """WelfordOps's M2 in double over the reduced dims of a float64 `x`, one output at a time as
    binary_kernel_reduce runs it: each element in turn, mean += (v - mean) / k, m2 += delta * (v - mean)
    (plain multiply and add: no fused multiply-add in this loop), the reduced dims walked in memory order."""
    kept = [d for d in range(x.ndim) if d not in axis]
    inner = sorted(axis, key=lambda d: -abs(x.strides[d]))
    rows = np.transpose(x, kept + inner).reshape(-1, math.prod(x.shape[d] for d in axis))
    mean = np.zeros(rows.shape[0])
    m2 = np.zeros(rows.shape[0])
    for k in range(rows.shape[1]):
        v = rows[:, k]
        delta = v - mean
        mean = mean + delta / float(k + 1)
        m2 = m2 + delta * (v - mean)
    shape = tuple(1 if d in axis else x.shape[d] for d in range(x.ndim)) if keepdim else tuple(
        x.shape[d] for d in kept)
    return m2.reshape(shape)


def reduced_rows(x: np.ndarray, axis: tuple):
    """The elements each output of a reduction over `axis` takes, as rows of a 2-d array in the order
    TensorIterator visits them (the reduced dims by stride, innermost last), and whether the reduction
    runs along the innermost memory dim (is_reduce_lastdim: one reduced dim, or all of a dense array)."""
    if len(axis) == x.ndim:
        dense = memory_order_view(x).flags.c_contiguous
        return memory_order(x)[None], dense and x.size > 0
    kept = [d for d in range(x.ndim) if d not in axis]
    inner = sorted(axis, key=lambda d: -abs(x.strides[d]))
    rows = np.transpose(x, kept + inner).reshape(-1, math.prod(x.shape[d] for d in axis))
    lastdim = len(axis) == 1 and x.strides[axis[0]] == x.itemsize and all(
        abs(x.strides[d]) > x.itemsize or x.shape[d] == 1 for d in kept)
    return rows, lastdim


def memory_order_view(a: np.ndarray) -> np.ndarray:
    return np.transpose(a, sorted(range(a.ndim), key=lambda d: -abs(a.strides[d])))


def norm2_squares(rows: np.ndarray, lastdim: bool) -> np.ndarray:
    """The sum of squares of linalg.vector_norm(p=2) per row. Along the innermost dim, the AVX2 kernel it
    runs on this machine: 8 float32 (4 float64) lanes of rounded squares, the lanes added left to right,
    then the tail: in float32 a block of 4 rounded squares added in order when 4 or more remain (GCC's
    vectorised tail), the rest as fused multiply-adds. Elsewhere (binary_kernel_reduce's NormTwoOps): a
    running sum of rounded squares."""
    if not lastdim:
        return serial_sum(rows * rows)
    n = rows.shape[1]
    v = 8 if rows.dtype == np.float32 else 4
    whole = n - n % v
    if whole:
        body = rows[:, :whole]
        acc = np.add.reduce((body * body).reshape(rows.shape[0], -1, v), axis=1)
        total = np.add.accumulate(acc, axis=1)[:, -1]
    else:
        total = np.zeros(rows.shape[0], rows.dtype)
    d = whole
    if rows.dtype == np.float32 and n - d >= 4:
        for _ in range(4):
            total = total + rows[:, d] * rows[:, d]
            d += 1
    fma = fma32 if rows.dtype == np.float32 else fma64
    for k in range(d, n):
        total = np.asarray(fma(rows[:, k], rows[:, k], total), dtype=rows.dtype)
    return total


def serial_sum(rows: np.ndarray) -> np.ndarray:
    """binary_kernel_reduce's running sum per row (NormOneOps, NormOps): from zero, element by element; a
    single output of more than GRAIN_SIZE elements is split between the two threads (first ceil(n/2),
    then the rest), their sums added to zero in order."""
    n = rows.shape[1]
    if n == 0:
        return np.zeros(rows.shape[0], rows.dtype)
    if rows.shape[0] == 1 and n > GRAIN_SIZE:
        half = -(-n // 2)
        zero = rows.dtype.type(0)
        return (zero + np.add.accumulate(rows[:, :half], axis=1)[:, -1]) + np.add.accumulate(rows[:, half:], axis=1)[:, -1]
    return np.add.accumulate(rows, axis=1)[:, -1]


def _avx2_lanes(dtype) -> int:
    """The vector width of ReduceOpsKernel.cpp's kernels on this machine: PyTorch dispatches them to their
    AVX2 build (8 float32, 4 float64 lanes), as the norm and prod results show."""
    return 32 // np.dtype(dtype).itemsize


def product_rows(rows: np.ndarray, lastdim: bool) -> np.ndarray:
    """prod's binary_kernel_reduce_vec per row. Along the innermost memory dim (vectorized_inner_reduction):
    blocks of 4 vectors multiplied into 4 vector accumulators, those combined as (a0*a1)*(a2*a3), the lanes
    multiplied left to right, then the tail element by element; a single output of more than GRAIN_SIZE
    elements is two halves done so, multiplied in order (two_pass_reduction). Elsewhere: a running product."""
    if not lastdim:
        return np.multiply.accumulate(rows, axis=1)[:, -1] if rows.shape[1] else np.ones(rows.shape[0], rows.dtype)
    n = rows.shape[1]
    if rows.shape[0] == 1 and n > GRAIN_SIZE:
        half = -(-n // 2)
        return product_rows(rows[:, :half], True) * product_rows(rows[:, half:], True)
    v = _avx2_lanes(rows.dtype)
    whole = n - n % (4 * v)
    if not whole:
        return np.multiply.accumulate(rows, axis=1)[:, -1] if n else np.ones(rows.shape[0], rows.dtype)
    acc = np.multiply.reduce(rows[:, :whole].reshape(rows.shape[0], -1, 4, v), axis=1)
    lanes = (acc[:, 0] * acc[:, 1]) * (acc[:, 2] * acc[:, 3])
    return np.multiply.accumulate(np.concatenate([lanes, rows[:, whole:]], axis=1), axis=1)[:, -1]
