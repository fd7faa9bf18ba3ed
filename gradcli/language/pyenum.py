"""Python's enum module as scripts reach it: `Enum`, `IntEnum`, `StrEnum`, `Flag`, `IntFlag`, `auto` and `unique`,
with CPython 3.11's semantics, reprs and messages, because they are CPython's own.

A script's `class Act(Enum)` is made by CPython's EnumType: its body fills the namespace EnumType prepares
(which records members as they are bound, so `auto()`, a reused name and `_generate_next_value_` behave as in
CPython), and EnumType makes the class and its members. Its methods are the script's functions, which bind
as Python's do. Only what scripts reach of these classes and members is gradcli's, by the rules here
(gradcli.language.access asks them): a class gives its members, `__members__`, what the script's class body
defined (methods, `_missing_`...) and its name; a member gives `name`, `value`, `_name_`, `_value_`, what its
class body defined and what its `__init__` set, and a str or int member its value's methods as the language
offers them. EnumType's bookkeeping (`_member_map_`, `_value2member_map_`, `_new_member_`...) and the enum
module's own classes stay out of reach, and a script changes only its own classes."""

from __future__ import annotations

import enum as _enum
import sys
import weakref

from gradcli.engine.state import STATE
from gradcli.language import access, bounds, classes, stdlib
from gradcli.language.classes import is_dunder
from gradcli.language.nn import sdpa

EnumType = _enum.EnumType

# The enum classes scripts made -> the names their class bodies bound that are not members (methods, hooks...),
# and those the script set on the class later
_BODY_NAMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# What a member's __dict__ holds for CPython's enum rather than for the script
_MEMBER_INTERNALS = frozenset(("_sort_order_", "__objclass__", "__init__"))


class _EnumMaker:
    """`class Act(Enum)` (any base whose class is EnumType): EnumType's namespace and class."""

    @staticmethod
    def prepare(name: str, bases: list):
        for base in bases:
            if base.__class__ is not EnumType and base not in _DATA_TYPES:
                raise TypeError(f"an enum deriving from {base!r} is outside gradcli's language: its bases may be "
                                "enums and int, float or str")
        namespace = EnumType.__prepare__(name, tuple(bases))
        namespace.gradcli_prepared = dict(namespace)      # (the base's _generate_next_value_: not the script's)
        return namespace

    @staticmethod
    def make(name: str, bases: list, namespace):
        classes.check_namespace(namespace)
        prepared = namespace.gradcli_prepared
        body = {k for k, v in namespace.items() if not is_dunder(k) and k not in namespace._member_names
                and not (k in prepared and prepared[k] is v)}
        _MAKING.append((namespace.get("__qualname__"), body))     # (its members' __init__ runs before it exists)
        try:
            cls = EnumType(name, tuple(bases), namespace)
        finally:
            _MAKING.pop()
        _BODY_NAMES[cls] = body
        return cls


_DATA_TYPES = (int, float, str)
# The enum module's own classes (Enum, IntEnum...): a script's enum is any other (its __init__ sets attributes on
# its members while EnumType is still making the class)
_LIBRARY = frozenset(v for v in vars(_enum).values() if v.__class__ is EnumType)


_MAKING: list = []       # (qualified name, body names) of the enums EnumType is making


def _script_names(cls):
    """The names the script's class bodies bound along cls's classes (never EnumType's own)."""
    for klass in cls.__mro__:
        names = _BODY_NAMES.get(klass)
        if names is None and _MAKING and klass.__qualname__ == _MAKING[-1][0] and klass not in _LIBRARY:
            names = _MAKING[-1][1]
        if names is not None:
            yield klass, names


def attribute_names(obj) -> frozenset:
    """What completion offers on an enum class or member: what the rules above let a script read."""
    cls = obj if obj.__class__ is EnumType else obj.__class__
    names = {n for _, body in _script_names(cls) for n in body}
    if obj is cls:
        names.update(cls._member_map_)
    else:
        names.update(("name", "value"))
        names.update(k for k in getattr(obj, "__dict__", ()) if k[:1] != "_")
    return frozenset(n for n in names if n[:1] != "_")


def _defined(cls, name: str) -> bool:
    return any(name in names for _, names in _script_names(cls))


def _special(cls, name: str) -> bool:
    """A special method one of the script's enum classes defined (its own __str__, __init__)."""
    return any(name in klass.__dict__ for klass, _ in _script_names(cls))


