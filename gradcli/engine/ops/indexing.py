"""Indexing: reading with integers, slices, None, ..., masks and index tensors, and item assignment."""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes, ops, views
from gradcli.engine.autograd import Node, edge
from gradcli.engine.recording import Op, record
from gradcli.engine.tensor import INFERENCE_INPLACE_ERROR, Tensor

# Basic indexing is decomposed the way PyTorch records it: one node per integer (select), per
# non-trivial slice (slice) and per None (unsqueeze), so X[0, 1] is SelectBackward0 of SelectBackward0.
# Anything with a list, a bool or a tensor in it is advanced indexing: one IndexBackward0.

# fmt: off
SELECT      = Op("SelectBackward0",    False, (lambda F, g, shape, key: F.scatter(g, shape, key, "select"),))
SLICE       = Op("SliceBackward0",     False, (lambda F, g, shape, key: F.scatter(g, shape, key, "slice"),))
UNSQUEEZE   = Op("UnsqueezeBackward0", False, (lambda F, g, dim: F.squeeze(g, dim),))
ALIAS       = Op("AliasBackward0",     False, (lambda F, g: g,))
INDEX       = Op("IndexBackward0",     True,  (lambda F, g, shape, key: F.index_add(g, shape, key),))
COPY_SLICES = Op("CopySlices",         False, (lambda F, g, key, value_shape: F.zero_at(g, key),
                                               lambda F, g, key, value_shape: F.getitem(g, key)))
# fmt: on


def _view(a: Tensor, out: np.ndarray, op, saved) -> Tensor:
    """A result that aliases `a`'s data (numpy view) and so shares its version counter."""
    t = record(op, out, (a,), saved)
    t._version = a._version
    t._base = a._base if a._base is not None else a
    return t


def _index_error_0d():
    return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                      "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _is_advanced(k) -> bool:
    return k.__class__ is Tensor or k.__class__ is list or k is True or k is False


def _advanced_key(x: np.ndarray, key: tuple):
    """The numpy key for advanced indexing, with PyTorch's errors for out-of-range indices."""
    arrays = []
    for k in key:
        if k.__class__ is Tensor:
            arr = k._a
        elif k.__class__ is list or k is True or k is False:
            arr = np.asarray(k)
        else:
            arrays.append(k)
            continue
        if arr.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        arrays.append(arr)
    consuming = 0
    for k in arrays:
        if k is None or k is Ellipsis:
            continue
        consuming += k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
    dim = 0
    for k in arrays:
        if k is Ellipsis:
            dim += x.ndim - consuming
        elif k is None:
            continue
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            dim += k.ndim
        else:
            if isinstance(k, np.ndarray) and dim < x.ndim:
                size = x.shape[dim]
                bad = k[(k >= size) | (k < -size)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {dim} "
                                     f"with size {size}")
            dim += 1
    return tuple(arrays)


def _basic_steps(x: np.ndarray, key: tuple):
    """Expand `...` and check sizes: a list of (kind, dim, value) applied left to right."""
    consuming = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consuming > x.ndim:
        if x.ndim == 0:
            raise _index_error_0d()
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    steps = []
    dim = 0
    seen_ellipsis = False
    for k in key:
        if k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += x.ndim - consuming
        elif k is None:
            steps.append(("unsqueeze", dim, None))
            dim += 1
        elif k.__class__ is slice:
            steps.append(("slice", dim, k))
            dim += 1
        else:
            try:
                i = k.__index__()
            except (AttributeError, TypeError):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                 "Variables are valid indices (got " + type(k).__name__ + ")") from None
            steps.append(("select", dim, i))
    return steps


