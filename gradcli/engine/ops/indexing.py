"""Indexing: reading with integers, slices, None, ..., masks and index tensors, and item assignment."""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes, ops, recording
from gradcli.engine.recording import Op, record
from gradcli.engine.ops.shape import _view_of as _view
from gradcli.engine.tensor import Tensor

# Basic indexing is decomposed the way PyTorch records it: one node per integer (select), per
# non-trivial slice (slice) and per None (unsqueeze), so X[0, 1] is SelectBackward0 of SelectBackward0.
# Anything with a list, a bool or a tensor in it is advanced indexing: one IndexBackward0.

# fmt: off
SELECT      = Op("SelectBackward0",    False, (lambda F, g, shape, key: F.scatter(g, shape, key, "select"),))
SLICE       = Op("SliceBackward0",     False, (lambda F, g, shape, key: F.scatter(g, shape, key, "slice"),))
UNSQUEEZE   = Op("UnsqueezeBackward0", False, (lambda F, g, dim: F.squeeze(g, dim),))
ALIAS       = Op("AliasBackward0",     False, (lambda F, g: g,))
INDEX       = Op("IndexBackward0",     True,  (lambda F, g, shape, key: F.index_add(g, shape, key),))
INDEX_PUT_  = Op("IndexPutBackward0",  False, (lambda F, g, key: F.zero_at(g, key),
                                               lambda F, g, key: F.getitem(g, key)))
# fmt: on


_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
             "to convert a 0-dim tensor to a number")
_INDEX_TYPES = "tensors used as indices must be long, int, byte or bool tensors"


def _bad_index(k):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      f"indices (got {type(k).__name__})")


def _out_of_bounds(i, dim, size):
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def _key_tuple(key) -> tuple:
    """The key as a tuple. A list is one index tensor unless an element is a sequence, a tensor, a slice,
    `...` or None: then (as PyTorch still does) it is the tuple of its elements."""
    if key.__class__ is tuple:
        return key
    if key.__class__ is list and len(key) < 32:
        for k in key:
            if k is None or k is Ellipsis or k.__class__ in (list, tuple, slice, Tensor):
                return tuple(key)
    return (key,)


def _index_array(k):
    """The array of a tensor, list or numpy index, or None for any other key element."""
    if k.__class__ is Tensor:
        return k._a
    if k.__class__ is list:
        arr = np.asarray(k)
        return arr.astype(np.int64) if arr.size == 0 else arr
    if k.__class__ is np.ndarray:
        return k
    return None


def _is_mask(arr) -> bool:
    return arr.dtype == np.bool_ or arr.dtype == np.uint8


def _specified(keys) -> int:
    """How many of the tensor's dims the key names (PyTorch counts a mask's dims, not None/.../bools)."""
    n = 0
    for k in keys:
        if k is None or k is Ellipsis or k is True or k is False:
            continue
        arr = _index_array(k)
        n += arr.ndim if arr is not None and _is_mask(arr) else 1
    return n


def _trivial(k: slice, size: int) -> bool:
    """A slice that keeps a whole dim, which PyTorch skips inside a tuple key (no SliceBackward0)."""
    return (k.start is None or k.start == 0) and (k.stop is None or k.stop >= size) and k.step in (None, 1)


def _select(t: Tensor, dim: int, i, position: int) -> Tensor:
    i = i.__index__()
    cur = t._a
    size = cur.shape[dim] if dim < cur.ndim else 0      # two `...` can point past the last dim
    if i < -size or i >= size:
        raise _out_of_bounds(i, position, size)
    k = (slice(None),) * dim + (i, Ellipsis)      # the Ellipsis keeps a 0-d result a view, not a copy
    return _view(t, cur[k], SELECT, (cur.shape, k))


def _check_step(k: slice) -> None:
    if k.step is not None:
        try:
            step = k.step.__index__()
        except (AttributeError, TypeError):
            raise TypeError("slice indices must be integers or None or have an __index__ method") from None
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")


def _slice(t: Tensor, dim: int, k: slice) -> Tensor:
    _check_step(k)
    cur = t._a
    key = (slice(None),) * dim + (k,)
    try:
        out = cur[key]
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    return _view(t, out, SLICE, (cur.shape, key))


def _unsqueeze(t: Tensor, dim: int) -> Tensor:
    return _view(t, np.expand_dims(t._a, dim), UNSQUEEZE, (dim,))


