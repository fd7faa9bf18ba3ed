"""Script classes: what a `class` statement makes, and what scripts may reach of classes and instances.

A script's class is a real Python class whose metaclass is ScriptType, made from the namespace its body
left (gradcli.language.compiler.Compiler.s_ClassDef). Python itself then gives it the semantics scripts
expect, exactly: the method resolution order, bound methods (a script function binds as a Python function
does, compiler.ScriptFunction.__get__), staticmethod, classmethod and property, the special methods
(`a + b` calls the script's `__add__`, `len(x)` its `__len__`, a missing one raises Python's own
TypeError naming the script's class), `isinstance`, exception classes that `raise` and `except` take, and
the messages of its errors ("'Net' object has no attribute 'fc'").

Scripts never reach these objects through Python's own attribute machinery: every `obj.name` goes through
gradcli.language.access, which hands script classes and instances to the functions below. They allow
what a script's own objects have (attributes it set, methods it defined, `_`-prefixed names included) and
the special methods of SPECIAL_METHODS; Python's internals (`__class__`, `__globals__`, `__subclasses__`...)
stay out of reach (an object's `__dict__` comes as an AttributeDict, which takes the rules of setattr), and a
class body may define no special method Python would call
outside the language (`__getattribute__`, `__class_getitem__`, descriptors' `__get__`...); `__setattr__` and
`__delattr__` may be defined, and come guarded to whatever reads them (GuardedSetter), and `__new__` may be
defined, while the builtin `__new__` it reaches (`super().__new__(cls)`, `object.__new__`) comes guarded to make
objects of the script's own classes only (GuardedNew).

A library class that scripts subclass (torch.nn.Module, torch.autograd.Function...) is a ScriptType
class gradcli defines in Python: a script class derives from it as from its own classes. The engine's
optimisers are plain classes (the engine knows nothing of the language): LIBRARY_BASES names them, and a
script class deriving from one is a ScriptType class all the same.
"""

from __future__ import annotations

import builtins
import collections
import functools
import weakref
from types import MappingProxyType, MethodType

from gradcli.engine.addresses import address
from gradcli.language import bounds, pycollections
from gradcli.language.bounds import Bounded

# The special methods a class may define: the ones Python calls for the operations scripts use.
SPECIAL_METHODS = frozenset(
    ["__init__", "__call__", "__len__", "__getitem__", "__setitem__", "__delitem__", "__iter__", "__next__",
     "__reversed__", "__contains__", "__repr__", "__str__", "__format__", "__hash__", "__bool__", "__eq__",
     "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__", "__invert__", "__int__",
     "__float__", "__complex__", "__index__", "__round__", "__enter__", "__exit__", "__getattr__", "__divmod__", "__rdivmod__",
     "__copy__", "__deepcopy__", "__post_init__", "__setattr__", "__delattr__", "__del__",
     "__init_subclass__", "__new__"]
    + [f"__{p}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or",
                                  "xor", "lshift", "rshift") for p in ("", "r", "i")])
# Whether a script made a class with a __del__ (its objects in cycles are freed at exit by a collection, which the
# other runs skip: gradcli.session.Session.finalize)
FINALIZERS = [False]
# The special methods that set and delete attributes: a class may define them, and what reads them (obj.__setattr__,
# super().__setattr__, object.__setattr__, Cls.__setattr__) gets them guarded (GuardedSetter), so that no call of
# them sets a name `obj.name = value` would refuse
SETTERS = frozenset(("__setattr__", "__delattr__"))
# Dunder names a class body may bind besides the special methods.
CLASS_DUNDERS = frozenset({"__module__", "__qualname__", "__doc__", "__annotations__", "__match_args__", "__slots__"})
# Dunder attributes a script may read on a class (`type(x).__name__`) besides its special methods.
CLASS_INFO = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
# ... and on a function
FUNCTION_INFO = frozenset({"__name__", "__qualname__", "__wrapped__", "__annotations__", "__isabstractmethod__"})
# the classes of a script's functions (compiler.ScriptFunction and its decorated kin), registered by access
FUNCTION_TYPES: set = set()



def _super(*args):
    """super(type, obj) as scripts call it by hand; `super()` in a method is compiled to its two-argument
    form (gradcli.language.compiler), so without arguments it is called from nowhere it could work."""
    if not args:
        raise RuntimeError("super(): no arguments")
    return builtins.super(*args)


SUPER = Bounded(builtins.super, _super)


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name[:2] == "__" and name[-2:] == "__"


class ScriptType(type):
    """The metaclass of the classes scripts define and of the library classes they may subclass."""


class ScriptObject:
    """The base of a script class that names no other (in `object`'s place). Its instances print as
    CPython's do, with the address gradcli shows (gradcli.engine.addresses): `<__main__.Point object at
    0x7f...>`. It has no `__dict__` of its own, as `object` has none, so a script's class whose classes
    all define `__slots__` keeps its attributes to them, as in CPython."""

    __slots__ = ()

    def __repr__(self):
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {address(self)}>"


