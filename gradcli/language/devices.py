"""Devices and default dtypes as scripts reach them: torch.device, torch.cuda, torch.backends, the default
device and dtype, and the legacy typed constructors (torch.FloatTensor...).

gradcli is PyTorch's CPU build: `torch.device('cuda')` is a value that prints and compares, CUDA is never
available, and making or moving a tensor onto it fails with the CPU build's own AssertionError
(gradcli.engine.tensor.check_device).
"""

from __future__ import annotations

import functools

import types

from gradcli.engine import dtypes, factories
import numpy as np

from gradcli.engine.tensor import (NO_CUDA, Size, Tensor, _CPU, _Device, _scalar_name, accelerator_index, check_device,
                                   default_device, device_index, parse_device)
from gradcli.engine.state import STATE


def device(*args, **kwargs) -> _Device:
    """torch.device('cpu'), torch.device('cuda:1'), torch.device('cpu', 0), torch.device(other_device)."""
    positional = len(args) >= 2           # (PyTorch's message gives the index's position only then)
    if kwargs:
        names = ("type", "index")
        for name in kwargs:
            if name not in names:
                raise TypeError(f"device() got an unexpected keyword argument '{name}'")
        args = args + tuple(kwargs[n] for n in names[len(args):] if n in kwargs)
    if len(args) == 1 and args[0].__class__ is _Device:
        return args[0]
    if not 1 <= len(args) <= 2:
        raise TypeError(f"device() takes 1 or 2 arguments ({len(args)} given)")
    kind = args[0]
    if kind.__class__ is int and len(args) == 1:
        raise accelerator_index(kind)
    if kind.__class__ is not str:
        raise TypeError(f"device(): argument 'type' must be str, not {type(kind).__name__}")
    parsed = parse_device(kind)
    if len(args) == 2 and args[1] is not None:
        index = args[1]
        if index.__class__ is not int:
            where = " (position 2)" if positional else ""
            raise TypeError(f"device(): argument 'index'{where} must be int, not {type(index).__name__}")
        if parsed.index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: "
                               f"{kind}")
        if not -2**63 <= index < 2**63:
            raise ValueError("Overflow when unpacking long long")
        if index < 0:
            raise RuntimeError("Device index must not be negative")
        return _Device(parsed.type, device_index(index))
    return parsed


def _named(name: str, function):
    """A copy of `function` named `name`: each public name its own function object, as each is in PyTorch."""
    copy = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__,
                              function.__closure__)
    copy.__doc__ = function.__doc__
    return copy


def _false() -> bool:
    return False


def _zero() -> int:
    return 0


def _nothing() -> None:
    """torch.cuda.seed(), seed_all(), empty_cache() on a CPU build: nothing."""


def _seed_cuda(seed) -> None:
    """torch.cuda.manual_seed(seed) / manual_seed_all(seed) on a CPU build: int(seed) (Python's errors for a
    NaN, an infinity, a string that is no number, None), then nothing."""
    int(seed)


def _bf16_supported(including_emulation=True) -> bool:
    """torch.cuda.is_bf16_supported on a CPU build: False."""
    return False


def _no_cuda() -> None:
    raise AssertionError(NO_CUDA)


def _no_cuda_on(device=None) -> None:
    """torch.cuda.synchronize(device=None), get_device_name(device=None): the CPU build's AssertionError."""
    raise AssertionError(NO_CUDA)


# torch.cuda as PyTorch's CPU build has it (each with its Python signature, so a wrong call is a TypeError)
CUDA = {name: _named(name, f) for name, f in (
    ("is_available", _false), ("device_count", _zero), ("is_initialized", _false), ("manual_seed", _seed_cuda),
    ("manual_seed_all", _seed_cuda), ("seed", _nothing), ("seed_all", _nothing), ("synchronize", _no_cuda_on),
    ("current_device", _no_cuda), ("get_device_name", _no_cuda_on), ("empty_cache", _nothing),
    ("is_bf16_supported", _bf16_supported))}
MPS = {name: _named(name, _false) for name in ("is_available", "is_built")}


def set_default_device(dev) -> None:
    """The device factories use when given none: the CPU (None), the meta device, or CUDA, which a CPU build
    accepts here and fails at the first tensor a factory makes (STATE.default_device, check_device)."""
    if dev is None:
        STATE.default_device = None
        return
    STATE.default_device = default_device(dev if dev.__class__ is _Device else device(dev))


def get_default_device() -> _Device:
    """PyTorch finds the index of a CUDA default device by making a tensor there: a CPU build fails."""
    d = STATE.default_device
    if d is None:
        return _CPU
    if d.type == "cuda" and d.index is None:
        raise AssertionError(NO_CUDA)
    return d


def get_default_dtype() -> dtypes.DType:
    return dtypes.default_float


def set_default_dtype(d) -> None:
    """torch.set_default_dtype(torch.float64): factories and Python floats follow it, as in PyTorch."""
    if d.__class__ is not dtypes.DType:
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if d is not dtypes.float32 and d is not dtypes.float64:
        if d.is_floating_point:
            raise NotImplementedError(f"gradcli's default dtype is float32 or float64, not {d}")
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_float(d)


_DEFAULT_TENSOR_TYPE_WARNING = (
    "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() and "
    "torch.set_default_device() as alternatives. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/tensor/python_tensor.cpp:434.)")


def set_default_tensor_type(t) -> None:
    """torch.set_default_tensor_type(torch.DoubleTensor) (or its name): the default float dtype, as PyTorch's
    deprecated function sets it (with its warning, once per run); CUDA types are PyTorch's CPU build's refusal."""
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        name = t.rpartition(".")[2]
        dt = TYPED.get(name)
        if dt is None:
            raise AttributeError(f"module 'torch' has no attribute '{name}'")
    else:       # (scripts hold the legacy classes as partials of their constructors)
        dt = dtypes.LEGACY_CLASSES.get(id(t.func if isinstance(t, functools.partial) else t))
        if dt is None:
            raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    STATE.warn_once("set_default_tensor_type", "UserWarning", _DEFAULT_TENSOR_TYPE_WARNING)
    set_default_dtype(dt)


def typed_constructor(dt: dtypes.DType):
    """torch.FloatTensor(...) and its kin: the legacy constructor of one dtype (data, an alias of a tensor of
    that dtype, or an uninitialised (here: zero) tensor of a size)."""

    def construct(*args, device=None):
        if device is not None:
            check_device(device)
        if len(args) == 1:
            arg = args[0]
            if isinstance(arg, (list, tuple)) and arg.__class__ is not Size:
                return factories.tensor(arg, dtype=dt)
            if arg.__class__ is Tensor:
                if arg.dtype is not dt:
                    raise TypeError(f"expected {_options(dt)} (got {_options(arg.dtype)})")
                return factories.legacy_tensor(arg)
            if arg.__class__ is not Size and factories.as_int(arg) is None:
                raise TypeError(f"new(): data must be a sequence (got {type(arg).__name__})")
        if not args:
            return factories.zeros(0, dtype=dt)
        return factories.filled("new", args, 0, dt, False)     # (PyTorch's constructor is `new` in its messages)

    construct.__name__ = construct.__qualname__ = dt.legacy.rpartition(".")[2]
    dtypes.LEGACY_CLASSES[id(construct)] = dt        # x.type(torch.FloatTensor)
    return construct


def _options(dt: dtypes.DType) -> str:
    return (f"TensorOptions(dtype={_scalar_name(np.empty(0, dt.np))}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


TYPED = {dt.legacy.rpartition(".")[2]: dt for dt in dtypes.ALL if dt.legacy and not dt.is_complex}
