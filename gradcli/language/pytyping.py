"""Python's typing module as scripts reach it, and the forms annotations build from classes (`list[int]`,
`int | None`, `torch.Tensor | None`): values gradcli makes, printed as CPython 3.11 and PyTorch print
typing's own, compared and combined with `|` as typing's are, and with none of their attributes.

Annotations are evaluated, so these must exist and print right (`typing.Dict[str, torch.Tensor]`); nothing
reads them. typing's own objects would print gradcli's stand-ins for torch's classes wrongly, and their
attributes (`__origin__`, `__args__`, `__parameters__`) would hand a script the Python objects behind
them; these have no attribute a script can read (gradcli.language.access refuses every one, by their class:
stdlib.OPAQUE_CLASSES). Also here: TypeVar and substitution (List[T][int]), the bases that make a script's
class generic (Generic[T], Box[int]) and NamedTuple, whose class is collections' namedtuple."""

from __future__ import annotations

import importlib
import types as _types
import typing as _typing

from gradcli.language import bounds, classes, pycollections, stdlib

NoneType = type(None)


def type_repr(value) -> str:
    """How typing and types.GenericAlias write one argument: a class by its dotted name (`int`,
    `torch.Tensor`, `__main__.Net`, `torch.nn.modules.linear.Linear`), `...`, else its repr. A class as
    scripts hold it may be a stand-in (torch.Tensor, list): its repr is the class's, `<class 'NAME'>`."""
    if value is Ellipsis:
        return "..."
    text = repr(value)
    if text.startswith("<class '") and text.endswith("'>"):
        return text[8:-2]
    return text


def _is_class(value) -> bool:
    """Whether a script's value is a class `|` takes (`int | None`, `torch.Tensor | None`), or a union
    Python made of classes (`int | None`)."""
    if isinstance(value, (type, _types.UnionType, _types.GenericAlias)):
        return True
    # a stand-in for a class (torch.Tensor, list): never a script's object, whose __repr__ is the script's
    return value.__class__ in (bounds.Bounded, stdlib.Builtin, stdlib.ClassValue) and repr(value).startswith("<class '")


class TypeForm:
    """What every typing value shares: `|` makes a union, `==` compares by what it stands for."""

    __slots__ = ()
    typing = True           # typing's flavour (typing.Union[...]) rather than PEP 604's (int | None)

    def key(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other):
        if not isinstance(other, TypeForm):
            return NotImplemented
        return self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __or__(self, other):
        return union_or(self, other)

    def __ror__(self, other):
        return union_or(other, self)

    def __getitem__(self, params):
        raise TypeError(f"{self!r} is not a generic class")

    def __call__(self, *args, **kwargs):
        raise TypeError(f"Cannot instantiate {self!r}")


