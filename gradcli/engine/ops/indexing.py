"""Indexing: reading with integers, slices, None, ..., masks and index tensors, and item assignment."""

from __future__ import annotations

import operator

import numpy as np

from gradcli.engine import autograd, dtypes, ops, recording
from gradcli.engine.autograd import _fit
from gradcli.engine.recording import Op, apply, wrap_int64
from gradcli.engine.layout import unsqueezed
from gradcli.engine.ops import shape as _shape
from gradcli.engine.ops.shape import _view_of as _view
from gradcli.engine.state import STATE
from gradcli.engine.tensor import INFERENCE_INPLACE_ERROR, Tensor

# Basic indexing is decomposed the way PyTorch records it: one node per integer (select), per
# non-trivial slice (slice) and per None (unsqueeze), so X[0, 1] is SelectBackward0 of SelectBackward0.
# Anything with a list, a bool or a tensor in it is advanced indexing: one IndexBackward0.

# The forward-mode columns are PyTorch's auto_linear (see ops/shape.py): the same view or gather of the
# tangent; index_put_ takes zeros for a side without one.
# fmt: off
SELECT     = Op("SelectBackward0",    None,    ("shape", "key"),
                (lambda F, g, shape, key: F.scatter(g, shape, key, "select"),))
SLICE      = Op("SliceBackward0",     None,    ("shape", "key"),
                (lambda F, g, shape, key: F.scatter(g, shape, key, "slice"),))
UNSQUEEZE  = Op("UnsqueezeBackward0", None,    ("dim",),              (lambda F, g, dim: F.squeeze(g, dim),))
ALIAS      = Op("AliasBackward0",     None,    (),                    (lambda F, g: g,))
# forward_ad.unpack_dual's primal: a view of the dual tensor without its tangent
IDENTITY   = Op("Identity",           None,    (),                    (lambda F, g: g,))
INDEX      = Op("IndexBackward0",     None,    ("shape", "key"),
                (lambda F, g, shape, key: _index_backward(F, g, shape, key),), saves_tensors=True)
# index_backward under create_graph: zeros with the gradient added at the indexed places, as PyTorch records
# _index_put_impl_(zeros, indices, grad, accumulate=True): its `self` (the zeros) passes the gradient on, its
# `values` (the incoming gradient) get the gradient read at the indices
INDEX_PUT_IMPL = Op("IndexPutImplBackward0", None, ("key", "values_fit"),
                    (lambda F, g, key, values_fit: g,
                     lambda F, g, key, values_fit: _fit(F, F.getitem(g, key), values_fit)),
                    inputs=("self", "values"), jvp=lambda F, ts, xs, result, key, values_fit: _index_put_impl_jvp(ts, xs, key))
# values broadcast to the indexed part, not to the result: their gradient is fitted by the formula; `held`: the
# index tensors the script gave (changing one in place fails the backward pass, as PyTorch saves them)
INDEX_PUT_ = Op("IndexPutBackward0",  None,    ("key", "values_fit", "held"),
                (lambda F, g, key, values_fit, held: F.zero_at(g, key),
                 lambda F, g, key, values_fit, held: _fit(F, F.getitem(g, key), values_fit)),
                inputs=("self", "values"), versioned=("held",),
                jvp=lambda F, ts, xs, result, key, values_fit, held: _index_put_jvp(ts, xs, key))
# fmt: on

# alias passes the tangent itself on in PyTorch: here a view of all of it, so that it stays the same data
ALIAS.jvp = _shape._linear_view(ALIAS, lambda x, r: x.view())
IDENTITY.jvp = _shape._linear_view(IDENTITY, lambda x, r: x.view())
SELECT.jvp = _shape._linear_view(SELECT, lambda x, r, shape, key: x[key])
SLICE.jvp = _shape._linear_view(SLICE, lambda x, r, shape, key: x[key])
UNSQUEEZE.jvp = _shape._linear_view(UNSQUEEZE, lambda x, r, dim: np.expand_dims(x, dim))
INDEX.jvp = _shape._linear_copy(INDEX, lambda x, r, shape, key: x[key])


