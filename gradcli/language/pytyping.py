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
import weakref

from gradcli.language import access, bounds, classes, pycollections, stdlib

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
        if self.name in _PLAIN_FORMS:
            raise TypeError(f"{self!r} is not subscriptable")
        if self.name in ("ClassVar", "Final", "Required", "NotRequired"):
            message = f"{self!r} accepts only single type." if self.name in ("ClassVar", "Final") else \
                f"{self.name} accepts only a single type."
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


# typing's special forms that take no subscript (and may stand alone as a type argument, as Any does)
_PLAIN_FORMS = frozenset(("NoReturn", "Never", "Self", "LiteralString", "TypeAlias"))


class AnnotatedBase(TypeForm):
    """typing.Annotated before a subscript: a class in CPython, of which nothing is an instance."""

    __slots__ = ()

    def key(self) -> tuple:
        return ("Annotated",)

    def __repr__(self) -> str:
        return "<class 'typing.Annotated'>"

    def __getitem__(self, params):
        return make_annotated(params)

    def __call__(self, *args, **kwargs):
        raise TypeError("Type Annotated cannot be instantiated.")


class AnnotatedForm(TypeForm):
    """typing.Annotated[int, 'meta', ...]: a type with values attached, which nothing reads; it stands for the
    type (called, it calls it), and a subscript replaces the type's type variables."""

    __slots__ = ("origin", "metadata")

    def __init__(self, origin, metadata: tuple):
        self.origin = origin
        self.metadata = metadata

    def key(self) -> tuple:
        return ("annotated", self.origin, self.metadata)

    def __repr__(self) -> str:
        return f"typing.Annotated[{_typing_repr(self.origin)}, {', '.join(repr(m) for m in self.metadata)}]"

    def __call__(self, *args, **kwargs):
        return self.origin(*args, **kwargs)

    def __getitem__(self, params):
        variables = parameters((self.origin,))
        if not variables:
            raise TypeError(f"{self!r} is not a generic class")
        return AnnotatedForm(substitute(self, (self.origin,), variables, params)[0], self.metadata)


def make_annotated(params) -> AnnotatedForm:
    """Annotated[T, x, ...] as typing builds it: at least a type and one value; an Annotated inside flattened."""
    if params.__class__ is not tuple or len(params) < 2:
        raise TypeError("Annotated[...] should be used with at least two arguments (a type and an annotation).")
    origin = _argument(params[0], "Annotated[t, ...]: t must be a type.")
    metadata = tuple(params[1:])
    if origin.__class__ is AnnotatedForm:
        origin, metadata = origin.origin, origin.metadata + metadata
    return AnnotatedForm(origin, metadata)


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
        elif a.__class__ is AnnotatedForm:
            inner = parameters((a.origin,))
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
        if a.__class__ is AnnotatedForm:
            return AnnotatedForm(replaced(a.origin), a.metadata)
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
    name = "Generic"

    def key(self) -> tuple:
        return (self.name,)

    def __repr__(self) -> str:
        return f"<class 'typing.{self.name}'>"

    def __getitem__(self, params):
        params = params if params.__class__ is tuple else (params,)
        if not params:
            raise TypeError(f"Parameter list to {self.name}[...] cannot be empty")
        if any(p.__class__ is not TypeVarForm for p in params):
            raise TypeError(f"Parameters to {self.name}[...] must all be type variables or parameter specification "
                            "variables.")
        if len(set(params)) != len(params):
            raise TypeError(f"Parameters to {self.name}[...] must all be unique")
        return GenericOf(params) if self.name == "Generic" else ProtocolOf(params)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"gradcli does not implement instances of typing.{self.name} itself")


class ProtocolBase(GenericBase):
    """typing.Protocol: `class SupportsForward(Protocol)` declares methods and attributes other classes have
    (see "Protocols" below)."""

    __slots__ = ()
    name = "Protocol"


class GenericOf(TypeForm):
    """typing.Generic[T, K]: named as a base only."""

    __slots__ = ("args",)
    name = "Generic"

    def __init__(self, args: tuple):
        self.args = args

    def key(self) -> tuple:
        return (self.name, self.args)

    def __repr__(self) -> str:
        return f"typing.{self.name}[{', '.join(repr(a) for a in self.args)}]"


