"""F.interpolate's resampling kernels (nearest, nearest-exact, linear, bilinear, bicubic, trilinear) as PyTorch's CPU
kernels compute them, with their nodes (UpsampleBilinear2DBackward0, ...) and the nodes of their backward
under create_graph (UpsampleBilinear2DBackwardBackward0, ...).

Where a value comes from (PyTorch 2.13, aten/src/ATen/native/cpu/UpSampleKernel.cpp and
UpSampleMoreKernel.cpp, checked bit for bit against the oracle):

- the scale of a dim is `1 / scale_factor` (a double rounded to the op's float type) when a positive scale
  was given, else `in / out` in that type; with align_corners `(in - 1) / (out - 1)` (0 for an output of 1);
- a linear tap's source index is `scale * (i + 0.5) - 0.5` as one fused multiply-add (the kernels are
  built with FMA contraction), clamped at 0; its lower index `floor`, its weights `lambda1 = src - i0`
  (clamped to [0, 1]) and `1 - lambda1`; an output dim as long as the input copies it;
- linear forward, generic kernel (one dim after another, innermost first): `fma(t0, w0, t1 * w1)`;
  bilinear's and nearest's channels-last kernel, which PyTorch also takes for contiguous input when the
  output's height plus width is at most 128 (or the input is channels-last with more than 3 channels):
  corner weights `h * w` rounded, then for the channels a vector holds
  `fma(a, w00, fma(b, w01, fma(d, w11, c * w10)))` and for the rest
  `fma(d, w11, fma(c, w10, fma(a, w00, b * w01)))` (float16, computed in float: the innermost pair and
  the tail's first pair fused the other way round);
- nearest: `floor(i * scale)` (the generic kernel's index in the op's float type, the channels-last
  kernel's and the backward's in float with exact shortcuts for equal and doubled sizes); nearest-exact
  `floor(src + 0.5)` of the linear source index (generic) or `floor((i + 0.5) * scale)` (the others);
- backward: each input element sums its gradients in the output's raster order, `acc += w * g` as a fused
  multiply-add with `w` the corners' weight product (float16 accumulates in float and rounds once).
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget
from gradcli.engine.fma import fma
from gradcli.engine.recording import Op, apply, check_list_int, is_meta, type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_LINEAR_NAMES = {1: "linear", 2: "bilinear", 3: "trilinear"}
_INTERPOLATING = ("linear", "cubic")       # the kinds that take align_corners (and save it)
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_DIM_LETTERS = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}


def _opmath(dtype: np.dtype) -> np.dtype:
    return _F64 if dtype == _F64 else _F32


# ------------------------------------------------------------------------------------------ index math

def _scale_value(T: np.dtype, scale, isz: int, osz: int):
    """compute_scales_value: 1 / scale (a double, rounded to T) when a positive scale was given, else in / out."""
    if scale is not None and scale > 0:
        return T.type(1.0 / scale)
    return T.type(isz) / T.type(osz)


def _area_scale(T: np.dtype, isz: int, osz: int, align: bool, scale):
    """area_pixel_compute_scale: with align_corners (in - 1) / (out - 1), 0 for an output of one; else
    compute_scales_value."""
    if align:
        return T.type(isz - 1) / T.type(osz - 1) if osz > 1 else T.type(0)
    return _scale_value(T, scale, isz, osz)


def _source_index(T: np.dtype, scale, osz: int, align: bool) -> np.ndarray:
    """area_pixel_compute_source_index for every output index (linear taps: clamped at 0)."""
    i = np.arange(osz, dtype=T)
    if align:
        return scale * i
    src = fma(np.full(osz, scale, T), i + T.type(0.5), np.full(osz, -0.5, T))
    return np.maximum(src, T.type(0))


def _taps(T: np.dtype, isz: int, osz: int, align: bool, scale):
    """compute_source_index_and_lambda for every output index: (i0, i1, lambda0, lambda1)."""
    if osz == isz:
        i = np.arange(osz)
        return i, i, np.ones(osz, T), np.zeros(osz, T)
    real = _source_index(T, _area_scale(T, isz, osz, align, scale), osz, align)
    i0 = np.minimum(np.floor(real.astype(_F32)).astype(np.int64), isz - 1)
    lambda1 = np.minimum(np.maximum(real - i0.astype(T), T.type(0)), T.type(1))
    i1 = i0 + (i0 < isz - 1)
    return i0, i1, T.type(1) - lambda1, lambda1


def _nearest_idx(isz: int, osz: int, scale, exact: bool) -> np.ndarray:
    """nearest_idx / nearest_exact_idx: the channels-last kernel's and the backward's indices (float scale)."""
    o = np.arange(osz)
    if not exact:
        if osz == isz:
            return o
        if osz == 2 * isz:
            return o >> 1
        s = _scale_value(_F32, scale, isz, osz)
        return np.minimum(np.floor(o.astype(_F32) * s).astype(np.int64), isz - 1)
    s = _scale_value(_F32, scale, isz, osz)
    # (i + 0.5) is a double times the float scale, handed to floorf as a float
    return np.minimum(np.floor(((o + 0.5) * np.float64(s)).astype(_F32)).astype(np.int64), isz - 1)


def _nearest_generic(T: np.dtype, isz: int, osz: int, scale, exact: bool) -> np.ndarray:
    """HelperInterpNearest(Exact).compute_indices_weights: the generic kernel's indices, in T."""
    s = _area_scale(T, isz, osz, False, scale)
    if not exact:
        real = s * np.arange(osz, dtype=T)
        return np.minimum(np.floor(real.astype(_F32)).astype(np.int64), isz - 1)
    real = _source_index(T, s, osz, False)
    return np.minimum(np.floor((real.astype(_F64) + 0.5).astype(_F32)).astype(np.int64), isz - 1)