def _index_backward(F, g, shape, key):
    if not F.tensors:
        return F.index_add(g, shape, key)
    out = np.zeros(shape, dtype=g._a.dtype)
    np.add.at(out, key, g._a)
    return apply(INDEX_PUT_IMPL, out, (Tensor(np.zeros(shape, dtype=g._a.dtype)), g), (key, (g._a.shape, g._a.dtype)))


def _index_put_impl_jvp(ts, xs, key):
    """_index_put_impl_'s tangent with accumulate: the values' tangent added at the indices to self's."""
    from gradcli.engine import forward
    self_t = forward.tangent_or_zeros(ts, xs, 0)
    added = index_add(forward.tangent_or_zeros(ts, xs, 1), self_t._a.shape, key)
    return added if ts[0] is None else self_t + added


def _index_put_jvp(ts, xs, key):
    """index_put's `self_t.index_put(indices, values_t)`, zeros standing in for a missing tangent."""
    from gradcli.engine import forward
    return index_put(forward.tangent_or_zeros(ts, xs, 0), key, forward.tangent_or_zeros(ts, xs, 1))


_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
             "to convert a 0-dim tensor to a number")
_INDEX_TYPES = "tensors used as indices must be long, int, byte or bool tensors"

def _bad_index(k):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      f"indices (got {type(k).__name__})")


def _out_of_bounds(i, dim, size):
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


_SEQUENCES = (list, tuple, range, str)


def _key_tuple(key) -> tuple:
    """The key as a tuple. A list is one index tensor unless an element is a sequence, a tensor, a slice,
    `...` or None: then (as PyTorch still does) it is the tuple of its elements."""
    if key.__class__ is tuple:
        return key
    if key.__class__ is list and len(key) < 32:
        for k in key:
            if k is None or k is Ellipsis or k.__class__ in _SEQUENCES or k.__class__ is slice or k.__class__ is Tensor:
                return tuple(key)
    elif key.__class__ is not list and isinstance(key, (list, tuple)):     # a subclass (a namedtuple, torch.Size):
        return _key_tuple(_as_base(key))        # as its base, as in PyTorch
    return (key,)


def _index_array(k):
    """The array of a tensor, sequence or numpy index, or None for any other key element. A sequence
    becomes a bool mask or int64 indices (floats truncated), as PyTorch's indexing tensors do."""
    if k.__class__ is Tensor:
        return k._a
    if k.__class__ in _SEQUENCES:
        if k.__class__ is not range:
            odd = _first_non_number(k)
            if odd.__class__ is str or odd.__class__ is bytes:
                raise TypeError(f"new(): invalid data type '{type(odd).__name__}'")
            if odd is not _NUMBERS_ONLY:
                raise RuntimeError(f"Could not infer dtype of {type(odd).__name__}")
        arr = np.asanyarray(k if k.__class__ is not range else list(k))
        if arr.dtype.kind in "uOf":      # numpy's answer to an int past int64 (or one mixed with floats)
            _check_ints(k)
        if arr.dtype.kind in "fV" and not ((arr >= -2.0 ** 63) & (arr < 2.0 ** 63)).all():
            # each number goes to int64 through PyTorch's checked conversion (NaN fails it too)
            raise RuntimeError("value cannot be converted to type int64 without overflow")
        return arr if arr.dtype == np.bool_ else arr.astype(np.int64)
    if k.__class__ is np.ndarray:
        return k
    if isinstance(k, (list, tuple)):        # a list or tuple subclass inside a key: as its base
        return _index_array(_as_base(k))
    return None


def _as_base(seq):
    """A list or tuple subclass's items as its base holds them, read as PyTorch reads them (C-level, running none
    of a script's __iter__ or __getitem__)."""
    return list.copy(seq) if isinstance(seq, list) else tuple.__getitem__(seq, slice(None))


_NUMBERS_ONLY = object()
_OVERFLOW = "Overflow when unpacking long long"


