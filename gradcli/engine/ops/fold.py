"""torch.nn.functional.unfold and fold (im2col and col2im): sliding blocks of a batch of images as columns, and
columns summed back into images. Each is the other's gradient (Im2ColBackward0 records col2im, Col2ImBackward0
im2col). im2col only moves elements; col2im adds each pixel's contributions in PyTorch's loop order (kernel row,
kernel column), so float results are bit for bit.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget
from gradcli.engine.recording import Op, apply, index_arg, is_meta, type_word
from gradcli.engine.signatures import type_name
from gradcli.engine.tensor import Tensor


def _im2col_jvp(F, ts, xs, result, height, width, kernel_size, dilation, padding, stride):
    return im2col(ts[0], kernel_size, dilation, padding, stride)


def _col2im_jvp(F, ts, xs, result, kernel_size, dilation, padding, stride):
    return col2im(ts[0], result._a.shape[-2:], kernel_size, dilation, padding, stride)


# fmt: off
#                  node                forward saves                                                 formulas
IM2COL = Op("Im2ColBackward0",  None,  ("self_sym_argsize_minus_2", "self_sym_argsize_minus_1", "kernel_size",
                                        "dilation", "padding", "stride"),
            (lambda F, g, h, w, k, d, p, s: F.col2im(g, (h, w), k, d, p, s),), jvp=_im2col_jvp)
COL2IM = Op("Col2ImBackward0",  None,  ("kernel_size", "dilation", "padding", "stride"),
            (lambda F, g, k, d, p, s: F.im2col(g, k, d, p, s),), jvp=_col2im_jvp)
# fmt: on


def _pair(name: str, value) -> tuple:
    """_pair, then at::IntArrayRef's length check."""
    if isinstance(value, (tuple, list)):
        value = tuple(index_arg(v) for v in value)
    elif value.__class__ is Tensor:
        value = (index_arg(value),) * 2
    else:
        value = (index_arg(value),) * 2
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    for v in value:
        if v.__class__ is not int:
            raise TypeError(f"{name}: expected a tuple of ints, but got {type_name(v)}")
    return value


def _check_common(k, d, p, s) -> None:
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: {k[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: {d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")


def _blocks(size, k, d, p, s) -> tuple:
    return tuple((size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2))


def _dims(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """F.unfold: (N, C, H, W) (or (C, H, W)) to (N, C * kh * kw, L), one column per sliding block."""
    if input.__class__ is not Tensor:
        raise TypeError(f"im2col(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    return im2col(input, _pair("kernel_size", kernel_size), _pair("dilation", dilation), _pair("padding", padding),
                  _pair("stride", stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """F.fold: (N, C * kh * kw, L) (or without N) to (N, C, H, W), overlapping blocks summed."""
    if input.__class__ is not Tensor:
        raise TypeError(f"col2im(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    return col2im(input, _pair("output_size", output_size), _pair("kernel_size", kernel_size),
                  _pair("dilation", dilation), _pair("padding", padding), _pair("stride", stride))


def im2col(a: Tensor, k, d, p, s) -> Tensor:
    x = a._a
    if x.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], but got "
                         f"{x.ndim})")
    _check_common(k, d, p, s)
    if x.ndim > 4 or any(n == 0 for n in x.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_dims(x.shape)}")
    size = x.shape[-2:]
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at least one.")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{type_word(x)}'")
    out = im2col_array(x, k, d, p, s)
    return apply(IM2COL, out, (a,), (size[0], size[1], tuple(k), tuple(d), tuple(p), tuple(s)))


def im2col_array(x: np.ndarray, k, d, p, s) -> np.ndarray:
    batched = x.ndim == 4
    xb = x if batched else x[None]
    n, c, h, w = xb.shape
    oh, ow = _blocks((h, w), k, d, p, s)
    budget.check_tensor((n, c * k[0] * k[1], oh * ow), x.itemsize)
    if is_meta(x):                      # the columns' shape alone
        from gradcli.engine.meta import meta_full
        return meta_full((n, c * k[0] * k[1], oh * ow) if batched else (c * k[0] * k[1], oh * ow), 0, x.dtype)
    padded = np.pad(xb, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    cols = np.empty((n, c, k[0], k[1], oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = padded[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                                      j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
    out = cols.reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out[0]


def col2im(a: Tensor, output_size, k, d, p, s) -> Tensor:
    x = a._a
    output_size = tuple(output_size)
    _check_common(k, d, p, s)
    if x.ndim not in (2, 3) or any(n == 0 for n in x.shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_dims(x.shape)}")
    rows = x.shape[-2]
    if rows % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={rows} and kernel_size=({k[0]}, {k[1]}).")
    blocks = _blocks(output_size, k, d, p, s)
    if x.shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected "
                           "size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={x.shape[-1]}.")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"col2im_out_cpu\" not implemented for '{type_word(x)}'")
    out = col2im_array(x, output_size, k, d, p, s)
    return apply(COL2IM, out, (a,), (tuple(k), tuple(d), tuple(p), tuple(s)))


def col2im_array(x: np.ndarray, output_size, k, d, p, s) -> np.ndarray:
    """Columns summed into images, each pixel's contributions added in PyTorch's order (kernel row, then kernel
    column), starting from zero."""
    batched = x.ndim == 3
    xb = x if batched else x[None]
    n = xb.shape[0]
    c = xb.shape[1] // (k[0] * k[1])
    h, w = output_size
    oh, ow = _blocks((h, w), k, d, p, s)
    budget.check_tensor((n, c, h + 2 * p[0], w + 2 * p[1]), x.itemsize)
    if is_meta(x):                      # the images' shape alone
        from gradcli.engine.meta import meta_full
        return meta_full((n, c, h, w) if batched else (c, h, w), 0, x.dtype)
    cols = xb.reshape(n, c, k[0], k[1], oh, ow)
    padded = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            padded[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                   j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]] += cols[:, :, i, j]
    out = np.ascontiguousarray(padded[:, :, p[0]:p[0] + h, p[1]:p[1] + w])
    return out if batched else out[0]
