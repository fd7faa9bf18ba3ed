"""Python's dataclasses module as scripts reach it: `@dataclass` on a script's class, `field`, `fields`,
`asdict`, `astuple`, `replace`, `is_dataclass`, `MISSING`, `KW_ONLY` and `FrozenInstanceError`, with CPython
3.11's semantics and messages.

CPython's dataclass writes the source of each method and execs it. Here each method is made within the
language's class model instead: `__init__`, `__repr__`, `__eq__`, the order methods and a frozen class's
`__hash__` are script functions (compiler.ScriptFunction) whose bodies are closures over the fields, so they
bind, print (`<function GPTConfig.__init__ at 0x...>`), read their annotations and refuse wrong arguments
(`GPTConfig.__init__() got an unexpected keyword argument 'foo'`) as a `def` does; a frozen class's
`__setattr__` and `__delattr__`, which Python calls and scripts never read, are plain functions."""

from __future__ import annotations

import re
import threading
from dataclasses import FrozenInstanceError     # what assigning to a frozen field raises: CPython's own class, so
#                                                 gradcli's own frozen dataclasses (nn.LinearCrossEntropyOptions) raise
#                                                 what scripts catch as dataclasses.FrozenInstanceError

from gradcli.language import bounds, classes, stdlib, syntax
from gradcli.language.classes import ScriptType
from gradcli.language.compiler import ScriptFunction, Signature
from gradcli.language.flow import Return


class _MISSING_TYPE:       # (CPython's name, which its messages give)
    """dataclasses.MISSING: a field's default or factory that was not given."""

    __slots__ = ()

    def __repr__(self) -> str:
        from gradcli.engine.addresses import address
        return f"<dataclasses._MISSING_TYPE object at {address(self)}>"


MISSING = _MISSING_TYPE()


class _KW_ONLY_TYPE:      # (CPython's name)
    """dataclasses.KW_ONLY: the annotation of a pseudo-field after which every field is keyword-only."""

    __slots__ = ()

    def __repr__(self) -> str:
        from gradcli.engine.addresses import address
        return f"<dataclasses._KW_ONLY_TYPE object at {address(self)}>"


KW_ONLY = _KW_ONLY_TYPE()


class _Factory:
    """The default __init__ shows for a field made by a default_factory: called when the argument is left out."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _Factory()


_MISSING_TYPE.__module__ = "dataclasses"     # type(x) and x.__class__ print as CPython's: <class 'dataclasses.Field'>


class Field:
    """What field() returns and fields() lists: a field's name, type, default, default_factory, init,
    repr, hash, compare and kw_only are readable (gradcli.language.access)."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "kw_only")

    def __init__(self, default, default_factory, init, repr, hash, compare, kw_only):
        self.name = None
        self.type = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r},type={self.type!r},default={self.default!r},"
                f"default_factory={self.default_factory!r},init={self.init!r},repr={self.repr!r},"
                f"hash={self.hash!r},compare={self.compare!r},metadata=mappingproxy({{}}),"
                f"kw_only={self.kw_only!r},_field_type={'_FIELD' if self.name is not None else None})")


FIELD_ATTRIBUTES = frozenset(Field.__slots__)


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True,
          metadata=None, kw_only=MISSING):
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    if metadata is not None:
        raise NotImplementedError("gradcli does not implement dataclasses.field(metadata=...)")
    return Field(default, default_factory, init, repr, hash, compare, kw_only)


class _Params:
    __slots__ = ("init", "repr", "eq", "order", "frozen", "kw_only")

    def __init__(self, init, repr, eq, order, frozen, kw_only):
        self.init, self.repr, self.eq, self.order, self.frozen = init, repr, eq, order, frozen
        self.kw_only = kw_only


def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=False,
              match_args=True, kw_only=False, slots=False, weakref_slot=False):
    """@dataclass and @dataclass(...): the class, given its methods."""
    for name, value in (("unsafe_hash", unsafe_hash), ("slots", slots), ("weakref_slot", weakref_slot)):
        if value:
            raise NotImplementedError(f"gradcli does not implement dataclass({name}=True)")
    params = _Params(init, repr, eq, order, frozen, kw_only)

    def wrap(cls):
        return _process(cls, params, match_args)
    if cls is None:
        return wrap             # (printed as CPython's: <function dataclass.<locals>.wrap at 0x...>)
    return wrap(cls)