def _int64(i: int) -> int:
    """An integer index as PyTorch unpacks it into a C long long."""
    if not -2**63 <= i < 2**63:
        raise ValueError(_OVERFLOW)
    return i


def _check_ints(seq) -> None:
    """Every int in a (nested) sequence index fits int64, as PyTorch's tensor conversion requires."""
    for v in seq:
        if v.__class__ is list or v.__class__ is tuple:
            _check_ints(v)
        elif v.__class__ is int:
            _int64(v)


def _first_non_number(seq):
    """The first item of a (nested) sequence that is not an int, float or bool, else _NUMBERS_ONLY."""
    if seq.__class__ is str or seq.__class__ is bytes:
        return seq
    for v in seq:
        if v.__class__ is list or v.__class__ is tuple:
            v = _first_non_number(v)
            if v is _NUMBERS_ONLY:
                continue
        if v.__class__ is not int and v.__class__ is not float and v.__class__ is not bool:
            return v
    return _NUMBERS_ONLY


def _is_mask(arr) -> bool:
    return arr.dtype == np.bool_ or arr.dtype == np.uint8


def _specified(keys) -> int:
    """How many of the tensor's dims the key names (PyTorch counts a mask's dims, not None/.../bools)."""
    n = 0
    for k in keys:
        if k is None or k is Ellipsis or k is True or k is False:
            continue
        arr = k._a if k.__class__ is Tensor else k if isinstance(k, np.ndarray) else None
        n += arr.ndim if arr is not None and _is_mask(arr) else 1      # a sequence counts 1, as in PyTorch
    return n


def _trivial(k: slice, size: int) -> bool:
    """A slice that keeps a whole dim, which PyTorch skips inside a tuple key (no SliceBackward0)."""
    start, stop, step = k.start, k.stop, k.step
    return (start is None or start.__class__ is int and start == 0) \
        and (stop is None or stop.__class__ is int and stop >= size) \
        and (step is None or step.__class__ is int and step == 1)      # (anything else: _slice checks it)


def _select(steps: list, cur: np.ndarray, dim: int, i, position: int) -> np.ndarray:
    i = _int64(i.__index__())
    size = cur.shape[dim] if dim < cur.ndim else 0      # two `...` can point past the last dim
    if i < -size or i >= size:
        raise _out_of_bounds(i, position, size)
    k = (slice(None),) * dim + (i, Ellipsis)      # the Ellipsis keeps a 0-d result a view, not a copy
    out = cur[k]
    steps.append((SELECT, out, (cur.shape, k)))
    return out


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


_INT64_MAX = 2**63 - 1