# ------------------------------------------------------------------------------------------ kernels

def is_channels_last(x: np.ndarray) -> bool:
    """Whether a 4-d or 5-d array is laid out channels-last (C the innermost dim), as PyTorch's
    is_contiguous(ChannelsLast/ChannelsLast3d) checks it: dims of size 1 may have any stride."""
    if x.ndim not in (4, 5):
        return False
    order = (1,) + tuple(range(x.ndim - 1, 1, -1)) + (0,)      # C, W, H, (D,) N: innermost first
    expected = x.itemsize
    for dim in order:
        if x.shape[dim] != 1:
            if x.strides[dim] != expected:
                return False
            expected *= x.shape[dim]
    return True


def _channels_last_path(x: np.ndarray, osz: tuple, channels_last: bool) -> bool:
    """_use_vectorized_kernel_cond_2d/_3d (and bilinear's one-thread RGB case, for which see _linear)."""
    if x.ndim == 4:
        return (channels_last and x.shape[1] > 3) or osz[0] + osz[1] <= 128
    if x.ndim == 5:
        return channels_last and x.shape[1] > 3
    return False


def nearest_array(x: np.ndarray, osz: tuple, scales: tuple, exact: bool, channels_last: bool = False) -> np.ndarray:
    """upsample_nearest{1,2,3}d / _upsample_nearest_exact{1,2,3}d."""
    nd = len(osz)
    spatial = x.shape[2:]
    if _channels_last_path(x, osz, channels_last):
        index = [_nearest_idx(spatial[d], osz[d], scales[d], exact) for d in range(nd)]
    else:
        T = _opmath(x.dtype) if x.dtype.kind in "fV" else _F32
        index = [_nearest_generic(T, spatial[d], osz[d], scales[d], exact) for d in range(nd)]
    out = x
    for d in range(nd):
        out = np.take(out, index[d], axis=2 + d)
    return np.ascontiguousarray(out)


def _combine(t0, w0, t1, w1):
    """`t0 * w0 + t1 * w1` as the generic kernel's compiled code rounds it: fma(t0, w0, t1 * w1)."""
    return fma(t0, w0, t1 * w1)


def linear_array(x: np.ndarray, osz: tuple, align: bool, scales: tuple, channels_last: bool = False) -> np.ndarray:
    """upsample_linear1d / upsample_bilinear2d / upsample_trilinear3d."""
    nd = len(osz)
    T = _opmath(x.dtype)
    spatial = x.shape[2:]
    taps = [_taps(T, spatial[d], osz[d], align, scales[d]) for d in range(nd)]
    xs = x.astype(T, copy=False)
    rgb_one_thread = nd == 2 and STATE.threads == 1 and x.shape[1] == 3
    if nd == 2 and (_channels_last_path(x, osz, channels_last) or rgb_one_thread):
        out = _bilinear_channels_last(xs, taps, x.dtype.char in "eE")
    elif nd == 3 and _channels_last_path(x, osz, channels_last):
        out = _trilinear_channels_last(xs, taps, x.dtype.char in "eE")
    else:
        if x.dtype.char in "eE":  # the generic kernel keeps the weights in the op's own type: lambda1 rounded,
            taps = [_half_taps(*tap, x.dtype) for tap in taps]    # then 1 - lambda1 in Half's arithmetic
        out = xs
        for d in reversed(range(nd)):          # innermost dim first: Interpolate's recursion
            i0, i1, l0, l1 = taps[d]
            view = (1,) * (nd - 1 - d)
            w0 = l0.reshape((-1,) + view)
            w1 = l1.reshape((-1,) + view)
            out = _combine(np.take(out, i0, axis=2 + d), w0, np.take(out, i1, axis=2 + d), w1)
    return np.ascontiguousarray(out.astype(x.dtype, copy=False))


