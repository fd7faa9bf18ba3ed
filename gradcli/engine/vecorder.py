"""PyTorch's CPU reduction orders other than its cascade sum: vec::reduce_all's lane accumulators (the
softmax kernels' row sums) and the sequential loops of its non-last-dim kernels (docs/numerics.md,
"Reductions other than sum")."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine.cascade import GRAIN as GRAIN_SIZE, chunks, thread_ranges
from gradcli.engine.rng import _fma32 as fma32, _fma64 as fma64
from gradcli.engine.state import STATE

# The vector width of the AVX512 kernels PyTorch runs on this machine, in bytes: 16 float32 or 8 float64
# lanes. (An AVX2-only CPU runs 8 and 4 lanes and gets other last bits from these kernels.)
_VECTOR_BYTES = 64


def lanes_of(dtype) -> int:
    return _VECTOR_BYTES // np.dtype(dtype).itemsize


def lane_sum(a: np.ndarray) -> np.ndarray:
    """vec::reduce_all(+) over the last axis of `a` (any leading shape): lane j of a vector accumulator adds
    elements j, j+V, j+2V, ... in order, starting from the first vector (no zero); the ragged tail adds into
    the low lanes; then the lanes are combined: float32 by halving (lane i + lane i+V/2, ... down to one,
    the AVX512 shuffle tree), float64 left to right. A row shorter than V is summed left to right."""
    n = a.shape[-1]
    lead = a.shape[:-1]
    if n == 0 or not a.size:
        return np.zeros(lead, a.dtype)
    v = lanes_of(a.dtype)
    if n < v:
        # left to right along each row: the running sum's last column (one numpy call; a transposed copy
        # and a reduction down its rows, the same sums, cost two and twice the instructions)
        return np.add.accumulate(a, axis=-1)[..., -1]
    # the rows' elements as rows of a contiguous array (element k of every row in row k): each step of the
    # kernel is then one add of two contiguous rows
    cols = np.ascontiguousarray(a.reshape(-1, n).T)
    whole = n - n % v
    acc = running_sum0(cols[:whole].reshape(whole // v, -1)).reshape(v, -1)
    if whole < n:
        acc[:n - whole] += cols[whole:]
    if a.dtype == np.float32:
        while v > 1:
            v //= 2
            acc = acc[:v] + acc[v:]
        return acc[0].reshape(lead)
    return running_sum0(acc).reshape(lead)


def running_sum0(cols: np.ndarray, op=np.add) -> np.ndarray:
    """A left-to-right sum (or `op`) down the rows of a contiguous 2-d array (numpy's reduction over the
    outer axis combines row after row; a single column would get numpy's pairwise sum, so it takes
    accumulate instead)."""
    if cols.shape[1] == 1:
        return op.accumulate(cols[:, 0])[-1:]
    return op.reduce(cols, axis=0)


def running_rows(rows: np.ndarray, op=np.add) -> np.ndarray:
    """running_sum0 along the rows of a 2-d array: one result per row."""
    return running_sum0(np.ascontiguousarray(rows.T), op)


def lane_sum_along(a: np.ndarray, axis: int) -> np.ndarray:
    """lane_sum along `axis`, keeping it as a dim of size 1."""
    if a.ndim and axis == a.ndim - 1 and 0 < a.shape[-1] < lanes_of(a.dtype):
        return np.add.accumulate(a, axis=-1)[..., -1:]          # lane_sum's short rows, the dim kept
    if axis == a.ndim - 1 or a.ndim == 0:
        return lane_sum(a.reshape(a.shape or (1,)))[..., None].reshape(a.shape[:-1] + (1,) if a.ndim else ())
    return np.expand_dims(lane_sum(np.moveaxis(a, axis, -1)), axis)


def seq_sum(a: np.ndarray, axis: int) -> np.ndarray:
    """A left-to-right sum along `axis` (kept, size 1): the non-last-dim kernels' one accumulator per
    position, from zero (0 + x is x for the sums here, which never meet -0)."""
    if a.shape[axis] == 1 or not a.size:
        return np.add.reduce(a, axis=axis, keepdims=True)
    moved = np.moveaxis(a, axis, 0)
    total = running_sum0(np.ascontiguousarray(moved).reshape(a.shape[axis], -1))
    return np.expand_dims(total.reshape(moved.shape[1:]), axis)


def seq_fma_sum(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """sum += a * b along `axis` (kept, size 1), each step a fused multiply-add from zero: the non-last-dim
    softmax backward's accumulator (GCC contracts its vector and scalar loops alike)."""
    if not a.size:
        return np.add.reduce(a * b, axis=axis, keepdims=True)
    fma = fma32 if a.dtype == np.float32 else fma64
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    acc = a[0] * b[0] + a.dtype.type(0)        # fma(a0, b0, 0): the product rounded, and -0.0 + 0 is 0
    for k in range(1, a.shape[0]):
        acc = fma(a[k], b[k], acc)
    return np.expand_dims(np.asanyarray(acc, dtype=a.dtype), axis)


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
    if x.dtype != np.float64:
        # numpy's pairwise double sum differs from the running one by a few double ulps, which the
        # rounding to float32 (or lower) removes: tools/reduce_bits.py finds no case where it shows
        return np.add.reduce(sq)
    total = np.float64(0)
    for begin, end in thread_ranges(sq.size):
        total = total + np.add.accumulate(sq[begin:end])[-1]
    return total