def _huge_step(cur: np.ndarray, dim: int, k: slice) -> slice:
    """A slice whose step reaches 2**31: PyTorch clamps its parts to int64 and computes the view's
    size and stride in int64, which wraps past 2**63 (an empty dim, or one of the errors of its
    view checks); the slice that gives the same view here."""
    n = cur.shape[dim]
    try:
        start, stop, step = (min(max(v.__index__(), -_INT64_MAX - 1), _INT64_MAX) if v is not None else None
                             for v in (k.start, k.stop, k.step))
    except (AttributeError, TypeError):
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    start, stop, _ = slice(start, stop).indices(n)
    stop = max(stop, start)
    size = wrap_int64(stop - start + step - 1)
    size = size // step if size >= 0 else -(-size // step)       # C's division rounds toward zero
    sizes = list(cur.shape)
    sizes[dim] = size
    strides = [s // cur.itemsize for s in cur.strides] if cur.itemsize else [0] * cur.ndim
    strides[dim] = wrap_int64(strides[dim] * step)
    for v in sizes + strides:
        if v < -2**62:
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {v}")
    if any(v < 0 for v in strides):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {strides}")
    if size < 0 and 0 in sizes:
        size = 0        # PyTorch keeps a dim of -1 in an empty tensor; an empty dim is the nearest here
    if size < 0:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={sizes} and strides={strides}")
    return slice(start, start + size)       # a size of 0 or 1: the stride no longer matters


def _slice(steps: list, cur: np.ndarray, dim: int, k: slice) -> np.ndarray:
    _check_step(k)
    if k.step is not None and k.step.__index__() >= 2**31:
        k = _huge_step(cur, dim, k)
    key = (slice(None),) * dim + (k,)
    try:
        out = cur[key]
    except TypeError:
        for v in (k.start, k.stop, k.step):
            if v.__class__ is Tensor:
                v.__index__()           # a tensor that is no index: its own words
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    steps.append((SLICE, out, (cur.shape, key)))
    return out


def _unsqueeze(steps: list, cur: np.ndarray, dim: int) -> np.ndarray:
    out = unsqueezed(cur, dim)
    steps.append((UNSQUEEZE, out, (dim,)))
    return out


def _basic(a: Tensor, keys: tuple, single: bool, for_set: bool):
    """Walk the key's integers, slices, Nones and `...` left to right as PyTorch applies them (each a
    view of the last); return the views as steps (row, array, saved), and the advanced indices met
    on the way as (dim of the last view, array)."""
    cur = a._a
    ndim = cur.ndim
    if single:
        k = keys[0]
        if ndim == 0 and k.__class__ is slice:
            _check_step(k)
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if ndim == 0 and k.__class__ is int:
            if _int64(k) == 0:
                raise IndexError(_ZERO_DIM)
            raise _out_of_bounds(k, 0, 0)
    specified = _specified(keys)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    steps = []
    advanced = []
    dim = 0
    for position, k in enumerate(keys):
        if k is None:
            cur = _unsqueeze(steps, cur, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - specified
        elif k.__class__ is slice:
            if (for_set or not single) and _trivial(k, cur.shape[dim]):
                dim += 1
                continue
            cur = _slice(steps, cur, dim, k)
            dim += 1
        elif k is True or k is False:
            cur = _unsqueeze(steps, cur, dim)
            advanced.append((dim, np.zeros(1 if k else 0, dtype=np.int64)))
            dim += 1
        elif k.__class__ is int:
            cur = _select(steps, cur, dim, k, position)
        else:
            arr = _index_array(k)
            if arr is None:
                if hasattr(k, "__index__") and k.__class__ is not float:
                    cur = _select(steps, cur, dim, k, position)
                    continue
                raise _bad_index(k)
            if arr.ndim == 0 and arr.dtype.kind in "iu" and arr.dtype != np.uint8:
                cur = _select(steps, cur, dim, int(arr), position)
            elif arr.ndim == 0 and _is_mask(arr):
                cur = _unsqueeze(steps, cur, dim)
                advanced.append((dim, np.zeros(1 if arr else 0, dtype=np.int64)))
                dim += 1
            else:
                advanced.append((dim, arr))
                dim += arr.ndim if _is_mask(arr) else 1
    if single and not for_set and not steps and keys[0].__class__ is slice:
        _slice(steps, cur, 0, keys[0])       # a lone `x[:]` still records a slice
    return steps, advanced


def _views(a: Tensor, steps: list) -> Tensor:
    """The last step's view of `a`: one node per step when autograd records them, else one tensor."""
    if not steps:
        return a
    if not (a.requires_grad and STATE.recording) and (STATE.fw_level is None or not _dual(a)):
        return _view(a, steps[-1][1], ALIAS, ())
    t = a
    for row, out, saved in steps:
        t = _view(t, out, row, saved)
    return t


def _dual(a: Tensor) -> bool:
    """Whether `a` has a tangent (its own or its base's): each view step then takes its part of it."""
    from gradcli.engine import forward
    return forward.is_dual(a)


BYTE_MASK = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. (Triggered "
             "internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)")
BYTE_FILL = "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"


def refuse_byte_fill(shape: tuple, dim: int, mask: np.ndarray) -> None:
    """One value written through one uint8 mask (at dim `dim`): PyTorch's index_put_ hands it to masked_fill_,
    after checking the mask's shape, and masked_fill_ takes bool masks only."""
    for j, n in enumerate(mask.shape):
        if dim + j >= len(shape) or shape[dim + j] != n:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape of "
                             f"the indexed tensor {list(shape)} at index {dim + j}")
    raise RuntimeError(BYTE_FILL)


def _check_types(advanced: list) -> None:
    for _, arr in advanced:
        if arr.dtype.kind not in "iub" or arr.dtype == np.int8 or arr.dtype == np.int16:
            raise IndexError(_INDEX_TYPES)


def _advanced_key(x: np.ndarray, advanced: list, leading_masks_first: bool = False) -> tuple:
    """The numpy key for the advanced indices (masks become their nonzero positions), with PyTorch's
    checks in its order: index dtypes, mask shapes, broadcasting, empty dims, bounds. Writing a
    Python number (as observed on PyTorch 2.13) checks the masks that come before any other index
    tensor ahead of the dtypes."""
    shape = x.shape
    key = [slice(None)] * len(shape)
    arrays = []                  # (dim, array) after masks are expanded
    checked = not leading_masks_first
    if checked:
        _check_types(advanced)
    for dim, arr in advanced:
        if not checked and not _is_mask(arr):
            _check_types(advanced)
            checked = True
        if _is_mask(arr):
            if arr.dtype == np.uint8 and STATE.warn is not None:
                STATE.warn("UserWarning", BYTE_MASK)
            for j, n in enumerate(arr.shape):
                if dim + j >= len(shape) or shape[dim + j] != n:
                    raise IndexError(f"The shape of the mask {list(arr.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            arrays.extend(zip(range(dim, dim + arr.ndim), np.nonzero(arr)))
        else:
            arrays.append((dim, arr))
    try:
        broadcast = arrays[0][1].shape if len(arrays) == 1 else np.broadcast_shapes(*(arr.shape for _, arr in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(arr.shape)) for _, arr in arrays)) from None
    if not checked:
        _check_types(advanced)
    if 0 not in broadcast:
        for dim, arr in arrays:
            if shape[dim] == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
    empty = 0 in broadcast or x.size == 0          # nothing is read, so no index is checked
    for j, (dim, arr) in enumerate(arrays):
        size = shape[dim]
        outside = (arr >= size) | (arr < -size)
        if outside.any():
            if not empty:
                raise _first_out_of_bounds(arrays, shape, broadcast)
            arr = np.where(outside, 0, arr)
        key[dim] = arr.astype(np.intp, copy=False)
    return tuple(key)


def _first_out_of_bounds(arrays: list, shape: tuple, broadcast: tuple) -> IndexError:
    """The error PyTorch's index kernel raises: it visits the broadcast index positions in order and,
    at each, checks the index tensors in order, so the first position holding any bad index names it."""
    outside = [np.broadcast_to((arr >= shape[dim]) | (arr < -shape[dim]), broadcast).ravel()
               for dim, arr in arrays]
    position = int(np.argmax(np.logical_or.reduce(outside)))
    for j, (dim, arr) in enumerate(arrays):
        if outside[j][position]:
            return _out_of_bounds(int(np.broadcast_to(arr, broadcast).ravel()[position]), j, shape[dim])


def select(a: Tensor, dim, index) -> Tensor:
    """x.select(dim, index): the slice at `index` along `dim`, as x[:, ..., index] (SelectBackward0), with
    select()'s own messages."""
    recording.int_param(dim, index)
    x = a._a
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = recording.wrap_dim(dim, x.ndim)
    i = index.__index__()
    if not -x.shape[d] <= i < x.shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size [{', '.join(map(str, x.shape))}] "
                         f"at dimension {d}")
    steps: list = []
    _select(steps, x, d, i, 0)
    if operator.index(dim) < 0:
        steps[-1] = (SELECT, steps[-1][1], (x.shape, given_dim_key(i, dim, x.ndim)))
    return _views(a, steps)


