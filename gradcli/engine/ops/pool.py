"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d and adaptive_max_pool1d/2d, with their
backward kernels as ops of their own (double backward).

PyTorch computes every pooling on 3-d or 4-d input with its 2-d kernels; the 1-d functions unsqueeze
the input at -2, pool with a kernel of height 1 and squeeze the result, and adaptive_avg_pool2d to
(1, 1) is a mean, so their grad_fn chains are those ops'. The kernels' float results are fixed by
their loops (aten/src/ATen/native/cpu/*PoolKernel.cpp): a window's sum is accumulated element by
element in row-major order from zero, in the input's dtype, then divided (avg: by one divisor,
adaptive: by the window's height, then by its width); a backward kernel adds each output's share into
the input in output order. The arrays below keep those orders: loops run over kernel offsets or over
a window's elements with np.add.accumulate (sequential, unlike np.sum's pairwise sums), never over
pixels. Max pooling picks the first maximum in window order, the last NaN when there is one, and
a window of -inf its first element inside the input.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine import budget
from gradcli.engine.ops import reduce, shape
from gradcli.engine.recording import Op, apply, int64_arg, needs_grad, type_word
from gradcli.engine.tensor import Tensor

_FLOATS = "f"

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
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}")


def _pair(values: tuple, fn: str, what: str, omitted=False, c_int=True) -> tuple | None:
    for v in values:            # the parser reads each int into 64 bits first
        if v.__class__ is int:
            int64_arg(v)
    if len(values) in (1, 2):
        if c_int:               # the 2-d kernels take C ints (safe_downcast), each list after its length check
            _c_ints(values)
        return values * 2 if len(values) == 1 else values
    if omitted and not values:
        return None
    if what == "stride":
        raise RuntimeError(f"{fn}: stride must either be omitted, a single int, or a tuple of two ints")
    if what == "dilation":
        raise RuntimeError(f"{fn}: dilation must be either a single int, or a tuple of two ints")
    raise RuntimeError(f"{fn}: {what} must either be a single int, or a tuple of two ints")


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


def _not_implemented(fn: str, x: np.ndarray, kinds: str):
    if x.dtype.kind not in kinds:
        raise NotImplementedError(f'"{fn}" not implemented for \'{type_word(x)}\'')


# --------------------------------------------------------------------------------------- array kernels


def _planes(x: np.ndarray) -> np.ndarray:
    """x as (planes, H, W)."""
    return x.reshape((-1,) + x.shape[-2:])


def _padded(x3: np.ndarray, rows: int, cols: int, ph: int, pw: int, fill) -> np.ndarray:
    """x3 (planes, H, W) placed at (ph, pw) in a buffer of `rows` x `cols` filled with `fill`."""
    budget.check_tensor((x3.shape[0], rows, cols), x3.dtype.itemsize)
    buf = np.full((x3.shape[0], rows, cols), fill, dtype=x3.dtype)
    buf[:, ph:ph + x3.shape[1], pw:pw + x3.shape[2]] = x3
    return buf


def _extent(o: int, k: int, s: int, d: int, n: int, pad: int) -> int:
    """Rows (or columns) a padded buffer needs so every window of o outputs fits."""
    return max((o - 1) * s + (k - 1) * d + 1, n + pad) + pad


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
    if win.dtype.kind == "f":
        nan = np.isnan(win)
        has = nan.any(axis=-1)
        if has.any():
            last = win.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
            pick = np.where(has, last, pick)
    return pick


def _window_max(buf: np.ndarray, out: tuple, k: tuple, s: tuple, d: tuple, rows, rin, cols, cin):
    """Each window's maximum and its position in the window (row-major), as the CPU kernel scans it: it
    starts at the window's first position at or past 0 in each dim, with the lowest value, and an element
    inside the input replaces the maximum when `val > maxval || isnan(val)` (so the first maximum, or the
    last NaN; a window of -inf, or with nothing inside, keeps that first position). One pass over the
    outputs per kernel offset, each offset's elements a strided view of `buf` (rows, cols: each window's
    positions per dim; rin, cin: whether they are inside)."""
    (kh, kw), (sh, sw), (dh, dw) = k, s, d
    floats = buf.dtype.kind == "f"
    maxval = np.full(out, _lowest(buf.dtype), dtype=buf.dtype)
    first = (rows >= 0).argmax(axis=1)[:, None] * kw + (cols >= 0).argmax(axis=1)[None, :]
    pick = np.broadcast_to(first, out).copy()
    s0, s1, s2 = buf.strides
    for a in range(kh):
        for b in range(kw):
            val = as_strided(buf[:, a * dh:, b * dw:], out, (s0, s1 * sh, s2 * sw), writeable=False)
            upd = val > maxval
            if floats:
                upd |= np.isnan(val)
            upd &= rin[:, a][:, None] & cin[:, b][None, :]
            np.copyto(maxval, val, where=upd)
            np.copyto(pick, a * kw + b, where=upd)
    return maxval, pick


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool_array(x: np.ndarray, k, s, pad, d, out_hw):
    """max_pool2d_with_indices on a 3-d or 4-d array: values and int64 indices into each H*W plane."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = k, s, pad, d, out_hw
    h, w = x.shape[-2:]
    x3 = _planes(x)
    p = x3.shape[0]
    budget.check_tensor(x.shape[:-2] + (oh, ow), x.dtype.itemsize)      # the result, as PyTorch allocates it
    buf = _padded(x3, _extent(oh, kh, sh, dh, h, ph), _extent(ow, kw, sw, dw, w, pw), ph, pw, _lowest(x.dtype))
    rows, rin = _inside(oh, kh, sh, dh, ph, h)
    cols, cin = _inside(ow, kw, sw, dw, pw, w)
    values, pick = _window_max(buf, (p, oh, ow), (kh, kw), (sh, sw), (dh, dw), rows, rin, cols, cin)
    i, j = np.divmod(pick, kw)
    index = rows[np.arange(oh)[:, None], i] * w + cols[np.arange(ow)[None, :], j]
    out_shape = x.shape[:-2] + (oh, ow)
    return values.reshape(out_shape), index.astype(np.int64).reshape(out_shape)


def scatter_planes(g: np.ndarray, index: np.ndarray, in_shape) -> np.ndarray:
    """The max backward kernels: each output's gradient added at its index, in output order."""
    h, w = in_shape[-2:]
    g2 = g.reshape(-1, g.shape[-2] * g.shape[-1]) if g.ndim >= 2 else g.reshape(1, -1)
    out = np.zeros((g2.shape[0], h * w), dtype=g.dtype)
    if g2.size:
        np.add.at(out, (np.arange(g2.shape[0])[:, None], index.reshape(g2.shape)), g2)
    return out.reshape(in_shape)


def gather_planes(g: np.ndarray, index: np.ndarray) -> np.ndarray:
    """max_pool_double_backward: the gradient read at each output's index."""
    flat = g.reshape(g.shape[:-2] + (-1,))
    idx = index.reshape(index.shape[:-2] + (-1,))
    return np.take_along_axis(flat, idx, axis=-1).reshape(index.shape)


def _avg_divisors(h, w, k, s, pad, out_hw, ceil, count_include_pad, divisor_override):
    """Per output: the divisor and whether its window reaches the input at all."""
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = k, s, pad, out_hw
    h0, w0 = np.arange(oh) * sh - ph, np.arange(ow) * sw - pw
    h1, w1 = np.minimum(h0 + kh, h + ph), np.minimum(w0 + kw, w + pw)
    rows = np.minimum(h1, h) - np.maximum(h0, 0)
    cols = np.minimum(w1, w) - np.maximum(w0, 0)
    if divisor_override is not None:
        divisor = np.full((oh, ow), divisor_override, dtype=np.int64)
    elif count_include_pad:
        divisor = (h1 - h0)[:, None] * (w1 - w0)[None, :]
    else:
        divisor = rows[:, None] * cols[None, :]
    return divisor, (rows > 0)[:, None] & (cols > 0)[None, :]


def _opmath(dtype) -> np.dtype:
    """The kernels' accumulator type (at::opmath_type): float32 for float16, the dtype itself otherwise."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _divide(total: np.ndarray, divisor: np.ndarray) -> np.ndarray:
    """sum / divide_factor in the kernel's type: a float division, or C++'s truncating one for integers."""
    if total.dtype.kind == "f":
        return total / divisor.astype(total.dtype)
    divisor = np.where(divisor == 0, 1, divisor)
    q = np.abs(total) // np.abs(divisor)
    return np.where((total < 0) != (divisor < 0), -q, q).astype(total.dtype)


def avg_pool_array(x: np.ndarray, k, s, pad, out_hw, ceil, count_include_pad, divisor_override) -> np.ndarray:
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = k, s, pad, out_hw
    h, w = x.shape[-2:]
    x3 = _planes(x)
    budget.check_tensor(x.shape[:-2] + (oh, ow), x.dtype.itemsize)
    buf = _padded(x3, _extent(oh, kh, sh, 1, h, ph), _extent(ow, kw, sw, 1, w, pw), ph, pw, 0)
    total = np.zeros((x3.shape[0], oh, ow), dtype=_opmath(x.dtype))
    for i in range(kh):             # a padded zero adds nothing, so each sum is the kernel's, in its order
        for j in range(kw):
            total += buf[:, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw]
    divisor, reached = _avg_divisors(h, w, k, s, pad, out_hw, ceil, count_include_pad, divisor_override)
    out = np.where(reached, _divide(total, divisor), x.dtype.type(0))
    return out.astype(x.dtype, copy=False).reshape(x.shape[:-2] + (oh, ow))


def avg_backward_array(g: np.ndarray, in_shape, k, s, pad, ceil, count_include_pad, divisor_override):
    """avg_pool2d_backward: each output's gradient over its divisor, added over its window in output
    order (the kernel offsets from last to first give each input its outputs in increasing order)."""
    (kh, kw), (sh, sw), (ph, pw) = k, s, pad
    h, w = in_shape[-2:]
    oh, ow = g.shape[-2:]
    divisor, reached = _avg_divisors(h, w, k, s, pad, (oh, ow), ceil, count_include_pad, divisor_override)
    delta = np.where(reached, _divide(_planes(g), divisor), g.dtype.type(0)).astype(g.dtype, copy=False)
    rows, cols = _extent(oh, kh, sh, 1, h, ph), _extent(ow, kw, sw, 1, w, pw)
    budget.check_tensor((delta.shape[0], rows, cols), g.dtype.itemsize)
    buf = np.zeros((delta.shape[0], rows, cols), dtype=g.dtype)
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            buf[:, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw] += delta
    return np.ascontiguousarray(buf[:, ph:ph + h, pw:pw + w]).reshape(in_shape)


def _adaptive_ranges(o: int, n: int):
    """start_index / end_index of each adaptive window along one axis, as (o, K) positions and validity."""
    starts = (np.arange(o) * n) // o
    ends = -((-(np.arange(o) + 1) * n) // o)
    k = int((ends - starts).max()) if o else 0
    pos = starts[:, None] + np.arange(k)[None, :]
    return np.minimum(pos, n - 1), pos < ends[:, None], ends - starts


def _adaptive_windows(x: np.ndarray, out_hw, fill):
    """Each adaptive window's elements in row-major order, (planes, oh, ow, K), with `fill` past its end."""
    h, w = x.shape[-2:]
    (oh, ow) = out_hw
    rows, rin, kh = _adaptive_ranges(oh, h)
    cols, cin, kw = _adaptive_ranges(ow, w)
    x3 = _planes(x)
    kr, kc = rows.shape[1], cols.shape[1]
    budget.check_tensor((x3.shape[0], oh, ow, kr * kc), max(x.dtype.itemsize, 8))
    win = x3[:, rows[:, None, :, None], cols[None, :, None, :]]       # (planes, oh, ow, kr, kc)
    valid = rin[:, None, :, None] & cin[None, :, None, :]
    win = np.where(valid, win, x.dtype.type(fill)).reshape(x3.shape[0], oh, ow, kr * kc)
    index = (rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(oh, ow, kr * kc)
    return win, valid.reshape(oh, ow, kr * kc), index, kh, kw


def adaptive_avg_array(x: np.ndarray, out_hw) -> np.ndarray:
    oh, ow = out_hw
    budget.check_tensor(x.shape[:-2] + (oh, ow), x.dtype.itemsize)      # the result, as PyTorch allocates it
    if not oh or not ow or not x.size:
        return np.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
    win, _, _, kh, kw = _adaptive_windows(x, out_hw, 0)
    acc = _opmath(x.dtype)
    # add.accumulate sums in order; + 0 turns a sum of -0.0s into the kernel's +0.0 (it starts from 0)
    total = np.add.accumulate(win, axis=-1, dtype=acc)[..., -1] + acc.type(0)
    out = total / kh.astype(acc)[:, None] / kw.astype(acc)[None, :]
    return out.astype(x.dtype, copy=False).reshape(x.shape[:-2] + (oh, ow))


def adaptive_avg_backward_array(g: np.ndarray, in_shape) -> np.ndarray:
    """_adaptive_avg_pool2d_backward: each output's gradient / kh / kw added over its window, in output order."""
    h, w = in_shape[-2:]
    oh, ow = g.shape[-2:]
    out = np.zeros((int(np.prod(in_shape[:-2], dtype=np.int64)), h * w), dtype=g.dtype)
    if g.size:
        rows, rin, kh = _adaptive_ranges(oh, h)
        cols, cin, kw = _adaptive_ranges(ow, w)
        delta = _planes(g) / kh.astype(g.dtype)[:, None] / kw.astype(g.dtype)[None, :]
        valid = (rin[:, None, :, None] & cin[None, :, None, :])
        index = (rows[:, None, :, None] * w + cols[None, :, None, :])
        kr, kc = rows.shape[1], cols.shape[1]
        budget.check_tensor((out.shape[0], oh, ow, kr * kc), 16)
        values = np.broadcast_to(delta[:, :, :, None, None], delta.shape + (kr, kc))[:, valid]
        np.add.at(out, (np.arange(out.shape[0])[:, None], np.broadcast_to(index[valid], values.shape)), values)
    return out.reshape(in_shape)


def adaptive_max_array(x: np.ndarray, out_hw):
    oh, ow = out_hw
    budget.check_tensor(x.shape[:-2] + (oh, ow), x.dtype.itemsize)
    if not oh or not ow or not x.size:
        empty = x.shape[:-2] + (oh, ow)
        return np.zeros(empty, dtype=x.dtype), np.zeros(empty, dtype=np.int64)
    win, valid, index, _, _ = _adaptive_windows(x, out_hw, -np.inf)
    pick = _pick_max(win, valid)
    values = np.take_along_axis(win, pick[..., None], axis=-1)[..., 0]
    where = np.take_along_axis(np.broadcast_to(index, win.shape), pick[..., None], axis=-1)[..., 0]
    shape_ = x.shape[:-2] + (oh, ow)
    return values.reshape(shape_), where.astype(np.int64).reshape(shape_)


# ------------------------------------------------------------------------------------------- formulas
# A formula runs on numpy arrays in a plain backward and on Tensors under create_graph (F.tensors),
# where the backward kernel is a recorded op of its own (the rows' *BackwardBackward0 nodes).


def _shape_of(x):
    return tuple(x._a.shape) if x.__class__ is Tensor else tuple(x.shape)


def _max_backward(F, g, self, kernel_size, stride, padding, dilation, ceil_mode, result1):
    if F.tensors:
        return max_pool_backward(g, self, result1, MAX_POOL_BACKWARD)
    return scatter_planes(g, result1, self.shape)


def _check_adaptive_grad(g, kind: str) -> None:
    """adaptive_{avg,max}_pool2d_backward's check: an output with an empty plane has no gradient to give."""
    shape = g.shape if g.__class__ is not Tensor else g._a.shape
    for d in range(len(shape) - 3, len(shape)):
        if d >= 0 and shape[d] == 0:
            raise RuntimeError(f"adaptive_{kind}_pool2d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {_sizes_text(shape)} with dimension "
                               f"{d} being empty")


def _adaptive_max_backward(F, g, self, result1):
    _check_adaptive_grad(g, "max")
    if F.tensors:
        return max_pool_backward(g, self, result1, ADAPTIVE_MAX_BACKWARD)
    return scatter_planes(g, result1, self.shape)


def _avg_backward(F, g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    params = _avg_params(kernel_size, stride, padding)
    if F.tensors:
        return avg_pool_backward(g, self, params, ceil_mode, count_include_pad, divisor_override,
                                 (kernel_size, stride, padding))
    return avg_backward_array(g, self.shape, *params, ceil_mode, count_include_pad, divisor_override)


def _adaptive_avg_backward(F, g, self):
    _check_adaptive_grad(g, "avg")
    if F.tensors:
        return adaptive_avg_backward(g, self)
    return adaptive_avg_backward_array(g, self.shape)


def _gather_back(F, gg, indices, shape_):
    """max_pool_double_backward(grad, indices, 2): grad.flatten(-2).gather(-1, indices.flatten(-2)).view(indices)."""
    if F.tensors:
        flat = shape.flatten(gg, -2)
        picked = shape.gather(flat, -1, shape.flatten(indices, -2))
        return shape.view(picked, tuple(indices._a.shape))
    return gather_planes(gg, indices)


def _no_max_grad(F, gg, indices, shape_):
    """The backward kernels' gradient for `self`: zeros_like(self) (only its shape is read)."""
    return F.zeros(shape_, gg)


def _no_avg_grad(F, gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, shape_):
    return F.zeros(shape_, gg)


def _no_adaptive_avg_grad(F, gg, oh, ow, shape_):
    return F.zeros(shape_, gg)


def _avg_again(F, gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, shape_):
    if F.tensors:
        return avg_pool2d_raw(gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    k, s, pad = _avg_params(kernel_size, stride, padding)
    out_hw = _pool_sizes(gg.shape[-2:] if gg.ndim >= 2 else (), k, s, pad, (1, 1), ceil_mode)
    return avg_pool_array(gg, k, s, pad, out_hw, ceil_mode, count_include_pad, divisor_override)


def _adaptive_avg_again(F, gg, oh, ow, shape_):
    if F.tensors:
        return adaptive_avg_pool2d_raw(gg, (oh, ow))
    return adaptive_avg_array(gg, (oh, ow))


# Forward-mode columns (derivatives.yaml's result: lines).

def _max_jvp(F, ts, xs, result, kernel_size, stride, padding, dilation, ceil_mode, result1):
    """gather(self_t.flatten(-2), -1, result1.flatten(-2)).view_as(result1)."""
    return _gather_back(F, ts[0], result1, None)


def _adaptive_max_jvp(F, ts, xs, result, result1):
    return _gather_back(F, ts[0], result1, None)


def _avg_jvp(F, ts, xs, result, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return avg_pool2d_raw(ts[0], kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_avg_jvp(F, ts, xs, result):
    return adaptive_avg_pool2d_raw(ts[0], tuple(result._a.shape[-2:]))


def _max_backward_jvp(F, ts, xs, result, indices, shape_):
    if ts[0] is None:
        return None
    return max_pool_backward(ts[0], xs[1], indices, MAX_POOL_BACKWARD)


def _max_backward_jvp_adaptive(F, ts, xs, result, indices, shape_):
    if ts[0] is None:
        return None
    return max_pool_backward(ts[0], xs[1], indices, ADAPTIVE_MAX_BACKWARD)


def _avg_backward_jvp(F, ts, xs, result, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override, shape_):
    if ts[0] is None:
        return None
    params = _avg_params(kernel_size, stride, padding)
    return avg_pool_backward(ts[0], xs[1], params, ceil_mode, count_include_pad, divisor_override,
                             (kernel_size, stride, padding))


def _adaptive_avg_backward_jvp(F, ts, xs, result, oh, ow, shape_):
    if ts[0] is None:
        return None
    return adaptive_avg_backward(ts[0], xs[1])


# fmt: off
# Each backward kernel is a row of its own (its node under create_graph): inputs grad_output and self,
# whose gradient is zeros_like(self).
#                         node                                     forward saves
MAX_POOL2D            = Op("MaxPool2DWithIndicesBackward0",        None, ("self", "kernel_size", "stride", "padding",
                                                                          "dilation", "ceil_mode", "result1"),
                           (_max_backward,), saves_tensors=True, jvp=_max_jvp)
AVG_POOL2D            = Op("AvgPool2DBackward0",                   None, ("self", "kernel_size", "stride", "padding",
                                                                          "ceil_mode", "count_include_pad",
                                                                          "divisor_override"),
                           (_avg_backward,), jvp=_avg_jvp)
ADAPTIVE_AVG          = Op("AdaptiveAvgPool2DBackward0",           None, ("self",),
                           (_adaptive_avg_backward,), jvp=_adaptive_avg_jvp)
ADAPTIVE_MAX          = Op("AdaptiveMaxPool2DBackward0",           None, ("self", "result1"),
                           (_adaptive_max_backward,), saves_tensors=True, jvp=_adaptive_max_jvp)
MAX_POOL_BACKWARD     = Op("MaxPool2DWithIndicesBackwardBackward0", None, ("indices", "shape"),
                           (_gather_back, _no_max_grad), inputs=("grad_output", "self"), saves_tensors=True,
                           jvp=_max_backward_jvp)
ADAPTIVE_MAX_BACKWARD = Op("AdaptiveMaxPool2DBackwardBackward0",   None, ("indices", "shape"),
                           (_gather_back, _no_max_grad), inputs=("grad_output", "self"), saves_tensors=True,
                           jvp=_max_backward_jvp_adaptive)
AVG_POOL_BACKWARD     = Op("AvgPool2DBackwardBackward0",           None, ("kernel_size", "stride", "padding", "ceil_mode",
                                                                          "count_include_pad", "divisor_override",
                                                                          "shape"),
                           (_avg_again, _no_avg_grad), inputs=("grad_output", "self"), jvp=_avg_backward_jvp)
ADAPTIVE_AVG_BACKWARD = Op("AdaptiveAvgPool2DBackwardBackward0",   None, ("grad_output_sym_argsize_minus_2",
                                                                          "grad_output_sym_argsize_minus_1", "shape"),
                           (_adaptive_avg_again, _no_adaptive_avg_grad), inputs=("grad_output", "self"),
                           jvp=_adaptive_avg_backward_jvp)
# fmt: on


# -------------------------------------------------------------------------------- backward kernel ops

def max_pool_backward(g: Tensor, self, indices: Tensor, row: Op) -> Tensor:
    in_shape = _shape_of(self)
    out = scatter_planes(g._a, indices._a, in_shape)
    return apply(row, out, (g, self if self.__class__ is Tensor else None), (indices, in_shape))


def avg_pool_backward(g: Tensor, self, params, ceil_mode, count_include_pad, divisor_override, raw) -> Tensor:
    in_shape = _shape_of(self)
    out = avg_backward_array(g._a, in_shape, *params, ceil_mode, count_include_pad, divisor_override)
    return apply(AVG_POOL_BACKWARD, out, (g, self if self.__class__ is Tensor else None),
                 (*raw, ceil_mode, count_include_pad, divisor_override, in_shape))


def adaptive_avg_backward(g: Tensor, self) -> Tensor:
    in_shape = _shape_of(self)
    out = adaptive_avg_backward_array(g._a, in_shape)
    oh, ow = g._a.shape[-2:]
    return apply(ADAPTIVE_AVG_BACKWARD, out, (g, self if self.__class__ is Tensor else None), (oh, ow, in_shape))


# ------------------------------------------------------------------------------------------- 2-d ops

def _avg_params(kernel_size, stride, padding):
    k = _pair(kernel_size, "avg_pool2d", "kernel_size")
    s = _pair(stride, "avg_pool2d", "stride", omitted=True) or k
    return k, s, _pair(padding, "avg_pool2d", "padding")


def _pool_sizes(hw, k, s, pad, d, ceil):
    if len(hw) < 2:
        return (0, 0)
    return (_output_size(hw[0], k[0], pad[0], s[0], d[0], ceil), _output_size(hw[1], k[1], pad[1], s[1], d[1], ceil))


def _max_pool2d(a: Tensor, kernel_size, stride, padding, dilation, ceil_mode, fn="max_pool2d", c_int=True):
    """max_pool2d_with_indices on a 3-d or 4-d tensor: (values, indices). `c_int`: its C int parameters
    (PyTorch's own 1-d kernel, which borrows this one here, keeps 64-bit ones)."""
    _expect_tensor(a, fn)
    _flag(ceil_mode, fn, "ceil_mode", 6)
    ks = _ints(kernel_size, fn, "kernel_size", 2)
    st = _ints(stride, fn, "stride", 3) if stride is not None else ()
    pd = _ints(padding, fn, "padding", 4)
    dl = _ints(dilation, fn, "dilation", 5)
    k = _pair(ks, "max_pool2d", "kernel_size", c_int=c_int)
    s = _pair(st, "max_pool2d", "stride", omitted=True, c_int=c_int) or k
    pad = _pair(pd, "max_pool2d", "padding", c_int=c_int)
    d = _pair(dl, "max_pool2d", "dilation", c_int=c_int)
    x = a._a
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_hw = _pool_sizes(x.shape[-2:], k, s, pad, d, bool(ceil_mode))
    _shape_check(x, k, s, pad, d, out_hw)
    _not_implemented("max_pool2d", x, "fiu")
    values, index = max_pool_array(x, k, s, pad, d, out_hw)
    indices = Tensor(index)
    out = apply(MAX_POOL2D, values, (a,), (ks, st, pd, dl, bool(ceil_mode), indices))
    return out, indices


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
    if x.ndim > 4:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_hw = _pool_sizes(x.shape[-2:], k, s, pad, (1, 1), bool(ceil_mode))
    _shape_check(x, k, s, pad, (1, 1), out_hw)
    if x.dtype.kind != "f" and x.dtype != np.int64:      # PyTorch's kernel: the float types and int64
        _not_implemented("avg_pool2d", x, "")
    out = avg_pool_array(x, k, s, pad, out_hw, bool(ceil_mode), bool(count_include_pad), divisor_override)
    return apply(AVG_POOL2D, out, (a,), (kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad),
                                        divisor_override))


def adaptive_avg_pool2d_raw(a: Tensor, out_hw) -> Tensor:
    """_adaptive_avg_pool2d."""
    x = a._a
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_sizes_text(x.shape)}")
    for i in (-2, -1):
        if x.shape[i] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes_text(x.shape)} with dimension "
                               f"{i + x.ndim} being empty")
    if out_hw[0] and out_hw[1]:             # an empty output is made without the kernel (any dtype)
        _not_implemented("adaptive_avg_pool2d", x, _FLOATS)
    return apply(ADAPTIVE_AVG, adaptive_avg_array(x, out_hw), (a,))


def _adaptive_sizes(output_size, x: np.ndarray, fn: str) -> tuple:
    """F's _list_with_default: an int, or a sequence whose None entries take the input's sizes."""
    if output_size.__class__ is int:        # one int for the pair: PyTorch's parser reads it into 64 bits
        int64_arg(output_size)
        return (output_size, output_size)
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


def _adaptive_avg(a: Tensor, sizes) -> Tensor:
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if sizes[0] < 0 or sizes[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{sizes[0]}, {sizes[1]}}}")
    if sizes[0] == 1 and sizes[1] == 1:
        return reduce.mean(a, (-1, -2), True)       # PyTorch's shortcut: a mean over the plane
    return adaptive_avg_pool2d_raw(a, sizes)


def _adaptive_max(a: Tensor, sizes):
    x = a._a
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {_sizes_text(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes_text(x.shape)} with dimension {i} being empty")
    if len(sizes) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    if sizes[0] < 0 or sizes[1] < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{_sizes_text(x.shape[:-2] + tuple(sizes))}")
    _not_implemented("adaptive_max_pool2d", x, _FLOATS)
    values, index = adaptive_max_array(x, sizes)
    indices = Tensor(index)
    return apply(ADAPTIVE_MAX, values, (a,), (indices,)), indices


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    _expect_tensor(input, "adaptive_max_pool2d")
    return _adaptive_max(input, _adaptive_sizes(output_size, input._a, "adaptive_max_pool2d"))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    pair = adaptive_max_pool2d_with_indices(input, output_size)
    return pair if return_indices else pair[0]


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    pair = _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
    return pair if return_indices else pair[0]


def torch_max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """torch.max_pool2d: the values only."""
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    _expect_tensor(input, "avg_pool2d")
    _flag(ceil_mode, "avg_pool2d", "ceil_mode", 5)
    _flag(count_include_pad, "avg_pool2d", "count_include_pad", 6)
    ks = _ints(kernel_size, "avg_pool2d", "kernel_size", 2)
    st = _ints(stride, "avg_pool2d", "stride", 3) if stride is not None else ()
    pd = _ints(padding, "avg_pool2d", "padding", 4)
    if divisor_override is not None and divisor_override.__class__ is not int:
        raise TypeError("avg_pool2d(): argument 'divisor_override' (position 7) must be int, "
                        f"not {type(divisor_override).__name__}")
    return avg_pool2d_raw(input, ks, st, pd, ceil_mode, count_include_pad, divisor_override)


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
    if not impl and x.ndim not in (2, 3):      # with indices, PyTorch goes through max_pool2d_with_indices
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for max_pool1d)")
    if not ((x.ndim == 2 and x.shape[0] and x.shape[1]) or (x.ndim == 3 and x.shape[1] and x.shape[2])):
        if not impl:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{_sizes_text(x.shape[:-1] + (1,) + x.shape[-1:])}")
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
    if not impl:                # with indices: max_pool2d_with_indices's C ints come first
        _c_ints((k, s, p, d))
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
    if impl:
        _not_implemented("max_pool1d_impl", x, "f")
    # PyTorch's own 1-d kernel (no indices, no gradient) keeps 64-bit parameters; otherwise the 2-d one runs
    c_int = not impl or needs_grad(a)
    values, indices = _max_pool2d(shape.unsqueeze(a, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode, c_int=c_int)
    return _squeezed(values), _squeezed(indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    pair = _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, impl=not return_indices)
    return pair if return_indices else pair[0]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def torch_max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, impl=True)[0]


def torch_max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    _expect_tensor(input, "avg_pool1d")
    _flag(ceil_mode, "avg_pool1d", "ceil_mode", 5)
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


def _output_one(output_size, fn: str) -> int:
    sizes = _ints(output_size, fn, "output_size", 2, 1)
    return _one(sizes, fn, "output_size")[0]


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    _expect_tensor(input, "adaptive_avg_pool1d")
    size = _output_one(output_size, "adaptive_avg_pool1d")
    _check_dims(input._a, "adaptive_avg_pool1d")
    return _squeezed(_adaptive_avg(shape.unsqueeze(input, -2), (1, size)))


def _adaptive_max1d(input, output_size):
    _expect_tensor(input, "adaptive_max_pool1d")
    size = _output_one(output_size, "adaptive_max_pool1d")
    x = input._a
    _check_dims(x, "adaptive_max_pool1d")
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
