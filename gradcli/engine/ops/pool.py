"""Pooling: max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d,
with their backward kernels as ops of their own (double backward); lp_pool1d/2d/3d composed of other ops
as PyTorch composes them; max_unpool1d/2d/3d.

PyTorch computes every 1-d or 2-d pooling on 3-d or 4-d input with its 2-d kernels; the 1-d functions
unsqueeze the input at -2, pool with a kernel of height 1 and squeeze the result, and an adaptive
average to all ones is a mean, so their grad_fn chains are those ops'. The 3-d poolings have kernels
of their own over the last three dims of 4-d or 5-d input; here the 2-d and 3-d forms share the array
kernels (over n spatial dims) and the formulas. The kernels' float results are fixed by their loops
(aten/src/ATen/native/cpu/*PoolKernel.cpp): a window's sum is accumulated element by element in
row-major order from zero, in the input's dtype, then divided (avg: by one divisor, adaptive: by the
window's depth, then its height, then its width); a backward kernel adds each output's share into the
input in output order. The arrays below keep those orders: loops run over kernel offsets or over a
window's elements with np.add.accumulate (sequential, unlike np.sum's pairwise sums), never over
pixels. Max pooling picks the first maximum in window order, the last NaN when there is one, and a
window of -inf its first element inside the input.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine import budget
from gradcli.engine.layout import in_inputs_format
from gradcli.engine.ops import reduce, shape
from gradcli.engine.recording import autocast_policy, Op, apply, int64_arg, is_meta, needs_grad, type_word
from gradcli.engine.tensor import Tensor

_FLOATS = "fV"          # float16, float32, float64, bfloat16 (numpy kinds)

# ------------------------------------------------------------------------------------------ arguments


def _sizes_text(shape_) -> str:
    return "[" + ", ".join(str(d) for d in shape_) + "]"


def _ints(value, fn: str, name: str, position: int, n: int = 2) -> tuple:
    """An int[n] argument as PyTorch's parser reads it: an int (repeated n times), or a tuple or list of
    ints (kept as given: the node saves it so)."""
    if value.__class__ is int:
        int64_arg(value)                # the parser reads it into 64 bits first
        return (value,) * n
    if value.__class__ in (tuple, list):
        return shape.int_list((value,), fn, name, position)     # the parser's rules for an int list
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be tuple of ints, "
                    f"not {type(value).__name__}")


def _flag(value, fn: str, name: str, position: int) -> None:
    """A bool parameter as PyTorch's parser takes it: a bool only (F.max_pool2d passes it on by position;
    given by keyword to F.avg_pool2d, the argument check words it without the position)."""
    if value.__class__ is not bool:
        where = f" (position {position})" if position else ""      # None: given by keyword
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not {type(value).__name__}")


def _pair(values: tuple, fn: str, what: str, omitted=False, c_int=True, n: int = 2) -> tuple | None:
    """A kernel's int[] argument of n entries (n = 2, or 3 for the 3-d kernels), one int standing for all."""
    for v in values:            # the parser reads each int into 64 bits first
        if v.__class__ is int:
            int64_arg(v)
    if len(values) in (1, n):
        if c_int:               # the kernels take C ints (safe_downcast), each list after its length check
            _c_ints(values)
        return values * n if len(values) == 1 else values
    if omitted and not values:
        return None
    count = "two" if n == 2 else "three"
    either = "" if fn == "avg_pool3d" else "either "        # avg_pool3d's checks word it without "either"
    if what == "stride":
        raise RuntimeError(f"{fn}: stride must {either}be omitted, a single int, or a tuple of {count} ints")
    if what == "dilation":
        raise RuntimeError(f"{fn}: dilation must be either a single int, or a tuple of {count} ints")
    raise RuntimeError(f"{fn}: {what} must {either}be a single int, or a tuple of {count} ints")


def _c_ints(values) -> None:
    for v in values:
        if not -(1 << 31) <= v < 1 << 31:
            raise RuntimeError("value cannot be converted to type int without overflow")


def _expect_tensor(value, fn: str):
    if value.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}")


def _output_size(n: int, k: int, pad: int, s: int, d: int, ceil: bool) -> int:
    """pooling_output_shape, with its argument checks."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    effective = (k - 1) * d + 1
    if pad > int(effective / 2):        # C++'s division truncates toward zero
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                           f"kernel_size={k} and dilation={d}")
    out = (n + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= n + pad:
        out -= 1
    return out


def _shape_check(x: np.ndarray, k, s, pad, d, out_hw):
    """pool2d_shape_check."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, pad, d
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
    n = x.ndim
    if not ((n == 3 and x.shape[0] and x.shape[1] and x.shape[2])
            or (n == 4 and x.shape[1] and x.shape[2] and x.shape[3])):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{_sizes_text(x.shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    oh, ow = out_hw
    if oh < 1 or ow < 1:
        c, h, w = x.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
                           "Output size is too small")


def _shape_check3d(x: np.ndarray, k, s, pad, d, outs, fn: str, avg: bool):
    """pool3d_shape_check (`avg`: with avg_pool3d's check of the input against the kernel)."""
    (kt, kh, kw), (st, sh, sw), (pt, ph, pw), (dt, dh, dw) = k, s, pad, d
    if kt <= 0 or kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}")
    if st <= 0 or sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} dW: {sw}")
    if dt <= 0 or dw <= 0 or dh <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} dilationH: {dh} "
                           f"dilationW: {dw}")
    for i in range(x.ndim == 5, x.ndim):         # a 5-d input's batch may be empty
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input has a "
                               f"shape of {_sizes_text(x.shape)} and non-batch dimension {x.shape[i]} has length zero!")
    c, t, h, w = x.shape[-4:]
    if avg and (t < kt or h < kh or w < kw):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} kH: {kh} kW: {kw})")
    if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kt} kW: {kw} "
                           f"kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    ot, oh, ow = outs
    if ot < 1 or ow < 1 or oh < 1:
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: ({c}x{ot}x{oh}x{ow}). "
                           "Output size is too small")


def _not_implemented(fn: str, x: np.ndarray, kinds: str):
    if x.dtype.kind not in kinds:
        raise NotImplementedError(f'"{fn}" not implemented for \'{type_word(x)}\'')


# --------------------------------------------------------------------------------------- array kernels
# Each kernel works on n spatial dims (the last n: 2 for the 2-d poolings, 3 for the 3-d ones); per-dim
# arguments are n-tuples, and (o, k) tables per dim meet in an n-d grid through _grid.


def _meta(shape_: tuple, dtype) -> np.ndarray:
    """A meta result of that shape and dtype: the kernels' shapes without their work (a meta tensor has no values)."""
    from gradcli.engine.meta import meta_full
    return meta_full(shape_, 0, dtype)


def _planes(x: np.ndarray, n: int = 2) -> np.ndarray:
    """x as (planes, *spatial), its last n dims spatial."""
    return x.reshape((-1,) + x.shape[x.ndim - n:])


def _grid(columns, at: int, width: int) -> list:
    """Per-dim arrays of one axis each, reshaped to broadcast as dims at, at+1, ... of `width` dims."""
    out = []
    for i, c in enumerate(columns):
        shape_ = [1] * width
        shape_[at + i] = c.shape[0]
        out.append(c.reshape(shape_))
    return out


def _padded(xp: np.ndarray, sizes: tuple, pads: tuple, fill) -> np.ndarray:
    """xp (planes, *spatial) placed at `pads` in a buffer of `sizes` filled with `fill`."""
    budget.check_tensor((xp.shape[0],) + tuple(sizes), xp.dtype.itemsize)
    buf = np.full((xp.shape[0],) + tuple(sizes), fill, dtype=xp.dtype)
    buf[(slice(None),) + tuple(slice(p, p + m) for p, m in zip(pads, xp.shape[1:]))] = xp
    return buf


