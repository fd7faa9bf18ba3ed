"""lambda: a function of one expression, with def's parameters, closures and late binding, compared with
CPython."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

SNIPPETS = [
    "f = lambda x, y=2: x * y\nprint(f(3), f(3, 4), f(y=5, x=1), (lambda: 7)())",
    "print(sorted([(1, 'b'), (0, 'c'), (2, 'a')], key=lambda p: p[1]), max([3, 1, 2], key=lambda v: -v))",
    "def make(k):\n    return lambda v: v + k\nadd = [make(i) for i in range(3)]\nprint([a(10) for a in add])",
    "late = [lambda: i for i in range(3)]\nprint([g() for g in late])",
    "bound = [lambda i=i: i for i in range(3)]\nprint([g() for g in bound])",
    "curry = lambda x: lambda y: lambda z: x + y + z\nprint(curry(1)(2)(3))",
    "def outer():\n    n = 1\n    f = lambda: n\n    n = 5\n    return f()\nprint(outer())",
    "f = lambda x: x if x > 0 else -x\nprint(f(-3), f(4))",
    "compose = lambda f, g: lambda x: f(g(x))\nprint(compose(abs, lambda v: v - 10)(3))",
    "f = lambda: None\nprint(f(), str(f).split(' at ')[0])",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("f = lambda x: x\nf()", "2:1: TypeError: <lambda>() missing 1 required positional argument: 'x'"),
    ("f = lambda: 0\nf(1)", "2:1: TypeError: <lambda>() takes 0 positional arguments but 1 was given"),
    ("f = lambda: 1 / 0\nf()", "1:13: ZeroDivisionError: division by zero"),
    ("f = lambda: y\nf()", "1:13: NameError: name 'y' is not defined"),
])
def test_errors_as_python_reports_them(source, message):
    assert located_error(source) == message