def _half_taps(i0, i1, l0, l1, half):
    l1 = l1.astype(half)
    l0 = (_F32.type(1) - l1.astype(_F32)).astype(half)
    return i0, i1, l0.astype(_F32), l1.astype(_F32)


def _vector_split(channels: int, dtype: np.dtype) -> int:
    """How many channels the channels-last kernels take in whole vectors (AVX2: 32 bytes)."""
    lanes = 32 // dtype.itemsize
    return channels - channels % lanes


def _bilinear_channels_last(x: np.ndarray, taps, half: bool = False) -> np.ndarray:
    """`x` in the op's float type; `half`: the input was float16 (its vectors hold 16 channels)."""
    (ih0, ih1, h0, h1), (iw0, iw1, w0, w1) = taps
    w00, w01 = h0[:, None] * w0[None, :], h0[:, None] * w1[None, :]
    w10, w11 = h1[:, None] * w0[None, :], h1[:, None] * w1[None, :]
    a = x[:, :, ih0[:, None], iw0[None, :]]
    b = x[:, :, ih0[:, None], iw1[None, :]]
    c = x[:, :, ih1[:, None], iw0[None, :]]
    d = x[:, :, ih1[:, None], iw1[None, :]]
    split = _vector_split(x.shape[1], _F16 if half else x.dtype)
    out = np.empty(a.shape, x.dtype)
    if split:
        s = slice(0, split)
        inner = fma(c[:, s], w10, d[:, s] * w11) if half else fma(d[:, s], w11, c[:, s] * w10)
        out[:, s] = fma(a[:, s], w00, fma(b[:, s], w01, inner))
    if split < x.shape[1]:
        s = slice(split, None)
        if half:            # Half * float is a call returning float: the compiler fuses the other product
            out[:, s] = fma(d[:, s], w11, fma(c[:, s], w10, fma(b[:, s], w01, a[:, s] * w00)))
        else:
            out[:, s] = fma(d[:, s], w11, fma(c[:, s], w10, fma(a[:, s], w00, b[:, s] * w01)))
    return out


def _trilinear_channels_last(x: np.ndarray, taps, half: bool = False) -> np.ndarray:
    """The 3-d channels-last kernel: eight corner weights `(d * h) * w`; the vector body nests the sum from
    the last corner in, the tail sums from the first, each product fused as in the 2-d kernel."""
    (id0, id1, d0, d1), (ih0, ih1, h0, h1), (iw0, iw1, w0, w1) = taps
    corners = []
    for di, dl in ((id0, d0), (id1, d1)):
        for hi, hl in ((ih0, h0), (ih1, h1)):
            for wi, wl in ((iw0, w0), (iw1, w1)):
                weight = (dl[:, None, None] * hl[None, :, None]) * wl[None, None, :]
                corners.append((x[:, :, di[:, None, None], hi[None, :, None], wi[None, None, :]], weight))
    split = _vector_split(x.shape[1], _F16 if half else x.dtype)
    out = np.empty(corners[0][0].shape, x.dtype)
    if split:
        s = slice(0, split)
        (v6, w6), (v7, w7) = corners[6], corners[7]
        acc = fma(v6[:, s], w6, v7[:, s] * w7) if half else fma(v7[:, s], w7, v6[:, s] * w6)
        for v, w in reversed(corners[:6]):
            acc = fma(v[:, s], w, acc)
        out[:, s] = acc
    if split < x.shape[1]:
        s = slice(split, None)
        (v0, w0_), (v1, w1_) = corners[0], corners[1]
        acc = fma(v1[:, s], w1_, v0[:, s] * w0_) if half else fma(v0[:, s], w0_, v1[:, s] * w1_)
        for v, w in corners[2:]:
            acc = fma(v[:, s], w, acc)
        out[:, s] = acc
    return out


def _accumulate(planes: int, in_shape: tuple, targets: np.ndarray, sources: np.ndarray, weights, g: np.ndarray,
                T: np.dtype) -> np.ndarray:
    """The backward kernels' loop: for each output position in raster order and each of its taps,
    `acc[target] += weight * g[source]` (fused; or, for a pair of weights, `(g * wy) * wx` unfused), over
    all planes at once. Updates go in rounds of distinct
    targets, each round the next update of every target in the kernel's order."""
    size = int(np.prod(in_shape, dtype=np.int64))
    acc = np.zeros((planes, size), T)
    g = g.reshape(planes, -1).astype(T, copy=False)
    if targets.size == 0:
        return acc
    order = np.argsort(targets, kind="stable")
    sorted_targets = targets[order]
    starts = np.flatnonzero(np.r_[True, sorted_targets[1:] != sorted_targets[:-1]])
    rank = np.empty(targets.size, np.int64)
    rank[order] = np.arange(targets.size) - np.repeat(starts, np.diff(np.r_[starts, targets.size]))
    for r in range(int(rank.max()) + 1):
        pick = rank == r
        t, s = targets[pick], sources[pick]
        if weights is None:
            acc[:, t] += g[:, s]
        elif weights.__class__ is tuple:        # bicubic's backward: (g * wy) * wx, added without fusing
            acc[:, t] += (g[:, s] * weights[0][pick]) * weights[1][pick]
        else:
            acc[:, t] = fma(weights[pick].astype(T), g[:, s], acc[:, t])
    return acc