class SpecialForm(TypeForm):
    """typing.Any, typing.Optional, typing.Union, typing.ClassVar, typing.Final, typing.Literal."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def key(self) -> tuple:
        return ("special", self.name)

    def __repr__(self) -> str:
        return f"typing.{self.name}"

    def __getitem__(self, params):
        if self.name == "Any":
            raise TypeError("type 'Any' is not subscriptable")
        if self.name == "NoReturn":
            raise TypeError(f"{self!r} is not subscriptable")
        if self.name in ("ClassVar", "Final"):
            message = f"{self!r} accepts only single type."
            if params.__class__ is tuple:
                raise TypeError(f"{message} Got {params!r:.100}.")
            return GenericAlias(self, (_argument(params, message),))
        if self.name == "Literal":
            return make_literal(params if params.__class__ is tuple else (params,))
        if self.name == "Optional":
            if params.__class__ is tuple:
                shown = ", ".join(repr(p) for p in params) + ("," if len(params) == 1 else "")
                raise TypeError(f"typing.Optional requires a single type. Got ({shown}).")
            return make_union((_argument(params, "Optional[t] requires a single type."), NoneType))
        params = params if params.__class__ is tuple else (params,)
        if not params:
            raise TypeError("Cannot take a Union of no types.")
        return make_union(tuple(_argument(p, "Union[arg, ...]: each arg must be a type.") for p in params))

    def __call__(self, *args, **kwargs):
        if self.name == "Any":
            raise TypeError("Any cannot be instantiated")
        raise TypeError(f"Cannot instantiate {self!r}")


class SpecialAlias(TypeForm):
    """typing.List, typing.Dict, ... before a subscript: `arity` arguments (-1: any number, as Tuple takes;
    0: none, as Hashable takes)."""

    __slots__ = ("name", "origin", "arity", "abstract", "real")

    def __init__(self, name: str, origin: str, arity: int, abstract: tuple = (), real: str | None = None):
        self.name = name
        # the class it stands for: a builtin (as `use list() instead` names it), collections' (which a call
        # makes), or ""; an abstract one's methods, as its instantiation error lists them
        self.origin = origin
        self.arity = arity
        self.abstract = abstract
        self.real = real or (f"builtins.{origin}" if origin and "." not in origin else origin) or \
            f"collections.abc.{name}"       # the class isinstance tests against

    def key(self) -> tuple:
        return ("alias", self.name)

    def __repr__(self) -> str:
        return f"typing.{self.name}"

    def __getitem__(self, params):
        if self.name == "Callable":
            return _callable(self, params)
        if self.arity == 0:
            raise TypeError(f"{self!r} is not a generic class")
        params = params if params.__class__ is tuple else (params,)
        if self.name == "Tuple" and params == ():
            return GenericAlias(self, ())
        message = "Tuple[t0, t1, ...]: each t must be a type." if self.name == "Tuple" else \
            "Parameters to generic types must be types."
        args = tuple(p if p is Ellipsis and self.name == "Tuple" else _argument(p, message) for p in params)
        if self.arity >= 0 and len(args) != self.arity:
            many = "many" if len(args) > self.arity else "few"
            raise TypeError(f"Too {many} arguments for {self!r}; actual {len(args)}, expected {self.arity}")
        return GenericAlias(self, args)

    def __call__(self, *args, **kwargs):
        if self.abstract:
            methods = ", ".join(self.abstract)
            raise TypeError(f"Can't instantiate abstract class {self.real.rpartition('.')[2]} with abstract "
                            f"method{'s' if len(self.abstract) > 1 else ''} {methods}")
        if self.origin.startswith("collections."):      # typing.Deque() is a deque, as collections' makes it
            return pycollections.members()[self.origin.rpartition(".")[2]](*args, **kwargs)
        raise TypeError(f"Type {self.name} cannot be instantiated; use {self.origin}() instead")


class GenericAlias(TypeForm):
    """typing.List[int], typing.Callable[[int], int]: a typing alias with its arguments."""

    __slots__ = ("alias", "args")

    def __init__(self, alias: SpecialAlias, args: tuple):
        self.alias = alias
        self.args = args        # for Callable: (tuple of parameter types or Ellipsis, result)

    def key(self) -> tuple:
        return ("generic", self.alias.name, self.args)

    def __repr__(self) -> str:
        name = repr(self.alias)
        if self.alias.name == "Callable":
            params, result = self.args
            shown = "..." if params is Ellipsis else "[" + ", ".join(_typing_repr(p) for p in params) + "]"
            return f"{name}[{shown}, {_typing_repr(result)}]"
        if not self.args:
            return f"{name}[()]"
        return f"{name}[{', '.join(_typing_repr(a) for a in self.args)}]"

    def __call__(self, *args, **kwargs):
        return self.alias(*args, **kwargs)      # typing calls the class it stands for (List's refuses)

    def __getitem__(self, params):
        """List[T][int]: the type variables in the arguments, in order, replaced."""
        variables = parameters(self.args)
        if not variables:
            raise TypeError(f"{self!r} is not a generic class")
        return GenericAlias(self.alias, substitute(self, self.args, variables, params))


def parameters(args) -> tuple:
    """The type variables in a form's arguments, first appearance first (typing's __parameters__)."""
    found = []
    for a in args:
        if a.__class__ is tuple:
            inner = parameters(a)
        elif a.__class__ is TypeVarForm:
            inner = (a,)
        elif a.__class__ in (GenericAlias, UserAlias, BuiltinAlias) or isinstance(a, UnionForm):
            inner = parameters(a.args)
        else:
            inner = ()
        found += [v for v in inner if v not in found]
    return tuple(found)


def substitute(form, args: tuple, variables: tuple, params) -> tuple:
    """`args` with each of `variables` replaced by the subscript's arguments, in typing's words when their
    number differs."""
    params = params if params.__class__ is tuple else (params,)
    if len(params) != len(variables):
        many = "many" if len(params) > len(variables) else "few"
        raise TypeError(f"Too {many} arguments for {form!r}; actual {len(params)}, expected {len(variables)}")
    given = dict(zip(variables, (_argument(p, "Parameters to generic types must be types.") for p in params)))

    def replaced(a):
        if a.__class__ is tuple:
            return tuple(replaced(x) for x in a)
        if a.__class__ is TypeVarForm:
            return given.get(a, a)
        if a.__class__ is GenericAlias:
            return GenericAlias(a.alias, replaced(a.args))
        if a.__class__ is UserAlias or a.__class__ is BuiltinAlias:
            return a.__class__(a.origin, replaced(a.args))
        if isinstance(a, UnionForm):
            return make_union(replaced(a.args), a.typing)
        return a
    return replaced(args)


class TypeVarForm(TypeForm):
    """TypeVar('T'): printed ~T (+T covariant, -T contravariant); a generic form's subscript replaces it."""

    __slots__ = ("name", "variance")

    def __init__(self, name, variance: str):
        self.name = name
        self.variance = variance

    def key(self) -> tuple:
        return ("typevar", id(self))

    def __repr__(self) -> str:
        return self.variance + self.name

    def __call__(self, *args, **kwargs):
        raise TypeError("'TypeVar' object is not callable")

    def __getitem__(self, params):
        raise TypeError("'TypeVar' object is not subscriptable")


