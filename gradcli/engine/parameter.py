"""nn.Parameter as the engine knows it: a mark on a leaf Tensor, which then prints `Parameter containing:`.

A Parameter stays a plain Tensor (the engine's `x.__class__ is Tensor` tests hold for it, so every op takes
it at full speed); what makes it one is this mark, kept by the tensor's id and dropped with the tensor, as
PyTorch's results of ops on a Parameter are plain tensors again.
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.tensor import Tensor, parameter_marks as _MARKED


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
        if p._a.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p.requires_grad = True
    return mark(p)