def nearest_backward_array(g: np.ndarray, in_shape: tuple, osz: tuple, scales: tuple, exact: bool) -> np.ndarray:
    nd = len(osz)
    spatial = tuple(in_shape[2:])
    index = [_nearest_idx(spatial[d], osz[d], scales[d], exact) for d in range(nd)]
    grids = np.meshgrid(*index, indexing="ij")
    targets = np.ravel_multi_index(tuple(grid.ravel() for grid in grids), spatial) if nd else np.zeros(0, np.int64)
    sources = np.arange(targets.size)
    T = _opmath(g.dtype)
    planes = in_shape[0] * in_shape[1]
    acc = _accumulate(planes, spatial, targets, sources, None, g, T)
    return acc.astype(g.dtype).reshape(in_shape)


def linear_backward_array(g: np.ndarray, in_shape: tuple, osz: tuple, align: bool, scales: tuple) -> np.ndarray:
    nd = len(osz)
    T = _opmath(g.dtype)
    spatial = tuple(in_shape[2:])
    taps = [_taps(T, spatial[d], osz[d], align, scales[d]) for d in range(nd)]
    # every output position's 2**nd corners, in the kernel's order (corner bits: the outer dim first)
    count = int(np.prod(osz, dtype=np.int64))
    targets = np.empty((count, 2 ** nd), np.int64)
    weights = np.empty((count, 2 ** nd), T)
    for corner in range(2 ** nd):
        index, weight = [], None
        for d in range(nd):
            i0, i1, l0, l1 = taps[d]
            bit = (corner >> (nd - 1 - d)) & 1
            index.append(i1 if bit else i0)
            lam = l1 if bit else l0
            shape_d = [1] * nd
            shape_d[d] = -1
            lam = lam.reshape(shape_d)
            weight = lam if weight is None else weight * lam       # ((d * h) * w), rounded at each product
        grids = np.meshgrid(*index, indexing="ij")
        targets[:, corner] = np.ravel_multi_index(tuple(grid.ravel() for grid in grids), spatial)
        weights[:, corner] = np.broadcast_to(weight, tuple(osz)).ravel()
    sources = np.repeat(np.arange(count), 2 ** nd)
    planes = in_shape[0] * in_shape[1]
    acc = _accumulate(planes, spatial, targets.ravel(), sources, weights.ravel(), g, T)
    return acc.astype(g.dtype).reshape(in_shape)


# ------------------------------------------------------------------------------------------ bicubic

_A = -0.75          # the cubic convolution's constant (OpenCV's, as PyTorch's kernels use it)


def _ma(a, b, c, fused: bool):
    """a * b + c, fused (one rounding) or not, as each kernel's compiled code computes it."""
    return fma(a, b, c) if fused else a * b + c


def _cubic_weights(t: np.ndarray, fused: bool) -> list:
    """get_cubic_upsample_coefficients for each lambda `t`: the four weights. The forward's kernel (built
    with FMA contraction) fuses the first multiply-add of each polynomial and the second of the outer one,
    not the last; the backward's (built without) fuses none."""
    T = t.dtype.type
    full = lambda v: np.full(t.shape, T(v))         # noqa: E731

    def conv1(x):           # ((A + 2) * x - (A + 3)) * x * x + 1
        return _ma(full(_A + 2), x, full(-(_A + 3)), fused) * x * x + T(1)

    def conv2(x):           # ((A * x - 5A) * x + 8A) * x - 4A
        return _ma(_ma(full(_A), x, full(-5 * _A), fused), x, full(8 * _A), fused) * x - T(4 * _A)

    x2 = T(1) - t
    return [conv2(t + T(1)), conv1(t), conv1(x2), conv2(x2 + T(1))]


def _cubic_taps(T: np.dtype, isz: int, osz: int, align: bool, scale, fused: bool):
    """The source rows of each output index (4, clamped into the input) and their weights."""
    s = _area_scale(T, isz, osz, align, scale)
    i = np.arange(osz, dtype=T)
    if align:
        real = s * i
    else:                   # no clamp at 0: a cubic reads the row before the first
        real = _ma(np.full(osz, s, T), i + T.type(0.5), np.full(osz, -0.5, T), fused)
    index = np.minimum(np.floor(real.astype(_F32)).astype(np.int64), isz - 1)
    lam = np.minimum(np.maximum(real - index.astype(T), T.type(0)), T.type(1))
    rows = [np.clip(index + j - 1, 0, isz - 1) for j in range(4)]
    return rows, _cubic_weights(lam, fused)