def type_var(name, *constraints, bound=None, covariant=False, contravariant=False):
    """typing.TypeVar(name, *constraints, bound=None, covariant=False, contravariant=False)."""
    if covariant and contravariant:
        raise ValueError("Bivariant types are not supported.")
    if len(constraints) == 1:
        raise TypeError("A single constraint is not allowed")
    if name.__class__ is not str:
        raise TypeError(f'can only concatenate str (not "{stdlib.type_name(name)}") to str')
    for c in constraints:
        _argument(c, "TypeVar(name, constraint, ...): constraints must be types.")
    if bound is not None:
        _argument(bound, "Bound must be a type.")
    return TypeVarForm(name, "+" if covariant else "-" if contravariant else "~")


class GenericBase(TypeForm):
    """typing.Generic: `class Box(Generic[T])` makes Box generic in T (Box[int] is then a form)."""

    __slots__ = ()

    def key(self) -> tuple:
        return ("Generic",)

    def __repr__(self) -> str:
        return "<class 'typing.Generic'>"

    def __getitem__(self, params):
        params = params if params.__class__ is tuple else (params,)
        if not params:
            raise TypeError("Parameter list to Generic[...] cannot be empty")
        if any(p.__class__ is not TypeVarForm for p in params):
            raise TypeError("Parameters to Generic[...] must all be type variables or parameter specification "
                            "variables.")
        if len(set(params)) != len(params):
            raise TypeError("Parameters to Generic[...] must all be unique")
        return GenericOf(params)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("gradcli does not implement instances of typing.Generic itself")


class GenericOf(TypeForm):
    """typing.Generic[T, K]: named as a base only."""

    __slots__ = ("args",)

    def __init__(self, args: tuple):
        self.args = args

    def key(self) -> tuple:
        return ("Generic", self.args)

    def __repr__(self) -> str:
        return f"typing.Generic[{', '.join(repr(a) for a in self.args)}]"


class UserAlias(TypeForm):
    """`Box[int]` for a script's generic class: printed __main__.Box[int]; called, it makes a Box."""

    __slots__ = ("origin", "args")

    def __init__(self, origin, args: tuple):
        self.origin = origin
        self.args = args

    def key(self) -> tuple:
        return ("user", id(self.origin), self.args)

    def __repr__(self) -> str:
        return f"{type_repr(self.origin)}[{', '.join(_typing_repr(a) for a in self.args)}]"

    def __call__(self, *args, **kwargs):
        return self.origin(*args, **kwargs)

    def __getitem__(self, params):
        variables = parameters(self.args)
        if not variables:
            raise TypeError(f"{self!r} is not a generic class")
        return UserAlias(self.origin, substitute(self, self.args, variables, params))


