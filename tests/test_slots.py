"""`__slots__` in a script's class: attributes kept to the slots, no `__dict__`, member descriptors on the
class, inheritance, copies, compared with CPython 3.11."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
DENSE = "class Dense:\n    __slots__ = ('w', 'b')\n    def __init__(self, w):\n        self.w = w\n"

SNIPPETS = [
    DENSE + TRY + "d = Dense(1)\nprint(d.w, Dense.w, Dense.__slots__, d.__slots__)\n"
    "def set_x():\n    d.x = 1\nt(lambda: d.b)\nt(set_x)\nt(lambda: d.x)\nt(lambda: setattr(d, 'y', 2))\n"
    "t(lambda: getattr(d, 'b', 'none'))\nprint(hasattr(d, 'w'), hasattr(d, 'b'))\ndel d.w\nt(lambda: d.w)\n"
    "def delete():\n    del d.w\nt(delete)",
    DENSE + TRY + "class Sub(Dense):\n    pass\ns = Sub(2)\ns.x = 3\nprint(s.x, s.w)\n"
    "class Sub2(Dense):\n    __slots__ = ('c',)\ns2 = Sub2(3)\ns2.c = 4\nprint(s2.c, s2.w, Sub2.__slots__)\n"
    "def z():\n    s2.z = 1\nt(z)\nclass Sub3(Dense):\n    __slots__ = ()\nt(lambda: setattr(Sub3(1), 'q', 1))",
    TRY + "def bad():\n    class Bad:\n        __slots__ = ('w',)\n        w = 3\nt(bad)\n"
    "def bad2():\n    class Bad2:\n        __slots__ = 3\nt(bad2)\n"
    "def bad3():\n    class Bad3:\n        __slots__ = ('a b',)\nt(bad3)\n"
    "def bad4():\n    class Bad4:\n        __slots__ = ('__dict__', '__dict__')\nt(bad4)\n"
    "class P:\n    __slots__ = 'one'\np = P()\np.one = 1\nprint(p.one)\n"
    "class Q:\n    __slots__ = ('__x', '__dict__')\n    def __init__(self):\n        self.__x = 5\n"
    "    def get(self):\n        return self.__x\nq = Q()\nq.other = 2\nprint(q.get(), q.other)\n"
    "class D:\n    __slots__ = {'w': 'the weight'}\nprint(D.__slots__, D.w)",
    "import copy\n" + DENSE + "class S(Dense):\n    def __init__(self):\n        super().__init__([1])\n        self.x = [2]\n"
    "d = Dense([1])\nc, e = copy.copy(d), copy.deepcopy(d)\nprint(c.w is d.w, e.w == d.w, e.w is d.w, hasattr(e, 'b'))\n"
    "s = copy.deepcopy(S())\nprint(s.w, s.x, type(s).__name__)",
    "from dataclasses import dataclass\n@dataclass\nclass R:\n    __slots__ = ('a', 'b')\n    a: int\n    b: int\n"
    "r = R(1, 2)\nprint(r, r == R(1, 2))\ntry:\n    r.c = 3\nexcept AttributeError as e:\n    print(e)",
    "class Point:\n    __slots__ = ('x', 'y')\n    __match_args__ = ('x', 'y')\n    def __init__(self, x, y):\n"
    "        self.x, self.y = x, y\nmatch Point(1, 2):\n    case Point(1, y):\n        print('y is', y)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_slots(snippet):
    assert gradcli_output(snippet + "\n") == cpython_output(snippet + "\n")


def test_a_module_with_slots():
    """Checked against PyTorch 2.13: nn.Module has a __dict__, so a slot is one attribute more."""
    source = ("import torch\nfrom torch import nn\nclass M(nn.Module):\n    __slots__ = ('tag',)\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(2, 1)\n        self.tag = 'm'\nm = M()\n"
              "print(m.tag, m)\nprint(M.tag)\n")
    assert gradcli_output(source) == ("m M(\n  (fc): Linear(in_features=2, out_features=1, bias=True)\n)\n"
                                      "<member 'tag' of 'M' objects>\n")


@pytest.mark.parametrize("source, message", [
    (DENSE + "d = Dense(1)\nd.x = 2", "6:1: AttributeError: 'Dense' object has no attribute 'x'"),
    (DENSE + "Dense(1).b", "5:1: AttributeError: 'Dense' object has no attribute 'b'"),
    ("class A:\n    __slots__ = ('w',)\n    w = 1", "1:1: ValueError: 'w' in __slots__ conflicts with class variable"),
    ("class A:\n    __slots__ = ('__init__',)", "1:1: TypeError: a slot named __init__ is outside gradcli's language"),
    ("def g():\n    yield 'a'\nclass A:\n    __slots__ = g()", "3:1: TypeError: __slots__ as a 'generator' is outside "
     "gradcli's language: it takes a string, a tuple, a list or a dict of names"),
])
def test_errors(source, message):
    assert located_error(source) == message


def test_a_library_class_slots_are_not_shown():
    """gradcli's own classes' __slots__ name their internals: a script's class that has none reads as
    CPython's `object` subclass does."""
    assert located_error("import torch\ntorch.nn.Linear.__slots__").endswith("is outside gradcli's language") or \
        located_error("import torch\ntorch.nn.Linear.__slots__").endswith("has no attribute '__slots__'")
    assert located_error("class A:\n    pass\nA.__slots__") == \
        "3:1: AttributeError: type object 'A' has no attribute '__slots__'"


def test_a_slotted_object_saves_and_loads():
    """Checked against PyTorch 2.13: torch.save/torch.load(weights_only=False) keep the slots' values, and the
    meta map_location reaches the tensors a slot holds."""
    source = ("import torch\nclass Rec:\n    __slots__ = ('w', 'n')\n    def __init__(self):\n        self.w = torch.ones(2)\n"
              "        self.n = 3\ntorch.save([Rec()], 'a.pt')\nr = torch.load('a.pt', weights_only=False)[0]\n"
              "print(r.w, r.n)\nprint(torch.load('a.pt', weights_only=False, map_location='meta')[0].w)\n")
    assert gradcli_output(source) == "tensor([1., 1.]) 3\ntensor(..., device='meta', size=(2,))\n"