class ProtocolOf(GenericOf):
    """typing.Protocol[T]: a generic protocol's base."""

    __slots__ = ()
    name = "Protocol"


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
    if base.__class__ is GenericOf or base.__class__ is ProtocolOf:
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
    """A string given where typing wants a type: `List['Net']` (a TypedDict's names it with its module)."""

    __slots__ = ("text", "module")

    def __init__(self, text: str, module=None):
        self.text = text
        self.module = module

    def key(self) -> tuple:
        return ("forward", self.text, self.module)

    def __repr__(self) -> str:
        return f"ForwardRef({self.text!r}" + ("" if self.module is None else f", module={self.module!r}") + ")"


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
    if value.__class__ is SpecialForm and value.name != "Any" and value.name not in _PLAIN_FORMS:
        raise TypeError(f"Plain {value!r} is not valid as type argument")
    if value.__class__ is GenericAlias and value.alias.__class__ is SpecialForm and \
            value.alias.name in ("ClassVar", "Final"):
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
    if form.__class__ is AnnotatedBase:     # a class nothing is an instance of
        return ()
    if form.__class__ is BuiltinAlias:
        raise TypeError(f"{fn}() argument 2 cannot be a parameterized generic")
    if form.__class__ is SpecialAlias:     # typing.List is list; typing.Iterable is collections.abc's
        module, _, name = form.real.rpartition(".")
        return getattr(importlib.import_module(module), name)
    if form.__class__ in (GenericAlias, LiteralForm, UserAlias, GenericOf, ProtocolOf, AnnotatedForm):
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


# ------------------------------------------------------------------------------------------ Protocols
# A script's class naming typing.Protocol (or Protocol[T]) among its bases is a protocol: it cannot be made, its
# members are the names its body (and its protocol bases') binds or annotates, and isinstance/issubclass against it
# refuse unless it is decorated @runtime_checkable, when they look for those members, as CPython 3.11's
# _ProtocolMeta does. The class stays a ScriptType class (classes.PROTOCOLS records it); typing._ProtocolMeta
# derives from abc.ABCMeta, so its abstract methods are counted.

# What CPython's _get_protocol_attrs leaves out of a protocol's members (and gradcli's own keys)
_NOT_MEMBERS = frozenset(("__abstractmethods__", "__annotations__", "__weakref__", "_is_protocol",
                          "_is_runtime_protocol", "__dict__", "__args__", "__slots__", "__next_in_mro__",
                          "__parameters__", "__origin__", "__orig_bases__", "__extra__", "__tree_hash__", "__doc__",
                          "__subclasshook__", "__init__", "__new__", "__module__", "_MutableMapping__marker", "_gorg",
                          "__qualname__"))
_RUNTIME: "weakref.WeakSet" = weakref.WeakSet()        # the protocols decorated @runtime_checkable


class _ProtocolWatcher:
    """Checks a protocol's bases before its class is made, and records it (and a class deriving from one)
    after; refuses a NewType as a base, in CPython's words."""

    @staticmethod
    def check(name: str, bases: list) -> None:
        for b in bases:
            if b.__class__ is NewTypeForm:
                raise TypeError("Cannot subclass an instance of NewType. Perhaps you were looking for: "
                                f"`{name} = NewType({name!r}, {b.name})`")
        if not any(b.__class__ is ProtocolBase or b.__class__ is ProtocolOf for b in bases):
            return
        for b in bases:
            if b.__class__ in (ProtocolBase, ProtocolOf, GenericOf) or b is object or \
                    getattr(b, "original", None) is object or (isinstance(b, type) and b in classes.PROTOCOLS):
                continue
            raise TypeError(f"Protocols can only inherit from other protocols, got {b!r}")

    @staticmethod
    def made(cls, bases: list) -> None:
        protocol = any(b.__class__ is ProtocolBase or b.__class__ is ProtocolOf for b in bases)
        if not protocol and not (classes.PROTOCOL_CLASSES and any(b in classes.PROTOCOL_CLASSES
                                                                  for b in cls.__mro__[1:])):
            return
        classes.PROTOCOL_CLASSES.add(cls)
        if protocol:
            members = set()
            for base in cls.__mro__:
                if base is cls or base in classes.PROTOCOLS:
                    members.update(k for k in base.__dict__ if k not in _NOT_MEMBERS and k[:1] != "\0"
                                   and not k.startswith("_abc_"))
                    members.update(base.__dict__.get("__annotations__", {}))
            classes.PROTOCOLS[cls] = frozenset(members)
            if cls.__init__ is object.__init__:         # (one of its own, or a base's, stays)
                type.__setattr__(cls, "__init__", _no_init_or_replace_init)
        classes.set_abstract_methods(cls)