def _extent(o: int, k: int, s: int, d: int, n: int, pad: int) -> int:
    """Rows (or columns) a padded buffer needs so every window of o outputs fits."""
    return max((o - 1) * s + (k - 1) * d + 1, n + pad) + pad


def _extents(outs, k, s, d, sizes, pad) -> tuple:
    return tuple(_extent(*args) for args in zip(outs, k, s, d, sizes, pad))


def _inside(o: int, k: int, s: int, d: int, pad: int, n: int):
    """(o, k) positions of each window's elements along one axis, and whether each is inside the input."""
    pos = (np.arange(o) * s - pad)[:, None] + np.arange(k)[None, :] * d
    return pos, (pos >= 0) & (pos < n)


def _pick_max(win: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The window element each max kernel keeps (win: (..., K), padding already at the lowest value):
    `val > maxval || isnan(val)` from the first element inside the input, so the first maximum, or the
    last NaN."""
    m = win.max(axis=-1, keepdims=True)
    pick = ((win == m) & valid).argmax(axis=-1)
    if win.dtype.kind in "fV":
        nan = np.isnan(win)
        has = nan.any(axis=-1)
        if has.any():
            last = win.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
            pick = np.where(has, last, pick)
    return pick


def _strided(buf: np.ndarray, offsets, d, out: tuple, s) -> np.ndarray:
    """The element at kernel offset `offsets` (dilated by d) of every window: a strided view of buf."""
    view = buf[(slice(None),) + tuple(slice(o * di, None) for o, di in zip(offsets, d))]
    steps = tuple(st * si for st, si in zip(buf.strides[1:], s))
    return as_strided(view, out, (buf.strides[0],) + steps, writeable=False, subok=True)


def _window_max(buf: np.ndarray, out: tuple, k: tuple, s: tuple, d: tuple, pos, inside):
    """Each window's maximum and its position in the window (row-major), as the CPU kernel scans it: it
    starts at the window's first position at or past 0 in each dim, with the lowest value, and an element
    inside the input replaces the maximum when `val > maxval || isnan(val)` (so the first maximum, or the
    last NaN; a window of -inf, or with nothing inside, keeps that first position). One pass over the
    outputs per kernel offset, each offset's elements a strided view of `buf` (pos, inside: each window's
    positions per dim and whether they are inside)."""
    floats = buf.dtype.kind in "fV"
    width = len(out)
    maxval = np.full(out, _lowest(buf.dtype), dtype=buf.dtype)
    firsts = [(p >= 0).argmax(axis=1) for p in pos]
    first = sum(f * int(np.prod(k[i + 1:], dtype=np.int64)) for i, f in enumerate(_grid(firsts, 1, width)))
    pick = np.broadcast_to(first, out).copy()
    for flat, offsets in enumerate(itertools.product(*(range(ki) for ki in k))):
        val = _strided(buf, offsets, d, out, s)
        upd = val > maxval
        if floats:
            upd |= np.isnan(val)
        for mask in _grid([inside[i][:, o] for i, o in enumerate(offsets)], 1, width):
            upd &= mask
        np.copyto(maxval, val, where=upd)
        np.copyto(pick, flat, where=upd)
    return maxval, pick


def _lowest(dtype):
    return -np.inf if dtype.kind in "fV" else np.iinfo(dtype).min


def _flat_index(parts, sizes) -> np.ndarray:
    """Row-major positions in a volume of `sizes` from per-dim positions (broadcasting)."""
    index = 0
    for p, size in zip(parts, sizes):
        index = index * size + p
    return index


def max_pool_array(x: np.ndarray, k, s, pad, d, outs):
    """max_pool{2,3}d_with_indices on (batch,) channels and n spatial dims: values and int64 indices into
    each plane (or volume)."""
    if is_meta(x):
        return _meta(x.shape[:-len(k)] + tuple(outs), x.dtype), _meta(x.shape[:-len(k)] + tuple(outs), np.int64)
    n = len(k)
    sizes = x.shape[-n:]
    xp = _planes(x, n)
    out_shape = x.shape[:-n] + tuple(outs)
    budget.check_tensor(out_shape, x.dtype.itemsize)      # the result, as PyTorch allocates it
    buf = _padded(xp, _extents(outs, k, s, d, sizes, pad), pad, _lowest(x.dtype))
    pos, inside = zip(*(_inside(*args) for args in zip(outs, k, s, d, pad, sizes)))
    values, pick = _window_max(buf, (xp.shape[0],) + tuple(outs), k, s, d, pos, inside)
    offsets = np.unravel_index(pick, k)
    outs_at = np.meshgrid(*(np.arange(o) for o in outs), indexing="ij")
    index = _flat_index([p[at, j] for p, at, j in zip(pos, outs_at, offsets)], sizes)
    return values.reshape(out_shape), np.broadcast_to(index, pick.shape).astype(np.int64).reshape(out_shape)


def scatter_planes(g: np.ndarray, index: np.ndarray, in_shape, n: int = 2) -> np.ndarray:
    """The max backward kernels: each output's gradient added at its index, in output order."""
    if is_meta(g) or is_meta(index):
        return _meta(tuple(in_shape), g.dtype)
    inner = int(np.prod(in_shape[len(in_shape) - n:], dtype=np.int64))
    spatial = int(np.prod(g.shape[g.ndim - n:], dtype=np.int64)) if g.ndim >= n else g.size
    g2 = g.reshape(-1, spatial) if g.ndim >= n else g.reshape(1, -1)
    out = np.zeros((g2.shape[0], inner), dtype=g.dtype)
    if g2.size:
        np.add.at(out, (np.arange(g2.shape[0])[:, None], index.reshape(g2.shape)), g2)
    return out.reshape(in_shape)


def gather_planes(g: np.ndarray, index: np.ndarray, n: int = 2) -> np.ndarray:
    """max_pool_double_backward: the gradient read at each output's index."""
    if is_meta(g) or is_meta(index):
        return _meta(index.shape, g.dtype)
    flat = g.reshape(g.shape[:g.ndim - n] + (-1,))
    idx = index.reshape(index.shape[:index.ndim - n] + (-1,))
    return np.take_along_axis(flat, idx, axis=-1).reshape(index.shape)


def _avg_divisors(sizes, k, s, pad, outs, ceil, count_include_pad, divisor_override):
    """Per output: the divisor and whether its window reaches the input at all."""
    whole, inner = [], []
    for size, ki, si, pi, o in zip(sizes, k, s, pad, outs):
        start = np.arange(o) * si - pi
        end = np.minimum(start + ki, size + pi)
        whole.append(end - start)
        inner.append(np.minimum(end, size) - np.maximum(start, 0))
    width = len(outs)
    reached = np.ones(tuple(outs), dtype=bool)
    for part in _grid(inner, 0, width):
        reached = reached & (part > 0)
    if divisor_override is not None:
        return np.full(tuple(outs), divisor_override, dtype=np.int64), reached
    divisor = np.ones(tuple(outs), dtype=np.int64)
    for part in _grid(whole if count_include_pad else inner, 0, width):
        divisor = divisor * part
    return divisor, reached


def _opmath(dtype) -> np.dtype:
    """The kernels' accumulator type (at::opmath_type): float32 for float16 and bfloat16, the dtype itself
    otherwise."""
    return np.dtype(np.float32) if dtype.char in "eE" else dtype