def subscript_generic(cls, params):
    """Box[int] for a script class made generic by typing.Generic[...] (or one of its forms as a base); None
    for a class that takes no subscript."""
    variables = classes.GENERIC_PARAMETERS.get(cls)
    if variables is None:
        if any(c in classes.GENERIC_PARAMETERS for c in cls.__mro__[1:]):
            raise TypeError(f"{cls!r} is not a generic class")
        return None
    return UserAlias(cls, substitute(cls, variables, variables, params))


def _base_of_generic(base) -> tuple:
    """What a class statement derives from for a base naming a generic form: nothing for Generic[T], the
    class for Box[int]; and the type variables the form brings."""
    if base.__class__ is GenericOf:
        return None, base.args
    return base.origin, parameters(base.args)


class LiteralForm(TypeForm):
    """typing.Literal['a', 'b']: values, not types, kept as given (repeats dropped)."""

    __slots__ = ("args",)

    def __init__(self, args: tuple):
        self.args = args

    def key(self) -> tuple:
        return ("literal", frozenset((a, type(a)) for a in self.args))

    def __repr__(self) -> str:
        return f"typing.Literal[{', '.join(repr(a) for a in self.args)}]"


def make_literal(params: tuple) -> LiteralForm:
    """Literal[...] as typing builds it: nested literals flattened, a value repeated (of the same type) once."""
    flat, seen = [], set()
    for p in params:
        for value in (p.args if p.__class__ is LiteralForm else (p,)):
            try:
                marker = (value, type(value))
                if marker in seen:
                    continue
                seen.add(marker)
            except TypeError:           # an unhashable value: kept, as typing keeps it
                pass
            flat.append(value)
    return LiteralForm(tuple(flat))


