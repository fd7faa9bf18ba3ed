"""typing, and the PEP 585/604 forms annotations build (`list[int]`, `int | None`): printed, compared and
refused as CPython 3.11 does (compared with CPython; PyTorch's classes inside them checked with PyTorch
2.13, and in the goldens lang_05 to lang_07), with no attribute a script can read."""

import io

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.session import Session

IMPORTS = ("import typing\nfrom typing import Any, Optional, Union, List, Dict, Tuple, Set, FrozenSet, Callable, "
           "Iterable, Iterator, Sequence, Mapping, Type, Generator, TYPE_CHECKING, cast, overload\n")
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"

SNIPPETS = [
    "print(List, Dict, Tuple, Set, FrozenSet, Callable, Iterable, Iterator, Sequence, Mapping, Type, Generator)",
    "print(Any, Optional, Union, TYPE_CHECKING, typing.Any, typing.List is List)",
    "print(List[int], Dict[str, List[float]], Set[str], FrozenSet[int], Type[int], Iterable[str], Iterator[int])",
    "print(Sequence[int], Mapping[str, int], Generator[int, None, None], Dict[str, Any])",
    "print(Tuple[int, ...], Tuple[()], Tuple[int, str], Tuple[int], Tuple[..., int])",
    "print(Callable[[int], int], Callable[..., str], Callable[[], None], Callable[[int, str], List[int]])",
    "print(Callable[int, int])",
    "print(Optional[int], Optional[List[int]], Optional[Union[int, str]], Optional[None], Optional[int | str])",
    "print(Union[int, str], Union[int], Union[int, int], Union[None, int], Union[int, Union[str, float]])",
    "print(Union[int, None, str], Union[int, 'x'], List['Net'], Dict['a', 'b'])",
    "print(Optional[int] | str, int | List[int], List[int] | None, Callable[[int], None] | None)",
    "print(list[int], dict[str, int], tuple[int, ...], tuple[()], set[str], frozenset[int], type[int], list[...])",
    "print(dict[str, list[int]] | None, Optional[list[int]], list[3, 'x'], list | None, int | dict, tuple | list[int])",
    "print(int | None, int | str | None, (int | None) | list[int], list[int] | (int | None))",
    "class Net:\n    pass\nprint(List[Net], Optional[Net], Net | None, list[Net], Type[Net], Dict[str, Net])",
    "print(List[int] == List[int], Union[int, str] == Union[str, int], List[int] == List[str], Optional[int] == "
    "Union[int, None], list[int] == list[int], hash(List[int]) == hash(List[int]))",
    "print({List[int]: 1}[List[int]], len({Optional[int], Union[None, int]}))",
    "print(cast(int, 'x'), cast('int', 3), cast(List[int], [1]))",
    "print(list[int]('ab'), dict[str, int](a=1), tuple[int, ...]([1, 2]))",
    "print(isinstance(3, List), isinstance([], List), isinstance(3, Optional[int]), isinstance(None, Optional[int]),"
    " isinstance(3, int | str), isinstance([], Iterable), isinstance(3, Callable), issubclass(int, Optional[int]))",
    TRY + "t(lambda: List[int, str])\nt(lambda: Dict[int])\nt(lambda: List[int][str])\nt(lambda: Any[int])\n"
    "t(lambda: Optional[int, str])\nt(lambda: Union[()])\nt(lambda: Callable[int])\nt(lambda: List[Optional])\n"
    "t(lambda: List[3])\nt(lambda: Generator[int])\nt(lambda: Mapping[int, int, int])",
    TRY + "t(lambda: List())\nt(lambda: Dict[str, int]())\nt(lambda: Optional())\nt(lambda: Union[int, str]())\n"
    "t(lambda: Any())\nt(lambda: Iterable())\nt(lambda: Mapping[int, int]())\nt(lambda: Generator[int, None, None]())"
    "\nt(lambda: Type[int]())\nt(lambda: Callable())",
    TRY + "t(lambda: isinstance(3, Any))\nt(lambda: isinstance(3, Optional))\nt(lambda: isinstance(3, list[int]))\n"
    "t(lambda: isinstance(3, List[int]))\nt(lambda: int | 3)\nt(lambda: list[int] | 3)\nt(lambda: list[int][int])\n"
    "t(lambda: sorted[int])",
    TRY + "t(lambda: Dict[str, (int, str)])\nt(lambda: Union[int, (str,)])\nt(lambda: Optional[(int,)])\n"
    "t(lambda: Callable[[int, (str,)], int])\nt(lambda: Callable[[int], (int,)])\nt(lambda: Tuple[int, (str,)])\n"
    "t(lambda: List[int] | (1,))\nt(lambda: Type[(int,)])",
    TRY + "@overload\ndef f(x: int) -> int: ...\ndef f(x):\n    return x\nprint(f(3))\n"
    "@overload\ndef g(x: int) -> int: ...\nt(lambda: g(1))",
    "def forward(src: List[int], mask: Optional[List[int]] = None, *rest: Tuple[int, ...],\n"
    "            cb: Callable[[int], int] = None, **kw: Dict[str, Any]) -> Optional[int]:\n    return src[0]\n"
    "print(forward.__annotations__, forward([4]))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_typing(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


NAMED = ("from typing import NamedTuple\nclass Point(NamedTuple):\n    x: int\n    y: float = 0.0\n"
         "    label: str = 'p'\n    scale = 2\n    def norm(self) -> float:\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n"
         "    @property\n    def double(self):\n        return self.x * 2\np = Point(3, 4.0)\n")


@pytest.mark.parametrize("snippet", [
    NAMED + "print(p, p.norm(), p.double, p.scale, Point.scale, p.x, p[1], len(p), p._asdict(), p._replace(x=1))\n"
    "print(Point._fields, Point.__annotations__, isinstance(p, tuple), Point.norm(p), Point.norm.__annotations__)\n"
    "print(p.norm.__annotations__, p.norm.__name__, Point.norm.__qualname__)",
    NAMED + "print(Point(1), Point(x=2, y=3), Point._make([1, 2, 'z']))\nx, y, l = p\n"
    "print(x, y, l, p == (3, 4.0, 'p'), hash(p) == hash((3, 4.0, 'p')))",
    NAMED + "Pair = NamedTuple('Pair', [('a', int), ('b', List[int])])\nprint(Pair(1, [2]), Pair.__annotations__)\n"
    "KW = NamedTuple('KW', a=int, b=str)\nprint(KW(1, 'x'), KW._fields)\nclass Outer:\n    class In(NamedTuple):\n"
    "        v: int\nprint(Outer.In(1), type(p).__name__)",
    NAMED + TRY + "t(lambda: Point())\nt(lambda: Point(1, 2, 3, 4))\n"
    "def bad1():\n    class A(NamedTuple):\n        x: int = 1\n        y: int\nt(bad1)\n"
    "def bad2():\n    class A(NamedTuple):\n        x: int = 1\n        z: int = 2\n        y: int\nt(bad2)\n"
    "def bad3():\n    class A(NamedTuple):\n        x: int\n        def _asdict(self):\n            return 1\nt(bad3)\n"
    "def bad4():\n    class A(NamedTuple):\n        _x: int\nt(bad4)\n"
    "t(lambda: NamedTuple('A', [('a', int)], b=int))\nt(lambda: NamedTuple('P', [('x', (1,))]))",
])
def test_named_tuples_as_cpythons(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("expression", ["Point.__new__", "p.__class__.__init__", "Point._field_defaults", "p.__reduce__", "Point.__mro__",
                                        "Point.norm.__globals__", "Point.__dict__", "p._field_defaults"])
def test_a_named_tuple_class_reaches_no_more(expression):
    assert located_error(IMPORTS + NAMED + f"q = {expression}").endswith("is outside gradcli's language")


def test_the_other_aliases_of_collections_and_collections_abc():
    source = ("from typing import Deque, DefaultDict, OrderedDict, Counter, Collection, Container, Reversible, "
              "MutableSequence, MutableMapping, MutableSet, AbstractSet, Hashable, Sized, NoReturn, Text, Callable, List, "
              "Optional\n" + TRY
              + "for a in (Deque, DefaultDict, OrderedDict, Counter, Collection, Container, Reversible, MutableSequence,\n"
              "          MutableMapping, MutableSet, AbstractSet, Hashable, Sized, NoReturn):\n"
              "    t(lambda: a)\n    t(lambda: a())\n    t(lambda: a[int])\n    t(lambda: a[int, str])\n"
              "    t(lambda: isinstance([], a))\n    t(lambda: type(a))\n"
              "t(lambda: Text)\nt(lambda: Callable[..., NoReturn])\nt(lambda: Deque[int]())\n"
              "t(lambda: DefaultDict[str, int]())\nt(lambda: List[int]())\nt(lambda: Optional[NoReturn])\n"
              "t(lambda: Counter[str]('abca'))\n")
    assert gradcli_output(source) == cpython_output(source)


GENERICS = """\
from typing import TypeVar, Generic, List, Optional, Dict
def t(f):
    try:
        print(f())
    except Exception as e:
        print(type(e).__name__, e)
T = TypeVar('T')
K = TypeVar('K', bound=float)
V = TypeVar('V', int, str)
C = TypeVar('C', covariant=True)
D = TypeVar('D', contravariant=True)
print(T, K, V, C, D, List[T], Dict[K, V], Optional[T], T | None)
t(lambda: TypeVar('X', int))
t(lambda: TypeVar('X', covariant=True, contravariant=True))
t(lambda: TypeVar(3))
t(lambda: T())
t(lambda: T[int])
t(lambda: List[T][int])
t(lambda: Dict[str, T][int])
t(lambda: Dict[K, V][int])
t(lambda: List[int][T])
t(lambda: Dict[K, List[V]][float, float])
t(lambda: Optional[T][int])
class Box(Generic[T]):
    def __init__(self, item: T):
        self.item = item
    def get(self) -> T:
        return self.item
b = Box(3)
print(b.get(), Box[int], Box[int](4).item, Box.get.__annotations__, Box[List[T]], Box[List[T]][str])
t(lambda: Box[int, str])
t(lambda: Generic[int])
t(lambda: Generic[T, T])
t(lambda: Generic)
t(lambda: Generic[T])
class Pair(Generic[K, V]):
    pass
print(Pair[float, int], type(Box[int]))
class IntBox(Box[int]):
    pass
class SubBox(Box[T]):
    pass
print(IntBox(5).item, SubBox[str], isinstance(IntBox(1), Box))
t(lambda: IntBox[int])
t(lambda: isinstance(b, Box))
t(lambda: isinstance(b, Box[int]))
t(lambda: T == T)
t(lambda: T == TypeVar('T'))
t(lambda: type(T))
class Plain:
    pass
t(lambda: Plain[int])
t(lambda: list[T][int])
t(lambda: (list[T] | None)[int])
t(lambda: dict[str, T][int])
t(lambda: list[int][str])
"""


def test_a_union_never_runs_a_scripts_repr():
    source = (IMPORTS + "class A:\n    def __repr__(self):\n        print('repr ran')\n        return \"<class 'x'>\"\n"
              "try:\n    list[int] | A()\nexcept TypeError as e:\n    print(e)\n")
    assert gradcli_output(source) == cpython_output(source)


def test_type_variables_and_generic_classes():
    """TypeVar's forms and errors, substitution (List[T][int], Optional[T][int], list[T][int]), a script's
    Generic[T] class, its Box[int] (printed, called, derived from) and typing's errors."""
    assert gradcli_output(GENERICS) == cpython_output(GENERICS)


def test_type_of_a_typing_value_is_typings_class():
    source = (IMPORTS + "from typing import Literal, ClassVar\nfor v in (Any, Optional, List, Tuple, Callable, "
              "List[int], Callable[[int], int], Optional[int], list[int], list | None, Literal[1], ClassVar[int],\n"
              "          typing.List['x']):\n    print(type(v), type(v).__name__)\n")
    assert gradcli_output(source) == cpython_output(source)


def test_classvar_final_and_literal():
    """Their forms and errors, and a dataclass leaving ClassVar attributes out of its fields."""
    source = ("from typing import ClassVar, Final, Literal, Optional, List\nfrom dataclasses import dataclass, fields\n"
              + TRY + "for f in (lambda: ClassVar, lambda: ClassVar[int], lambda: Literal['a', 'b'], lambda: Literal[1],\n"
              "          lambda: Final[int], lambda: Final, lambda: Literal, lambda: ClassVar[int, str],\n"
              "          lambda: Final[int, str], lambda: Optional[ClassVar[int]], lambda: List[ClassVar[int]],\n"
              "          lambda: Literal['a'] == Literal['a'], lambda: Literal['a', 'a'], lambda: Literal[1, True],\n"
              "          lambda: ClassVar(), lambda: Literal['a'] | None, lambda: ClassVar[int] | None,\n"
              "          lambda: Literal[None], lambda: Literal[Literal[1], 2], lambda: List[Final],\n"
              "          lambda: isinstance(1, Literal[1])):\n    t(f)\n"
              "@dataclass\nclass A:\n    x: int = 1\n    y: ClassVar[int] = 5\n    z: ClassVar = 6\n"
              "    mode: Literal['a', 'b'] = 'a'\n    k: Final[int] = 3\n"
              "print(A(), [f.name for f in fields(A)], A.y, A.__annotations__)\n")
    assert gradcli_output(source) == cpython_output(source)


def test_future_annotations_keep_the_text():
    source = ("from __future__ import annotations\n" + IMPORTS + "def f(x: List[int] | None = None) -> Dict[str, int]: "
              "pass\nprint(f.__annotations__)\n")
    assert gradcli_output(source) == cpython_output(source)


TORCH_FORMS = [
    ("list[torch.Tensor]", "list[torch.Tensor]"),
    ("torch.Tensor | None", "torch.Tensor | None"),
    ("None | torch.Tensor", "None | torch.Tensor"),
    ("int | torch.Tensor | None", "int | torch.Tensor | None"),
    ("(int | None) | torch.Tensor", "int | None | torch.Tensor"),
    ("Optional[torch.Tensor]", "typing.Optional[torch.Tensor]"),
    ("Dict[str, torch.Tensor]", "typing.Dict[str, torch.Tensor]"),
    ("List[nn.Linear]", "typing.List[torch.nn.modules.linear.Linear]"),
    ("nn.Linear | None", "torch.nn.modules.linear.Linear | None"),
    ("Type[nn.Module]", "typing.Type[torch.nn.modules.module.Module]"),
    ("Callable[..., torch.Tensor]", "typing.Callable[..., torch.Tensor]"),
    ("Tuple[torch.Tensor, torch.Tensor]", "typing.Tuple[torch.Tensor, torch.Tensor]"),
    ("tuple[torch.Tensor, torch.Tensor]", "tuple[torch.Tensor, torch.Tensor]"),
    ("dict[str, list[torch.Tensor]]", "dict[str, list[torch.Tensor]]"),
    ("Optional[torch.Size]", "typing.Optional[torch.Size]"),
    ("torch.dtype | None", "torch.dtype | None"),
    ("Union[torch.Tensor, float]", "typing.Union[torch.Tensor, float]"),
]


@pytest.mark.parametrize("form, printed", TORCH_FORMS)
def test_pytorch_classes_print_as_pytorch_names_them(form, printed):
    """Checked against PyTorch 2.13 (the golden lang_05_annotated_modules prints several of them)."""
    source = IMPORTS + f"import torch\nfrom torch import nn\nprint({form})\n"
    assert gradcli_output(source) == printed + "\n"


@pytest.mark.parametrize("source, message", [
    ("import torch\ntorch.Tensor | 3", "2:1: TypeError: unsupported operand type(s) for |: 'torch._C._TensorMeta' and 'int'"),
    ("from typing import Protocol\nProtocol()",
     "2:1: NotImplementedError: gradcli does not implement instances of typing.Protocol itself"),
    ("from typing import ParamSpec", "1:1: NotImplementedError: gradcli does not implement typing.ParamSpec"),
    ("from typing import NamedTuple\nclass B:\n    pass\nclass A(NamedTuple, B):\n    x: int",
     "4:1: TypeError: can only inherit from a NamedTuple type and Generic"),
    ("import typing\ntyping.get_type_hints", "2:1: NotImplementedError: gradcli does not implement typing.get_type_hints"),
    ("import typing\ntyping.Nothing", "2:1: AttributeError: module 'typing' has no attribute 'Nothing'"),
    ("from typing import Nothing", "1:1: ImportError: cannot import name 'Nothing' from 'typing' (unknown location)"),
    ("x: List[int] = []", "1:4: NameError: name 'List' is not defined"),
])
def test_errors(source, message):
    assert located_error(source) == message


ESCAPES = [
    "typing.List.__origin__", "List[int].__origin__", "Optional[int].__args__", "typing.__dict__", "typing.sys",
    "typing.re", "typing.List.__class__.__init__", "List[int].__class__.__init__", "list[int].__origin__", "list[int].__args__",
    "(int | None).__args__", "(list | None).__args__", "Optional[int].copy_with", "List._name", "List['x'].__args__",
    "Any.__class__.__init__", "Callable[[int], int].__call__", "typing.List.__getitem__", "Union.__reduce__",
    "list[int].__class__.__init__", "cast.__globals__", "overload.__code__", "typing.__loader__", "typing.__spec__",
    "Dict.__mro__", "Tuple[int].__parameters__", "typing.TypeVar('T').__bound__", "typing.TypeVar('T').__name__",
    "typing.Generic.__class_getitem__", "typing.Generic[typing.TypeVar('T')].__origin__",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_no_attribute_of_a_typing_value_is_reachable(expression):
    source = IMPORTS + f"x = {expression}\n"
    assert located_error(source).endswith("is outside gradcli's language")


@pytest.mark.parametrize("expression", ["getattr(List, '__origin__')", "getattr(Optional[int], '__args__', 5)",
                                        "hasattr(List, '__origin__')", "getattr(list[int], '__origin__', 5)"])
def test_getattr_reaches_no_more(expression):
    out = io.StringIO()
    try:
        Session(out=out).run_source(IMPORTS + f"print({expression})\n")
    except Exception as e:          # getattr without a default: the same refusal
        assert "is outside gradcli's language" in str(e)
        return
    assert out.getvalue() in ("5\n", "False\n")


def test_typing_is_loaded_only_by_scripts_that_use_it():
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('x: int = 1\\n"
            "def f(a: int) -> float: pass\\n')\nprint('gradcli.language.pytyping' in sys.modules, "
            "'gradcli.language.unparse' in sys.modules)\n")
    import subprocess
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False False\n"


def test_help_names_a_typing_value_by_its_repr():
    out = gradcli_output(IMPORTS + "help(Optional[int])\nhelp(typing)\n")
    assert out.startswith("typing.Optional[int]\n    A type annotation (typing)")
    assert "module typing\n" in out


@pytest.mark.parametrize("expression", ["Box[int].__origin__", "Box.__parameters__", "Box.__orig_bases__",
                                        "Box[int].__args__", "T.__constraints__", "Box[int].__class__.__init__"])
def test_a_generic_class_reaches_no_more(expression):
    source = (IMPORTS + "from typing import TypeVar, Generic\nT = TypeVar('T')\nclass Box(Generic[T]):\n    pass\n"
              f"x = {expression}\n")
    assert located_error(source).endswith("is outside gradcli's language")


def test_a_named_tuples_subclass_as_cpython():
    """class B(A) of a typing.NamedTuple class A: a tuple with A's fields and B's methods (CPython 3.11)."""
    source = ("from typing import NamedTuple\nclass A(NamedTuple):\n    x: int\n    def double(self):\n"
              "        return self.x * 2\nclass B(A):\n    def triple(self):\n        return self.x * 3\nb = B(2)\n"
              "print(b, b.double(), b.triple(), isinstance(b, A), B._fields, b._replace(x=5))\n")
    assert gradcli_output(source) == cpython_output(source)


PROTOCOLS = "from typing import Protocol, runtime_checkable, TypeVar, List\nfrom abc import abstractmethod\n" + TRY + """\
class SupportsForward(Protocol):
    scale: float
    def forward(self, x): ...
@runtime_checkable
class Closeable(Protocol):
    def close(self): ...
@runtime_checkable
class Sized2(Protocol):
    def __len__(self): ...
@runtime_checkable
class HasScale(Protocol):
    scale: float
class Layer(SupportsForward):
    def __init__(self, s):
        self.scale = s
    def forward(self, x):
        return x * self.scale
class Res:
    def close(self):
        return 'closed'
class Off:
    close = None
"""


@pytest.mark.parametrize("snippet", [
    # made: a protocol refuses, a class deriving from one is made (its own __init__, or the next one's)
    "t(lambda: SupportsForward())\nl = Layer(2.0)\nprint(l.forward(3), isinstance(l, Layer), type(SupportsForward), "
    "type(Layer))\nclass Bare(Closeable):\n    pass\nt(lambda: type(Bare()).__name__)\nt(lambda: Bare(1))\n"
    "class WithInit(Protocol):\n    def __init__(self, a):\n        self.a = a\nprint(WithInit(4).a)",
    # isinstance and issubclass: refused unless @runtime_checkable, else the members looked for
    "t(lambda: isinstance(Layer(1.0), SupportsForward))\nt(lambda: issubclass(Layer, SupportsForward))\n"
    "print(isinstance(Res(), Closeable), isinstance(Off(), Closeable), isinstance(3, Closeable))\n"
    "print(issubclass(Res, Closeable), issubclass(Off, Closeable), issubclass(list, Sized2), issubclass(int, Sized2))\n"
    "print(isinstance([1], Sized2), isinstance('ab', Sized2), isinstance(3.0, Sized2))\n"
    "print(isinstance(Layer(1.0), HasScale), isinstance(Res(), HasScale))\nt(lambda: issubclass(Layer, HasScale))\n"
    "t(lambda: issubclass(3, Closeable))\nprint(isinstance(Res(), (int, Closeable)), isinstance(3, (int, SupportsForward)))\n"
    "t(lambda: isinstance(3, (SupportsForward, int)))",
    # bases, generic protocols, runtime_checkable's refusals, abstract methods, inheritance of the flag
    "T = TypeVar('T')\nclass Getter(Protocol[T]):\n    def get(self) -> T: ...\nprint(Getter[int], Getter)\n"
    "def bad():\n    class B(Protocol, Res):\n        pass\nt(bad)\nt(lambda: runtime_checkable(Res))\n"
    "t(lambda: runtime_checkable(3))\nt(lambda: Protocol[int])\nt(lambda: Protocol[()])\n"
    "class Job(Protocol):\n    @abstractmethod\n    def run(self): ...\nclass Impl(Job):\n    pass\nt(lambda: Impl())\n"
    "class Both(Closeable, Protocol):\n    def open(self): ...\nprint(isinstance(Res(), Both), type(Both))\n"
    "print(SupportsForward.__name__, SupportsForward.__qualname__, SupportsForward.__module__)",
    # a class pattern names a protocol as isinstance does
    "def kind(x):\n    match x:\n        case Closeable():\n            return 'closeable'\n        case _:\n"
    "            return 'other'\nprint(kind(Res()), kind(3))\n"
    "def kind2(x):\n    match x:\n        case SupportsForward():\n            return 'f'\nt(lambda: kind2(1))",
])
def test_protocols_as_cpythons(snippet):
    source = PROTOCOLS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


TYPED_DICTS = "from typing import TypedDict, Required, NotRequired, List, Optional\n" + TRY + """\
class Config(TypedDict):
    lr: float
    steps: int
class Extra(Config, total=False):
    note: 'str'
    seed: Required[int]
"""


@pytest.mark.parametrize("snippet", [
    "c = Config(lr=0.1, steps=3)\nprint(c, type(c), Config, type(Config), Config.__annotations__, Config.__total__)\n"
    "print(Extra(lr=1), Extra([('a', 1)]), Extra.__total__, Extra.__annotations__)\n"
    "print(sorted(Extra.__required_keys__), sorted(Extra.__optional_keys__), Config.__name__, Config.__module__)\n"
    "c['lr'] *= 2\nprint(c, {**c, 'x': 1}, list(c))",
    "F = TypedDict('F', {'a': int, 'b': List[str]}, total=False)\nprint(F, F(a=1), F.__total__, F.__annotations__)\n"
    "G = TypedDict('G', [('x', Optional[int])])\nprint(G.__annotations__, G.__qualname__)\n"
    "t(lambda: TypedDict('X', {'a': (1, 2)}))\nt(lambda: TypedDict())\nt(lambda: TypedDict('X', {}, {}))\n"
    "t(lambda: TypedDict('X', {'a': int}, b=int))\nt(lambda: isinstance({}, Config))\nt(lambda: issubclass(dict, Config))\n"
    "t(lambda: Config.missing)\nprint(NotRequired[int], Required['x'])\nt(lambda: Required[int, str])",
    "def bad():\n    class A(TypedDict, int):\n        x: int\nt(bad)\n"
    "def bad2():\n    class A(TypedDict, foo=1):\n        x: int\nt(bad2)\n"
    "class D(TypedDict):\n    'A doc.'\n    x: int = 3\nprint(D(x=1), D.x, D.__doc__)",
])
def test_typed_dicts_as_cpythons(snippet):
    source = TYPED_DICTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_the_newer_forms_as_cpythons():
    source = ("from typing import NewType, Annotated, Self, Never, LiteralString, TypeAlias, final, assert_never, List, "
              "Optional, TypeVar\n" + TRY
              + "UserId = NewType('UserId', int)\nprint(UserId, UserId(5), UserId('x'), type(UserId), UserId.__name__, "
              "UserId.__supertype__, UserId.__module__)\nprint(UserId | None, Optional[UserId], List[UserId])\n"
              "t(lambda: isinstance(1, UserId))\nt(lambda: UserId(1, 2))\nt(lambda: UserId[int])\n"
              "def sub():\n    class Admin(UserId):\n        pass\nt(sub)\nt(lambda: NewType(3, int))\n"
              "print(Annotated, Annotated[int, 'm'], Annotated[Annotated[int, 1], 2], Annotated[List[int], 'x', 3])\n"
              "print(Annotated[int, 1](4), type(Annotated[int, 1]), Annotated[int, 1] == Annotated[int, 1], "
              "isinstance(3, Annotated))\nT = TypeVar('T')\nprint(Annotated[List[T], 'x'][int])\n"
              "t(lambda: Annotated[int])\nt(lambda: Annotated())\nt(lambda: Annotated[int, 1][str])\n"
              "t(lambda: isinstance(1, Annotated[int, 1]))\n"
              "for f in (Self, Never, LiteralString, TypeAlias):\n    t(lambda: f)\n    t(lambda: f[int])\n"
              "    t(lambda: f())\n    t(lambda: isinstance(1, f))\n    t(lambda: List[f])\n"
              "@final\ndef g():\n    return 1\nprint(g())\nt(lambda: assert_never(3))\n"
              "class Node:\n    def clone(self) -> Self:\n        return self\nprint(type(Node().clone()).__name__)\n")
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("expression", [
    "P.__init__.__globals__", "P.__init__.__code__", "TD.__class__.__call__", "TD.__dict__", "TD.__mro__", "TD.__base__",
    "TD.__init_subclass__", "U.__dict__", "U.__call__.__self__", "U.__class__.__init__", "Annotated[int, 1].__metadata__",
    "Annotated[int, 1].__origin__", "Annotated.__class_getitem__", "typing.Protocol.__init_subclass__",
    "typing.TypedDict.__globals__", "typing.Protocol[T].__origin__", "typing.runtime_checkable.__globals__",
    "typing.NewType.__init__", "typing.Self.__class__.__init__",
])
def test_the_newer_forms_reach_no_more(expression):
    source = ("import typing\nfrom typing import Protocol, TypedDict, NewType, Annotated, TypeVar\nT = TypeVar('T')\n"
              "class P(Protocol):\n    def f(self): ...\nclass TD(TypedDict):\n    a: int\nU = NewType('U', int)\n"
              f"x = {expression}\n")
    assert located_error(source).endswith("is outside gradcli's language")


def test_get_origin_and_get_args_as_cpythons():
    source = ("import collections.abc\nfrom typing import List, Dict, Tuple, Callable, Optional, Union, Literal, ClassVar, "
              "Final, TypeVar, Generic, Annotated, Iterable, Any, Required, Protocol, Type, Sequence, NewType, get_origin, "
              "get_args, Deque\nT = TypeVar('T')\nclass Box(Generic[T]):\n    pass\nU = NewType('U', int)\n"
              "for tp in [List[int], List, Dict[str, int], Tuple[()], Tuple[int, ...], Callable[[int], str], "
              "Callable[..., str], Callable[[], None], Optional[int], Union[int, str], Literal['a', 1], ClassVar[int], "
              "Final[int], list[int], Box[int], Box, Generic, Generic[T], int | None, Annotated[int, 'm'], Annotated, "
              "Iterable[int], Any, int, T, None, Required[int], Protocol, Protocol[T], Type[int], Sequence[int], "
              "tuple[()], U, Deque[int], dict[str, list[int]]]:\n    print(repr(tp), '|', get_origin(tp), '|', "
              "get_args(tp))\nprint(get_origin(List[int]) is list, get_origin(Optional[int]) is Union, "
              "get_origin(Dict[str, int]) is dict, get_origin(Type[int]) is type, get_origin(Iterable[int]) is "
              "collections.abc.Iterable, get_origin(Literal[1]) is Literal, get_origin(Box[int]) is Box)\n"
              "def f(x: Optional[List[int]] = None) -> Dict[str, int]:\n    return {}\n"
              "for name, ann in f.__annotations__.items():\n    print(name, get_origin(ann), get_args(ann))\n")
    assert gradcli_output(source) == cpython_output(source)
