"""torch.backends' switches and the global precision and determinism settings, as a CPU build of PyTorch has them.

Scripts written for GPUs set them at the top (nanoGPT's `torch.backends.cuda.matmul.allow_tf32 = True`,
`torch.backends.cudnn.benchmark = True`, `torch.set_float32_matmul_precision("high")`); on the CPU they change
no result, in PyTorch as here, but they read back what was set, with PyTorch's checks of each value (except the
attention-kernel switches, which live in the engine's state, STATE.sdp: they choose scaled_dot_product_attention's
kernel on the CPU too). The
values last one session (Session.reset_state calls `reset`). TF32 for matrix products and the float32 matmul
precision are one setting: allow_tf32 reads True unless the precision is "highest", and setting it sets
"high" or "highest".
"""

from __future__ import annotations

from gradcli.engine.state import STATE

PRECISIONS = ("highest", "high", "medium")
# per namespace, its flags: name -> (default, the setter PyTorch's bool error names, or None for another check)
FLAGS = {
    "torch.backends.cudnn": {"enabled": (True, "set_enabled_cudnn"), "benchmark": (False, "set_benchmark_cudnn"),
                             "deterministic": (False, "set_deterministic_cudnn"),
                             "allow_tf32": (True, "set_allow_tf32_cublas"), "benchmark_limit": (None, None)},
    "torch.backends.cuda.matmul": {"allow_tf32": (False, "set_allow_tf32_cublas"),
                                   "allow_fp16_reduced_precision_reduction": (True, None),
                                   "allow_bf16_reduced_precision_reduction": (True, None)},
    "torch.backends.mkldnn": {"enabled": (True, "set_enabled_mkldnn")},
}
_SDP = ("flash", "mem_efficient", "math")
_SDP_INDEX = {"flash": 0, "mem_efficient": 1, "math": 2}       # (STATE.sdp's order)

_members: dict = {}         # namespace -> the members dict of its ScriptModule (the flags live there)
_settings = {}              # "precision", "deterministic", "warn_only", the sdp switches


def reset() -> None:
    """A fresh interpreter's settings."""
    for namespace, flags in FLAGS.items():
        members = _members.get(namespace)
        if members is not None:
            for name, (default, _) in flags.items():
                members[name] = default
    _settings.update(precision="highest", deterministic=False, warn_only=False)


reset()


def set_flag(namespace: str, name: str, value) -> bool:
    """`module.name = value` for a flag of `namespace`; False when `name` is none of its flags."""
    flag = FLAGS.get(namespace, {}).get(name)
    if flag is None:
        if namespace == "torch.backends.cuda.matmul":       # an object of PyTorch's, not a module
            raise AttributeError(f"Unknown attribute {name}")
        return False
    setter = flag[1]
    if name.endswith("_reduced_precision_reduction"):
        if value.__class__ in (tuple, list) and value and all(v.__class__ is bool for v in value):
            value = value[0]
        elif value.__class__ is not bool:
            raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)}")
    elif setter is not None and value.__class__ is not bool:
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    _members[namespace][name] = value
    if namespace == "torch.backends.cuda.matmul" and name == "allow_tf32":
        _settings["precision"] = "high" if value else "highest"
    return True


def set_float32_matmul_precision(precision) -> None:
    if precision.__class__ is not str:
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in PRECISIONS:
        if STATE.warn is not None:
            STATE.warn("UserWarning", f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                       "setFloat32MatmulPrecision call has no effect. (Triggered internally at "
                       "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:458.)")
        return
    _settings["precision"] = precision
    matmul = _members.get("torch.backends.cuda.matmul")
    if matmul is not None:
        matmul["allow_tf32"] = precision != "highest"


def get_float32_matmul_precision() -> str:
    return _settings["precision"]


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    if mode.__class__ is not bool:
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if warn_only.__class__ is not bool:
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _settings.update(deterministic=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _settings["warn_only"]


def _sdp(kind: str):
    """X_sdp_enabled and enable_X_sdp: the switch lives in the engine's state (STATE.sdp), which the attention
    op reads to choose its kernel."""
    index = _SDP_INDEX[kind]

    def enabled() -> bool:
        return STATE.sdp[index]

    def enable(enabled) -> None:
        if enabled.__class__ is not bool:
            raise RuntimeError(f"set_sdp_use_math expects a bool, but got {type(enabled).__name__}")
        switches = list(STATE.sdp)
        switches[index] = enabled
        STATE.sdp = tuple(switches)
    enabled.__name__ = enabled.__qualname__ = f"{kind}_sdp_enabled"
    enable.__name__ = enable.__qualname__ = f"enable_{kind}_sdp"
    return enabled, enable


def _constant(name: str, value):
    def function():
        return value
    function.__name__ = function.__qualname__ = name
    return function


def namespaces() -> dict:
    """The members of torch.backends' namespaces (their flag values live in these dicts)."""
    matmul = {name: default for name, (default, _) in FLAGS["torch.backends.cuda.matmul"].items()}
    matmul["allow_tf32"] = _settings["precision"] != "highest"
    cuda = {"is_built": _constant("is_built", False)}
    for kind in _SDP:
        enabled, enable = _sdp(kind)
        cuda[enabled.__name__], cuda[enable.__name__] = enabled, enable
    cudnn = {name: default for name, (default, _) in FLAGS["torch.backends.cudnn"].items()}
    cudnn.update(is_available=_constant("is_available", False), version=_constant("version", None))
    mkldnn = {"enabled": True, "is_available": _constant("is_available", True)}
    made = {"torch.backends.cuda.matmul": matmul, "torch.backends.cuda": cuda, "torch.backends.cudnn": cudnn,
            "torch.backends.mkldnn": mkldnn,
            "torch.backends.openmp": {"is_available": _constant("is_available", True)},
            "torch.backends.mkl": {"is_available": _constant("is_available", True)}}
    _members.update(made)
    return made


TORCH = {"set_float32_matmul_precision": set_float32_matmul_precision,
         "get_float32_matmul_precision": get_float32_matmul_precision,
         "use_deterministic_algorithms": use_deterministic_algorithms,
         "are_deterministic_algorithms_enabled": are_deterministic_algorithms_enabled,
         "is_deterministic_algorithms_warn_only_enabled": is_deterministic_algorithms_warn_only_enabled}
