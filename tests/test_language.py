"""The script language's semantics, run through a real Session: what prints, and which errors arise where."""

from __future__ import annotations

import pytest

from conftest import run_script


def out(source: str) -> str:
    r = run_script(source)
    assert r.error is None, r.error.render()
    return r.out


def error(source: str) -> str:
    r = run_script(source)
    assert r.error is not None, "expected an error"
    e = r.error
    return f"{e.line}:{e.col}: {e.kind}: {e.message}"


@pytest.mark.parametrize("source, expected", [
    ("print(1 + 2 * 3, 2 ** 3 ** 2, -2 ** 2, (1 + 2) * 3)", "7 512 -4 9\n"),
    ("print(7 // 2, 7 % 3, 7 / 2, 2 ** -1)", "3 1 3.5 0.5\n"),
    ("print(1 < 2 < 3, 1 < 3 < 2, 2 in [1, 2], 3 not in (1, 2), None is None, 1 is not None)",
     "True False True True True True\n"),
    ("print(0 or 5, 3 and 4, not 0, 1 if 0 else 2)", "5 4 True 2\n"),
    ("a, b = 1, 2\na, b = b, a\nprint(a, b)", "2 1\n"),
    ("(a, [b, c]) = (1, [2, 3])\nprint(a + b + c)", "6\n"),
    ("a = b = [1]\nb.append(2)\nprint(a)", "[1, 2]\n"),
    ("x = 10\nx += 5; x -= 3; x *= 2; x /= 4\nprint(x)", "6.0\n"),
    ("print('a', 'b', sep='-', end='!\\n')", "a-b!\n"),
    ("print()", "\n"),
    ("s = 0\nfor i in range(10):\n    if i == 7:\n        break\n    if i % 2:\n        continue\n    s += i\nprint(s)",
     "12\n"),
    ("i = 0\nwhile True:\n    i += 1\n    if i > 4:\n        break\nprint(i)", "5\n"),
    ("for i, (a, b) in enumerate(zip([1, 2], 'xy')):\n    print(i, a, b)", "0 1 x\n1 2 y\n"),
    ("if 0:\n    print('a')\nelif 1:\n    print('b')\nelse:\n    print('c')", "b\n"),
    ("def f(a, b=2, c=3):\n    return a + b * c\nprint(f(1), f(1, 1), f(1, c=10), f(c=0, a=4))", "7 4 21 4\n"),
    ("def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\nprint(fact(20))", "2432902008176640000\n"),
    ("def f():\n    pass\nprint(f())", "None\n"),
    ("g = 5\ndef f():\n    return g * 2\nprint(f())", "10\n"),
    ("x = 3.14159\nprint(f'{x:.2f}|{x!r}|{x:>8.3f}|{{}}|{\"q\"}')", "3.14|3.14159|   3.142|{}|q\n"),
    ("w = 6\nprint(f'{1.5:{w}.2f}')", "  1.50\n"),
    ("print(len([1, 2]), abs(-3), min(3, 1), max([2, 5]), sum([1, 2, 3]), round(2.567, 2), round(2.5))",
     "2 3 1 5 6 2.57 2\n"),
    ("print(float('1.5'), int(2.9), bool(0), str(12), repr('a'), list((1, 2)), tuple([3]))",
     "1.5 2 False 12 'a' [1, 2] (3,)\n"),
    ("x = [1, 2, 3]\nx[0] = 9\ndel x[1]\nprint(x, x[-1], x[::-1], 'abc'[1:])", "[9, 3] 3 [3, 9] bc\n"),
    ("x = 1\ndel x\nprint('ok')", "ok\n"),
    ("assert 1 + 1 == 2, 'math'\nprint('fine')", "fine\n"),
    ("import math\nprint(math.sqrt(16), math.pi)", "4.0 3.141592653589793\n"),
    ("import math as m\nfrom math import floor as fl\nprint(m.floor(2.5), fl(3.7))", "2 3\n"),
    ("import torch as t\nprint(t.ones(1))", "tensor([1.])\n"),
    ("import torch.nn.functional as F\nimport torch\nprint(torch.ones(1))", "tensor([1.])\n"),
    ("from torch.autograd import Variable, grad\nimport torch\nprint(Variable(torch.ones(1)))", "tensor([1.])\n"),
    ("x = (1 +\n     2)\nprint(x)", "3\n"),
    ("print('a' 'b', 'c' * 3, 'x'.upper(), ', '.join(['p', 'q']))", "ab ccc X p, q\n"),
    ("print(1 == 1.0, [1, 2] == [1, 2], (1,) + (2,))", "True True (1, 2)\n"),
])
def test_program_output(source, expected):
    assert out(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("print(y)", "1:7: NameError: name 'y' is not defined"),
    ("def f():\n    y = x\n    x = 1\nf()", "2:9: UnboundLocalError: cannot access local variable 'x' where it is not associated with a value"),
    ("def f(a, b):\n    return a\nf(1)", "3:1: TypeError: f() missing 1 required positional argument: 'b'"),
    ("def f(a):\n    return a\nf(1, 2)", "3:1: TypeError: f() takes 1 positional argument but 2 were given"),
    ("def f(a):\n    return a\nf(b=1)", "3:1: TypeError: f() got an unexpected keyword argument 'b'"),
    ("def f(n):\n    return f(n + 1)\nf(0)", "2:12: RecursionError: maximum recursion depth exceeded"),
    ("a, b = [1, 2, 3]", "1:1: ValueError: too many values to unpack (expected 2)"),
    ("a, b, c = [1, 2]", "1:1: ValueError: not enough values to unpack (expected 3, got 2)"),
    ("a, b = 5", "1:1: TypeError: cannot unpack non-iterable int object"),
    ("x = 1 / 0", "1:5: ZeroDivisionError: division by zero"),
    ("assert 1 > 2, 'nope'", "1:1: AssertionError: nope"),
    ("for i in 5:\n    pass", "1:10: TypeError: 'int' object is not iterable"),
    ("x = [1]\nprint(x[3])", "2:7: IndexError: list index out of range"),
    ("'{0.__reduce__}'.format(1)", "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's "
                                  "language"),
    ("import torch\ntorch.ones(2).numpy()", "2:1: AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: scripts cannot reach numpy arrays (use .tolist() or .item())"),
    ("import torch\ntorch.foo", "2:1: AttributeError: module 'torch' has no attribute 'foo'"),
    ("import torch\ntorch.ones(1).foo", "2:1: AttributeError: 'Tensor' object has no attribute 'foo'"),
    ("import torch\nx = torch.ones(1)\nx.shape = 3", "3:1: AttributeError: attribute 'shape' of 'torch._C.TensorBase' objects is not writable"),
    ("from torch.autograd import nothing", "1:1: ImportError: cannot import name 'nothing' from 'torch.autograd' (unknown location)"),
    ("with 5:\n    pass", "1:6: TypeError: 'int' object does not support the context manager protocol"),
    ("print(1, file=None, sep=3)", "1:1: TypeError: sep must be None or a string, not int"),
    ("x = 10 ** 10 ** 10", "1:5: MemoryError: 10 ** 10000000000 is too large: integer results are limited to about 300,000 digits in gradcli"),
    ("x = 'a' * 10 ** 11", "1:5: MemoryError: a str of 100000000000 items is too large (gradcli allows at most 100000000)"),
])
def test_runtime_errors(source, expected):
    assert error(source) == expected