def bicubic_array(x: np.ndarray, osz: tuple, align: bool, scales: tuple) -> np.ndarray:
    """upsample_bicubic2d: the generic kernel, width first then height, each level
    fma(t3, w3, fma(t2, w2, fma(t0, w0, t1 * w1))); float16 keeps the weights in Half."""
    T = _opmath(x.dtype)
    out = x.astype(T, copy=False)
    for d in (1, 0):
        rows, weights = _cubic_taps(T, x.shape[2 + d], osz[d], align, scales[d], True)
        if x.dtype.char in "eE":
            weights = [w.astype(x.dtype).astype(_F32) for w in weights]
        view = (-1,) + (1,) * (1 - d)
        w = [wj.reshape(view) for wj in weights]
        t = [np.take(out, r, axis=2 + d) for r in rows]
        level = fma(t[0], w[0], t[1] * w[1])
        level = fma(t[2], w[2], level)
        out = fma(t[3], w[3], level)
    return np.ascontiguousarray(out.astype(x.dtype, copy=False))


def bicubic_backward_array(g: np.ndarray, in_shape: tuple, osz: tuple, align: bool, scales: tuple) -> np.ndarray:
    """upsample_bicubic2d_backward (a kernel built without FMA): for each output in raster order, for each
    of the 4 columns and, inside, the 4 rows, acc += (g * wy) * wx, in float for float16."""
    T = _opmath(g.dtype)
    H, W = in_shape[2:]
    ry, wy = _cubic_taps(T, H, osz[0], align, scales[0], False)
    rx, wx = _cubic_taps(T, W, osz[1], align, scales[1], False)
    count = osz[0] * osz[1]
    targets = np.empty((count, 16), np.int64)
    weight_y = np.empty((count, 16), T)
    weight_x = np.empty((count, 16), T)
    k = 0
    for ii in range(4):
        for jj in range(4):
            targets[:, k] = (ry[jj][:, None] * W + rx[ii][None, :]).ravel()
            weight_y[:, k] = np.broadcast_to(wy[jj][:, None], tuple(osz)).ravel()
            weight_x[:, k] = np.broadcast_to(wx[ii][None, :], tuple(osz)).ravel()
            k += 1
    sources = np.repeat(np.arange(count), 16)
    planes = in_shape[0] * in_shape[1]
    acc = _accumulate(planes, (H, W), targets.ravel(), sources, (weight_y.ravel(), weight_x.ravel()), g, T)
    return acc.astype(g.dtype).reshape(in_shape)


# --------------------------------------------------------------------------------------------- rows

def _explicit(linear: bool, nd: int, body):
    """`body(F, g, align_corners, output_size, scales, shape)` as a formula taking the row's saved names one
    by one, as the engine hands them (recording.Op: one parameter per saved name)."""
    if linear:
        if nd == 1:
            return lambda F, g, align_corners, output_size, scales, shape: \
                body(F, g, align_corners, output_size, (scales,), shape)
        if nd == 2:
            return lambda F, g, align_corners, output_size, scales_h, scales_w, shape: \
                body(F, g, align_corners, output_size, (scales_h, scales_w), shape)
        return lambda F, g, align_corners, output_size, scales_d, scales_h, scales_w, shape: \
            body(F, g, align_corners, output_size, (scales_d, scales_h, scales_w), shape)
    if nd == 1:
        return lambda F, g, output_size, scales, shape: body(F, g, False, output_size, (scales,), shape)
    if nd == 2:
        return lambda F, g, output_size, scales_h, scales_w, shape: \
            body(F, g, False, output_size, (scales_h, scales_w), shape)
    return lambda F, g, output_size, scales_d, scales_h, scales_w, shape: \
        body(F, g, False, output_size, (scales_d, scales_h, scales_w), shape)


def _forward_formula(kind: str, nd: int):
    """The backward row's formula: the forward resampling of the incoming gradient (its derivative)."""
    def formula(F, gg, align, osz, scales, shape_):
        if F.tensors:
            return _record(gg, kind, nd, osz, scales, align)
        return _forward_array(gg, kind, osz, scales, align)
    return _explicit(kind in _INTERPOLATING, nd, formula)


def _backward_formula(kind: str, nd: int):
    def formula(F, g, align, osz, scales, in_shape):
        if F.tensors:
            return _record_backward(g, kind, nd, osz, scales, align, in_shape)
        return _backward_array(g, kind, osz, scales, align, in_shape)
    return _explicit(kind in _INTERPOLATING, nd, formula)


def _unpack(kind: str, nd: int, saved: tuple):
    if kind in _INTERPOLATING:
        return saved[0], saved[1], tuple(saved[2:2 + nd])
    return False, saved[0], tuple(saved[1:1 + nd])


