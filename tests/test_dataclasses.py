"""dataclasses: @dataclass on a script's class, field, fields, asdict, astuple, replace, is_dataclass and
FrozenInstanceError, compared with CPython 3.11 (a config passed to a model: the golden lang_06_dataclass_config)."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

IMPORTS = "import dataclasses\nfrom dataclasses import dataclass, field, fields, asdict, astuple, replace\n"
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
CONFIG = ("@dataclass\nclass GPTConfig:\n    block_size: int = 1024\n    vocab_size: int = 50304\n    n_layer: int = 12\n"
          "    dropout: float = 0.0\n    bias: bool = True\n    name: str = 'gpt'\n")

SNIPPETS = [
    CONFIG + "c = GPTConfig(n_layer=4)\nprint(c, GPTConfig(**dict(block_size=8, bias=False)), GPTConfig(1, 2))",
    CONFIG + "c = GPTConfig()\nprint(c == GPTConfig(), c == GPTConfig(n_layer=2), c != 3, c == 3, c.n_layer, c.name)",
    CONFIG + TRY + "t(lambda: hash(GPTConfig()))\nt(lambda: GPTConfig(1, 2, 3, 4, 5, 6, 7))\n"
    "t(lambda: GPTConfig(foo=1))\nt(lambda: GPTConfig(1, block_size=2))",
    CONFIG + "print(GPTConfig.__doc__)\nprint(GPTConfig.__init__.__annotations__)\nprint(GPTConfig.__init__.__name__, "
    "GPTConfig.__init__.__qualname__, GPTConfig.__repr__.__qualname__)",
    "@dataclass\nclass A:\n    x: int\n    y: str = 'a'\nprint(A(1), A(x=2, y='b'), A.__annotations__, A.y)\n"
    "a = A(3)\na.x = 5\na.z = 1\nprint(a, a.z)",
    TRY + "@dataclass(frozen=True, order=True)\nclass P:\n    x: int\n    y: int = 0\np = P(1)\n"
    "def assign():\n    p.x = 5\ndef delete():\n    del p.x\ndef other():\n    p.w = 1\n"
    "t(assign)\nt(delete)\nt(other)\nt(lambda: setattr(p, 'x', 3))\n"
    "print(p < P(2), p <= P(1, 0), p > P(0, 5), p >= P(1, 1), sorted([P(3), P(1, 2), P(1, 1)]))\n"
    "print(hash(p) == hash(P(1, 0)), {p: 1}[P(1)])\nt(lambda: P())\nt(lambda: p < 3)",
    "@dataclass\nclass L:\n    items: list = field(default_factory=list)\n    n: int = field(default=3, repr=False)\n"
    "    m: int = field(default=4, init=False)\n    k: dict = field(default_factory=dict, compare=False)\n"
    "l = L()\nl.items.append(1)\nprint(l, L(), L([5], 7), L() == L(k={1: 2}), L.n)",
    "@dataclass\nclass C:\n    a: int\n    b: 'List[int]' = field(default_factory=lambda: [1, 2])\n"
    "    def __post_init__(self):\n        print('post', self.a)\n        self.c = self.a * 2\nx = C(3)\nprint(x, x.c)",
    "@dataclass\nclass C:\n    a: int\n    b: float = 2.5\nx = C(1)\n"
    "print([(f.name, f.type, f.init, f.repr, f.compare, f.hash, f.kw_only) for f in fields(x)], fields(C)[1].default)\n"
    "print(fields(C)[0].default is dataclasses.MISSING, fields(C)[0].default_factory is dataclasses.MISSING)",
    "@dataclass\nclass In:\n    v: int = 1\n    w: list = field(default_factory=lambda: [1, (2, 3)])\n"
    "@dataclass\nclass Out:\n    i: In\n    d: dict\n    t: tuple = ()\no = Out(In(), {'k': In(2)}, (In(3), 4))\n"
    "print(asdict(o))\nprint(astuple(o))\nprint(replace(o, t=(1,)), replace(In(), v=5))",
    "@dataclass\nclass Base:\n    a: int\n    b: int = 2\n@dataclass\nclass Derived(Base):\n    c: int = 3\n    a: int = 9\n"
    "print(Derived(), Derived(1, 2, 3), [f.name for f in fields(Derived)])",
    "@dataclass\nclass A:\n    x: int = 1\nclass B(A):\n    pass\n@dataclass\nclass C(B):\n    y: int = 2\n"
    "print(B(), C(), dataclasses.is_dataclass(B), dataclasses.is_dataclass(C()), dataclasses.is_dataclass(3))",
    "class Outer:\n    @dataclass\n    class In:\n        v: int = 1\ndef make():\n    @dataclass\n    class Loc:\n"
    "        v: int = 1\n    return Loc()\nprint(Outer.In(), make())",
    "@dataclass\nclass Node:\n    val: int\n    next: 'Node' = None\nn = Node(1)\nn.next = n\nprint(n, Node(2, Node(3)))",
    "@dataclass(eq=False)\nclass A:\n    x: int = 1\nprint(A() == A(), hash(A()) is not None)\n"
    "@dataclass(repr=False)\nclass B:\n    x: int = 1\nprint(repr(B())[:10])\n"
    "@dataclass(init=False)\nclass D:\n    x: int = 1\nprint(D())\n"
    "@dataclass\nclass E:\n    x: int = 1\n    def __repr__(self):\n        return 'mine'\n"
    "    def __eq__(self, other):\n        return True\nprint(E(), E() == 3)\n"
    "@dataclass\nclass F:\n    x: int = 1\n    y = 5\nprint(F(), F.y)",
    "@dataclass()\nclass A:\n    s: set = field(default_factory=set)\n    t: tuple = ()\n    f: frozenset = frozenset()\n"
    "print(A(), A.__doc__)",
    TRY + "def bad1():\n    @dataclass\n    class A:\n        x: int = 1\n        y: int\nt(bad1)\n"
    "def bad2():\n    @dataclass\n    class A:\n        x: list = []\nt(bad2)\n"
    "def bad3():\n    @dataclass\n    class A:\n        x: dict = {}\nt(bad3)\n"
    "def bad4():\n    @dataclass\n    class A:\n        x: int = field(default=1, default_factory=int)\nt(bad4)\n"
    "def bad5():\n    @dataclass(frozen=True)\n    class A:\n        x: int = 1\n    @dataclass\n    class B(A):\n"
    "        y: int = 2\nt(bad5)\n"
    "def bad6():\n    @dataclass\n    class A:\n        x: int = 1\n    @dataclass(frozen=True)\n    class B(A):\n"
    "        y: int = 2\nt(bad6)\n"
    "def bad7():\n    @dataclass(order=True, eq=False)\n    class A:\n        x: int = 1\nt(bad7)\n"
    "def bad8():\n    @dataclass\n    class A:\n        x = field(default=1)\nt(bad8)\n"
    "def bad9():\n    @dataclass\n    class U:\n        pass\n    @dataclass\n    class A:\n        u: U = U()\nt(bad9)\n"
    "def bad10():\n    @dataclass(order=True)\n    class A:\n        x: int = 1\n        def __lt__(self, o):\n"
    "            return True\nt(bad10)",
    TRY + "@dataclass\nclass A:\n    x: int = 1\n    y: int = field(default=2, init=False)\n"
    "t(lambda: asdict(3))\nt(lambda: astuple(A))\nt(lambda: fields(3))\nt(lambda: replace(3))\n"
    "t(lambda: replace(A(), z=1))\nt(lambda: replace(A(), y=1))\nt(lambda: dataclass(3))\nt(lambda: dataclass(frozen=1)(3))",
    TRY + "@dataclass(kw_only=True)\nclass A:\n    x: int\n    y: int = 1\n"
    "print(A(x=2), A.__doc__, A.__init__.__annotations__)\nt(lambda: A(1))\nt(lambda: A())\n"
    "@dataclass\nclass B:\n    a: int = 0\n    _: dataclasses.KW_ONLY\n    b: int\n    c: int = field(default=3, kw_only=False)\n"
    "print(B(b=1), B(5, 6, b=1), B.__doc__, [f.kw_only for f in fields(B)], [f.name for f in fields(B)])\n"
    "@dataclass\nclass C(B):\n    d: int = field(kw_only=True, default=9)\n    e: list = field(kw_only=True, default_factory=list)\n"
    "print(C(1, 2, b=3), C.__doc__)\n"
    "def bad():\n    @dataclass\n    class D:\n        _: dataclasses.KW_ONLY\n        y: dataclasses.KW_ONLY\nt(bad)\n"
    "print(field(kw_only=True).kw_only)\nt(lambda: C(1, 2, 3))\nt(lambda: B(1, 2, b=3, z=1))",
    TRY + "@dataclass(frozen=True)\nclass A:\n    x: int = 1\n    __hash__ = None\nt(lambda: hash(A()))\n"
    "@dataclass(frozen=True)\nclass B:\n    x: int = 1\n    def __eq__(self, o):\n        return True\n"
    "t(lambda: hash(B()) == hash((1,)))\n@dataclass\nclass C:\n    x: int = 1\n    def __hash__(self):\n"
    "        return 7\nt(lambda: hash(C()))\n@dataclass(eq=False)\nclass D:\n    x: int = 1\n"
    "t(lambda: hash(D()) is not None)\n@dataclass\nclass E:\n    x: int = 1\n    def __eq__(self, o):\n"
    "        return True\nt(lambda: hash(E()))\n@dataclass(frozen=True)\nclass F:\n    x: int = 1\n"
    "    y: list = None\nt(lambda: hash(F(1, [1])))",
    "class Base:\n    x = 5\n@dataclass\nclass A(Base):\n    x: int\nprint(A())\n@dataclass\nclass B:\n    a: int = 1\n"
    "    b: int = 2\n@dataclass\nclass C(B):\n    b: int\nprint(C())",
    CONFIG + "print(list(GPTConfig.__dataclass_fields__), GPTConfig().__dataclass_fields__['bias'].default)\n"
    "print({k: getattr(GPTConfig(), k) for k in GPTConfig.__dataclass_fields__})",
    TRY + "try:\n    @dataclass(frozen=True)\n    class P:\n        x: int = 1\n    P().x = 2\n"
    "except dataclasses.FrozenInstanceError as e:\n    print('caught', e)\n"
    "try:\n    P().x = 2\nexcept AttributeError as e:\n    print('caught', type(e).__name__, e)\n"
    "print(issubclass(dataclasses.FrozenInstanceError, AttributeError))",
    # asdict copies any field value as copy.deepcopy does: a script's object is copied, not refused
    "from dataclasses import dataclass, asdict, astuple\nclass B:\n    def __init__(self):\n        self.v = [1]\n"
    "@dataclass\nclass A:\n    x: object = None\nb = B()\nd = asdict(A(x=b))\n"
    "print(type(d['x']).__name__, d['x'] is b, d['x'].v == b.v, d['x'].v is b.v, astuple(A(x=b))[0] is b)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_dataclasses(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("@dataclass(frozen=True)\nclass P:\n    x: int = 1\nP().x = 2",
     "6:1: dataclasses.FrozenInstanceError: cannot assign to field 'x'"),
    ("@dataclass\nclass A:\n    x: list = []", "3:2: ValueError: mutable default <class 'list'> for field x is not "
                                               "allowed: use default_factory"),
    ("@dataclass\nclass A:\n    x: int = 1\n    y: int", "3:2: TypeError: non-default argument 'y' follows default "
                                                         "argument"),
    ("@dataclass\nclass A:\n    x: int\nA()", "6:1: TypeError: A.__init__() missing 1 required positional argument: 'x'"),
    ("@dataclass(slots=True)\nclass A:\n    x: int", "3:2: NotImplementedError: gradcli does not implement "
                                                    "dataclass(slots=True)"),
    ("from dataclasses import make_dataclass", "3:1: NotImplementedError: gradcli does not implement "
                                               "dataclasses.make_dataclass"),
    ("dataclasses.InitVar", "3:1: NotImplementedError: gradcli does not implement dataclasses.InitVar"),
    ("dataclasses.sys", "3:1: AttributeError: module 'dataclasses' attribute 'sys' is outside gradcli's language"),
    ("@dataclass\nclass A:\n    x: int = 1\nasdict(A(x=torch.ones(1, requires_grad=True) * 2))",
     "6:1: RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
     "the moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm "
     "usage, see https://github.com/pytorch/pytorch/pull/103001"),
    ("@dataclass\nclass A:\n    x: int = 1\nasdict(A(x=iter([1])))",
     "6:1: NotImplementedError: gradcli does not implement copy.deepcopy of a 'list_iterator' object"),
])
def test_errors(source, message):
    assert located_error("import torch\n" + IMPORTS.replace("import dataclasses\n", "import dataclasses; ")
                         + source) == message


ESCAPES = [
    "dataclasses.__dict__", "dataclasses.sys", "dataclasses.__loader__", "GPTConfig.__dataclass_params__",
    "GPTConfig().__dataclass_params__", "GPTConfig.__init__.__globals__", "GPTConfig.__init__.__code__",
    "GPTConfig.__init__.__closure__", "GPTConfig().__weakref__", "GPTConfig().__class__.__weakref__", "fields(GPTConfig)[0].__class__.__init__",
    "fields(GPTConfig)[0].__slots__", "dataclasses.MISSING.__class__.__init__", "dataclasses.MISSING.__reduce__",
    "dataclass.__globals__", "dataclass(frozen=True).__closure__", "field.__kwdefaults__", "fields.__code__",
    "dataclasses.FrozenInstanceError.__subclasses__", "dataclasses.FrozenInstanceError.__mro__",
    "dataclasses.Field.__init__", "asdict.__globals__",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_nothing_behind_them_is_reachable(expression):
    assert located_error(IMPORTS + CONFIG + f"x = {expression}").endswith("is outside gradcli's language")


def test_asdict_copies_tensors_as_pytorchs_deepcopy():
    """Checked against PyTorch 2.13: a leaf's values in new memory, its requires_grad and .grad, a Parameter."""
    source = ("import torch\n" + IMPORTS + "@dataclass\nclass State:\n    w: torch.Tensor\n    b: torch.Tensor = None\n"
              "    items: list = field(default_factory=list)\n    dt: torch.dtype = torch.float64\n"
              "w = torch.ones(2, requires_grad=True)\nw.grad = torch.full((2,), 0.5)\n"
              "s = State(w, torch.zeros(3, dtype=torch.int64), [torch.arange(3.)], torch.float16)\nd = asdict(s)\n"
              "print(d)\nprint(d['w'] is w, d['w'].grad, d['w'].is_leaf, d['w'].requires_grad, d['b'].dtype)\n"
              "d['w'].data.add_(1)\nprint(w, d['w'])\nprint(astuple(State(torch.nn.Parameter(torch.zeros(2)))))\n")
    assert gradcli_output(source) == (
        "{'w': tensor([1., 1.], requires_grad=True), 'b': tensor([0, 0, 0]), 'items': [tensor([0., 1., 2.])], "
        "'dt': torch.float16}\nFalse tensor([0.5000, 0.5000]) True True torch.int64\n"
        "tensor([1., 1.], requires_grad=True) tensor([2., 2.], requires_grad=True)\n"
        "(Parameter containing:\ntensor([0., 0.], requires_grad=True), None, [], torch.float64)\n")


