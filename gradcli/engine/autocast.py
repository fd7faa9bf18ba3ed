"""torch.autocast on the CPU: mixed precision as PyTorch's AutocastCPU dispatch key applies it.

Inside an enabled CPU region, the ops PyTorch lists run at the region's lower precision (bfloat16 by default,
or float16), the ops it lists as float32 ops run in float32, and cat, stack and index_copy run at the widest
floating type among their inputs; every other op runs as it is given. Only float16, bfloat16 and float32
CPU tensors are cast (float64 and meta tensors never are), each by `.to(dtype)`, so the casts are
ToCopyBackward0 nodes of the graph. A listed op runs with autocast off for its own insides, as PyTorch's
kernels exclude the key while they redispatch: a composite op (einsum, tensordot, multi_dot) autocasts only
through the listed ops it calls. The lower-precision casts of float32 leaves that require grad (the model's
weights) are kept for the region: every use of a weight in it shares one cast and one ToCopyBackward0 node,
and leaving the outermost region drops them.

The engine reads one slot on its hot paths: STATE.autocast, the lower-precision dtype while CPU autocast is
on, else None (recording.autocast_policy). The rest (the per-device flags and dtypes, the cache,
the nesting depth) lives in an Amp object, made when a script first touches autocast.
"""

from __future__ import annotations

from gradcli.engine import dtypes
from gradcli.engine.recording import is_meta
from gradcli.engine.state import STATE

LOWER, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# torch.get_autocast_dtype's defaults per device type (c10's table), for the device types a script may name
_DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16", "hip": "float16", "xla": "bfloat16", "xpu": "float16",
                   "mps": "float16", "hpu": "bfloat16", "ipu": "float16", "privateuseone": "float16"}
# the device types torch.device parses (its error lists them in this order)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
CPU_DTYPE_WARNING = ("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                     "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
CUDA_WARNING = "CUDA is not available or torch_xla is imported. Disabling autocast."


class Amp:
    """The autocast state of a session beyond STATE.autocast: per device type, enabled and dtype; the
    cache switch, the cached casts and the nesting depth of autocast regions."""

    __slots__ = ("enabled", "dtype", "cache_enabled", "cache", "nesting")

    def __init__(self):
        self.enabled = {}
        self.dtype = {}
        self.cache_enabled = True
        self.cache = {}                 # id(source) -> (source, its cast): the source kept alive, as PyTorch's weakref
        self.nesting = 0


def amp() -> Amp:
    """The session's Amp, made on first use."""
    state = STATE.amp
    if state is None:
        state = STATE.amp = Amp()
    return state


def _class_text(value) -> str:
    """`type(value)` as a script sees it printed (torch.Tensor for a tensor)."""
    from gradcli.engine.tensor import Tensor
    return "<class 'torch.Tensor'>" if value.__class__ is Tensor else f"<class '{type(value).__name__}'>"


def _checked(fn: str, value, position: int = 1, arg: str = "device_type", kind=str, kind_name: str = "str"):
    """PyTorch's parser error for an argument of the wrong type."""
    if not isinstance(value, kind) or kind is not bool and value.__class__ is bool:
        from gradcli.engine.signatures import type_name
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be {kind_name}, not {type_name(value)}")
    return value


def kind_of(device) -> str:
    """The device type a device string or torch.device names, with torch.device's error for an unknown one."""
    name = device if device.__class__ is str else getattr(device, "type", None)
    if name.__class__ is not str:
        raise ValueError(f"Expected `device_type` of type `str`, got: `{_class_text(device)}`")
    kind = name.split(":", 1)[0]
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                           f"{name}")
    return kind


def is_enabled(kind: str) -> bool:
    return STATE.autocast is not None if kind == "cpu" else (STATE.amp is not None and STATE.amp.enabled.get(kind,
                                                                                                              False))


def get_dtype(kind: str):
    chosen = STATE.amp.dtype.get(kind) if STATE.amp is not None else None
    if chosen is not None:
        return chosen
    name = _DEFAULT_DTYPES.get(kind)
    if name is None:
        raise RuntimeError("unsupported scalarType")
    return getattr(dtypes, name)


def set_enabled(kind: str, enabled: bool) -> None:
    amp().enabled[kind] = enabled
    if kind == "cpu":
        STATE.autocast = get_dtype("cpu") if enabled else None


def set_dtype(kind: str, dtype) -> None:
    amp().dtype[kind] = dtype
    if kind == "cpu" and STATE.autocast is not None:
        STATE.autocast = dtype


def clear_cache() -> None:
    if STATE.amp is not None:
        STATE.amp.cache.clear()


