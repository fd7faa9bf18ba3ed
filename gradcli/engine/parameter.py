"""nn.Parameter as the engine knows it: a mark on a leaf Tensor, which then prints `Parameter containing:`.

A Parameter stays a plain Tensor (the engine's `x.__class__ is Tensor` tests hold for it, so every op takes
it at full speed); what makes it one is this mark, kept by the tensor's id and dropped with the tensor, as
PyTorch's results of ops on a Parameter are plain tensors again.
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.tensor import Tensor, parameter_marks as _MARKED, uninitialized_marks as _LAZY


def is_parameter(t) -> bool:
    return id(t) in _MARKED


def mark(t: Tensor) -> Tensor:
    key = id(t)
    if key not in _MARKED:
        _MARKED[key] = weakref.ref(t, lambda _, key=key: _MARKED.pop(key, None))
    return t


def make(data=None, requires_grad=True) -> Tensor:
    """nn.Parameter(data, requires_grad): a new leaf sharing `data`'s storage and version counter."""
    if data is None:
        data = Tensor(np.empty((0,), dtypes.default_float.np))
    elif data.__class__ is not Tensor:
        raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")    # PyTorch's words
    if requires_grad.__class__ is not bool:
        raise TypeError(f"Parameter(): argument 'requires_grad' must be bool, not {type(requires_grad).__name__}")
    p = Tensor(data._a)
    p._version = data._version
    if requires_grad:
        if p._a.dtype.kind not in "fVc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p.requires_grad = True
    return mark(p)



# ------------------------------------------------------------------ lazy modules' placeholders

def uninitialized(kind: str, dtype=None, on_meta=False) -> Tensor:
    """torch.nn.UninitializedParameter() / UninitializedBuffer(): an empty tensor of `dtype` (on the meta device
    when `on_meta`) that prints as `<kind>` until materialize() gives it its shape (in place: holders of it see the
    new values)."""
    t = Tensor(np.empty((0,), (dtype or dtypes.default_float).np))
    if on_meta:
        from gradcli.engine import meta
        t = Tensor(meta.meta_like(t._a))
    if kind == "UninitializedParameter":
        t.requires_grad = True
        mark(t)
    key = id(t)
    _LAZY[key] = (weakref.ref(t, lambda _, key=key: _LAZY.pop(key, None)), kind)
    return t


def uninitialized_kind(t) -> str | None:
    entry = _LAZY.get(id(t)) if _LAZY else None
    return None if entry is None else entry[1]


def carry_uninitialized(old: Tensor, new: Tensor) -> Tensor:
    """`new`, made from the placeholder `old` (a dtype conversion, a detached copy), as a placeholder too."""
    kind = uninitialized_kind(old)
    if kind is not None and uninitialized_kind(new) is None:
        key = id(new)
        _LAZY[key] = (weakref.ref(new, lambda _, key=key: _LAZY.pop(key, None)), kind)
    return new


def materialize(t: Tensor, shape: tuple) -> None:
    """UninitializedTensorMixin.materialize: the placeholder becomes an (uninitialised) tensor of `shape`."""
    from gradcli.engine import budget
    if t._a.__class__ is not np.ndarray:        # a placeholder on the meta device stays there
        from gradcli.engine import meta
        t._set_data(Tensor(meta.meta_full(tuple(shape), 0, t._a.dtype)))
    else:
        budget.check_tensor(tuple(shape), t._a.itemsize)
        t._set_data(Tensor(np.empty(tuple(shape), t._a.dtype)))
    _LAZY.pop(id(t), None)


def uninitialized_error(t: Tensor, method: str) -> ValueError:
    """PyTorch's refusal of a tensor method on a placeholder (its __torch_function__'s)."""
    kind = "Parameter" if is_parameter(t) else "Buffer"
    return ValueError(f"Attempted to use an uninitialized parameter in <method '{method}' of 'torch._C.TensorBase' "
                      "objects>. This error happens when you are using a `LazyModule` or explicitly manipulating "
                      f"`torch.nn.parameter.Uninitialized{kind}` objects. When using LazyModules Call `forward` with "
                      "a dummy batch to initialize the parameters before calling torch functions")


# nn.Buffer's marks: id(tensor) -> (a weak reference to it, its `persistent`): PyTorch's Buffer is a plain tensor
# carrying `_is_buffer` and `persistent`, which a module's __setattr__ registers as a buffer
_BUFFERS: dict = {}


def make_buffer(data=None, *, persistent=True) -> Tensor:
    """nn.Buffer(data=None, *, persistent=True): `data` detached (its requires_grad kept), marked as a buffer."""
    if data is None:
        data = Tensor(np.empty((0,), np.float32))
    if data.__class__ is not Tensor:
        raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
    t = data.detach()
    t.requires_grad_(data.requires_grad)
    key = id(t)
    _BUFFERS[key] = (weakref.ref(t, lambda _, key=key: _BUFFERS.pop(key, None)), bool(persistent))
    return t


def buffer_persistence(t) -> bool | None:
    """A tensor made by nn.Buffer: whether it is persistent; None for any other tensor."""
    entry = _BUFFERS.get(id(t)) if _BUFFERS else None
    return None if entry is None or entry[0]() is not t else entry[1]