def _forward_array(x, kind, osz, scales, align, channels_last=False):
    if is_meta(x):                  # a meta input: the result's shape, no interpolation
        from gradcli.engine.meta import meta_full
        return meta_full(x.shape[:x.ndim - len(osz)] + tuple(osz), 0, x.dtype)
    if kind == "cubic":
        return bicubic_array(x, osz, align, scales)
    if kind == "linear":
        return linear_array(x, osz, align, scales, channels_last)
    return nearest_array(x, osz, scales, kind == "nearest-exact", channels_last)


def _backward_array(g, kind, osz, scales, align, in_shape):
    if is_meta(g):
        from gradcli.engine.meta import meta_full
        return meta_full(tuple(in_shape), 0, g.dtype)
    if kind == "cubic":
        return bicubic_backward_array(g, tuple(in_shape), osz, align, scales)
    if kind == "linear":
        return linear_backward_array(g, tuple(in_shape), osz, align, scales)
    return nearest_backward_array(g, tuple(in_shape), osz, scales, kind == "nearest-exact")


def _forward_jvp(kind: str, nd: int):
    def jvp(F, ts, xs, result, *saved):
        if ts[0] is None:
            return None
        align, osz, scales = _unpack(kind, nd, saved[:-1])
        return _record(ts[0], kind, nd, osz, scales, align)
    return jvp


def _backward_jvp(kind: str, nd: int):
    def jvp(F, ts, xs, result, *saved):
        if ts[0] is None:
            return None
        align, osz, scales = _unpack(kind, nd, saved[:-1])
        return _record_backward(ts[0], kind, nd, osz, scales, align, saved[-1])
    return jvp


def _node_stem(kind: str, nd: int) -> str:
    if kind == "cubic":
        return "UpsampleBicubic2D"
    if kind == "linear":
        return {1: "UpsampleLinear1D", 2: "UpsampleBilinear2D", 3: "UpsampleTrilinear3D"}[nd]
    return f"UpsampleNearest{'Exact' if kind == 'nearest-exact' else ''}{nd}D"


def _rows(kind: str, nd: int):
    head = ("align_corners", "output_size") if kind in _INTERPOLATING else ("output_size",)
    saves = head + _SCALE_NAMES[nd] + ("shape",)
    stem = _node_stem(kind, nd)
    forward = Op(stem + "Backward0", None, saves, (_backward_formula(kind, nd),), jvp=_forward_jvp(kind, nd))
    backward = Op(stem + "BackwardBackward0", None, saves, (_forward_formula(kind, nd),), inputs=("grad_output",),
                  jvp=_backward_jvp(kind, nd))
    return forward, backward


# fmt: off
UPSAMPLE_NEAREST1D,       UPSAMPLE_NEAREST1D_BACKWARD       = _rows("nearest", 1)
UPSAMPLE_NEAREST2D,       UPSAMPLE_NEAREST2D_BACKWARD       = _rows("nearest", 2)
UPSAMPLE_NEAREST3D,       UPSAMPLE_NEAREST3D_BACKWARD       = _rows("nearest", 3)
UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD = _rows("nearest-exact", 1)
UPSAMPLE_NEAREST_EXACT2D, UPSAMPLE_NEAREST_EXACT2D_BACKWARD = _rows("nearest-exact", 2)
UPSAMPLE_NEAREST_EXACT3D, UPSAMPLE_NEAREST_EXACT3D_BACKWARD = _rows("nearest-exact", 3)
UPSAMPLE_LINEAR1D,        UPSAMPLE_LINEAR1D_BACKWARD        = _rows("linear", 1)
UPSAMPLE_BILINEAR2D,      UPSAMPLE_BILINEAR2D_BACKWARD      = _rows("linear", 2)
UPSAMPLE_TRILINEAR3D,     UPSAMPLE_TRILINEAR3D_BACKWARD     = _rows("linear", 3)
UPSAMPLE_BICUBIC2D,       UPSAMPLE_BICUBIC2D_BACKWARD       = _rows("cubic", 2)
# fmt: on
_ROWS = {(kind, nd): (globals()[f"UPSAMPLE_{stem}{nd}D"], globals()[f"UPSAMPLE_{stem}{nd}D_BACKWARD"])
         for kind, stem in (("nearest", "NEAREST"), ("nearest-exact", "NEAREST_EXACT")) for nd in (1, 2, 3)}
_ROWS.update({("linear", 1): (UPSAMPLE_LINEAR1D, UPSAMPLE_LINEAR1D_BACKWARD),
              ("linear", 2): (UPSAMPLE_BILINEAR2D, UPSAMPLE_BILINEAR2D_BACKWARD),
              ("linear", 3): (UPSAMPLE_TRILINEAR3D, UPSAMPLE_TRILINEAR3D_BACKWARD),
              ("cubic", 2): (UPSAMPLE_BICUBIC2D, UPSAMPLE_BICUBIC2D_BACKWARD)})


