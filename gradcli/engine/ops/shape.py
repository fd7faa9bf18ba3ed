"""Shape ops: views and rearrangements of a tensor's elements (expand, squeeze, unsqueeze, t, reshape, ...)."""

from __future__ import annotations

import numpy as np

from gradcli.engine.recording import Op, record, wrap_dim
from gradcli.engine.tensor import Tensor


def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# fmt: off
EXPAND    = Op("ExpandBackward0",    False, (lambda F, g, shape: F.sum_to(g, shape),))
UNSQUEEZE = Op("UnsqueezeBackward0", False, (lambda F, g, dim: F.squeeze(g, dim),))
SQUEEZE   = Op("SqueezeBackward1",   False, (lambda F, g, dim, shape: F.reshape(g, shape),))
SQUEEZE_ALL = Op("SqueezeBackward0", False, (lambda F, g, shape: F.reshape(g, shape),))
TRANSPOSE_T = Op("TBackward0",       False, (lambda F, g: F.t(g),))
VIEW      = Op("ViewBackward0",      False, (lambda F, g, shape: F.reshape(g, shape),))
# fmt: on


def _view_of(a: Tensor, out: np.ndarray, op: Op, saved: tuple) -> Tensor:
    """A result sharing `a`'s data, and so its version counter."""
    t = record(op, out, (a,), saved)
    if np.shares_memory(out, a._a):
        t._version = a._version
    return t


def expand(a: Tensor, *sizes) -> Tensor:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    x = a._a
    if len(sizes) < x.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{_size_list(x.shape)}}}, size={_size_list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({x.ndim})")
    lead = len(sizes) - x.ndim
    target = []
    for i, s in enumerate(sizes):
        have = x.shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = have
        if have is not None and have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_size_list(sizes)}.  "
                               f"Tensor sizes: {_size_list(x.shape)}")
        target.append(s)
    return _view_of(a, np.broadcast_to(x, tuple(target)), EXPAND, (x.shape,))


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    x = a._a
    d = wrap_dim(dim, x.ndim + 1)
    return _view_of(a, np.expand_dims(x, d), UNSQUEEZE, (d,))


def squeeze(a: Tensor, dim=None) -> Tensor:
    x = a._a
    if dim is None:
        return _view_of(a, x.reshape(tuple(s for s in x.shape if s != 1)), SQUEEZE_ALL, (x.shape,))
    d = wrap_dim(dim, x.ndim) if x.ndim else 0
    out = x.reshape(x.shape[:d] + x.shape[d + 1:]) if x.ndim and x.shape[d] == 1 else x.view()
    return _view_of(a, out, SQUEEZE, (d, x.shape))


def t(a: Tensor) -> Tensor:
    x = a._a
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return _view_of(a, x.T, TRANSPOSE_T, ())


def _infer_shape(sizes, numel: int) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in sizes:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_size_list(sizes)}' is invalid for input of size {numel}")
        sizes = sizes[:unknown[0]] + (numel // known,) + sizes[unknown[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{_size_list(sizes)}' is invalid for input of size {numel}")
    return sizes


def view(a: Tensor, *sizes) -> Tensor:
    x = a._a
    shape = _infer_shape(sizes, x.size)
    if not x.flags.c_contiguous and x.size > 1:
        try:
            out = x.view()
            out.shape = shape            # numpy refuses exactly where a copy would be needed
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    else:
        out = x.reshape(shape)
    return _view_of(a, out, VIEW, (x.shape,))