def getitem(a: Tensor, key) -> Tensor:
    x = a._a
    single = key.__class__ is not tuple
    keys = (key,) if single else key
    if any(_is_advanced(k) for k in keys):
        if x.ndim == 0 and not all(k is True or k is False or k is None for k in keys):
            raise _index_error_0d()
        npkey = _advanced_key(x, keys)
        try:
            out = x[npkey]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        return record(INDEX, out, (a,), (x.shape, npkey))
    t = a
    changed = False
    offset = 0                 # dims removed by earlier selects
    for kind, dim, value in _basic_steps(x, keys):
        d = dim - offset
        cur = t._a
        if kind == "select":
            size = cur.shape[d]
            if value < -size or value >= size:
                raise IndexError(f"index {value} is out of bounds for dimension {d} with size {size}")
            k = (slice(None),) * d + (value,)
            t = _view(t, cur[k], SELECT, (cur.shape, k))
            offset += 1
            changed = True
        elif kind == "slice":
            if value == slice(None) and not single:
                continue
            if value.step is not None and value.step <= 0:
                raise ValueError("step must be greater than zero")
            k = (slice(None),) * d + (value,)
            t = _view(t, cur[k], SLICE, (cur.shape, k))
            changed = True
        else:
            t = _view(t, np.expand_dims(cur, d), UNSQUEEZE, (d,))
            changed = True
    if not changed:
        return _view(a, x.view(), ALIAS, ())
    return t


def setitem(a: Tensor, key, value) -> None:
    """`a[key] = value`: in place, recorded as CopySlices when autograd is involved."""
    recording = autograd._grad_enabled[0]
    if a._inference and not autograd._inference[0]:
        raise RuntimeError(INFERENCE_INPLACE_ERROR)
    if recording and a.requires_grad and a.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if a._base is not None:
        ops.check_inplace_view(a)
    x = a._a
    keys = key if key.__class__ is tuple else (key,)
    if any(_is_advanced(k) for k in keys):
        npkey = _advanced_key(x, keys)
    else:
        steps = _basic_steps(x, keys)
        for kind, dim, i in steps:
            if kind == "select":
                size = x.shape[dim] if dim < x.ndim else 0
                if i < -size or i >= size:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
        npkey = key
    if value.__class__ is Tensor:
        src = value._a
    elif isinstance(value, (int, float, bool)):
        src = value
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {dtypes.of_array(x).legacy}")
    try:
        target_shape = x[npkey].shape
        x[npkey] = src
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(src))} cannot be broadcast "
                           f"to indexing result of shape {list(target_shape)}") from None
    a._version[0] += 1
    if recording and (a.requires_grad or (value.__class__ is Tensor and value.requires_grad)):
        vshape = np.shape(src)
        fit = [None, (vshape, src.dtype) if value.__class__ is Tensor and (vshape != target_shape or src.dtype != x.dtype) else None]
        node = Node(COPY_SLICES, (edge(a), edge(value) if value.__class__ is Tensor else None),
                    (npkey, vshape), None, fit if fit[1] is not None else None)
        a.grad_fn = node
        a.requires_grad = True
        if a._base is not None:
            views.rebase(a, node)


# The gradients of indexing, as ops of their own so that create_graph can differentiate them again.
# fmt: off
SELECT_BACKWARD = Op("SelectBackwardBackward0", False, (lambda F, g, key: F.getitem(g, key),))
SLICE_BACKWARD  = Op("SliceBackwardBackward0",  False, (lambda F, g, key: F.getitem(g, key),))
INDEX_PUT       = Op("IndexPutBackward0",       False, (lambda F, g, key: F.getitem(g, key),))
# fmt: on


def scatter(g: Tensor, shape: tuple, key, kind: str) -> Tensor:
    """Zeros of `shape` with `g` written at `key` (the gradient of select or slice)."""
    out = np.zeros(shape, dtype=g._a.dtype)
    out[key] = g._a
    return record(SELECT_BACKWARD if kind == "select" else SLICE_BACKWARD, out, (g,), (key,))


def index_add(g: Tensor, shape: tuple, key) -> Tensor:
    """Zeros of `shape` with `g` added at `key`, repeated indices accumulating (the gradient of indexing)."""
    out = np.zeros(shape, dtype=g._a.dtype)
    np.add.at(out, key, g._a)
    return record(INDEX_PUT, out, (g,), (key,))