def class_attr(cls, name: str):
    """`Act.name` for an enum class."""
    if name[:2] == "__" and is_dunder(name):
        if name == "__members__":
            return cls.__members__
        if name == "__module__" and cls.__module__.startswith("gradcli."):
            return "__main__"       # (the functional API, Enum('Color', 'RED GREEN'), names its caller's module)
        if name in classes.CLASS_INFO or name in classes.SPECIAL_METHODS and name != "__new__" and _special(cls, name):
            return getattr(cls, name)       # (EnumType keeps a member's __new__ apart and puts Enum's in its place)
        raise AttributeError(f"type object '{cls.__name__}' attribute '{name}' is outside gradcli's language")
    if name in cls._member_map_ or _defined(cls, name):
        return getattr(cls, name)
    if hasattr(cls, name):          # EnumType's bookkeeping, the data type's class attributes
        raise AttributeError(f"type object '{cls.__name__}' attribute '{name}' is outside gradcli's language")
    return getattr(cls, name)       # (raises EnumType's AttributeError: the name alone)


_MEMBER_ATTRS = frozenset(("name", "value", "_name_", "_value_"))


def member_attr(obj, name: str):
    """`member.name` for an enum member."""
    cls = obj.__class__
    if name[:2] == "__" and is_dunder(name):
        if name in classes.SPECIAL_METHODS and name != "__new__" and _special(cls, name):
            return getattr(obj, name)
        if name == "__doc__" or name == "__module__":       # its class's
            return class_attr(cls, name)
        raise AttributeError(f"'{cls.__name__}' object attribute '{name}' is outside gradcli's language")
    if name in _MEMBER_ATTRS or _defined(cls, name):
        return getattr(obj, name)
    own = getattr(obj, "__dict__", None)
    if own is not None and name in own and name not in _MEMBER_INTERNALS:
        return own[name]                # what the script's __init__ set
    kind = cls._member_type_
    if kind in _DATA_TYPES:         # an int or str member: its value's methods, as the language offers them
        method = access.value_method(obj, kind, name)
        if method is not access.ABSENT:
            return method
    if hasattr(obj, name):
        raise AttributeError(f"'{cls.__name__}' object attribute '{name}' is outside gradcli's language")
    return getattr(obj, name)           # (raises Python's AttributeError)


def set_attr(obj, name: str, value) -> None:
    """`Act.x = v` or `member.x = v`: on the script's own enums, names that are not Python's or EnumType's."""
    cls = obj if obj.__class__ is EnumType else obj.__class__
    kind = f"type object '{cls.__name__}'" if obj is cls else f"'{cls.__name__}' object"
    if cls in _LIBRARY:                 # the enum module's classes are the process's
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language: scripts change only "
                             "their own enums")
    if is_dunder(name) or (name[:1] == "_" and name[-1:] == "_" and name not in _MEMBER_ATTRS):
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
    if obj is not cls and (name == "_name_" or name == "_value_" and not _MAKING):
        # (`_value_` is what a member's __new__ sets while EnumType makes the class, as in CPython)
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
    setattr(obj, name, value)
    if obj is cls:
        _BODY_NAMES.setdefault(cls, set()).add(name)    # (readable as what the class body bound)


def del_attr(obj, name: str) -> None:
    cls = obj if obj.__class__ is EnumType else obj.__class__
    kind = f"type object '{cls.__name__}'" if obj is cls else f"'{cls.__name__}' object"
    if cls in _LIBRARY or is_dunder(name) or name[:1] == "_" and name[-1:] == "_":
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
    delattr(obj, name)


def members() -> dict:
    return {"Enum": _enum.Enum, "IntEnum": _enum.IntEnum, "StrEnum": _enum.StrEnum, "Flag": _enum.Flag,
            "IntFlag": _enum.IntFlag, "auto": _enum.auto, "unique": _unique}


def _unique(enumeration):
    """enum.unique: CPython's, on an enum class (it reads the class's __members__)."""
    if enumeration.__class__ is not EnumType:
        raise AttributeError(f"'{stdlib.type_name(enumeration)}' object has no attribute '__members__'"
                             if not isinstance(enumeration, type) else
                             f"type object '{enumeration.__name__}' has no attribute '__members__'")
    return _enum.unique(enumeration)


def _contains_warning(cls, item) -> None:
    """CPython 3.11 warns before refusing `1 in Act` (a script is __main__, where DeprecationWarning shows)."""
    warn = STATE.warn
    if warn is not None and not isinstance(item, _enum.Enum):
        warn("DeprecationWarning", "in 3.12 __contains__ will no longer raise TypeError, but will return True or\n"
                                   "False depending on whether the value is a member or the value of a member")


_unique.__name__ = _unique.__qualname__ = "unique"
bounds.CONTAINS_WARNINGS[EnumType] = _contains_warning
classes.METACLASS_MAKERS[id(EnumType)] = _EnumMaker
classes.HELD_METACLASSES[EnumType] = "enum.EnumType"
access.register_metaclass_rules(EnumType, sys.modules[__name__])
# torch.nn.attention.SDPBackend (PyTorch's pybind enum, printed as its class) is read by the same rules
access.register_metaclass_rules(sdpa.PybindEnum, sys.modules[__name__])
# an enum's __members__: a read-only view of its members, read as a dict is
access.ALLOWED[type(_enum.Enum.__members__)] = frozenset(("keys", "values", "items", "get", "copy"))