def _no_init_or_replace_init(self, *args, **kwargs):
    """A protocol's __init__ when it has none: a protocol cannot be made; a class deriving from one takes the
    next __init__ of its classes, as CPython 3.11 replaces it."""
    cls = type(self)
    if cls in classes.PROTOCOLS:
        raise TypeError("Protocols cannot be instantiated")
    if cls.__init__ is not _no_init_or_replace_init:
        return
    for base in cls.__mro__:
        init = base.__dict__.get("__init__", _no_init_or_replace_init)
        if init is not _no_init_or_replace_init:
            type.__setattr__(cls, "__init__", init)
            break
    cls.__init__(self, *args, **kwargs)


def runtime_checkable(cls):
    """typing.runtime_checkable: lets isinstance and issubclass test a protocol's members."""
    if isinstance(cls, type) and cls in classes.PROTOCOLS:
        _RUNTIME.add(cls)
        return cls
    if _is_class(cls):
        raise TypeError(f"@runtime_checkable can be only applied to protocol classes, got {cls!r}")
    raise TypeError("issubclass() arg 1 must be a class")


def _runtime(cls) -> bool:
    return any(c in _RUNTIME for c in cls.__mro__)


def _methods_only(cls) -> bool:
    return all(callable(getattr(cls, name, None)) for name in classes.PROTOCOLS[cls])


def _has_members(obj, cls) -> bool:
    """Whether `obj` has every member of protocol `cls` as a script reads attributes (a method not None)."""
    for name in classes.PROTOCOLS[cls]:
        try:
            value = access.read_attr(obj, name)
        except AttributeError:
            return False
        if value is None and callable(getattr(cls, name, None)):
            return False
    return True


def _class_has_members(other, cls) -> bool:
    """_ProtocolMeta's structural check of a class: each member bound (not to None) by one of its classes,
    or annotated by a protocol among them."""
    for name in classes.PROTOCOLS[cls]:
        for base in other.__mro__:
            found = base.__dict__
            if name in found:
                if found[name] is None:
                    return False
                break
            if base in classes.PROTOCOLS and name in found.get("__annotations__", {}):
                break
        else:
            return False
    return True


def _refuse_unless_runtime(cls) -> None:
    if not _runtime(cls):
        raise TypeError("Instance and class checks can only be used with @runtime_checkable protocols")


def _derives(sub, cls) -> bool:
    return issubclass(sub, cls) or bool(classes.VIRTUAL) and classes.virtual_subclass(sub, cls)


def _each(value, real, fallback, check) -> bool:
    """isinstance/issubclass over `real` (a class or a tuple of them) in order: `check` for a protocol,
    `fallback` (the script's own isinstance or issubclass) for any other class."""
    for cls in (real if real.__class__ is tuple else (real,)):
        if isinstance(cls, type) and cls in classes.PROTOCOLS:
            if check(value, cls):
                return True
        elif fallback(value, cls):
            return True
    return False


def _instance_of(obj, cls) -> bool:
    _refuse_unless_runtime(cls)
    methods_only = _methods_only(cls)
    if methods_only and _derives(obj.__class__, cls) or _has_members(obj, cls):
        return True
    return _derives(obj.__class__, cls) or methods_only and _class_has_members(obj.__class__, cls)


def _subclass_of(sub, cls) -> bool:
    _refuse_unless_runtime(cls)
    if not _methods_only(cls):
        raise TypeError("Protocols with non-method members don't support issubclass()")
    return _class_has_members(sub, cls) or _derives(sub, cls)


def protocol_isinstance(obj, real, fallback) -> bool:
    """isinstance(obj, real) where `real` (a class or a tuple of them) names a protocol."""
    return _each(obj, real, fallback, _instance_of)


