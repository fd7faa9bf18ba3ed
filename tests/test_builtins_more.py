"""The builtins scripts use beyond the first set: collections from iterables (bounded), chr/ord,
callable, map/filter/iter/next, hash, and isinstance with torch's classes as scripts name them."""

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE

SNIPPETS = [
    "print(dict(a=1), dict([('b', 2)], c=3), dict({'d': 4}), sorted(set([3, 1, 3])), sorted(frozenset('aba')))",
    "print(chr(65), ord('a'), chr(0x263A), callable(print), callable(3), callable(lambda: 0))",
    "print(list(map(lambda v: v * 2, [1, 2])), list(map(pow, [2, 3], [3, 2])), list(filter(None, [0, 1, 2])))",
    "it = iter([1, 2])\nprint(next(it), next(it), next(it, 'done'))",
    "calls = [3, 2, 1]\nprint(list(iter(calls.pop, 1)))",
    "print(hash(7), hash(7) == hash(7.0), hash((1, 2)) == hash((1, 2)))",
    "print(isinstance(3, (int, float)), isinstance(True, int), isinstance([], (dict, list)), isinstance('s', str))",
    "print(isinstance({}, dict), isinstance(set(), (set, frozenset)), isinstance((), tuple), isinstance(1.5, int))",
    "try:\n    next(iter([]))\nexcept StopIteration:\n    print('stopped')",
    "print(set(), dict(), frozenset(), len(set('hello')))",
    # format, hex, oct, bin, ascii, slice
    "print(format(2.5), format(7, '08b'), format('ab', '^6'), format(1234567, ','), format(3, ''), format(True))",
    "print(hex(255), oct(8), bin(5), hex(-3), ascii('caf\\u00e9'), ascii([1, '\\u00e9']), ascii(None))",
    "s = slice(1, None, 2)\nprint(s, s.start, s.stop, s.step, s.indices(10), slice(3), [0, 1, 2, 3][s], 'abc'[slice(None, None, -1)])",
    "class M:\n    def __format__(self, spec):\n        return '<' + spec + '>'\nprint(format(M(), 'x'), format(M()), f'{M():y}')",
    "for bad in (lambda: format(1, 2), lambda: format(), lambda: hex(1.5), lambda: format(1, 'q'), lambda: slice(),\n"
    "            lambda: format(1, '', 3), lambda: bin('1'), lambda: slice(1, 2, 3, 4)):\n"
    "    try:\n        bad()\n    except (TypeError, ValueError) as e:\n        print(type(e).__name__, e)",
    "print(len.__name__, format.__name__, sorted.__name__, hex.__name__, print.__name__, max.__name__)",
    "print(type(slice(1)), slice(1) == slice(1), hash(slice(1, 2)) if False else 0, format, hex)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_isinstance_knows_torchs_classes():
    source = ("import torch\nx = torch.ones(2)\ng = torch.Generator()\n"
              "print(isinstance(x, torch.Tensor), isinstance(x.shape, torch.Size), isinstance(x.shape, tuple),\n"
              "      isinstance(x.dtype, torch.dtype), isinstance(g, torch.Generator), isinstance(x, torch.Generator),\n"
              "      isinstance(2, torch.Tensor), isinstance(x, (list, torch.Tensor)))\n")
    assert gradcli_output(source) == "True True True True True False False True\n"


@pytest.mark.parametrize("source, message", [
    ("isinstance(1, 2)", "1:1: TypeError: isinstance() arg 2 must be a type, a tuple of types, or a union"),
    ("next(iter([]))", "1:1: StopIteration: "),
    ("chr(-1)", "1:1: ValueError: chr() arg not in range(0x110000)"),
])
def test_errors_in_pythons_words(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source", ["dict(zip(range(10**10), range(10**10)))", "set(range(10**10))",
                                    "frozenset(range(10**10))"])
def test_collections_from_huge_iterables_are_bounded(source):
    before, STATE.max_items = STATE.max_items, 1000
    try:
        message = located_error(source)
    finally:
        STATE.max_items = before
    assert "MemoryError: a list of" in message


def test_getattr_hasattr_setattr_follow_the_attribute_rules():
    source = ("import torch\nx = torch.ones(2, requires_grad=True)\n"
              "print(getattr(x, 'shape'), hasattr(x, 'grad'), hasattr(x, 'nope'), getattr(x, 'nope', 5))\n"
              "setattr(x, 'requires_grad', False)\nprint(x.requires_grad, getattr([1, 2], 'count')(1))\n"
              "print(hasattr(x, '__reduce__'), getattr(3, '__reduce__', 'hidden'), hasattr(torch, 'from_file'))\n")
    assert gradcli_output(source) == "torch.Size([2]) True False 5\nFalse 1\nFalse hidden False\n"


@pytest.mark.parametrize("source, message", [
    ("getattr(1, '__reduce__')", "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's language"),
    ("import torch\ngetattr(torch, 'from_file')", "2:1: AttributeError: module 'torch' attribute 'from_file' is "
                                                   "outside gradcli's language: scripts cannot read or write files"),
    ("def f():\n    pass\ngetattr(f, '__globals__')", "3:1: AttributeError: 'function' object attribute "
                                                     "'__globals__' is outside gradcli's language"),
    ("def f():\n    pass\ngetattr(f, 'globals')", "3:1: AttributeError: 'function' object attribute 'globals' is "
                                                   "outside gradcli's language"),
    ("getattr(getattr, 'fn')", "1:1: AttributeError: 'builtin_function_or_method' object has no attribute 'fn'"),
    ("import torch\nsetattr(torch.ones(1), 'grad_fn', None)", None),
    ("getattr(1, 2)", "1:1: TypeError: attribute name must be string, not 'int'"),
])
def test_strings_reach_no_more_than_names(source, message):
    got = located_error(source)
    if message is None:
        assert "AttributeError" in got
    else:
        assert got == message