# The engine's Python classes a script may derive from, by the id of the value that names them in the script's
# torch (torch.optim.Optimizer and the optimisers: gradcli.language.stdlib registers them) -> the class
LIBRARY_BASES: dict = {}


def _allowed_base(base) -> bool:
    return type(base) is ScriptType or base is ScriptObject or base in CONTAINER_BASES or \
        base in pycollections.NAMEDTUPLES or (
        isinstance(base, type) and issubclass(base, Exception) and base.__module__ == "builtins")


# Python's containers a script's class may derive from (`class Config(dict)`, `class History(list)`): its
# instances are dicts and lists with the script's methods, as in CPython
CONTAINER_BASES = frozenset((dict, list, tuple, set, frozenset, collections.OrderedDict, collections.defaultdict,
                             collections.Counter))
# what a class deriving from a namedtuple (`class Point(namedtuple('Point', 'x y'))`) reads of it
_NAMEDTUPLE_CLASS_NAMES = frozenset(("_fields", "_field_defaults", "_make"))


# Bases that make the class themselves (typing.NamedTuple), by the id of the value that names them -> a function
# (name, bases, namespace) -> the class
CLASS_MAKERS: dict = {}


# The classes of the values a class statement may name as a base that stand for a generic form (typing's
# Generic[T], a script's Box[int]) -> a function (value) -> (the class to derive from, or None, its type
# variables); and the script classes made generic that way -> their type variables (Box[int] subscripts them)
BASE_FORMS: dict = {}
GENERIC_PARAMETERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# What else watches class statements (typing.Protocol: gradcli.language.pytyping): objects with
# check(name, bases), called before the class is made from its bases as written, and made(cls, bases), after
CLASS_WATCHERS: list = []
# typing's protocols among a script's classes -> the names a runtime check looks for (gradcli.language.pytyping);
# every class whose metaclass is typing._ProtocolMeta in CPython (the protocols and the classes deriving from
# them); and [isinstance, issubclass] against a protocol, as pytyping sets them
PROTOCOLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
PROTOCOL_CLASSES: "weakref.WeakSet" = weakref.WeakSet()
PROTOCOL_CHECKS: list = [None, None]


# The metaclasses other than ScriptType a class statement may end with, by the id of what names them: the class of
# a base (enum.EnumType) or what `metaclass=` gives (abc.ABCMeta as scripts hold it) -> an object with
# prepare(name, bases) -> the namespace the class body fills, and make(name, bases, namespace) -> the class
METACLASS_MAKERS: dict = {}


def _metaclass_maker(bases: list, metaclass):
    if metaclass is not None:
        if any(id(base.__class__) in METACLASS_MAKERS for base in bases):     # (an enum's EnumType and ABCMeta)
            raise TypeError("metaclass conflict: the metaclass of a derived class must be a (non-strict) subclass of "
                            "the metaclasses of all its bases")
        maker = METACLASS_MAKERS.get(id(metaclass))
        if maker is None:
            if metaclass is builtins.type or getattr(metaclass, "original", None) is builtins.type:
                return None
            raise TypeError(f"metaclass={metaclass!r} is outside gradcli's language: a script's class may name "
                            "abc.ABCMeta or type")
        return maker
    if METACLASS_MAKERS:
        for base in bases:
            maker = METACLASS_MAKERS.get(id(base.__class__))
            if maker is not None:
                return maker
    return None


def prepare(name: str, bases: list, metaclass=None) -> dict:
    """The namespace a class body fills: a dict, or what the class's metaclass prepares (an enum's records
    its members as they are bound)."""
    maker = _metaclass_maker(bases, metaclass)
    return {} if maker is None else maker.prepare(name, bases)


def make_class(name: str, bases: list, namespace: dict, metaclass=None, kwargs=None):
    """The class a `class` statement makes from its evaluated bases and the namespace its body left; `kwargs`, its
    other keywords, go to the bases' __init_subclass__ as in CPython."""
    for base in bases:
        maker = CLASS_MAKERS.get(id(base)) or CLASS_MAKERS.get(id(base.__class__))
        if maker is not None:
            if getattr(maker, "takes_keywords", False):     # (typing.TypedDict's total=)
                return maker(name, bases, namespace, kwargs or {})
            _no_keywords(name, kwargs)
            return maker(name, bases, namespace)
    maker = _metaclass_maker(bases, metaclass)
    if maker is not None:
        _no_keywords(name, kwargs)
        return maker.make(name, bases, namespace)
    written = bases
    for watcher in CLASS_WATCHERS:
        watcher.check(name, written)
    variables = []
    if BASE_FORMS:
        resolved = []
        for base in bases:
            form = BASE_FORMS.get(base.__class__)
            if form is not None:
                base, found = form(base)
                variables += [v for v in found if v not in variables]
                if base is None:
                    continue
            resolved.append(base)
        bases = resolved
    try:
        cls = _make_class(name, bases, namespace, kwargs or {})
    except RuntimeError as e:       # a descriptor's __set_name__ failed (functools.cached_property's TypeError):
        if e.__cause__ is not None and str(e).startswith("Error calling __set_name__"):
            e.__gradcli_cause__ = True      # ... chained to it as CPython chains it
        raise
    if variables:
        GENERIC_PARAMETERS[cls] = tuple(variables)
    for watcher in CLASS_WATCHERS:
        watcher.made(cls, written)
    return cls