def welford_m2(x: np.ndarray, axis: tuple, keepdim: bool) -> np.ndarray:
    """WelfordOps's M2 in double over the reduced dims of a float64 `x` (see welford)."""
    return welford(x, axis, keepdim, 1)[1]


def welford(x: np.ndarray, axis: tuple, keepdim: bool, threads: int) -> tuple:
    """WelfordOps's (mean, M2) in double over the reduced dims of `x`, one output at a time as
    binary_kernel_reduce runs it: each element in turn, mean += (v - mean) / k, m2 += delta * (v - mean)
    (plain multiply and add: no fused multiply-add in this loop), the reduced dims walked in memory order.
    A reduction to one value of more than the grain size is split into `threads` ranges (at::parallel_for's),
    each reduced from zero, their states then combined in order (WelfordOps::combine)."""
    kept = [d for d in range(x.ndim) if d not in axis]
    shape = tuple(1 if d in axis else x.shape[d] for d in range(x.ndim)) if keepdim else tuple(
        x.shape[d] for d in kept)
    if math.prod(x.shape[d] for d in kept) == 1:
        flat = memory_order(np.asanyarray(x, np.float64)).tolist()
        state = None
        for begin, end in chunks(len(flat), GRAIN_SIZE, threads) if len(flat) > GRAIN_SIZE and threads > 1 \
                else [(0, len(flat))]:
            part = _welford_run(flat[begin:end])
            state = part if state is None else _welford_combine(state, part)
        mean, m2 = state[:2]
        return np.full(shape, mean), np.full(shape, m2)
    inner = sorted(axis, key=lambda d: -abs(x.strides[d]))
    rows = np.transpose(x, kept + inner).reshape(-1, math.prod(x.shape[d] for d in axis)).astype(np.float64)
    mean = np.zeros(rows.shape[0])
    m2 = np.zeros(rows.shape[0])
    for k in range(rows.shape[1]):
        v = rows[:, k]
        delta = v - mean
        mean = mean + delta / float(k + 1)
        m2 = m2 + delta * (v - mean)
    return mean.reshape(shape), m2.reshape(shape)


def _welford_run(values: list) -> tuple:
    """(mean, m2, n) of one range, element by element in Python floats (IEEE doubles, as numpy's)."""
    mean = m2 = 0.0
    k = 0.0
    for v in values:
        k += 1.0
        delta = v - mean
        mean += delta / k
        m2 += delta * (v - mean)
    return mean, m2, k


