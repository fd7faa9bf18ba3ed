"""Python's scoping rules (local, enclosing, global, builtins), checked against CPython itself.

Each snippet is plain Python inside gradcli's language: it runs through gradcli and through this
interpreter's own `exec`, and what it prints, and the error it ends in, must be the same. The cases
with tensors are golden pairs in tests/conformance/ (lang_scopes_*.grad), generated from PyTorch.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from conftest import run_script
from gradcli.language import scopes, syntax
from gradcli.language.parser import parse

SNIPPETS = {
    "closure reads the enclosing local, not the global": """
w = 1
def make(w):
    def f(x):
        return x * w
    return f(2)
print(make(3), w)
""",
    "closure sees a rebinding made after it was created (cells)": """
def make():
    x = 1
    def get():
        return x
    x = 2
    return get
print(make()())
""",
    "each call has its own cells": """
def adder(n):
    def add(x):
        return x + n
    return add
a, b = adder(1), adder(10)
print(a(5), b(5), a(0))
""",
    "late binding of closures made in a loop": """
def make():
    fs = []
    for i in range(3):
        def f():
            return i
        fs.append(f)
    return fs
for f in make():
    print(f())
""",
    "default values are evaluated once, at def time": """
def make():
    fs = []
    for i in range(3):
        def f(k=i):
            return k
        fs.append(f)
    return fs
for f in make():
    print(f())
def g(acc=[]):
    acc.append(1)
    return len(acc)
print(g(), g(), g([]))
""",
    "defaults are evaluated in the enclosing scope": """
k = 'global'
def outer():
    k = 'outer'
    def inner(v=k):
        return v
    return inner()
print(outer())
""",
    "three levels: the middle function passes the variable on": """
def a():
    x = 'a'
    def b():
        def c():
            return x
        return c()
    return b()
print(a())
""",
    "the innermost binding wins": """
x = 'g'
def a():
    x = 'a'
    def b():
        x = 'b'
        def c():
            return x
        return c()
    return b() + x
print(a() + x)
""",
    "a nested function recurses through its own name": """
def outer(n):
    def fact(k):
        if k <= 1:
            return 1
        return k * fact(k - 1)
    return fact(n)
print(outer(10))
""",
    "nested functions call each other": """
def outer():
    def even(n):
        if n == 0:
            return True
        return odd(n - 1)
    def odd(n):
        if n == 0:
            return False
        return even(n - 1)
    return even(10), odd(7)
print(outer())
""",
    "a parameter captured by a closure": """
def scale(factor, values):
    def one(v):
        return v * factor
    out = []
    for v in values:
        out.append(one(v))
    factor = 100
    out.append(one(1))
    return out
print(scale(3, [1, 2]))
""",
    "loop and with targets are locals that closures see": """
def f():
    for i in range(4):
        pass
    def g():
        return i
    return g()
print(f())
""",
    "import inside a function is local": """
def f():
    import math
    def g():
        return math.floor(2.5)
    return g()
print(f())
""",
    "a name assigned anywhere in the body is local: read before": """
x = 1
def f():
    print(x)
    x = 2
f()
""",
    "assigned in a branch never taken": """
x = 1
def f():
    if False:
        x = 2
    return x
f()
""",
    "augmented assignment makes a local": """
n = 0
def f():
    n += 1
f()
""",
    "free variable read before the enclosing function binds it": """
def f():
    def g():
        return x
    r = g()
    x = 1
f()
""",
    "free variable deleted in the enclosing function": """
def f():
    x = 1
    def g():
        return x
    del x
    return g()
f()
""",
    "del of an unbound local": """
def f():
    del x
    x = 1
f()
""",
    "del of a cell twice": """
def f():
    x = 1
    def g():
        return x
    del x
    del x
f()
""",
    "del then read of a local": """
def f():
    x = 1
    del x
    return x
f()
""",
    "unknown name": """
def f():
    return undefined_name
f()
""",
    "unknown name at top level": "print(nope)",
    "del of an unknown global": "del nope",
    "builtins are found last": """
def f():
    return len([1, 2]), max(1, 5)
print(f())
""",
    "a global shadows a builtin, a local shadows both": """
len = 5
def f():
    return len
def g():
    len = 7
    return len
print(f(), g())
""",
    "a global read from a function sees later rebinding": """
def f():
    return v
v = 1
a = f()
v = 2
print(a, f())
""",
    "function name bound as a local of the enclosing function": """
def outer():
    def inner():
        return 1
    return inner
f = outer()
print(f())
""",
    "closure over a loop variable in a while loop": """
def f():
    fs = []
    i = 0
    while i < 3:
        def g(j=i):
            return (i, j)
        fs.append(g)
        i += 1
    return [fs[0](), fs[2]()]
print(f())
""",
    "unpacking targets bind cells": """
def f():
    a, (b, c) = 1, (2, 3)
    def g():
        return a + b + c
    a = 10
    return g()
print(f())
""",
}


def _cpython(source: str) -> tuple[str, str | None]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<snippet>", "exec"), {})
    except Exception as e:
        return out.getvalue(), f"{type(e).__name__}: {e}"
    return out.getvalue(), None


@pytest.mark.parametrize("name", SNIPPETS)
def test_scoping_matches_cpython(name):
    source = SNIPPETS[name]
    expected_out, expected_error = _cpython(source)
    result = run_script(source)
    error = None if result.error is None else f"{result.error.kind}: {result.error.message}"
    assert (result.out, error) == (expected_out, expected_error)


def test_error_positions_point_at_the_name():
    result = run_script("def f():\n    def g():\n        return x\n    return g()\n    x = 1\nf()")
    assert (result.error.line, result.error.col) == (3, 16)


def test_scopes_are_resolved_at_compile_time():
    tree = parse("def a(p):\n    x = 1\n    def b():\n        def c():\n            return x + p + g\n"
                 "        return c\n    return b\n")
    fn = tree.body[0]
    outer = scopes.analyze(fn)
    b_node = next(s for s in fn.body if isinstance(s, syntax.FunctionDef))
    b = outer.children[id(b_node)]
    c = b.children[id(b_node.body[0])]
    assert outer.cells == {"x", "p"} and outer.frees == ()
    assert b.frees == ("p", "x") and b.cells == frozenset()
    assert c.frees == ("p", "x") and c.kind("g") == "global" and c.kind("x") == "free"


def test_plain_functions_carry_no_closure():
    result = run_script("def f(a):\n    b = a\n    return b\nprint(f(1))")
    assert result.out == "1\n"
    from gradcli.session import Session
    s = Session(out=io.StringIO())
    s.run_source("def f(a):\n    return a\ndef g(a):\n    def h():\n        return a\n    return h\nk = g(1)")
    assert s.globals["f"].cells is None
    assert s.globals["g"].cells == ("a",) and s.globals["k"].frees == ("a",)