class Region:
    """One autocast region's entry and exit (torch.autocast's __enter__ and __exit__)."""

    __slots__ = ("kind", "dtype", "enabled", "cache_enabled", "_prev")

    def __init__(self, kind: str, dtype, enabled: bool, cache_enabled: bool):
        self.kind, self.dtype, self.enabled, self.cache_enabled = kind, dtype, enabled, cache_enabled

    def enter(self) -> None:
        state = amp()
        self._prev = (state.cache_enabled, is_enabled(self.kind), get_dtype(self.kind))
        set_enabled(self.kind, self.enabled)
        set_dtype(self.kind, self.dtype)
        state.nesting += 1
        state.cache_enabled = self.cache_enabled

    def exit(self) -> None:
        state = amp()
        state.nesting -= 1
        if state.nesting == 0:
            state.cache.clear()
        cache_enabled, enabled, dtype = self._prev
        set_enabled(self.kind, enabled)
        set_dtype(self.kind, dtype)
        state.cache_enabled = cache_enabled


# ------------------------------------------------------------------------------------------------ the casts

def _eligible(t) -> bool:
    """A CPU tensor of float16, bfloat16 or float32: what autocast may cast (never float64, never meta)."""
    from gradcli.engine.tensor import Tensor
    if t.__class__ is not Tensor:
        return False
    a = t._a
    return a.dtype.kind in "fV" and a.dtype.itemsize < 8 and not is_meta(a)


def _cast(t, target: dtypes.DType):
    """t at dtype `target`: cached when it is a float32 leaf that requires grad, cast to the lower
    precision, outside any view (PyTorch's heuristic for model weights)."""
    from gradcli.engine.ops.arith import to_dtype
    if not _eligible(t) or t._a.dtype == target.np:
        return t
    state = STATE.amp
    if (state.cache_enabled and target is not dtypes.float32 and t._a.dtype == dtypes.float32.np
            and t.requires_grad and t.grad_fn is None and t._base is None):
        kept = state.cache.get(id(t))
        if kept is not None and kept[0] is t:
            return kept[1]
        cast = to_dtype(t, target)
        state.cache[id(t)] = (t, cast)
        return cast
    return to_dtype(t, target)


def _each(value, target):
    if value.__class__ in (list, tuple):
        return value.__class__(_cast(v, target) for v in value)
    return _cast(value, target)


def _widest(values, lower: dtypes.DType) -> dtypes.DType:
    """promote's target: float32 if an eligible tensor (in lists too) is float32, else the lower precision;
    the other lower-precision type beside it is PyTorch's error (at::autocast::prioritize)."""
    found = lower
    for value in values:
        for t in (value if value.__class__ in (list, tuple) else (value,)):
            if _eligible(t):
                kind = t.dtype
                if found is dtypes.float32 or kind is dtypes.float32:
                    found = dtypes.float32
                elif kind is not lower:
                    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return found


def run(policy: str, function, args: tuple, kwargs: dict):
    """`function(*args, **kwargs)` under the policy, with autocast off while it runs (STATE.autocast is set)."""
    lower = STATE.autocast
    if policy == LOWER:
        target = lower
    elif policy == FP32:
        target = dtypes.float32
    else:
        target = _widest((*args, *kwargs.values()), lower)
    args = tuple(_each(a, target) for a in args)
    kwargs = {k: _each(v, target) for k, v in kwargs.items()}
    STATE.autocast = None
    try:
        return function(*args, **kwargs)
    finally:
        STATE.autocast = lower


# ------------------------------------------------------------------------------------------- script-facing

class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager, and a
    decorator whose every call runs inside it."""

    __module__ = "torch.amp.autocast_mode"
    __slots__ = ("device", "fast_dtype", "_enabled", "_cache_enabled", "_region")

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        kind = kind_of(device_type)
        self.device = kind
        self.fast_dtype = get_dtype(kind) if dtype is None else dtype
        if kind == "cuda" and enabled:
            _warn(CUDA_WARNING)
            enabled = False
        if kind == "cpu" and enabled and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
            _warn(CPU_DTYPE_WARNING)
            enabled = False
        self._enabled = enabled
        self._cache_enabled = amp().cache_enabled if cache_enabled is None else cache_enabled
        self._region = None

    def __enter__(self):
        self._region = Region(self.device, self.fast_dtype, bool(self._enabled), bool(self._cache_enabled))
        self._region.enter()
        return self

    def __exit__(self, *exc):
        self._region.exit()
        return False

    def __call__(self, func):
        from gradcli.engine.autograd import ModeDecorated
        return ModeDecorated(func, lambda: self)


def cpu_autocast(enabled=True, dtype=None, cache_enabled=True) -> autocast:
    """torch.cpu.amp.autocast: torch.autocast("cpu", ...), with PyTorch's FutureWarning."""
    _warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` "
          "instead.", "FutureWarning")
    return autocast("cpu", dtype=dtypes.bfloat16 if dtype is None else dtype, enabled=enabled,
                    cache_enabled=cache_enabled)


def cuda_autocast(enabled=True, dtype=None, cache_enabled=True) -> autocast:
    """torch.cuda.amp.autocast: torch.autocast("cuda", ...) (disabled here, with its warning), and the
    FutureWarning."""
    _warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` "
          "instead.", "FutureWarning")
    return autocast("cuda", dtype=dtypes.float16 if dtype is None else dtype, enabled=enabled,
                    cache_enabled=cache_enabled)