def _saved(kind: str, osz: tuple, scales: tuple, align: bool, in_shape: tuple) -> tuple:
    head = (bool(align), tuple(osz)) if kind in _INTERPOLATING else (tuple(osz),)
    return head + tuple(scales) + (tuple(in_shape),)


def _record(a: Tensor, kind: str, nd: int, osz: tuple, scales: tuple, align: bool) -> Tensor:
    """The forward op on `a` (already checked), recorded with its row."""
    x = a._a
    budget.check_tensor(tuple(x.shape[:2]) + tuple(osz), x.dtype.itemsize)      # the result, as PyTorch allocates it
    channels_last = is_channels_last(x)
    out = _forward_array(x, kind, tuple(osz), tuple(scales), align, channels_last)
    if channels_last and not x.flags.c_contiguous:      # the result takes the input's suggested memory format
        out = np.moveaxis(np.ascontiguousarray(np.moveaxis(out, 1, -1)), -1, 1)
    return apply(_ROWS[kind, nd][0], out, (a,), _saved(kind, osz, scales, align, x.shape))


def _record_backward(g: Tensor, kind: str, nd: int, osz: tuple, scales: tuple, align: bool, in_shape) -> Tensor:
    out = _backward_array(g._a, kind, tuple(osz), tuple(scales), align, tuple(in_shape))
    return apply(_ROWS[kind, nd][1], out, (g,), _saved(kind, osz, scales, align, in_shape))


# ------------------------------------------------------------------------------------ F.interpolate

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _is_integer(value) -> bool:
    """F._is_integer: an int, or a tensor of an integer (or bool) dtype."""
    if isinstance(value, int):
        return True
    return value.__class__ is Tensor and value._a.dtype.kind not in "fcV"


def _as_int(value) -> int:
    return int(value._a) if value.__class__ is Tensor else int(value)


