"""Python's `types` module for scripts: `SimpleNamespace` only (the UvA tutorials keep a model's hyperparameters
in one), CPython's own class, whose instances' attributes scripts read, set and delete by the rules here
(gradcli.language.access asks them, as it asks the enum module's). The module's other names (FunctionType,
ModuleType, new_class...) are Python's internals: NotImplementedError, as for a partial module."""

from __future__ import annotations

import sys
import types as _types

from gradcli.language import access
from gradcli.language.classes import is_dunder

SimpleNamespace = _types.SimpleNamespace


def members() -> dict:
    return {"SimpleNamespace": SimpleNamespace}


def _held(obj, name: str) -> dict:
    """The namespace's dict, once `name` is known to be one it holds (CPython's AttributeError otherwise);
    dunders are Python's internals, outside the language."""
    if is_dunder(name):
        raise AttributeError(f"'types.SimpleNamespace' object attribute '{name}' is outside gradcli's language")
    if name not in obj.__dict__:
        raise AttributeError(f"'types.SimpleNamespace' object has no attribute '{name}'")
    return obj.__dict__


def class_attr(obj, name: str):
    """`ns.name` (access looks these rules up by the instance's class): what the namespace holds, or its
    __dict__ (what vars() gives)."""
    if name == "__dict__":
        return obj.__dict__
    return _held(obj, name)[name]


def instance_dict(obj) -> dict:
    """vars(ns): the live dict of what it holds."""
    return obj.__dict__


def attribute_names(obj) -> frozenset:
    return frozenset(obj.__dict__)


def set_attr(obj, name: str, value) -> None:
    if is_dunder(name):
        _held(obj, name)        # (raises)
    obj.__dict__[name] = value


def del_attr(obj, name: str) -> None:
    del _held(obj, name)[name]


access.register_metaclass_rules(SimpleNamespace, sys.modules[__name__])