def protocol_issubclass(sub, real, fallback) -> bool:
    """issubclass(sub, real) where `real` names a protocol."""
    return _each(sub, real, fallback, _subclass_of)


# ------------------------------------------------------------------------------------------ TypedDict
# A TypedDict class is a Python class whose metaclass makes plain dicts when called (TD(lr=0.1) is {'lr': 0.1}),
# as CPython's _TypedDictMeta does; scripts read its __annotations__, __total__, __required_keys__ and
# __optional_keys__ (gradcli.language.access's rules for its metaclass, below).

class TypedDictMeta(type):
    """typing._TypedDictMeta: its classes make dicts; isinstance and issubclass refuse them."""

    __call__ = dict

    def __instancecheck__(cls, other):
        raise TypeError("TypedDict does not support instance and class checks")

    __subclasscheck__ = __instancecheck__


_TYPED_DICT_FIELD = "TypedDict('Name', {f0: t0, f1: t1, ...}); each t must be a type"


def _typed_dict_class(name: str, bases: tuple, annotations: dict, total: bool, namespace: dict):
    own = {}
    for key, kind in annotations.items():
        kind = _argument(kind, _TYPED_DICT_FIELD)
        own[key] = ForwardRef(kind.text, "__main__") if kind.__class__ is ForwardRef else kind
    merged, required, optional = {}, set(), set()
    for base in bases:
        merged.update(base.__dict__.get("__annotations__", {}))
        required.update(base.__dict__.get("__required_keys__", ()))
        optional.update(base.__dict__.get("__optional_keys__", ()))
    merged.update(own)
    for key, kind in own.items():
        marker = kind.alias.name if kind.__class__ is GenericAlias and kind.alias.__class__ is SpecialForm else None
        (required if (marker == "Required" or marker != "NotRequired" and total) else optional).add(key)
    body = {k: v for k, v in namespace.items() if not classes.is_dunder(k) and k[:1] != "\0"}
    body.update({"__module__": "__main__", "__qualname__": namespace.get("__qualname__", name),
                 "__annotations__": merged, "__required_keys__": frozenset(required),
                 "__optional_keys__": frozenset(optional), "__total__": total})
    if "__doc__" in namespace:
        body["__doc__"] = namespace["__doc__"]
    return TypedDictMeta(name, (dict,), body)


def _make_typed_dict_class(name: str, bases: list, namespace: dict, kwargs: dict):
    """`class Config(TypedDict, total=False)`, or deriving from another TypedDict class."""
    for key in kwargs:
        if key != "total":
            raise TypeError(f"_TypedDictMeta.__new__() got an unexpected keyword argument '{key}'")
    typed = []
    for base in bases:
        if base is TYPED_DICT:
            continue
        if base.__class__ is not TypedDictMeta:
            raise TypeError("cannot inherit from both a TypedDict type and a non-TypedDict base class")
        typed.append(base)
    return _typed_dict_class(name, tuple(typed), dict(namespace.get("__annotations__", {})),
                             kwargs.get("total", True), namespace)


_make_typed_dict_class.takes_keywords = True


class TypedDictMaker:
    """typing.TypedDict as scripts hold it: called, the functional form (`TypedDict('Cfg', {'lr': float})`);
    as a class statement's base, the class form."""

    __slots__ = ()

    def __repr__(self) -> str:
        from gradcli.engine.addresses import address
        return f"<function TypedDict at {address(self)}>"

    def __call__(self, *args, total=True, **kwargs):
        if not args:
            raise TypeError("TypedDict() missing 1 required positional argument: 'typename'")
        if len(args) > 2:
            raise TypeError(f"TypedDict() takes from 1 to 2 positional arguments but {len(args)} were given")
        typename, fields = args[0], args[1] if len(args) == 2 else None
        if fields is None:
            fields = kwargs
            if kwargs:
                from gradcli.engine.state import STATE
                if STATE.warn is not None:
                    STATE.warn("DeprecationWarning", "The kwargs-based syntax for TypedDict definitions is "
                               "deprecated in Python 3.11, will be removed in Python 3.13, and may not be understood "
                               "by third-party type checkers.")
        elif kwargs:
            raise TypeError("TypedDict takes either a dict or keyword arguments, but not both")
        annotations = dict(bounds.take(fields, "dict")) if fields.__class__ is not dict else dict(fields)
        return _typed_dict_class(typename, (), annotations, total, {"__qualname__": typename})