def test_a_library_class_is_never_made_a_dataclass():
    """dataclass(nn.Linear) would rewrite gradcli's own class for the rest of the process."""
    source = ("import torch\nfrom torch import nn\n" + IMPORTS + "try:\n    dataclass(nn.Linear)\nexcept TypeError as e:\n"
              "    print(e)\ntry:\n    dataclass(frozen=True)(nn.Module)\nexcept TypeError as e:\n    print(e)\n"
              "print(nn.Linear(2, 3), nn.Linear(2, 3) == nn.Linear(2, 3))\n")
    assert gradcli_output(source) == (
        "@dataclass on <class 'torch.nn.modules.linear.Linear'> is outside gradcli's language: it takes a class the "
        "script defines\n@dataclass on <class 'torch.nn.modules.module.Module'> is outside gradcli's language: it "
        "takes a class the script defines\nLinear(in_features=2, out_features=3, bias=True) False\n")


def test_a_frozen_class_setattr_is_guarded():
    """@dataclass(frozen=True) adds its own __setattr__, which a script may read and call (CPython's error for a
    field), guarded as every setter is; a class body defining __setattr__ is dataclasses' TypeError."""
    message = located_error(IMPORTS + "@dataclass(frozen=True)\nclass P:\n    x: int = 1\nP.__setattr__(P(), 'x', 2)")
    assert message == "6:1: dataclasses.FrozenInstanceError: cannot assign to field 'x'"
    message = located_error(IMPORTS + "@dataclass(frozen=True)\nclass P:\n    x: int = 1\nP().__setattr__('__len__', 2)")
    assert message.endswith("AttributeError: 'P' object attribute '__len__' is outside gradcli's language")
    message = located_error(IMPORTS + "@dataclass(frozen=True)\nclass P:\n    x: int = 1\n"
                            "    def __setattr__(self, n, v):\n        pass")
    assert message == "3:2: TypeError: Cannot overwrite attribute __setattr__ in class P"
    assert gradcli_output(IMPORTS + "@dataclass\nclass A:\n    x: int = 1\n    def __post_init__(self):\n"
                          "        print('ok')\nA().__post_init__()\n") == "ok\nok\n"


