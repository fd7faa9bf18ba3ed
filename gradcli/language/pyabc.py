"""Python's abc module as scripts reach it: `ABC`, `ABCMeta` (as a class statement's `metaclass=`) and
`abstractmethod`, with CPython 3.11's semantics and messages.

A script's class stays a ScriptType class (gradcli.language.classes); what ABCMeta adds to it is its
`__abstractmethods__`, which classes.set_abstract_methods computes as ABCMeta does when the class is made.
Python itself refuses to instantiate a class whose set is not empty ("Can't instantiate abstract class
Layer with abstract methods __call__, size"), whatever its other bases (`class Base(nn.Module, ABC)`, as
PyTorch's modules mix with it). `Base.register(Other)` records a virtual subclass (classes.VIRTUAL), which
the script's isinstance, issubclass and class patterns consult; gradcli's own checks stay Python's."""

from __future__ import annotations

from gradcli.language import classes, stdlib
from gradcli.language.classes import ScriptObject, ScriptType


class ABC(ScriptObject, metaclass=ScriptType):
    """abc.ABC: a class deriving from it has its abstract methods counted."""

    __slots__ = ()


ABC.__module__ = "abc"
classes.ABSTRACT_AWARE.add(ABC)
classes.DICT_LIBRARY_CLASSES.add(ABC)       # (nothing of its own in an instance's __dict__)
ABC.__abstractmethods__ = frozenset()

# abc.ABCMeta as scripts hold it: what `type(Layer)` gives and `metaclass=` takes (it makes no class itself)
ABCMETA = stdlib.metaclass_value("abc.ABCMeta")


class _ABCMetaMaker:
    """`class Base(metaclass=ABCMeta)`: a script's class whose abstract methods are counted."""

    @staticmethod
    def prepare(name: str, bases: list) -> dict:
        return {}

    @staticmethod
    def make(name: str, bases: list, namespace: dict):
        cls = classes.make_class(name, bases, namespace)
        classes.set_abstract_methods(cls)
        return cls


classes.METACLASS_MAKERS[id(ABCMETA)] = _ABCMetaMaker


_VALUES = (int, float, complex, bool, str, type(None), tuple, list, dict, set, frozenset)


def abstractmethod(funcobj):
    """Mark a script's function (or the staticmethod, classmethod it is wrapped in) abstract."""
    from gradcli.language.compiler import ScriptFunction
    if funcobj.__class__ is ScriptFunction:
        if funcobj.attrs is None:
            funcobj.attrs = {}
        funcobj.attrs["__isabstractmethod__"] = True
    elif funcobj.__class__ in (staticmethod, classmethod, property):
        funcobj.__isabstractmethod__ = True         # (property's is read-only: Python's AttributeError)
    elif funcobj.__class__ in _VALUES:             # Python's own values take no attribute
        raise AttributeError(f"'{type(funcobj).__name__}' object has no attribute '__isabstractmethod__'")
    else:
        raise TypeError(f"abc.abstractmethod of a '{stdlib.type_name(funcobj)}' object is outside gradcli's "
                        "language: it takes a function the script defines")
    return funcobj


def members() -> dict:
    return {"ABC": ABC, "ABCMeta": ABCMETA, "abstractmethod": abstractmethod}