def _welford_combine(a: tuple, b: tuple) -> tuple:
    if a[2] == 0:
        return b
    if b[2] == 0:
        return a
    delta = b[0] - a[0]
    n = a[2] + b[2]
    nb_over_n = b[2] / n
    return a[0] + delta * nb_over_n, a[1] + b[1] + delta * delta * a[2] * nb_over_n, n


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
    v = _avx2_lanes(rows.dtype)
    whole = n - n % v
    cols = np.ascontiguousarray(rows.T)         # element k of every row in row k
    if whole:
        body = cols[:whole]
        acc = running_sum0((body * body).reshape(whole // v, -1)).reshape(v, -1)
        total = running_sum0(acc)
    else:
        total = np.zeros(rows.shape[0], rows.dtype)
    d = whole
    if rows.dtype == np.float32 and n - d >= 4:
        for _ in range(4):
            total = total + cols[d] * cols[d]
            d += 1
    fma = fma32 if rows.dtype == np.float32 else fma64
    for k in range(d, n):
        total = np.asanyarray(fma(cols[k], cols[k], total), dtype=rows.dtype)
    return total


def serial_sum(rows: np.ndarray) -> np.ndarray:
    """binary_kernel_reduce's running sum per row (NormOneOps, NormOps): from zero, element by element; a
    single output of more than GRAIN_SIZE elements is split between the two threads (first ceil(n/2),
    then the rest), their sums added to zero in order."""
    n = rows.shape[1]
    if n == 0:
        return np.zeros(rows.shape[0], rows.dtype)
    if rows.shape[0] == 1 and n > GRAIN_SIZE and STATE.threads > 1:
        total = rows.dtype.type(0)
        for begin, end in thread_ranges(n):
            total = total + running_rows(rows[:, begin:end])
        return total
    return running_rows(rows)


def _avx2_lanes(dtype) -> int:
    """The vector width of ReduceOpsKernel.cpp's kernels on this machine: PyTorch dispatches them to their
    AVX2 build (8 float32, 4 float64 lanes), as the norm and prod results show."""
    return 32 // np.dtype(dtype).itemsize


def product_all(x: np.ndarray):
    """prod over every element of a float32/float64 `x` (binary_kernel_reduce_vec, one output), as the
    iterator walks it: the dims in memory order, coalesced where they are contiguous together, so the
    innermost run of `run` elements is a row. Each row (or the part of one a thread's range holds) is
    multiplied into the one output in turn: a unit-stride row of 4 vectors or more by the vector scheme of
    product_rows (its lanes' product one factor, then the tail element by element), any other row element
    by element. Above GRAIN_SIZE elements the two threads take the first ceil(n/2) elements and the rest
    (cut wherever that falls in a row) and their products are multiplied in order."""
    view = memory_order_view(x)
    flat = view.reshape(-1)
    run, step = 1, x.itemsize
    for d in range(view.ndim - 1, -1, -1):          # the innermost coalesced run, if it has unit stride
        if view.shape[d] == 1:
            continue
        if view.strides[d] != step:
            break
        run *= view.shape[d]
        step *= view.shape[d]
    ranges = thread_ranges(flat.size) if flat.size > GRAIN_SIZE and STATE.threads > 1 else [(0, flat.size)]
    total = None
    for begin, end in ranges:
        part = np.multiply.accumulate(_product_factors(flat, begin, end, run))[-1]
        total = part if total is None else total * part
    return total


def _product_factors(flat: np.ndarray, begin: int, end: int, run: int) -> np.ndarray:
    """The numbers the output is multiplied by, in order, for the elements begin:end of rows of `run`."""
    v = _avx2_lanes(flat.dtype)
    if run < 4 * v:                     # no row takes the vector loop (run 1: no unit-stride row at all)
        return flat[begin:end]
    first = min(end, -(-begin // run) * run) if begin % run else begin
    last = first + (end - first) // run * run
    parts = [_row_factors(flat[begin:first][None], v)] if first > begin else []
    if last > first:
        parts.append(_row_factors(flat[first:last].reshape(-1, run), v))
    if end > last:
        parts.append(_row_factors(flat[last:end][None], v))
    return np.concatenate(parts)


def _row_factors(rows: np.ndarray, v: int) -> np.ndarray:
    """vectorized_inner_reduction's factors for each row: blocks of 4 vectors multiplied into 4 accumulators,
    combined as (a0*a1)*(a2*a3) and their lanes multiplied left to right into one factor, then the tail."""
    n = rows.shape[1]
    whole = n - n % (4 * v)
    if not whole:
        return rows.reshape(-1)
    acc = np.multiply.reduce(rows[:, :whole].reshape(rows.shape[0], -1, 4, v), axis=1)
    lanes = running_rows((acc[:, 0] * acc[:, 1]) * (acc[:, 2] * acc[:, 3]), np.multiply)
    return np.concatenate([lanes[:, None], rows[:, whole:]], axis=1).reshape(-1)


def product_rows(rows: np.ndarray, lastdim: bool, split: bool = True) -> np.ndarray:
    """prod's binary_kernel_reduce_vec per row. Along the innermost memory dim (vectorized_inner_reduction):
    blocks of 4 vectors multiplied into 4 vector accumulators, those combined as (a0*a1)*(a2*a3), the lanes
    multiplied left to right, then the tail element by element; a single output of more than GRAIN_SIZE
    elements is two halves done so, multiplied in order (two_pass_reduction). Elsewhere: a running product."""
    if not rows.shape[1]:
        return np.ones(rows.shape[0], rows.dtype)
    if not lastdim:
        return running_rows(rows, np.multiply)
    n = rows.shape[1]
    if split and rows.shape[0] == 1 and n > GRAIN_SIZE and STATE.threads > 1:
        total = None
        for begin, end in thread_ranges(n):
            part = product_rows(rows[:, begin:end], True, split=False)
            total = part if total is None else total * part
        return total
    v = _avx2_lanes(rows.dtype)
    whole = n - n % (4 * v)
    if not whole:
        return running_rows(rows, np.multiply)
    acc = np.multiply.reduce(rows[:, :whole].reshape(rows.shape[0], -1, 4, v), axis=1)
    lanes = (acc[:, 0] * acc[:, 1]) * (acc[:, 2] * acc[:, 3])
    return running_rows(np.concatenate([lanes, rows[:, whole:]], axis=1), np.multiply)


def _seq_lanes(acc: np.ndarray, count: int) -> np.ndarray:
    """The 3-argument vec_reduce_all: lanes 0..count-1 added in order."""
    total = acc[..., 0]
    for i in range(1, count):
        total = total + acc[..., i]
    return total


def _tree8(acc: np.ndarray) -> np.ndarray:
    """The 2-argument vec_reduce_all of 8 floats (AVX2's shuffle tree: lane i plus i ^ 4, ^ 2, ^ 1)."""
    lanes = np.arange(8)
    for s in (4, 2, 1):
        acc = acc + acc[..., lanes ^ s]
    return acc[..., 0]


def half_reduce_all(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """vec::reduce_all (sum of a) or vec::map2_reduce_all (sum of a * b) over the last axis of float16
    rows, given as their float32 values: 16 halves per step as two float vectors, the first step's values
    starting two accumulators that the next ones are added into (products fused into the sum), a partial
    last step into the first lanes, the accumulators added and reduced by the vector tree; a row shorter
    than 16 is one partial step whose lanes are added in order. Float32 sums, one per row."""
    n = a.shape[-1]
    f32 = np.float32

    def terms(lo, hi):
        return a[..., lo:hi] if b is None else a[..., lo:hi] * b[..., lo:hi]

    def add(acc, lo, hi):
        if b is None:
            return acc + a[..., lo:hi]
        return fma32(a[..., lo:hi], b[..., lo:hi], acc)
    if n < 16:
        first = np.zeros(a.shape[:-1] + (8,), f32)
        k = min(n, 8)
        first[..., :k] = terms(0, k)
        if n > 8:
            rest = np.zeros_like(first)
            rest[..., :n - 8] = terms(8, n)
            first[..., :n - 8] = first[..., :n - 8] + rest[..., :n - 8]
            return _seq_lanes(first, 8)
        return _seq_lanes(first, n)
    acc0, acc1 = np.array(terms(0, 8), dtype=f32), np.array(terms(8, 16), dtype=f32)
    body = n - n % 16
    for d in range(16, body, 16):
        acc0, acc1 = add(acc0, d, d + 8), add(acc1, d + 8, d + 16)
    r = n - body
    if r > 8:
        acc0 = add(acc0, body, body + 8)
        acc1 = acc1.copy()
        acc1[..., :r - 8] = add(acc1[..., :r - 8], body + 8, n)
    elif r:
        acc0 = acc0.copy()
        acc0[..., :r] = add(acc0[..., :r], body, n)
    return _tree8(acc0 + acc1)