def _divide(total: np.ndarray, divisor: np.ndarray) -> np.ndarray:
    """sum / divide_factor in the kernel's type: a float division, or C++'s truncating one for integers."""
    if total.dtype.kind in "fV":
        return total / divisor.astype(total.dtype)
    divisor = np.where(divisor == 0, 1, divisor)
    q = np.abs(total) // np.abs(divisor)
    return np.where((total < 0) != (divisor < 0), -q, q).astype(total.dtype)


def _window_slices(offsets, s, outs) -> tuple:
    """The elements at kernel offset `offsets` of every window (no dilation), as slices of a padded buffer."""
    return (slice(None),) + tuple(slice(o, o + (m - 1) * si + 1, si) for o, si, m in zip(offsets, s, outs))


def avg_pool_array(x: np.ndarray, k, s, pad, outs, ceil, count_include_pad, divisor_override) -> np.ndarray:
    if is_meta(x):
        return _meta(x.shape[:-len(k)] + tuple(outs), x.dtype)
    n = len(k)
    sizes = x.shape[-n:]
    xp = _planes(x, n)
    budget.check_tensor(x.shape[:-n] + tuple(outs), x.dtype.itemsize)
    buf = _padded(xp, _extents(outs, k, s, (1,) * n, sizes, pad), pad, 0)
    total = np.zeros((xp.shape[0],) + tuple(outs), dtype=_opmath(x.dtype))
    for offsets in itertools.product(*(range(ki) for ki in k)):
        total += buf[_window_slices(offsets, s, outs)]  # a padded zero adds nothing: the kernel's sums, in its order
    divisor, reached = _avg_divisors(sizes, k, s, pad, outs, ceil, count_include_pad, divisor_override)
    out = np.where(reached, _divide(total, divisor), x.dtype.type(0))
    return out.astype(x.dtype, copy=False).reshape(x.shape[:-n] + tuple(outs))


def avg_backward_array(g: np.ndarray, in_shape, k, s, pad, ceil, count_include_pad, divisor_override):
    """avg_pool{2,3}d_backward: each output's gradient over its divisor, added over its window in output
    order (the kernel offsets from last to first give each input its outputs in increasing order)."""
    if is_meta(g):
        return _meta(tuple(in_shape), g.dtype)
    n = len(k)
    sizes = tuple(in_shape[-n:])
    outs = g.shape[-n:]
    divisor, reached = _avg_divisors(sizes, k, s, pad, outs, ceil, count_include_pad, divisor_override)
    delta = np.where(reached, _divide(_planes(g, n), divisor), g.dtype.type(0)).astype(g.dtype, copy=False)
    extents = _extents(outs, k, s, (1,) * n, sizes, pad)
    budget.check_tensor((delta.shape[0],) + extents, g.dtype.itemsize)
    buf = np.zeros((delta.shape[0],) + extents, dtype=g.dtype)
    for offsets in reversed(list(itertools.product(*(range(ki) for ki in k)))):
        buf[_window_slices(offsets, s, outs)] += delta
    inner = buf[(slice(None),) + tuple(slice(p, p + m) for p, m in zip(pad, sizes))]
    return np.ascontiguousarray(inner).reshape(in_shape)


