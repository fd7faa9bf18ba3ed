"""abc: ABC, ABCMeta as `metaclass=`, abstractmethod (abstract properties, static and class methods too), compared
with CPython 3.11; nn.Module mixed with ABC as PyTorch mixes them."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

IMPORTS = "import abc\nfrom abc import ABC, ABCMeta, abstractmethod\n"
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
LAYER = ("class Layer(ABC):\n    @abstractmethod\n    def __call__(self, x): ...\n    @property\n    @abstractmethod\n"
         "    def size(self): ...\n")

SNIPPETS = [
    LAYER + TRY + "t(lambda: Layer())\nclass Impl(Layer):\n    def __call__(self, x):\n        return x * 2\n"
    "t(lambda: Impl())\nclass Full(Impl):\n    @property\n    def size(self):\n        return 3\n"
    "print(Full()(2), Full().size, sorted(Layer.__abstractmethods__), Full.__abstractmethods__)\n"
    "print(ABC, ABCMeta, type(Layer), type(Full) is ABCMeta, type(ABC), isinstance(Full(), Layer), issubclass(Full, ABC))",
    TRY + "class One(ABC):\n    @abstractmethod\n    def f(self):\n        pass\nt(lambda: One())\nt(lambda: type(ABC()).__name__)\n"
    "class M(metaclass=ABCMeta):\n    @abstractmethod\n    def g(self):\n        pass\n    @staticmethod\n"
    "    @abstractmethod\n    def s():\n        pass\n    @classmethod\n    @abstractmethod\n    def c(cls):\n        pass\n"
    "t(lambda: M())\nprint(getattr(M.g, '__isabstractmethod__', None), M.g.__isabstractmethod__, type(M))\n"
    "class N(M):\n    def g(self):\n        return 'g'\n    @staticmethod\n    def s():\n        return 's'\n"
    "    @classmethod\n    def c(cls):\n        return cls.__name__\nprint(N().g(), N.s(), N.c())",
    TRY + "class Full(ABC):\n    @abstractmethod\n    def f(self): ...\n    def g(self):\n        return 1\n"
    "class X(Full):\n    f = None\nprint(type(X()).__name__, getattr(Full.g, '__isabstractmethod__', None))\n"
    "t(lambda: abstractmethod(property(lambda self: 1)))\nt(lambda: abstractmethod(3))\n"
    "class Plain:\n    pass\nt(lambda: Plain.__abstractmethods__)\nclass M2(metaclass=type):\n    pass\nprint(M2)",
    TRY + "from dataclasses import dataclass\n@dataclass\nclass D(ABC):\n    x: int = 1\n    @abstractmethod\n"
    "    def run(self): ...\nt(lambda: D())\nclass E(D):\n    def run(self):\n        return self.x\nprint(E(), E().run())\n"
    "class F(Exception, ABC):\n    pass\nprint(repr(F('x')))\n"
    "class P(ABC):\n    @abstractmethod\n    def __len__(self): ...\nclass Q(P):\n    pass\nt(lambda: len(Q()))\n"
    "class R(Q):\n    def __len__(self):\n        return 2\nprint(len(R()))",
]


SNIPPETS.append(
    TRY + "class Reg(ABC):\n    pass\nclass Other:\n    pass\nclass Sub(Reg):\n    pass\n"
    "print(Reg.register(Other) is Other, isinstance(Other(), Reg), issubclass(Other, Reg), isinstance(Other(), (int, Reg)))\n"
    "print(isinstance(3, Reg), issubclass(int, Reg))\n@Sub.register\nclass Via:\n    pass\n"
    "print(isinstance(Via(), Sub), isinstance(Via(), Reg), issubclass(Via, Reg), isinstance(Other(), Sub))\n"
    "t(lambda: Reg.register(3))\nt(lambda: Sub.register(Reg))\nprint(Reg.register(Sub) is Sub, Reg.register(Reg) is Reg)\n"
    "class M(metaclass=ABCMeta):\n    pass\nM.register(int)\nprint(isinstance(3, M), issubclass(bool, M), isinstance(3.0, M))\n"
    "match Other():\n    case Reg():\n        print('matched virtual')\nclass Child(Other):\n    pass\n"
    "print(isinstance(Child(), Reg), repr(Reg.register).startswith('<bound method ABCMeta.register of'))")


# registrations that would make a cycle through earlier ones are refused, as ABCMeta refuses them (the registry
# has no cycle for isinstance to walk forever)
SNIPPETS.append(
    TRY + "class A(ABC):\n    pass\nclass B(ABC):\n    pass\nclass C(ABC):\n    pass\nA.register(B)\nB.register(C)\n"
    "t(lambda: B.register(A))\nt(lambda: C.register(A))\nprint(A.register(C) is C, issubclass(C, A), isinstance(3, A))")


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_abc(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_modules_mix_with_abc_as_in_pytorch():
    """Checked against PyTorch 2.13: nn.Module with ABC either side, or with metaclass=ABCMeta."""
    source = ("import torch\nfrom torch import nn\n" + IMPORTS + TRY + "class Base(ABC, nn.Module):\n    @abstractmethod\n"
              "    def forward(self, x): ...\nt(lambda: Base())\nclass B2(nn.Module, metaclass=ABCMeta):\n"
              "    @abstractmethod\n    def forward(self, x): ...\n    @abstractmethod\n    def extra(self): ...\n"
              "t(lambda: B2())\nclass Net(B2):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = nn.Linear(2, 1)\n    def forward(self, x):\n        return self.fc(x)\n"
              "    def extra(self):\n        return 'e'\nn = Net()\nprint(type(B2), isinstance(n, nn.Module), n.extra(), n)\n")
    assert gradcli_output(source) == (
        "TypeError Can't instantiate abstract class Base with abstract method forward\n"
        "TypeError Can't instantiate abstract class B2 with abstract methods extra, forward\n"
        "<class 'abc.ABCMeta'> True e Net(\n  (fc): Linear(in_features=2, out_features=1, bias=True)\n)\n")


@pytest.mark.parametrize("source, message", [
    (LAYER + "\nx = Layer()", "10:5: TypeError: Can't instantiate abstract class Layer with abstract methods __call__, "
                              "size"),
    ("class A(metaclass=len):\n    pass", "3:1: TypeError: metaclass=<built-in function len> is outside gradcli's "
                                         "language: a script's class may name abc.ABCMeta or type"),
    ("abstractmethod(print)", "3:1: TypeError: abc.abstractmethod of a 'builtin_function_or_method' object is outside "
                              "gradcli's language: it takes a function the script defines"),
    ("ABC.register(int)", "3:1: AttributeError: type object 'ABC' attribute 'register' is outside gradcli's "
                          "language: a script registers subclasses of its own classes only"),
    ("class R(ABC):\n    pass\nR.register(3)", "5:1: TypeError: Can only register classes"),
    ("from abc import abstractproperty", "3:1: NotImplementedError: gradcli does not implement abc.abstractproperty"),
    ("abc.get_cache_token", "3:1: NotImplementedError: gradcli does not implement abc.get_cache_token"),
    ("abc._abc_init", "3:1: AttributeError: module 'abc' attribute '_abc_init' is outside gradcli's language"),
])
def test_errors(source, message):
    assert located_error(IMPORTS + source) == message


ESCAPES = [
    "abc.__dict__", "abc.__loader__", "ABC.__dict__", "ABC.__subclasses__", "ABC.__mro__", "ABC.__init_subclass__.__func__",
    "abstractmethod.__globals__", "Layer.register.cls", "Layer.register.__self__", "Layer.register.__call__",
    "Layer._abc_impl", "abstractmethod.__code__",
    "Layer.__call__.__globals__", "Layer.__abstractmethods__.__class__.__init__.__self__", "ABC.__slots__",
    "ABCMeta.__call__",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_nothing_behind_them_is_reachable(expression):
    message = located_error(IMPORTS + LAYER + f"x = {expression}")
    assert message.endswith("is outside gradcli's language") or message.endswith(
        f"has no attribute '{expression.rpartition('.')[2]}'")       # (what gradcli's objects lack)


@pytest.mark.parametrize("expression", ["ABCMeta.__dict__", "ABCMeta.__subclasscheck__", "ABCMeta.register", "ABCMeta.__instancecheck__",
                                        "ABCMeta._abc_registry"])
def test_abcmeta_stands_for_a_class_without_attributes(expression):
    assert located_error(IMPORTS + f"x = {expression}") == (
        f"3:5: AttributeError: type object 'ABCMeta' has no attribute '{expression.partition('.')[2]}'")


def test_abstract_methods_cannot_be_set_on_library_classes():
    """abstractmethod takes the script's functions only: a library class is the process's, not the script's."""
    assert located_error("import torch\n" + IMPORTS + "abstractmethod(torch.nn.Linear)").endswith(
        "is outside gradcli's language: it takes a function the script defines")


def test_abc_is_loaded_only_by_scripts_that_use_it():
    import subprocess
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('class A:\\n"
            "    x: int = 1\\n')\nprint('gradcli.language.pyabc' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
