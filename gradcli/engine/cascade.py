"""PyTorch's CPU sum order, emulated with numpy: TensorIterator's reduction layout and SumKernel's cascade sum.

PyTorch adds float32 and float64 numbers in an order fixed by its algorithm, and that order decides the last
bit of every sum, mean and broadcast-reduced gradient. Three layers decide it (docs/numerics.md, "Sum order"):

1. The iterator. The output's reduced dims get stride 0; dims are sorted so reduced dims come first, then by
   the input's strides (fastest first); neighbouring dims that are contiguous together are merged. Above 32768
   elements and with more than one thread the work is split: a full reduction sums each thread's range into
   its own slot and then sums the slots; a partial one splits the columns of the outermost kept dim.
2. The 2-d loop. Each call sees a plane (size0 x size1) and picks one of four kernels: the reduced dim
   contiguous (vector lanes along the row), the kept dim contiguous (vector lanes across columns), or a scalar
   form of either. Every value a call produces is added to its output (`out += value`, from 0), in order.
3. The cascade. A run of n numbers (or vectors) is summed in chunks of 2^max(4, ceil(log2 n)/4) into one
   accumulator, chunk sums into a second that flushes into a third after as many chunks, and so on for four
   levels; `row_sum` first splits a run into four interleaved accumulators (instruction-level parallelism).

numpy gives the building block: reducing axis 0 of a C-contiguous (k, m) array with m >= 2 adds rows one at a
time, a sequential accumulator per column (a single column would be summed pairwise: it is accumulated
instead). Everything here is a handful of such reductions on reshaped views, chosen once per geometry (a
plan), so a sum costs a few numpy calls: 2-4x numpy's own unordered sum at tutorial sizes. Accumulators
start at +0.0 as PyTorch's do (so an all -0.0 sum is +0.0); integer and other dtypes keep numpy's sum,
which is exact for them; float16 sums over the trailing dims of a contiguous array follow engine/halfsum.py.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import workers
from gradcli.engine.state import DEFAULT_THREADS, STATE

GRAIN = 32768                          # at::internal::GRAIN_SIZE: below it a reduction runs on one thread
MAX_THREADS = 1 << 16                  # a bound on set_num_threads: the split keeps one slot per thread
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}    # one 256-bit vector (the AVX2 kernel)


def _seq(a: np.ndarray, axis: int = -2) -> np.ndarray:
    """Sum along `axis` one element after another. (numpy starts from the first element where PyTorch starts
    from +0.0: that only turns an all-zero sum's +0.0 into -0.0, and sum_array adds +0.0 once at the end.)"""
    if axis == 0 and a.ndim == 2 and a.shape[1] > 1 and a.flags.c_contiguous:
        return _reduce_rows(a, 0)                     # the common case, first
    n = a.shape[axis]
    if n == 1:
        return np.take(a, 0, axis=axis)
    if n == 0:
        axis %= a.ndim
        return np.zeros(a.shape[:axis] + a.shape[axis + 1:], a.dtype)
    axis %= a.ndim
    if axis < a.ndim - 1 and a.shape[-1] >= 2 and a.strides[-1] == a.itemsize:
        # the contiguous last axis is numpy's inner loop, so the reduced axis is an outer one: one add per row
        return _reduce_rows(a, axis)
    b = np.moveaxis(a, axis, 0)
    if b[0].size >= 2:
        return _reduce_rows(np.ascontiguousarray(b), 0)
    # a single lane: numpy would sum it pairwise, so accumulate (always sequential) and take the end
    return np.add.accumulate(b, axis=0)[-1]


_reduce_rows = np.add.reduce
_accumulate_run = np.add.accumulate
_join = np.concatenate


def _ceil_log2(n: int) -> int:
    return (n - 1).bit_length() if n > 1 else 0


def cascade(a: np.ndarray) -> np.ndarray:
    """multi_row_sum: (..., n, lanes) -> (..., lanes), each lane summed over n in four-level chunks: the items
    past the last whole chunk, then each level's unflushed partial sum, added in that order."""
    n = a.shape[-2]
    step = 1 << max(4, _ceil_log2(n) // 4)
    if n < step:
        return _seq(a)
    lead, lanes = a.shape[:-2], a.shape[-1]
    full = n // step * step
    chunks = _seq(a[..., :full, :].reshape(lead + (full // step, step, lanes)))
    if full // step < step:                            # one level: the chunk sums are never flushed
        return _seq(a[..., full:, :]) + _seq(chunks) if full < n else _seq(chunks)
    total = _seq(a[..., full:, :])
    values = chunks
    for _level in range(2):
        count = values.shape[-2]
        whole = count // step * step
        total = total + _seq(values[..., whole:, :])
        if not whole:
            return total
        values = _seq(values[..., :whole, :].reshape(lead + (whole // step, step, lanes)))
    return total + _seq(values)                        # the fourth level never flushes


def row_sum(a: np.ndarray) -> np.ndarray:
    """row_sum: (..., n, lanes) -> (..., lanes): four interleaved accumulators (a cascade each), the leftover
    items added to the first, then the other three added to it in order."""
    n = a.shape[-2]
    lead, lanes = a.shape[:-2], a.shape[-1]
    quads = n // 4
    if not quads:
        return _seq(a)
    parts = cascade(a[..., :4 * quads, :].reshape(lead + (quads, 4 * lanes))).reshape(lead + (4, lanes))
    if 4 * quads < n:                                  # chain: first accumulator, leftovers, the other three
        parts = _join((parts[..., :1, :], a[..., 4 * quads:, :], parts[..., 1:, :]), axis=-2)
    return _seq(parts)


def _inner_vectorised(p: np.ndarray, lanes: int) -> np.ndarray:
    """vectorized_inner_sum: rows (..., size0) contiguous -> (...,): vectors of `lanes` summed by row_sum, then
    the scalar tail and the lanes added one by one."""
    size0 = p.shape[-1]
    body = size0 // lanes * lanes
    vec = row_sum(p[..., :body].reshape(p.shape[:-1] + (body // lanes, lanes)))
    return _seq(np.concatenate((p[..., body:], vec), axis=-1), axis=-1)


def _columns(p: np.ndarray, group: int) -> np.ndarray:
    """The outer sums: (..., size0, size1) -> (..., size1). Columns in whole groups of `group` are cascaded
    straight down; the rest go through row_sum."""
    size1 = p.shape[-1]
    whole = size1 // group * group
    if whole == size1:
        return cascade(p)
    if not whole:
        return row_sum(p)
    return np.concatenate((cascade(p[..., :whole]), row_sum(p[..., whole:])), axis=-1)


def _plane_values(p: np.ndarray, s0: int, s1: int, lanes: int) -> np.ndarray:
    """One 2-d loop call on a batch of planes (..., size1, size0) whose size0 dim is reduced: the value each
    of the size1 rows or columns stores, (..., size1). s0/s1 are the input strides in elements."""
    size1, size0 = p.shape[-2], p.shape[-1]
    if s0 == 1 and size0 >= lanes:
        return _inner_vectorised(p, lanes)
    cols = np.swapaxes(p, -1, -2)                      # (..., size0, size1): size0 is the sequence
    if s1 == 1 and size1 >= lanes:
        return _columns(cols, 4 * lanes)
    if s0 < s1:
        return row_sum(cols)
    return _columns(cols, 4)


class _Layout:
    """TensorIterator's view of one reduction: shape, input and output strides (elements), fastest dim first."""

    __slots__ = ("shape", "ins", "outs")

    def __init__(self, shape, ins, outs):
        self.shape, self.ins, self.outs = shape, ins, outs


def stride_sort(ndim: int, compare) -> list:
    """The dims, innermost first, as PyTorch orders them (TensorIterator, infer_dense_strides): an insertion
    sort from the last dim inwards where compare(d0, d1) > 0 swaps, < 0 stops, and 0 (ambiguous) looks on."""
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = compare(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def layout(x: np.ndarray, reduced: tuple) -> _Layout:
    """Reorder and coalesce the dims as TensorIterator does for a reduction of `x` over `reduced`."""
    ndim = x.ndim
    item = x.itemsize
    ins = [s // item for s in x.strides]
    outs, acc = [0] * ndim, 1
    for d in range(ndim - 1, -1, -1):                  # the output is allocated contiguous (keepdim shape)
        if d not in reduced:
            outs[d] = acc
            acc *= x.shape[d]
    shape = list(x.shape)

    def should_swap(d0, d1):
        for strides, is_out in ((outs, True), (ins, False)):
            a, b = strides[d0], strides[d1]
            if is_out and (a == 0) != (b == 0):        # reduced dims go first
                return 1 if b == 0 else -1
            if a == 0 or b == 0:
                continue
            if a != b:
                return -1 if a < b else 1
            if shape[d0] > shape[d1]:                  # equal strides: the smaller dim first
                return 1
        return 0

    perm = stride_sort(ndim, should_swap)
    shape = [shape[d] for d in perm]
    ins = [ins[d] for d in perm]
    outs = [outs[d] for d in perm]
    if ndim > 1:
        prev = 0
        for d in range(1, ndim):
            if shape[prev] == 1 or shape[d] == 1 or (ins[prev] * shape[prev] == ins[d]
                                                     and outs[prev] * shape[prev] == outs[d]):
                if shape[prev] == 1:
                    ins[prev], outs[prev] = ins[d], outs[d]
                shape[prev] *= shape[d]
            else:
                prev += 1
                if prev != d:
                    ins[prev], outs[prev], shape[prev] = ins[d], outs[d], shape[d]
        del shape[prev + 1:], ins[prev + 1:], outs[prev + 1:]
    return _Layout(shape, ins, outs)


def _view(x: np.ndarray, shape, strides, writeable=False) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(x, shape=tuple(shape), strides=tuple(s * x.itemsize for s in strides),
                                           writeable=writeable)


def _accumulate(values: np.ndarray, out_strides: list) -> np.ndarray:
    """Add the stored values into their outputs in iteration order: the axes with output stride 0 are summed
    one after another (C order over them), from +0.0. The result keeps the other axes, in order."""
    summed = [i for i, s in enumerate(out_strides) if s == 0]
    if not summed:
        return values + values.dtype.type(0)
    kept = [i for i, s in enumerate(out_strides) if s != 0]
    k = 1
    for i in summed:
        k *= values.shape[i]
    flat = np.transpose(values, summed + kept).reshape((k,) + tuple(values.shape[i] for i in kept))
    return _seq(flat, axis=0)


def _execute(xv: np.ndarray, ov: np.ndarray, ins: list, outs: list, lanes: int) -> None:
    """serial_for_each over a layout's views (dim 0 first; `ov` has stride 0 on reduced dims): each 2-d loop
    call's values added into `ov`."""
    ins, outs = list(ins), list(outs)
    while len(ins) < 2:
        xv, ov = xv[..., None], ov[..., None]
        ins.append(0)
        outs.append(0)
    if outs[0] != 0 and outs[1] == 0:                  # move the reduction to the first dim of the plane
        xv, ov = np.swapaxes(xv, 0, 1), np.swapaxes(ov, 0, 1)
        ins[0], ins[1], outs[0], outs[1] = ins[1], ins[0], outs[1], outs[0]
    xs, os = xv.T, ov.T                                # slowest dim first, dim 0 last
    if outs[0] != 0:                                   # no reduction within a plane: out += in
        values, strides = xs, outs[::-1]
    else:
        values, strides = _plane_values(xs, ins[0], ins[1], lanes), outs[:0:-1]
        os = os[..., 0]
    result = _accumulate(values, strides)
    os[tuple(0 if s == 0 else slice(None) for s in strides)] += result


_PLANS: dict = {}                      # (shape, strides, dtype, dims, keepdim, out dtype, threads) -> plan
_PLAN_LIMIT = 4096


def get_num_threads() -> int:
    """torch.get_num_threads(): the thread count whose split of the work the kernels' order follows."""
    return STATE.threads


def set_num_threads(n) -> None:
    """torch.set_num_threads(n): large sums (and the batch-norm statistics) then add their numbers in the
    order n threads would give in PyTorch; big tensors are computed on min(n, cores) threads (workers)."""
    if n.__class__ is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if not -(1 << 63) <= n < 1 << 63:           # PyTorch's parser reads the int into 64 bits first,
        raise ValueError("Overflow when unpacking long long")
    if not -(1 << 31) <= n < 1 << 31:           # then its binding into a C int
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if n > MAX_THREADS:
        raise RuntimeError(f"set_num_threads: gradcli follows at most {MAX_THREADS} threads, got {n}")
    STATE.threads = n


def get_num_interop_threads() -> int:
    """torch.get_num_interop_threads(): as set, else the reference machine's (its core count, as the threads)."""
    return STATE.interop_threads or DEFAULT_THREADS


def set_num_interop_threads(n) -> None:
    """torch.set_num_interop_threads(n): recorded once (gradcli runs no inter-op work); PyTorch refuses a second
    call."""
    if n.__class__ is not int:
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if STATE.interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    STATE.interop_threads = n


def sum_array(x: np.ndarray, dims: tuple | None = None, keepdim: bool = False, dtype=None,
              threads: int | None = None) -> np.ndarray:
    """x summed over `dims` (None or (): all) in PyTorch's order, in `dtype` (default: x's), split as
    `threads` threads would split it (default: torch.get_num_threads()).

    The kernel choices depend only on the geometry, so each geometry's are made once and kept as a plan: a
    training loop's reductions then cost their numpy calls and little else."""
    if threads is None:
        threads = STATE.threads
    if dims is not None and dims.__class__ is not tuple:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if x.__class__ is not np.ndarray:           # a meta array: no values to sum in any order
        return np.add.reduce(x, axis=dims or None, keepdims=keepdim, dtype=dtype)
    key = (x.shape, x.strides, x.dtype.char, dims, keepdim, dtype, threads)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _plan(x, dims, keepdim, dtype, threads)
        if len(_PLANS) >= _PLAN_LIMIT:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan(x)


def _plan(x: np.ndarray, dims, keepdim: bool, dtype, threads: int):
    """A function of arrays shaped and strided like x that sums them as sum_array(x, ...) would."""
    dt = np.dtype(dtype) if dtype is not None else x.dtype
    lanes = _LANES.get(dt)
    if lanes is None:
        axes = tuple(dims) if dims else None
        if dt.char in "eE" and x.dtype == dt and x.ndim:
            from gradcli.engine import halfsum        # float16 and bfloat16 sums: rare, so imported when first met
            ordered = tuple(range(x.ndim)) if not dims else tuple(sorted(d % x.ndim for d in dims))
            shape = tuple((1 if d in ordered else n) for d, n in enumerate(x.shape) if keepdim or d not in ordered)
            half = halfsum.plan(x, ordered, shape, threads)
            if half is not None:
                return half
            # other geometries: the float32 kernel's order on the values converted to float (the kernel
            # loads halves into float vectors and accumulates in float), rounded once
            return lambda a: np.asanyarray(sum_array(a.astype(np.float32, order="K"), dims, keepdim, None,
                                                  threads)).astype(dt)
        return lambda a: np.asanyarray(a.sum(axis=axes, keepdims=keepdim, dtype=dt))
    if x.dtype != dt:
        return lambda a: sum_array(a.astype(dt, order="K"), dims, keepdim, None, threads)
    if any(s < 0 for s in x.strides):
        # PyTorch has no negative strides (its flip copies): such a view sums as the contiguous copy would.
        # A new array, always: numpy calls a view contiguous when only a length-1 dim has a negative
        # stride, and ascontiguousarray would hand back the same view (and this plan again, forever).
        return lambda a: sum_array(np.array(a, order="C"), dims, keepdim, None, threads)
    ndim = x.ndim
    dims = tuple(range(ndim)) if not dims else tuple(sorted(d % ndim for d in dims))
    out_shape = tuple((1 if d in dims else n) for d, n in enumerate(x.shape) if keepdim or d not in dims)
    zero = dt.type(0)
    if not x.size:
        return lambda a: np.zeros(out_shape, dt)
    if x.flags.c_contiguous:
        n = 1
        for d in dims:
            n *= x.shape[d]
        if n == x.size:                               # one output: the dims coalesce into one run
            return _flat_plan(n, lanes, threads, out_shape, zero)
        if dims == tuple(range(ndim - len(dims), ndim)):      # the trailing dims: rows
            shape2 = (x.size // n, n)
            if n >= lanes:
                rows = _rows_plan(shape2, lanes)
                return lambda a: (rows(a.reshape(shape2)) + zero).reshape(out_shape)
            return lambda a: (row_sum(a.reshape(shape2).T) + zero).reshape(out_shape)
        if dims == tuple(range(len(dims))):           # the leading dims: columns
            return _columns_plan((n, x.size // n), 4 * lanes if x.size // n >= lanes else 4, out_shape, zero)
    full_shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    lay = layout(x, dims)

    def general(a):
        out = np.zeros(full_shape, dt)
        _reduce(a, dims, out, lanes, threads, lay)
        return out.reshape(out_shape)
    return general


def _flat_plan(n: int, lanes: int, threads: int, out_shape: tuple, zero):
    """The sum of a contiguous run of n, its branches taken once: vectorized_inner_sum over the run, or,
    from the grain size on with threads, over each thread's range, then the slots summed as a tensor."""
    if n >= GRAIN and threads > 1:
        ranges = chunks(n, GRAIN, threads)

        def split(a):
            v = a.reshape(-1)
            slots = np.zeros(threads, v.dtype)

            def some(first: int, stop: int) -> None:
                for t in range(first, stop):
                    b, e = ranges[t]
                    slots[t] = sum_array(v[b:e], threads=1)
            # each range into its own slot, as PyTorch's threads do, on as many threads as compute here
            if workers.worth(n):
                workers.split(len(ranges), some)
            else:
                some(0, len(ranges))
            return sum_array(slots, threads=1).reshape(out_shape)
        return split
    if n < lanes:
        if n < 4:
            return lambda a: (_accumulate_run(a.reshape(-1))[-1] + zero).reshape(out_shape)
        order = _SMALL_ORDER[n]        # four accumulators x0..x3, the rest added to the first, then the others
        return lambda a: (_accumulate_run(a.reshape(-1)[order])[-1] + zero).reshape(out_shape)
    vec = n // lanes
    quads = vec // 4
    body, vl = quads * 4 * lanes, vec * lanes
    reduce_rows, accumulate_run, join = _reduce_rows, _accumulate_run, _join
    shape_parts, shape_vec, four = (quads, 4 * lanes), (vec, lanes), (4, lanes)
    deep = _cascade_plan(quads) if quads >= 16 else None

    def lanes_of(v):
        if not quads:
            return reduce_rows(v[:vl].reshape(shape_vec), 0) if vec > 1 else v[:lanes]
        if quads >= 16:
            parts = deep(v[:body].reshape(shape_parts))
        else:
            parts = reduce_rows(v[:body].reshape(shape_parts), 0) if quads > 1 else v[:body]
        if body < vl:
            return reduce_rows(join((parts[:lanes], v[body:vl], parts[lanes:])).reshape(-1, lanes), 0)
        return reduce_rows(parts.reshape(four), 0)

    if vl == n:
        return lambda a: (accumulate_run(lanes_of(a.reshape(-1)))[-1] + zero).reshape(out_shape)

    def plan(a):
        v = a.reshape(-1)
        return (accumulate_run(join((v[vl:], lanes_of(v))))[-1] + zero).reshape(out_shape)
    return plan


def _columns_plan(shape2: tuple, group: int, out_shape: tuple, zero):
    """_columns on a (rows, cols) reshape, its branches taken once."""
    rows, cols = shape2
    whole = cols // group * group
    down = _cascade_plan(rows)
    if whole == cols:
        return lambda a: (down(a.reshape(shape2)) + zero).reshape(out_shape)
    across = _row_sum_plan(rows, cols - whole)
    if not whole:
        return lambda a: (across(a.reshape(shape2)) + zero).reshape(out_shape)
    join = _join

    def plan(a):
        b = a.reshape(shape2)
        return (join((down(b[:, :whole]), across(b[:, whole:]))) + zero).reshape(out_shape)
    return plan


def _rows_plan(shape2: tuple, lanes: int):
    """_inner_vectorised on (rows, n >= lanes) arrays, its branches taken once. Each row's accumulators are
    independent of the other rows', so the work runs on transposed copies of blocks of rows (about 1 MB
    each, so the copy stays in cache): numpy's inner loops then run across the rows of a block instead of
    along one vector (8 or 4 elements), which would cost a loop call per vector."""
    rows, n = shape2
    if rows < 2:
        return lambda b: _inner_vectorised(b, lanes)
    vec = n // lanes
    quads = vec // 4
    body, body4 = vec * lanes, quads * 4 * lanes
    reduce_rows, join, transpose = _reduce_rows, _join, np.ascontiguousarray

    def quad_sum(t):
        return reduce_rows(t, 0) if quads < 16 else cascade(t)

    def transposed(t: np.ndarray, r: int) -> np.ndarray:
        """The row sums of a block from its transposed copy t, (n, r)."""
        if not quads:
            vecs = t[:lanes] if vec == 1 else reduce_rows(t[:body].reshape(vec, lanes, r), 0)
        else:
            parts = quad_sum(t[:body4].reshape(quads, 4 * lanes * r)).reshape(4, lanes, r)
            if body4 < body:                       # the first accumulator, leftover vectors, the other three
                parts = join((parts[:1], t[body4:body].reshape(-1, lanes, r), parts[1:]))
            vecs = reduce_rows(parts, 0)
        return reduce_rows(vecs if body == n else join((t[body:], vecs)), 0)

    block = max(2, 262144 // n)
    big = workers.worth(rows * n)
    if rows <= block and not big:
        return lambda b: transposed(transpose(b.T), rows)

    def blocked(b):
        out = np.empty(rows, b.dtype)

        def some(first: int, stop: int) -> None:
            for r0 in range(first, stop, block):
                r1 = min(stop, r0 + block)
                if r1 - r0 == 1:
                    out[r0:r1] = _inner_vectorised(b[r0:r1], lanes)
                else:
                    out[r0:r1] = transposed(transpose(b[r0:r1].T), r1 - r0)
        # rows are summed independently of each other, so pieces of rows on the worker threads give the
        # bits of one thread (the plan is kept per thread count: see sum_array)
        if big:
            workers.split(rows, some)
        else:
            some(0, rows)
        return out
    return blocked


def _cascade_plan(rows: int):
    """cascade() of (rows, lanes >= 2) arrays, with the common one-level case written out."""
    step = 1 << max(4, _ceil_log2(rows) // 4)
    reduce_rows = _reduce_rows
    if rows == 1:
        return lambda b: b[0]
    if rows < step:
        return lambda b: reduce_rows(b, 0)
    if rows >= step * step:
        return cascade
    full = rows // step * step
    k = full // step
    if full == rows:
        if k == 1:
            return lambda b: reduce_rows(b.reshape(1, step, -1), 1)[0]
        return lambda b: reduce_rows(reduce_rows(b.reshape(k, step, -1), 1), 0)

    def with_tail(b):
        chunks = reduce_rows(b[:full].reshape(k, step, -1), 1)
        tail = b[full:]
        return (reduce_rows(tail, 0) if rows - full > 1 else tail[0]) + (reduce_rows(chunks, 0) if k > 1 else chunks[0])
    return with_tail


def _row_sum_plan(rows: int, lanes: int):
    """row_sum() of (rows, lanes) arrays: four interleaved accumulators, then the first one, the leftover
    rows and the other three added in order (a single lane is accumulated: numpy would pair it)."""
    quads = rows // 4
    if not quads or quads >= 16:
        return row_sum
    reduce_rows, accumulate_run, join = _reduce_rows, _accumulate_run, _join
    body = 4 * quads
    if quads == 1:
        def head(b):
            return b[:4]
    else:
        def head(b):
            return reduce_rows(b[:body].reshape(quads, 4 * lanes), 0).reshape(4, lanes)
    if lanes == 1:
        if body == rows:
            return lambda b: accumulate_run(head(b)[:, 0])[-1:]

        def chained_one(b):
            parts = head(b)[:, 0]
            return accumulate_run(join((parts[:1], b[body:, 0], parts[1:])))[-1:]
        return chained_one
    if body == rows:
        return lambda b: reduce_rows(head(b), 0)

    def chained(b):
        parts = head(b)
        return reduce_rows(join((parts[:1], b[body:], parts[1:])), 0)
    return chained


_SMALL_ORDER = {n: np.array([0] + list(range(4, n)) + [1, 2, 3]) for n in range(4, 8)}


def _reduce(x: np.ndarray, dims: tuple, out: np.ndarray, lanes: int, threads: int, lay=None) -> None:
    lay = lay or layout(x, dims)
    xv = _view(x, lay.shape, lay.ins)
    ov = _view(out, lay.shape, lay.outs, writeable=True)
    if x.size < GRAIN or threads < 2:
        _execute(xv, ov, lay.ins, lay.outs, lanes)
    elif out.size == 1:
        out.reshape(-1)[0] = _two_pass(xv, lay, lanes, threads)
    else:
        _split_columns(xv, ov, lay, lanes, threads)


def thread_ranges(n: int) -> list:
    """The ranges at::parallel_for gives torch.get_num_threads() threads for a loop of n elements (one range
    up to the grain size): the split every kernel that parallelises a flat loop follows."""
    if n <= GRAIN or STATE.threads < 2:
        return [(0, n)]
    return chunks(n, GRAIN, STATE.threads)


def chunks(n: int, grain: int, threads: int) -> list:
    """at::parallel_for's ranges: min(threads, ceil(n / grain)) tasks of ceil(n / tasks) items."""
    tasks = min(threads, -(-n // grain)) if grain > 0 else threads
    size = -(-n // tasks)
    return [(b, min(n, b + size)) for b in range(0, n, size)]


def _two_pass(xv: np.ndarray, lay: _Layout, lanes: int, threads: int):
    """A full reduction split over threads: each range of the iteration summed into its own slot (0 for a
    thread without work), then the slots summed as a tensor of `threads` values."""
    shape, ins = lay.shape + [1] * (2 - len(lay.shape)), lay.ins + [0] * (2 - len(lay.ins))
    if len(lay.shape) < 2:
        xv = xv.reshape(xv.shape + (1,) * (2 - xv.ndim))
    slots = np.zeros(threads, xv.dtype)
    for t, (begin, end) in enumerate(chunks(int(np.prod(shape)), GRAIN, threads)):
        values = []
        offset = begin
        while offset < end:                            # DimCounter: whole rows and planes where it can
            index, rest = [], offset
            for n in shape:
                index.append(rest % n)
                rest //= n
            step0 = min(shape[0] - index[0], end - offset)
            step1 = 1
            if step0 == shape[0] and index[0] == 0:
                step1 = min(shape[1] - index[1], (end - offset) // shape[0])
            plane = xv[(slice(index[0], index[0] + step0), slice(index[1], index[1] + step1)) + tuple(index[2:])]
            values.append(_plane_values(plane.T, ins[0], ins[1], lanes))
            offset += step0 * step1
        slots[t] = _seq(np.concatenate(values)[:, None], axis=0)[0]
    final = np.zeros(1, xv.dtype)
    _reduce(slots, (0,), final, lanes, 1)
    return final[0]


def _split_columns(xv: np.ndarray, ov: np.ndarray, lay: _Layout, lanes: int, threads: int) -> None:
    """A partial reduction split over threads along the outermost kept dim with at least `threads` entries
    (else the largest), its ranges rounded to 128-byte column blocks when that dim is contiguous."""
    reduced = [o == 0 and n > 1 for o, n in zip(lay.outs, lay.shape)]
    best = len(lay.shape) - 1
    dim = None
    for d in range(best, -1, -1):
        if reduced[d]:
            break
        if lay.shape[d] >= threads:
            dim = d
            break
        if lay.shape[d] > lay.shape[best]:
            best = d
    dim = best if dim is None else dim
    cols = lay.shape[dim]
    multiple = 128 // xv.itemsize if lay.ins[dim] == 1 else 1
    for begin, end in chunks(cols, 1, threads):
        begin -= begin % multiple
        if end != cols:
            end -= end % multiple
        if begin == end:
            continue
        key = (slice(None),) * dim + (slice(begin, end),)
        _execute(xv[key], ov[key], lay.ins, lay.outs, lanes)
