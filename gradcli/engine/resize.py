"""Tensor.resize_ and resize_as_: a tensor's shape changed in place over its storage, the storage grown when the
new shape needs more of it; and the deprecated Tensor.resize and resize_as, which only reshape (PyTorch's Python
Function Resize).

PyTorch keeps a tensor's elements in a storage that resize_ may grow, never shrink: a tensor resized to fewer
elements and back gets its old values again. gradcli keeps a tensor's elements in a numpy array, so the storage
of a tensor resize_ has changed is recorded here (the flat array its elements now lie in), by the identity of
the tensor that owns it (the view's base for a view). Elements a grown storage adds are 0 in gradcli; PyTorch
leaves them uninitialised (whatever the allocator hands back), so no script can count on them."""

from __future__ import annotations

import functools
import operator
import weakref

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine import autograd, dtypes, signatures
from gradcli.engine.layout import memory_format_arg, new_in_format, standard_strides
from gradcli.engine.tensor import Tensor

# id(owner tensor) -> (a weak reference to it, the flat array of its storage), for the tensors resize_ changed
_STORAGES: dict = {}


def _storage(owner: Tensor) -> np.ndarray | None:
    """The flat array of `owner`'s storage (a tensor that is no view), starting where its elements start; None
    when its elements do not lie densely from its first one (a layout gradcli cannot resize over)."""
    entry = _STORAGES.get(id(owner))
    if entry is not None and entry[0]() is owner:
        return entry[1]
    a = owner._a
    if a.size > 1 and (min(a.strides) < 0 or sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize
                   != a.size * a.itemsize):
        return None
    return as_strided(a, (a.size,), (a.itemsize,))


def _remember(owner: Tensor, flat: np.ndarray) -> None:
    key = id(owner)
    _STORAGES[key] = (weakref.ref(owner, lambda ref, key=key: _forget(key, ref)), flat)


def _forget(key: int, ref) -> None:
    entry = _STORAGES.get(key)
    if entry is not None and entry[0] is ref:
        del _STORAGES[key]


def resize_(self: Tensor, *size, memory_format=None, **kw) -> Tensor:
    """x.resize_(*size): x takes the shape `size`, its elements laid out contiguously (or in `memory_format`)
    from where they start in its storage; the storage grows when it is too small."""
    from gradcli.engine.ops.shape import int_list
    for k in kw:
        if k != "size" or size:
            raise TypeError(f"resize_() got {'multiple values for' if k == 'size' else 'an unexpected keyword'} "
                            f"argument '{k}'")
        size = (kw[k],)
    if not size:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    shape = int_list(size, "resize_", "size")
    return _resized(self, shape, memory_format_arg("resize_", memory_format))


def resize_as_(self: Tensor, *args, **kwargs) -> Tensor:
    """x.resize_as_(other): x.resize_(other.size()), other's layout not followed."""
    message = signatures.check("Tensor.resize_as_", args, kwargs)
    if message is not None:
        raise TypeError(message)
    _, values = signatures.bound("Tensor.resize_as_", args, kwargs)
    return _resized(self, values["the_template"]._a.shape, values["memory_format"])


def torch_resize_as_(*args, **kwargs) -> Tensor:
    """torch.resize_as_(input, the_template)."""
    message = signatures.check("torch.resize_as_", args, kwargs)
    if message is not None:
        raise TypeError(message)
    _, values = signatures.bound("torch.resize_as_", args, kwargs)
    return _resized(values["input"], values["the_template"]._a.shape, values["memory_format"])


def _resized(t: Tensor, shape: tuple, fmt) -> Tensor:
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if t.__class__ is not Tensor or t._a.__class__ is not np.ndarray:
        raise NotImplementedError("gradcli does not implement torch.Tensor.resize_ of a meta or sparse tensor")
    numel = 1
    for d in shape:
        numel *= d
    if any(d < 0 for d in shape) or numel >= 1 << 63:
        if numel == 0:
            raise NotImplementedError("gradcli does not implement torch.Tensor.resize_ to a negative size")
        raise RuntimeError("numel: integer multiplication overflow")
    if fmt is dtypes.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    a = t._a
    if tuple(shape) == a.shape and fmt in (None, dtypes.contiguous_format) and (fmt is None or a.flags.c_contiguous):
        return t                                    # the same size: nothing changes, the version neither
    owner = t._base if t._base is not None else t
    flat = _storage(owner)
    if flat is None:
        raise NotImplementedError("gradcli does not implement torch.Tensor.resize_ of a tensor whose storage is "
                                  "not laid out densely")
    offset = t.storage_offset()
    strides = standard_strides(tuple(shape), a.itemsize)
    if fmt is not None and fmt is not dtypes.contiguous_format:
        strides = new_in_format(tuple(shape), fmt, lambda s: np.empty(s, a.dtype)).strides
    needed = offset + (1 + sum((n - 1) * s // a.itemsize for n, s in zip(shape, strides)) if numel else 0)
    if needed > flat.size:
        grown = np.zeros(needed, a.dtype)           # (PyTorch's new elements are uninitialised memory)
        grown[:flat.size] = flat
        flat = grown
        if owner is not t:                           # the base reads the grown storage too
            o = owner._a
            owner._a = as_strided(flat, o.shape, o.strides)
    _remember(owner, flat)
    t._a = as_strided(flat[offset:], tuple(shape), strides)
    if t._inference and not autograd.is_inference_mode_enabled():
        # (PyTorch resizes, then refuses to count the change on an inference tensor's version)
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    t._version[0] += 1
    return t


def resize(self: Tensor, *sizes) -> Tensor:
    """x.resize(*sizes) (deprecated): x's elements in the shape `sizes`, which must hold as many."""
    from gradcli.engine.state import STATE
    if STATE.warn is not None:      # (a session shows it; the engine used alone does not)
        STATE.warn("UserWarning", "non-inplace resize is deprecated")
    return _reshaped(self, sizes)


def resize_as(self: Tensor, tensor) -> Tensor:
    """x.resize_as(other) (deprecated): x.resize(other.size())."""
    from gradcli.engine.state import STATE
    if STATE.warn is not None:      # (a session shows it; the engine used alone does not)
        STATE.warn("UserWarning", "non-inplace resize_as is deprecated")
    if tensor.__class__ is not Tensor:
        raise AttributeError(f"'{signatures.type_name(tensor)}' object has no attribute 'size'")
    return _reshaped(self, tensor.size())


def _reshaped(t: Tensor, sizes) -> Tensor:
    """PyTorch's Resize.apply(t, sizes): its element count computed and worded as its Python code does, then a view
    of t (of a contiguous copy of t when t is not contiguous) recorded as ResizeBackward."""
    from gradcli.engine.ops import shape
    numel = functools.reduce(operator.mul, sizes, 1)
    have = t._a.size
    if have != numel:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, t._a.shape))} ({have} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the number "
                           "of elements. ")
    with autograd.no_grad():
        source = t if t.is_contiguous() else Tensor(np.ascontiguousarray(t._a))
        out = shape.view(source, *sizes)._a
    if source is t:
        return shape._view_of(t, out, shape.RESIZE, (t._a.shape,))
    from gradcli.engine.recording import apply
    return apply(shape.RESIZE, out, (t,), (t._a.shape,))