def is_autocast_available(device_type) -> bool:
    """torch.amp.is_autocast_available: whether autocast knows the device type (CUDA's too: a device type,
    not a device present)."""
    return kind_of(_checked("_is_autocast_available", device_type)) in _DEFAULT_DTYPES


# ---- custom autograd Functions under autocast (torch.amp.custom_fwd / custom_bwd)

def _cast_inputs(value, kind: str, dtype):
    """custom_fwd's cast: floating tensors of the device type but float64 to `dtype`, in lists, tuples and
    dicts too."""
    from gradcli.engine.tensor import Tensor
    if value.__class__ is Tensor:
        if value.is_floating_point() and value._a.dtype.itemsize < 8 and kind == "cpu":
            from gradcli.engine.ops.arith import to_dtype
            return to_dtype(value, dtype)
        return value
    if value.__class__ in (list, tuple):
        return value.__class__(_cast_inputs(v, kind, dtype) for v in value)
    if value.__class__ is dict:
        return {k: _cast_inputs(v, kind, dtype) for k, v in value.items()}
    return value


def _attrs(ctx, first: str) -> dict:
    """The attributes a custom Function's ctx holds (gradcli.engine.custom.FunctionNode.attrs); for anything
    else, Python's error for the first attribute PyTorch's decorator sets or reads."""
    from gradcli.engine.custom import FunctionNode
    if not isinstance(ctx, FunctionNode):
        raise AttributeError(f"'{type(ctx).__name__}' object has no attribute '{first}'")
    return ctx.attrs


def _named(wrapper, function):
    wrapper.__name__ = wrapper.__qualname__ = getattr(function, "__name__", "decorate")
    wrapper.__wrapped__ = function
    return wrapper


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """torch.amp.custom_fwd: a custom Function's forward that notes the autocast state it ran under (for
    custom_bwd); with cast_inputs, inside an enabled region, its floating inputs cast to that dtype and
    autocast off while it runs."""
    if device_type.__class__ is not str:
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return lambda f: custom_fwd(f, device_type=device_type, cast_inputs=cast_inputs)

    def decorate_fwd(*args, **kwargs):
        ctx = _attrs(args[0], "_dtype")
        ctx["_dtype"] = get_dtype(device_type)
        if cast_inputs is None:
            ctx["_fwd_used_autocast"] = is_enabled(device_type)
            return fwd(*args, **kwargs)
        inside = is_enabled(device_type)
        ctx["_fwd_used_autocast"] = False
        if not inside:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs),
                       **_cast_inputs(kwargs, device_type, cast_inputs))
    return _named(decorate_fwd, fwd)


def custom_bwd(bwd=None, *, device_type):
    """torch.amp.custom_bwd: a custom Function's backward, run under the autocast state its forward ran
    under."""
    if device_type.__class__ is not str:
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return lambda f: custom_bwd(f, device_type=device_type)

    def decorate_bwd(*args, **kwargs):
        ctx = _attrs(args[0], "_fwd_used_autocast")
        with autocast(device_type, enabled=ctx["_fwd_used_autocast"], dtype=ctx["_dtype"]):
            return bwd(*args, **kwargs)
    return _named(decorate_bwd, bwd)


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    _warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., "
          "device_type='cuda')` instead.", "FutureWarning")
    return custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd):
    _warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use `torch.amp.custom_bwd(args..., "
          "device_type='cuda')` instead.", "FutureWarning")
    return custom_bwd(bwd, device_type="cuda")


def _warn(message: str, category: str = "UserWarning") -> None:
    if STATE.warn is not None:
        STATE.warn(category, message)


def _deprecated(old: str, new: str, line: int) -> None:
    _warn(f"torch.{old}() is deprecated. Please use torch.{new} instead. (Triggered internally at "
          f"/__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:{line}.)", "DeprecationWarning")


def is_autocast_enabled(device_type=None) -> bool:
    """torch.is_autocast_enabled(device_type): with no argument, CUDA's (False here)."""
    return is_enabled("cuda" if device_type is None else kind_of(_checked("is_autocast_enabled", device_type)))


def get_autocast_dtype(device_type):
    return get_dtype(kind_of(_checked("get_autocast_dtype", device_type)))


def set_autocast_enabled(device_type, enabled) -> None:
    kind = kind_of(_checked("set_autocast_enabled", device_type))
    set_enabled(kind, _checked("set_autocast_enabled", enabled, 2, "enabled", bool, "bool"))


def set_autocast_dtype(device_type, dtype) -> None:
    kind = kind_of(_checked("set_autocast_dtype", device_type))
    set_dtype(kind, _checked("set_autocast_dtype", dtype, 2, "dtype", dtypes.DType, "torch.dtype"))


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')", 883)
    return is_enabled("cpu")


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')", 1016)
    return get_dtype("cpu")


def is_autocast_cache_enabled() -> bool:
    return amp().cache_enabled if STATE.amp is not None else True


def set_autocast_cache_enabled(enabled) -> None:
    if enabled.__class__ is not bool:
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    amp().cache_enabled = enabled


def clear_autocast_cache() -> None:
    clear_cache()