def _process(cls, params: _Params, match_args: bool = True):
    if type(cls) is not ScriptType or not classes.script_made(cls):      # (never one of the library's classes)
        if not hasattr(cls, "__module__"):
            raise AttributeError(f"'{stdlib.type_name(cls)}' object has no attribute '__module__'")
        raise TypeError(f"@dataclass on {cls!r} is outside gradcli's language: it takes a class the script "
                        "defines")
    if params.order and not params.eq:
        raise ValueError("eq must be true if order is true")
    class_hash = cls.__dict__.get("__hash__", MISSING)     # (before any method is added, as CPython decides)
    explicit_hash = class_hash is not MISSING and not (class_hash is None and "__eq__" in cls.__dict__)
    fields = {}
    any_frozen_base = has_dataclass_bases = False
    for base in cls.__mro__[-1:0:-1]:
        base_fields = base.__dict__.get("__dataclass_fields__")
        if base_fields is not None:
            has_dataclass_bases = True
            fields.update(base_fields)
            any_frozen_base = any_frozen_base or base.__dict__["__dataclass_params__"].frozen
    own = {name: kind for name, kind in cls.__dict__.get("__annotations__", {}).items()
           if not _is_type(kind, cls, "typing", _class_var)}
    kw_only, marker = params.kw_only, None
    for name, kind in own.items():
        if _is_type(kind, cls, "dataclasses", _kw_only):    # `_: KW_ONLY`: the fields after it are keyword-only
            if marker is not None:
                raise TypeError(f"{name!r} is KW_ONLY, but KW_ONLY has already been specified")
            kw_only, marker = True, name
            continue
        f = _field(cls, name, kind, kw_only)
        fields[name] = f
        if isinstance(cls.__dict__.get(name), Field):
            if f.default is MISSING:
                type.__delattr__(cls, name)
            else:
                type.__setattr__(cls, name, f.default)
    own.pop(marker, None)
    for name, value in cls.__dict__.items():
        if isinstance(value, Field) and name not in own:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    if has_dataclass_bases:
        if any_frozen_base and not params.frozen:
            raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
        if not any_frozen_base and params.frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    type.__setattr__(cls, "__dataclass_params__", params)      # (in CPython's order, which vars(cls) shows)
    type.__setattr__(cls, "__dataclass_fields__", fields)
    every = list(fields.values())
    if params.init:
        _check_defaults(every)
        _set_new(cls, "__init__", _init(cls, every, params.frozen))
    if params.repr:
        _set_new(cls, "__repr__", _repr(cls, [f for f in every if f.repr]))
    compared = [f for f in every if f.compare]
    if params.eq:
        _set_new(cls, "__eq__", _compare(cls, "__eq__", compared, lambda a, b: a == b))
    if params.order:
        for name, op in (("__lt__", lambda a, b: a < b), ("__le__", lambda a, b: a <= b),
                         ("__gt__", lambda a, b: a > b), ("__ge__", lambda a, b: a >= b)):
            if name in cls.__dict__:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}. Consider using "
                                "functools.total_ordering")
            type.__setattr__(cls, name, _compare(cls, name, compared, op))
    if params.frozen:
        for name, fn in (("__setattr__", _frozen_setattr(cls, fields)), ("__delattr__", _frozen_delattr(cls, fields))):
            if name in cls.__dict__:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
            type.__setattr__(cls, name, fn)
    if not explicit_hash:
        _set_hash(cls, params, [f for f in every if (f.compare if f.hash is None else f.hash)])
    if "__doc__" not in cls.__dict__ or cls.__dict__["__doc__"] is None:
        type.__setattr__(cls, "__doc__", _doc(cls, every))
    if match_args:              # the fields __init__ takes by position, for a class pattern's positional parts
        if "__match_args__" not in cls.__dict__:
            type.__setattr__(cls, "__match_args__", tuple(f.name for f in every if f.init and not f.kw_only))
    return cls


def _class_var(kind) -> bool:
    """Whether an annotation is typing.ClassVar (or ClassVar[...]): a class attribute, not a field."""
    from gradcli.language import pytyping
    if kind.__class__ is pytyping.GenericAlias:
        kind = kind.alias
    return kind.__class__ is pytyping.SpecialForm and kind.name == "ClassVar"


def _kw_only(kind) -> bool:
    return kind is KW_ONLY


_MODULE_IDENTIFIER = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")


def _is_type(kind, cls, module: str, predicate) -> bool:
    """predicate(kind), or for a string annotation (`from __future__ import annotations`) CPython's _is_type:
    its first name (`ClassVar`, or `typing.ClassVar` when `typing` is that module) looked up in the script's
    globals."""
    if kind.__class__ is not str:
        return predicate(kind)
    match = _MODULE_IDENTIFIER.match(kind)
    names = classes.MODULE_GLOBALS.get(cls)
    if match is None or names is None:
        return False
    qualifier = match.group(1)
    if qualifier:
        held = names.get(qualifier)
        if not (held.__class__ is stdlib.ScriptModule and held.name == module):
            return False
    return predicate(names.get(match.group(2)))