def test_state_survives_until_the_error():
    r = run_script("a = 1\nprint(a)\nb = a / 0\nprint('never')")
    assert r.out == "1\n"
    assert (r.error.kind, r.error.line) == ("ZeroDivisionError", 3)


@pytest.mark.parametrize("source", ["import os", "from os import path", "import torch.foo"])
def test_other_modules_are_refused_when_imported(source):
    # as Python refuses a module it cannot find: an ImportError where the import runs
    r = run_script("print('ran')\n" + source)
    assert r.out == "ran\n"
    assert (r.error.kind, r.error.line, r.error.exit_status) == ("ImportError", 2, 1)
    assert "is outside gradcli's language" in r.error.message


def test_grad_mode_context_managers_restore_on_error():
    r = run_script("import torch\nx = torch.ones(1, requires_grad=True)\nwith torch.no_grad():\n    y = 1 / 0\n")
    assert r.error.kind == "ZeroDivisionError"
    assert out("import torch\nprint(torch.is_grad_enabled())") == "True\n"


@pytest.mark.parametrize("source", [
    "def f():\n    print((yield))", "async def f():\n    pass", "x = b'1'", "from torch import *",
])
def test_outside_the_language_is_refused_before_running(source):
    r = run_script("print('ran')\n" + source)
    assert r.out == ""
    assert r.error.kind == "SyntaxError"
    assert r.error.exit_status == 2