def given_dim_key(element, dim: int, ndim: int) -> tuple:
    """The key of select's, narrow's or unbind's one step along `dim` as the script gave it: counted from the
    left (leading full slices), or for a negative dim from the right (an Ellipsis, then trailing full slices),
    so that the node's _saved_dim gives the dim as given (saved._index_value)."""
    dim = operator.index(dim)
    if dim < 0:
        return (Ellipsis, element) + (slice(None),) * (-dim - 1)
    return (slice(None),) * dim + (element,)


def getitem(a: Tensor, key) -> Tensor:
    if key.__class__ is int and a._a.ndim:          # x[i], the commonest key: one select
        steps = []
        _select(steps, a._a, 0, key, 0)
        return _views(a, steps)
    keys = _key_tuple(key)
    steps, advanced = _basic(a, keys, key.__class__ is not tuple and keys[0] is key, False)
    if advanced:
        if any(arr.__class__ is not np.ndarray and _is_mask(arr) for _, arr in advanced):
            from gradcli.engine import meta         # a meta mask: how many elements it picks is data
            raise NotImplementedError(meta.NO_NONZERO)
        x = steps[-1][1] if steps else a._a
        npkey = _advanced_key(x, advanced)
        # the input matters only to a recorded node, or to forward mode (whose tangent is indexed as x is)
        t = _views(a, steps) if a.requires_grad or STATE.fw_level is not None else a
        return apply(INDEX, x[npkey], (t,), (x.shape, npkey))
    if not steps:
        return _view(a, a._a.view(), ALIAS, ())
    return _views(a, steps)