class _TypedDictRules:
    """What a script reads of a TypedDict class (its instances are plain dicts)."""

    _READ = frozenset(("__annotations__", "__required_keys__", "__optional_keys__", "__total__", "__name__",
                       "__qualname__", "__module__", "__doc__"))

    @classmethod
    def class_attr(cls, obj, name: str):
        if name in cls._READ:
            return getattr(obj, name)
        if classes.is_dunder(name):
            raise AttributeError(f"'{stdlib.type_name(obj)}' object attribute '{name}' is outside gradcli's language")
        if name in obj.__dict__:
            return obj.__dict__[name]
        if hasattr(dict, name):
            raise NotImplementedError(f"gradcli does not implement dict's {name} read from a TypedDict class")
        raise AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'")

    @staticmethod
    def member_attr(obj, name: str):        # (nothing is an instance of a TypedDict class)
        raise AttributeError(name)

    @staticmethod
    def set_attr(obj, name: str, value) -> None:
        raise AttributeError(f"setting attributes of a TypedDict class is outside gradcli's language")

    @staticmethod
    def del_attr(obj, name: str) -> None:
        raise AttributeError(f"deleting attributes of a TypedDict class is outside gradcli's language")

    @classmethod
    def attribute_names(cls, obj) -> frozenset:
        return cls._READ | frozenset(k for k in obj.__dict__ if not classes.is_dunder(k))


# ------------------------------------------------------------------------------------------ NewType and the rest

class NewTypeForm(TypeForm):
    """typing.NewType('UserId', int): a name for a type that checkers tell apart; called, it returns its argument."""

    typing = True       # (no __slots__: what a script reads of it, access.ALLOWED below, is in its __dict__)

    def __init__(self, name, tp):
        if name.__class__ is not str:       # (CPython's NewType looks for a '.' in it first)
            raise TypeError(f"argument of type '{stdlib.type_name(name)}' is not iterable")
        self.name = name.rpartition(".")[2]
        self.supertype = _converted(tp)
        self.__dict__.update({"__name__": self.name, "__qualname__": self.name, "__module__": "__main__",
                              "__supertype__": self.supertype})

    def key(self) -> tuple:
        return ("newtype", id(self))

    def __repr__(self) -> str:
        return f"__main__.{self.name}"

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("_typing._idfunc() takes no keyword arguments")
        if len(args) != 1:
            raise TypeError(f"_typing._idfunc() takes exactly one argument ({len(args)} given)")
        return args[0]

    def __getitem__(self, params):
        raise TypeError("'NewType' object is not subscriptable")



def final(f):
    """typing.final: marks a method or class final for checkers; returns it unchanged."""
    return f


def assert_never(arg, /):
    raise AssertionError(f"Expected code to be unreachable, but got: {repr(arg)[:100]}")


# typing's special forms, one object each (get_origin gives them back: `get_origin(Optional[int]) is Union`)
_FORMS = {name: SpecialForm(name) for name in ("Any", "Optional", "Union", "ClassVar", "Final", "Literal", "NoReturn",
                                                "Required", "NotRequired", "Self", "Never", "LiteralString", "TypeAlias")}


def get_origin(tp):
    """typing.get_origin: what a subscripted form stands for (list for List[int], Union for Optional[int], the class
    for Box[int], Annotated for Annotated[...]), None for anything else."""
    cls = tp.__class__
    if cls is AnnotatedForm:
        return ANNOTATED
    if cls is GenericAlias:
        return tp.alias if tp.alias.__class__ is SpecialForm else _alias_origin(tp.alias)
    if cls is SpecialAlias:
        return _alias_origin(tp)
    if cls is BuiltinAlias or cls is UserAlias:
        return tp.origin
    if cls is UnionType or cls is _types.UnionType:
        return stdlib.script_type(tp)       # types.UnionType
    if cls is UnionForm:
        return _FORMS["Union"]
    if cls is LiteralForm:
        return _FORMS["Literal"]
    if cls is GenericOf or tp is GENERIC:
        return GENERIC
    if cls is ProtocolOf:
        return PROTOCOL
    return None


