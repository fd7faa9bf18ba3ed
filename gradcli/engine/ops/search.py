"""Ops that find elements: nonzero, argwhere and count_nonzero (integer results, no autograd node)."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, signatures
from gradcli.engine.recording import axes
from gradcli.engine.signatures import type_name
from gradcli.engine.tensor import Tensor


def _input(name: str, value) -> np.ndarray:
    if value.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(value)}")
    return value._a


def _positions(x: np.ndarray) -> np.ndarray:
    """The (count, ndim) int64 positions of x's nonzero elements in row-major order (NaN is nonzero, -0.0 is
    zero); a 0-d input reads as one position of no coordinates."""
    count = int(np.count_nonzero(x))
    budget.check_tensor((count, x.ndim), 8)
    return np.asfortranarray(np.argwhere(x), dtype=np.int64)      # PyTorch fills it column by column


def nonzero(*args, **kwargs):
    """torch.nonzero: the positions as a (count, ndim) tensor, or with `as_tuple=True` one 1-d tensor of
    coordinates per dim (a 0-d input as one of shape (1,)), the columns of that tensor as PyTorch takes them."""
    _, values = signatures.bound("torch.nonzero", args, kwargs)
    return _nonzero(_input("nonzero", values["input"]), values)


def nonzero_method(self: Tensor, *args, **kwargs):
    _, values = signatures.bound("Tensor.nonzero", args, kwargs)
    return _nonzero(self._a, values)


def _nonzero(x: np.ndarray, values: dict):
    if values.get("out") is not None:
        raise NotImplementedError("gradcli does not implement the out= argument of torch.nonzero")
    positions = _positions(x)
    if not values["as_tuple"]:
        return Tensor(positions)
    if x.ndim == 0:
        return (Tensor(np.zeros(positions.shape[0], np.int64)),)
    return Tensor(positions).unbind(1)


def argwhere(input) -> Tensor:
    """torch.argwhere / Tensor.argwhere: nonzero's (count, ndim) positions."""
    return Tensor(_positions(_input("argwhere", input)))


def count_nonzero(*args, **kwargs) -> Tensor:
    """torch.count_nonzero: the number of nonzero elements over `dim` (an int, a tuple of ints, or all of
    them when None or empty), as int64."""
    _, values = signatures.bound("torch.count_nonzero", args, kwargs)
    return _count(_input("count_nonzero", values["input"]), values["dim"])


def count_nonzero_method(self: Tensor, *args, **kwargs) -> Tensor:
    if len(args) > 1 and not kwargs:        # x.count_nonzero(0, 1): the dims as separate ints
        return _count(self._a, args)
    _, values = signatures.bound("Tensor.count_nonzero", args, kwargs)
    return _count(self._a, values["dim"])


def _count(x: np.ndarray, dim) -> Tensor:
    dims = () if dim is None else axes(dim, x.ndim)
    if not x.ndim or not dims:
        return Tensor(np.asarray(np.count_nonzero(x), dtype=np.int64))
    return Tensor(np.count_nonzero(x, axis=dims).astype(np.int64, copy=False))
