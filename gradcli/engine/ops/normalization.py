"""Normalisation layers' ops: batch_norm, layer_norm, group_norm (and instance_norm, which PyTorch builds on
batch_norm), as PyTorch's CPU kernels compute them.

PyTorch's float32 results here are fixed by its own kernels (aten/src/ATen/native/cpu/batch_norm_kernel.cpp,
layer_norm_kernel.cpp, group_norm_kernel.cpp, moments_utils.h): which sums run in double, which in float
vector lanes combined by a fixed shuffle tree, where the compiler fused a multiply and an add, how many
threads split a reduction. The array kernels below follow those orders so forward results, running
statistics and gradients equal PyTorch's bit for bit (tests/test_ops_norm.py holds the evidence).
Under create_graph the gradients are built from recorded ops instead (values equal up to rounding), and
forward-mode tangents follow derivatives.yaml's jvp formulas on recorded ops. The double backward nodes
compute FunctionsManual.cpp's batchnorm_double_backward and layer_norm_double_backward op for op on arrays.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, layout, ops, signatures
from gradcli.engine.layout import laid_out
from gradcli.engine.cascade import sum_array
from gradcli.engine.ops.arith import half_with_number
from gradcli.engine.autograd import OutputGrads, OutputSlot
from gradcli.engine.ops.reduce import _var_mean_backward, mean_array
from gradcli.engine.fma import fma
from gradcli.engine.forward import add_tangents
from gradcli.engine.recording import Op, apply, int64_arg, is_meta, type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

# The kernels that reduce along the batch split the rows into torch.get_num_threads() chunks (STATE.threads),
# each summed on its own, then add the chunks.
VEC_M1 = 0
VEC_M2 = 2
# The kernels here run their AVX2 builds (8 float lanes), on AVX-512 machines too: ATEN_CPU_CAPABILITY=avx2 and
# avx512 give the same bits, and 8-lane orders reproduce them where 16-lane orders do not.
# moments_utils.h: Welford over chunks of 16 vectors, combined by a cascade
_CHUNK = 16


# ------------------------------------------------------------------------------------- array helpers

def _lanes(dtype) -> int:
    """The vector width of the AVX2 kernels: 8 floats, 4 doubles."""
    return 32 // dtype.itemsize


def _fma(a, b, c):
    """a * b + c rounded once, the vectorised kernels' fused multiply-adds (engine/fma.py), in float32 and
    float64 alike: the double kernels are compiled with the same contractions (float64 layer, group and
    batch norm agree with PyTorch only so); other dtypes as written."""
    a = np.asanyarray(a)
    if a.dtype != _F32 and a.dtype != _F64:
        return a * b + c
    return fma(a, b, np.asanyarray(c, dtype=a.dtype))


def _seq64(a: np.ndarray, axis: int) -> np.ndarray:
    """A sequential (left to right) double sum along `axis`: the kernels' `accscalar_t` loops."""
    if a.shape[axis] == 0:
        return np.zeros(np.delete(a.shape, axis), _F64)
    return np.cumsum(a, axis=axis, dtype=_F64).take(-1, axis=axis)


def _seq(a: np.ndarray, axis: int) -> np.ndarray:
    """A sequential sum along `axis` in the array's own dtype."""
    if a.shape[axis] == 0:
        return np.zeros(np.delete(a.shape, axis), a.dtype)
    return np.cumsum(a, axis=axis, dtype=a.dtype).take(-1, axis=axis)


def _tree(acc: np.ndarray) -> np.ndarray:
    """vec_reduce_all of `x + y` over a full vector (last axis): float's AVX2 shuffle tree (lane i plus lane
    i ^ 4, then ^ 2, ^ 1); double has no SIMD specialisation: its lanes are added in order."""
    if acc.dtype != _F32:
        return _seq(acc, -1)
    n = acc.shape[-1]
    lanes = np.arange(n)
    s = n // 2
    while s:
        acc = acc + acc[..., lanes ^ s]
        s //= 2
    return acc[..., 0]


