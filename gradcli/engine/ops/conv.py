"""Convolutions: F.conv1d/2d/3d and F.conv_transpose1d/2d/3d, their rows (ConvolutionBackward0 and, for
create_graph, ConvolutionBackwardBackward0) and the numpy kernels behind them.

Every convolution is at::convolution: one row whatever the dimensionality, transposed or not. The kernels
are im2col: a strided view of the (padded) input, shaped (N, C, *out, *kernel), copied once into a
matrix and multiplied with the weight in one matmul per call (a batch of `groups` matmuls); the input's
gradient scatters the columns back with one slice-add per kernel position. No loop visits a pixel. The
column matrix is the big allocation (input size times kernel size), so it is checked against the memory
budget before it is made.

Numerics: PyTorch's float32 convolution runs in oneDNN. Its direct forward kernels, as the oracle shows them
for 1-, 2- and 3-d convolutions with one group or one input and output channel per group, start each output
from its bias (or zero) and add one fused multiply-add per input channel and kernel position: input channels
in blocks of eight, and within a block the kernel positions in order, each over the block's channels
(`direct_array`; docs/numerics.md has the measurements). gradcli follows that order up to DIRECT_WORK
multiply-adds; past it, and for other groupings, a float32 BLAS matmul, which agrees with oneDNN bit for bit
more often than a float64 sum rounded once (64% of outputs against 39%, on random shapes). float64 is computed
in float64 (99.8% bit-equal). The differences are rounding: within a few ulps of Σ|x·w|.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine import budget
from gradcli.engine.layout import in_inputs_format
from gradcli.engine.forward import add_tangents, dropped
from gradcli.engine.ops import linalg, shape
from gradcli.engine.recording import autocast_policy, Op, apply, is_meta, wrap_int64
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# --------------------------------------------------------------------------------------------- kernels


def _padded(x: np.ndarray, padding: tuple) -> np.ndarray:
    """x with `padding` zeros on both sides of each spatial dim (x itself when there are none)."""
    if not any(padding):
        return x
    spatial = tuple(s + 2 * p for s, p in zip(x.shape[2:], padding))
    budget.check_tensor(x.shape[:2] + spatial, x.itemsize)
    out = np.zeros(x.shape[:2] + spatial, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + s) for s, p in zip(x.shape[2:], padding))] = x
    return out


def _out_sizes(spatial, kernel, stride, padding, dilation) -> tuple:
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(spatial, kernel, stride, padding, dilation))


def _columns(x: np.ndarray, kernel, stride, padding, dilation, groups: int):
    """The im2col matrix of x, shaped (groups, C/groups * K, N * L) (K kernel positions, L output
    positions), and the output's spatial sizes. Output positions run along rows, so the copy reads the
    input's rows in order."""
    n, c = x.shape[:2]
    out = _out_sizes(x.shape[2:], kernel, stride, padding, dilation)
    rows, width = c // groups * math.prod(kernel), n * math.prod(out)
    budget.check_tensor((groups, rows, width), x.itemsize)
    xp = _padded(x, padding)
    st = xp.strides
    view = as_strided(xp, (n, groups, c // groups) + out + tuple(kernel),
                      # (a stride along a dim of one output, or a dilation along a kernel of one, moves
                      # nowhere: 0, which any huge one the script gave also fits in)
                      (st[0], st[1] * (c // groups), st[1]) + tuple(a * s if o > 1 else 0 for a, s, o in zip(st[2:], stride, out))
                      + tuple(a * d if k > 1 else 0 for a, d, k in zip(st[2:], dilation, kernel)), writeable=False,
                      subok=True)
    nd = len(out)
    # (G, C/G, *kernel, N, *out): the copy reshape makes is the matrix
    order = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))
    return view.transpose(order).reshape(groups, rows, width), out


def _grad_matrix(g: np.ndarray, groups: int) -> np.ndarray:
    """An output-shaped (N, O, *out) array as (groups, O/groups, N * L)."""
    n, o = g.shape[:2]
    m = g.reshape(n, groups, o // groups, -1).transpose(1, 2, 0, 3)
    return m.reshape(groups, o // groups, -1)


# Above this many multiply-adds a float32 convolution is one BLAS matmul instead of oneDNN's order: each of
# direct_array's C/groups * K steps makes several passes over the output (about 47x the matmul's instructions).
DIRECT_WORK = 1 << 18
_ONEDNN_BLOCK = 8           # input channels per block of oneDNN's direct kernels (AVX2 and AVX-512 alike)


def direct_order(x: np.ndarray, w: np.ndarray, p) -> bool:
    """Whether gradcli sums this convolution (p: the row's parameters) in oneDNN's direct-kernel order (see the
    module docstring)."""
    stride, padding, dilation, transposed, _, groups = p
    if transposed or x.dtype != np.float32 or w.dtype != np.float32 or not (
            groups == 1 or w.shape[1] == 1 and w.shape[0] == groups):    # (a channel multiplier: other kernels)
        return False
    out = _out_sizes(x.shape[2:], w.shape[2:], stride, padding, dilation)
    return x.shape[0] * w.shape[0] * math.prod(out) * math.prod(w.shape[1:]) <= DIRECT_WORK


def direct_array(x, w, bias, stride, padding, dilation, groups):
    """A float32 convolution summed as oneDNN's direct kernels sum it: each output starts from its bias (zero
    without one), then one fused multiply-add (rounded once) per input channel and kernel position, the channels
    in blocks of eight, each block's kernel positions in order and within a position the block's channels. A
    depthwise convolution (one input and one output channel per group) has one step per kernel position. As a
    product: the im2col matrix's rows taken in that order, summed by linalg.in_order's fused steps."""
    n, o = x.shape[0], w.shape[0]
    cols, out = _columns(x, w.shape[2:], stride, padding, dilation, groups)    # (G, C/G * K, N * L)
    positions = math.prod(w.shape[2:])
    start = np.zeros((groups, o // groups, cols.shape[2]), dtype=np.float32)
    if bias is not None:
        start += bias.reshape(groups, o // groups, 1)
    weights = w.reshape(groups, o // groups, -1)
    if groups == 1:         # rows c * K + k, taken block by block of channels, then by position, then by channel
        channels = w.shape[1]
        order = [c * positions + k for first in range(0, channels, _ONEDNN_BLOCK) for k in range(positions)
                 for c in range(first, min(first + _ONEDNN_BLOCK, channels))]
        cols, weights = cols[:, order], weights[:, :, order]
    r = linalg.in_order(weights, cols, start, True)                          # (G, O/G, N*L)
    r = r.reshape((groups, o // groups, n) + out).transpose((2, 0, 1) + tuple(range(3, 3 + len(out))))
    return np.ascontiguousarray(r).reshape((n, o) + out)


def conv_array(x, w, stride, padding, dilation, groups):
    """The convolution of x (N, C, *spatial) with w (O, C/groups, *kernel): (N, O, *out)."""
    n, o = x.shape[0], w.shape[0]
    cols, out = _columns(x, w.shape[2:], stride, padding, dilation, groups)
    budget.check_tensor((n, o) + out, x.itemsize)
    r = np.matmul(w.reshape(groups, o // groups, -1), cols)              # (G, O/G, N*L)
    r = r.reshape((groups, o // groups, n) + out).transpose((2, 0, 1) + tuple(range(3, 3 + len(out))))
    return np.ascontiguousarray(r).reshape((n, o) + out)


def input_grad_array(g, w, spatial, stride, padding, dilation, groups):
    """The gradient of conv_array's result `g` (N, O, *out) for an input of spatial sizes `spatial`:
    the columns g gives each input window, added back into place one kernel position at a time."""
    n, o = g.shape[:2]
    cg = w.shape[1]
    kernel, out = w.shape[2:], g.shape[2:]
    nd = len(out)
    budget.check_tensor((groups, cg * math.prod(kernel), n * math.prod(out)), g.itemsize)
    wm = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    cols = np.matmul(wm, _grad_matrix(g, groups))                        # (G, C/G*K, N*L)
    cols = cols.reshape((groups, cg) + tuple(kernel) + (n,) + tuple(out))
    padded = tuple(s + 2 * p for s, p in zip(spatial, padding))
    budget.check_tensor((n, groups * cg) + padded, g.itemsize)
    acc = np.zeros((groups, cg, n) + padded, dtype=g.dtype)
    for k in np.ndindex(*kernel):
        window = tuple(slice(i * d, i * d + st * (m - 1) + 1, st) for i, d, st, m in zip(k, dilation, stride, out))
        acc[(slice(None),) * 3 + window] += cols[(slice(None),) * 2 + k]
    acc = acc[(Ellipsis,) + tuple(slice(p, p + s) for s, p in zip(spatial, padding))]
    acc = acc.transpose((2, 0, 1) + tuple(range(3, 3 + nd)))
    return np.ascontiguousarray(acc).reshape((n, groups * cg) + tuple(spatial))


def weight_grad_array(g, x, wshape, stride, padding, dilation, groups):
    """The gradient of conv_array's result `g` for its weight, x being the input."""
    cols, _ = _columns(x, wshape[2:], stride, padding, dilation, groups)
    r = np.matmul(_grad_matrix(g, groups), cols.transpose(0, 2, 1))        # (G, O/G, C/G*K)
    return r.reshape(wshape)


def _bias_grad_array(g):
    return g.sum(axis=(0,) + tuple(range(2, g.ndim)))


def _meta_forward(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """A convolution of meta arrays: its result's shape alone, as a meta array (nothing computed)."""
    from gradcli.engine.meta import meta_full
    if transposed:
        spatial = tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1 for s, st, p, d, k, op
                        in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
        channels = w.shape[1] * groups
    else:
        spatial = _out_sizes(x.shape[2:], w.shape[2:], stride, padding, dilation)
        channels = w.shape[0]
    return meta_full((x.shape[0], channels) + tuple(spatial), 0, x.dtype)


def forward_array(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """at::convolution's result without its bias, transposed (the input gradient of a convolution) or not."""
    if is_meta(x) or is_meta(w):
        return _meta_forward(x, w, stride, padding, dilation, transposed, output_padding, groups)
    if not transposed:
        return conv_array(x, w, stride, padding, dilation, groups)
    spatial = tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1 for s, st, p, d, k, op
                    in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
    return input_grad_array(x, w, spatial, stride, padding, dilation, groups)


def backward_array(g, x, w, p, which):
    """Output `which` of convolution_backward (0 input, 1 weight, 2 bias) on arrays; p: the row's
    (stride, padding, dilation, transposed, output_padding, groups). float16 as PyTorch's slow convolution
    kernels compute it: the bias gradient a float sum rounded once, the weight gradient one float product
    per sample added to a float16 result, the input gradient (a col2im) in float16 steps."""
    if is_meta(g) or is_meta(x) or is_meta(w):      # meta arrays: the gradient's shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(x.shape if which == 0 else (w.shape if which == 1 else (g.shape[1],)), 0, x.dtype)
    if g.size == 0 or x.size == 0:     # the Empty backend's gradients: zeros of each operand's shape
        shape = x.shape if which == 0 else (w.shape if which == 1 else (g.shape[1],))
        if which == 2 and not x.shape[1]:
            shape = (w.shape[1] * p[5] if p[3] else w.shape[0],)
        return np.zeros(shape, x.dtype)
    if x.dtype.char in "eE" and which == 2:
        return _bias_grad_array(g.astype(np.float32)).astype(x.dtype)
    if x.dtype.char in "eE" and which == 1:
        out = np.zeros(w.shape, x.dtype)
        for b in range(x.shape[0]):
            part = _backward_array(g[b:b + 1].astype(np.float32), x[b:b + 1].astype(np.float32),
                                   w.astype(np.float32), p, 1)
            out = (out.astype(np.float32) + part).astype(x.dtype)
        return out
    return _backward_array(g, x, w, p, which)


def _backward_array(g, x, w, p, which):
    stride, padding, dilation, transposed, output_padding, groups = p
    if which == 2:
        return _bias_grad_array(g)
    if which == 0:
        if transposed:
            return conv_array(g, w, stride, padding, dilation, groups)
        return input_grad_array(g, w, x.shape[2:], stride, padding, dilation, groups)
    if transposed:
        return weight_grad_array(x, g, w.shape, stride, padding, dilation, groups)
    return weight_grad_array(g, x, w.shape, stride, padding, dilation, groups)


# -------------------------------------------------------------------------------------------- formulas

def _conv_input(F, g, input, weight, bias_sym_sizes_opt, stride, padding, dilation, transposed, output_padding,
                groups):
    return F.conv_backward(g, input, weight, (stride, padding, dilation, transposed, output_padding, groups), 0)


def _conv_weight(F, g, input, weight, bias_sym_sizes_opt, stride, padding, dilation, transposed, output_padding,
                 groups):
    return F.conv_backward(g, input, weight, (stride, padding, dilation, transposed, output_padding, groups), 1)


def _conv_bias(F, g, input, weight, bias_sym_sizes_opt, stride, padding, dilation, transposed, output_padding,
               groups):
    return F.conv_backward(g, input, weight, (stride, padding, dilation, transposed, output_padding, groups), 2)


def _conv_jvp(F, ts, xs, result, bias_sizes, *p):
    """convolution_jvp: conv(input_t, weight_p, bias_t) + conv(input_p, weight_t)."""
    (ti, tw, tb), (x, w, _) = ts, xs
    if ti is None and tb is None:
        first = dropped(w)
    else:
        ti = ti if ti is not None else Tensor(np.zeros_like(x._a))
        first = _record(ti, w, tb, p)
    second = dropped(x) if tw is None else _record(x, tw, None, p)
    return add_tangents(first, second, result._a.shape)


# Gradients of convolution_backward's outputs (create_graph, then differentiated again). Each output is
# bilinear: grad_input in (grad_output, weight), grad_weight in (grad_output, input), grad_bias linear in
# grad_output; `gg` is the gradient of the one output this node made.

def _double_grad_output(F, gg, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                        groups, which):
    p = (stride, padding, dilation, transposed, output_padding, groups)
    if which == 0:
        return F.convolution(gg, weight, p)
    if which == 1:
        return F.convolution(input, gg, p)
    return F.expand(F.reshape(gg, (1, -1) + (1,) * (grad_output.ndim - 2)), grad_output.shape)


def _double_input(F, gg, grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                  which):
    if which != 1:
        return None
    return F.conv_backward(grad_output, input, gg, (stride, padding, dilation, transposed, output_padding, groups), 0)


def _double_weight(F, gg, grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                   which):
    if which != 0:
        return None
    return F.conv_backward(grad_output, gg, weight, (stride, padding, dilation, transposed, output_padding, groups), 1)


def _backward_jvp(F, ts, xs, result, *p):
    """Each output is linear in grad_output and in its other factor: one term per tangent."""
    (tg, ti, tw), (g, x, w) = ts, xs
    which = p[-1]
    if which == 2:
        return None if tg is None else convolution_backward(tg, x, w, p[:-1], 2)
    other, t_other = (w, tw) if which == 0 else (x, ti)
    first = dropped(other) if tg is None else convolution_backward(tg, x, w, p[:-1], which)
    if t_other is None:
        second = dropped(g)
    elif which == 0:
        second = convolution_backward(g, x, t_other, p[:-1], 0)
    else:
        second = convolution_backward(g, t_other, w, p[:-1], 1)
    return add_tangents(first, second, result._a.shape)


_PARAMS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")

# fmt: off
CONVOLUTION = Op("ConvolutionBackward0",         None, ("input", "weight", "bias_sym_sizes_opt") + _PARAMS,
                 (_conv_input,
                  _conv_weight,
                  _conv_bias), inputs=("input", "weight", "bias"), jvp=_conv_jvp)
CONVOLUTION_BACKWARD = Op("ConvolutionBackwardBackward0", None, ("grad_output", "input", "weight") + _PARAMS + ("which",),
                 (_double_grad_output,
                  _double_input,
                  _double_weight), inputs=("grad_output", "input", "weight"), jvp=_backward_jvp)
# fmt: on


def _record(x: Tensor, w: Tensor, bias, p) -> Tensor:
    """at::convolution on checked arguments: p = (stride, padding, dilation, transposed, output_padding,
    groups)."""
    if x._a.size == 0:
        out = _empty_output(x._a, w._a, p)
    elif is_meta(x._a) or is_meta(w._a):
        out = forward_array(x._a, w._a, *p)
        if bias is not None:
            out += bias._a.reshape((1, -1) + (1,) * (out.ndim - 2))
    elif x._a.dtype.char in "eE" and not p[3]:     # float16: products and sums in float, rounded once
        out = forward_array(x._a.astype(np.float32), w._a.astype(np.float32), *p)
        if bias is not None:
            out += bias._a.astype(np.float32).reshape((1, -1) + (1,) * (out.ndim - 2))
        out = out.astype(x._a.dtype)
    elif direct_order(x._a, w._a, p):
        out = direct_array(x._a, w._a, None if bias is None else bias._a, *p[:3], p[5])
    else:
        out = forward_array(x._a, w._a, *p)
        if bias is not None:
            out += bias._a.reshape((1, -1) + (1,) * (out.ndim - 2))
    sizes = tuple(bias._a.shape) if bias is not None else (0,)
    return apply(CONVOLUTION, in_inputs_format(out, x._a, w._a), (x, w, bias), (sizes,) + tuple(p))


def _empty_output(x: np.ndarray, w: np.ndarray, p) -> np.ndarray:
    """PyTorch's Empty convolution backend, for an input without elements: zero batch or zero channels only
    (anything else is its RuntimeError, the input of a 1-d convolution shown as the 2-d one it becomes). The
    output has the computed spatial size; its channels are the weight's outputs, or none for an input
    without channels, as PyTorch's backend leaves them."""
    stride, padding, dilation, transposed, output_padding, groups = p
    if x.shape[0] and x.shape[1]:
        shown = list(x.shape) if x.ndim != 3 else [x.shape[0], x.shape[1], 1, x.shape[2]]
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{_size_list(shown)}")
    kernel = w.shape[2:]
    if transposed:
        spatial = [(n - 1) * s - 2 * q + d * (k - 1) + o + 1
                   for n, s, q, d, k, o in zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
        outputs = w.shape[1] * groups
    else:
        spatial = [(n + 2 * q - d * (k - 1) - 1) // s + 1
                   for n, s, q, d, k in zip(x.shape[2:], stride, padding, dilation, kernel)]
        outputs = w.shape[0]
    return np.zeros((x.shape[0], outputs if x.shape[1] else 0, *spatial), x.dtype)


def convolution_backward(g: Tensor, x: Tensor, w: Tensor, p, which: int) -> Tensor:
    """One output of convolution_backward, recorded (create_graph): 0 the input's gradient, 1 the
    weight's, 2 the bias's."""
    out = backward_array(g._a, x._a, w._a, p, which)
    return apply(CONVOLUTION_BACKWARD, out, (g, x, w), tuple(p) + (which,))


def recorded_convolution(x: Tensor, w: Tensor, p) -> Tensor:
    """A convolution without bias that create_graph's formulas record."""
    return _record(x, w, None, p)


# ------------------------------------------------------------------------------------------- arguments

_DTYPE_WORDS = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _expand(value, n: int, fn: str, name: str, position: int) -> list:
    """An int or a sequence of ints, as the functional's IntArrayRef[n] takes it (each read into 64 bits)."""
    if _is_int(value):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
        return [int(value)] * n
    # the parser takes the list by its first element (an int, not a bool); the others unpack as ints
    if isinstance(value, (tuple, list)) and (not value or _is_int(value[0])) \
            and all(_is_int(v) or isinstance(v, (bool, np.bool_)) for v in value):
        for i, v in enumerate(value):
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise TypeError(f"{fn}(): argument '{name}' failed to unpack the object at pos {i + 1} with error "
                                f"\"Overflow when unpacking long long\"")
        return [int(v) for v in value]
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be tuple of ints, not "
                    f"{type(value).__name__}")


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _fit(values: list, k: int, name: str) -> tuple:
    """A parameter list against the weight's spatial dims: one value repeats, else there must be k."""
    if len(values) == 1:
        return tuple(values) * k
    if len(values) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={_size_list(values)}")
    return tuple(values)


def _expect_tensor(value, fn: str, name: str, position: int):
    if value.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _check_bias_type(x: np.ndarray, bias, transposed: bool) -> None:
    """PyTorch's first check of a convolution: the bias's dtype is the input's (a transposed convolution's bias
    is checked for its shape only, in convolution())."""
    if bias is not None and not transposed and bias._a.dtype != x.dtype:
        raise RuntimeError(f"Input type ({linalg.cxx_type(x.dtype)}) and bias type ({linalg.cxx_type(bias._a.dtype)}) "
                           f"should be the same")


def _functional(fn: str, nd: int, input, weight, bias, stride, padding, dilation, groups,
                transposed=False, output_padding=0) -> Tensor:
    """F.convNd / F.conv_transposeNd: the batch dim added for an unbatched input (and taken off the
    result), 'same' and 'valid' padding resolved, the checks at::convolution makes, then the op."""
    _expect_tensor(input, fn, "input", 1)
    _expect_tensor(weight, fn, "weight", 2)
    if bias is not None:
        _expect_tensor(bias, fn, "bias", 3)
    if not _is_int(groups):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    if transposed and isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    # the parser's reading of the int lists, before at::convolution's own checks
    stride = _expand(stride, nd, fn, "stride", 4)
    mode = None
    if isinstance(padding, str):
        mode = padding
    else:
        padding = _expand(padding, nd, fn, "padding", 5)
    output_padding = _expand(output_padding, nd, fn, "output_padding", 6)
    dilation = _expand(dilation, nd, fn, "dilation", 7 if transposed else 6)
    x = input._a
    _check_bias_type(x, bias, transposed)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {_size_list(x.shape)}")
    if mode is not None:
        if mode not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{mode}'")
        padding = [0] * nd
    unbatched = x.ndim == nd + 1
    if unbatched:
        input = shape.unsqueeze(input, 0)
    if mode == "same":
        out = _same(input, weight, bias, stride, dilation, int(groups))
    else:
        out = convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, int(groups))
    return shape.squeeze(out, 0) if unbatched else out


def _same(input, weight, bias, stride, dilation, groups) -> Tensor:
    """padding='same': the total padding d*(k-1) split evenly; an odd one pads the input on the far side
    first (ConstantPadNdBackward0), as _convolution_mode does."""
    k = weight._a.ndim - 2
    dilation = _fit(dilation, k, "dilation")
    if any(s != 1 for s in _fit(stride, k, "stride")):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    padding, extra = [], []
    for d, size in zip(dilation, weight._a.shape[2:]):
        total = d * (size - 1)
        padding.append(total // 2)
        extra.append(total - 2 * (total // 2))
    if any(extra):
        STATE.warn_once("conv same", "UserWarning", "Using padding='same' with even kernel lengths and odd dilation may require a "
                   "zero-padded copy of the input be created (Triggered internally at "
                   "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")
        pad = []
        for e in reversed(extra):
            pad += [0, e]
        input = shape.constant_pad(input, tuple(pad), 0)
    return convolution(input, weight, bias, stride, padding, dilation, False, [0] * k, groups)


def torch_convolution(*args, **kwargs) -> Tensor:
    """torch.convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups): the
    op every conv layer and function ends in, called directly."""
    from gradcli.engine import signatures
    v = signatures.parsed("torch.convolution", args, kwargs, {})
    for i, name in enumerate(("stride", "padding", "dilation", "output_padding")):
        if v[name].__class__ is int:        # (unsized int lists: one int does not stand for one)
            where = "" if name in kwargs else f" (position {(4, 5, 6, 8)[i]})"
            raise TypeError(f"convolution(): argument '{name}'{where} must be tuple of ints, not int")
    return convolution(v["input"], v["weight"], v["bias"], tuple(v["stride"]), tuple(v["padding"]),
                       tuple(v["dilation"]), v["transposed"], tuple(v["output_padding"]), v["groups"])


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) -> Tensor:
    """at::convolution: PyTorch's checks in its order and words, then the recorded op."""
    x, w = input._a, weight._a
    k = w.ndim - 2
    stride = _fit(stride, max(k, 0), "stride") if k > 0 else tuple(stride)
    padding = _fit(padding, max(k, 0), "padding") if k > 0 else tuple(padding)
    dilation = _fit(dilation, max(k, 0), "dilation") if k > 0 else tuple(dilation)
    output_padding = _fit(output_padding, max(k, 0), "output_padding") if k > 0 else tuple(output_padding)
    _check_bias_type(x, bias, transposed)
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight {_size_list(w.shape)}, "
                           f"but got {x.ndim}-dimensional input of size {_size_list(x.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    for i, p in enumerate(padding):
        if p > _PADDING_MAX:
            raise RuntimeError(f"Given padding={p} at dimension {i} , expected padding to be at most {_PADDING_MAX}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {_size_list(dilation)}")
    _check_groups(w.shape, groups)
    if not transposed:
        channels = w.shape[1] * groups
        if x.shape[1] != channels:
            raise RuntimeError(f"Given groups={groups}, weight of size {_size_list(w.shape)}, expected "
                               f"input{_size_list(x.shape)} to have {channels} channels, but got {x.shape[1]} "
                               f"channels instead")
        outputs = w.shape[0]
        padded = [wrap_int64(s + 2 * p) for s, p in zip(x.shape[2:], padding)]         # C++'s int64_t arithmetic
        dilated = [wrap_int64(d * (n - 1) + 1) for d, n in zip(dilation, w.shape[2:])]
        if any(d * (n - 1) + 1 != b for d, n, b in zip(dilation, w.shape[2:], dilated)):
            # PyTorch goes on with the wrapped size, and its kernels read the taps at wrapped offsets
            raise NotImplementedError(f"gradcli does not implement a convolution whose dilated kernel size overflows "
                                      f"int64 (dilation {_size_list(dilation)}, kernel {_size_list(w.shape[2:])})")
        if any(a < b for a, b in zip(padded, dilated)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, dilated))}). Kernel size can't be greater than actual "
                               f"input size")
    else:
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_size_list(w.shape)}, expected "
                               f"input{_size_list(x.shape)} to have {w.shape[0]} channels, but got {x.shape[1]} "
                               f"channels instead")
        outputs = w.shape[1] * groups
        for op, s, d in zip(output_padding, stride, dilation):
            if op >= s and op >= d:
                names = ("height", "width") if k == 2 else (("depth", "height", "width") if k == 3 else ("",))
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    + " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)) + " "
                    + " ".join(f"stride_{n}: {v}" for n, v in zip(names, stride)) + " "
                    + " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    if bias is not None and (bias._a.ndim != 1 or bias._a.shape[0] != outputs):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size {_size_list(w.shape)}, "
                           f"expected bias to be 1-dimensional with {outputs} elements, but got bias of size "
                           f"{_size_list(bias._a.shape)} instead")
    if transposed:
        _check_transposed_output(x, w, stride, padding, dilation, output_padding, groups, outputs)
    if bias is not None:
        if bias._a.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {_DTYPE_WORDS.get(x.dtype.name, x.dtype.name)} but found "
                               f"{_DTYPE_WORDS.get(bias._a.dtype.name, bias._a.dtype.name)}")
    if x.dtype != w.dtype:      # the kernel's own check, after every shape check
        raise RuntimeError(f"expected scalar type {_DTYPE_WORDS.get(x.dtype.name, x.dtype.name)} but found "
                           f"{_DTYPE_WORDS.get(w.dtype.name, w.dtype.name)}")
    return _record(input, weight, bias, (stride, padding, dilation, bool(transposed), output_padding, groups))


_PADDING_MAX = (1 << 62) - 1         # at::convolution's bound: twice a padding must fit in an int64_t


def _int32(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def _onednn_transposed(x, w, stride, dilation, output_padding, groups) -> bool:
    """Whether PyTorch's CPU build hands this transposed convolution to oneDNN (ConvParams::use_mkldnn, on
    the 4-d or 5-d view it makes of a 1-d one): float32 only, and not for a small single-sample
    convolution that the native kernel does faster."""
    if x.dtype != np.float32 or any(o >= s for o, s in zip(output_padding, stride)):
        return False
    n, c, *spatial = x.shape
    kernel = w.shape[2:] if w.ndim > 3 else (1,) + tuple(w.shape[2:])
    first = (n, c) + ((1,) + tuple(spatial) if x.ndim == 3 else tuple(spatial))
    one_by_one = kernel[-1] == 1 and kernel[-2] == 1
    fast = (any(s != 1 for s in stride) or any(d != 1 for d in dilation) or n >= 16 or not one_by_one
            or STATE.threads > 1)
    return fast and (groups > 1 or (kernel[-1] > 3 and kernel[-2] > 3) or n > 1 or math.prod(first[:4]) > 20480)


def _check_transposed_output(x, w, stride, padding, dilation, output_padding, groups, outputs) -> None:
    """The output of a transposed convolution must have at least one element along each spatial dim.
    oneDNN refuses the primitive; the native kernel (slow_conv_transpose2d/3d) checks the size with its
    parameters cut to 32-bit ints and some products in 32 bits, and a size that wraps to a positive one
    there fails only when the output is made (int64 sizes). A 1-d convolution runs as a 2-d one over a height of 1."""
    sizes = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1
             for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding)]
    if 0 in x.shape[2:] or all(v >= 1 for v in sizes):
        return
    lead = [1] if x.ndim == 3 else []
    if x.shape[0] == 0:                 # no kernel runs: the empty result's view to the output's shape fails
        shape = [0, outputs] + lead + [wrap_int64(v) for v in sizes]
        i = next(i for i, v in enumerate(shape) if v < 0)
        raise RuntimeError(f"invalid shape dimension {shape[i]} at index {i} of shape {_size_list(shape)}")
    if _onednn_transposed(x, w, stride, dilation, output_padding, groups):
        raise RuntimeError("could not construct a memory descriptor using a format tag")
    # (n - 1) * stride in int64 (the size is), 2 * padding and dilation * (kernel - 1) + 1 in int
    narrow = [(n - 1) * _int32(s) - _int32(2 * _int32(p)) + _int32(_int32(_int32(d) * (k - 1)) + 1) + _int32(o)
              for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding)]
    if any(v < 1 for v in narrow):
        given = " x ".join(map(str, lead + list(x.shape[2:])))
        raise RuntimeError(f"Given input size per channel: ({given}). Calculated output size per channel: "
                           f"({' x '.join(map(str, lead + narrow))}). Output size is too small")
    shape = [x.shape[0], outputs] + lead + [wrap_int64(v) for v in sizes]
    negative = next(v for v in shape if v < 0)
    raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {_size_list(shape)}")


# ------------------------------------------------------------------------------------ the functionals

@autocast_policy("lower_precision_fp")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _functional("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_policy("lower_precision_fp")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _functional("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_policy("lower_precision_fp")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    return _functional("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@autocast_policy("lower_precision_fp")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _functional("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding)


@autocast_policy("lower_precision_fp")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _functional("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding)


@autocast_policy("lower_precision_fp")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _functional("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding)


# ------------------------------------------------------------------------------------------- torch.nn.grad

def _check_groups(wshape: tuple, groups: int) -> None:
    """The convolution's checks of the weight's first dim against `groups`, in PyTorch's words."""
    if wshape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_size_list(wshape)} instead")
    if wshape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_size_list(wshape)}] instead")


def _nn_grad(fn: str, nd: int, which: int, given, size, grad_output, stride, padding, dilation, groups) -> Tensor:
    """torch.nn.grad.conv{nd}d_input / _weight: convolution_backward's gradient of the input (which 0; `given` the
    weight, `size` the input's) or of the weight (which 1; `given` the input, `size` the weight's), for
    `grad_output`, as PyTorch's Python computes it on a dummy tensor of `size` (ConvolutionBackwardBackward0)."""
    _expect_tensor(given, fn, "weight" if which == 0 else "input", 2 if which == 0 else 1)
    _expect_tensor(grad_output, fn, "grad_output", 3)
    if not _is_int(groups):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    stride, padding = _expand(stride, nd, fn, "stride", 4), _expand(padding, nd, fn, "padding", 5)
    dilation = _expand(dilation, nd, fn, "dilation", 6)
    size = tuple(int(n) for n in size)
    budget.check_tensor(size, grad_output._a.itemsize)
    dummy = Tensor(np.broadcast_to(np.zeros((), grad_output._a.dtype), size))
    x, w = (dummy, given) if which == 0 else (given, dummy)
    g = grad_output._a
    if x._a.dtype != w._a.dtype:        # the conv's input against its weight (one of them the dummy)
        raise RuntimeError(f"expected scalar type {_DTYPE_WORDS[x._a.dtype.name]} but found "
                           f"{_DTYPE_WORDS[w._a.dtype.name]}")
    if x._a.dtype.kind not in "fV":
        kernel = f"slow_conv{3 if nd == 3 else 2}d_cpu" + (
            "" if x._a.dtype.kind == "b" else "_grad_input" if which == 0 else "_grad_weight")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_DTYPE_WORDS[x._a.dtype.name]}'")
    if x._a.ndim != g.ndim:
        raise RuntimeError(f"Expected input and grad_output to have the same number of dimensions, but got: "
                           f"{x._a.ndim} and {g.ndim}")
    if groups <= 0:
        raise RuntimeError(f"expected groups to be greater than 0, but got groups={groups}")
    _check_groups(w._a.shape, int(groups))  # the convolution's own shape checks come before grad_output's
    channels = w._a.shape[1] * int(groups)
    if x._a.shape[1] != channels:
        raise RuntimeError(f"Given groups={groups}, weight of size {_size_list(w._a.shape)}, expected "
                           f"input{_size_list(x._a.shape)} to have {channels} channels, but got {x._a.shape[1]} "
                           f"channels instead")
    padded = [s + 2 * q for s, q in zip(x._a.shape[2:], padding)]
    dilated = [d * (n - 1) + 1 for d, n in zip(dilation, w._a.shape[2:])]
    if any(a < b for a, b in zip(padded, dilated)):         # (the convolution's check, before grad_output's)
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, dilated))}). Kernel size can't be greater than actual "
                           f"input size")
    p = (stride, padding, dilation, False, [0] * nd, int(groups))
    expected = (x._a.shape[0], w._a.shape[0]) + _out_sizes(x._a.shape[2:], w._a.shape[2:], stride, padding, dilation)
    lift = 1 if nd == 1 else 0              # a 1-d convolution runs as a 2-d one: its dims count one more
    for d in list(range(1, g.ndim)) + [0]:
        if g.shape[d] != expected[d]:
            if d == 0:
                raise RuntimeError("could not create a primitive descriptor for the convolution forward propagation "
                                   "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to get "
                                   "additional diagnostic information.")
            at = d + lift if d >= 2 else d
            raise RuntimeError(f"Expected a tensor of dimension {g.ndim + lift} and tensor.size[{at}] == {expected[d]} "
                               f"but got: dimension {g.ndim + lift} and tensor.size[{at}] = {g.shape[d]}")
    return convolution_backward(grad_output, x, w, p, which)


def _nn_grad_functions() -> dict:
    def make(nd: int, which: int):
        name = f"conv{nd}d_{'input' if which == 0 else 'weight'}"

        def fn(first, second, grad_output, stride=1, padding=0, dilation=1, groups=1):
            given, size = (second, first) if which == 0 else (first, second)
            return _nn_grad(name, nd, which, given, size, grad_output, stride, padding, dilation, groups)
        fn.__name__ = name
        return fn
    return {f"conv{nd}d_{kind}": make(nd, which) for nd in (1, 2, 3) for which, kind in ((0, "input"), (1, "weight"))}


NN_GRAD = _nn_grad_functions()
