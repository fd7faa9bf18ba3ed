"""torch.nn.attention: SDPBackend and sdpa_kernel, which choose the kernels scaled_dot_product_attention may use
for a block (the switches of torch.backends.cuda.enable_*_sdp, kept in the engine's state, STATE.sdp: on the CPU
they decide between the flash kernel and the math path, so the values' last bits and the graph follow them)."""

from __future__ import annotations

import enum
import functools

from gradcli.engine.state import STATE


class PybindEnum(enum.EnumType):
    """The class prints as PyTorch's pybind enum prints (`<class 'torch.nn.attention._SDPBackend'>`)."""

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


class SDPBackend(enum.Enum, metaclass=PybindEnum):
    """PyTorch's backends of scaled_dot_product_attention (its pybind enum prints as this one does)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


SDPBackend.__module__ = "torch.nn.attention"
SDPBackend.__qualname__ = "_SDPBackend"


def sdpa_kernel(backends, set_priority: bool = False) -> "SdpaKernel":
    """`with sdpa_kernel(SDPBackend.MATH):` (or a list of backends): only those backends are enabled inside the
    block (the flash switch for FLASH_ATTENTION, the math one for MATH, the memory-efficient one for
    EFFICIENT_ATTENTION), the switches put back after; also a decorator, as PyTorch's contextmanager is."""
    return SdpaKernel(backends)


class SdpaKernel:
    """What sdpa_kernel returns: a context (and decorator) that sets STATE.sdp for its block."""

    __slots__ = ("_backends", "_saved")

    def __init__(self, backends):
        self._backends = backends
        self._saved = []

    def __enter__(self):
        backends = self._backends       # (checked on entering, as PyTorch's contextmanager body checks them)
        if isinstance(backends, SDPBackend):
            backends = [backends]
        if backends.__class__ is not list:      # (a list's items are not checked: PyTorch ignores the others)
            raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                                 f"{type(backends).__name__}")
        self._saved.append(STATE.sdp)
        STATE.sdp = (SDPBackend.FLASH_ATTENTION in backends, SDPBackend.EFFICIENT_ATTENTION in backends,
                     SDPBackend.MATH in backends)
        return None

    def __exit__(self, *exc):
        STATE.sdp = self._saved.pop()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def inside(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return inside


def names() -> dict:
    return {"SDPBackend": SDPBackend, "sdpa_kernel": sdpa_kernel, "WARN_FOR_UNFUSED_KERNELS": False}