def _no_keywords(name: str, kwargs) -> None:
    """A class keyword for a class made otherwise (an enum, a NamedTuple, an ABCMeta class): object's
    __init_subclass__ refuses it, in CPython's words."""
    if kwargs:
        raise TypeError(f"{name}.__init_subclass__() takes no keyword arguments")


def _make_class(name: str, bases: list, namespace: dict, kwargs: dict):
    real = []
    for base in bases:
        original = base.original if base.__class__ is Bounded else None    # list, dict... as scripts hold them
        library = LIBRARY_BASES.get(id(base))
        if base is object:
            base = ScriptObject
        elif original in CONTAINER_BASES:
            base = original
        elif library is not None:
            base = library
        elif not _allowed_base(base):
            text = repr(original if original is not None else base)
            if text.startswith("<class '"):
                raise TypeError(f"subclassing '{text[8:-2].rpartition('.')[2]}' is outside gradcli's language: a "
                                "script's class may derive from its own classes, object, dict, list, tuple, set, "
                                "frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the "
                                "exception classes and the library classes gradcli provides")
            raise TypeError(f"a class cannot derive from {text}: bases must be classes")
        real.append(base)
    if not any(issubclass(b, (ScriptObject, BaseException)) or type(b) is ScriptType for b in real):
        real.append(ScriptObject)
    check_namespace(namespace)
    hook = namespace.get("__init_subclass__")
    if hook.__class__ in FUNCTION_TYPES:      # a plain function there is a classmethod, as CPython makes it
        namespace["__init_subclass__"] = classmethod(hook)
    maker = namespace.get("__new__")
    if maker.__class__ in FUNCTION_TYPES:     # ... and __new__ a staticmethod
        namespace["__new__"] = staticmethod(maker)
    cls = ScriptType(name, tuple(real), namespace, **kwargs)      # (Python calls the bases' __init_subclass__)
    _SCRIPT_MADE.add(cls)
    if "__del__" in namespace:
        FINALIZERS[0] = True
    if ABSTRACT_AWARE and any(b in ABSTRACT_AWARE for b in real):
        set_abstract_methods(cls)
    return cls


# The classes whose metaclass is abc.ABCMeta in CPython (abc.ABC, the script's classes deriving from it or naming
# `metaclass=ABCMeta`): gradcli.language.pyabc adds them. Each has the __abstractmethods__ ABCMeta would give it,
# which is all Python needs to refuse to instantiate it, in its own words.
ABSTRACT_AWARE: "weakref.WeakSet" = weakref.WeakSet()


# ABCMeta's registry: a class of ABSTRACT_AWARE -> the classes registered as its virtual subclasses (`register`).
# Only the script's isinstance, issubclass and class patterns consult it (stdlib, patterns): gradcli's own checks
# stay Python's.
VIRTUAL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def register_virtual(cls, subclass):
    """`Base.register(Other)`, with CPython's checks: Other becomes a virtual subclass of Base."""
    if not isinstance(subclass, builtins.type):
        raise TypeError("Can only register classes")
    if issubclass(subclass, cls) or virtual_subclass(subclass, cls):
        return subclass
    if issubclass(cls, subclass) or virtual_subclass(cls, subclass):    # (so the registry never has a cycle)
        raise RuntimeError("Refusing to create an inheritance cycle")
    VIRTUAL.setdefault(cls, weakref.WeakSet()).add(subclass)
    return subclass


def virtual_subclass(subclass, classinfo) -> bool:
    """Whether `subclass` is a virtual subclass of `classinfo` (a class or a tuple of them), as ABCMeta's
    __subclasscheck__ finds one: registered with it, or with one of its subclasses."""
    if classinfo.__class__ is tuple:
        return any(virtual_subclass(subclass, c) for c in classinfo)
    if classinfo not in ABSTRACT_AWARE or not isinstance(subclass, builtins.type):
        return False
    for registered in VIRTUAL.get(classinfo, ()):
        if issubclass(subclass, registered) or virtual_subclass(subclass, registered):
            return True
    return any(virtual_subclass(subclass, sub) for sub in builtins.type.__subclasses__(classinfo))


def set_abstract_methods(cls) -> None:
    """What abc.ABCMeta computes for a new class: the names of its abstract methods, its own and those of its
    bases it has not replaced."""
    ABSTRACT_AWARE.add(cls)
    abstracts = {key for key, value in cls.__dict__.items() if getattr(value, "__isabstractmethod__", False)}
    for base in cls.__bases__:
        for key in getattr(base, "__abstractmethods__", ()):
            if getattr(getattr(cls, key, None), "__isabstractmethod__", False):
                abstracts.add(key)
    type.__setattr__(cls, "__abstractmethods__", frozenset(abstracts))


