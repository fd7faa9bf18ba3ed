"""`global` and `nonlocal`: Python's semantics and its compile-time checks, compared with CPython."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

SNIPPETS = [
    "count = 0\ndef bump():\n    global count\n    count += 1\n    return count\nbump()\nbump()\nprint(count)",
    "def counter():\n    n = 0\n    def inc(k=1):\n        nonlocal n\n        n += k\n        return n\n    return inc\n"
    "c = counter()\nprint(c(), c(5), c())",
    "def outer():\n    x = 'a'\n    def mid():\n        nonlocal x\n        def inner():\n            nonlocal x\n"
    "            x = x + 'b'\n        inner()\n        return x\n    return mid() + x\nprint(outer())",
    "def setg():\n    global fresh\n    fresh = [1]\nsetg()\nprint(fresh)",
    "fresh = 1\ndef delg():\n    global fresh\n    del fresh\ndelg()\nprint('gone')",
    "total = 0\ndef acc(xs):\n    global total\n    for v in xs:\n        total += v\nacc([1, 2, 3])\nprint(total)",
    "def f():\n    global a, b\n    a, b = 1, 2\nf()\nprint(a + b)",
    "def make():\n    items = []\n    def add(v):\n        nonlocal items\n        items = items + [v]\n        return items\n"
    "    return add\nadd = make()\nadd(1)\nprint(add(2))",
    "global g\ng = 5\nprint(g)",
    "x = 'global'\ndef f():\n    x = 'local'\n    def g():\n        global x\n        return x\n    return g()\nprint(f())",
    "x = 'global'\ndef f():\n    x = 'local'\n    def g():\n        global x\n        def h():\n            return x\n"
    "        return h()\n    return g()\nprint(f())",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("def f():\n    x = 1\n    global x", "3:5: SyntaxError: name 'x' is assigned to before global declaration"),
    ("def f():\n    print(x)\n    global x", "3:5: SyntaxError: name 'x' is used prior to global declaration"),
    ("nonlocal x", "1:1: SyntaxError: nonlocal declaration not allowed at module level"),
    ("def f():\n    nonlocal x", "2:5: SyntaxError: no binding for nonlocal 'x' found"),
    ("x = 1\ndef f():\n    nonlocal x", "3:5: SyntaxError: no binding for nonlocal 'x' found"),
    ("def f(x):\n    global x", "2:5: SyntaxError: name 'x' is parameter and global"),
    ("def f():\n    global x\n    x: int", "3:5: SyntaxError: annotated name 'x' can't be global"),
    ("def f():\n    x: int = 1\n    global x", "3:5: SyntaxError: annotated name 'x' can't be global"),
    ("class C:\n    global x\n    x: int", "3:5: SyntaxError: annotated name 'x' can't be global"),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x: int",
     "5:9: SyntaxError: annotated name 'x' can't be nonlocal"),
    ("def f():\n    x = 0\n    def g(x):\n        nonlocal x", "4:9: SyntaxError: name 'x' is parameter and nonlocal"),
    ("def f():\n    y = 0\n    def g():\n        global y\n        nonlocal y", "4:9: SyntaxError: name 'y' is nonlocal and global"),
    ("def f():\n    global q\n    del q\nf()", "3:9: NameError: name 'q' is not defined"),
])
def test_errors_in_pythons_words(source, message):
    assert located_error(source) == message