def test_dataclasses_is_loaded_only_by_scripts_that_use_it():
    import subprocess
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('class A:\\n"
            "    x: int = 1\\n')\nprint('gradcli.language.pydataclasses' in sys.modules, 'dataclasses' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False False\n"


def test_help_describes_the_module_and_its_functions():
    out = gradcli_output(IMPORTS + "help(dataclass)\nhelp(dataclasses)\n")
    assert out.startswith("dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, frozen=False)\n")
    assert "module dataclasses\n" in out and "Names: Field, FrozenInstanceError, KW_ONLY, MISSING, asdict," in out


def test_string_annotations_name_classvar_and_kw_only_as_cpython_reads_them():
    """Under `from __future__ import annotations` each annotation is a string: ClassVar and KW_ONLY are found
    by looking its first name up in the script's globals, as CPython's dataclasses does (in sys.modules: so
    the expected text is CPython 3.11's output for this script run as a file, not by the snippet server)."""
    source = ("from __future__ import annotations\nimport dataclasses\nimport typing\n"
              "from dataclasses import dataclass, fields, KW_ONLY\nfrom typing import ClassVar\n"
              "@dataclass\nclass A:\n    x: int = 1\n    y: ClassVar[int] = 5\n    z: typing.ClassVar[int] = 6\n"
              "    _: KW_ONLY\n    w: int = 2\n@dataclass\nclass B:\n    _: dataclasses.KW_ONLY\n    v: 'int' = 3\n"
              "@dataclass\nclass C:\n    k: ClassVar = 1\n    m: notimported.ClassVar = 2\n"
              "print(A(), [f.name for f in fields(A)], [f.type for f in fields(A)], A.__doc__, B(v=1), B.__doc__)\n"
              "print([f.name for f in fields(C)])\n")
    assert gradcli_output(source) == ("A(x=1, w=2) ['x', 'w'] ['int', 'int'] A(x: 'int' = 1, *, w: 'int' = 2) B(v=1) "
                                      "B(*, v: \"'int'\" = 3)\n['m']\n")