# The largest magnitude a Python number may have when written into a tensor of each dtype, and the
# C++ type PyTorch's overflow message names (float16 and float64 accept anything, as in PyTorch).
_INT_RANGES = {np.dtype(np.int64): ("int64_t", -2**63, 2**63 - 1), np.dtype(np.int32): ("int", -2**31, 2**31 - 1),
               np.dtype(np.int16): ("int16_t", -2**15, 2**15 - 1), np.dtype(np.int8): ("int8_t", -128, 127),
               np.dtype(np.uint8): ("uint8_t", 0, 255)}
_FLOAT32 = np.dtype(np.float32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_INF = float("inf")


def _scalar_value(value, dtype: np.dtype) -> np.ndarray:
    """A Python number as PyTorch writes it into a tensor of `dtype` (a 0-d array), with its errors."""
    if value.__class__ is int:
        _int64(value)
    elif value.__class__ is complex and dtype.kind != "c":      # a real tensor takes a complex with no imaginary part
        if value.imag:
            from gradcli.engine.recording import _CXX_NAMES
            raise RuntimeError(f"value cannot be converted to type {_CXX_NAMES.get(dtype.name, dtype.name)} without "
                               "overflow")
        value = value.real
    limits_ = _INT_RANGES.get(dtype)
    if limits_ is not None and value.__class__ is not bool:
        ctype, lo, hi = limits_
        if value.__class__ is int:
            # unsigned types take negative integers down to -max (they wrap), as c10's overflow check does
            ok = (lo <= value <= hi) if lo else (-hi <= value <= hi)
        else:
            ok = value == value and lo <= value <= hi
        if not ok:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return np.asanyarray(int(value)).astype(dtype)
    if dtype == _FLOAT32 and value.__class__ is float and _FLOAT32_MAX < abs(value) < _INF:
        raise RuntimeError("value cannot be converted to type float without overflow")
    with np.errstate(over="ignore"):                # float16 rounds what it cannot hold to inf
        return np.asanyarray(value, dtype=dtype)


def setitem(a: Tensor, key, value) -> None:
    """`a[key] = value`: the key's views first, then fill_, copy_ or index_put_ on that view, in place,
    so that autograd records it as PyTorch does (CopySlices on the base when the target is a view)."""
    number = value.__class__ is not Tensor
    if number and not isinstance(value, (int, float, complex)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {dtypes.of_array(a._a).legacy}")
    # a number becomes the tensor's dtype before the key is read (its overflow check comes first)
    v = _scalar_value(value, a._a.dtype) if number else value._a
    keys = _key_tuple(key)
    single = key.__class__ is not tuple and keys[0] is key
    if single and key is False:
        return                         # PyTorch writes nothing and records nothing
    if single and key is True:
        keys = (None,)                 # a lone True is a new dim of size 1, written by copy_
    steps, advanced = _basic(a, keys, single, True)
    x = steps[-1][1] if steps else a._a           # the region written
    if len(advanced) == 1 and advanced[0][1].dtype == np.uint8 and v.size == 1:
        refuse_byte_fill(x.shape, advanced[0][0], advanced[0][1])
    npkey = _advanced_key(x, advanced, number) if advanced else None
    grad_on = STATE.recording
    if grad_on and a.requires_grad and a.grad_fn is None:
        # PyTorch writes through a view even for `x[...]`, so a leaf always gets the view's refusal; a view
        # made in no-grad mode, the refusal its views inherit (a view of it, the view-of-a-view one below)
        if a._base is not None and a._base.requires_grad:
            if not steps:
                ops.check_inplace_view(a)
        else:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    fill = False
    if advanced:
        check_put_values(x, npkey, v)
    elif v.ndim == 0 and x.ndim:
        fill = True
    elif v.shape != x.shape:
        lead = 0                       # copy_ drops the value's leading dims of size 1 beyond the target's
        while v.ndim - lead > x.ndim and v.shape[lead] == 1:
            lead += 1
        v = v.reshape(v.shape[lead:])
        ops.expand(Tensor(v), x.shape)             # PyTorch's words when the value does not fit
    base = a._base
    if grad_on and base is not None and base.requires_grad and steps and \
            (not a.requires_grad or a.grad_fn is None):
        raise autograd.view_mode_error(a, f"Output 0 of {steps[-1][0].node[:-9]} is a view of a view which was "
                                       "created in {made} and is being modified inplace {now}.")
    if not (grad_on and (a.requires_grad or (not number and value.requires_grad)
                         or (base is not None and base.requires_grad))) \
            and (STATE.fw_level is None or not _dual_write(a, value, number)):
        # nothing to record: write straight into the storage, after the in-place rules
        if a._inference and not STATE.inference:
            raise RuntimeError(INFERENCE_INPLACE_ERROR)
        if base is not None:
            region = Tensor(x)            # PyTorch checks the view written, not the whole tensor
            region._base = base
            ops.check_inplace_view(region, overlap_ok=bool(advanced))
        if advanced:
            if ops.shape.internal_overlap(x):
                _warn_expanded(number and all(_is_mask(arr) for _, arr in advanced))
            x[npkey] = v
        else:
            np.copyto(x, v, casting="unsafe")
        a._version[0] += 1
        return
    src = Tensor(v) if number else value if v.shape == value._a.shape else ops.view(value, v.shape)
    t = _views(a, steps)
    if advanced:
        held = tuple(k for k in keys if k.__class__ is Tensor)
        t._inplace(lambda base, s: index_put(base, npkey, s, held), src)
    elif fill:
        t._inplace(ops.fill, src)
    else:
        t._inplace(ops.copy, src)


def check_put_values(x: np.ndarray, key: tuple, v: np.ndarray) -> tuple:
    """index_put_'s checks of the values written at an advanced key: the dtype, then that they broadcast to
    the indexed part (its shape returned)."""
    if v.dtype != x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{recording.type_word(x)} for the destination and "
                           f"{recording.type_word(v)} for the source.")
    target = x[key].shape
    try:
        fits = np.broadcast_shapes(v.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast "
                           f"to indexing result of shape {list(target)}")
    return target


_EXPANDED = ("Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing this "
             "operation. This also applies to advanced indexing e.g. tensor[{}] = {} (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:{}.)")


def _warn_expanded(masked: bool) -> None:
    """PyTorch's deprecation warnings for an indexed write into a tensor whose elements share memory (an
    expanded tensor, which it still writes: every place sharing an element sees the value): index_put_'s,
    and masked_fill_'s after it for a mask and a number."""
    if STATE.warn is not None:
        STATE.warn("UserWarning", _EXPANDED.format("index_put_", "indices", "tensor", 976))
        if masked:
            STATE.warn("UserWarning", _EXPANDED.format("masked_fill_", "mask", "scalar", 2450))


def masked_fill_expanded(a: Tensor, mask, value) -> bool:
    """x.masked_fill_(mask, value) on a view whose elements share memory (an expanded tensor), when nothing is
    recorded: PyTorch warns that this is deprecated and writes the value at every masked place, so each element
    shared by a masked place holds it. False when `a` does not share elements, or an op must be recorded (then
    the in-place rules refuse the write, as PyTorch's do)."""
    x = a._a
    if not ops.shape.internal_overlap(x) or (STATE.recording and (
            a.requires_grad or value.__class__ is Tensor and value.requires_grad)) or STATE.fw_level is not None:
        return False
    if a._inference and not STATE.inference:
        return False                    # (the in-place path gives PyTorch's error)
    filled = ops.masked_fill(a, mask, value)._a       # PyTorch's checks, and the values
    if STATE.warn is not None:
        STATE.warn("UserWarning", _EXPANDED.format("masked_fill_", "mask", "scalar", 2450))
    if filled.shape != x.shape:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(filled.shape)}")
    np.copyto(x, filled, where=np.broadcast_to(mask._a, x.shape), casting="unsafe")
    a._version[0] += 1
    return True