def _field(cls, name: str, kind, kw_only: bool) -> Field:
    default = getattr(cls, name, MISSING)       # a class attribute of a base counts, as in CPython
    if isinstance(default, Field):
        f = default
    else:
        f = Field(default, MISSING, True, True, None, True, MISSING)
    f.name, f.type = name, kind
    if f.kw_only is MISSING:
        f.kw_only = kw_only
    if f.default is not MISSING and f.default.__class__.__hash__ is None:
        raise ValueError(f"mutable default {stdlib.script_type(f.default)!r} for field {name} is not allowed: "
                         "use default_factory")
    return f


def _check_defaults(fields: list) -> None:
    seen_default = False
    for f in fields:
        if not f.init or f.kw_only:         # keyword-only parameters may come in any order
            continue
        if f.default is MISSING and f.default_factory is MISSING:
            if seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
        else:
            seen_default = True


def _set_new(cls, name: str, fn) -> None:
    """A method the class does not define itself (CPython's _set_new_attribute)."""
    if name not in cls.__dict__:
        fn.qualname = f"{cls.__qualname__}.{name}"
        type.__setattr__(cls, name, fn)


def _method(name: str, params: list, defaults: list, body, keywords: list = (), kwdefaults=None) -> ScriptFunction:
    """A script function `name(*params, *, *keywords)` (a Signature only when it has keyword-only parameters)."""
    signature = None
    if keywords:
        signature = Signature([syntax.Param(p, None, "positional", None) for p in params]
                              + [syntax.Param(k, None, "keyword_only", None) for k in keywords])
    return ScriptFunction(name, name, list(params), defaults, body, {}, signature=signature, kwdefaults=kwdefaults)


def _default(f: Field):
    return _HAS_FACTORY if f.default_factory is not MISSING else f.default


def _has_default(f: Field) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _init(cls, fields: list, frozen: bool) -> ScriptFunction:
    given = [f for f in fields if f.init and not f.kw_only]
    keywords = [f for f in fields if f.init and f.kw_only]
    names = [f.name for f in given]
    this = "__dataclass_self__" if "self" in names or any(f.name == "self" for f in keywords) else "self"
    defaults = [_default(f) for f in given if _has_default(f)]
    kwdefaults = {f.name: _default(f) for f in keywords if _has_default(f)}
    store = object.__setattr__ if frozen else setattr
    steps = []
    for f in fields:
        if f.init:
            factory = f.default_factory
            steps.append((f.name, f.name, factory if factory is not MISSING else None, MISSING))
        elif f.default_factory is not MISSING:
            steps.append((f.name, None, f.default_factory, MISSING))
        elif f.default is not MISSING:
            steps.append((f.name, None, None, f.default))
    post_init = "__post_init__"

    def init(env):
        obj = env[this]
        for name, argument, factory, default in steps:
            if argument is not None:
                value = env[argument]
                if value is _HAS_FACTORY:
                    value = factory()
            else:
                value = factory() if factory is not None else default
            store(obj, name, value)
        if hasattr(type(obj), post_init):
            getattr(obj, post_init)()
        return None
    fn = _method("__init__", [this] + names, defaults, init, [f.name for f in keywords], kwdefaults)
    fn.annotations = {f.name: f.type for f in given + keywords}
    fn.annotations["return"] = None
    return fn


_REPR_RUNNING: set = set()


def _repr(cls, fields: list) -> ScriptFunction:
    names = [f.name for f in fields]

    def repr_(env):
        obj = env["self"]
        key = (id(obj), threading.get_ident())
        if key in _REPR_RUNNING:        # a field that holds the object itself
            return Return("...")
        _REPR_RUNNING.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(obj, name)!r}" for name in names)
        finally:
            _REPR_RUNNING.discard(key)
        return Return(f"{type(obj).__qualname__}({shown})")
    return _method("__repr__", ["self"], [], repr_)


def _compare(cls, name: str, fields: list, op) -> ScriptFunction:
    names = [f.name for f in fields]

    def compare(env):
        obj, other = env["self"], env["other"]
        if other.__class__ is not obj.__class__:
            return Return(NotImplemented)
        return Return(op(tuple(getattr(obj, n) for n in names), tuple(getattr(other, n) for n in names)))
    fn = _method(name, ["self", "other"], [], compare)
    fn.qualname = f"{cls.__qualname__}.{name}"
    return fn