def _basic(a: Tensor, keys: tuple, single: bool, for_set: bool):
    """Apply the key's integers, slices, Nones and `...` as views, left to right as PyTorch does;
    return the view and the advanced indices met on the way, as (dim of the view, array)."""
    x = a._a
    ndim = x.ndim
    if single:
        k = keys[0]
        if ndim == 0 and k.__class__ is slice:
            _check_step(k)
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if ndim == 0 and k.__class__ is int:
            if k == 0:
                raise IndexError(_ZERO_DIM)
            raise _out_of_bounds(k, 0, 0)
    specified = _specified(keys)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    t = a
    advanced = []
    dim = 0
    for position, k in enumerate(keys):
        if k is None:
            t = _unsqueeze(t, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - specified
        elif k.__class__ is slice:
            if not (single and not for_set) and _trivial(k, t._a.shape[dim]):
                dim += 1
                continue
            t = _slice(t, dim, k)
            dim += 1
        elif k is True or k is False:
            t = _unsqueeze(t, dim)
            advanced.append((dim, np.zeros(1 if k else 0, dtype=np.int64)))
            dim += 1
        elif k.__class__ is int:
            t = _select(t, dim, k, position)
        else:
            arr = _index_array(k)
            if arr is None:
                if hasattr(k, "__index__") and k.__class__ is not float:
                    t = _select(t, dim, k, position)
                    continue
                raise _bad_index(k)
            if arr.ndim == 0 and arr.dtype.kind in "iu" and arr.dtype != np.uint8:
                t = _select(t, dim, int(arr), position)
            elif arr.ndim == 0 and _is_mask(arr):
                t = _unsqueeze(t, dim)
                advanced.append((dim, np.zeros(1 if arr else 0, dtype=np.int64)))
                dim += 1
            else:
                advanced.append((dim, arr))
                dim += arr.ndim if _is_mask(arr) else 1
    if single and not for_set and t is a and keys[0] is not Ellipsis and keys[0].__class__ is slice:
        t = _slice(a, 0, keys[0])        # a lone `x[:]` still records a slice
    return t, advanced


def _check_types(advanced: list) -> None:
    for _, arr in advanced:
        if arr.dtype.kind not in "iub" or arr.dtype == np.int8 or arr.dtype == np.int16:
            raise IndexError(_INDEX_TYPES)


def _advanced_key(t: Tensor, advanced: list, types_first: bool = True) -> tuple:
    """The numpy key for the advanced indices (masks become their nonzero positions), with PyTorch's
    checks in its order: index dtypes, mask shapes, broadcasting, empty dims, bounds. Writing a
    Python number checks each index's dtype and mask shape in turn instead."""
    shape = t._a.shape
    key = [slice(None)] * len(shape)
    arrays = []                  # (dim, array) after masks are expanded
    if types_first:
        _check_types(advanced)
    for dim, arr in advanced:
        if not types_first:
            _check_types(((dim, arr),))
        if _is_mask(arr):
            for j, n in enumerate(arr.shape):
                if dim + j >= len(shape) or shape[dim + j] != n:
                    raise IndexError(f"The shape of the mask {list(arr.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            arrays.extend(zip(range(dim, dim + arr.ndim), np.nonzero(arr)))
        else:
            arrays.append((dim, arr))
    try:
        broadcast = np.broadcast_shapes(*(arr.shape for _, arr in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(arr.shape)) for _, arr in arrays)) from None
    for dim, arr in arrays:
        if shape[dim] == 0 and arr.size:
            raise IndexError("index is out of bounds for dimension with size 0")
    empty = 0 in broadcast or t._a.size == 0       # nothing is read, so no index is checked
    for j, (dim, arr) in enumerate(arrays):
        size = shape[dim]
        outside = (arr >= size) | (arr < -size)
        if outside.any():
            if not empty:
                raise _out_of_bounds(int(arr[outside].flat[0]), j, size)
            arr = np.where(outside, 0, arr)
        key[dim] = arr.astype(np.intp, copy=False)
    return tuple(key)


def getitem(a: Tensor, key) -> Tensor:
    keys = _key_tuple(key)
    t, advanced = _basic(a, keys, key.__class__ is not tuple and keys[0] is key, False)
    if advanced:
        npkey = _advanced_key(t, advanced)
        x = t._a
        return record(INDEX, x[npkey], (t,), (x.shape, npkey))
    if t is a:
        return _view(a, a._a.view(), ALIAS, ())
    return t


# The largest magnitude a Python number may have when written into a tensor of each dtype, and the
# C++ type PyTorch's overflow message names (float16 and float64 accept anything, as in PyTorch).
_INT_RANGES = {"int64": ("int64_t", -2**63, 2**63 - 1), "int32": ("int", -2**31, 2**31 - 1),
               "int16": ("int16_t", -2**15, 2**15 - 1), "int8": ("int8_t", -128, 127),
               "uint8": ("uint8_t", 0, 255)}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _scalar_value(value, x: np.ndarray):
    """A Python number written into `x` as PyTorch converts it (a 0-d tensor of x's dtype), with its errors."""
    if value.__class__ is int and not -2**63 <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    name = x.dtype.name
    if name in _INT_RANGES:
        if value.__class__ is bool:
            return np.asarray(value, dtype=x.dtype)
        ctype, lo, hi = _INT_RANGES[name]
        if value.__class__ is int:
            # unsigned types take negative integers down to -max (they wrap), as c10's overflow check does
            ok = (lo <= value <= hi) if lo else (-hi <= value <= hi)
        else:
            ok = value == value and lo <= value <= hi
        if not ok:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return np.asarray(int(value)).astype(x.dtype)
    if name == "float32" and value.__class__ is float and _FLOAT32_MAX < abs(value) < float("inf"):
        raise RuntimeError("value cannot be converted to type float without overflow")
    with np.errstate(over="ignore"):                # float16 rounds what it cannot hold to inf
        return np.asarray(value, dtype=x.dtype)


def setitem(a: Tensor, key, value) -> None:
    """`a[key] = value`: the key's views first, then fill_, copy_ or index_put_ on that view, in place,
    so that autograd records it as PyTorch does (CopySlices on the base when the target is a view)."""
    if value.__class__ is Tensor:
        src = value
    elif isinstance(value, (int, float)):
        src = None
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {dtypes.of_array(a._a).legacy}")
    keys = _key_tuple(key)
    single = key.__class__ is not tuple and keys[0] is key
    if single and key is False:
        return                         # PyTorch writes nothing and records nothing
    if single and key is True:
        keys = (None,)                 # a lone True is a new dim of size 1, written by copy_
    t, advanced = _basic(a, keys, single, True)
    number = src is None
    if number:
        src = Tensor(_scalar_value(value, a._a))
    npkey = _advanced_key(t, advanced, not number) if advanced else None
    if autograd._grad_enabled[0] and a.requires_grad and a.grad_fn is None:
        # PyTorch writes through a view even for `x[...]`, so a leaf always gets the view's refusal
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if advanced:
        if src._a.dtype != t._a.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{recording.type_word(t._a)} for the destination and "
                               f"{recording.type_word(src._a)} for the source.")
        target = t._a[npkey].shape
        try:
            fits = np.broadcast_shapes(src._a.shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(src._a.shape)} cannot be broadcast "
                               f"to indexing result of shape {list(target)}")
        t._inplace(lambda base, v: index_put(base, npkey, v), src)
    elif src._a.ndim == 0 and t._a.ndim:
        t._inplace(ops.fill, src)
    else:
        v = _leading_ones_dropped(src, t._a.ndim)
        ops.expand(Tensor(v._a), t._a.shape)        # PyTorch's words when v does not fit
        t._inplace(ops.copy, v)


def _leading_ones_dropped(v: Tensor, ndim: int) -> Tensor:
    """copy_'s source for a target of `ndim` dims: leading dims of size 1 beyond those dropped."""
    lead = 0
    while v._a.ndim - lead > ndim and v._a.shape[lead] == 1:
        lead += 1
    return ops.view(v, v._a.shape[lead:]) if lead else v


def index_put(a: Tensor, key: tuple, v: Tensor) -> Tensor:
    """The out-of-place twin of `a.index_put_(key, v)`: a copy of `a` with v (cast, broadcast) written at key."""
    out = a._a.copy()
    vals = v._a
    out[key] = vals
    if out.dtype.kind != "f":
        return Tensor(out)
    return record(INDEX_PUT_, out, (a, v), (key,), None, [None, (vals.shape, vals.dtype)])


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