def check_namespace(namespace) -> None:
    """What a class body bound: no dunder name Python would call outside the language, no slot named as one; a
    `__new__` that is the script's function (or staticmethod of one) or a builtin __new__ as scripts hold it."""
    for key in namespace:
        if is_dunder(key) and key not in SPECIAL_METHODS and key not in CLASS_DUNDERS:
            raise TypeError(f"defining {key} in a class is outside gradcli's language")
    if "__new__" in namespace:
        maker = namespace["__new__"]
        if maker.__class__ in (staticmethod, classmethod):
            maker = maker.__func__
        if maker.__class__ not in FUNCTION_TYPES and maker.__class__ is not GuardedNew:
            raise TypeError("defining __new__ in a class is outside gradcli's language: it takes the script's own "
                            "function")
    if "__slots__" in namespace:
        _check_slots(namespace["__slots__"])


# Metaclasses other than ScriptType whose classes scripts hold as they are (enum.EnumType: gradcli.language.pyenum)
# -> the name type(cls) prints
HELD_METACLASSES: dict = {}


def _check_slots(slots) -> None:
    """A slot is an attribute: one named as a special method (`__del__`, `__getattribute__`) would be found by
    Python where it looks for the method, so only `__dict__` and `__weakref__` of the dunder names may be one."""
    if slots.__class__ not in (str, tuple, list, dict):      # (Python takes any iterable: its own, not a script's)
        iter(slots)             # (what is no iterable: Python's TypeError)
        raise TypeError(f"__slots__ as a '{type(slots).__name__}' is outside gradcli's language: it takes a string, "
                        "a tuple, a list or a dict of names")
    for name in (slots,) if slots.__class__ is str else slots:
        if name.__class__ is str and is_dunder(name) and name not in ("__dict__", "__weakref__"):
            raise TypeError(f"a slot named {name} is outside gradcli's language")


# The classes scripts made (their `class` statements), and what scripts changed on the library's own classes
# (torch.nn.Linear.forward = ...), which are the process's: a session undoes those changes before it runs a
# script (undo_library_changes), so a change lasts one script, as it would last one PyTorch process.
_SCRIPT_MADE: "weakref.WeakSet" = weakref.WeakSet()
# The globals of the script that made each class with annotations (CPython's sys.modules[cls.__module__]),
# where @dataclass looks up the names in a string annotation ('ClassVar[int]')
MODULE_GLOBALS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LIBRARY_CHANGES: list = []
_ABSENT = object()


def script_made(cls) -> bool:
    """Whether a script's class statement made `cls` (rather than gradcli: torch.nn.Linear and the like)."""
    return cls in _SCRIPT_MADE


def _note_change(obj, name: str) -> None:
    if type(obj) is ScriptType and obj not in _SCRIPT_MADE:
        _LIBRARY_CHANGES.append((obj, name, obj.__dict__.get(name, _ABSENT)))


def undo_library_changes() -> None:
    """Put back every class attribute a script set or deleted on a library class, newest first."""
    while _LIBRARY_CHANGES:
        cls, name, before = _LIBRARY_CHANGES.pop()
        if before is _ABSENT:
            if name in cls.__dict__:
                type.__delattr__(cls, name)
        else:
            type.__setattr__(cls, name, before)


def _refused(kind: str, name: str) -> AttributeError:
    return AttributeError(f"'{kind}' object attribute '{name}' is outside gradcli's language")


# Dunder attributes a script may read on a dataclass and its instances (a dict of dataclasses.Field, whose
# attributes are the language's)
DATACLASS_INFO = "__dataclass_fields__"


def function_info(fn, name: str):
    """`f.__doc__` and `f.__module__` of a script's function (or bound method, or what wraps one): its
    docstring (None without one, as a lambda's), and '__main__', the module CPython names for a script's."""
    if fn.__class__ is MethodType:
        fn = fn.__func__
    if name == "__module__":
        return "__main__"
    while True:
        doc = getattr(fn, "doc", _NO_DOC)
        if doc is not _NO_DOC:
            return doc
        fn = getattr(fn, "__wrapped__", None)      # (a grad-mode decorator's: functools.wraps copied the docstring)
        if fn.__class__ not in FUNCTION_TYPES:
            return None


_NO_DOC = object()


def instance_attr(obj, name: str):
    """`obj.name` for an instance of a script class."""
    if (name == "__doc__" or name == "__module__") and type(obj).__module__ == "__main__":     # its class's
        return getattr(type(obj), name)
    if name[:2] == "__":
        if name in SETTERS:
            return GuardedSetter(getattr(obj, name), f"'{type(obj).__name__}' object", True)
        if name == "__new__":
            if type(obj) in _SCRIPT_MADE:
                return new_of(type(obj))
            raise _refused(type(obj).__name__, name)
        if is_dunder(name) and name not in SPECIAL_METHODS and not (
                name == DATACLASS_INFO and hasattr(type(obj), name)):
            if name == "__dict__":
                return instance_dict(obj)
            if name == "__cause__" and isinstance(obj, BaseException):
                return exception_cause(obj)
            if name == "__slots__":
                return _slots(type(obj), f"'{type(obj).__name__}' object")
            raise _refused(type(obj).__name__, name)
    return getattr(obj, name)