class ForwardRef(TypeForm):
    """A string given where typing wants a type: `List['Net']`."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def key(self) -> tuple:
        return ("forward", self.text)

    def __repr__(self) -> str:
        return f"ForwardRef({self.text!r})"


class UnionForm(TypeForm):
    """typing.Union[int, str] (typing.Optional[int] when one of two is None)."""

    __slots__ = ("args",)

    def __init__(self, args: tuple):
        self.args = args

    def key(self) -> tuple:
        return ("union", frozenset(self.args))

    def __repr__(self) -> str:
        if len(self.args) == 2 and NoneType in self.args:
            other = self.args[0] if self.args[1] is NoneType else self.args[1]
            return f"typing.Optional[{_typing_repr(other)}]"
        return f"typing.Union[{', '.join(_typing_repr(a) for a in self.args)}]"

    def __call__(self, *args, **kwargs):
        raise TypeError("Cannot instantiate typing.Union")

    def __getitem__(self, params):
        """Optional[T][int]: the type variables in its members replaced."""
        variables = parameters(self.args)
        if not variables:
            raise TypeError(f"{self!r} is not a generic class")
        return make_union(substitute(self, self.args, variables, params), self.typing)


class UnionType(UnionForm):
    """`torch.Tensor | None`, `list[int] | None`: PEP 604's union, of classes the script holds as stand-ins
    (of Python's own classes alone, Python makes its own types.UnionType)."""

    __slots__ = ()
    typing = False

    def __repr__(self) -> str:
        return " | ".join("None" if a is NoneType else type_repr(a) for a in self.args)

    def __call__(self, *args, **kwargs):
        raise TypeError("'types.UnionType' object is not callable")


class BuiltinAlias(TypeForm):
    """PEP 585's `list[int]`, `dict[str, torch.Tensor]`, `tuple[int, ...]`, `type[Net]`: a class as a
    script holds it, with its arguments, printed as types.GenericAlias prints."""

    __slots__ = ("origin", "args")
    typing = False

    def __init__(self, origin, args: tuple):
        self.origin = origin
        self.args = args

    def key(self) -> tuple:
        return ("builtin", id(self.origin), self.args)

    def __repr__(self) -> str:
        if not self.args:
            return f"{type_repr(self.origin)}[()]"
        return f"{type_repr(self.origin)}[{', '.join(type_repr(a) for a in self.args)}]"

    def __call__(self, *args, **kwargs):
        return self.origin(*args, **kwargs)         # list[int]() is a list, as in Python

    def __getitem__(self, params):
        variables = parameters(self.args)
        if not variables:
            raise TypeError(f"{self!r} is not a generic class")
        return BuiltinAlias(self.origin, substitute(self, self.args, variables, params))


def _typing_repr(value) -> str:
    return "NoneType" if value is NoneType else type_repr(value)


def _argument(value, message: str):
    """An argument as typing's _type_check keeps it: None as NoneType, a string as a ForwardRef; a bare
    Optional or Union, and a tuple, refused in typing's words (3.11 takes any other value)."""
    if value.__class__ is SpecialForm and value.name not in ("Any", "NoReturn"):
        raise TypeError(f"Plain {value!r} is not valid as type argument")
    if value.__class__ is GenericAlias and value.alias.__class__ is SpecialForm:    # ClassVar[int], Final[int]
        raise TypeError(f"{value!r} is not valid as type argument")
    if value.__class__ is tuple:
        raise TypeError(f"{message} Got {value!r:.100}.")
    return _converted(value)


def _converted(value):
    """typing's _type_convert: None as NoneType, a string as a ForwardRef, nothing checked."""
    if value is None:
        return NoneType
    if value.__class__ is str:
        return ForwardRef(value)
    return value


def _callable(alias: SpecialAlias, params):
    if params.__class__ is not tuple or len(params) != 2:
        raise TypeError("Callable must be used as Callable[[arg, ...], result].")
    args, result = params
    if args is Ellipsis:
        shown = Ellipsis
    elif args.__class__ is list:
        shown = tuple(_converted(a) for a in args)
    else:
        shown = (_converted(args),)
    return GenericAlias(alias, (shown, _argument(result, "Callable[args, result]: result must be a type.")))


def make_union(args: tuple, typing: bool = True):
    """Union[...] as typing builds it: nested unions flattened, repeats dropped (the first kept), one
    argument left alone."""
    flat = []
    for a in args:
        parts = a.args if isinstance(a, UnionForm) else a.__args__ if a.__class__ is _types.UnionType else (a,)
        for p in parts:
            if p not in flat:
                flat.append(p)
    if len(flat) == 1:
        return flat[0]
    return UnionForm(tuple(flat)) if typing else UnionType(tuple(flat))


def union_or(left, right):
    """`left | right` where one side is a typing value or a class stand-in: typing's Union when either side
    is typing's (typing.Optional[int] | str), else PEP 604's (torch.Tensor | None, list[int] | None)."""
    typing = (isinstance(left, TypeForm) and left.typing) or (isinstance(right, TypeForm) and right.typing)
    if typing:
        message = "Union[arg, ...]: each arg must be a type."
        return make_union((_argument(left, message), _argument(right, message)))
    for side in (left, right):
        if not (side is None or isinstance(side, TypeForm) or _is_class(side)):
            raise TypeError(f"unsupported operand type(s) for |: '{_operand_type(left)}' and '{_operand_type(right)}'")
    return make_union(tuple(NoneType if side is None else side for side in (left, right)), typing=False)


def _operand_type(value) -> str:
    """The type CPython's message names for an operand: a class's metaclass (torch.Tensor's is
    torch._C._TensorMeta), else the value's type."""
    if _is_class(value) and not isinstance(value, (_types.UnionType, _types.GenericAlias)):
        return type_repr(stdlib.script_type(value))
    return stdlib.type_name(value)


def instance_classes(form, fn: str, real):
    """The classes isinstance and issubclass test a typing value against (a union's members, as `real`
    makes each), or typing's refusal."""
    if isinstance(form, UnionForm) or form.__class__ is _types.UnionType:
        return tuple(real(a, fn) for a in (form.args if isinstance(form, UnionForm) else form.__args__))
    if form.__class__ is SpecialForm:
        raise TypeError(f"{form!r} cannot be used with {fn}()")
    if form.__class__ is BuiltinAlias:
        raise TypeError(f"{fn}() argument 2 cannot be a parameterized generic")
    if form.__class__ is SpecialAlias:     # typing.List is list; typing.Iterable is collections.abc's
        module, _, name = form.real.rpartition(".")
        return getattr(importlib.import_module(module), name)
    if form.__class__ in (GenericAlias, LiteralForm, UserAlias, GenericOf):
        raise TypeError("Subscripted generics cannot be used with class and instance checks")
    raise TypeError(f"{fn}() arg 2 must be a type, a tuple of types, or a union")


def subscript_class(cls, params):
    """`list[int]` for a class a script holds (list, dict, tuple, set, frozenset, type: stand-ins of
    Python's own that take it), or None when the class takes no subscript."""
    text = repr(cls)
    if text[8:-2] not in ("list", "dict", "tuple", "set", "frozenset", "type"):
        return None
    return BuiltinAlias(cls, params if params.__class__ is tuple else (params,))


class NamedTupleMaker:
    """typing.NamedTuple as scripts hold it: called, the functional form (`NamedTuple('Pair', [('a', int)])`);
    as the base of a class statement, the class form, whose annotated names are the fields (the class is
    collections' namedtuple, gradcli.language.pycollections, with the body's methods and attributes)."""

    __slots__ = ()

    def __repr__(self) -> str:
        from gradcli.engine.addresses import address
        return f"<function NamedTuple at {address(self)}>"

    def __call__(self, typename, fields=None, /, **kwargs):
        if fields is None:
            fields = list(kwargs.items())
        elif kwargs:
            raise TypeError("Either list of fields or keywords can be provided to NamedTuple, not both")
        pairs = [tuple(pair) for pair in bounds.take(fields, "list")]
        return _named_tuple(typename, pairs, {}, {"__module__": "__main__"})

    def make_class(self, name: str, bases: list, namespace: dict):
        if len(bases) != 1:
            raise TypeError("can only inherit from a NamedTuple type and Generic")
        kinds = namespace.get("__annotations__", {})
        defaults = {n: namespace[n] for n in kinds if n in namespace}
        return _named_tuple(name, list(kinds.items()), defaults, namespace)


# What a NamedTuple class's body may not define, and what it defines that is not copied to the class
_PROHIBITED = frozenset(("__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                         "_make", "_replace", "_asdict", "_source"))
_SPECIAL = frozenset(("__module__", "__name__", "__annotations__", "__qualname__"))


def _named_tuple(name: str, fields: list, defaults: dict, namespace: dict):
    names = [n for n, _ in fields]
    given = []
    for n in names:
        if n in defaults:
            given.append(n)
        elif given:
            raise TypeError(f"Non-default namedtuple field {n} cannot follow default field"
                            f"{'s' if len(given) > 1 else ''} {', '.join(given)}")
    cls = pycollections.named_tuple(name, names, [defaults[n] for n in given], namespace.get("__module__"))
    kinds = {n: _argument(t, f"field {n} annotation must be a type") for n, t in fields}
    type.__setattr__(cls, "__annotations__", kinds)
    own = []
    for key, value in namespace.items():
        if key in _PROHIBITED:
            raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
        if key not in _SPECIAL and key not in names:
            type.__setattr__(cls, key, value)
            own.append(key)
    pycollections.SCRIPT_MEMBERS[cls] = frozenset(own)
    return cls


def members() -> dict:
    """The typing module's names scripts use in annotations."""
    return {
        "Any": SpecialForm("Any"), "Optional": SpecialForm("Optional"), "Union": SpecialForm("Union"),
        "ClassVar": SpecialForm("ClassVar"), "Final": SpecialForm("Final"), "Literal": SpecialForm("Literal"),
        "List": SpecialAlias("List", "list", 1), "Dict": SpecialAlias("Dict", "dict", 2),
        "Set": SpecialAlias("Set", "set", 1), "FrozenSet": SpecialAlias("FrozenSet", "frozenset", 1),
        "Tuple": SpecialAlias("Tuple", "tuple", -1), "Type": SpecialAlias("Type", "type", 1),
        "Callable": SpecialAlias("Callable", "", -1, ("__call__",)),
        "Iterable": SpecialAlias("Iterable", "", 1, ("__iter__",)),
        "Iterator": SpecialAlias("Iterator", "", 1, ("__next__",)),
        "Sequence": SpecialAlias("Sequence", "", 1, ("__getitem__", "__len__")),
        "Mapping": SpecialAlias("Mapping", "", 2, ("__getitem__", "__iter__", "__len__")),
        "Generator": SpecialAlias("Generator", "", 3, ("send", "throw")),
        "Collection": SpecialAlias("Collection", "", 1, ("__contains__", "__iter__", "__len__")),
        "Container": SpecialAlias("Container", "", 1, ("__contains__",)),
        "Reversible": SpecialAlias("Reversible", "", 1, ("__iter__", "__reversed__")),
        "MutableSequence": SpecialAlias("MutableSequence", "", 1, ("__delitem__", "__getitem__", "__len__",
                                                                   "__setitem__", "insert")),
        "MutableMapping": SpecialAlias("MutableMapping", "", 2, ("__delitem__", "__getitem__", "__iter__", "__len__",
                                                                 "__setitem__")),
        "MutableSet": SpecialAlias("MutableSet", "", 1, ("__contains__", "__iter__", "__len__", "add", "discard")),
        "AbstractSet": SpecialAlias("AbstractSet", "", 1, ("__contains__", "__iter__", "__len__"),
                                    "collections.abc.Set"),
        "Hashable": SpecialAlias("Hashable", "", 0, ("__hash__",)),
        "Sized": SpecialAlias("Sized", "", 0, ("__len__",)),
        "Deque": SpecialAlias("Deque", "collections.deque", 1),
        "DefaultDict": SpecialAlias("DefaultDict", "collections.defaultdict", 2),
        "OrderedDict": SpecialAlias("OrderedDict", "collections.OrderedDict", 2),
        "Counter": SpecialAlias("Counter", "collections.Counter", 1),
        "NoReturn": SpecialForm("NoReturn"), "Text": str,
        "TYPE_CHECKING": False,
        "cast": _typing.cast,           # returns its second argument
        "overload": _typing.overload,   # returns a function that refuses to be called, in typing's words
        "NamedTuple": NAMED_TUPLE,
        "TypeVar": type_var, "Generic": GENERIC,
    }


def has(name: str) -> bool:
    """Whether CPython's typing has `name` (one gradcli leaves out is not implemented, not missing)."""
    return not name.startswith("_") and hasattr(_typing, name)


def _python_class(value) -> str:
    """The dotted name of the class CPython's typing has for a value like this one (type(List[int]) is
    typing._GenericAlias): what type() prints, and, without `typing.`, what messages name."""
    cls = value.__class__
    if cls is SpecialForm:
        return "typing._AnyMeta" if value.name == "Any" else "typing._SpecialForm"
    if cls is SpecialAlias:
        return {"Tuple": "typing._TupleType", "Callable": "typing._CallableType"}.get(value.name,
                                                                                     "typing._SpecialGenericAlias")
    if cls is GenericAlias:
        return "typing._CallableGenericAlias" if value.alias.name == "Callable" else "typing._GenericAlias"
    return _PATHS[cls]


_PATHS = {ForwardRef: "typing.ForwardRef", UnionForm: "typing._UnionGenericAlias", UnionType: "types.UnionType",
          BuiltinAlias: "types.GenericAlias", LiteralForm: "typing._LiteralGenericAlias", TypeVarForm: "typing.TypeVar",
          GenericBase: "type", GenericOf: "typing._GenericAlias", UserAlias: "typing._GenericAlias"}
# scripts read none of their attributes (gradcli.language.access refuses every one)
stdlib.register_opaque({cls: _python_class for cls in (SpecialForm, SpecialAlias, GenericAlias, *_PATHS)})

NAMED_TUPLE = NamedTupleMaker()
classes.CLASS_MAKERS[id(NAMED_TUPLE)] = NAMED_TUPLE.make_class
GENERIC = GenericBase()
classes.BASE_FORMS.update({GenericOf: _base_of_generic, UserAlias: _base_of_generic})