def _sizes_text(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """torch.nn.functional.interpolate: F's Python checks, then the kernel of the mode and dimension."""
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    x = input._a
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = x.ndim - 2
    spatial = list(x.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            _check_length(size, dim, spatial, "output", "output size of", "output size", "o")
            if not all(_is_integer(v) for v in size):
                kinds = ", ".join(f"<class '{_class_path(v)}'>" for v in size)
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types [{kinds}]")
            output_size = [_as_int(v) for v in size]
        else:
            output_size = [size] * dim
            if not _is_integer(size):
                raise _overload_error(mode, dim, output_size, None)
            output_size = [_as_int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            _check_length(scale_factor, dim, spatial, "scale_factor", "scale_factor of shape", "scale_factor", "s")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor] * dim
        if not all(isinstance(v, (int, float)) for v in scale_factors):
            raise _overload_error(mode, dim, None, scale_factors)
        scale_factors = [float(v) for v in scale_factors]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(spatial[i] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    kind = {"nearest": "nearest", "nearest-exact": "nearest-exact"}.get(mode)
    if kind is not None and 1 <= dim <= 3:
        return _upsample(input, kind, dim, output_size, scale_factors, False)
    if mode == "area" and 1 <= dim <= 3:
        from gradcli.engine.ops import pool
        if dim == 1:
            return pool.adaptive_avg_pool1d(input, output_size)
        if dim == 2:
            return pool.adaptive_avg_pool2d(input, output_size)
        return pool.adaptive_avg_pool3d(input, output_size)
    if mode in _LINEAR_NAMES.values() and _LINEAR_NAMES.get(dim) == mode:
        if antialias:
            raise NotImplementedError("gradcli does not implement torch.nn.functional.interpolate with antialias=True")
        return _upsample(input, "linear", dim, output_size, scale_factors, bool(align_corners))
    if mode == "bicubic" and dim == 2:
        if antialias:
            raise NotImplementedError("gradcli does not implement torch.nn.functional.interpolate with antialias=True")
        return _upsample(input, "cubic", dim, output_size, scale_factors, bool(align_corners))
    if mode == "lanczos" and dim == 2:
        raise NotImplementedError("gradcli does not implement torch.nn.functional.interpolate with mode='lanczos'")
    wanted = {"linear": 3, "bilinear": 4, "trilinear": 5}.get(mode)
    if wanted is not None and x.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {wanted}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the modes: "
                              f"{_MODES} (got {mode})")


def _check_length(values, dim: int, spatial: list, what: str, given: str, wanted: str, letter: str) -> None:
    """F's check that a size or scale factor sequence names each spatial dim once."""
    if len(values) != dim:
        raise ValueError(f"Input and {what} must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {spatial} and {given} {values!r}. Please provide input tensor in "
                         f"(N, C, d1, d2, ...,dK) format and {wanted} in ({letter}1, {letter}2, ...,{letter}K) format.")


def _class_path(value) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _kernel_name(mode: str, dim: int) -> str:
    if mode == "nearest-exact":
        return f"_upsample_nearest_exact{dim}d"
    if mode in ("nearest", "area"):
        return f"upsample_nearest{dim}d"
    return {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
            "trilinear": "upsample_trilinear3d"}.get(mode, f"upsample_{mode}{dim}d")


def _type_list(values) -> str:
    """How PyTorch's parser names a sequence argument's types: `list of [Tensor, float]`, `tuple of (...)`."""
    names = ", ".join(type(v).__name__ for v in values)
    return f"tuple of ({names})" if values.__class__ is tuple else f"list of [{names}]"


def _overload_error(mode: str, dim: int, size, scales) -> TypeError:
    """The parser's message when the size or the scale factors match none of the kernel's overloads."""
    linear = mode in _LINEAR_NAMES.values() or mode == "bicubic"
    align = "bool align_corners, " if linear else ""
    got_size = type(size).__name__ if size is not None else "NoneType"
    got_scales = type(scales).__name__ if scales is not None else "NoneType"
    marked_size = f"!{_type_list(size)}!" if size is not None else "!NoneType!"
    marked_scales = f"!{_type_list(scales)}!" if scales is not None else "!NoneType!"
    names = ", ".join(f"float {name} = None" for name in _SCALE_NAMES[dim])
    middle = "bool, " if linear else ""
    return TypeError(f"{_kernel_name(mode, dim)}() received an invalid combination of arguments - got (Tensor, "
                     f"{got_size}, {middle}{got_scales}), but expected one of:\n"
                     f" * (Tensor input, tuple of ints output_size, {align}tuple of floats scale_factors)\n"
                     "      didn't match because some of the arguments have invalid types: (Tensor, "
                     f"{marked_size}, {middle}{marked_scales})\n"
                     f" * (Tensor input, tuple of ints output_size, {align}{names}, *, Tensor out = None)\n")


def _output_size(spatial: list, output_size, scale_factors) -> tuple:
    """upsample::compute_output_size: the given size, or each input size times its scale, truncated."""
    if output_size is not None:
        return tuple(output_size)
    out = []
    for n, s in zip(spatial, scale_factors):
        value = n * s
        if not math.isfinite(value) or abs(value) >= 2.0 ** 63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        out.append(int(value))
    return tuple(out)


_KERNELS = {"nearest": "upsample_nearest{}d", "nearest-exact": "_upsample_nearest_exact{}d", "cubic": "upsample_bicubic{}d",
            "linear": {1: "upsample_linear1d", 2: "upsample_bilinear2d", 3: "upsample_trilinear3d"}}


def _upsample(a: Tensor, kind: str, nd: int, output_size, scale_factors, align: bool) -> Tensor:
    x = a._a
    spatial = list(x.shape[2:])
    if output_size is not None:         # the kernel's parser reads the sizes into 64 bits
        name = _KERNELS[kind][nd] if kind == "linear" else _KERNELS[kind].format(nd)
        for i, v in enumerate(output_size):
            check_list_int(v, name, "output_size", i + 1)
    osz = _output_size(spatial, output_size, scale_factors)
    scales = tuple(scale_factors) if scale_factors is not None else (None,) * nd
    if min(spatial + list(osz)) <= 0:
        letters = _DIM_LETTERS[nd]
        sizes_in = ", ".join(f"{l}: {n}" for l, n in zip(letters, spatial))
        sizes_out = ", ".join(f"{l}: {n}" for l, n in zip(letters, osz))
        joint = " and output " if nd == 1 else " output "
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({sizes_in}){joint}"
                           f"({sizes_out})")
    if x.shape[1] == 0:                     # (an empty batch is fine)
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with sizes "
                           f"{_sizes_text(x.shape)}")
    if x.dtype.kind not in "fV" and not (kind not in _INTERPOLATING and x.dtype == np.uint8):
        if x.dtype == np.uint8:
            mode = "bicubic" if kind == "cubic" else _LINEAR_NAMES[nd]
            raise NotImplementedError(f"gradcli does not implement torch.nn.functional.interpolate with "
                                      f"mode='{mode}' on uint8 input")
        stem = "bilinear" if kind == "linear" else "nearest"
        if kind != "cubic" and _channels_last_path(x, osz, is_channels_last(x)):   # the first kernel names itself
            name = f"upsample_{stem}{nd}d_channels_last"
        else:
            name = f"compute_indices_weights_{ {'linear': 'linear', 'cubic': 'cubic'}.get(kind, 'nearest')}"
        raise NotImplementedError(f'"{name}" not implemented for \'{type_word(x)}\'')
    return _record(a, kind, nd, osz, scales, align)


def _deprecated(name: str) -> None:
    if STATE.warn is not None:
        STATE.warn("UserWarning", f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """F.upsample: interpolate, with PyTorch's deprecation warning."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