class GuardedSetter:
    """`__setattr__` / `__delattr__` as a script holds it (bound to an object, or unbound: `object.__setattr__`,
    `Cls.__setattr__`): the function itself, called only with a name `obj.name = value` takes (no dunder: an
    instance's `__array_interface__` is where numpy would look). It binds as a function does, so a class may
    take one as its own (`__setattr__ = object.__setattr__`)."""

    __slots__ = ("function", "kind", "bound")

    def __init__(self, function, kind: str, bound: bool):
        self.function = function
        self.kind = kind            # how the refusal names the object: "'Net' object", "type object 'A'"
        self.bound = bound

    def __call__(self, *args, **kwargs):
        name = args[0] if self.bound else (args[1] if len(args) > 1 else None)
        if name == "__dict__" and self.function.__class__ not in FUNCTION_TYPES and \
                getattr(self.function, "__name__", None) == "__setattr__" and not kwargs and \
                len(args) == (2 if self.bound else 3):      # object.__setattr__(self, '__dict__', d)
            target = self.function.__self__ if self.bound else args[0]
            if type(type(target)) is ScriptType:
                return set_instance_dict(target, args[-1])
        if name.__class__ is str and is_dunder(name):
            kind = self.kind if self.bound or not args else f"'{type(args[0]).__name__}' object"
            raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
        return self.function(*args, **kwargs)

    def __get__(self, obj, owner=None):
        if obj is None or self.bound:
            return self
        return GuardedSetter(MethodType(self.function, obj), f"'{type(obj).__name__}' object", True)

    def __repr__(self) -> str:
        return repr(self.function)


class ContainerSlot:
    """dict.__getitem__, dict.__setitem__ as scripts hold them: the method itself, which binds as a function does (a
    class may take it: `__getattr__ = dict.__getitem__`); one that changes the container is refused for an object's
    __dict__ (whose writes go through its own checked methods)."""

    __slots__ = ("function", "changes")

    def __init__(self, function, changes: bool):
        self.function = function
        self.changes = changes

    def __call__(self, *args, **kwargs):
        if self.changes and args and args[0].__class__ is AttributeDict:
            raise TypeError(f"{self.function.__qualname__}() of an object's __dict__ is outside gradcli's language: "
                            "write into it with its own methods")
        return self.function(*args, **kwargs)

    def __get__(self, obj, owner=None):
        return self if obj is None else MethodType(self, obj)

    def __repr__(self) -> str:
        return repr(self.function)


def exception_cause(exc: BaseException):
    """`exc.__cause__`: what the script's `raise ... from cause` gave (the compiler marks the exceptions it
    raised so); an error raised inside gradcli has none, as PyTorch's C++ errors have none."""
    return exc.__cause__ if getattr(exc, "__gradcli_cause__", False) else None


def class_attr(cls, name: str):
    """`Cls.name` for a script class: what its classes define (never the metaclass's `mro` and the like)."""
    if name[:2] == "__" and is_dunder(name):
        if name in SETTERS:
            return GuardedSetter(getattr(cls, name), f"type object '{cls.__name__}'", False)
        if name == "__new__":
            if cls in _SCRIPT_MADE:
                return new_of(cls)
            raise AttributeError(f"type object '{cls.__name__}' attribute '{name}' is outside gradcli's language")
        if name in SPECIAL_METHODS or name in CLASS_INFO:
            return getattr(cls, name)
        if name == "__dict__" and cls in _SCRIPT_MADE:
            return class_dict(cls)
        if name == "__annotations__" and cls in _SCRIPT_MADE:     # (a library class's are gradcli's own)
            return getattr(cls, name)       # CPython 3.11 makes {} for a class without annotations
        if name == DATACLASS_INFO and hasattr(cls, name):
            return getattr(cls, name)
        if name == "__slots__":
            return _slots(cls, f"type object '{cls.__name__}'")
        if name == "__abstractmethods__":         # (type's own attribute: a frozenset of names, or AttributeError)
            return getattr(cls, name)
        if name in _LINEAGE and cls in _SCRIPT_MADE:
            found = _lineage(cls, name)
            if found is not None:
                return found
        if name == "__subclasses__" and cls in _SCRIPT_MADE and _lineage(cls, "__mro__") is not None:
            return _Subclasses(cls)
        if name == "__match_args__":            # what a class pattern's positional parts read
            if hasattr(cls, name):
                return getattr(cls, name)
            raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'", name=name, obj=cls)
    else:
        for klass in cls.__mro__:
            if type(klass) is ScriptType and name in klass.__dict__:
                return getattr(cls, name)
            if klass in pycollections.NAMEDTUPLES and name in _NAMEDTUPLE_CLASS_NAMES:    # a namedtuple's subclass
                return functools.partial(pycollections.namedtuple_make, cls) if name == "_make" else getattr(cls, name)
        if not hasattr(cls, name):
            if name == "register" and cls in ABSTRACT_AWARE:      # ABCMeta's virtual subclasses
                if cls in _SCRIPT_MADE:
                    return _Register(cls)
                raise AttributeError(f"type object '{cls.__name__}' attribute 'register' is outside gradcli's "
                                     "language: a script registers subclasses of its own classes only")
            raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'", name=name, obj=cls)
    raise AttributeError(f"type object '{cls.__name__}' attribute '{name}' is outside gradcli's language")


