"""The window functions (torch.hann_window, hamming_window, bartlett_window, blackman_window, kaiser_window),
step by step as PyTorch's factories compute them in the window's dtype: an arange scaled by a number, through
cos, then scaled and shifted (kaiser: its kernel's formula, in the dtype's opmath type)."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, dtypes, signatures
from gradcli.engine import elementary as cr
from gradcli.engine.fma import fma
from gradcli.engine.recording import number_operand
from gradcli.engine.tensor import Tensor, factory_device

# the C types PyTorch's TensorOptions text names
_C_TYPES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}


def _times(x: np.ndarray, b) -> np.ndarray:
    """x * number as the factories' C++ mul_ computes it: the number rounded to the tensor's dtype (float16
    too), the product in float for float16."""
    if x.dtype == np.float16:
        return (x.astype(np.float32) * np.float32(np.float16(b))).astype(np.float16)
    return x * number_operand(x, b)


def _plus(x: np.ndarray, b) -> np.ndarray:
    """x + number (float16: numpy's float16 arithmetic, the number rounded to float16 first, as PyTorch's
    add kernel)."""
    return x + x.dtype.type(b)


def _arange(n: int, dt: np.dtype) -> np.ndarray:
    return np.arange(n, dtype=np.float64).astype(dt)


def _hamming(n: int, dt: np.dtype, alpha: float, beta: float) -> np.ndarray:
    w = cr.cos(_times(_arange(n, dt), math.pi * 2.0 / (n - 1)))
    return _plus(_times(w, -beta), alpha)


def _bartlett(n: int, dt: np.dtype) -> np.ndarray:
    w = _times(_arange(n, dt), 2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    w[half:] = _plus(_times(w[half:], -1), 2)
    return w


def _blackman(n: int, dt: np.dtype) -> np.ndarray:
    w = _times(_arange(n, dt), math.pi / (n - 1))
    return _plus(_times(cr.cos(_times(w, 4)), 0.08) - _times(cr.cos(_times(w, 2)), 0.5), 0.42)


def _kaiser(n: int, dt: np.dtype, beta: float) -> np.ndarray:
    """i0(beta * sqrt(|1 - ((k - alpha) / alpha) ** 2|)) / i0(beta), alpha = (n - 1) / 2, each step in the
    opmath type (float for float16) and rounded to the dtype once at the end (PyTorch's scalar kernel)."""
    from gradcli.engine.ops.special import i0_array
    op = np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)
    t = op.type
    alpha = t((n - 1) / 2.0)
    r = (_arange(n, dt).astype(op) - alpha) / alpha
    with np.errstate(all="ignore"):
        # 1 - pow(r, 2): the compiled kernel squares and subtracts in one fused multiply-add
        out = i0_array(t(beta) * np.sqrt(np.abs(fma(-r, r, np.ones_like(r))))) / i0_array(np.array(t(beta)))
    return out.astype(dt)


def _window(name: str, args: tuple, kwargs: dict) -> Tensor:
    """The checks every window function makes, then the window of `name`: periodic (the default) leaves off
    the last point of a window one longer."""
    _, values = signatures.bound(f"torch.{name}", args, kwargs)
    n = values["window_length"]
    periodic = values.get("periodic") if values.get("periodic") is not None else True
    dtype = values["dtype"] or dtypes.default_float
    on_meta = factory_device(values["device"])
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_C_TYPES[dtype.name]}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = dtype.np
    if on_meta:         # (sizes only: nothing computed)
        from gradcli.engine import meta
        t = Tensor(meta.meta_full((n,), 0, dt))
        if values["requires_grad"]:
            t.requires_grad = True
        return t
    budget.check_tensor((n + 1,), dtype.itemsize)
    if n <= 1:
        out = np.ones(n, dt)
    else:
        m = n + bool(periodic)
        if name == "hann_window":
            out = _hamming(m, dt, 0.5, 0.5)
        elif name == "hamming_window":
            alpha = values.get("alpha") if values.get("alpha") is not None else 0.54
            out = _hamming(m, dt, alpha, values.get("beta") if values.get("beta") is not None else 0.46)
        elif name == "bartlett_window":
            out = _bartlett(m, dt)
        elif name == "blackman_window":
            out = _blackman(m, dt)
        else:
            out = _kaiser(m, dt, values.get("beta") if values.get("beta") is not None else 12.0)
        out = np.ascontiguousarray(out[:n])
    t = Tensor(out)
    if values["requires_grad"]:
        t.requires_grad = True
    return t


def hann_window(*args, **kwargs) -> Tensor:
    return _window("hann_window", args, kwargs)


def hamming_window(*args, **kwargs) -> Tensor:
    return _window("hamming_window", args, kwargs)


def bartlett_window(*args, **kwargs) -> Tensor:
    return _window("bartlett_window", args, kwargs)


def blackman_window(*args, **kwargs) -> Tensor:
    return _window("blackman_window", args, kwargs)


def kaiser_window(*args, **kwargs) -> Tensor:
    return _window("kaiser_window", args, kwargs)
