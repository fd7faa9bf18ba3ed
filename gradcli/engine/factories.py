"""Tensor creation: torch.tensor, ones/zeros/full and their *_like forms, random tensors, legacy constructors."""

from __future__ import annotations

import numpy as np

from gradcli.engine import dtypes, rng
from gradcli.engine.tensor import Size, Tensor


def _size_args(name: str, size: tuple) -> tuple:
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(torch.Size([2, 3])), with PyTorch's complaints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for i, d in enumerate(size):
        if isinstance(d, bool) or not isinstance(d, int):
            if isinstance(d, Tensor) and d._a.size == 1 and d._a.dtype.kind in "iu":
                continue
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, but found "
                            f"element of type {type(d).__name__} at pos {i}")
    size = tuple(int(d) for d in size)
    for d in size:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(size)}")
    return size


def _check_dtype(dtype):
    if dtype is not None and not isinstance(dtype, dtypes.DType):
        raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")


def _finish(a: np.ndarray, requires_grad) -> Tensor:
    t = Tensor(a)
    if requires_grad:
        if a.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _filled(name, size, value, dtype, requires_grad):
    _check_dtype(dtype)
    shape = _size_args(name, size)
    npdt = (dtype or dtypes.default_float).np
    return _finish(np.full(shape, value, dtype=npdt), requires_grad)


def ones(*size, dtype=None, requires_grad=False, device=None, out=None):
    return _filled("ones", size, 1, dtype, requires_grad)


def zeros(*size, dtype=None, requires_grad=False, device=None, out=None):
    return _filled("zeros", size, 0, dtype, requires_grad)


def empty(*size, dtype=None, requires_grad=False, device=None):
    # PyTorch leaves the memory uninitialised; zeros keep gradcli's output deterministic
    return _filled("empty", size, 0, dtype, requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    _check_dtype(dtype)
    if isinstance(size, int):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, not int")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    shape = _size_args("full", (tuple(size),))
    return _finish(np.full(shape, fill_value, dtype=dtype.np), requires_grad)


def _like(name, t, value, dtype, requires_grad):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    _check_dtype(dtype)
    npdt = dtype.np if dtype is not None else t._a.dtype
    return _finish(np.full(t._a.shape, value, dtype=npdt), requires_grad)


def ones_like(input, dtype=None, requires_grad=False, device=None):
    return _like("ones_like", input, 1, dtype, requires_grad)


def zeros_like(input, dtype=None, requires_grad=False, device=None):
    return _like("zeros_like", input, 0, dtype, requires_grad)


def full_like(input, fill_value, dtype=None, requires_grad=False, device=None):
    return _like("full_like", input, fill_value, dtype, requires_grad)


# ------------------------------------------------------------------------------------- torch.tensor

def _shape_error(data):
    """PyTorch's message for ragged nested lists, found by walking the data level by level."""
    level = [data]
    dim = 0
    while level:
        expected = None
        nxt = []
        for item in level:
            if isinstance(item, (list, tuple)):
                if expected is None:
                    expected = len(item)
                elif len(item) != expected:
                    return ValueError(f"expected sequence of length {expected} at dim {dim} (got {len(item)})")
                nxt.extend(item)
            elif expected is not None:
                return ValueError(f"expected sequence of length {expected} at dim {dim} (got 0)")
        level = nxt if expected is not None else []
        dim += 1
    return ValueError("could not build a tensor from this data")


def _plain(data):
    """Replace one-element tensors inside nested lists by their Python values."""
    if isinstance(data, Tensor):
        return data._a.tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def _infer(data) -> dtypes.DType:
    kinds = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is True or item is False:
            kinds.add(dtypes.BOOL)
        elif isinstance(item, int):
            kinds.add(dtypes.INT)
        elif isinstance(item, float):
            kinds.add(dtypes.FLOAT)
        else:
            raise TypeError(f"Could not infer dtype of {type(item).__name__}")
    if not kinds or dtypes.FLOAT in kinds:
        return dtypes.default_float
    return dtypes.int64 if dtypes.INT in kinds else dtypes.bool_


def tensor(data, dtype=None, requires_grad=False, device=None):
    _check_dtype(dtype)
    if isinstance(data, Tensor):
        a = data._a.astype(dtype.np if dtype else data._a.dtype, copy=True)
        return _finish(a, requires_grad)
    if not isinstance(data, (list, tuple, int, float, bool)):
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    has_tensor = isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) for x in data)
    if has_tensor:
        data = _plain(data)
    target = dtype or _infer(data)
    try:
        a = np.array(data, dtype=target.np if target.category != dtypes.FLOAT else np.float64)
    except ValueError:
        raise _shape_error(data) from None
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None
    if a.dtype != target.np:
        a = a.astype(target.np)
    return _finish(a, requires_grad)


def legacy_tensor(*args):
    """torch.Tensor(...): from data (always float32), or an uninitialised (here: zero) tensor of a size."""
    if not args:
        return Tensor(np.zeros((0,), dtype=np.float32))
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, Size):
            return zeros(arg)
        if isinstance(arg, (list, tuple)):
            return tensor(arg, dtype=dtypes.float32)
        if isinstance(arg, Tensor):
            return Tensor(arg._a.astype(np.float32, copy=False))
    return zeros(*args)


def variable(data, requires_grad=False, volatile=False):
    """torch.autograd.Variable(t): today a new leaf tensor sharing `t`'s data."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    t = Tensor(data._a)
    if requires_grad:
        if data._a.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


# ------------------------------------------------------------------------------------------- random

def _float_dtype(name, dtype):
    _check_dtype(dtype)
    dtype = dtype or dtypes.default_float
    if dtype.category != dtypes.FLOAT:
        kind = "normal" if name == "randn" else "uniform"
        raise RuntimeError(f'"{kind}_kernel_cpu" not implemented for \'{dtype.legacy[6:-6]}\'')
    return dtype


def rand(*size, dtype=None, requires_grad=False, generator=None, device=None):
    dtype = _float_dtype("rand", dtype)
    g = generator or rng.default_generator
    return _finish(g.rand(_size_args("rand", size), dtype.np), requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None, device=None):
    dtype = _float_dtype("randn", dtype)
    g = generator or rng.default_generator
    return _finish(g.randn(_size_args("randn", size), dtype.np), requires_grad)


def manual_seed(seed):
    return rng.default_generator.manual_seed(seed)


def initial_seed() -> int:
    return rng.default_generator.initial_seed()


def seed() -> int:
    return rng.default_generator.seed()