_LINEAGE = frozenset(("__mro__", "__bases__", "__base__"))


def _lineage(cls, name: str):
    """`Cls.__mro__`, `__bases__`, `__base__` of a class whose classes are the script's own, `object` (in
    ScriptObject's place) and Python's exceptions; None for a class deriving from a library or container class
    (whose own lineage is gradcli's: refused)."""
    found = cls.__mro__ if name == "__mro__" else cls.__bases__ if name == "__bases__" else (cls.__base__,)
    shown = []
    for klass in found:
        if klass is ScriptObject or klass is object:
            if name == "__mro__" and shown and shown[-1] is object:
                continue
            shown.append(object)
        elif klass in _SCRIPT_MADE or issubclass(klass, BaseException) and klass.__module__ == "builtins":
            shown.append(klass)
        else:
            return None
    return shown[0] if name == "__base__" else tuple(shown)


def _slots(cls, kind: str):
    """`Cls.__slots__`: what the nearest class defining it wrote there, if a script wrote it (gradcli's own
    classes' slots are its internals)."""
    for klass in cls.__mro__:
        if "__slots__" in klass.__dict__:
            if klass in _SCRIPT_MADE:
                return klass.__dict__["__slots__"]
            if klass is ScriptObject:       # (in `object`'s place, which has none)
                break
            raise AttributeError(f"{kind} attribute '__slots__' is outside gradcli's language")
    raise AttributeError(f"{kind} has no attribute '__slots__'", name="__slots__")


class _Register:
    """`Base.register` as scripts hold it (ABCMeta's method, bound to the class): it prints as CPython's."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def __call__(self, subclass):
        return register_virtual(self.cls, subclass)

    def __repr__(self) -> str:
        return f"<bound method ABCMeta.register of {self.cls!r}>"


class _Subclasses:
    """`Cls.__subclasses__` of a script's class, as scripts hold it: called, the classes deriving from it
    directly that are still alive, oldest first, as type's method gives them."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def __call__(self):
        return [klass for klass in type.__subclasses__(self.cls) if klass in _SCRIPT_MADE]

    def __repr__(self) -> str:
        return f"<built-in method __subclasses__ of type object at {address(self.cls)}>"


def super_attr(proxy, name: str):
    """`super().name`."""
    if name[:2] == "__" and is_dunder(name) and name not in SPECIAL_METHODS:
        raise _refused("super", name)
    if name in SETTERS:
        return GuardedSetter(getattr(proxy, name), f"'{type(proxy.__self__).__name__}' object", True)
    if name == "__new__":
        return guarded_new(getattr(proxy, name), proxy.__thisclass__)
    return getattr(proxy, name)


def new_of(cls):
    """`Cls.__new__`: the script's own (a function, as CPython's staticmethod gives it), else the builtin one its
    classes inherit, guarded."""
    return guarded_new(getattr(cls, "__new__"), cls)


def guarded_new(function, owner):
    """A `__new__` a script reached: the script's own function as it is, a builtin one guarded."""
    return function if function.__class__ in FUNCTION_TYPES else GuardedNew(function, owner)


class GuardedNew:
    """A builtin `__new__` (object's, tuple's, dict's...) as a script holds it: it makes objects of the script's own
    classes (and of Python's builtin types, which Python's own checks cover), never of gradcli's classes, whose
    objects an uninitialised `__new__` would leave without the state their code relies on."""

    __slots__ = ("function", "owner")

    def __init__(self, function, owner):
        self.function = function
        self.owner = owner          # the class it was read on (for its repr)

    def __call__(self, *args, **kwargs):
        if args:
            cls = args[0]
            real = cls.original if cls.__class__ is Bounded else cls
            if isinstance(real, type) and real not in _SCRIPT_MADE and real.__module__ != "builtins" and \
                    real.__module__ != "__main__":
                raise TypeError(f"{real.__name__}.__new__ reached through __new__ is outside gradcli's language: it "
                                "makes objects of the script's own classes")
            args = (real,) + args[1:]
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<built-in method __new__ of type object at {address(self.owner)}>"


def set_attr(obj, name: str, value) -> None:
    """`obj.name = value` for a script class or one of its instances."""
    if name == "__dict__" and type(obj) is not ScriptType:
        set_instance_dict(obj, value)
        return
    if name[:2] == "__" and is_dunder(name) and (type(obj) is not ScriptType or name not in SPECIAL_METHODS):
        kind = f"type object '{obj.__name__}'" if type(obj) is ScriptType else f"'{type(obj).__name__}' object"
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
    _note_change(obj, name)
    if name == "__del__":
        FINALIZERS[0] = True
    setattr(obj, name, value)


