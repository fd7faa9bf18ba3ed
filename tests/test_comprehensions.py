"""List, set and dict comprehensions and generator expressions: Python 3's scopes, order, laziness and
errors, compared with CPython; their size is bounded and the timer stops them."""

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE

SNIPPETS = [
    "print([x * 2 for x in range(5)], [x for x in range(10) if x % 2 if x > 3])",
    "print([(x, y) for x in range(3) for y in range(x)], [c for w in ['ab', 'cd'] for c in w])",
    "print({x % 3 for x in range(10)}, {x: x * x for x in range(4)}, {k: v for k, v in [(1, 'a'), (1, 'b')]})",
    "print(sum(x * x for x in range(5)), max(len(w) for w in ['a', 'abc']), list(x for x in 'ab'))",
    "print(any(x > 3 for x in range(5)), all(x < 3 for x in range(5)), ', '.join(str(i) for i in range(3)))",
    "x = 'outer'\nys = [x for x in range(3)]\nprint(x, ys)",
    "def f(n):\n    k = 10\n    return [k + i for i in range(n)]\nprint(f(3))",
    "def f(rows):\n    return [[r * c for c in range(3)] for r in rows]\nprint(f([1, 2]))",
    "def f():\n    base = [1, 2]\n    g = (b * 10 for b in base)\n    base.append(3)\n    return list(g)\nprint(f())",
    "g = (i for i in range(3))\nprint(list(g), list(g))",
    "n = 2\ng = (i * n for i in range(3))\nn = 5\nprint(list(g))",
    "print([[j for j in range(i)] for i in range(4)])",
    "m = [[1, 2], [3, 4]]\nprint([row[i] for row in m for i in range(len(row)) if row[i] % 2 == 0])",
    "print([(i, s) for i, s in enumerate('abc') if i != 1], [a + b for a, b in zip([1, 2], [3, 4])])",
    "print([x for x in [3, 1, 2] if x], sorted(x for x in [3, 1, 2]), {i: [j for j in range(i)] for i in range(3)})",
    "def outer():\n    total = 0\n    vals = [total + v for v in range(3)]\n    return vals\nprint(outer())",
    "print([y for x in [[1, 2], [3]] for y in x if y > 1 for _ in range(2)])",
    "xs = [1, 2, 3]\nprint([xs[i] for i in range(len(xs)) if (xs[i] if i else 0)])",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("y = [x for x in range(3)]\nprint(x)", "2:7: NameError: name 'x' is not defined"),
    ("y = [1 / x for x in [1, 0]]", "1:6: ZeroDivisionError: division by zero"),
    ("y = {[x]: 1 for x in range(2)}", "1:5: TypeError: unhashable type: 'list'"),
    ("y = {[x] for x in range(2)}", "1:5: TypeError: unhashable type: 'list'"),
    ("y = [x for x in 5]", "1:5: TypeError: 'int' object is not iterable"),
    ("y = [x for a in [1] for x in 5]", "1:5: TypeError: 'int' object is not iterable"),
    ("def f():\n    return [z for _ in range(1)]\n    z = 1\nf()",
     "2:13: NameError: cannot access free variable 'z' where it is not associated with a value in enclosing scope"),
])
def test_errors_as_python_reports_them(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source, kind", [
    ("y = [0 for _ in range(10**9)]", "list"),
    ("y = {i for i in range(10**9)}", "set"),
    ("y = {i: 0 for i in range(10**9)}", "dict"),
    ("y = list(i for i in range(10**9))", "list"),
])
def test_what_they_build_is_bounded(source, kind):
    before, STATE.max_items = STATE.max_items, 1000
    try:
        message = located_error(source)
    finally:
        STATE.max_items = before
    assert message.endswith(f"MemoryError: a {kind} of more than 1000 items is too large (gradcli allows at most 1000)")


def test_a_generator_prints_and_hides_its_frame():
    assert gradcli_output("g = (i for i in range(2))\nprint(str(g).split(' at ')[0])\n") == "<generator object <genexpr>\n"
    assert located_error("g = (i for i in range(2))\ng.gi_frame").endswith(
        "AttributeError: 'generator' object attribute 'gi_frame' is outside gradcli's language")


def test_a_comprehension_loop_stops_at_the_timeout():
    from gradcli.deadline import Deadline, TimedOut
    from gradcli.errors import ScriptError
    from gradcli.session import Session
    with pytest.raises(ScriptError) as info:
        with Deadline(0.5):
            Session().run_source("y = sum(1 for _ in range(10**12) if _ >= 0)\n")
    assert isinstance(info.value, TimedOut) and info.value.line == 1