def _set_hash(cls, params: _Params, fields: list) -> None:
    """CPython's table for a class that does not define __hash__: eq without frozen makes it unhashable, eq
    and frozen hash the fields, without eq the inherited hash stays."""
    if params.eq and params.frozen:
        names = [f.name for f in fields]

        def hash_(env):
            obj = env["self"]
            return Return(hash(tuple(getattr(obj, n) for n in names)))
        fn = _method("__hash__", ["self"], [], hash_)
        fn.qualname = f"{cls.__qualname__}.__hash__"
        type.__setattr__(cls, "__hash__", fn)
    elif params.eq:
        type.__setattr__(cls, "__hash__", None)


def _frozen_setattr(cls, fields: dict):
    def __setattr__(self, name, value):
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)
    return __setattr__


def _frozen_delattr(cls, fields: dict):
    def __delattr__(self, name):
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __delattr__


def _doc(cls, fields: list) -> str:
    """The __doc__ CPython gives a dataclass without one: its name and __init__'s signature."""
    parts, keywords = [], []
    for f in fields:
        if not f.init:
            continue
        text = f"{f.name}: {_annotation_text(f.type)}"
        if f.default_factory is not MISSING:
            text += " = <factory>"
        elif f.default is not MISSING:
            text += f" = {f.default!r}"
        (keywords if f.kw_only else parts).append(text)
    if keywords:
        parts += ["*"] + keywords
    return f"{cls.__name__}({', '.join(parts)})"


def _annotation_text(kind) -> str:
    """inspect.formatannotation: a class by its name (qualified outside builtins and the script), typing's
    forms without `typing.`, anything else by its repr."""
    text = repr(kind)
    if text.startswith("<class '") and text.endswith("'>"):
        return text[8:-2].removeprefix("__main__.")
    if getattr(kind, "typing", False):
        return re.sub(r"[\w\.]+", lambda m: m.group(0).removeprefix("typing."), text)
    return text


# ---------------------------------------------------------------- the module's functions

def is_dataclass(obj) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return type(cls) is ScriptType and "__dataclass_fields__" in _all_dicts(cls)


def _all_dicts(cls) -> set:
    return {k for klass in cls.__mro__ for k in klass.__dict__}


def _fields_of(obj) -> dict | None:
    if isinstance(obj, type) or type(type(obj)) is ScriptType:
        return getattr(obj, "__dataclass_fields__", None) if is_dataclass(obj) else None
    return None


def fields(class_or_instance) -> tuple:
    found = _fields_of(class_or_instance)
    if found is None:
        raise TypeError("must be called with a dataclass type or instance")
    return tuple(found.values())


def asdict(obj, *, dict_factory=dict):
    if _fields_of(obj) is None or isinstance(obj, type):
        raise TypeError("asdict() should be called on dataclass instances")
    return _as(obj, lambda pairs: dict_factory(pairs))


def astuple(obj, *, tuple_factory=tuple):
    if _fields_of(obj) is None or isinstance(obj, type):
        raise TypeError("astuple() should be called on dataclass instances")
    return _as(obj, None, tuple_factory)


def _as(obj, dict_factory, tuple_factory=None):
    """asdict/astuple's recursion: into dataclass instances, lists, tuples and dicts; other values are
    copied as copy.deepcopy copies them (numbers, strings and tensors: gradcli.language.stdlib's copy)."""
    found = _fields_of(obj) if not isinstance(obj, type) else None
    if found is not None:
        values = [(f.name, _as(getattr(obj, f.name), dict_factory, tuple_factory)) for f in found.values()]
        return dict_factory(values) if tuple_factory is None else tuple_factory([v for _, v in values])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as(v, dict_factory, tuple_factory) for v in bounds.take(obj, "list"))
    if isinstance(obj, dict):
        return type(obj)((_as(k, dict_factory, tuple_factory), _as(v, dict_factory, tuple_factory))
                         for k, v in obj.items())
    return _copied(obj)


def _copied(value):
    """copy.deepcopy of a leaf asdict/astuple reaches, as CPython's asdict copies it: gradcli's copy module
    (gradcli.language.copying), each value with a memo of its own; a tensor as PyTorch's __deepcopy__."""
    stdlib.COPY.members            # (makes the copy module: its table of values that are their own copies)
    from gradcli.language import copying
    return copying.deepcopy(value)


def replace(obj, /, **changes):
    found = _fields_of(obj) if not isinstance(obj, type) else None
    if found is None:
        raise TypeError("replace() should be called on dataclass instances")
    for f in found.values():
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with "
                                 "replace()")
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def members() -> dict:
    return {"dataclass": dataclass, "field": field, "fields": fields, "asdict": asdict, "astuple": astuple,
            "replace": replace, "is_dataclass": is_dataclass, "MISSING": MISSING, "KW_ONLY": KW_ONLY, "Field": Field,
            "FrozenInstanceError": FrozenInstanceError}


Field.__module__ = "dataclasses"