def _adaptive_ranges(o: int, n: int):
    """start_index / end_index of each adaptive window along one axis, as (o, K) positions and validity."""
    starts = (np.arange(o) * n) // o
    ends = -((-(np.arange(o) + 1) * n) // o)
    k = int((ends - starts).max()) if o else 0
    pos = starts[:, None] + np.arange(k)[None, :]
    return np.minimum(pos, n - 1), pos < ends[:, None], ends - starts


def _adaptive_tables(sizes, outs):
    """Per dim: each adaptive window's positions, their validity (both (o, K) tables in the order
    positions, validity, lengths) and the window lengths; the tables spread as (o..., K...) grids."""
    pos, valid, lengths = zip(*(_adaptive_ranges(o, size) for o, size in zip(outs, sizes)))
    n = len(outs)
    spread = []
    for i, (p, v) in enumerate(zip(pos, valid)):
        shape_ = [1] * (2 * n)
        shape_[i], shape_[n + i] = p.shape
        spread.append((p.reshape(shape_), v.reshape(shape_)))
    return spread, lengths


def _adaptive_windows(x: np.ndarray, outs, fill):
    """Each adaptive window's elements in row-major order, (planes, *outs, K), with `fill` past its end."""
    n = len(outs)
    sizes = x.shape[-n:]
    spread, lengths = _adaptive_tables(sizes, outs)
    xp = _planes(x, n)
    ks = tuple(p.shape[n + i] for i, (p, _) in enumerate(spread))
    count = int(np.prod(ks, dtype=np.int64))
    budget.check_tensor((xp.shape[0],) + tuple(outs) + (count,), max(x.dtype.itemsize, 8))
    win = xp[(slice(None),) + tuple(p for p, _ in spread)]         # (planes, *outs, *ks)
    valid = np.ones((1,) * (2 * n), dtype=bool)
    for _, v in spread:
        valid = valid & v
    win = np.where(valid, win, x.dtype.type(fill)).reshape((xp.shape[0],) + tuple(outs) + (count,))
    index = np.broadcast_to(_flat_index([p for p, _ in spread], sizes), tuple(outs) + ks)
    valid = np.broadcast_to(valid, tuple(outs) + ks)
    return win, valid.reshape(tuple(outs) + (count,)), index.reshape(tuple(outs) + (count,)), lengths


def _over_lengths(total: np.ndarray, lengths, dtype) -> np.ndarray:
    """total / kd / kh / kw as the adaptive kernels divide, one window length per dim in turn."""
    for part in _grid([k.astype(dtype) for k in lengths], total.ndim - len(lengths), total.ndim):
        total = total / part
    return total


def adaptive_avg_array(x: np.ndarray, outs) -> np.ndarray:
    if is_meta(x):
        return _meta(x.shape[:-len(outs)] + tuple(outs), x.dtype)
    n = len(outs)
    out_shape = x.shape[:-n] + tuple(outs)
    budget.check_tensor(out_shape, x.dtype.itemsize)      # the result, as PyTorch allocates it
    if not all(outs) or not x.size:
        return np.zeros(out_shape, dtype=x.dtype)
    win, _, _, lengths = _adaptive_windows(x, outs, 0)
    acc = _opmath(x.dtype) if n == 2 else x.dtype       # the 3-d kernel sums and divides float16 in float16
    # add.accumulate sums in order; + 0 turns a sum of -0.0s into the kernel's +0.0 (it starts from 0)
    total = np.add.accumulate(win, axis=-1, dtype=acc)[..., -1] + acc.type(0)
    out = _over_lengths(total, lengths, acc).astype(x.dtype, copy=False)
    return np.ascontiguousarray(out).reshape(out_shape)      # fancy indexing may leave another memory order


def adaptive_avg_backward_array(g: np.ndarray, in_shape, n: int = 2) -> np.ndarray:
    """_adaptive_avg_pool{2,3}d_backward: each output's gradient over its window's lengths, added over its
    window in output order."""
    if is_meta(g):
        return _meta(tuple(in_shape), g.dtype)
    sizes = tuple(in_shape[len(in_shape) - n:])
    outs = g.shape[g.ndim - n:]
    out = np.zeros((int(np.prod(in_shape[:len(in_shape) - n], dtype=np.int64)), int(np.prod(sizes))), dtype=g.dtype)
    if g.size:
        spread, lengths = _adaptive_tables(sizes, outs)
        delta = _over_lengths(_planes(g, n), lengths, g.dtype)
        ks = tuple(p.shape[n + i] for i, (p, _) in enumerate(spread))
        valid = np.ones((1,) * (2 * n), dtype=bool)
        for _, v in spread:
            valid = valid & v
        valid = np.broadcast_to(valid, tuple(outs) + ks)
        index = np.broadcast_to(_flat_index([p for p, _ in spread], sizes), valid.shape)
        budget.check_tensor((out.shape[0],) + tuple(outs) + (int(np.prod(ks)),), 16)
        values = np.broadcast_to(delta[(Ellipsis,) + (None,) * n], delta.shape + ks)[:, valid]
        np.add.at(out, (np.arange(out.shape[0])[:, None], np.broadcast_to(index[valid], values.shape)), values)
    return out.reshape(in_shape)


def adaptive_max_array(x: np.ndarray, outs):
    if is_meta(x):
        return _meta(x.shape[:-len(outs)] + tuple(outs), x.dtype), _meta(x.shape[:-len(outs)] + tuple(outs), np.int64)
    n = len(outs)
    out_shape = x.shape[:-n] + tuple(outs)
    budget.check_tensor(out_shape, x.dtype.itemsize)
    if not all(outs) or not x.size:
        return np.zeros(out_shape, dtype=x.dtype), np.zeros(out_shape, dtype=np.int64)
    win, valid, index, _ = _adaptive_windows(x, outs, -np.inf)
    pick = _pick_max(win, valid)
    values = np.take_along_axis(win, pick[..., None], axis=-1)[..., 0]
    where = np.take_along_axis(np.broadcast_to(index, win.shape), pick[..., None], axis=-1)[..., 0]
    return np.ascontiguousarray(values).reshape(out_shape), np.ascontiguousarray(where, np.int64).reshape(out_shape)


# ------------------------------------------------------------------------------------------- formulas
# A formula runs on numpy arrays in a plain backward and on Tensors under create_graph (F.tensors),
# where the backward kernel is a recorded op of its own (the rows' *BackwardBackward0 nodes). The 2-d
# and 3-d rows share their formulas: each family's are the methods of one _Formulas, which knows its
# number of spatial dims and (once the table below is made) its backward kernels' rows.


def _shape_of(x):
    return tuple(x._a.shape) if x.__class__ is Tensor else tuple(x.shape)


def _indices_array(indices) -> np.ndarray:
    """The saved indices in a plain backward: a slimmed node (autograd's SlimSaved) keeps the Tensor."""
    return indices._a if indices.__class__ is Tensor else indices


def _check_adaptive_grad(g, kind: str, n: int) -> None:
    """adaptive_{avg,max}_pool{2,3}d_backward's check: an output with an empty plane has no gradient to give."""
    shape = g.shape if g.__class__ is not Tensor else g._a.shape
    for d in range(len(shape) - n - 1, len(shape)):
        if d >= 0 and shape[d] == 0:
            raise RuntimeError(f"adaptive_{kind}_pool{n}d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {_sizes_text(shape)} with dimension "
                               f"{d} being empty")


class _Formulas:
    """The backward and forward-mode formulas of the n-d poolings' rows (n = 2 or 3)."""

    def __init__(self, n: int):
        self.n = n
        self.rows = None            # the backward kernels' rows, by kind (set below the table)

    def max_backward(self, F, g, input, kernel_size, stride, padding, dilation, ceil_mode, result1):
        if F.tensors:
            return max_pool_backward(g, input, result1, self.rows["max"])
        return scatter_planes(g, _indices_array(result1), input.shape, self.n)

    def adaptive_max_backward(self, F, g, input, result1):
        _check_adaptive_grad(g, "max", self.n)
        if F.tensors:
            return max_pool_backward(g, input, result1, self.rows["adaptive_max"])
        return scatter_planes(g, _indices_array(result1), input.shape, self.n)

    def avg_backward(self, F, g, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        params = _avg_params(kernel_size, stride, padding, self.n)
        if F.tensors:
            return avg_pool_backward(g, input, params, ceil_mode, count_include_pad, divisor_override,
                                     (kernel_size, stride, padding))
        return avg_backward_array(g, input.shape, *params, ceil_mode, count_include_pad, divisor_override)

    def adaptive_avg_backward(self, F, g, input):
        _check_adaptive_grad(g, "avg", self.n)
        if F.tensors:
            return adaptive_avg_backward(g, input, self.n)
        return adaptive_avg_backward_array(g, input.shape, self.n)

    def gather_back(self, F, gg, indices, shape_):
        """max_pool_double_backward(grad, indices, n): the gradient, its last n dims flattened, gathered at
        the indices, viewed as them."""
        if F.tensors:
            flat = shape.flatten(gg, -self.n)
            picked = shape.gather(flat, -1, shape.flatten(indices, -self.n))
            return shape.view(picked, tuple(indices._a.shape))
        return gather_planes(gg, _indices_array(indices), self.n)

    def no_max_grad(self, F, gg, indices, shape_):
        """The backward kernels' gradient for `self`: zeros_like(self) (only its shape is read)."""
        return F.zeros(shape_, gg)

    def no_avg_grad(self, F, gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                    shape_):
        return F.zeros(shape_, gg)

    def avg_again(self, F, gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, shape_):
        if F.tensors:
            return _AVG_RAW[self.n](gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        k, s, pad = _avg_params(kernel_size, stride, padding, self.n)
        outs = _pool_sizes(gg.shape[gg.ndim - self.n:] if gg.ndim >= self.n else (), k, s, pad, (1,) * self.n,
                           ceil_mode)
        return avg_pool_array(gg, k, s, pad, outs, ceil_mode, count_include_pad, divisor_override)

    def adaptive_avg_again(self, F, gg, outs):
        if F.tensors:
            return adaptive_avg_pool_raw(gg, outs)
        return adaptive_avg_array(gg, outs)

    def unpool_backward(self, F, g, indices):
        """max_unpool{n}d's: max_pool_double_backward(grad, indices, n), the gradient read at the indices."""
        return self.gather_back(F, g, indices, None)

    # Forward-mode columns (derivatives.yaml's result: lines).

    def unpool_jvp(self, F, ts, xs, result, indices):
        """auto_linear: the tangent unpooled to the result's size."""
        return max_unpool_raw(ts[0], indices, tuple(result._a.shape[-self.n:]))

    def max_jvp(self, F, ts, xs, result, kernel_size, stride, padding, dilation, ceil_mode, result1):
        """gather(self_t.flatten(-n), -1, result1.flatten(-n)).view_as(result1)."""
        return self.gather_back(F, ts[0], result1, None)

    def adaptive_max_jvp(self, F, ts, xs, result, result1):
        return self.gather_back(F, ts[0], result1, None)

    def avg_jvp(self, F, ts, xs, result, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        return _AVG_RAW[self.n](ts[0], kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def adaptive_avg_jvp(self, F, ts, xs, result):
        return adaptive_avg_pool_raw(ts[0], tuple(result._a.shape[-self.n:]))

    def max_backward_jvp(self, F, ts, xs, result, indices, shape_):
        if ts[0] is None:
            return None
        return max_pool_backward(ts[0], xs[1], indices, self.rows["max"])

    def adaptive_max_backward_jvp(self, F, ts, xs, result, indices, shape_):
        if ts[0] is None:
            return None
        return max_pool_backward(ts[0], xs[1], indices, self.rows["adaptive_max"])

    def avg_backward_jvp(self, F, ts, xs, result, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override, shape_):
        if ts[0] is None:
            return None
        params = _avg_params(kernel_size, stride, padding, self.n)
        return avg_pool_backward(ts[0], xs[1], params, ceil_mode, count_include_pad, divisor_override,
                                 (kernel_size, stride, padding))

    def adaptive_avg_backward_jvp(self, F, ts, xs):
        if ts[0] is None:
            return None
        return adaptive_avg_backward(ts[0], xs[1], self.n)


_2D, _3D = _Formulas(2), _Formulas(3)


# The adaptive average's backward kernel saves grad_output's n sizes by name: its formulas take n arguments.

def _adaptive_avg_again2(F, gg, oh, ow, shape_):
    return _2D.adaptive_avg_again(F, gg, (oh, ow))


def _adaptive_avg_again3(F, gg, od, oh, ow, shape_):
    return _3D.adaptive_avg_again(F, gg, (od, oh, ow))


def _no_adaptive_avg_grad2(F, gg, oh, ow, shape_):
    return F.zeros(shape_, gg)


def _no_adaptive_avg_grad3(F, gg, od, oh, ow, shape_):
    return F.zeros(shape_, gg)


def _adaptive_avg_backward_jvp2(F, ts, xs, result, oh, ow, shape_):
    return _2D.adaptive_avg_backward_jvp(F, ts, xs)


def _adaptive_avg_backward_jvp3(F, ts, xs, result, od, oh, ow, shape_):
    return _3D.adaptive_avg_backward_jvp(F, ts, xs)


# fmt: off
# Each backward kernel is a row of its own (its node under create_graph): inputs grad_output and self,
# whose gradient is zeros_like(self).
_MAX_SAVES = ("self", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "result1")
_AVG_SAVES = ("self", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
_AVG_BACK_SAVES = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override", "shape")
_KERNEL_INPUTS = ("grad_output", "self")
#                         node                                     forward saves
MAX_POOL2D            = Op("MaxPool2DWithIndicesBackward0",         None, _MAX_SAVES, (_2D.max_backward,),
                           saves_tensors=True, versioned=("result1",), jvp=_2D.max_jvp)
AVG_POOL2D            = Op("AvgPool2DBackward0",                    None, _AVG_SAVES, (_2D.avg_backward,),
                           jvp=_2D.avg_jvp)
ADAPTIVE_AVG          = Op("AdaptiveAvgPool2DBackward0",            None, ("self",), (_2D.adaptive_avg_backward,),
                           jvp=_2D.adaptive_avg_jvp)
ADAPTIVE_MAX          = Op("AdaptiveMaxPool2DBackward0",            None, ("self", "result1"),
                           (_2D.adaptive_max_backward,), saves_tensors=True, versioned=("result1",),
                           jvp=_2D.adaptive_max_jvp)
MAX_POOL_BACKWARD     = Op("MaxPool2DWithIndicesBackwardBackward0", None, ("indices", "shape"),
                           (_2D.gather_back, _2D.no_max_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                           jvp=_2D.max_backward_jvp)
ADAPTIVE_MAX_BACKWARD = Op("AdaptiveMaxPool2DBackwardBackward0",    None, ("indices", "shape"),
                           (_2D.gather_back, _2D.no_max_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                           jvp=_2D.adaptive_max_backward_jvp)
AVG_POOL_BACKWARD     = Op("AvgPool2DBackwardBackward0",            None, _AVG_BACK_SAVES,
                           (_2D.avg_again, _2D.no_avg_grad), inputs=_KERNEL_INPUTS, jvp=_2D.avg_backward_jvp)
ADAPTIVE_AVG_BACKWARD = Op("AdaptiveAvgPool2DBackwardBackward0",    None, ("grad_output_sym_argsize_minus_2",
                                                                           "grad_output_sym_argsize_minus_1", "shape"),
                           (_adaptive_avg_again2, _no_adaptive_avg_grad2), inputs=_KERNEL_INPUTS,
                           jvp=_adaptive_avg_backward_jvp2)

MAX_POOL3D              = Op("MaxPool3DWithIndicesBackward0",         None, _MAX_SAVES, (_3D.max_backward,),
                             saves_tensors=True, versioned=("result1",), jvp=_3D.max_jvp)
AVG_POOL3D              = Op("AvgPool3DBackward0",                    None, _AVG_SAVES, (_3D.avg_backward,),
                             jvp=_3D.avg_jvp)
ADAPTIVE_AVG3D          = Op("AdaptiveAvgPool3DBackward0",            None, ("self",), (_3D.adaptive_avg_backward,),
                             jvp=_3D.adaptive_avg_jvp)
ADAPTIVE_MAX3D          = Op("AdaptiveMaxPool3DBackward0",            None, ("self", "result1"),
                             (_3D.adaptive_max_backward,), saves_tensors=True, versioned=("result1",),
                             jvp=_3D.adaptive_max_jvp)
MAX_POOL3D_BACKWARD     = Op("MaxPool3DWithIndicesBackwardBackward0", None, ("indices", "shape"),
                             (_3D.gather_back, _3D.no_max_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                             jvp=_3D.max_backward_jvp)
ADAPTIVE_MAX3D_BACKWARD = Op("AdaptiveMaxPool3DBackwardBackward0",    None, ("indices", "shape"),
                             (_3D.gather_back, _3D.no_max_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                             jvp=_3D.adaptive_max_backward_jvp)
AVG_POOL3D_BACKWARD     = Op("AvgPool3DBackwardBackward0",            None, _AVG_BACK_SAVES,
                             (_3D.avg_again, _3D.no_avg_grad), inputs=_KERNEL_INPUTS, jvp=_3D.avg_backward_jvp)
ADAPTIVE_AVG3D_BACKWARD = Op("AdaptiveAvgPool3DBackwardBackward0",    None, ("grad_output_sym_argsize_minus_3",
                                                                             "grad_output_sym_argsize_minus_2",
                                                                             "grad_output_sym_argsize_minus_1", "shape"),
                             (_adaptive_avg_again3, _no_adaptive_avg_grad3), inputs=_KERNEL_INPUTS,
                             jvp=_adaptive_avg_backward_jvp3)
MAX_UNPOOL2D            = Op("MaxUnpool2DBackward0",                  None, ("indices",), (_2D.unpool_backward,),
                             saves_tensors=True, versioned=("indices",), jvp=_2D.unpool_jvp)
MAX_UNPOOL3D            = Op("MaxUnpool3DBackward0",                  None, ("indices",), (_3D.unpool_backward,),
                             saves_tensors=True, versioned=("indices",), jvp=_3D.unpool_jvp)
# fmt: on
_2D.rows = {"max": MAX_POOL_BACKWARD, "adaptive_max": ADAPTIVE_MAX_BACKWARD, "avg": AVG_POOL_BACKWARD,
            "adaptive_avg": ADAPTIVE_AVG_BACKWARD}
_3D.rows = {"max": MAX_POOL3D_BACKWARD, "adaptive_max": ADAPTIVE_MAX3D_BACKWARD, "avg": AVG_POOL3D_BACKWARD,
            "adaptive_avg": ADAPTIVE_AVG3D_BACKWARD}
_FORMULAS = {2: _2D, 3: _3D}


# -------------------------------------------------------------------------------- backward kernel ops

def max_pool_backward(g: Tensor, self, indices: Tensor, row: Op) -> Tensor:
    in_shape = _shape_of(self)
    n = 3 if row in (MAX_POOL3D_BACKWARD, ADAPTIVE_MAX3D_BACKWARD) else 2
    out = scatter_planes(g._a, indices._a, in_shape, n)
    return apply(row, out, (g, self if self.__class__ is Tensor else None), (indices, in_shape))


def avg_pool_backward(g: Tensor, self, params, ceil_mode, count_include_pad, divisor_override, raw) -> Tensor:
    in_shape = _shape_of(self)
    out = avg_backward_array(g._a, in_shape, *params, ceil_mode, count_include_pad, divisor_override)
    row = _FORMULAS[len(params[0])].rows["avg"]
    return apply(row, out, (g, self if self.__class__ is Tensor else None),
                 (*raw, ceil_mode, count_include_pad, divisor_override, in_shape))


def adaptive_avg_backward(g: Tensor, self, n: int = 2) -> Tensor:
    in_shape = _shape_of(self)
    out = adaptive_avg_backward_array(g._a, in_shape, n)
    return apply(_FORMULAS[n].rows["adaptive_avg"], out, (g, self if self.__class__ is Tensor else None),
                 (*g._a.shape[g._a.ndim - n:], in_shape))


# ------------------------------------------------------------------------------------- 2-d and 3-d ops

def _avg_params(kernel_size, stride, padding, n: int = 2):
    fn = f"avg_pool{n}d"
    k = _pair(kernel_size, fn, "kernel_size", n=n)
    s = _pair(stride, fn, "stride", omitted=True, n=n) or k
    return k, s, _pair(padding, fn, "padding", n=n)


def _pool_sizes(sizes, k, s, pad, d, ceil):
    """Each spatial dim's output size (pooling_output_shape), first dim first."""
    if len(sizes) < len(k):
        return (0,) * len(k)
    return tuple(_output_size(*args, ceil) for args in zip(sizes, k, pad, s, d))


def _max_pool(a: Tensor, kernel_size, stride, padding, dilation, ceil_mode, n=2, fn=None, c_int=True):
    """max_pool{n}d_with_indices on (batch,) channels and n spatial dims: (values, indices). `c_int`: its C
    int parameters (PyTorch's own 1-d kernel, which borrows the 2-d one here, keeps 64-bit ones)."""
    name = f"max_pool{n}d"
    fn = fn or name
    _expect_tensor(a, fn)
    _flag(ceil_mode, fn, "ceil_mode", 6)
    ks = _ints(kernel_size, fn, "kernel_size", 2, n)
    st = _ints(stride, fn, "stride", 3, n) if stride is not None else ()
    pd = _ints(padding, fn, "padding", 4, n)
    dl = _ints(dilation, fn, "dilation", 5, n)
    k = _pair(ks, name, "kernel_size", c_int=c_int, n=n)
    s = _pair(st, name, "stride", omitted=True, c_int=c_int, n=n) or k
    pad = _pair(pd, name, "padding", c_int=c_int, n=n)
    d = _pair(dl, name, "dilation", c_int=c_int, n=n)
    x = a._a
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")
    outs = _pool_sizes(x.shape[-n:], k, s, pad, d, bool(ceil_mode))
    if n == 2:
        _shape_check(x, k, s, pad, d, outs)
    else:
        _shape_check3d(x, k, s, pad, d, outs, "max_pool3d_with_indices_out_cpu_template()", avg=False)
    _not_implemented(name, x, "fiuV")
    values, index = max_pool_array(x, k, s, pad, d, outs)
    values, index = in_inputs_format(values, x), in_inputs_format(index, x)
    indices = Tensor(index)
    out = apply(MAX_POOL2D if n == 2 else MAX_POOL3D, values, (a,), (ks, st, pd, dl, bool(ceil_mode), indices))
    return out, indices


def _avg_pool_out(a: Tensor, row: Op, params, outs, args) -> Tensor:
    """The average kernel's result and node, once the arguments passed their checks (`args`: the row's
    own arguments, saved as given)."""
    kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override = args
    out = avg_pool_array(a._a, *params, outs, bool(ceil_mode), bool(count_include_pad), divisor_override)
    if out.ndim == 4:                   # (PyTorch's avg_pool3d writes a contiguous result from any layout)
        out = in_inputs_format(out, a._a)
    return apply(row, out, (a,), (kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad),
                                  divisor_override))


def avg_pool2d_raw(a: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """avg_pool2d with int[] arguments already read (the row's own arguments, saved as given)."""
    k, s, pad = _avg_params(kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = a._a
    if x.ndim == 0:                     # PyTorch reads input.size(-3) first: a 0-d tensor has no dims to wrap
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    if x.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], "
                         "but got -3)")
    outs = _pool_sizes(x.shape[-2:], k, s, pad, (1, 1), bool(ceil_mode))     # more dims: the shape check's error
    _shape_check(x, k, s, pad, (1, 1), outs)
    if x.dtype.kind not in "fV" and x.dtype != np.int64:      # PyTorch's kernel: the float types and int64
        _not_implemented("avg_pool2d", x, "")
    return _avg_pool_out(a, AVG_POOL2D, (k, s, pad), outs,
                         (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))


def avg_pool3d_raw(a: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """avg_pool3d with int[] arguments already read: its checks come in another order than the 2-d ones."""
    k, s, pad = _avg_params(kernel_size, stride, padding, 3)
    x = a._a
    if x.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    outs = _pool_sizes(x.shape[-3:], k, s, pad, (1, 1, 1), bool(ceil_mode))
    _shape_check3d(x, k, s, pad, (1, 1, 1), outs, "avg_pool3d()", avg=True)
    if x.dtype.kind not in "fV" and x.dtype != np.int64 or x.dtype.char in "eE":     # float32/64 and int64 only
        _not_implemented("avg_pool3d_out_frame", x, "")
    return _avg_pool_out(a, AVG_POOL3D, (k, s, pad), outs,
                         (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))


_AVG_RAW = {2: avg_pool2d_raw, 3: avg_pool3d_raw}


def adaptive_avg_pool_raw(a: Tensor, outs) -> Tensor:
    """_adaptive_avg_pool2d / _adaptive_avg_pool3d (by the number of output sizes)."""
    x = a._a
    n = len(outs)
    fn = f"adaptive_avg_pool{n}d"
    # the 2-d kernel checks the dims' count, then the plane; the 3-d one every dim but the first, then the count
    if n == 2 and x.ndim not in (3, 4) or n == 3 and x.ndim not in (4, 5) and all(x.shape[1:]):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got {_sizes_text(x.shape)}")
    for i in range(x.ndim - 2, x.ndim) if n == 2 else range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes_text(x.shape)} with dimension "
                               f"{i} being empty")
    if n == 3:
        _not_implemented("adaptive_avg_pool3d_cpu", x, _FLOATS)
    elif all(outs):                 # the 2-d one makes an empty output without the kernel (any dtype)
        _not_implemented(fn, x, _FLOATS)
    out = adaptive_avg_array(x, outs)     # (PyTorch's 3-d kernel writes a contiguous result from any layout)
    return apply(ADAPTIVE_AVG if n == 2 else ADAPTIVE_AVG3D, in_inputs_format(out, x) if n == 2 else out, (a,))


def _adaptive_sizes(output_size, x: np.ndarray, fn: str, n: int = 2) -> tuple:
    """F's _list_with_default: an int, or a sequence whose None entries take the input's sizes."""
    if output_size.__class__ is int:        # one int for all: PyTorch's parser reads it into 64 bits
        int64_arg(output_size)
        return (output_size,) * n
    if output_size.__class__ is bool:       # an int to F's Python, refused by the parser after it
        raise TypeError(f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not bool")
    if output_size.__class__ is str:        # F's Python takes its length and its characters
        output_size = list(output_size)
    if output_size.__class__ not in (tuple, list):
        raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
    if x.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    sizes = tuple(x.shape[len(x.shape) - len(output_size) + i] if v is None else v
                  for i, v in enumerate(output_size))
    return shape.int_list((sizes,), fn, "output_size", 2)


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    _expect_tensor(input, "adaptive_avg_pool2d")
    sizes = _adaptive_sizes(output_size, input._a, "adaptive_avg_pool2d")
    return _adaptive_avg(input, sizes)


@autocast_policy("fp32")
def adaptive_avg_pool3d(input, output_size) -> Tensor:
    _expect_tensor(input, "adaptive_avg_pool3d")
    sizes = _adaptive_sizes(output_size, input._a, "adaptive_avg_pool3d", 3)
    return _adaptive_avg(input, sizes, 3)


def _adaptive_avg(a: Tensor, sizes, n: int = 2) -> Tensor:
    fn = f"adaptive_avg_pool{n}d"
    if len(sizes) != n:
        raise RuntimeError(f"{fn}: output_size must be {n}")
    if min(sizes) < 0:
        shown = f"{sizes[0]}, {sizes[1]}" if n == 2 else f"{sizes[0]}, {sizes[1]},{sizes[2]}"   # PyTorch's spacing
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received {{{shown}}}")
    if all(v == 1 for v in sizes):
        return reduce.mean(a, tuple(range(-1, -n - 1, -1)), True)      # PyTorch's shortcut: a mean over the plane
    return adaptive_avg_pool_raw(a, sizes)


def _adaptive_max(a: Tensor, sizes, n: int = 2):
    x = a._a
    fn = f"adaptive_max_pool{n}d"
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got: {_sizes_text(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes_text(x.shape)} with dimension {i} being empty")
    if len(sizes) != n:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {n}")
    if min(sizes) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{_sizes_text(x.shape[:-n] + tuple(sizes))}")
    _not_implemented(fn if n == 2 else "adaptive_max_pool3d_cpu", x, _FLOATS)
    values, index = adaptive_max_array(x, sizes)
    if n == 2:                          # (PyTorch's 3-d kernel writes contiguous results from any layout)
        values, index = in_inputs_format(values, x), in_inputs_format(index, x)
    indices = Tensor(index)
    return apply(ADAPTIVE_MAX if n == 2 else ADAPTIVE_MAX3D, values, (a,), (indices,)), indices


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    _expect_tensor(input, "adaptive_max_pool2d")
    return _adaptive_max(input, _adaptive_sizes(output_size, input._a, "adaptive_max_pool2d"))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    pair = adaptive_max_pool2d_with_indices(input, output_size)
    return pair if return_indices else pair[0]


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    _expect_tensor(input, "adaptive_max_pool3d")
    return _adaptive_max(input, _adaptive_sizes(output_size, input._a, "adaptive_max_pool3d", 3), 3)


@autocast_policy("fp32")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    pair = adaptive_max_pool3d_with_indices(input, output_size)
    return pair if return_indices else pair[0]


# With indices, F calls torch._C._nn.max_pool{n}d_with_indices, whose parser words its errors with that name
# (and F.max_pool3d_with_indices reads input.is_cuda first).

def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, fn="max_pool2d_with_indices")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def torch_max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """torch.max_pool2d: the values only."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'is_cuda'")
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3, fn="max_pool3d_with_indices")


@autocast_policy("fp32")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)[0]


def torch_max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """torch.max_pool3d: the values only."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)[0]


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, n,
              ceil_by_keyword=False):
    fn = f"avg_pool{n}d"
    _expect_tensor(input, fn)
    _flag(ceil_mode, fn, "ceil_mode", None if ceil_by_keyword else 5)
    _flag(count_include_pad, fn, "count_include_pad", 6)
    ks = _ints(kernel_size, fn, "kernel_size", 2, n)
    st = _ints(stride, fn, "stride", 3, n) if stride is not None else ()
    pd = _ints(padding, fn, "padding", 4, n)
    if divisor_override is not None and divisor_override.__class__ is not int:
        raise TypeError(f"{fn}(): argument 'divisor_override' (position 7) must be int, "
                        f"not {type(divisor_override).__name__}")
    return _AVG_RAW[n](input, ks, st, pd, ceil_mode, count_include_pad, divisor_override)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@autocast_policy("fp32")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


# ------------------------------------------------------------------------------------------- 1-d ops

def _check_dims(x: np.ndarray, fn: str):
    """checkDimRange(fn, self, 2, 4)."""
    if not 2 <= x.ndim < 4:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")


def _one(values: tuple, fn: str, name: str) -> tuple:
    if len(values) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(values)})")
    return values


def _squeezed(t: Tensor) -> Tensor:
    return shape.squeeze(t, -2)


def _max_pool1d(a, kernel_size, stride, padding, dilation, ceil_mode, fn="max_pool1d", impl=False):
    """`impl`: without indices, PyTorch runs its own 1-d kernel (floating types only) after the same checks."""
    _expect_tensor(a, fn)
    _flag(ceil_mode, fn, "ceil_mode", 6)
    ks = _ints(kernel_size, fn, "kernel_size", 2, 1)
    st = _ints(stride, fn, "stride", 3, 1) if stride is not None else ()
    pd = _ints(padding, fn, "padding", 4, 1)
    dl = _ints(dilation, fn, "dilation", 5, 1)
    x = a._a
    if not impl:
        return _max_pool1d_with_indices(a, ks, st, pd, dl, ceil_mode)
    if not ((x.ndim == 2 and x.shape[0] and x.shape[1]) or (x.ndim == 3 and x.shape[1] and x.shape[2])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{_sizes_text(x.shape)}")
    if len(ks) != 1:
        raise RuntimeError("max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 "
                           f"but got size {len(ks)}")
    if len(st) > 1:
        raise RuntimeError("max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 "
                           f"but got size {len(st)}")
    if len(pd) != 1:
        raise RuntimeError("max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 "
                           f"but got size {len(pd)}")
    if len(dl) != 1:
        raise RuntimeError("max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 "
                           f"but got size {len(dl)}")
    k, s, p, d = ks[0], (st or ks)[0], pd[0], dl[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    ow = _output_size(x.shape[-1], k, p, s, d, bool(ceil_mode))
    if ow <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {ow}")
    _not_implemented("max_pool1d_impl", x, "fV")
    # PyTorch's own 1-d kernel (no indices, no gradient) keeps 64-bit parameters; otherwise the 2-d one runs
    values, indices = _max_pool(shape.unsqueeze(a, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                                c_int=needs_grad(a))
    return _squeezed(values), _squeezed(indices)


def _max_pool1d_with_indices(a: Tensor, ks, st, pd, dl, ceil_mode):
    """max_pool1d_with_indices: the dims' count and one int per argument, then max_pool2d_with_indices on
    the input unsqueezed at -2, with all of its own checks."""
    x = a._a
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for max_pool1d)")
    for values, name in ((ks, "kernel_size"), (st or ks, "stride"), (pd, "padding"), (dl, "dilation")):
        _one(values, "max_pool1d", name)
    values, indices = _max_pool(shape.unsqueeze(a, -2), (1,) + ks, (1,) + (st or ks), (0,) + pd, (1,) + dl,
                                ceil_mode)
    return _squeezed(values), _squeezed(indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, impl=True)[0]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, fn="max_pool1d_with_indices")


def torch_max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, impl=True)[0]


def torch_max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, fn="max_pool1d_with_indices")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    return _avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def _avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, ceil_by_keyword=False):
    _expect_tensor(input, "avg_pool1d")
    _flag(ceil_mode, "avg_pool1d", "ceil_mode", None if ceil_by_keyword else 5)
    _flag(count_include_pad, "avg_pool1d", "count_include_pad", 6)
    ks = _ints(kernel_size, "avg_pool1d", "kernel_size", 2, 1)
    st = _ints(stride, "avg_pool1d", "stride", 3, 1) if stride is not None else ()
    pd = _ints(padding, "avg_pool1d", "padding", 4, 1)
    _check_dims(input._a, "avg_pool1d")
    _one(ks, "avg_pool1d", "kernel_size")
    if st:
        _one(st, "avg_pool1d", "stride")
    _one(pd, "avg_pool1d", "padding")
    st = st or ks
    out = avg_pool2d_raw(shape.unsqueeze(input, -2), (1, ks[0]), (1, st[0]), (0, pd[0]), ceil_mode,
                         count_include_pad, None)
    return _squeezed(out)


def _output_one(input: Tensor, output_size, fn: str) -> int:
    """The parser's int[1], then the dims' count, then one int (PyTorch's order)."""
    sizes = _ints(output_size, fn, "output_size", 2, 1)
    _check_dims(input._a, fn)
    return _one(sizes, fn, "output_size")[0]


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    _expect_tensor(input, "adaptive_avg_pool1d")
    size = _output_one(input, output_size, "adaptive_avg_pool1d")
    return _squeezed(_adaptive_avg(shape.unsqueeze(input, -2), (1, size)))


def _adaptive_max1d(input, output_size):
    _expect_tensor(input, "adaptive_max_pool1d")
    size = _output_one(input, output_size, "adaptive_max_pool1d")
    x = input._a
    for i in range(1, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes_text(x.shape)} with dimension {i} being empty")
    values, indices = _adaptive_max(shape.unsqueeze(input, -2), (1, size))
    return _squeezed(values), _squeezed(indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    pair = _adaptive_max1d(input, output_size)
    return pair if return_indices else pair[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max1d(input, output_size)


# torch.* forms: no return_indices; torch.adaptive_max_pool1d always gives the pair.

def torch_avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def torch_adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool1d(input, output_size)


def torch_adaptive_max_pool1d(input, output_size):
    return _adaptive_max1d(input, output_size)


# ---------------------------------------------------------------------------------- power-average pools
# F.lp_pool1d/2d/3d are PyTorch's Python, composed of other ops: pow, avg_pool, sign * relu(abs), mul by
# the window's size, pow(1 / p); for p = +-inf a max pooling of abs. Their grad_fn chains and numbers are
# those ops', so they are composed here the same way, in the same order.

def _unpacked(kernel_size, n: int) -> tuple:
    """torch.nn.modules.utils._pair / _triple, then unpacked into n names, as F's Python does."""
    sizes = tuple(kernel_size) if kernel_size.__class__ in (tuple, list, str) else (kernel_size,) * n
    if len(sizes) > n:
        raise ValueError(f"too many values to unpack (expected {n})")
    if len(sizes) < n:
        raise ValueError(f"not enough values to unpack (expected {n}, got {len(sizes)})")
    return sizes


_MAX_POOLS = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n: int) -> Tensor:
    sizes = _unpacked(kernel_size, n) if n > 1 else (kernel_size,)     # the 1-d form takes it as given
    if norm_type.__class__ in (int, float, bool):
        if norm_type == float("inf"):
            return _MAX_POOLS[n](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -_MAX_POOLS[n](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    powered = input.pow(norm_type)
    if n == 1:
        out = _avg_pool1d(powered, kernel_size, stride, 0, ceil_mode, True, ceil_by_keyword=stride is None)
    else:       # without a stride, F passes ceil_mode by keyword: its type error has no position
        out = _avg_pool(powered, kernel_size, stride, 0, ceil_mode, True, None, n, ceil_by_keyword=stride is None)
    window = sizes[0]
    for k in sizes[1:]:
        window = window * k
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ---------------------------------------------------------------------------------------- max unpooling
# F.max_unpool1d/2d/3d are Python around torch._C._nn.max_unpool2d/3d: the output size (given, or the
# size the pooling came from) is worked out in Python, with Python's own errors; the 1-d form unsqueezes
# input and indices at -1 and unpools in 2-d.

def _ntuple(value, n: int) -> tuple:
    """torch.nn.modules.utils._single/_pair/_triple: an iterable as a tuple, anything else repeated."""
    return tuple(value) if value.__class__ in (tuple, list, str) else (value,) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size) -> list:
    """F._unpool_output_size: the default size, or output_size checked against it."""
    input_size = input.size()
    n = len(kernel_size)
    default_size = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            min_size = default_size[d] - stride[d]
            max_size = default_size[d] + stride[d]
            if not min_size < output_size[d] < max_size:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                                 f'{max_size})')
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def max_unpool_raw(a: Tensor, indices: Tensor, outs, stride=(1, 1, 1)) -> Tensor:
    """max_unpool2d (two output sizes) or max_unpool3d (three), after PyTorch's checks in its order."""
    n = len(outs)
    fn = f"max_unpooling{n}d"
    x, idx = a._a, indices._a
    if idx.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {type_word(idx)}" if n == 2 else ""))
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {fn} should be a {n + 1}d or {n + 2}d Tensor, but got a tensor with "
                           f"{x.ndim} dimensions.")
    if x.shape != idx.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes_text(x.shape)}) but got indices tensor with shape: {_sizes_text(idx.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {_sizes_text(x.shape)} with dimension {i} being empty.")
    if n == 3 and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {_sizes_text(stride)}")
    out_shape = x.shape[:-n] + tuple(outs)
    budget.check_tensor(out_shape, x.dtype.itemsize)
    volume = int(np.prod(outs, dtype=np.int64))
    if not volume:              # an empty output is made without the kernel (any dtype, any index)
        return apply(MAX_UNPOOL2D if n == 2 else MAX_UNPOOL3D, np.zeros(out_shape, x.dtype), (a,), (indices,))
    _not_implemented(f"max_unpool{n}d", x, _FLOATS)
    flat_idx = idx.reshape(-1, int(np.prod(idx.shape[-n:], dtype=np.int64)) if idx.ndim >= n else 1)
    bad = (flat_idx < 0) | (flat_idx >= volume)
    if bad.any():       # the kernel goes on past a bad index and reports the last one it met
        raise RuntimeError(f"Found an invalid max index: {flat_idx[bad][-1]} (output volumes are of size "
                           f"{'x'.join(str(o) for o in outs)})")
    out = np.zeros((flat_idx.shape[0], volume), dtype=x.dtype)
    if flat_idx.size:       # in input order: where two indices meet, the later value stays, as in the kernel
        out[np.arange(flat_idx.shape[0])[:, None], flat_idx] = x.reshape(flat_idx.shape)
    return apply(MAX_UNPOOL2D if n == 2 else MAX_UNPOOL3D, out.reshape(out_shape), (a,), (indices,))


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n: int) -> Tensor:
    kernel_size = _ntuple(kernel_size, n)
    stride = _ntuple(stride, n) if stride is not None else kernel_size
    padding = _ntuple(padding, n)
    outs = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    if n == 1:
        outs = list(outs) + [1] if outs.__class__ is list else tuple(outs) + (1,)
        sizes = shape.int_list((outs,), "max_unpool2d", "output_size", 3)
        return shape.squeeze(max_unpool_raw(shape.unsqueeze(input, -1), shape.unsqueeze(indices, -1), sizes), -1)
    sizes = shape.int_list((outs,), f"max_unpool{n}d", "output_size", 3)
    if n == 3:
        return max_unpool_raw(input, indices, sizes, shape.int_list((stride,), "max_unpool3d", "stride", 4))
    return max_unpool_raw(input, indices, sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@autocast_policy("fp32")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@autocast_policy("fp32")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
