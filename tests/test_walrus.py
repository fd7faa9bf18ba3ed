"""Assignment expressions (`:=`): CPython 3.11's semantics and its symbol-table errors, compared with CPython."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

SNIPPETS = [
    # conditions, loops, precedence
    "data = [3, 1, 4]\nif (n := len(data)) > 2:\n    print(f'{n} items')\nprint(n)",
    "batches = iter([[1, 2], [3], []])\nwhile (batch := next(batches)):\n    print(batch)\nprint(batch)",
    "lines = iter(['a', 'b', None])\nwhile (line := next(lines)) is not None:\n    print(line)",
    "x = (y := 2) + 1\nprint(x, y)",
    "print((a := 1, 2), a)",
    "print([b := 3, b * 2], b)",
    "print({c := 'k', c + 'x'} == {'k', 'kx'}, c)",
    "def f(*args, **kw):\n    return args, kw\nprint(f(v := 5, v + 1, k=v), v)",
    "xs = [10, 20, 30]\nprint(xs[i := 1], i)",
    "print(z := 1 if False else 2, z) if False else print((z := 1 if False else 2), z)",
    "if (n := 0) or (m := 5):\n    print(n, m)",
    "print((f := lambda v: v + 1)(1), f(2))",
    "print((q := 2) ** 3, q)",
    "r = (s := 1) < 2 < (t := 3)\nprint(r, s, t)",
    # comprehensions bind in the function or module around them
    "vals = [y for x in range(5) if (y := x * x) > 4]\nprint(vals, y)",
    "print([last := x for x in 'abc'], last)",
    "def f(data):\n    total = 0\n    sums = [total := total + v for v in data]\n    return sums, total\nprint(f([1, 2, 3]))",
    "def f():\n    [[(deep := i * j) for j in range(2)] for i in range(3)]\n    return deep\nprint(f())",
    "def f(xs):\n    if any((hit := x) > 2 for x in xs):\n        return hit\n    return None\nprint(f([1, 3, 5]), f([1]))",
    "print({k: (w := v * 2) for k, v in {'a': 1}.items()}, w)",
    "g = (found := x for x in [7, 8])\nprint(next(g), found)",
    "def outer():\n    def inner():\n        return [(n := i) for i in range(3)]\n    r = inner()\n    return r\nprint(outer())",
    # nonlocal and global
    "count = 0\ndef bump():\n    global count\n    [(count := count + 1) for _ in range(3)]\nbump()\nprint(count)",
    "def outer():\n    x = 0\n    def inner():\n        nonlocal x\n        (x := x + 10)\n    inner()\n    return x\n"
    "print(outer())",
    "def outer():\n    x = 0\n    def inner():\n        nonlocal x\n        [(x := v) for v in range(4)]\n    inner()\n"
    "    return x\nprint(outer())",
    "def f():\n    (y := 1)\n    def g():\n        return y\n    return g()\nprint(f())",
    "class A:\n    (attr := 5)\n    double = attr * 2\nprint(A.attr, A.double)",
    "print((lambda: (v := 3) + v)())",
    "def f(a=(d := 4)):\n    return a\nprint(f(), d)",
    # the function's local, unbound until the walrus runs
    "def f(flag):\n    if flag:\n        (y := 1)\n    return y\ntry:\n    f(False)\nexcept UnboundLocalError as e:\n"
    "    print(e)",
    # f-strings: `{x:=10}` is a format spec, `{(x:=10)}` an assignment
    "x = 5\nprint(f'{x:=10}')\nprint(f'{(x:=10)}', x)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("[i := 0 for i in range(3)]", "1:2: SyntaxError: assignment expression cannot rebind comprehension iteration "
     "variable 'i'"),
    ("[[(j := j) for i in range(5)] for j in range(5)]", "1:4: SyntaxError: assignment expression cannot rebind "
     "comprehension iteration variable 'j'"),
    ("[x for x in (y := [1])]", "1:14: SyntaxError: assignment expression cannot be used in a comprehension "
     "iterable expression"),
    ("[x for x in [1] for z in (y := [1])]", "1:27: SyntaxError: assignment expression cannot be used in a "
     "comprehension iterable expression"),
    ("[i for i in range(5) if (j := 0) for j in range(5)]", "1:38: SyntaxError: comprehension inner loop cannot "
     "rebind assignment expression target 'j'"),
    ("class A:\n    [(y := x) for x in [1]]", "2:7: SyntaxError: assignment expression within a comprehension "
     "cannot be used in a class body"),
    ("def f():\n    nonlocal x\n    (x := 1)", "2:5: SyntaxError: no binding for nonlocal 'x' found"),
    ("def f():\n    (x := 1)\n    global x", "3:5: SyntaxError: name 'x' is assigned to before global declaration"),
    ("(a.b := 1)", "1:2: SyntaxError: cannot use assignment expressions with attribute"),
    ("(f() := 1)", "1:2: SyntaxError: cannot use assignment expressions with function call"),
    ("print(missing := undefined_name)", "1:18: NameError: name 'undefined_name' is not defined"),
])
def test_errors_in_pythons_words(source, message):
    assert located_error(source) == message


def test_the_while_loop_of_the_brief():
    source = ("queue = [[1.0, 2.0], [3.0]]\ndef next_batch():\n    return queue.pop(0) if queue else None\n"
              "seen = 0\nwhile (line := next_batch()) is not None:\n    seen += len(line)\nprint(seen, line)\n")
    assert gradcli_output(source) == cpython_output(source) == "3 None\n"