def del_attr(obj, name: str) -> None:
    if name[:2] == "__" and is_dunder(name):
        kind = f"type object '{obj.__name__}'" if type(obj) is ScriptType else f"'{type(obj).__name__}' object"
        raise AttributeError(f"{kind} attribute '{name}' is outside gradcli's language")
    _note_change(obj, name)
    delattr(obj, name)


def static_attr(obj, name: str):
    """`obj.name` for completion, found without running anything: an instance's own attribute, else a
    class attribute as its class holds it (a property is not called); None when it is neither."""
    if is_dunder(name):
        return None
    cls = obj if type(obj) is ScriptType else type(obj)
    if cls is not obj and name in getattr(obj, "__dict__", ()):
        return obj.__dict__[name]
    if cls is not obj:
        for table in _registries(obj):
            if name in table:
                return table[name]
    for klass in cls.__mro__:
        if type(klass) is ScriptType and name in klass.__dict__:
            return klass.__dict__[name]
    return None


def attribute_names(obj) -> frozenset:
    """The names completion offers on a script class or instance: its own and its classes' attributes."""
    names = set()
    cls = obj if type(obj) is ScriptType else type(obj)
    if cls is not obj:
        names.update(getattr(obj, "__dict__", ()))
        for table in _registries(obj):
            names.update(k for k in table if k.__class__ is str)
    for klass in cls.__mro__:
        if type(klass) is ScriptType:
            names.update(klass.__dict__)
    return frozenset(n for n in names if not is_dunder(n) and n[:1] != "\0")


# torch.nn.Module keeps its parameters, buffers and submodules in dicts of these names, reached through its
# __getattr__: completion offers them as attributes, as they are to scripts
_REGISTRIES = ("_parameters", "_buffers", "_modules")


def _registries(obj) -> list:
    d = getattr(obj, "__dict__", {})
    return [d[k] for k in _REGISTRIES if d.get(k).__class__ is dict]


# A script's classes are classes: CPython's messages name their type so ("'<' not supported between instances
# of 'type' and 'int'")
ScriptType.__name__ = "type"


# ----------------------------------------------------------------------- an instance's __dict__ and vars()

def check_dict_key(key) -> None:
    """A key in an object's __dict__ is an attribute name: a str, no dunder (a dunder in an instance's dict is where
    Python and numpy look for their protocols, `__array_interface__` among them)."""
    if key.__class__ is not str:
        raise TypeError(f"an attribute name must be a str, not '{type(key).__name__}': a '{type(key).__name__}' "
                        "key in an object's __dict__ is outside gradcli's language")
    if is_dunder(key):
        raise AttributeError(f"setting '{key}' through an object's __dict__ is outside gradcli's language")


