"""What a script can reach by name: the builtins, and the modules `torch` (gradcli's engine) and `math`."""

from __future__ import annotations

import builtins
import math as _math

from gradcli.engine import autograd, dtypes, factories, functional, ops, rng
from gradcli.engine.tensor import Size, Tensor, print_options


class ScriptModule:
    """A module as scripts see it: a fixed table of names, nothing else."""

    __slots__ = ("name", "members")

    def __init__(self, name: str, members: dict):
        self.name = name
        self.members = members

    def __repr__(self) -> str:
        return f"<module '{self.name}' (gradcli)>"


def _set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                      sci_mode=None):
    print_options.set(precision, threshold, edgeitems, linewidth, profile, sci_mode)


def _variable(data, requires_grad=False, volatile=False):
    return factories.variable(data, requires_grad, volatile)


def _matmul(a, b):
    if a.__class__ is not Tensor:
        raise TypeError(f"matmul(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    return a @ b


def _tensor_fn(name, method):
    """torch.X(t, ...) for a method t.X(...) of the same meaning."""
    def fn(input, *args, **kwargs):
        if input.__class__ is not Tensor:
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)
    fn.__name__ = name
    return fn


def _build_torch() -> ScriptModule:
    functional_ns = ScriptModule("torch.nn.functional", {})
    nn = ScriptModule("torch.nn", {"functional": functional_ns})
    autograd_functional = ScriptModule("torch.autograd.functional", {})
    autograd_ns = ScriptModule("torch.autograd", {
        "Variable": _variable,
        "grad": functional.grad,
        "backward": functional.backward,
        "functional": autograd_functional,
        "no_grad": autograd.no_grad,
        "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled,
    })
    linalg = ScriptModule("torch.linalg", {})
    members = {
        # creation
        "tensor": factories.tensor, "Tensor": factories.legacy_tensor,
        "ones": factories.ones, "zeros": factories.zeros, "full": factories.full, "empty": factories.empty,
        "ones_like": factories.ones_like, "zeros_like": factories.zeros_like, "full_like": factories.full_like,
        "rand": factories.rand, "randn": factories.randn,
        "manual_seed": factories.manual_seed, "initial_seed": factories.initial_seed, "seed": factories.seed,
        "Generator": rng.Generator, "Size": Size,
        # grad mode
        "no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled, "is_grad_enabled": autograd.is_grad_enabled,
        # ops as functions
        "add": _tensor_fn("add", Tensor.add), "sub": _tensor_fn("sub", Tensor.sub),
        "mul": _tensor_fn("mul", Tensor.mul), "div": _tensor_fn("div", Tensor.div),
        "pow": lambda input, exponent: ops.power(input, exponent),
        "neg": _tensor_fn("neg", Tensor.neg), "exp": _tensor_fn("exp", Tensor.exp),
        "reciprocal": _tensor_fn("reciprocal", Tensor.reciprocal),
        "sum": _tensor_fn("sum", Tensor.sum), "mean": _tensor_fn("mean", Tensor.mean),
        "norm": _tensor_fn("norm", Tensor.norm), "mm": _tensor_fn("mm", Tensor.mm), "matmul": _matmul,
        "clone": _tensor_fn("clone", Tensor.clone),
        "eq": _tensor_fn("eq", Tensor.eq), "ne": _tensor_fn("ne", Tensor.ne), "lt": _tensor_fn("lt", Tensor.lt),
        "le": _tensor_fn("le", Tensor.le), "gt": _tensor_fn("gt", Tensor.gt), "ge": _tensor_fn("ge", Tensor.ge),
        "numel": _tensor_fn("numel", Tensor.numel),
        "set_printoptions": _set_printoptions,
        # group: elementwise
        # group: reduce
        # group: shape
        # group: creation
        # constants and namespaces
        "pi": _math.pi, "e": _math.e, "inf": _math.inf, "nan": _math.nan,
        "autograd": autograd_ns, "nn": nn, "linalg": linalg,
        "dtype": dtypes.DType,
    }
    for alias, dt in dtypes.ALIASES.items():
        members[alias] = dt
    return ScriptModule("torch", members)


_MATH_NAMES = (
    "pi", "e", "tau", "inf", "nan", "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "pow",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "floor", "ceil", "trunc", "fabs", "fmod", "copysign", "hypot", "isclose", "isfinite",
    "isinf", "isnan", "degrees", "radians", "factorial", "gcd", "comb", "perm", "prod", "fsum", "erf",
    "erfc", "gamma", "lgamma", "modf", "frexp", "ldexp", "remainder", "dist",
)


def _build_math() -> ScriptModule:
    return ScriptModule("math", {n: getattr(_math, n) for n in _MATH_NAMES if hasattr(_math, n)})


TORCH = _build_torch()
MATH = _build_math()


def module(path: str) -> ScriptModule | None:
    """The module an import names (`torch.nn.functional`), or None when gradcli has no such module."""
    if path == "math":
        return MATH
    parts = path.split(".")
    if parts[0] != "torch":
        return None
    mod = TORCH
    for p in parts[1:]:
        mod = mod.members.get(p)
        if not isinstance(mod, ScriptModule):
            return None
    return mod


# ------------------------------------------------------------------------------------------ builtins

def make_builtins(write) -> dict:
    """The builtins of one session; `print` writes through `write` (the session's stdout)."""

    def print_(*args, sep=" ", end="\n", file=None, flush=False):
        if sep is None:
            sep = " "
        elif not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is None:
            end = "\n"
        elif not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        if file is not None:
            raise TypeError("print(file=...) is outside gradcli's language: scripts cannot write files")
        write(sep.join([a if a.__class__ is str else str(a) for a in args]) + end)

    table = {name: getattr(builtins, name) for name in (
        "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "repr", "round",
        "list", "tuple", "enumerate", "zip", "reversed", "sorted", "any", "all", "divmod", "pow")}
    table["print"] = print_
    return table
