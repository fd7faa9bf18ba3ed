"""Python's `operator` module for scripts: the operators as functions, with the same size bounds the language
puts on `a * b`, `a ** b`, `a << b`, `a + b` and `a % b` (gradcli.language.bounds), and `attrgetter` /
`methodcaller` reading attributes by the language's rules (gradcli.language.access), never Python's own.
Made on the first `import operator`; gradcli.session hands the maker to stdlib (which this module imports
through access)."""

from __future__ import annotations

import operator as _operator

from gradcli.engine.tensor import Tensor
from gradcli.language import access, bounds
from gradcli.language.stdlib import Builtin, ScriptModule

# the operators whose result can grow with their operands: checked as the language checks `a OP b`
_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and_", "or_",
           "xor")
_PLAIN = ("lt", "le", "eq", "ne", "ge", "gt", "is_", "is_not", "not_", "truth", "neg", "pos", "abs", "invert",
          "inv", "index", "contains", "countOf", "indexOf", "getitem", "setitem", "delitem")


def _checked(name: str, function, check):
    if check is None:
        return Builtin("builtins", name, function)

    def operator_function(a, b):
        if a.__class__ is not Tensor:       # (as the operators skip it: a tensor never grows a sequence)
            check(a, b)
        return function(a, b)
    return Builtin("builtins", name, operator_function)


def _concat(a, b):
    """a + b for two sequences (CPython's words for anything else)."""
    if not hasattr(type(a), "__getitem__") or isinstance(a, dict):
        raise TypeError(f"'{type(a).__name__}' object can't be concatenated")
    bounds.BINOP_CHECKS["add"](a, b)
    return a + b


class attrgetter:
    """operator.attrgetter: each name (dotted names follow each part) read as `obj.name` reads it in a script."""

    __slots__ = ("_paths",)

    def __init__(self, attr, *attrs):
        for name in (attr,) + attrs:
            if name.__class__ is not str:
                raise TypeError("attribute name must be a string")
        self._paths = tuple(tuple(name.split(".")) for name in (attr,) + attrs)

    def _one(self, obj, path):
        for part in path:
            obj = access.read_attr(obj, part)
        return obj

    def __call__(self, obj):
        if len(self._paths) == 1:
            return self._one(obj, self._paths[0])
        return tuple(self._one(obj, path) for path in self._paths)

    def __repr__(self) -> str:
        return f"operator.attrgetter({', '.join(repr('.'.join(p)) for p in self._paths)})"


class methodcaller:
    """operator.methodcaller: `obj.name(*args, **kwargs)`, the method read as a script reads it."""

    __slots__ = ("_name", "_args", "_kwargs")

    def __init__(self, name, *args, **kwargs):
        if name.__class__ is not str:
            raise TypeError("method name must be a string")
        self._name, self._args, self._kwargs = name, args, kwargs

    def __call__(self, obj):
        return access.read_attr(obj, self._name)(*self._args, **self._kwargs)

    def __repr__(self) -> str:
        parts = [repr(self._name)] + [repr(a) for a in self._args] + [f"{k}={v!r}" for k, v in self._kwargs.items()]
        return f"operator.methodcaller({', '.join(parts)})"


def members() -> dict:
    out = {name: _checked(name, getattr(_operator, name), bounds.BINOP_CHECKS.get(name)) for name in _BINARY}
    out.update((name, Builtin("builtins", name, getattr(_operator, name))) for name in _PLAIN)
    out.update((f"i{name.rstrip('_')}", _checked(f"i{name.rstrip('_')}", getattr(_operator, f"i{name.rstrip('_')}"),
                                                   bounds.BINOP_CHECKS.get(name)))
               for name in _BINARY)
    out["concat"] = Builtin("builtins", "concat", _concat)
    out["itemgetter"] = Builtin("operator", "itemgetter", _operator.itemgetter)
    out["attrgetter"] = Builtin("operator", "attrgetter", attrgetter)
    out["methodcaller"] = Builtin("operator", "methodcaller", methodcaller)
    return out