class AttributeDict(dict):
    """An instance's `__dict__` once a script has held it (`obj.__dict__`, `vars(obj)`): the instance's own dict,
    live, as in CPython (Python reads and sets the attributes in it directly, at a plain dict's speed). What a
    script writes into it is an attribute all the same, so it takes the rules of `obj.name = value`: the key is a
    str and names no special attribute (a dunder in an instance's dict is where Python and numpy look for their
    protocols, `__array_interface__` among them). Scripts see it as a dict: type() and messages say `dict`.
    `keeps` are the keys gradcli's own code relies on (a module's tables), which a script may read but not
    replace or delete; `refuse(key)` raises for the other keys the object's own rules refuse (a tensor's)."""

    __slots__ = ("keeps", "refuse")

    def _check(self, key, deleting: bool = False) -> None:
        check_dict_key(key)
        refuse = getattr(self, "refuse", None)      # (a tensor's: no name of PyTorch's Tensor)
        if refuse is not None and not deleting:
            refuse(key)
        keeps = getattr(self, "keeps", None)
        if keeps and key in keeps:
            verb = "deleting" if deleting else "replacing"
            raise AttributeError(f"{verb} '{key}' in a module's __dict__ is outside gradcli's language: gradcli "
                                 "keeps the module's tables itself")

    def __setitem__(self, key, value):
        self._check(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        if key in self:
            self._check(key, True)
        dict.__delitem__(self, key)

    def setdefault(self, key, default=None):
        if key not in self:
            self._check(key)
        return dict.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 argument, got {len(args)}")
        items = dict(*args, **kwargs)
        for key in items:
            self._check(key)
        dict.update(self, items)

    def __ior__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        self.update(other)
        return self

    def pop(self, key, *default):
        if key in self:
            self._check(key, True)
        return dict.pop(self, key, *default)

    def popitem(self):
        if self:
            self._check(next(reversed(self)), True)
        return dict.popitem(self)

    def clear(self):
        for key in self:
            self._check(key, True)
        dict.clear(self)


bounds.BOUNDED_METHODS[AttributeDict] = bounds.BOUNDED_METHODS[dict]


# The library classes whose instances' __dict__ holds what PyTorch's holds (their own attributes under PyTorch's
# names), so scripts may read it: torch.nn.Module with its subclasses (DICT_LIBRARY_ROOTS: gradcli.language.nn.module
# registers it), the base classes of datasets and samplers and abc.ABC by themselves (DICT_LIBRARY_CLASSES); a
# script's own classes always may. The dicts of gradcli's other objects hold its own workings: outside the language.
DICT_LIBRARY_ROOTS: set = set()
DICT_LIBRARY_CLASSES: set = set()
# a library class -> the keys of its instances' dict that gradcli relies on (a module's tables)
DICT_KEEPS: dict = {}


def _plain_base(klass) -> bool:
    return klass is ScriptObject or klass is object or klass in _SCRIPT_MADE or klass in CONTAINER_BASES or (
        isinstance(klass, type) and issubclass(klass, BaseException) and klass.__module__ == "builtins")


def class_dict(cls):
    """`Cls.__dict__` and `vars(Cls)` for a class a script made from its own classes: CPython's read-only view of
    its namespace."""
    if not all(_plain_base(klass) for klass in cls.__mro__):
        raise AttributeError(f"type object '{cls.__name__}' attribute '__dict__' is outside gradcli's language")
    return MappingProxyType(cls.__dict__)


def set_instance_dict(obj, value) -> None:
    """`obj.__dict__ = d` for an instance of a script class, the dict itself as in CPython: the attribute-dict idiom
    (`self.__dict__ = self` in a class deriving from dict), a shared state (`self.__dict__ = self._shared`, Borg),
    another object's. Its keys are checked now as setattr checks a name; later writes into a dict the script holds
    are not, which is safe only because the object is no list or tuple (numpy looks for `__array_interface__` in
    a sequence's own dict): those, and a library class's object (whose dict holds gradcli's tables), are refused."""
    cls = type(obj)
    if isinstance(obj, (list, tuple, set, frozenset)) or _dict_root(obj) is not None or not _plain_classes(cls):
        raise AttributeError(f"'{cls.__name__}' object attribute '__dict__' is outside gradcli's language")
    if not isinstance(value, dict):
        raise TypeError(f"__dict__ must be set to a dictionary, not a '{_type_name(value)}'")
    for key in value:
        check_dict_key(key)
    object.__setattr__(obj, "__dict__", value)
    if value.__class__ is dict:         # (the dict itself: vars(obj) gives it back, not a guarded copy)
        key = id(obj)
        try:
            _GIVEN_DICTS[key] = weakref.ref(obj, lambda _, key=key: _GIVEN_DICTS.pop(key, None))
        except TypeError:       # (slots without __weakref__: held for the run, so its id is never another's)
            _GIVEN_DICTS[key] = lambda obj=obj: obj


# the objects whose __dict__ the script set to a plain dict (a shared state), by id (an object may be unhashable):
# theirs is that dict, unguarded (none of them is a list or tuple numpy could read)
_GIVEN_DICTS: dict = {}


def _given_dict(obj) -> bool:
    ref = _GIVEN_DICTS.get(id(obj))
    return ref is not None and ref() is obj


def _type_name(value) -> str:
    return TYPE_NAME[0](value)


# the name type() prints for a script's value (gradcli.language.stdlib.type_name, which sets it: it imports this
# module)
TYPE_NAME: list = [lambda value: type(value).__name__]


def _dict_root(obj):
    """The library root (torch.nn.Module...) whose objects' dicts gradcli keeps its tables in, or None."""
    return next((r for r in DICT_LIBRARY_ROOTS if isinstance(obj, r)), None)


def _plain_classes(cls) -> bool:
    """Whether every class of `cls` keeps nothing of gradcli's in an object's dict."""
    return all(_plain_base(klass) or klass in DICT_LIBRARY_CLASSES for klass in cls.__mro__)


def instance_dict(obj):
    """`obj.__dict__` and `vars(obj)` for an instance of a script class or a torch.nn module: its live dict (an
    AttributeDict)."""
    cls = type(obj)
    root = _dict_root(obj)
    keeps = DICT_KEEPS.get(root)
    if root is None and not _plain_classes(cls):
        raise _refused(cls.__name__, "__dict__")
    try:
        d = obj.__dict__
    except AttributeError:      # (a class whose classes all have __slots__; vars() words it as CPython does)
        raise AttributeError(f"'{cls.__name__}' object has no attribute '__dict__'", name="__dict__",
                             obj=obj) from None
    if d.__class__ is dict and not _given_dict(obj):     # (Python's own; a dict the script gave stays as it is)
        held = AttributeDict(d)
        if keeps:
            held.keeps = keeps
        object.__setattr__(obj, "__dict__", held)
        d = held
    for klass in cls.__mro__:           # a library class whose dict holds values it derives brings them up to date
        if klass not in _SCRIPT_MADE and "_dict_refresh" in klass.__dict__:
            klass.__dict__["_dict_refresh"](obj)
            break
    return d
