"""torch.sym_int, sym_float, sym_max, sym_min, sym_not, sym_sqrt, sym_ite and sym_sum: PyTorch's helpers for
symbolic sizes, which on plain numbers and tensors (all a script has: gradcli traces no symbolic shapes) are
Python's int, float, max, min, not, math.sqrt, a conditional and sum, with PyTorch's checks."""

from __future__ import annotations

import math

from gradcli.engine.tensor import Tensor

_NUMBER_TYPES = ("(<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, <class 'float'>)")


def _class(value) -> str:
    """`type(value)` as Python prints it in PyTorch's messages."""
    if value.__class__ is Tensor:
        return "<class 'torch.Tensor'>"
    cls = value.__class__
    module = cls.__module__
    return f"<class '{cls.__qualname__ if module == 'builtins' else module + '.' + cls.__qualname__}'>"


def sym_int(a):
    """int(a)."""
    return int(a)


def sym_float(a):
    """float(a)."""
    return float(a)


def _number(value) -> None:
    if not isinstance(value, (int, float)):
        raise AssertionError(f"expected {_NUMBER_TYPES}, got {_class(value)}")


def sym_max(a, b):
    """max(a, b), a float when either is one."""
    _number(a)
    _number(b)
    larger = max(a, b)
    return float(larger) if isinstance(a, float) or isinstance(b, float) else larger


def sym_min(a, b):
    """min(a, b), a float when either is one."""
    _number(a)
    _number(b)
    smaller = min(a, b)
    return float(smaller) if isinstance(a, float) or isinstance(b, float) else smaller


def sym_not(a):
    """not a."""
    return not a


def sym_sqrt(a):
    """math.sqrt(a)."""
    return math.sqrt(a)


def sym_ite(b, t, f):
    """t if b else f, for a bool b and t and f of one type."""
    if b.__class__ is not bool:
        raise AssertionError(f"expected SymBool or bool, got {_class(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {_class(t)} vs {_class(f)}")
    return t if b else f


def sym_sum(*args):
    """sum(args), of a list or tuple given alone or of the arguments."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return sum(args)


NAMES = ("sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum")