def _alias_origin(alias: SpecialAlias):
    """The class a typing alias stands for, as the script holds it (its `list`, collections.abc's Iterable)."""
    module, _, name = alias.real.rpartition(".")
    return stdlib.held_class(getattr(importlib.import_module(module), name))


def get_args(tp) -> tuple:
    """typing.get_args: a form's arguments (Callable's parameters as a list, then its result; Annotated's type,
    then its values), () for anything else."""
    cls = tp.__class__
    if cls is AnnotatedForm:
        return (tp.origin,) + tp.metadata
    if cls is GenericAlias and tp.alias.__class__ is SpecialAlias and tp.alias.name == "Callable":
        params, result = tp.args
        return (params if params is Ellipsis else list(params), result)
    if cls in (GenericAlias, BuiltinAlias, UserAlias, LiteralForm, GenericOf, ProtocolOf) or isinstance(tp, UnionForm):
        return tp.args
    if cls is _types.UnionType:
        return tp.__args__
    return ()


def members() -> dict:
    """The typing module's names scripts use in annotations."""
    return {
        "Any": _FORMS["Any"], "Optional": _FORMS["Optional"], "Union": _FORMS["Union"],
        "ClassVar": _FORMS["ClassVar"], "Final": _FORMS["Final"], "Literal": _FORMS["Literal"],
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
        "NoReturn": _FORMS["NoReturn"], "Text": str,
        "TYPE_CHECKING": False,
        "cast": _typing.cast,           # returns its second argument
        "overload": _typing.overload,   # returns a function that refuses to be called, in typing's words
        "NamedTuple": NAMED_TUPLE,
        "TypeVar": type_var, "Generic": GENERIC,
        "Protocol": PROTOCOL, "runtime_checkable": runtime_checkable, "TypedDict": TYPED_DICT,
        "Required": _FORMS["Required"], "NotRequired": _FORMS["NotRequired"],
        "NewType": NewTypeForm, "Annotated": ANNOTATED, "final": final, "assert_never": assert_never,
        "Self": _FORMS["Self"], "Never": _FORMS["Never"], "LiteralString": _FORMS["LiteralString"],
        "TypeAlias": _FORMS["TypeAlias"], "get_origin": get_origin, "get_args": get_args,
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
          GenericBase: "type", GenericOf: "typing._GenericAlias", UserAlias: "typing._GenericAlias",
          ProtocolBase: "typing._ProtocolMeta", ProtocolOf: "typing._GenericAlias", AnnotatedBase: "type",
          AnnotatedForm: "typing._AnnotatedAlias", NewTypeForm: "typing.NewType", TypedDictMaker: "function"}
# scripts read none of their attributes (gradcli.language.access refuses every one)
stdlib.register_opaque({cls: _python_class for cls in (SpecialForm, SpecialAlias, GenericAlias, *_PATHS)})

NAMED_TUPLE = NamedTupleMaker()
classes.CLASS_MAKERS[id(NAMED_TUPLE)] = NAMED_TUPLE.make_class
GENERIC = GenericBase()
PROTOCOL = ProtocolBase()
ANNOTATED = AnnotatedBase()
TYPED_DICT = TypedDictMaker()
classes.BASE_FORMS.update({GenericOf: _base_of_generic, UserAlias: _base_of_generic, ProtocolOf: _base_of_generic,
                           ProtocolBase: lambda base: (None, ())})
classes.CLASS_WATCHERS.append(_ProtocolWatcher)
classes.PROTOCOL_CHECKS[:] = [protocol_isinstance, protocol_issubclass]
classes.CLASS_MAKERS[id(TYPED_DICT)] = classes.CLASS_MAKERS[id(TypedDictMeta)] = _make_typed_dict_class
classes.HELD_METACLASSES[TypedDictMeta] = "typing._TypedDictMeta"
access.register_metaclass_rules(TypedDictMeta, _TypedDictRules)
access.allow_held(NewTypeForm, frozenset(("__supertype__",)))     # (a class, read as it is)
access.ALLOWED[NewTypeForm] = frozenset(("__name__", "__qualname__", "__module__", "__supertype__"))
