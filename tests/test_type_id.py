"""The builtins type and id: type(x) is the class as the script names it (int, list, torch.Tensor, a
namedtuple), printed and compared as in CPython and PyTorch, with only __name__ and __qualname__ readable;
id(x) is the address gradcli prints for x."""

import io

import pytest

from conftest import cpython_output, gradcli_output, located_error, normalize
from gradcli.session import Session

SNIPPETS = [
    "print(type(3), type(1.5), type(True), type('s'), type(None), type(range(2)))",
    "print(type([]), type(()), type({}), type({1}), type(frozenset()))",
    "print(type(3) is int, type(3) == int, type([]) is list, type({}) is dict, type(()) is tuple, type(True) is int)",
    "print(type({1}) is set, type(frozenset()) is frozenset, type('') is str, type(2.0) is float)",
    "print(type(int), type(list), type(type), type(int) is type, type(type(3)) is type)",
    "print(type(len), type(print), type(sorted), type(lambda: 0))",
    "def f():\n    pass\nprint(type(f), type(f) is type(lambda: 1), type(f).__name__)",
    "g = (i for i in range(2))\nprint(type(g), isinstance(g, type(g)), type({}.keys()), type(iter([])))",
    "import itertools, functools\nprint(type(itertools.chain([1])), type(functools.partial(max, 1)))",
    "print(int.__name__, list.__name__, type([]).__qualname__, type(3).__name__, dict.__qualname__)",
    "print(type(3)(4.5), type([])('ab'), type('')(12), type(())([1]))",
    "try:\n    1 / 0\nexcept Exception as e:\n    print(type(e), type(e).__name__, type(e) is ZeroDivisionError)",
    "try:\n    {}['k']\nexcept LookupError as e:\n    print(type(e) is KeyError, type(e).__name__)",
    "import math\nprint(type(math), type(math).__name__)",
    "print([type(v).__name__ for v in (1, 'a', [], None, 2.5)])",
    "print(type(3) in (int, float), {type(1): 'int'}[int])",
    "x = [1]\ny = x\nprint(id(x) == id(y), id(x) == id([1]), type(id(x)), id(None) == id(None), id(3) == id(3))",
    "print(type, id, type.__name__)",
    # obj.__class__ is type(obj)
    "print((3).__class__, 'a'.__class__, [].__class__ is list, {}.__class__ is type({}), (3).__class__.__name__)",
    "class A:\n    def __repr__(self):\n        return self.__class__.__name__ + '()'\nclass B(A):\n"
    "    def copy(self):\n        return self.__class__()\n"
    "print(A(), B().copy(), B().__class__ is B, B.__class__, isinstance(B(), A().__class__))",
    "print(getattr(1, '__class__'), hasattr(None, '__class__'), '{0.__class__.__name__}'.format(2.5), f'{len.__class__}')",
    "def f():\n    pass\nprint(f.__class__, (i for i in ()).__class__, int.__class__, type.__class__, None.__class__())",
    "import collections\nprint(collections.Counter('ab').__class__, collections.deque().__class__.__name__)",
    # a class the script holds is an instance of type (fastai's `if isinstance(cb, type): cb = cb()`), a function not
    "import collections, functools, itertools\nclasses = [list, dict, int, type, object, collections.Counter, "
    "collections.deque, functools.partial, itertools.chain, type(len), type(lambda: 0), Exception, KeyError]\n"
    "values = [max, len, print, sorted, functools.reduce, (lambda: 0), 3, [], None]\n"
    "print([isinstance(c, type) for c in classes], [isinstance(v, type) for v in values])\n"
    "print([isinstance(c, object) for c in classes + values], isinstance(list, (int, type)), isinstance(max, (int, type)))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = snippet + "\n"
    assert normalize(gradcli_output(source)) == normalize(cpython_output(source))


def test_torch_classes_as_pytorch_prints_them():
    source = ("import torch\n"
              "t = torch.ones(2, requires_grad=True)\n"
              "y = (t * 2).sum()\n"
              "print(type(t), type(t) is torch.Tensor, type(t) == torch.Tensor, type(t).__name__)\n"
              "print(type(t.shape), type(t.shape) is torch.Size, type(t.dtype), type(torch.Generator()))\n"
              "print(type(y.grad_fn), type(y.grad_fn).__name__, type(y.grad_fn) is type(y.grad_fn))\n"
              "print(type(torch), type(torch.Tensor), torch.Tensor.__name__, torch.Size.__qualname__)\n"
              "print(isinstance(t, type(t)), type(t.max(0)), type(torch.ones), type(torch.nn.functional.relu))\n")
    assert gradcli_output(source) == (
        "<class 'torch.Tensor'> True True Tensor\n"
        "<class 'torch.Size'> True <class 'torch.dtype'> <class 'torch._C.Generator'>\n"
        "<class 'SumBackward0'> SumBackward0 True\n"
        "<class 'module'> <class 'torch._C._TensorMeta'> Tensor Size\n"
        "True <class 'torch.return_types.max'> <class 'builtin_function_or_method'> <class 'function'>\n")


def test_id_is_the_address_gradcli_prints():
    """With --stable-ids, the numbered addresses: the same for the same script on every run."""
    source = "import torch\nt = torch.ones(1, requires_grad=True)\ny = t * 2\nprint(f'0x{id(y.grad_fn):x}', y.grad_fn)\n"
    runs = []
    for _ in range(2):
        out = io.StringIO()
        Session(out=out, stable_ids=True).run_source(source)
        runs.append(out.getvalue())
    assert runs[0] == runs[1]
    address, text = runs[0].split(" ", 1)
    assert text.strip() == f"<MulBackward0 object at {address}>"


@pytest.mark.parametrize("source, message", [
    ("type('X', (), {'__new__': print})", "1:1: TypeError: defining __new__ in a class is outside gradcli's "
                                          "language: it takes the script's own function"),
    ("type(1, 2)", "1:1: TypeError: type() takes 1 or 3 arguments"),
    ("type()", "1:1: TypeError: type() takes 1 or 3 arguments"),
    ("id()", "1:1: TypeError: id() takes exactly one argument (0 given)"),
    ("def f():\n    pass\ntype(f)()", "3:1: TypeError: cannot create 'function' instances"),
    ("type(len)()", "1:1: TypeError: cannot create 'builtin_function_or_method' instances"),
    ("(3).__name__", "1:1: AttributeError: 'int' object has no attribute '__name__'"),
    ("'a'.__qualname__", "1:1: AttributeError: 'str' object has no attribute '__qualname__'"),
    ("type(3).__reduce__", "1:1: AttributeError: 'type' object attribute '__reduce__' is outside gradcli's language"),
    ("getattr(type(3), '__dict__')", "1:1: AttributeError: 'type' object attribute '__dict__' is outside gradcli's "
                                     "language"),
    ("getattr(type(3), '__subclasses__')", "1:1: AttributeError: 'type' object attribute '__subclasses__' is "
                                           "outside gradcli's language"),
    ("type(3).mro()", "1:1: AttributeError: 'type' object attribute 'mro' is outside gradcli's language"),
    ("getattr(type(len), '__init__')", "1:1: AttributeError: 'type' object attribute '__init__' is outside "
                                       "gradcli's language"),
    ("getattr(type(len), 'real')", "1:1: AttributeError: 'type' object attribute 'real' is outside gradcli's "
                                   "language"),
    ("type(type)('X', (str,), {})", "1:1: TypeError: subclassing 'str' is outside gradcli's language: a script's class may derive from its own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library classes gradcli provides"),
    ("import torch\ntype(torch.ones(1)).__init__", "2:1: AttributeError: type object 'Tensor' attribute '__init__' "
                                                   "is outside gradcli's language"),
    ("import torch\ngetattr(type(torch.ones(1)), 'func')",
     "2:1: AttributeError: type object 'Tensor' has no attribute 'func'"),
])
def test_nothing_behind_a_class_is_reachable(source, message):
    assert located_error(source) == message