def _reduce_all(a: np.ndarray, b: np.ndarray | None = None, fused_tail: bool = True) -> np.ndarray:
    """vec::reduce_all (b None: the sum of a) or vec::map2_reduce_all of a * b along the last axis, for every
    leading index at once. The compiled kernels add the full vectors' products rounded; batch_norm's and
    layer_norm's fuse the product into the add for the last, partial vector, group_norm's does not (measured:
    the only orders that reproduce PyTorch's bits)."""
    if a.__class__ is not np.ndarray and isinstance(a, np.ndarray):     # a meta array: its one element's sum
        from gradcli.engine.meta import on_one
        return on_one(_reduce_all, a, a.shape[:-1], *(() if b is None else (b,)), fused_tail=fused_tail)
    n = a.shape[-1]
    lanes = _lanes(a.dtype)
    if n < lanes:                       # one partial vector, its n lanes added in order
        return _seq(a if b is None else a * b, -1)
    full = n - n % lanes
    blocks = a[..., :full].reshape(a.shape[:-1] + (full // lanes, lanes))
    if b is None:
        acc = _seq(blocks, -2)
    else:
        bb = b[..., :full].reshape(blocks.shape)
        acc = blocks[..., 0, :] * bb[..., 0, :]
        for j in range(1, blocks.shape[-2]):
            acc = acc + blocks[..., j, :] * bb[..., j, :]
    if full < n:
        r = n - full
        acc = acc.copy()
        if b is None:
            acc[..., :r] = acc[..., :r] + a[..., full:]
        elif fused_tail:
            acc[..., :r] = _fma(a[..., full:], b[..., full:], acc[..., :r])
        else:
            acc[..., :r] = acc[..., :r] + a[..., full:] * b[..., full:]
    return _tree(acc)


def _lane_sums(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """The group-norm kernels' own reduction along the last axis: full vectors accumulated lane-wise from zero
    (a * b fused into the accumulation), the lanes added in order (std::accumulate), then the tail element
    by element, fused too."""
    n = a.shape[-1]
    lanes = _lanes(a.dtype)
    full = n - n % lanes
    acc = np.zeros(a.shape[:-1] + (lanes,), a.dtype)
    for j in range(0, full, lanes):
        acc = acc + a[..., j:j + lanes] if b is None else _fma(a[..., j:j + lanes], b[..., j:j + lanes], acc)
    total = np.zeros(a.shape[:-1], a.dtype)
    for i in range(lanes if full else 0):
        total = total + acc[..., i]
    for j in range(full, n):
        total = total + a[..., j] if b is None else _fma(a[..., j], b[..., j], total)
    return total


def _chunks(n: int) -> list:
    """at::parallel_for's split of n rows over STATE.threads threads (grain 1): equal chunks, the last one short."""
    used = min(STATE.threads, n)
    if used == 0:
        return []
    size = -(-n // used)
    return [(s, min(n, s + size)) for s in range(0, n, size)]


def _threaded_rows(values: np.ndarray, update) -> list:
    """Per-thread buffers of a row-by-row accumulation along axis 0 (`update(acc, row_index)`)."""
    out = []
    for start, stop in _chunks(values.shape[0]):
        acc = np.zeros(values.shape[1:], values.dtype)
        for i in range(start, stop):
            acc = update(acc, i)
        out.append(acc)
    return out


def _sum_buffers(buffers: list, shape) -> np.ndarray:
    """The second pass over the thread buffers: a double sum, starting from zero, in thread order."""
    total = np.zeros(shape, _F64)
    for b in buffers:
        total = total + b
    return total


# ------------------------------------------------------------------------------------------ batch_norm

def _as3d(x: np.ndarray) -> np.ndarray:
    """(N, C, *) as (N, C, L), L the image size."""
    return np.ascontiguousarray(x).reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))   # (-1: no length 0)


def batch_norm_stats(x: np.ndarray):
    """batch_norm_cpu_collect_stats: each channel's mean and sum of squared deviations, and the count."""
    x3 = _as3d(x)
    n_batch, c, size = x3.shape
    n = n_batch * size
    if size == 1:                       # (N, C, 1, ...) is channels last too: the vertical-reduce kernel
        rows = x3[:, :, 0]
        if n > STATE.threads:
            buffers = _threaded_rows(rows, lambda acc, i: acc + rows[i])
            mean = (_sum_buffers(buffers, c) / n).astype(rows.dtype)
            buffers = _threaded_rows(rows, lambda acc, i: _fma(rows[i] - mean, rows[i] - mean, acc))
            return mean, _sum_buffers(buffers, c).astype(rows.dtype), n
        mean = (_seq64(rows, 0) / n).astype(rows.dtype)
        d = rows - mean
        return mean, _seq64(d * d, 0).astype(rows.dtype), n
    flat = np.moveaxis(x3, 1, 0).reshape(c, n)
    mean = (_seq64(flat, 1) / n).astype(x.dtype)
    d = flat - mean[:, None]
    return mean, _seq64(d * d, 1).astype(x.dtype), n


def _invstd_train(var_sum: np.ndarray, n: int, eps: float) -> np.ndarray:
    """InvStd<double>(var_sum / n, eps): the float variance, then 1 / sqrt in double, rounded once."""
    var = (var_sum / var_sum.dtype.type(n)).astype(var_sum.dtype)
    with np.errstate(divide="ignore"):
        return (1.0 / np.sqrt(var.astype(_F64) + eps)).astype(var_sum.dtype)


def _invstd_eval_forward(running_var: np.ndarray, eps: float) -> np.ndarray:
    """The forward's eval-mode invstd: in the tensor's dtype (1 / std::sqrt(var + (float) eps))."""
    dt = running_var.dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        return (dt(1) / np.sqrt(running_var + dt(eps))).astype(running_var.dtype)


def _invstd_eval_backward(running_var: np.ndarray, eps: float) -> np.ndarray:
    """The backward's eval-mode invstd: running_var + eps in double (eps is a double there), rounded once."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(running_var.astype(_F64) + eps)).astype(running_var.dtype)


def _channel(v: np.ndarray, ndim: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast over (N, C, *)."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _affine_apply(x: np.ndarray, mean, invstd, weight, bias) -> np.ndarray:
    """output = x * alpha + beta, alpha = invstd * w, beta = b - mean * alpha (both fused in the kernel)."""
    dt = x.dtype.type
    alpha = invstd * (weight if weight is not None else dt(1))
    beta = _fma(-mean, alpha, bias if bias is not None else np.zeros_like(alpha))
    return _fma(x, _channel(alpha, x.ndim), _channel(beta, x.ndim))


def _update_running(running_mean, running_var, mean, var_sum, n, momentum) -> None:
    """The running averages, in place: momentum * batch + (1 - momentum) * running, the variance unbiased
    (var_sum / (n - 1)) and combined in double (accscalar_t), the mean in the tensor's dtype."""
    if running_mean is not None:
        a = running_mean._a
        m = a.dtype.type(momentum)
        a[...] = m * mean.astype(a.dtype) + (a.dtype.type(1) - m) * a
        running_mean._version[0] += 1
    if running_var is not None:
        a = running_var._a
        m = a.dtype.type(momentum)
        with np.errstate(divide="ignore", invalid="ignore"):
            unbiased = (var_sum / var_sum.dtype.type(n - 1)).astype(_F64)
        a[...] = (_F64.type(m) * unbiased + ((a.dtype.type(1) - m) * a).astype(_F64)).astype(a.dtype)
        running_var._version[0] += 1


def _strided(*arrays) -> bool:
    """Whether Normalization.cpp takes its TensorIterator path: an operand neither contiguous nor channels
    last (a transposed (N, C) batch, a permuted image). The kernels in batch_norm_kernel.cpp need both."""
    for a in arrays:
        if not a.flags.c_contiguous and not (a.ndim in (4, 5) and np.moveaxis(a, 1, -1).flags.c_contiguous):
            return True
    return False


def _channel_rows(x: np.ndarray, *more) -> list:
    """Each channel's elements in the order the iterator with dim 1 squashed visits them (its dims sorted by
    the operands' strides, layout.order): (C, n) arrays, one per operand."""
    squashed = [a[:, :1] for a in (x, *more)]
    outer = [d for d in layout.order(squashed[0].shape, squashed)[::-1] if d != 1]
    return [np.transpose(a, [1] + outer).reshape(a.shape[1], -1) for a in (x, *more)]


def _running_sum64(values: np.ndarray) -> np.ndarray:
    """Each row summed one element after another in double from zero (an accscalar_t loop)."""
    if not values.shape[1]:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1, dtype=_F64)[:, -1]


def batch_norm_strided(x: np.ndarray, weight, bias, running_mean, running_var, training: bool, momentum,
                       eps: float):
    """Normalization.cpp's TensorIterator path for an input neither contiguous nor channels last, (output,
    save_mean, save_invstd): the mean is at::mean over the other dims (the ordered sum, then / n); each
    channel's sum of squared deviations a running double sum in the iterator's order; the running averages
    in double; the output ((x - mean) * invstd) * weight + bias element by element. That file is compiled
    without fused multiply-adds."""
    c = x.shape[1]
    dims = _reduce_dims(x.ndim)
    dt = x.dtype.type
    shape = _channel(np.zeros(c), x.ndim).shape
    if training:
        n = x.size // c
        mean = mean_array(x, dims)
        rows, = _channel_rows(x)
        d = rows.astype(_F64) - mean.astype(_F64)[:, None]
        var_sum = _running_sum64(d * d)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = var_sum / n
            invstd = np.where((var != 0) | (eps != 0), 1.0 / np.sqrt(var + eps), 0.0).astype(x.dtype)
            if running_mean is not None:
                a = running_mean._a
                a[...] = (momentum * mean.astype(_F64) + (1 - momentum) * a.astype(_F64)).astype(a.dtype)
                running_mean._version[0] += 1
            if running_var is not None:
                a = running_var._a
                a[...] = (momentum * (var_sum / (n - 1)) + (1 - momentum) * a.astype(_F64)).astype(a.dtype)
                running_var._version[0] += 1
        use_mean, use_invstd = mean, invstd
    else:
        mean = invstd = np.zeros(0, x.dtype)
        use_mean = running_mean._a.reshape(-1).astype(x.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            use_invstd = dt(1) / np.sqrt(running_var._a.reshape(-1).astype(x.dtype) + dt(eps))
    w = weight.reshape(shape) if weight is not None else dt(1)
    b = bias.reshape(shape) if bias is not None else dt(0)
    out = ((x - use_mean.reshape(shape)) * use_invstd.reshape(shape)) * w + b
    return np.ascontiguousarray(out, dtype=x.dtype), mean, invstd


def _batch_norm_backward_strided(g, x, w, mean, invstd, training, mask):
    """batch_norm_backward_cpu_template's TensorIterator path (an input or gradient neither contiguous nor
    channels last): the gradient's ordered sum over the other dims; dotp a running double sum of the
    products (x - mean) * g rounded in the tensor's dtype, in the iterator's order of both; then per
    element, as that file computes them (no fused multiply-adds)."""
    dt = x.dtype.type
    c = x.shape[1]
    n = x.size // c
    shape = _channel(np.zeros(c), x.ndim).shape
    total = sum_array(g, _reduce_dims(x.ndim))
    xr, gr = _channel_rows(x, g)
    dotp = _running_sum64((xr - mean[:, None]) * gr)
    gi = gw = gb = None
    if mask[0]:
        if training:
            k = (dotp.astype(x.dtype) * invstd * invstd / dt(n)).reshape(shape)
            gi = (x - mean.reshape(shape)) * k
            grad_mean = (total / dt(n)).reshape(shape)
            gi = (g - grad_mean - gi) * invstd.reshape(shape) * w.reshape(shape)
        else:
            gi = g * invstd.reshape(shape) * w.reshape(shape)
        gi = np.ascontiguousarray(gi, dtype=x.dtype)
    if mask[1]:
        gw = (dotp * invstd).astype(x.dtype)
    if mask[2]:
        gb = total.astype(x.dtype)
    return gi, gw, gb


def batch_norm_backward_arrays(g, x, weight, running_mean, running_var, save_mean, save_invstd, training, eps,
                               mask):
    """native_batch_norm_backward's CPU kernel: (grad_input, grad_weight, grad_bias), each None unless asked
    for in `mask`."""
    if is_meta(x) or is_meta(g):
        pdt = weight.dtype if weight is not None else x.dtype
        return tuple((_meta(x.shape, x.dtype) if i == 0 else _meta((x.shape[1],), pdt)) if mask[i] else None
                     for i in range(3))
    if x.dtype == np.float16 or x.dtype.kind == "V" and not _strided(x, np.asanyarray(g)) and \
            x.flags.c_contiguous == np.asanyarray(g).flags.c_contiguous:
        return batch_norm_backward_half(g, x, weight, running_mean, running_var, save_mean, save_invstd, training,
                                        eps, mask)
    dt = x.dtype.type
    g = np.asanyarray(g, dtype=x.dtype)
    c = x.shape[1]
    w = weight if weight is not None else np.ones(c, x.dtype)
    if training:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = running_mean, _invstd_eval_backward(running_var, eps)
    if _strided(x, g):
        return _batch_norm_backward_strided(g, x, w, mean, invstd, training, mask)
    x3, g3 = _as3d(x), _as3d(np.ascontiguousarray(g))
    n_batch, c, size = x3.shape
    n = n_batch * size
    gi = gw = gb = None
    if size == 1:                       # the channels-last kernel: per-thread float buffers, then a double pass
        xr, gr = x3[:, :, 0], g3[:, :, 0]
        sums = _threaded_rows(gr, lambda acc, i: acc + gr[i])
        dots = _threaded_rows(gr, lambda acc, i: _fma(xr[i] - mean, gr[i], acc))
        total = _sum_buffers(sums, c).astype(x.dtype)
        dotp = _sum_buffers(dots, c).astype(x.dtype)
        if mask[0]:
            if training:
                k = dotp * invstd * invstd / dt(n)
                grad_mean = total / dt(n)
                # (dy - grad_mean - dx) with dx = (x - mean) * k in a register: the product is fused in the
                # whole vectors of the channel dim, not in its masked tail
                d = gr - grad_mean
                gi = _fma(-(xr - mean), k, d)
                body = c - c % _lanes(x.dtype)
                gi[:, body:] = d[:, body:] - (xr[:, body:] - mean[body:]) * k[body:]
                gi = (gi * invstd * w).reshape(x.shape)
            else:
                gi = (gr * invstd * w).reshape(x.shape)
        if mask[1]:
            gw = dotp * invstd
        if mask[2]:
            gb = total
        return gi, gw, gb
    centred = x3 - _channel(mean, 3)
    total = _seq64(_reduce_all(g3), 0)          # per image: vector lanes; over the batch: double
    dotp = _seq64(_reduce_all(centred, g3), 0)
    if mask[0]:
        if training:
            k = dotp.astype(x.dtype) * invstd * invstd / dt(n)
            grad_mean = (total / n).astype(x.dtype)
            gi = _fma(-centred, _channel(k, 3), g3 - _channel(grad_mean, 3)) * _channel(invstd, 3) * _channel(w, 3)
        else:
            gi = g3 * _channel(invstd, 3) * _channel(w, 3)
        gi = gi.reshape(x.shape)
    if mask[1]:
        gw = (dotp * invstd).astype(x.dtype)
    if mask[2]:
        gb = total.astype(x.dtype)
    return gi, gw, gb


# ------------------------------------------------------------------------------- batch_norm, float16

# PyTorch's CPU batch-norm kernels read a float16 input as float (the opmath type) and round each result
# once to float16. The contiguous kernels keep the batch statistics in float and store them (save_mean,
# save_invstd, the running averages) in the parameters' dtype: float16 for a pure float16 call, float for a
# "mixed" one (float32 parameters). Vectors hold 16 halves, converted to two vectors of 8 floats that are
# accumulated into one. The TensorIterator paths (strided inputs, or an input and gradient in different
# layouts) compute in C++'s element types instead. Measured against PyTorch 2.13 value for value
# (tests/conformance/numerics_half_norm.grad).

_HALF_BLOCK = 16


def _f32(a) -> np.ndarray:
    return np.asanyarray(a, dtype=_F32)


def _half_image_sum(terms: np.ndarray, fused=None) -> np.ndarray:
    """A channel's sum over (N, C, L) float terms as the contiguous float16 kernels add it: the whole
    16-element blocks of each image into an 8-lane float accumulator (both halves of a block in turn), the
    rest of each image element by element into a float scalar (where the terms are products, `fused`'s
    pair is multiplied and added in one rounding), then the scalar plus the lanes added in order."""
    n_batch, c, size = terms.shape
    body = size - size % _HALF_BLOCK
    steps = np.moveaxis(terms[:, :, :body], 1, 0).reshape(c, n_batch * body // 8, 8)
    if fused is not None and body:
        fa, fb = (np.moveaxis(f[:, :, :body], 1, 0).reshape(steps.shape) for f in fused)
        lanes = np.zeros((c, 8), _F32)
        for j in range(steps.shape[1]):
            lanes = _fma(fa[:, j], fb[:, j], lanes)
    else:
        lanes = _seq(steps, 1) if steps.shape[1] else np.zeros((c, 8), _F32)
    total = np.zeros(c, _F32)
    for i in range(n_batch):
        for d in range(body, size):
            if fused is None:
                total = total + terms[i, :, d]
            else:
                total = _fma(fused[0][i, :, d], fused[1][i, :, d], total)
    return total + _seq(lanes, 1)


def _half_rows_sum(rows: np.ndarray, fused=None) -> np.ndarray:
    """A (N, C) float accumulation row by row as the channels-last float16 kernels do it: per-thread float
    buffers (the channels' whole blocks of 16 vectorised, the rest scalar; `fused` as in _half_image_sum),
    then the buffers added in thread order from zero, in float."""
    c = rows.shape[1]

    def step(acc, i):
        if fused is None:
            return acc + rows[i]
        return _fma(fused[0][i], fused[1][i], acc)
    total = np.zeros(c, _F32)
    for b in _threaded_rows(np.zeros(rows.shape, _F32), step):
        total = total + b
    return total


def _half_invstd_eval(running_var: np.ndarray, eps: float) -> np.ndarray:
    """1 / sqrt(var + eps) with eps a double: the backward kernels' eval invstd, kept in float."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(running_var.astype(_F64) + eps)).astype(_F32)


def _half_channels_last(x: np.ndarray) -> bool:
    """Whether the float16 kernels take their channels-last form: one value per channel and image, or a
    channels-last 4-d/5-d input."""
    return math.prod(x.shape[2:]) == 1 or not x.flags.c_contiguous


def _half_apply(xf: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """x * alpha + beta in float, each product fused into its sum (vector loops and scalar tails alike)."""
    a, b = _channel(alpha, xf.ndim), _channel(beta, xf.ndim)
    return _fma(xf, np.broadcast_to(a, xf.shape), np.broadcast_to(b, xf.shape))


def _batch_norm_half_strided(x, weight, bias, running_mean, running_var, training, momentum, eps, pdt):
    """Normalization.cpp's TensorIterator path for a float16 input neither contiguous nor channels last:
    the mean is at::mean in the parameters' dtype, the sum of squared deviations a float running sum in the
    iterator's order, the running averages in double; the output ((x - mean) * invstd) * weight + bias
    with C++'s element types (float16 parameters make every step a float16 operation)."""
    c = x.shape[1]
    H = np.float16
    half = pdt == H
    shape = _channel(np.zeros(c), x.ndim).shape
    if training:
        n = x.size // c
        mean = mean_array(x.astype(_F32, order="K"), _reduce_dims(x.ndim)).astype(pdt)
        rows, = _channel_rows(x)
        d = rows.astype(_F32) - mean.astype(_F32)[:, None]
        var_sum = _seq(d * d, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = var_sum / _F32.type(n)
            invstd = np.where((var != 0) | (eps != 0), 1.0 / np.sqrt(var.astype(_F64) + eps), 0.0)
            invstd = invstd.astype(_F32).astype(pdt)
            if running_mean is not None:
                a = running_mean._a
                a[...] = (momentum * mean.astype(_F64) + (1 - momentum) * a.astype(_F64)).astype(_F32).astype(a.dtype)
                running_mean._version[0] += 1
            if running_var is not None:
                a = running_var._a
                unbiased = (var_sum / _F32.type(n - 1)).astype(_F64)
                a[...] = (momentum * unbiased + (1 - momentum) * a.astype(_F64)).astype(_F32).astype(a.dtype)
                running_var._version[0] += 1
        use_mean, use_invstd = mean, invstd
        save_mean, save_invstd = mean, invstd
    else:
        use_mean = running_mean._a.reshape(-1)
        rv = running_var._a.reshape(-1)
        with np.errstate(divide="ignore", invalid="ignore"):   # 1 / at::sqrt(running_var + eps): tensor ops
            use_invstd = (rv.dtype.type(1) / np.sqrt(rv + rv.dtype.type(eps))).astype(rv.dtype)
        save_mean = save_invstd = np.zeros(0, pdt)
    w = weight._a.reshape(shape) if weight is not None else pdt.type(1)
    b = bias._a.reshape(shape) if bias is not None else pdt.type(0)
    if half:
        out = ((x - use_mean.reshape(shape)) * use_invstd.reshape(shape)) * w + b
    else:
        out = ((x.astype(_F32) - use_mean.reshape(shape)) * use_invstd.reshape(shape)) * w + b
    return np.ascontiguousarray(out.astype(H)), save_mean, save_invstd


def _bf16_running(value: np.ndarray, old: np.ndarray, momentum: float, rounded: bool) -> np.ndarray:
    """A bfloat16 running statistic as PyTorch's bfloat16 kernel updates it (measured on the oracle, all
    elements agreeing): momentum as a bfloat16, 1 - that in bfloat16, the old value's product rounded to
    bfloat16, the new statistic's product too when it is a bfloat16 (the mean, `rounded`) and not when
    it is a float (the unbiased variance), then their float sum rounded once."""
    bt = old.dtype.type
    m = _F32.type(bt(momentum))
    kept = _f32((_F32.type(bt(_F32.type(1) - m)) * _f32(old)).astype(old.dtype))
    new = m * value
    if rounded:
        new = _f32(new.astype(old.dtype))
    return (new + kept).astype(old.dtype)


def batch_norm_half(x: np.ndarray, weight, bias, running_mean, running_var, training: bool, momentum, eps):
    """The float16 forward: (output, save_mean, save_invstd), the statistics in the parameters' dtype."""
    pdt = next((p._a.dtype for p in (weight, bias, running_mean, running_var) if p is not None), x.dtype)
    if _strided(x):
        return _batch_norm_half_strided(x, weight, bias, running_mean, running_var, training, momentum, eps, pdt)
    c = x.shape[1]
    channels_last = _half_channels_last(x)
    xf = _f32(x)
    if training:
        # the statistics in float whatever the parameters' dtype, stored in theirs
        n = x.size // c
        if channels_last:
            rows = np.moveaxis(xf, 1, -1).reshape(-1, c)
            mean32 = _half_rows_sum(rows) / _F32.type(n)
            centred = rows - mean32
            var_sum = _half_rows_sum(centred * centred, (centred, centred))
        else:
            x3 = xf.reshape(x.shape[0], c, -1)
            mean32 = _half_image_sum(x3) / _F32.type(n)
            centred = x3 - mean32[None, :, None]
            var_sum = _half_image_sum(centred * centred)        # products rounded, then added
        bf16 = pdt.kind == "V"
        with np.errstate(divide="ignore", invalid="ignore"):
            if bf16:        # bfloat16's kernel keeps the sum of squares, then the variance, in bfloat16
                var = _f32((_f32(var_sum.astype(pdt)) / _F32.type(n)).astype(pdt))
            else:
                var = var_sum / _F32.type(n)
            invstd = np.where((var != 0) | (eps != 0), 1.0 / np.sqrt(var.astype(_F64) + eps), 0.0).astype(_F32)
            m = _F32.type(momentum)
            if running_mean is not None:
                a = running_mean._a
                if bf16:
                    a[...] = _bf16_running(_f32(mean32.astype(pdt)), a, momentum, True)
                else:
                    a[...] = (m * mean32 + (_F32.type(1) - m) * _f32(a)).astype(a.dtype)
                running_mean._version[0] += 1
            if running_var is not None:
                a = running_var._a
                if bf16:
                    unbiased = _f32((_f32(var_sum.astype(pdt)) / _F32.type(n - 1)).astype(pdt))
                    a[...] = _bf16_running(unbiased, a, momentum, False)
                else:
                    a[...] = (m * (var_sum / _F32.type(n - 1)) + (_F32.type(1) - m) * _f32(a)).astype(a.dtype)
                running_var._version[0] += 1
        mean, invstd = mean32.astype(pdt), invstd.astype(pdt)
        use_mean, use_invstd = _f32(mean), _f32(invstd)
        save_mean, save_invstd = mean, invstd
    else:
        use_mean = _f32(running_mean._a)
        with np.errstate(divide="ignore", invalid="ignore"):
            use_invstd = _F32.type(1) / np.sqrt(_f32(running_var._a) + _F32.type(eps))
        save_mean = save_invstd = np.zeros(0, pdt)
    alpha = use_invstd * (_f32(weight._a.reshape(-1)) if weight is not None else _F32.type(1))
    beta = _fma(-use_mean, alpha, _f32(bias._a.reshape(-1)) if bias is not None else np.zeros(c, _F32))
    out = _half_apply(xf, alpha, beta).astype(x.dtype)
    return np.ascontiguousarray(out) if not channels_last or x.flags.c_contiguous else out, save_mean, save_invstd


def _batch_norm_backward_half_strided(g, x, w, mean, invstd, training, mask, pdt):
    """batch_norm_backward_cpu_template's TensorIterator path for float16 (an input and gradient of different
    layouts, or either strided). Its arithmetic is C++'s on the element types: with float parameters the
    channel's values are floats; with float16 ones every operation between two halves is rounded to half
    (x - mean, its product with the gradient, k, the differences and products of the result). The
    gradient's sum over the other dims is in float (grad_mean its quotient by n, rounded to half); dotp a
    float running sum in the iterator's order."""
    c = x.shape[1]
    n = x.size // c
    H = np.float16
    half = pdt == H
    shape = _channel(np.zeros(c), x.ndim).shape
    total = sum_array(g, _reduce_dims(x.ndim), dtype=_F32)
    if half:
        mean, invstd, w = mean.astype(H), invstd.astype(H), w.astype(H)
    xr, gr = _channel_rows(x, g)
    if half:
        products = ((xr - mean[:, None]) * gr).astype(_F32)
    else:
        products = (xr.astype(_F32) - mean[:, None]) * gr.astype(_F32)
    dotp = _seq(products, 1) if products.shape[1] else np.zeros(c, _F32)
    gi = gw = gb = None
    if mask[0]:
        cm, ci, cw = mean.reshape(shape), invstd.reshape(shape), w.reshape(shape)
        if training:
            if half:
                k = dotp.astype(H) * invstd * invstd / H(n)
                dx = (x - cm) * k.reshape(shape)
                gi = (g - (total / _F32.type(n)).astype(H).reshape(shape) - dx) * ci * cw
            else:
                k = (dotp.astype(H).astype(_F32) * invstd * invstd / _F32.type(n)).astype(H)
                dx = ((x.astype(_F32) - cm) * k.astype(_F32).reshape(shape)).astype(H)
                grad_mean = (total / _F32.type(n)).astype(H)
                gi = ((g - grad_mean.reshape(shape)) - dx).astype(_F32) * ci * cw
        else:
            gi = g * ci * cw if half else g.astype(_F32) * ci * cw
        gi = np.ascontiguousarray(gi.astype(H))
    if mask[1]:
        gw = (dotp * invstd.astype(_F32)).astype(pdt)
    if mask[2]:
        gb = total.astype(pdt)
    return gi, gw, gb


def batch_norm_backward_half(g, x, weight, running_mean, running_var, save_mean, save_invstd, training, eps, mask):
    """The float16 backward kernels: (grad_input, grad_weight, grad_bias), the input's gradient in float16,
    the parameters' in their dtype."""
    pdt = next((p.dtype for p in (weight, running_mean, save_mean) if p is not None and p.size), x.dtype)
    c = x.shape[1]
    n = x.size // c
    g = np.asanyarray(g, dtype=x.dtype)
    w = _f32(weight.reshape(-1)) if weight is not None else np.ones(c, _F32)
    if training:
        mean, invstd = _f32(save_mean), _f32(save_invstd)
    else:
        mean, invstd = _f32(running_mean), _half_invstd_eval(running_var, eps)
    if _strided(x, g) or x.flags.c_contiguous != g.flags.c_contiguous:
        return _batch_norm_backward_half_strided(g, x, w, mean, invstd, training, mask, pdt)
    channels_last = _half_channels_last(x)
    xf, gf = _f32(x), _f32(g)
    if channels_last:
        xr = np.moveaxis(xf, 1, -1).reshape(-1, c)
        gr = np.moveaxis(gf, 1, -1).reshape(-1, c)
        total = _half_rows_sum(gr)
        centred = xr - mean
        dotp = _half_rows_sum(centred * gr, (centred, gr))
    else:
        x3, g3 = xf.reshape(x.shape[0], c, -1), gf.reshape(x.shape[0], c, -1)
        total = _half_image_sum(g3)
        centred = x3 - mean[None, :, None]
        dotp = _half_image_sum(centred * g3, (centred, g3))
    gi = gw = gb = None
    if mask[0]:
        shape = _channel(mean, x.ndim).shape
        if training:
            k = (dotp * invstd * invstd / _F32.type(n)).reshape(shape)
            grad_mean = (total / _F32.type(n)).reshape(shape)
            # (dy - grad_mean) - (x - mean) * k, the product fused into the difference
            gi = _fma(-(xf - mean.reshape(shape)), k, gf - grad_mean) * invstd.reshape(shape) * w.reshape(shape)
        else:
            gi = gf * invstd.reshape(shape) * w.reshape(shape)
        gi = np.ascontiguousarray(gi.astype(x.dtype))
    if mask[1]:
        gw = (dotp * invstd).astype(pdt)
    if mask[2]:
        gb = total.astype(pdt)
    return gi, gw, gb


# ---------------------------------------------------------------------------------- row-wise moments

def _add_moments(n_add, m1_add, m2_add, n, m1, m2, vector=False):
    """AddMoments (AddMomentsVec when `vector`): Chan's combination of (n_add, m1_add, m2_add) into (n, m1, m2)
    with the compiled code's roundings: the scalar version fuses the mean's update and the last product of
    the M2 term; the vector one (written with an explicit fmadd in moments_utils.h) rounds c * delta, which
    it uses twice, adds the M2s first, then m2 = fmadd(delta * n, c * delta, that sum)."""
    total = n + n_add
    dt = m1.dtype.type
    c = dt(0) if total == 0 else dt(n_add) / dt(total)
    delta = m1_add - m1
    if vector:
        c_delta = c * delta
        return total, m1 + c_delta, _fma(delta * dt(n), c_delta, m2 + m2_add)
    return total, _fma(c, delta, m1), m2 + _fma(delta * delta * c, dt(n), m2_add)


def _welford(x: np.ndarray, starts, count: int, width: int, inverse: list):
    """One vector accumulator's Welford moments over `count` vectors of `width` lanes starting at each of
    `starts` (column offsets of x), the update fused: (m1, m2)."""
    m1 = np.zeros((x.shape[0], width), x.dtype)
    m2 = np.zeros((x.shape[0], width), x.dtype)
    for j, start in enumerate(starts[:count]):
        v = x[:, start:start + width]
        delta = v - m1
        m1 = _fma(delta, inverse[j], m1)
        m2 = _fma(delta, v - m1, m2)
    return m1, m2


def _chunk_cascade(x: np.ndarray, nvec: int, step: int, width: int, parts: tuple) -> list:
    """RowwiseMoments' vector part: chunks of 16 vectors of `step` elements, each chunk's accumulators (one
    per offset in `parts`, `width` lanes each) added into the cascade of chunk moments, which is then
    folded into its first level: [count, m1, m2] per lane."""
    rows = x.shape[0]
    dt = x.dtype.type
    chunks = -(-nvec // _CHUNK)
    depth = max(0, math.ceil(math.log2(chunks))) if chunks > 1 else 0
    zero = np.zeros((rows, width), x.dtype)
    stack = [[0, zero, zero] for _ in range(depth)]
    inverse = [dt(1) / dt(j + 1) for j in range(_CHUNK)]
    acc = [0, zero, zero]
    for i in range(chunks):
        count = min(_CHUNK, nvec - i * _CHUNK)
        base = i * _CHUNK * step
        target = stack[0] if depth else acc
        for part in parts:
            m1, m2 = _welford(x, [base + j * step + part for j in range(count)], count, width, inverse)
            target[:] = _add_moments(count, m1, m2, *target, vector=True)
        mask = i + 1
        j = 1
        while j < depth and (mask & 1) == 0:
            stack[j][:] = _add_moments(*stack[j - 1], *stack[j], vector=True)
            stack[j - 1][:] = [0, zero, zero]
            mask >>= 1
            j += 1
    if depth:
        for i in range(1, depth):
            stack[0][:] = _add_moments(*stack[i], *stack[0], vector=True)
        acc = stack[0]
    return acc


def rowwise_moments(x: np.ndarray):
    """RowwiseMoments for every row of x (M, N) at once: the mean and the biased variance by Welford over
    chunks of 16 vectors, the chunks combined by a cascade, then the vector lanes and the tail."""
    rows, n_all = x.shape
    dt = x.dtype.type
    lanes = _lanes(x.dtype)
    nvec = n_all // lanes
    acc = _chunk_cascade(x, nvec, lanes, lanes, (0,))
    count, m1 = 0, np.zeros(rows, x.dtype)
    m2 = np.zeros(rows, x.dtype)
    for i in range(nvec * lanes, n_all):
        delta = x[:, i] - m1
        count += 1
        m1 = m1 + delta / dt(count)
        m2 = m2 + delta * (x[:, i] - m1)
    lane_m1, lane_m2 = acc[1], acc[2]
    for i in range(lanes):
        count, m1, m2 = _add_moments(nvec, lane_m1[:, i], lane_m2[:, i], count, m1, m2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return m1, (m2 / dt(n_all)).astype(x.dtype)


def rowwise_moments_half(x: np.ndarray):
    """RowwiseMoments of float16 rows (x: their float32 values, (M, N)): vectors of 16 halves, each converted
    to two vectors of 8 floats with a Welford accumulator each in every chunk of 16 vectors, both added into
    the chunk cascade; the tail element by element (the variance's product fused), then the 8 lanes, each
    counting two per vector. Mean and biased variance in float."""
    rows, n_all = x.shape
    dt = _F32.type
    nvec = n_all // _HALF_BLOCK
    acc = _chunk_cascade(x, nvec, _HALF_BLOCK, 8, (0, 8))
    count, m1, m2 = 0, np.zeros(rows, _F32), np.zeros(rows, _F32)
    for i in range(nvec * _HALF_BLOCK, n_all):
        delta = x[:, i] - m1
        count += 1
        m1 = m1 + delta / dt(count)
        m2 = _fma(delta, x[:, i] - m1, m2)
    lane_m1, lane_m2 = acc[1], acc[2]
    for i in range(8):
        count, m1, m2 = _add_moments(2 * nvec, lane_m1[:, i], lane_m2[:, i], count, m1, m2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return m1, (m2 / dt(n_all)).astype(_F32)

def _meta(shape: tuple, dtype) -> np.ndarray:
    """A meta result of that shape and dtype: a kernel's shapes without its work (a meta tensor has no values)."""
    from gradcli.engine.meta import meta_full
    return meta_full(shape, 0, dtype)


# ------------------------------------------------------------------------------------------ layer_norm

def layer_norm_arrays(x2: np.ndarray, weight, bias, eps: float):
    """LayerNormKernelImpl on rows x2 (M, N): (y, mean, rstd)."""
    dt = x2.dtype.type
    mean, var = rowwise_moments(x2) if x2.shape[1] else (np.full(x2.shape[0], np.nan, x2.dtype),) * 2
    with np.errstate(divide="ignore", invalid="ignore"):
        rstd = (dt(1) / np.sqrt(var + dt(eps))).astype(x2.dtype)
    y = (x2 - mean[:, None]) * rstd[:, None]
    if weight is not None:
        y = _fma(y, weight.reshape(1, weight.size), bias.reshape(1, bias.size) if bias is not None else np.zeros_like(y))
    elif bias is not None:
        y = y + bias.reshape(1, bias.size)
    return y, mean, rstd


def layer_norm_backward_arrays(g2, x2, mean, rstd, weight, mask):
    """LayerNormBackwardKernelImpl: (dX, dgamma, dbeta) on rows (M, N)."""
    if x2.dtype.char in "eE":
        return layer_norm_backward_half(g2, x2, mean, rstd, weight, mask)
    dt = x2.dtype.type
    rows, n = x2.shape
    gi = gw = gb = None
    if mask[0]:
        if weight is None:
            ds = _reduce_all(g2, x2)
            db = _reduce_all(g2)
            scaled = rstd[:, None] * g2
        else:
            w = np.broadcast_to(weight.reshape(1, weight.size), g2.shape)
            ds = _reduce_all(g2 * x2, w)        # the map (dy * x) * gamma
            db = _reduce_all(g2, w)
            scaled = rstd[:, None] * g2 * w
        scale = dt(1) / dt(n) if n else dt(math.inf)
        a = rstd
        b = _fma(db, mean, -ds) * a * a * a * scale
        c = _fma(-b, mean, -(db * a * scale))
        gi = _fma(b[:, None], x2, scaled) + c[:, None]
    if mask[1]:
        a, b = rstd[:, None], (-rstd * mean)[:, None]
        xhat = _fma(a, x2, b)
        buffers = _threaded_rows(g2, lambda acc, i: _fma(g2[i], xhat[i], acc))
        gw = _sum_buffers(buffers, n).astype(x2.dtype)
    if mask[2]:
        buffers = _threaded_rows(g2, lambda acc, i: acc + g2[i])
        gb = _sum_buffers(buffers, n).astype(x2.dtype)
    return gi, gw, gb



def layer_norm_half(x2: np.ndarray, weight, bias, eps: float, pdt):
    """The float16 LayerNorm kernel on rows (M, N): moments of the float values (rowwise_moments_half),
    rstd = 1 / sqrt(var + eps) in float, y = (x * rstd + (-rstd * mean)) * gamma + beta with both products
    fused, rounded once; mean and rstd stored in the parameters' dtype `pdt`."""
    xf = x2.astype(_F32)
    if xf.shape[1]:
        mean, var = rowwise_moments_half(xf)
    else:
        mean = var = np.full(xf.shape[0], np.nan, _F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        rstd = _F32.type(1) / np.sqrt(var + _F32.type(eps))
    scale = np.broadcast_to(rstd[:, None], xf.shape)
    shift = np.broadcast_to((-rstd * mean)[:, None], xf.shape)
    w = np.broadcast_to(_f32(weight).reshape(1, -1) if weight is not None else _F32.type(1), xf.shape)
    b = np.broadcast_to(_f32(bias).reshape(1, -1) if bias is not None else _F32.type(0), xf.shape)
    y = _fma(_fma(xf, scale, shift), w, b)
    return y.astype(x2.dtype), mean.astype(pdt), rstd.astype(pdt)


def _half_row_sums(x: np.ndarray, g: np.ndarray, w):
    """ds = sum(x * (dy * gamma)) and db = sum(dy * gamma) of each row as the float16 LayerNorm backward adds
    them (rows of at least 16): vectors of 16 halves as two float vectors, each its own accumulator started
    by the first vector's products, the next ones fused into it, a partial last vector into its first lanes;
    then the two accumulators added and their lanes reduced by the vector tree."""
    rows, n = x.shape
    wv = w if w is not None else np.ones(n, _F32)
    body = n - n % _HALF_BLOCK
    ds = [x[:, h:h + 8] * (g[:, h:h + 8] * wv[h:h + 8]) for h in (0, 8)]
    db = [g[:, h:h + 8] * wv[h:h + 8] for h in (0, 8)]
    for d in range(_HALF_BLOCK, body, _HALF_BLOCK):
        for k, h in enumerate((d, d + 8)):
            ds[k] = _fma(x[:, h:h + 8], g[:, h:h + 8] * wv[h:h + 8], ds[k])
            db[k] = _fma(g[:, h:h + 8], np.broadcast_to(wv[h:h + 8], (rows, 8)), db[k])
    for k, h in enumerate((body, body + 8)):
        r = min(8, max(0, n - h))
        if r:
            ds[k] = ds[k].copy()
            db[k] = db[k].copy()
            ds[k][:, :r] = _fma(x[:, h:h + r], g[:, h:h + r] * wv[h:h + r], ds[k][:, :r])
            db[k][:, :r] = _fma(g[:, h:h + r], np.broadcast_to(wv[h:h + r], (rows, r)), db[k][:, :r])
    return _tree(ds[0] + ds[1]), _tree(db[0] + db[1])


def layer_norm_backward_half(g2, x2, mean, rstd, weight, mask):
    """The float16 LayerNorm backward: the input's gradient is the float kernel's on the float values,
    rounded once; gamma's and beta's accumulate row by row in per-thread float16 buffers (each update in
    float, rounded), then the buffers are added in float, in the parameters' dtype."""
    pdt = weight.dtype if weight is not None else mean.dtype
    xf, gf = x2.astype(_F32), np.asanyarray(g2).astype(_F32)
    mf, rf = _f32(mean), _f32(rstd)
    wf = None if weight is None else _f32(weight)
    gi = gw = gb = None
    if mask[0] and xf.shape[1] >= _HALF_BLOCK:
        ds, db = _half_row_sums(xf, gf, wf)
        scale = _F32.type(1) / _F32.type(xf.shape[1])
        b = (db * mf - ds) * rf * rf * rf * scale
        c = _fma(-b, mf, -(db * rf * scale))
        dy_gamma = rf[:, None] * gf * (wf if wf is not None else _F32.type(1))
        gi = (_fma(np.broadcast_to(b[:, None], xf.shape), xf, dy_gamma) + c[:, None]).astype(x2.dtype)
    elif mask[0]:                       # a single partial vector: the float kernel's sums agree
        gi = layer_norm_backward_arrays(gf, xf, mf, rf, wf, [True, False, False])[0].astype(x2.dtype)

    def through_half(update):
        total = np.zeros(xf.shape[1], _F32)
        for b in _threaded_rows(gf, lambda acc, i: update(acc, i).astype(x2.dtype).astype(_F32)):
            total = total + b
        return total.astype(pdt)
    if mask[1]:
        xhat = _fma(np.broadcast_to(rf[:, None], xf.shape), xf, np.broadcast_to((-rf * mf)[:, None], xf.shape))
        gw = through_half(lambda acc, i: _fma(gf[i], xhat[i], acc))
    if mask[2]:
        gb = through_half(lambda acc, i: acc + gf[i])
    return gi, gw, gb


# ------------------------------------------------------------------------------------------ group_norm

def group_norm_arrays(x: np.ndarray, groups: int, weight, bias, eps: float):
    """GroupNormKernelImpl: each (sample, group) row's moments, then y = x * scale + shift per channel, with
    scale = rstd * gamma and shift = -scale * mean + beta. A float16 input is computed in float (its moments
    by rowwise_moments_half), y rounded once, mean and rstd in the parameters' dtype."""
    if is_meta(x):                      # the shapes alone
        pdt = next((v.dtype for v in (weight, bias) if v is not None), x.dtype) if x.dtype.char in "eE" else x.dtype
        stat = (x.shape[0], groups)
        return _meta(x.shape, x.dtype), _meta(stat, pdt), _meta(stat, pdt)
    if x.dtype.char in "eE":
        pdt = next((v.dtype for v in (weight, bias) if v is not None), x.dtype)
        y, mean, rstd = _group_norm(x.astype(_F32), groups, None if weight is None else _f32(weight),
                                    None if bias is None else _f32(bias), eps, rowwise_moments_half)
        return y.astype(x.dtype), mean.astype(pdt), rstd.astype(pdt)
    return _group_norm(x, groups, weight, bias, eps, rowwise_moments)


def _group_norm(x: np.ndarray, groups: int, weight, bias, eps: float, moments):
    dt = x.dtype.type
    n, c = x.shape[0], x.shape[1]
    x3 = _as3d(x)
    rows = x3.reshape(n * groups, (c // groups) * x3.shape[2])
    if rows.shape[1]:
        mean, var = moments(rows)
    else:
        mean = var = np.full(n * groups, np.nan, x.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        rstd = (1.0 / np.sqrt(np.maximum(var, dt(0)).astype(_F64) + eps)).astype(x.dtype)
    per = c // groups
    m = np.repeat(mean.reshape(n, groups), per, axis=1)
    r = np.repeat(rstd.reshape(n, groups), per, axis=1)
    if weight is None and bias is None:
        y = ((x3 - m[:, :, None]) * r[:, :, None]).reshape(x.shape)
    else:
        scale = r * weight.reshape(1, c) if weight is not None else r
        shift = _fma(-scale, m, bias.reshape(1, c) if bias is not None else np.zeros_like(scale))
        y = _fma(x3, scale[:, :, None], shift[:, :, None]).reshape(x.shape)
    return y, mean.reshape(n, groups), rstd.reshape(n, groups)


def group_norm_backward_arrays(g, x, mean, rstd, weight, groups, mask):
    """GroupNormBackwardKernelImpl: per (sample, channel) sums ds = sum(dy * x), db = sum(dy); each group's
    gamma-weighted sums of those give dX = c1 * dy + c2 * x + c3; dgamma and dbeta sum over the batch.
    float16 in float: the input's gradient rounded once, gamma's and beta's in the parameters' dtype."""
    if is_meta(x) or is_meta(g):
        pdt = weight.dtype if weight is not None else mean.dtype
        return tuple((_meta(x.shape, x.dtype) if i == 0 else _meta((x.shape[1],), pdt)) if mask[i] else None
                     for i in range(3))
    if x.dtype.char in "eE":
        pdt = weight.dtype if weight is not None else mean.dtype
        g = np.asanyarray(g, dtype=x.dtype)
        out = _group_norm_backward(g.astype(_F32), x.astype(_F32), _f32(mean), _f32(rstd),
                                   None if weight is None else _f32(weight), groups, mask, _half_channel_sums)
        return tuple(None if v is None else v.astype(x.dtype if k == 0 else pdt) for k, v in enumerate(out))
    return _group_norm_backward(g, x, mean, rstd, weight, groups, mask, None)


def _half_channel_sums(g3: np.ndarray, x3: np.ndarray):
    """ds and db of the float16 GroupNorm backward, per (sample, channel): vectors of 16 halves as two float
    vectors, both products (rounded) added into one 8-lane accumulator, the lanes added in order, then the
    rest of the image element by element."""
    n, c, hw = x3.shape
    body = hw - hw % _HALF_BLOCK
    ds_lanes = np.zeros((n, c, 8), _F32)
    db_lanes = np.zeros((n, c, 8), _F32)
    for d in range(0, body, _HALF_BLOCK):
        x0, x1 = x3[:, :, d:d + 8], x3[:, :, d + 8:d + 16]
        g0, g1 = g3[:, :, d:d + 8], g3[:, :, d + 8:d + 16]
        ds_lanes = ds_lanes + x0 * g0 + x1 * g1
        db_lanes = db_lanes + g0 + g1
    ds, db = _seq(ds_lanes, 2), _seq(db_lanes, 2)
    for d in range(body, hw):
        ds = ds + x3[:, :, d] * g3[:, :, d]
        db = db + g3[:, :, d]
    return ds, db


def _group_norm_backward(g, x, mean, rstd, weight, groups, mask, channel_sums):
    dt = x.dtype.type
    n, c = x.shape[0], x.shape[1]
    x3, g3 = _as3d(x), _as3d(np.ascontiguousarray(g, dtype=x.dtype))
    hw = x3.shape[2]
    per = c // groups
    if channel_sums is not None:
        ds, db = channel_sums(g3, x3)
    else:
        ds = _reduce_all(g3, x3, fused_tail=False)  # (n, c)
        db = _reduce_all(g3)
    gi = gw = gb = None
    if mask[0]:
        w = np.broadcast_to((weight if weight is not None else np.ones(c, x.dtype)).reshape(1, groups, per),
                            (n, groups, per))
        ds_g = _lane_sums(ds.reshape(n, groups, per), w)
        db_g = _lane_sums(db.reshape(n, groups, per), w)
        s = dt(1) / dt(per * hw) if per * hw else dt(math.inf)
        c2 = _fma(db_g, mean, -ds_g) * rstd * rstd * rstd * s
        c3 = _fma(-(db_g * rstd), s, -c2 * mean)
        c1 = np.repeat(rstd, per, axis=1) * (weight.reshape(1, c) if weight is not None else dt(1))
        c2x, c3x = np.repeat(c2, per, axis=1)[:, :, None], np.repeat(c3, per, axis=1)[:, :, None]
        if channel_sums is None:
            gi = _fma(c1[:, :, None], g3, c2x * x3) + c3x
        else:                           # the float16 kernel: (c2 * x fused into c1 * dy) + c3
            gi = _fma(np.broadcast_to(c2x, x3.shape), x3, c1[:, :, None] * g3) + c3x
        gi = gi.reshape(x.shape)
    if mask[1]:
        m = np.repeat(mean, per, axis=1)
        r = np.repeat(rstd, per, axis=1)
        gw = np.zeros(c, x.dtype)
        for t, scale in zip(_fma(-db, m, ds), r):
            gw = _fma(t, scale, gw)
    if mask[2]:
        gb = _seq(db, 0)
    return gi, gw, gb


# ---------------------------------------------------------------- formulas under create_graph and jvps

def _reduce_dims(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _bn_view(v: Tensor, ndim: int) -> Tensor:
    return ops.reshape(v, (1, -1) + (1,) * (ndim - 2))


def _bn_composite(F, g, x, weight, running_mean, running_var, training, eps):
    """native_batch_norm_backward as recorded ops (create_graph): the batch statistics recomputed from the
    input, so the gradient can be differentiated again."""
    dims = _reduce_dims(x.ndim)
    if training:
        mean = ops.mean(x, dims, True)
        centred = x - mean
        invstd = ops.rsqrt(ops.mean(centred * centred, dims, True) + eps)
        xhat = centred * invstd
        gi = (g - ops.mean(g, dims, True) - xhat * ops.mean(g * xhat, dims, True)) * invstd
    else:
        invstd = _bn_view(Tensor(_invstd_eval_backward(_array(running_var), eps)), x.ndim)
        xhat = (x - _bn_view(Tensor(_array(running_mean)), x.ndim)) * invstd
        gi = g * invstd
    if weight is not None:
        gi = gi * _bn_view(weight, x.ndim)
    return gi, ops.reduce_sum(g * xhat, dims), ops.reduce_sum(g, dims)


def _array(v):
    return v._a if v.__class__ is Tensor else v


def _mask(index: int) -> list:
    mask = [False, False, False]
    mask[index] = True
    return mask


def _bn_grad(index):
    """native_batch_norm_backward's gradient `index` (input, weight, bias): the kernel's values; under
    create_graph a NativeBatchNormBackwardBackward0 node of them, as PyTorch records."""
    def formula(F, g, input, weight, running_mean, running_var, result1, result2, eps, training):
        arrays = [_array(v) for v in (g, input, weight, running_mean, running_var, result1, result2)]
        w = arrays[2]
        if w is not None and w.ndim != 1:
            # the TensorIterator path and the contiguous kernel of images read the weight with a 1-d accessor;
            # the channels-last kernel (also used for one value per channel) reads its data as [C], and its
            # weight gradient is 1-d too
            x, g = arrays[1], np.asanyarray(arrays[0])
            if _strided(x, g) or (x.flags.c_contiguous and math.prod(x.shape[2:]) > 1):
                raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {w.ndim}")
            if index == 1:
                raise RuntimeError(f"Function NativeBatchNormBackward0 returned an invalid gradient at index 1 - got "
                                   f"[{w.size}] but expected shape compatible with [{', '.join(map(str, w.shape))}]")
            arrays[2] = w.reshape(-1)
        value = batch_norm_backward_arrays(*arrays, training, eps, _mask(index))[index]
        if isinstance(g, np.ndarray):
            return value
        return apply(BATCH_NORM_BACKWARD, value, (g, input, weight, result1, result2),
                     (running_mean, running_var, eps, training, index))
    return formula


def _ln_composite(F, g, x, normalized_shape, weight, eps):
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = ops.mean(x, dims, True)
    centred = x - mean
    rstd = ops.rsqrt(ops.mean(centred * centred, dims, True) + eps)
    xhat = centred * rstd
    gw_in = g * weight if weight is not None else g
    gi = (gw_in - ops.mean(gw_in, dims, True) - xhat * ops.mean(gw_in * xhat, dims, True)) * rstd
    lead = tuple(range(x.ndim - len(normalized_shape)))
    return gi, ops.reduce_sum(g * xhat, lead) if lead else g * xhat, ops.reduce_sum(g, lead) if lead else g


def _ln_grad(index):
    """native_layer_norm_backward's gradient `index`: the kernel's values; under create_graph a
    NativeLayerNormBackwardBackward0 node of them."""
    def formula(F, g, input, normalized_shape, weight, bias, result1, result2, eps):
        x, w = _array(input), _array(weight)
        if is_meta(x) or is_meta(_array(g)):
            value = _meta(x.shape if index == 0 else tuple(normalized_shape),
                          x.dtype if index == 0 or w is None else w.dtype)
            if isinstance(g, np.ndarray):
                return value
            return apply(LAYER_NORM_BACKWARD, value, (g, input, result1, result2, weight, bias),
                         (normalized_shape, eps, index))
        x2 = x.reshape(math.prod(x.shape[:x.ndim - len(normalized_shape)]), math.prod(normalized_shape))
        value = layer_norm_backward_arrays(np.ascontiguousarray(_array(g), dtype=x.dtype).reshape(x2.shape), x2,
                                           _array(result1).reshape(-1), _array(result2).reshape(-1),
                                           None if w is None else w.reshape(-1), _mask(index))[index]
        value = value.reshape(x.shape if index == 0 else tuple(normalized_shape))
        if isinstance(g, np.ndarray):
            return value
        return apply(LAYER_NORM_BACKWARD, value, (g, input, result1, result2, weight, bias),
                     (normalized_shape, eps, index))
    return formula


def _third_order(node: str):
    raise NotImplementedError(f"gradcli cannot differentiate {node} again (a third derivative of a normalisation "
                              "layer)")


def _composite_jvp(composite, tangents, grad_out, input, weight) -> Tensor:
    """A backward node's tangent: J t of the composite gradient, by two reverse passes on fresh leaves (the
    vector-Jacobian product is linear in its cotangent v, so the gradient of <J^T v, t> with respect to v is
    J t). The values are the derivative's; the tangent is a constant (no grad_fn of its own)."""
    from gradcli.engine import autograd
    from gradcli.engine.backward import differentiate
    leaves = [None if v is None else Tensor(np.array(_array(v))).requires_grad_() for v in (grad_out, input, weight)]
    with autograd.enable_grad():
        out = composite(*leaves)
        v = Tensor(np.zeros_like(out._a)).requires_grad_()
        wrt = [(leaf, t) for leaf, t in zip(leaves, tangents) if leaf is not None and t is not None]
        vjps = differentiate(out, [leaf for leaf, _ in wrt], v, create_graph=True, allow_unused=True,
                             materialize_grads=True)
        total = None
        for vjp, (_, t) in zip(vjps, wrt):
            term = ops.reduce_sum(vjp * Tensor(t._a))
            total = term if total is None else total + term
        return Tensor(differentiate(total, v, allow_unused=True, materialize_grads=True)[0]._a)


def _bn_twice_jvp(F, ts, xs, result, running_mean, running_var, eps, train, index):
    return _composite_jvp(lambda g, x, w: _bn_composite(F, g, x, w, running_mean, running_var, train, eps)[index],
                          ts[:3], *xs[:3])


def _ln_twice_jvp(F, ts, xs, result, normalized_shape, eps, index):
    grad_out, input, mean, rstd, weight, bias = xs
    return _composite_jvp(lambda g, x, w: _ln_composite(F, g, x, normalized_shape, w, eps)[index],
                          (ts[0], ts[1], ts[4]), grad_out, input, weight)


def batch_norm_double_backward_arrays(gg, index: int, grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_invstd, eps: float, training: bool):
    """batchnorm_double_backward (FunctionsManual.cpp) on arrays, op for op in its order, for the gradient `gg`
    of the first backward's output `index` (0 grad_input, 1 grad_weight, 2 grad_bias): (gI, gG, ggO). Each
    step is one tensor op of PyTorch's, its result laid out as PyTorch lays it out (an input in another layout
    changes the order of the sums that follow); the per-channel sums are sum_exclude_dim1's: over dim 0, then
    the trailing dims one at a time from the last."""
    x = np.asanyarray(input)
    dt = x.dtype.type
    half = x.dtype == np.float16
    c = x.shape[1]
    m = x.size // c
    mm = dt(m)
    g_o = np.asanyarray(grad_out, dtype=x.dtype)
    gg = np.asanyarray(gg, dtype=x.dtype)
    ggi = gg if index == 0 else None
    shape = _channel(np.zeros(c), x.ndim).shape
    ggg = np.broadcast_to(gg.reshape(shape), x.shape) if index == 1 else None
    ggb = np.broadcast_to(gg.reshape(shape), x.shape) if index == 2 else None
    affine = weight is not None
    gamma = np.broadcast_to(np.asanyarray(weight, dtype=x.dtype).reshape(shape), x.shape) if affine else dt(1)

    def ew(fn, a, b):
        return laid_out(fn(a, b), a, b)

    def mul(a, b):
        return ew(np.multiply, a, b)

    def sub(a, b):
        return ew(np.subtract, a, b)

    def add(a, b):
        return ew(np.add, a, b)

    def div(a, b):
        return ew(np.true_divide, a, b)

    def sdiv(a, number):
        """a / a C++ number: a float16 tensor's division by it in float (arith.half_with_number)."""
        return half_with_number(np.true_divide, a, number) if half else a / dt(number)

    def smul(a, number):
        return half_with_number(np.multiply, a, number) if half else a * dt(number)

    def total(a, dims, keepdim):
        if half:        # a float16 sum accumulates in float, rounded once
            return sum_array(a, dims, keepdim, dtype=_F32).astype(np.float16)
        return sum_array(a, dims, keepdim)

    def sum_excl(a, keepdim=True):
        r = total(a, (0,), keepdim)
        for d in range(r.ndim - 1, 1 if keepdim else 0, -1):
            r = total(r, (d,), keepdim)
        return r

    if training:
        mu = np.asanyarray(save_mean, dtype=x.dtype).reshape(shape)
        inv = np.asanyarray(save_invstd, dtype=x.dtype).reshape(shape)
    else:
        mu = np.asanyarray(running_mean, dtype=x.dtype).reshape(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = (dt(1) / np.sqrt(np.asanyarray(running_var, dtype=x.dtype) + dt(eps))).reshape(shape)
    centred = sub(x, mu)
    inv2 = inv * inv
    # pow(3): x * x * x in the opmath type (float for float16), rounded once
    inv3 = (inv.astype(_F32) * inv.astype(_F32) * inv.astype(_F32)).astype(x.dtype) if half else inv * inv * inv
    centred_inv3 = mul(centred, inv3)
    go_mu_sum = sum_excl(mul(g_o, centred))
    go_sum = sum_excl(g_o)

    gi = None
    if ggi is not None and training:
        ggi_sum = sum_excl(ggi)
        ggi_mu_sum = sum_excl(mul(ggi, centred))
        all_sub = sdiv(ggi_sum * go_sum, m) - sum_excl(mul(g_o, ggi)) + smul(inv2 * go_mu_sum * ggi_mu_sum, 3.0 / m)
        t0 = mul(centred_inv3, all_sub)
        t0 = laid_out(sdiv(t0, m), t0)
        t1 = mul(sdiv(ggi_mu_sum * inv3, m), sub(sdiv(go_sum, m), g_o))
        t2 = mul(sdiv(go_mu_sum * inv3, m), sub(sdiv(ggi_sum, m), ggi))
        gi = mul(gamma, laid_out(t0 + t1 + t2, t0))
    if affine and ggg is not None:
        if training:
            t0 = mul(g_o, inv)
            t1 = sdiv(inv * go_sum, -m)
            t2 = mul(centred_inv3, sum_excl(mul(g_o, centred)))
            t2 = laid_out(sdiv(t2, -m), t2)
            term = mul(ggg, laid_out(t0 + t1 + t2, t0))
        else:
            term = mul(mul(ggg, inv), g_o)
        gi = term if gi is None else laid_out(gi + term, gi)

    def first_backward(g_local, gamma_local):
        h0 = sdiv(gamma_local * inv, m)
        h1 = sub(sub(laid_out(smul(g_local, m), g_local), sum_excl(g_local)),
                 mul(mul(centred, inv2), sum_excl(mul(g_local, centred))))
        return mul(h0, h1)

    g_g = None
    if affine and ggi is not None:
        if training:
            g_g = sum_excl(mul(ggi, first_backward(g_o, dt(1))), False)
        else:
            g_g = sum_excl(mul(mul(ggi, g_o), inv), False)
    ggo = None
    if ggi is not None:
        ggo = first_backward(ggi, gamma) if training else mul(mul(ggi, inv), gamma)
    if ggg is not None:
        term = mul(mul(ggg, centred), inv)
        ggo = term if ggo is None else laid_out(ggo + term, ggo)
    if ggb is not None:
        ggo = ggb if ggo is None else laid_out(ggo + ggb, ggo)
    return gi, g_g, ggo


def _bn_twice(position: int):
    def formula(F, gg, grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, eps, train,
                index):
        if F.tensors:
            _third_order("NativeBatchNormBackwardBackward0")
        value = batch_norm_double_backward_arrays(gg, index, grad_out, input, weight, _array(running_mean),
                                                  _array(running_var), save_mean, save_invstd, eps,
                                                  train)[(2, 0, 1)[position]]
        like = np.asanyarray((grad_out, input, weight)[position])
        return np.zeros_like(like) if value is None else np.array(np.broadcast_to(value, like.shape))
    return formula


def layer_norm_double_backward_arrays(gg, index: int, grad_out, input, mean, rstd, weight, normalized_shape):
    """layer_norm_double_backward (FunctionsManual.cpp) on arrays, op for op in its order, for the gradient
    `gg` of the first backward's output `index` (0 grad_input, 1 grad_weight, 2 grad_bias): (gI, gG, ggO),
    the gradients for input, weight and grad_out. Every step is one tensor op of PyTorch's (no fused
    multiply-adds), its sums the ordered sum; a scalar such as 3. / N is rounded to the tensor's dtype."""
    x = np.asanyarray(input)
    dt = x.dtype.type
    axis = x.ndim - len(normalized_shape)
    m, n = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    x2 = x.reshape(m, n)
    g_o = np.asanyarray(grad_out, dtype=x.dtype).reshape(m, n)
    gg = np.asanyarray(gg, dtype=x.dtype)
    ggi = gg.reshape(m, n) if index == 0 else None
    ggg = gg.reshape(1, n) if index == 1 else None
    ggb = gg.reshape(1, n) if index == 2 else None
    affine = weight is not None
    gamma = np.asanyarray(weight, dtype=x.dtype).reshape(1, n) if affine else np.ones(1, x.dtype)
    mu = np.asanyarray(mean, dtype=x.dtype).reshape(m, 1)
    inv = np.asanyarray(rstd, dtype=x.dtype).reshape(m, 1)
    centred = x2 - mu
    inv2 = inv * inv
    inv3 = inv * inv * inv
    centred_inv3 = centred * inv3
    nn = dt(n)

    def rows(a):
        return sum_array(a, (1,), True)

    gi = None
    if ggi is not None:
        gxhat = g_o * gamma
        gxhat_mu_sum = rows(gxhat * centred)
        gxhat_sum = rows(gxhat)
        ggi_sum = rows(ggi)
        ggi_mu_sum = rows(ggi * centred)
        all_sub = (ggi_sum * gxhat_sum) / nn - rows(ggi * gxhat) + inv2 * gxhat_mu_sum * ggi_mu_sum * dt(3.0 / n)
        gi = (centred_inv3 * all_sub) / nn
        gi = gi + (ggi_mu_sum * inv3) / nn * (gxhat_sum / nn - gxhat)
        gi = gi + (gxhat_mu_sum * inv3) / nn * (ggi_sum / nn - ggi)
    if affine and ggg is not None:
        t = g_o * ggg * inv + (inv * rows(g_o * ggg)) / -nn
        t = t + (centred_inv3 * rows(g_o * ggg * centred)) / -nn
        gi = t if gi is None else gi + t

    def first_backward(g_local, gamma_local):
        h0 = (gamma_local * inv) / nn
        h1 = nn * g_local - rows(g_local) - (centred * inv2) * rows(g_local * centred)
        return h0 * h1

    g_g = None
    if affine and ggi is not None:
        g_g = sum_array(g_o * first_backward(ggi, dt(1)), (0,)).reshape(np.shape(weight))
    ggo = None
    if ggi is not None:
        ggo = first_backward(ggi, gamma)
    if ggg is not None:
        term = ggg * centred * inv
        ggo = term if ggo is None else ggo + term
    if ggb is not None:
        ggo = ggb if ggo is None else ggo + ggb
    if ggo is not None:
        ggo = np.broadcast_to(ggo, (m, n)).reshape(x.shape)
    return (None if gi is None else gi.reshape(x.shape)), g_g, ggo


def _ln_twice(position: int):
    def formula(F, gg, grad_out, input, mean, rstd, weight, normalized_shape, eps, index):
        if position == 5:               # the bias edge: no gradient, as PyTorch's
            return None
        if F.tensors:
            _third_order("NativeLayerNormBackwardBackward0")
        gi, g_g, ggo = layer_norm_double_backward_arrays(gg, index, grad_out, input, mean, rstd, weight,
                                                         normalized_shape)
        value = {0: ggo, 1: gi, 4: g_g}[position]
        return np.zeros_like(np.asanyarray((grad_out, input, None, None, weight)[position])) if value is None else value
    return formula


def _gn_composite(F, g, x, weight, groups, eps):
    n = x.shape[0]
    grouped = (n, groups, math.prod(x.shape[1:]) // groups)     # (no -1: n may be 0)
    xg = ops.reshape(x, grouped)
    mean = ops.mean(xg, (2,), True)
    centred = xg - mean
    rstd = ops.rsqrt(ops.mean(centred * centred, (2,), True) + eps)
    xhat = ops.reshape(centred * rstd, x.shape)
    gw_in = g * _bn_view(weight, x.ndim) if weight is not None else g
    gwg = ops.reshape(gw_in, grouped)
    xhg = ops.reshape(xhat, grouped)
    gi = ops.reshape((gwg - ops.mean(gwg, (2,), True) - xhg * ops.mean(gwg * xhg, (2,), True)) * rstd, x.shape)
    dims = _reduce_dims(x.ndim)
    return gi, ops.reduce_sum(g * xhat, dims), ops.reduce_sum(g, dims)


def _gn_grad(index):
    def formula(F, g, input, weight, result1, result2, N, C, HxW, group, eps):
        if g.__class__ is OutputGrads:      # the statistics' gradients too (a backward of a create_graph one)
            from gradcli.engine import autograd
            from gradcli.engine.backmath import TENSOR
            grads = OutputGrads(3, 0, None)
            grads.grads = [None if v is None else Tensor(v) for v in g.grads]
            mask = (index == 0, index == 1, index == 2)
            with autograd.no_grad():
                out = _gn_twice(TENSOR, grads, None, mask, Tensor(_array(input)),
                                None if weight is None else Tensor(_array(weight)), result1, result2,
                                N, C, HxW, group, eps)[index]
            return None if out is None else out._a
        if isinstance(g, np.ndarray):
            mask = [False, False, False]
            mask[index] = True
            return group_norm_backward_arrays(g, input, _array(result1), _array(result2), weight, group, mask)[index]
        return _gn_composite(F, g, input, weight, group, eps)[index]       # PyTorch too records a composite
    return formula


def _gn_twice(F, g, node, mask, input, weight, result1, result2, N, C, HxW, group, eps):
    """native_group_norm's gradients under create_graph, all three at once, as PyTorch's
    infinitely_differentiable_native_group_norm_backward records them: the saved mean and rstd are outputs 1 and 2
    of the node itself (a gradient reaching them comes back to it: dmean, drstd), ds and db are shared by the
    three, dX = a * dY + b * X + c with var_mean's backward added when dmean and drstd came. (Under forward mode
    the composite that recomputes the statistics, whose tangents follow from the input's.)"""
    dY, dmean, drstd = g.grads if g.__class__ is OutputGrads else (g, None, None)
    if STATE.fw_level is not None and dmean is None and drstd is None:
        return tuple(v if m else None for v, m in zip(_gn_composite(F, dY, input, weight, group, eps), mask))
    G, D = group, C // group
    s = 1.0 / (D * HxW) if D * HxW else math.inf       # (a double's 1 / 0)
    X = ops.reshape(input, (N, G, D, HxW))
    mean = ops.reshape(_node_output(result1, node, 1), (N, G, 1, 1))
    rstd = ops.reshape(_node_output(result2, node, 2), (N, G, 1, 1))
    dX = dgamma = dbeta = None
    if dY is not None:
        dY4 = ops.reshape(dY, (N, G, D, HxW))
        ds = ops.reduce_sum(dY4 * X, 3).unsqueeze_(-1)
        db = ops.reduce_sum(dY4, 3).unsqueeze_(-1)
    if mask[0]:
        gamma = None if weight is None else ops.reshape(weight, (1, G, D, 1))
        rstd_cube = rstd * rstd * rstd
        # (C++'s `x * y` evaluates y first under GCC: where both sides record nodes, the right side's are older)
        dvar = None
        if drstd is not None:
            drstd4 = ops.view(drstd, N, G, 1, 1)
            dvar = -0.5 * rstd_cube * drstd4
        stats = dmean is not None and drstd is not None
        if dY is not None:
            a = rstd if gamma is None else rstd * gamma
            b = ops.reduce_sum(ds if gamma is None else ds * gamma, 2).unsqueeze_(-2)
            c = ops.reduce_sum(db if gamma is None else db * gamma, 2).unsqueeze_(-2)
            b = (c * mean - b) * rstd_cube * s
            c_rstd = c * rstd * s
            c = -b * mean - c_rstd
            bX = b * X
            dX = a * dY4 + bX + c
            if stats:
                dX = dX + _var_mean_backward(F, dvar, ops.view(dmean, N, G, 1, 1), X, None, (2, 3), 0, True, False)
            dX = ops.reshape_as(dX, input)
        elif stats:
            dX = ops.reshape_as(_var_mean_backward(F, dvar, ops.view(dmean, N, G, 1, 1), X, None, (2, 3), 0, True,
                                                   False), input)
    if mask[1] and dY is not None:
        dgamma = _like_weight(ops.reduce_sum((ds - db * mean) * rstd, 0), weight)
    if mask[2] and dY is not None:
        dbeta = _like_weight(ops.reduce_sum(db, 0), weight)
    return dX, dgamma, dbeta


def _like_weight(t: Tensor, weight) -> Tensor:
    """reshape_as(gamma): without a weight PyTorch reshapes to an undefined tensor's size ([0]) and fails (a bias
    without a weight cannot be differentiated twice there)."""
    if weight is None:
        raise RuntimeError(f"shape '[0]' is invalid for input of size {t._a.size}")
    return ops.reshape_as(t, weight)


def _node_output(value, node, index: int) -> Tensor:
    """A saved result of the node (native_group_norm's mean or rstd) as its output `index` of three: a tensor
    whose grad_fn is an OutputSlot of the node, as PyTorch saves an output (a plain tensor without a node)."""
    out = Tensor(_array(value))
    if node is not None:
        out.requires_grad = True
        out.grad_fn = OutputSlot(node, index, 3)
    return out


def _normalized_tangent(xt: Tensor, centred: Tensor, invstd: Tensor, dims) -> Tensor:
    """batch_norm_jvp's training term: invstd_t = -invstd^3 * mean((t - mean(t)) * centred), then
    (t - mean(t)) * invstd + centred * invstd_t (over `dims`, kept)."""
    tc = xt - ops.mean(xt, dims, True)
    invstd_t = -ops.power(invstd, 3) * ops.mean(tc * centred, dims, True)
    return tc * invstd + centred * invstd_t


def _affine_tangent(out, weight, wt, bias, bt, centred: Tensor, invstd: Tensor, view) -> Tensor:
    """The affine part of the jvp, as PyTorch writes it: result_t *= weight_p; result_t += centred * invstd *
    weight_t; result_t += bias_t, where a parameter without a tangent stands in PyTorch's zero tensor (its add
    still recorded when the result requires grad)."""
    if weight is not None:
        out = out * view(weight)
        out = add_tangents(out, None if wt is None else centred * invstd * view(wt))
    if bias is not None:
        out = add_tangents(out, None if bt is None else view(bt))
    return out


def _bn_jvp(F, ts, xs, result, running_mean, running_var, result1, result2, eps, training):
    """batch_norm_jvp: the normalised input's tangent, times the weight, plus the weight's and bias's terms."""
    x, weight, bias = xs
    xt, wt, bt = ts
    ndim = x._a.ndim
    if training:
        mean, invstd = _bn_view(Tensor(_array(result1)), ndim), _bn_view(Tensor(_array(result2)), ndim)
    else:
        mean = _bn_view(Tensor(_array(running_mean)), ndim)
        invstd = _bn_view(Tensor(_invstd_eval_backward(_array(running_var), eps)), ndim)
    centred = x - mean
    if xt is None:
        out = Tensor(np.zeros_like(x._a))
    else:
        out = _normalized_tangent(xt, centred, invstd, _reduce_dims(ndim)) if training else xt * invstd
    return _affine_tangent(out, weight, wt, bias, bt, centred, invstd, lambda v: _bn_view(v, ndim))


def _ln_jvp(F, ts, xs, result, normalized_shape, result1, result2, eps):
    """layer_norm_jvp: as batch_norm's, over the trailing dims of each sample."""
    x, weight, bias = xs
    xt, wt, bt = ts
    k = len(normalized_shape)
    shape = x._a.shape[:x._a.ndim - k] + (1,) * k
    rstd = Tensor(_array(result2).reshape(shape))
    centred = x - Tensor(_array(result1).reshape(shape))
    out = Tensor(np.zeros_like(x._a)) if xt is None else \
        _normalized_tangent(xt, centred, rstd, tuple(range(x._a.ndim - k, x._a.ndim)))
    return _affine_tangent(out, weight, wt, bias, bt, centred, rstd, lambda v: v)


def _gn_jvp(F, ts, xs, result, result1, result2, N, C, HxW, group, eps):
    """group_norm_jvp: batch_norm's training term on the (1, N * group, -1) view, then the per-channel affine
    terms."""
    x, weight, bias = xs
    xt, wt, bt = ts
    ndim = x._a.ndim
    per = C // group
    stats = (N, C) + (1,) * (ndim - 2)
    rstd = Tensor(np.repeat(_array(result2), per, axis=1).reshape(stats))
    centred = x - Tensor(np.repeat(_array(result1), per, axis=1).reshape(stats))
    if xt is None:
        out = Tensor(np.zeros_like(x._a))
    else:
        rows = (1, N * group, math.prod(x._a.shape[1:]) // group)     # (no -1: N may be 0)
        grouped = _normalized_tangent(ops.reshape(xt, rows), ops.reshape(centred, rows),
                                      Tensor(_array(result2).reshape(1, N * group, 1)), (0, 2))
        out = ops.reshape(grouped, x._a.shape)
    return _affine_tangent(out, weight, wt, bias, bt, centred, rstd, lambda v: _bn_view(v, ndim))


# Formulas receive (F, g, *saved); one per input (input, weight, bias).
# fmt: off
BATCH_NORM = Op("NativeBatchNormBackward0", None,
                ("input", "weight", "running_mean", "running_var", "result1", "result2", "eps", "training"),
                (_bn_grad(0), _bn_grad(1), _bn_grad(2)),
                inputs=("input", "weight", "bias"), saves_tensors=True, quiet=True, jvp=_bn_jvp)
LAYER_NORM = Op("NativeLayerNormBackward0", None,
                ("input", "normalized_shape", "weight", "bias", "result1", "result2", "eps"),
                (_ln_grad(0), _ln_grad(1), _ln_grad(2)),
                inputs=("input", "weight", "bias"), saves_tensors=True, quiet=True, jvp=_ln_jvp)
GROUP_NORM = Op("NativeGroupNormBackward0", None,
                ("input", "weight", "result1", "result2", "N", "C", "HxW", "group", "eps"),
                (_gn_grad(0), _gn_grad(1), _gn_grad(2)),
                inputs=("input", "weight", "bias"), saves_tensors=True, quiet=True, jvp=_gn_jvp, combined=_gn_twice)
# fmt: on

# The gradients' own nodes under create_graph, with PyTorch's inputs and saved names (the statistics' edges
# carry no gradient: the forward's results do not require grad).
# fmt: off
BATCH_NORM_BACKWARD = Op("NativeBatchNormBackwardBackward0", None,
                         ("grad_out", "input", "weight", "running_mean", "running_var", "save_mean", "save_invstd",
                          "eps", "train", "index"),
                         tuple(_bn_twice(i) for i in range(5)),
                         inputs=("grad_out", "input", "weight", "save_mean", "save_invstd"), saves_tensors=True,
                         quiet=True, jvp=_bn_twice_jvp)
LAYER_NORM_BACKWARD = Op("NativeLayerNormBackwardBackward0", None,
                         ("grad_out", "input", "mean", "rstd", "weight", "normalized_shape", "eps", "index"),
                         tuple(_ln_twice(i) for i in range(6)),
                         inputs=("grad_out", "input", "mean", "rstd", "weight", "bias"), saves_tensors=True,
                         quiet=True, jvp=_ln_twice_jvp)
# fmt: on


# ------------------------------------------------------------------------------------ the functions

def _float_input(x: np.ndarray, name: str) -> None:
    """PyTorch's dtype check; then the budget: the kernels keep double-precision copies of the input."""
    if x.size > STATE.large_result:
        budget.check_tensor(x.shape, 8)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_word(x)}'")


def _size_str(shape) -> str:
    return "torch.Size([" + ", ".join(str(d) for d in shape) + "])"


def _verify_batch_size(shape, shown: str) -> None:
    """F.batch_norm's check in training (and group_norm's): more than one value per channel."""
    size = shape[0]
    for d in shape[2:]:
        size *= d
    if size == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shown}")


def _check_features(name: str, features: int, numel: int) -> None:
    if numel != features:
        raise RuntimeError(f"{name} should contain {features} elements not {numel}")


def _param(v, fn: str, name: str, position: int):
    """An optional tensor argument, with PyTorch's parser message for anything else."""
    if v is not None and v.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(v).__name__}")
    return v


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05) -> Tensor:
    """F.batch_norm: one NativeBatchNormBackward0 node; in training the running statistics (when given) are
    updated in place with `momentum`."""
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out if out.__class__ is Tensor else out[0]


def native_batch_norm(*args, **kwargs) -> tuple:
    """torch.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps): (output,
    save_mean, save_invstd), the batch's statistics in training (empty in evaluation), with no grad_fn."""
    v = signatures.parsed("torch.native_batch_norm", args, kwargs, {})
    out = _batch_norm(v["input"], v["running_mean"], v["running_var"], v["weight"], v["bias"], v["training"],
                      v["momentum"], v["eps"])
    if out.__class__ is Tensor:
        raise NotImplementedError("gradcli does not implement torch.native_batch_norm of an empty input")
    return out


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.__class__ is not Tensor:
        if training:
            raise AttributeError(f"'{type(input).__name__}' object has no attribute 'size'")
        raise TypeError(f"batch_norm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    x = input._a
    if training:
        _verify_batch_size(x.shape, _size_str(x.shape))
    for v, name, position in ((weight, "weight", 2), (bias, "bias", 3), (running_mean, "running_mean", 4),
                              (running_var, "running_var", 5)):
        _param(v, "batch_norm", name, position)
    if x.size == 0:     # at::batch_norm's first step: a clone, times weight[0], plus bias[0], keeps the graph
        out = ops.arith.clone(input)
        if weight is not None:
            out = ops.mul(out, ops.indexing.select(weight, 0, 0))
        if bias is not None:
            out = ops.add(out, ops.indexing.select(bias, 0, 0))
        return out
    if x.ndim < 2:                      # input.sizes()[1]
        top = max(x.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-top}, {top - 1}], but got 1)")
    c = x.shape[1]
    for v, name in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):
        if v is not None:
            _check_features(name, c, v._a.size)
        elif not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    _float_input(x, "batch_norm")
    _check_param_types(x, (weight, bias, running_mean, running_var))
    for v in (running_mean, running_var):      # the CPU kernel reads the running statistics as 1-d arrays
        if v is not None and v._a.ndim != 1:
            raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {v._a.ndim}")
    w = None if weight is None else weight._a.reshape(-1).astype(x.dtype)
    b = None if bias is None else bias._a.reshape(-1).astype(x.dtype)
    # (bfloat16 in its strided form is not modelled: the general kernel's path)
    if is_meta(x):                      # the shapes alone (the running statistics, meta too, hold no values)
        pdt = next((p._a.dtype for p in (weight, bias, running_mean, running_var) if p is not None),
                   x.dtype) if x.dtype.char in "eE" or x.dtype.kind == "V" else x.dtype
        out = _meta(x.shape, x.dtype)
        save_mean = Tensor(_meta((c,) if training else (0,), pdt))
        save_invstd = Tensor(_meta((c,) if training else (0,), pdt))
    elif x.size and (x.dtype == np.float16 or x.dtype.kind == "V" and not _strided(x)):
        out, mean, invstd = batch_norm_half(x, weight, bias, running_mean, running_var, training, momentum, eps)
        save_mean, save_invstd = Tensor(mean), Tensor(invstd)
    elif x.size and _strided(x):
        out, mean, invstd = batch_norm_strided(x, w, b, running_mean, running_var, training, momentum, eps)
        save_mean, save_invstd = Tensor(mean), Tensor(invstd)
    elif training:
        mean, var_sum, n = batch_norm_stats(x) if x.size else (np.full(c, np.nan, x.dtype),) * 2 + (0,)
        invstd = _invstd_train(var_sum, n, eps)
        _update_running(running_mean, running_var, mean, var_sum, n, momentum)
        out = _affine_apply(x, mean, invstd, w, b)
        save_mean, save_invstd = Tensor(mean), Tensor(invstd)
    else:
        out = _affine_apply(x, running_mean._a.reshape(-1).astype(x.dtype),
                            _invstd_eval_forward(running_var._a.reshape(-1).astype(x.dtype), eps), w, b)
        save_mean = save_invstd = Tensor(np.zeros(0, x.dtype))
    return apply(BATCH_NORM, out.reshape(x.shape), (input, weight, bias),
                 (running_mean, running_var, save_mean, save_invstd, float(eps), bool(training))), \
        save_mean, save_invstd


def _shape_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _check_param_types(x: np.ndarray, params) -> None:
    """The dtype rules of PyTorch's CPU normalisation kernels: parameters whose first one (weight, bias, then
    running mean and variance) has another dtype than the input are a "mixed" call, which only a float16 (or bfloat16)
    input with float32 parameters may make; otherwise every parameter has the input's dtype, the kernel's own check."""
    kinds = [p._a for p in params if p is not None]
    if not kinds:
        return
    if kinds[0].dtype != x.dtype:
        if any(k.dtype != np.float32 for k in kinds):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.dtype.char not in "eE":
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for k in kinds:
        if k.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(k)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05) -> Tensor:
    """F.layer_norm over the trailing `normalized_shape` dims: one NativeLayerNormBackward0 node."""
    return _layer_norm(input, normalized_shape, weight, bias, eps)[0]


def native_layer_norm(*args, **kwargs) -> tuple:
    """torch.native_layer_norm(input, normalized_shape, weight, bias, eps): (output, mean, rstd), the statistics
    shaped to broadcast over the normalized dims (the node's own saved results; they have no grad_fn)."""
    v = signatures.parsed("torch.native_layer_norm", args, kwargs, {})
    if v["normalized_shape"].__class__ is int:       # (its list has no size: one int does not stand for it)
        where = "" if "normalized_shape" in kwargs else " (position 2)"
        raise TypeError(f"native_layer_norm(): argument 'normalized_shape'{where} must be tuple of ints, not int")
    return _layer_norm(v["input"], v["normalized_shape"], v["weight"], v["bias"], v["eps"])


def _layer_norm(input, normalized_shape, weight, bias, eps) -> tuple:
    if input.__class__ is not Tensor:
        raise TypeError(f"layer_norm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if isinstance(normalized_shape, (tuple, list, Size)) and normalized_shape:     # the parser's unpacking words
        normalized_shape = ops.shape.int_list((normalized_shape,), "layer_norm", "normalized_shape", 2)
    if not isinstance(normalized_shape, (tuple, list, Size)) or not all(isinstance(d, int) for d in normalized_shape):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    normalized_shape = tuple(normalized_shape)
    _param(weight, "layer_norm", "weight", 3)
    _param(bias, "layer_norm", "bias", 4)
    x = input._a
    k = len(normalized_shape)
    if k < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for v, name in ((weight, "weight"), (bias, "bias")):
        if v is not None and tuple(v._a.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shape_list(v._a.shape)} and normalized_shape = {_shape_list(normalized_shape)}")
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={_shape_list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(d) for d in normalized_shape)}], but got input of size"
                           f"{_shape_list(x.shape)}")
    _float_input(x, "LayerNormKernelImpl")
    _check_param_types(x, (weight, bias))
    lead = x.shape[:x.ndim - k]
    if is_meta(x):                      # the shapes alone: no rows to make contiguous, no moments to take
        pdt = next((v._a.dtype for v in (weight, bias) if v is not None), x.dtype) if x.dtype.char in "eE" else x.dtype
        y, mean, rstd = _meta(x.shape, x.dtype), _meta((math.prod(lead),), pdt), _meta((math.prod(lead),), pdt)
    elif x.dtype.char in "eE":            # float16 (bfloat16) in float, the statistics in the parameters' dtype
        pdt = next((v._a.dtype for v in (weight, bias) if v is not None), x.dtype)
        x2 = np.ascontiguousarray(x).reshape(math.prod(lead), math.prod(normalized_shape))
        y, mean, rstd = layer_norm_half(x2, None if weight is None else weight._a.reshape(-1),
                                        None if bias is None else bias._a.reshape(-1), eps, pdt)
    else:
        w = None if weight is None else weight._a.reshape(-1).astype(x.dtype)
        b = None if bias is None else bias._a.reshape(-1).astype(x.dtype)
        x2 = np.ascontiguousarray(x).reshape(math.prod(lead), math.prod(normalized_shape))
        y, mean, rstd = layer_norm_arrays(x2, w, b, eps)
    stat_shape = lead + (1,) * k
    mean, rstd = Tensor(mean.reshape(stat_shape)), Tensor(rstd.reshape(stat_shape))
    return apply(LAYER_NORM, y.reshape(x.shape), (input, weight, bias), (normalized_shape, mean, rstd, float(eps))), \
        mean, rstd


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05) -> Tensor:
    """F.group_norm: one NativeGroupNormBackward0 node."""
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    x = input._a
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    n, c = x.shape[0], x.shape[1]
    shape = [n * c // num_groups, num_groups] + list(x.shape[2:])     # (Python's errors: 0, a str, None)
    _verify_batch_size(shape, _shape_list(shape))
    if num_groups.__class__ is not int:     # then torch.group_norm's parser
        raise TypeError(f"group_norm(): argument 'num_groups' (position 2) must be int, not {type(num_groups).__name__}")
    _param(weight, "group_norm", "weight", 3)
    _param(bias, "group_norm", "bias", 4)
    int64_arg(num_groups)
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_shape_list(x.shape)} and num_groups={num_groups}")
    for v, name in ((weight, "weight"), (bias, "bias")):
        if v is not None and (v._a.ndim != 1 or v._a.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_shape_list(v._a.shape)} and input of shape "
                               f"{_shape_list(x.shape)}")
    _float_input(x, "GroupNormKernelImpl")
    _check_param_types(x, (weight, bias))
    keep = x.dtype == np.float16        # float16 reads float32 parameters as they are
    w = None if weight is None else (weight._a if keep else weight._a.astype(x.dtype))
    b = None if bias is None else (bias._a if keep else bias._a.astype(x.dtype))
    y, mean, rstd = group_norm_arrays(x, num_groups, w, b, eps)
    if x.ndim == 4:                     # (PyTorch's kernel writes a channels-last input's result channels-last)
        y = layout.in_inputs_format(y, x)
    hw = math.prod(x.shape[2:])
    return apply(GROUP_NORM, y, (input, weight, bias),
                 (Tensor(mean), Tensor(rstd), n, c, hw, num_groups, float(eps)))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05, spatial_check=True) -> Tensor:
    """F.instance_norm as PyTorch builds it: batch_norm over a (1, N*C, *) view, the weight and bias repeated
    per sample, the running statistics averaged back over the batch (`spatial_check`: F's own check of the
    spatial size, which torch.instance_norm has not)."""
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'size'")
    x = input._a
    if use_input_stats and spatial_check:
        size = 1
        for d in x.shape[2:]:
            size *= d
        if size == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{_size_str(x.shape)}")
    for v, name, position in ((weight, "weight", 2), (bias, "bias", 3), (running_mean, "running_mean", 4),
                              (running_var, "running_var", 5)):     # torch.instance_norm's own signature
        _param(v, "instance_norm", name, position)
    n, c = x.shape[0], x.shape[1]
    w = None if weight is None else ops.repeat(weight, n)
    b = None if bias is None else ops.repeat(bias, n)
    for stats in (running_mean, running_var):       # repeated as weight and bias are, with repeat's check
        if stats is not None and stats._a.ndim > 1:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                               "tensor")
    rm = None if running_mean is None else Tensor(np.tile(running_mean._a, n))
    rv = None if running_var is None else Tensor(np.tile(running_var._a, n))
    shaped = ops.view(ops.contiguous(input), (1, n * c) + tuple(x.shape[2:]))    # (PyTorch's own contiguous())
    out = batch_norm(shaped, rm, rv, w, b, use_input_stats, momentum, eps)
    for mine, tiled in ((running_mean, rm), (running_var, rv)):
        if mine is not None and use_input_stats:
            # running_mean.view(b, c): PyTorch's view error when the statistics do not fit the channels
            # (and mean(0) as PyTorch's kernel takes it: the sum in its order, divided by the count)
            mine._a[...] = mean_array(ops.view(tiled, (n, c))._a, (0,))
            mine._version[0] += 1
    return ops.view(out, x.shape)