def _dual_write(a: Tensor, value, number: bool) -> bool:
    """Whether `a[key] = value` changes a forward-mode tangent (the value's, or the one `a` has or sees
    through its base): then it runs as an op on the view, as when autograd records it."""
    from gradcli.engine import forward
    return (not number and forward.is_dual(value)) or forward.is_dual(a) \
        or (a._base is not None and forward.is_dual(a._base))


def index_put(a: Tensor, key: tuple, v: Tensor, held: tuple = ()) -> Tensor:
    """The out-of-place twin of `a.index_put_(key, v)`: a copy of `a` with v (cast, broadcast) written at key
    (`held`: the index tensors the key came from, version-checked by the node)."""
    out = a._a.copy()
    vals = v._a
    out[key] = vals
    if out.dtype.kind not in "fV":
        return Tensor(out)
    return apply(INDEX_PUT_, out, (a, v), (key, (vals.shape, vals.dtype), held))


# The gradients of indexing, as ops of their own so that create_graph can differentiate them again.
# fmt: off
SELECT_BACKWARD = Op("SelectBackwardBackward0", None,    ("key",), (lambda F, g, key: F.getitem(g, key),),
                     jvp=lambda F, ts, xs, result, key: scatter(ts[0], result._a.shape, key, "select"))
SLICE_BACKWARD  = Op("SliceBackwardBackward0",  None,    ("key",), (lambda F, g, key: F.getitem(g, key),),
                     jvp=lambda F, ts, xs, result, key: scatter(ts[0], result._a.shape, key, "slice"))
INDEX_PUT       = Op("IndexPutBackward0",       None,    ("key",), (lambda F, g, key: F.getitem(g, key),),
                     jvp=lambda F, ts, xs, result, key: index_add(ts[0], result._a.shape, key))
# fmt: on


def scatter(g: Tensor, shape: tuple, key, kind: str) -> Tensor:
    """Zeros of `shape` with `g` written at `key` (the gradient of select or slice)."""
    out = np.zeros(shape, dtype=g._a.dtype)
    out[key] = g._a
    return apply(SELECT_BACKWARD if kind == "select" else SLICE_BACKWARD, out, (g,), (key,))


def index_add(g: Tensor, shape: tuple, key) -> Tensor:
    """Zeros of `shape` with `g` added at `key`, repeated indices accumulating (the gradient of indexing)."""
    out = np.zeros(shape, dtype=g._a.dtype)
    np.add.at(out, key, g._a)
    return apply(INDEX_PUT, out, (g,), (key,))
